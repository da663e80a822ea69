// SPDX-License-Identifier: GPL-2.0-or-later
/* The live view's caller and callee trees of a row (see topview.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "top/topview_int.h"
#include "util/vec.h"

/* ---- caller/callee trees ---- */

#define TREE_MAX_DEPTH 64

struct tnode {
	uint32_t sym;
	uint32_t child, sibling; /* 0: none (node 0 is the root, nobody's child) */
	double weight;
};

struct tree {
	struct topview *tv;
	struct tnode *n;
	size_t nr, cap;
	uint32_t *scratch; /* children being sorted, one segment per open level */
	size_t nr_scratch, scratch_cap;
	double min_weight;
	size_t max_nodes, nr_out;
	int err;
};

static int64_t tree_child(struct tree *t, uint32_t parent, uint32_t sym)
{
	uint32_t c;

	for (c = t->n[parent].child; c; c = t->n[c].sibling)
		if (t->n[c].sym == sym)
			return c;
	if (VEC_RESERVE(t->n, t->cap, t->nr + 1, 64))
		return -ENOMEM;
	t->n[t->nr] = (struct tnode){ sym, 0, t->n[parent].child, 0 };
	t->n[parent].child = t->nr;
	return t->nr++;
}

static bool sym_hidden(const struct topview_sym *s, const struct topview_filter *f)
{
	return f && ((f->hide_kernel && s->kernel) || (f->hide_user && !s->kernel));
}

/* Adds s's frames from index j (exclusive) outwards (step 1) or inwards (step -1). */
static int tree_path(struct tree *t, const struct tv_stack *s, int j, int step,
		     const struct topview_filter *f)
{
	struct topview *tv = t->tv;
	int64_t node = 0;
	int k, depth = 0;

	for (k = j + step; k >= 0 && k < s->nr && depth < TREE_MAX_DEPTH; k += step) {
		if (sym_hidden(tv->syms[s->syms[k]], f))
			continue;
		node = tree_child(t, node, s->syms[k]);
		if (node < 0)
			return (int)node;
		t->n[node].weight += s->weight;
		depth++;
	}
	/* (A process's stack of evicted ones is [truncated] already.) */
	if (step > 0 && s->truncated && s->syms[s->nr - 1] != tv->truncated_sym &&
	    depth < TREE_MAX_DEPTH && !(f && f->hide_user)) {
		node = tree_child(t, node, tv->truncated_sym);
		if (node < 0)
			return (int)node;
		t->n[node].weight += s->weight;
	}
	return 0;
}

static int cmp_tnodes(const void *pa, const void *pb, void *arg)
{
	const struct tree *t = arg;
	const struct tnode *a = &t->n[*(const uint32_t *)pa], *b = &t->n[*(const uint32_t *)pb];
	int c = cmp_num(a->weight, b->weight);

	return c ? c : strcmp(t->tv->syms[a->sym]->name, t->tv->syms[b->sym]->name);
}

/* Depth-first, heaviest children first, into tv->nodes. */
static void tree_emit(struct tree *t, uint32_t node, int depth)
{
	struct topview *tv = t->tv;
	size_t base = t->nr_scratch, i;
	uint32_t c;

	for (c = t->n[node].child; c; c = t->n[c].sibling) {
		if (VEC_RESERVE(t->scratch, t->scratch_cap, t->nr_scratch + 1, 64)) {
			t->err = -ENOMEM;
			return;
		}
		t->scratch[t->nr_scratch++] = c;
	}
	if (t->nr_scratch == base)
		return;
	qsort_r(t->scratch + base, t->nr_scratch - base, sizeof(*t->scratch), cmp_tnodes, t);
	for (i = base; i < t->nr_scratch && !t->err; i++) {
		c = t->scratch[i];
		if (t->n[c].weight < t->min_weight || (t->max_nodes && t->nr_out >= t->max_nodes))
			break;
		if (VEC_RESERVE(tv->nodes, tv->nodes_cap, t->nr_out + 1, 64)) {
			t->err = -ENOMEM;
			return;
		}
		tv->nodes[t->nr_out++] =
			(struct topview_node){ tv->syms[t->n[c].sym], t->n[c].weight, depth };
		tree_emit(t, c, depth + 1);
	}
	t->nr_scratch = base;
}

/* Index of sym in s's frames: the outermost occurrence, or the innermost. */
static int find_frame(const struct tv_stack *s, uint32_t sym, bool outermost)
{
	int k;

	if (outermost) {
		for (k = s->nr - 1; k >= 0; k--)
			if (s->syms[k] == sym)
				return k;
	} else {
		for (k = 0; k < s->nr; k++)
			if (s->syms[k] == sym)
				return k;
	}
	return -1;
}

static bool stack_has_row(const struct tv_stack *s, uint32_t id)
{
	unsigned i;

	for (i = 0; i < s->nr_rows; i++)
		if (s->rows[i] == id)
			return true;
	return false;
}

int topview__tree(struct topview *tv, uint32_t id, enum topview_dir dir,
		  const struct topview_filter *f, double min_share, size_t max_nodes,
		  const struct topview_node **nodes)
{
	const struct topview_row *r = topview__row(tv, id);
	struct tree t = { .tv = tv, .max_nodes = max_nodes };
	const struct tv_stack *s;
	int64_t sym;
	size_t i;
	int j;

	*nodes = tv->nodes;
	if (!r)
		return -ENOENT;
	sym = topview_sym_id(tv, r->sym);
	if (sym < 0)
		return -ENOENT;
	if (VEC_RESERVE(t.n, t.cap, 1, 64))
		return -ENOMEM;
	t.n[t.nr++] = (struct tnode){ (uint32_t)sym, 0, 0, r->total };
	for (i = 0; i < tv->nr_stacks && !t.err; i++) {
		s = &tv->stacks[i];
		if (s->weight <= 0 || !stack_has_row(s, id))
			continue;
		j = find_frame(s, (uint32_t)sym, dir == TOPVIEW_CALLEES);
		if (j >= 0)
			t.err = tree_path(&t, s, j, dir == TOPVIEW_CALLERS ? 1 : -1, f);
	}
	t.min_weight = r->total * min_share;
	if (t.min_weight <= 0)
		t.min_weight = 1e-9;
	if (!t.err)
		tree_emit(&t, 0, 1);
	free(t.n);
	free(t.scratch);
	*nodes = tv->nodes;
	return t.err ? t.err : (int)t.nr_out;
}
