// SPDX-License-Identifier: GPL-2.0-or-later
/* The table every source of rows builds (see flattable.h). */
#include <stdlib.h>

#include "tables/flattable.h"

void flat_table__free(struct flat_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->rules);
	free(t->pages);
	free(t);
}

void flat_table__coarsen_pages(struct flat_table *t)
{
	uint32_t span, p, k = 0, want;

	if (!t->nr_rows || t->nr_pages < 2 || flat_table__page_shift(t) != SFBPF_PAGE_SHIFT)
		return;
	span = t->nr_pages - 2; /* the last row's page */
	want = t->nr_rows / FLAT_ROWS_PER_PAGE ? t->nr_rows / FLAT_ROWS_PER_PAGE : 1;
	while (k < SFBPF_OBJ_PAGE_SHIFT_MAX && (span >> k) + 1 > want)
		k++;
	if (!k)
		return;
	/* Coarse page p starts where fine page p << k does: the same first row. */
	for (p = 0; p <= span >> k; p++)
		t->pages[p] = t->pages[p << k];
	t->pages[p] = t->nr_rows; /* the sentinel */
	t->nr_pages = p + 1;
	t->page_shift = SFBPF_PAGE_SHIFT + k;
}

int64_t flat_table__lookup(const struct flat_table *t, uint32_t pc)
{
	uint32_t p, lo, hi, mid;

	if (!t->nr_rows || pc < t->pc_min)
		return -1;
	p = (pc - t->pc_min) >> flat_table__page_shift(t);
	if (p + 1 >= t->nr_pages)
		return -1;
	/* The answer is the last row in [pages[p] - 1, pages[p + 1]) starting <= pc. */
	lo = t->pages[p] ? t->pages[p] - 1 : 0;
	hi = t->pages[p + 1];
	if (lo >= hi || t->rows[lo].pc_off > pc)
		return -1;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (t->rows[mid].pc_off <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
