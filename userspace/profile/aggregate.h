/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stack aggregator: counts samples per distinct raw stack, keyed by
 * (pid, comm, truncated?, user frames, kernel frames). Addresses are kept raw:
 * symbolization happens once per distinct stack, at output time.
 *
 * Open addressing over a power-of-two slot array (hash kept in the slot, so
 * probing and growing never touch the stacks); stacks are packed into large
 * chunks in arrival order, which is also the iteration order.
 *
 * Budget: with aggregator__set_budget(), chunks and slots stay within it. A
 * new stack that does not fit first makes room: the quarter of the stacks
 * counted least recently is folded into their processes, one stack without
 * frames per (pid, comm, cgroup), marked truncated, so that every sample
 * stays counted with its weight in every output and only its place in the
 * code is lost (totals.evicted stacks, totals.folded samples). The stacks
 * move then: pointers and the iteration order from before do not hold (the
 * live view follows them by id). A sample that fits nowhere, not even in
 * its process's stack, is refused and counted (totals.refused). While the
 * stacks move, old and new chunks coexist: for that moment the memory held
 * may reach twice the budget.
 */
#ifndef SFBPF_AGGREGATE_H
#define SFBPF_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"

/* One distinct stack. ips as in the sample: user leaf first, then kernel leaf first. */
struct aggr_stack {
	uint64_t count; /* samples */
	uint64_t weight; /* sum of sample weights */
	uint64_t cgroup_id; /* the task's cgroup v2 id (a process may move) */
	uint64_t id; /* unique in the aggregator, kept when stacks move (not after a reset) */
	uint64_t folded; /* of count, samples whose own stack was evicted into this one */
	uint64_t folded_weight; /* and of weight, theirs */
	uint64_t last; /* totals.samples when last counted: coldest first out */
	uint32_t pid;
	uint16_t nr_user;
	uint16_t nr_kernel;
	bool truncated; /* see aggr_stop_truncated() */
	char comm[SFBPF_TASK_COMM_LEN]; /* NUL-terminated */
	uint64_t ips[];
};

struct aggr_totals {
	uint64_t samples; /* accepted */
	uint64_t weight;
	uint64_t stacks; /* distinct */
	uint64_t truncated; /* samples with a truncated user stack */
	uint64_t invalid; /* rejected: frame counts or size inconsistent */
	uint64_t by_stop[SFBPF_STOP__COUNT]; /* samples per stop reason */
	/* Since aggregator__new(), kept by aggregator__reset(): */
	uint64_t evicted; /* stacks folded into their process for the budget */
	uint64_t folded; /* samples counted without their stack: in evicted stacks, or late */
	uint64_t refused; /* samples not counted: no room even in their process's stack */
	uint64_t compactions; /* times the stacks moved (room made, idle ones dropped) */
	uint64_t dropped; /* stacks forgotten by aggregator__drop_idle() */
};

struct aggregator;

/*
 * No user stack to unwind: none wanted (-K, kernel threads), or a sample
 * inside execve of a process not read yet (the registers are the old
 * image's, the mm perhaps the new one's). Not unwinding failures.
 */
static inline bool aggr_stop_no_user(unsigned stop)
{
	return stop == SFBPF_STOP_KERNEL_ONLY || stop == SFBPF_STOP_EXECVE;
}

/* Complete: the unwinder reached the outermost frame, or there was no user
 * stack to unwind. Anything else lost the stack's root. */
static inline bool aggr_stop_truncated(unsigned stop)
{
	return stop != SFBPF_STOP_OUTERMOST && !aggr_stop_no_user(stop);
}

struct aggregator *aggregator__new(void); /* NULL + errno */
void aggregator__free(struct aggregator *a);
/* Bytes the stacks may hold (0: no limit; at least 4 MiB are needed to work). */
void aggregator__set_budget(struct aggregator *a, uint64_t bytes);
/* Bytes held now: chunks and slots. */
uint64_t aggregator__bytes(const struct aggregator *a);
/*
 * Forget the stacks not counted since sample number since (totals.samples
 * then), samples and all: for a view of recent samples that nothing else
 * reads. Totals stay. 0 or -ENOMEM (nothing forgotten).
 */
int aggregator__drop_idle(struct aggregator *a, uint64_t since);

/*
 * Count one sample. -EINVAL (and totals.invalid++) if its frame counts are
 * bad, -ENOSPC (totals.refused++) if the budget has no room for it.
 */
int aggregator__add(struct aggregator *a, const struct sfbpf_sample *s);
/* Same, for a ring buffer record of size bytes: checks the frames fit in it. */
int aggregator__add_raw(struct aggregator *a, const void *data, size_t size);

/* Calls cb for every distinct stack, in first-seen order; stops at a nonzero return. */
typedef int (*aggr_cb)(const struct aggr_stack *st, void *ctx);
int aggregator__for_each(const struct aggregator *a, aggr_cb cb, void *ctx);

void aggregator__totals(const struct aggregator *a, struct aggr_totals *out);
/*
 * Forget every stack and total (next interval) but the budget's counts;
 * memory is kept for reuse.
 */
void aggregator__reset(struct aggregator *a);

#endif /* SFBPF_AGGREGATE_H */
