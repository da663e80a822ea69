// SPDX-License-Identifier: GPL-2.0-or-later
/* Table builder shared by flatten.c and cfi.c (see flatbuild.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tables/flatbuild.h"
#include "util/vec.h"

int flat_builder__init(struct flat_builder *b)
{
	struct sfbpf_rule gap = { .flags = SFBPF_RULE_GAP };

	memset(b, 0, sizeof(*b));
	b->t = calloc(1, sizeof(*b->t));
	if (!b->t)
		return -ENOMEM;
	if (flat_builder__rule(b, &gap) != SFBPF_RULE_GAP_ID) {
		flat_builder__abort(b);
		return -ENOMEM;
	}
	return 0;
}

int64_t flat_builder__rule(struct flat_builder *b, const struct sfbpf_rule *r)
{
	return ruleset__intern(&b->rules, r, UINT32_MAX);
}

static int resize(struct flat_builder *b, uint32_t ncap)
{
	struct flat_row *n = realloc(b->t->rows, (size_t)ncap * sizeof(*n));

	if (!n)
		return -ENOMEM;
	b->t->rows = n;
	b->cap_rows = ncap;
	return 0;
}

int flat_builder__reserve(struct flat_builder *b, uint64_t nr)
{
	if (nr > FLAT_MAX_ROWS)
		nr = FLAT_MAX_ROWS;
	return nr > b->cap_rows ? resize(b, (uint32_t)nr) : 0;
}

int flat_builder__grow(struct flat_builder *b)
{
	size_t cap = b->cap_rows;

	if (b->t->nr_rows >= FLAT_MAX_ROWS)
		return -E2BIG;
	if (VEC_RESERVE(b->t->rows, cap, (size_t)b->t->nr_rows + 1, 64))
		return -ENOMEM;
	b->cap_rows = (uint32_t)cap; /* at most twice FLAT_MAX_ROWS */
	return 0;
}

int64_t flat_builder__last_pc(const struct flat_builder *b)
{
	return b->t->nr_rows ? (int64_t)b->t->rows[b->t->nr_rows - 1].pc_off : -1;
}

static int build_pages(struct flat_table *t)
{
	uint32_t p = 0, r, page, span;

	if (!t->nr_rows)
		return 0;
	t->pc_min = t->rows[0].pc_off & ~((1u << SFBPF_PAGE_SHIFT) - 1);
	span = (t->rows[t->nr_rows - 1].pc_off - t->pc_min) >> SFBPF_PAGE_SHIFT;
	t->nr_pages = span + 2; /* every page up to the last row's, plus the sentinel */
	t->pages = malloc((size_t)t->nr_pages * sizeof(*t->pages));
	if (!t->pages)
		return -ENOMEM;
	/* pages[p]: the first row starting at or after page p's start, i.e. in page p or later. */
	for (r = 0; r < t->nr_rows; r++) {
		page = (t->rows[r].pc_off - t->pc_min) >> SFBPF_PAGE_SHIFT;
		while (p <= page)
			t->pages[p++] = r;
	}
	t->pages[t->nr_pages - 1] = t->nr_rows;
	return 0;
}

int flat_builder__finish(struct flat_builder *b, struct flat_table **out)
{
	int err = build_pages(b->t);

	*out = NULL;
	if (err) {
		flat_builder__abort(b);
		return err;
	}
	/* Room reserved and not used (flat_builder__reserve) goes back. */
	if (b->cap_rows > b->t->nr_rows + b->t->nr_rows / 8 + 64)
		resize(b, b->t->nr_rows ? b->t->nr_rows : 1);
	/* The table takes the rule array over. */
	b->t->rules = b->rules.rules;
	b->t->nr_rules = b->rules.nr_rules;
	ruleset__free_index(&b->rules);
	*out = b->t;
	memset(b, 0, sizeof(*b));
	return 0;
}

int flat_table__check(const struct flat_table *t)
{
	uint32_t r, p = 0, page;

	if (!t->nr_rules || !(t->rules[0].flags & SFBPF_RULE_GAP) || t->page_shift ||
	    t->nr_rows > FLAT_MAX_ROWS)
		return -EINVAL;
	if (!t->nr_rows)
		return t->nr_pages ? -EINVAL : 0;
	if (t->pc_min != (t->rows[0].pc_off & ~((1u << SFBPF_PAGE_SHIFT) - 1)) ||
	    t->nr_pages != ((t->rows[t->nr_rows - 1].pc_off - t->pc_min) >> SFBPF_PAGE_SHIFT) + 2)
		return -EINVAL;
	/* The rows, and the pages as build_pages() sets them, in one pass. */
	for (r = 0; r < t->nr_rows; r++) {
		if (t->rows[r].rule >= t->nr_rules ||
		    (r && t->rows[r].pc_off <= t->rows[r - 1].pc_off))
			return -EINVAL;
		page = (t->rows[r].pc_off - t->pc_min) >> SFBPF_PAGE_SHIFT;
		for (; p <= page; p++)
			if (t->pages[p] != r)
				return -EINVAL;
	}
	return p == t->nr_pages - 1 && t->pages[p] == t->nr_rows ? 0 : -EINVAL;
}

void flat_builder__abort(struct flat_builder *b)
{
	ruleset__clear(&b->rules);
	flat_table__free(b->t);
	memset(b, 0, sizeof(*b));
}

/* Local id in b of rule id of table t, interned on first use (map[id] = local + 1). */
static int64_t remap(struct flat_builder *b, const struct flat_table *t, uint32_t *map, uint32_t id)
{
	int64_t local;

	if (id >= t->nr_rules)
		return -EINVAL;
	if (!map[id]) {
		local = flat_builder__rule(b, &t->rules[id]);
		if (local < 0)
			return local;
		map[id] = (uint32_t)local + 1;
	}
	return map[id] - 1;
}

int flat_table__merge(const struct flat_table *primary, const struct flat_table *fallback,
		      struct flat_table **out)
{
	const struct flat_table *p = primary, *f = fallback;
	uint32_t i = 0, j = 0, rp = SFBPF_RULE_GAP_ID, rf = SFBPF_RULE_GAP_ID;
	uint32_t *map_p = calloc(p->nr_rules + 1, sizeof(*map_p));
	uint32_t *map_f = calloc(f->nr_rules + 1, sizeof(*map_f));
	struct flat_builder b;
	uint64_t pc;
	int64_t id;
	int err = -ENOMEM;

	*out = NULL;
	if (!map_p || !map_f || (err = flat_builder__init(&b)))
		goto cleanup;
	/* Walk the union of both tables' row starts; each holds its rule until its next row. */
	while (i < p->nr_rows || j < f->nr_rows) {
		pc = i < p->nr_rows ? p->rows[i].pc_off : UINT64_MAX;
		if (j < f->nr_rows && f->rows[j].pc_off < pc)
			pc = f->rows[j].pc_off;
		for (; i < p->nr_rows && p->rows[i].pc_off == pc; i++)
			rp = p->rows[i].rule;
		for (; j < f->nr_rows && f->rows[j].pc_off == pc; j++)
			rf = f->rows[j].rule;
		id = rp != SFBPF_RULE_GAP_ID ? remap(&b, p, map_p, rp) : remap(&b, f, map_f, rf);
		err = id < 0 ? (int)id : flat_builder__row(&b, pc, (uint32_t)id);
		if (err)
			break;
	}
	if (err) {
		flat_builder__abort(&b);
		goto cleanup;
	}
	flat_table__copy_counts(b.t, p);
	err = flat_builder__finish(&b, out);
cleanup:
	free(map_p);
	free(map_f);
	return err;
}
