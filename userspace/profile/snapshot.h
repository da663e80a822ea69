/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One symbolized view of what a session aggregated, the one thing every
 * writer reads (folded, pprof, OTLP, the SVG flame graph): each distinct
 * stack of an aggregator walked once and its frames named by stackwalk.h's
 * rules, however many outputs are then written from it. An address met in
 * many stacks (of one process; the kernel's in any) is named once.
 *
 * Each stack is handed out as a struct sw_stack, root first, its frames
 * with their module, mapping, build-id, source lines and inlined functions,
 * its process's executable (exe) and cgroup id. Every string is the
 * snapshot's own.
 *
 * Lifecycle: snapshot__new() walks the aggregator at once (a session's:
 * session__snapshot(); the end-of-run outputs make one, continuous mode one
 * per interval); the snapshot refers to neither the aggregator nor the
 * symbolizer afterwards, and lives until snapshot__free().
 * Error convention: negative errno; snapshot__new() returns NULL + errno.
 */
#ifndef SFBPF_SNAPSHOT_H
#define SFBPF_SNAPSHOT_H

#include "profile/stackwalk.h"

struct aggregator;
struct symbolizer;
struct ksyms;
struct snapshot;

/* One symbolized stack. */
struct sw_stack {
	uint32_t pid;
	uint64_t cgroup_id; /* the task's cgroup v2 id */
	const char *exe; /* the process's executable (symbolizer__exe()), or NULL */
	uint64_t count;
	uint64_t weight;
	size_t nr_frames;
	const struct sw_frame *frames; /* root first; frames[0] is the SW_COMM frame */
	size_t first_user; /* index of the user root frame (== first_kernel if none) */
	size_t first_kernel; /* index of the kernel root frame (== nr_frames if none) */
};

typedef int (*sw_cb)(const struct sw_stack *st, void *ctx);

/* sym and ks may be NULL: every user or kernel frame is then "[unknown]". */
struct snapshot *snapshot__new(const struct aggregator *a, struct symbolizer *sym,
			       const struct ksyms *ks);
void snapshot__free(struct snapshot *s);

/*
 * Names kept for the stacks of processes about to be forgotten (a session
 * past SESSION_KEEP_EXITED exits, whose outputs are written later): the
 * stacks of the processes want() picks, not kept yet, named now into *kept
 * (made at the first call), by their aggregator ids. A snapshot made with
 * them (snapshot__new_kept()) takes those names for those stacks, so a
 * process forgotten before the outputs are written is named as it was;
 * samples counted into such a stack since (its PID again, the same frames)
 * are named as the symbolizer names them then. Free with snapshot__free().
 */
int snapshot__keep(struct snapshot **kept, const struct aggregator *a, struct symbolizer *sym,
		   const struct ksyms *ks, bool (*want)(uint32_t pid, void *ctx), void *ctx);
struct snapshot *snapshot__new_kept(const struct aggregator *a, struct symbolizer *sym,
				    const struct ksyms *ks, const struct snapshot *kept);
size_t snapshot__kept_stacks(const struct snapshot *kept);

/*
 * Calls cb for every stack, in the aggregator's order; stops at (and
 * returns) a nonzero return of cb. st and its frames are valid during the
 * callback, their strings as long as the snapshot. Returns 0 or a negative
 * errno.
 */
int snapshot__for_each(const struct snapshot *s, sw_cb cb, void *ctx);

#endif /* SFBPF_SNAPSHOT_H */
