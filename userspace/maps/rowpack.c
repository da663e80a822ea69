// SPDX-License-Identifier: GPL-2.0-or-later
/* The packed rows' lookup, as bpf/unwind.h does it (see rowpack.h). */
#include "maps/rowpack.h"

int64_t rowpack__lookup(const struct flat_table *t, uint32_t pc)
{
	uint32_t shift = flat_table__page_shift(t), first, end, base, n, half, lo16;
	uint64_t page;

	if (!t->nr_rows || pc < t->pc_min || shift > 16)
		return -1;
	page = (pc - t->pc_min) >> shift;
	if (page + 1 >= t->nr_pages)
		return -1;
	first = t->pages[page];
	end = t->pages[page + 1];
	if (end > t->nr_rows || end < first)
		return -1;
	lo16 = (pc - t->pc_min) & 0xffff;
	/* Row first - 1, if any, is never compared: it starts before the page. */
	base = first ? first - 1 : 0;
	n = end - base;
	while (n > 1) {
		half = n >> 1;
		if (rowpack__row(t, base + half).pc_lo <= lo16)
			base += half;
		n -= half;
	}
	if (!n || (base >= first && rowpack__row(t, base).pc_lo > lo16))
		return -1;
	return base;
}
