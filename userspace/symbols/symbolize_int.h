/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the symbolizer's files share (symbolize.c: processes and lookups;
 * symbolize_gens.c: their mapping snapshots and generations;
 * symbolize_gone.c: the names of a process gone before it was read, from
 * the kernel's mappings).
 */
#ifndef SFBPF_SYMBOLIZE_INT_H
#define SFBPF_SYMBOLIZE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "procs/procmaps.h"
#include "symbols/perfmap.h"
#include "symbols/symbolize.h"
#include "util/hashmap.h"
#include "util/search.h"

#define REFRESH_NS 1000000000ULL /* re-read maps at most once a second */
#define LEAF_REFRESH_NS 10000000ULL /* ... but 10 ms when a sample's own PC missed */
#define YOUNG_READS 4 /* ... or in a new image's first reads (symbolizer__note_sample) */
#define MAX_GENS 8 /* snapshots kept per process (exec chains) */

/* ---- per-process state ------------------------------------------------------ */

struct pmap {
	uint64_t start, end, offset;
	uint64_t dev, ino;
	struct symobj *obj; /* NULL: anonymous, or no readable ELF behind it */
	const char *path; /* interned; NULL if anonymous */
	const char *module; /* interned */
	uint32_t perms, flags;
};

/* The mappings serving samples from since_ns until the next generation's. */
struct gen {
	uint64_t since_ns;
	struct pmap *maps;
	size_t count;
	const char *exe; /* the executable's path when read (interned), or NULL */
	struct symbolizer_image image; /* the exec event's (exec_id 0: unknown) */
};

struct proc {
	int pid;
	bool gone; /* /proc/PID vanished */
	bool need_ns; /* has executable memory without ELF: its JIT map's owner wanted */
	bool root_read;
	int root_pid; /* pid: its paths resolve under /proc/PID/root; 0: under ours */
	bool tenant_root; /* a root not the host's: its root user may rewrite the files it maps */
	struct gen gens[MAX_GENS]; /* oldest first */
	unsigned ngens;
	uint64_t refreshed_ns;
	uint64_t leaf_miss_ns; /* earliest sample whose leaf missed, since the last read */
	unsigned reads; /* of its maps since first sight or its last exec */
	struct perfmap jit;
};

struct symbolizer {
	struct hashmap procs; /* struct proc *, by pid */
	struct hashmap strs; /* interned char *, by content */
	size_t strs_live; /* interned strings the snapshots used at the last sweep */
	uint64_t strs_swept; /* strings freed by sweeps */
	struct symcache *cache;
	struct perfmap_pool jit_pool; /* every process's JIT map shares one budget */
	struct proc *last; /* the last process looked up: samples come in runs of one */
	bool no_inline; /* answer the outermost source frame only */
	symbolizer_kmaps_fn kmaps; /* a gone process's mappings, as the kernel found them */
	void *kmaps_ctx;
	uint64_t kmaps_named; /* processes named from them */
};

/* How many of maps (sorted by start) start at or below addr. */
static inline size_t maps_upto(const struct pmap *maps, size_t count, uint64_t addr)
{
	return SEARCH_UPTO(maps, count, start, addr);
}

static inline const struct pmap *find_pmap(const struct pmap *maps, size_t count, uint64_t addr)
{
	size_t n = maps_upto(maps, count, addr);

	return n && addr < maps[n - 1].end ? &maps[n - 1] : NULL;
}

static inline bool is_code(const struct pmap *m)
{
	return m && (m->perms & PROCMAP_EXEC);
}

/* str interned (NULL: no memory): it lives while a snapshot uses it. */
const char *intern(struct symbolizer *s, const char *str);
/* fresh (n, malloc'd, references held) into g, replacing what they overlap; fresh is g's. */
int gen__merge(struct symbolizer *s, struct gen *g, struct pmap *fresh, size_t n);
/* fresh maps code g does not cover as it does (new, or moved); replaced: none of g's is gone. */
bool gen__lacks(const struct gen *g, const struct procmaps *fresh);
/* Some code mapping of g is not in fresh as it was: another image (an exec). */
bool gen__replaced(const struct gen *g, const struct procmaps *fresh);
/* Executable memory without an ELF object: JIT code, named by a perf map. */
bool pmap__maybe_jit(const struct pmap *m);
/* The objects maps point at are no longer theirs. */
void maps__put(struct symbolizer *s, struct pmap *maps, size_t n);
/* A generation (maps, n: p's now) serving samples from since_ns on; the oldest may go. */
void proc__push_gen(struct symbolizer *s, struct proc *p, uint64_t since_ns, struct pmap *maps,
		    size_t n, const char *exe);
/*
 * p's mappings read (a snapshot at most max_age_ns old will do) into a new
 * generation from since_ns on (code replaced, or force_new) or the current
 * one. -ESRCH: p is gone (p->gone), or has no mapping left (exiting).
 */
int proc__snapshot(struct symbolizer *s, struct proc *p, uint64_t since_ns, bool force_new,
		   uint64_t max_age_ns);
/*
 * p is gone and its newest image's mappings were never read (or not all):
 * those the kernel found for it named, if s has a source of them (true).
 */
bool proc__from_kernel(struct symbolizer *s, struct proc *p);

#endif /* SFBPF_SYMBOLIZE_INT_H */
