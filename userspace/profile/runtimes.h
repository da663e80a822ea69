/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A session's language runtimes (runtime.h): every runtime the program
 * knows, each told of every process the tracker writes (detect, attach),
 * each naming its frames of every sample (splice), in turn: CPython's
 * first, whose frames the BPF walk appends after the native ones, then
 * HotSpot's, whose frames stand in the native walk's place.
 *
 * A process a runtime detects is in one of four states: attached (its BPF
 * settings pushed), retrying (its runtime not started yet, or unreadable so
 * far: tried again at its samples and at the tracker's refreshes, 4 ms
 * after the first try, then twice as long each time up to a second), native
 * (refused, unsupported, unreadable for good: profiled as native code,
 * counted), or retired: it exited (or exec'd), its walk stopped, but its
 * samples still in the ring are named until runtimes__drained() says a
 * whole round was read since.
 *
 * Lifecycle: runtimes__new() → runtimes__listener() given to the tracker,
 * runtimes__splice() per sample → runtimes__free(). Not thread-safe (the
 * session's thread). Error rule: negative errno; NULL + errno from new.
 */
#ifndef SFBPF_PROFILE_RUNTIMES_H
#define SFBPF_PROFILE_RUNTIMES_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "procs/proctrack.h"
#include "profile/runtime.h"

struct runtimes;

struct runtimes *runtimes__new(const struct runtime_host *host);
void runtimes__free(struct runtimes *rs);

/* The tracker's listener (proctrack__set_listener()): detect and attach, retire. */
struct proctrack_listener runtimes__listener(struct runtimes *rs);

/*
 * in (size bytes) with every runtime's frames named: in itself when none
 * has any (or they cannot be read), else a sample runtimes own until the
 * next call; *size becomes its size.
 */
const struct sfbpf_sample *runtimes__splice(struct runtimes *rs, const struct sfbpf_sample *in,
					    size_t *size);

/* A record one runtime's BPF walk sent for pid ahead of its samples (runtime.h: describe). */
void runtimes__describe(struct runtimes *rs, const struct runtime_ops *ops, int pid,
			const void *rec, size_t size);

/*
 * pid (started at start_ticks) was forked by parent: a runtime attached to
 * parent that can (runtime_ops' inherit) reads pid's frames through it
 * until pid is read itself (the tracker's read of a child that lives), or,
 * if pid is gone first, for the samples it left.
 */
void runtimes__fork(struct runtimes *rs, int pid, int parent, uint64_t start_ticks);

/* Whether pid is attached by some runtime (its BPF settings pushed). */
bool runtimes__attached(const struct runtimes *rs, int pid);

/* A collection of frame_names: each runtime's markers marked, its cached ids forgotten. */
void runtimes__mark_names(struct runtimes *rs);

/* A round of samples was read: processes retired before the round before it are forgotten. */
void runtimes__drained(struct runtimes *rs);

/* Every runtime's counters: the common ones (PREFIX_attached...), then its own. */
#define RUNTIMES_MAX_COUNTERS 96
struct runtimes_stats {
	size_t nr;
	struct runtime_counter {
		char name[40];
		uint64_t value;
		bool gauge;
	} c[RUNTIMES_MAX_COUNTERS];
};
void runtimes__stats(const struct runtimes *rs, struct runtimes_stats *out);

#endif /* SFBPF_PROFILE_RUNTIMES_H */
