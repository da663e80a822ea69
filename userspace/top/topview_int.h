/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the live view's model: the state that topview.c (building it from
 * the aggregator, selection) and topview_tree.c (caller/callee trees) share.
 * Not for other modules: they use topview.h.
 */
#ifndef SFBPF_TOPVIEW_INT_H
#define SFBPF_TOPVIEW_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/aggregate.h"
#include "symbols/ksyms.h"
#include "profile/stackwalk.h"
#include "symbols/symbolize.h"
#include "top/topview.h"
#include "util/arena.h"
#include "util/hashmap.h"
#include "util/strset.h"

struct addr_entry {
	uint64_t space; /* pid, or KERNEL_SPACE */
	uint64_t addr;
	uint32_t sym;
};

#define KERNEL_SPACE (1ULL << 32)

struct tv_stack {
	uint64_t id; /* the aggregator's stack id */
	uint32_t visit; /* the update that last found it in the aggregator */
	uint64_t seen; /* its samples (count, folded ones included) when last counted */
	uint64_t seen_weight; /* and their weight */
	/*
	 * A process's stack (no frames): samples of evicted stacks folded into it
	 * when last counted, and of those in this update, what the evicted
	 * stacks have not yet claimed (see unfold()).
	 */
	uint64_t seen_folded, fold_left;
	uint64_t cgroup_id;
	uint64_t samples; /* since the last zeroing */
	double weight; /* in the counting mode */
	uint32_t *syms; /* frames, leaf (kernel leaf if any) first */
	uint32_t *rows; /* distinct rows of the frames; rows[0]: the leaf's */
	const char *comm; /* interned */
	uint32_t pid;
	uint16_t nr, nr_rows;
	bool truncated;
};

struct topview {
	struct topview_opts opts;
	struct symbolizer *sym;
	const struct ksyms *ks;
	struct sw_name name; /* the frame being named */

	struct strset strings; /* names, modules, comms */
	struct arena syms_arena, rows_arena, stacks_arena;

	struct topview_sym **syms;
	size_t nr_syms, syms_cap;
	struct hashmap syms_map;
	uint32_t *marks; /* per sym: stamp of the last stack that listed it */
	size_t marks_cap;
	uint32_t stamp;
	uint32_t truncated_sym;

	struct addr_entry *addrs;
	size_t nr_addrs, addrs_cap;
	struct hashmap addrs_map;

	struct topview_row **rows;
	size_t nr_rows, rows_cap;
	struct hashmap rows_map;

	struct tv_stack *stacks;
	size_t nr_stacks, stacks_cap;
	struct hashmap ids_map; /* stack index, by aggregator stack id */
	struct hashmap
		folds_map; /* this update's process stacks that took evicted ones, by process */
	uint32_t visit; /* updates so far */
	size_t removed; /* stacks gone from the aggregator since the last rebuild */
	uint64_t rebuilds;

	double total_weight;
	uint64_t total_samples;

	const struct topview_row **sel; /* topview__select's result */
	size_t sel_cap;
	struct topview_node *nodes; /* topview__tree's result */
	size_t nodes_cap;
};

/* The id of a symbol of the model (a row's sym), or -1. */
int64_t topview_sym_id(const struct topview *tv, const struct topview_sym *sym);

/* qsort order of two figures, largest first. */
static inline int cmp_num(double a, double b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

#endif /* SFBPF_TOPVIEW_INT_H */
