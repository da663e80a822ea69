/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Table builder shared by every source of unwind rows (SFrame in flatten.c,
 * DWARF CFI in cfi.c): rows appended in PC order with their rules interned,
 * then the page index. Rows get the same treatment whatever their source, so
 * tables built from .sframe and from .eh_frame can be compared row for row.
 *
 * Lifecycle: flat_builder__init(), then rules and rows in increasing PC order,
 * then flat_builder__finish() (hands the table over) or flat_builder__abort().
 */
#ifndef SFBPF_FLATBUILD_H
#define SFBPF_FLATBUILD_H

#include <errno.h>
#include <stdint.h>

#include "tables/flattable.h"
#include "tables/ruleset.h"

/* What one object may contribute: twice the BPF rows map's default capacity. */
#define FLAT_MAX_ROWS (4u << 20)

struct flat_builder {
	struct flat_table *t;
	uint32_t cap_rows;
	struct ruleset rules;
};

/* Empty table whose rule 0 is the gap rule. 0 or -ENOMEM. */
int flat_builder__init(struct flat_builder *b);
/* Local index of rule r (added if new), or -ENOMEM. */
int64_t flat_builder__rule(struct flat_builder *b, const struct sfbpf_rule *r);
/* Room for nr rows (at most FLAT_MAX_ROWS), so that rows need not be moved. 0 or -ENOMEM. */
int flat_builder__reserve(struct flat_builder *b, uint64_t nr);
/* Makes room for one more row: 0, -E2BIG past FLAT_MAX_ROWS, -ENOMEM. */
int flat_builder__grow(struct flat_builder *b);

/*
 * From pc on, rule applies. PCs must not decrease. A row with the previous
 * row's rule is merged into it; a row at the previous row's PC replaces it
 * (a zero-length range). 0, -E2BIG (PC above 32 bits, too many rows), -ENOMEM.
 * Inline: the flattener and the merges call it for every row.
 */
static inline int flat_builder__row(struct flat_builder *b, uint64_t pc, uint32_t rule)
{
	struct flat_table *t = b->t;
	int err;

	if (pc > UINT32_MAX)
		return -E2BIG;
	if (t->nr_rows) {
		struct flat_row *last = &t->rows[t->nr_rows - 1];

		if (last->rule == rule)
			return 0; /* same rule continues */
		if (last->pc_off == pc) {
			last->rule = rule; /* a zero-length range: the later row wins */
			/* ... which may now continue the row before it. */
			if (t->nr_rows > 1 && t->rows[t->nr_rows - 2].rule == rule)
				t->nr_rows--;
			return 0;
		}
	}
	if (t->nr_rows == b->cap_rows && (err = flat_builder__grow(b)))
		return err;
	t->rows[t->nr_rows++] = (struct flat_row){ .pc_off = (uint32_t)pc, .rule = rule };
	return 0;
}

/* Last row's PC, or -1 when there is none. */
int64_t flat_builder__last_pc(const struct flat_builder *b);
/* Build the page index and hand the table over. Frees the builder either way. */
int flat_builder__finish(struct flat_builder *b, struct flat_table **out);
void flat_builder__abort(struct flat_builder *b);

/*
 * 0 if t holds what a table flat_builder__finish() handed over holds: rule 0
 * the gap rule, rows in strictly increasing PC order whose rules are in
 * range, and the page index build_pages() makes of those rows (page_shift 0:
 * not yet coarsened). -EINVAL otherwise. For tables that come from elsewhere
 * (the table cache, tablecache.h): the push and the BPF search trust these.
 */
int flat_table__check(const struct flat_table *t);

/*
 * One table from two descriptions of the same object: primary's rows, and
 * fallback's where primary has a gap (rule 0) — e.g. SFrame rows, completed
 * with CFI rows for the functions gas did not see (crt1.o's _start). Returns
 * 0 or -ENOMEM / -E2BIG.
 */
int flat_table__merge(const struct flat_table *primary, const struct flat_table *fallback,
		      struct flat_table **out);

#endif /* SFBPF_FLATBUILD_H */
