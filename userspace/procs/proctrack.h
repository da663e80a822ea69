/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Process tracker: keeps, for each profiled process, the BPF map entry that
 * lists its executable mappings (start, end, load bias, object table), and
 * holds references on the object tables those mappings use.
 *
 * Each entry carries the process's start time (clock ticks since boot, from
 * /proc/PID/stat), which the unwinder compares with the sampled task's: an
 * entry left behind by an exited process never unwinds a new process that
 * got its PID. See docs/DESIGN-lifecycle.md.
 */
#ifndef SFBPF_PROCTRACK_H
#define SFBPF_PROCTRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "maps/tables.h"

struct proctrack;

struct proctrack *proctrack__new(struct tables *tables, int procs_fd);
void proctrack__free(struct proctrack *pt);

struct procmaps;

/*
 * Told of every entry written or found unchanged (the process, its start
 * time and the mappings just read) and of every entry removed: per-process
 * state kept beside the entry (the Python settings, profile/pythons.h)
 * follows it without a second read of /proc. Called from the refreshing
 * thread, within proctrack's calls.
 */
struct proctrack_listener {
	void (*updated)(void *ctx, int pid, uint64_t start_ticks, const struct procmaps *pm);
	void (*removed)(void *ctx, int pid);
	void *ctx;
};

void proctrack__set_listener(struct proctrack *pt, const struct proctrack_listener *l);

/* What a refresh did (>= 0), besides errors (< 0). */
#define PROCTRACK_UPDATED 0
#define PROCTRACK_UNCHANGED 1 /* refresh_if_changed: same mappings, entry kept */
#define PROCTRACK_INCOMPLETE 2 /* loaded, but some tables must be asked for again later */

/*
 * (Re)load pid's mappings: PROCTRACK_UPDATED or PROCTRACK_INCOMPLETE (the
 * loader was busy: those mappings use the frame-pointer chain until the next
 * refresh). -ESRCH when the process is gone, -ENOEXEC when it has no user
 * code (kernel threads, zombies): its entry is dropped.
 */
int proctrack__refresh(struct proctrack *pt, int pid);
/* The same, unless pid is known with the same start time and executable mappings. */
int proctrack__refresh_if_changed(struct proctrack *pt, int pid);
/*
 * A runtime's JIT code in pid (the process started at start_ticks) whose
 * frames all have one shape (procs/jitcode.h): its mappings get that
 * shape's table, from a build of pid's entry made now (or, when a listener
 * of one says so, right after it); r NULL: none any more (an exec). 0, or a
 * negative errno.
 */
struct jitcode_region;
int proctrack__set_jit(struct proctrack *pt, int pid, uint64_t start_ticks,
		       const struct jitcode_region *r);
/*
 * pid was forked by parent and the kernel gave it a copy of parent's entry
 * (SFBPF_EVENT_FORK, start_ticks its own): takes a reference on each table
 * the copy names, before a slot can serve another file (tables__fork_horizon),
 * and withdraws from the copy any mapping whose table is gone meanwhile. The
 * entry is then pid's own, to refresh or remove as any other. 0, or -ENOENT
 * when the copy is gone already (the child exec'd or exited).
 */
int proctrack__adopt(struct proctrack *pt, int pid, uint64_t start_ticks);
/* Forget pid: delete its map entry and release its objects. */
void proctrack__remove(struct proctrack *pt, int pid);
/* Load every process in /proc. Returns how many were loaded. */
int proctrack__scan(struct proctrack *pt);
/* The same, for the processes want(ctx, pid) accepts. */
int proctrack__scan_filtered(struct proctrack *pt, bool (*want)(void *ctx, int pid), void *ctx);
/*
 * Checks up to max tracked processes (PROCTRACK_SWEEP_MAX at most; resuming
 * where the last call stopped) and removes those that are gone or whose PID
 * now names another process (a missed exit). Returns how many were removed.
 */
#define PROCTRACK_SWEEP_MAX 256
int proctrack__sweep(struct proctrack *pt, uint32_t max);

bool proctrack__has(const struct proctrack *pt, int pid);
/* Calls fn for every tracked pid until it returns non-zero (which is returned). */
int proctrack__for_each(const struct proctrack *pt, int (*fn)(void *ctx, int pid), void *ctx);

/*
 * A stack of pid's (thread tid) that did not reach its outermost frame
 * (ips[0] the leaf, n user frames): while some object's table is being
 * built, its first PC in such an object without a row is handed to the
 * loader (tables__want_pc), whose rows are then built first; for a main
 * thread, so are those of the return addresses found on its stack (read with
 * process_vm_readv, at most every 10 ms a process): the frames a sample
 * cannot name until the rows below them are in. Cheap when no table is
 * being built.
 */
void proctrack__note_truncated(struct proctrack *pt, int pid, int tid, const uint64_t *ips,
			       uint32_t n);

/* Start time of pid in clock ticks since boot (/proc/PID/stat field 22), or -errno. */
int proctrack_start_ticks(int pid, uint64_t *ticks);
/* Whether pid, started at start_ticks, has exited: gone, a zombie, or another process's PID. */
bool proctrack_exited(int pid, uint64_t start_ticks);
/* pid's parent now (/proc/PID/stat field 4): 0, or -errno and 0. */
int proctrack_parent(int pid, int *ppid);

/*
 * The TIDs of pid's tasks as the process itself sees them (the last NSpid
 * of each: what a runtime stores as a thread's native TID, in a PID
 * namespace too), at most max into ids: how many; *leader (if not NULL) the
 * leader's, 0 if it was not read.
 */
size_t proctrack_task_ids(int pid, uint64_t *ids, size_t max, uint64_t *leader);

struct proctrack_stats {
	uint32_t procs; /* processes with a map entry */
	uint32_t mappings; /* executable mappings in those entries */
	uint32_t mappings_with_table;
	uint32_t mappings_dropped; /* past SFBPF_MAX_MAPPINGS */
	uint64_t refreshes; /* entries (re)built */
	uint64_t adopted; /* entries the kernel copied at a fork, taken on (proctrack__adopt) */
	uint64_t adopt_withdrawn; /* of those, copies naming a table gone before they were read */
	uint64_t unchanged; /* refresh_if_changed found nothing new */
	uint64_t deferred; /* mappings left without a table for now: loader busy */
	uint64_t update_failed; /* entries the kernel refused (procs map full) */
	uint64_t swept; /* entries of processes found gone by the sweep */
	uint64_t mappings_replaced; /* the file opened was not the one the maps line named */
	uint64_t stack_scans; /* stacks read for return addresses (note_truncated) */
	uint64_t stack_scan_pcs; /* PCs they asked rows for */
};

void proctrack__stats(const struct proctrack *pt, struct proctrack_stats *out);

#endif /* SFBPF_PROCTRACK_H */
