/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One symbolized view of what a session aggregated, the one thing every
 * writer reads (folded, pprof, OTLP, the SVG flame graph): each distinct
 * stack of an aggregator walked once and its frames named once, by
 * stackwalk.h's rules, however many outputs are then written from it.
 *
 * Each stack is handed out as stackwalk.h's struct sw_stack, root first,
 * its frames with their module, mapping, build-id, source lines and
 * inlined functions, its process's executable (exe) and cgroup id. A frame
 * met in many stacks is kept once; every string is the snapshot's own.
 *
 * Lifecycle: snapshot__new() walks the aggregator at once (the end-of-run
 * outputs make one, continuous mode one per interval); the snapshot refers
 * to neither the aggregator nor the symbolizer afterwards, and lives until
 * snapshot__free().
 * Error convention: negative errno; snapshot__new() returns NULL + errno.
 */
#ifndef SFBPF_SNAPSHOT_H
#define SFBPF_SNAPSHOT_H

#include "profile/stackwalk.h"

struct aggregator;
struct symbolizer;
struct ksyms;
struct snapshot;

/* sym and ks may be NULL: every user or kernel frame is then "[unknown]". */
struct snapshot *snapshot__new(const struct aggregator *a, struct symbolizer *sym,
			       const struct ksyms *ks);
void snapshot__free(struct snapshot *s);

/*
 * Calls cb for every stack, in the aggregator's order; stops at (and
 * returns) a nonzero return of cb. st and its frames are valid during the
 * callback, their strings as long as the snapshot. Returns 0 or a negative
 * errno.
 */
int snapshot__for_each(const struct snapshot *s, sw_cb cb, void *ctx);

#endif /* SFBPF_SNAPSHOT_H */
