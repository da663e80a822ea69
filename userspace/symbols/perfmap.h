/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * JIT code names from the perf map convention: a process writes
 * /tmp/perf-PID.map ("START SIZE name" lines, hex; symtab.h parses them).
 *
 * Containers: a process in its own PID namespace writes the map under the
 * PID it sees (NSPID, the last field of "NSpid:" in /proc/PID/status), at
 * /tmp inside its own root. The map is looked for as /tmp/perf-NSPID.map
 * inside /proc/PID/root (procmap__open_in_root: the process's symlinks
 * cannot lead out of its root), then as /tmp/perf-PID.map in our namespace
 * (no symlinks at all). Either must be a regular file owned by root or by the
 * process's own user: nobody else may name its code.
 *
 * The map is read when the symbolizer snapshots the process's mappings
 * (perfmap__refresh) or a lookup first needs it, and re-read, at most once a
 * second, when a lookup misses (code emitted since) and the file changed.
 * A JIT appends: when the file grew and the bytes before the end of the last
 * read are still there, only the new lines are read, into a table of their
 * own (later tables win at one address); every PERFMAP_MAX_PARTS the whole
 * file is read again into one.
 *
 * Budget: every process may write a map, so all maps together share one
 * budget of memory (struct perfmap_pool). The size is checked before the
 * work: a read (whole or new lines) needs its text times
 * PERFMAP_PEAK_PER_BYTE (what building a table takes at its peak, measured:
 * 402 MB for a 64 MiB map) in what the budget has left. Short of it, the
 * other maps' tables go, the one found in least recently first (evicted:
 * read again when a lookup needs them, at most once a second); a read that
 * would not fit even then is refused, and counted, and the map keeps the
 * table it had. A kept table is charged PERFMAP_KEPT_PER_BYTE its text
 * (111 MB for that map).
 *
 * Lifecycle: perfmap__init() with the host PID; perfmap__identify() while
 * the process lives (reads NSPID and owner), then perfmap__refresh() while it
 * lives; perfmap__find() at any time,
 * also after the process exited (the file may remain); perfmap__release().
 */
#ifndef SFBPF_PERFMAP_H
#define SFBPF_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct symtab;

#define PERFMAP_MAX_PARTS 8
#define PERFMAP_PEAK_PER_BYTE 7
#define PERFMAP_KEPT_PER_BYTE 2
/* All maps' budget when none is set (the session sets one that follows the machine). */
#define PERFMAP_DEFAULT_BUDGET (64ull << 20)

struct perfmap;

/* What every process's map shares. Counts only grow; bytes is a level. */
struct perfmap_pool {
	uint64_t budget; /* 0: PERFMAP_DEFAULT_BUDGET */
	uint64_t bytes; /* charged by the tables kept */
	uint64_t reads; /* whole maps read */
	uint64_t tail_reads; /* appended lines read alone */
	uint64_t refused; /* reads refused: over the budget */
	uint64_t evicted; /* maps whose tables went for another's read */
	struct perfmap *coldest, *hottest; /* the maps holding tables, by their last use */
};

struct perfmap {
	int pid; /* in our PID namespace */
	int nspid; /* in its own; 0: unknown */
	uid_t uid; /* owner of /proc/PID; (uid_t)-1: unknown */
	struct perfmap_pool *pool;
	struct symtab *parts[PERFMAP_MAX_PARTS]; /* runtime addresses, oldest lines first */
	unsigned nparts;
	bool loaded;
	off_t size; /* of the file last read: a changed file is read again */
	struct timespec mtime;
	off_t parsed; /* bytes read: up to the end of the last whole line */
	char tail[32]; /* the bytes before parsed: still there if the JIT only appended */
	unsigned tail_len;
	uint64_t charged; /* in pool->bytes */
	uint64_t checked_ns; /* CLOCK_MONOTONIC of the last attempt */
	struct perfmap *hotter, *colder; /* in the pool's list while it holds tables */
};

void perfmap__init(struct perfmap *m, int pid, struct perfmap_pool *pool);
/* Read the process's NSPID and owner, once they are wanted (it has JIT-able memory). */
void perfmap__identify(struct perfmap *m);
/*
 * The JIT symbol covering addr (NULL if none), and addr's offset in it.
 * alive: the process still exists (its root can be reached). The name lives
 * until the map is re-read: copy it before the next lookup.
 */
const char *perfmap__find(struct perfmap *m, bool alive, uint64_t addr, uint64_t *offset);
/* Re-read the map if it changed (at most once a second): while its root is reachable. */
void perfmap__refresh(struct perfmap *m, bool alive);
void perfmap__release(struct perfmap *m);

#endif /* SFBPF_PERFMAP_H */
