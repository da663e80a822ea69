/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The 4-byte row format of the BPF maps (bpf/abi.h): a built table's rows
 * packed relative to its page index, and the lookup the unwinder does on
 * them (bpf/unwind.h, unwind_search_rows), mirrored here so that tests can
 * hold it against the full-PC search of flat_table__lookup() for every PC.
 */
#ifndef SFBPF_ROWPACK_H
#define SFBPF_ROWPACK_H

#include <stdint.h>

#include "tables/flattable.h"

/* Row i of t as the maps hold it; its rule is t's (global once admitted). */
static inline struct sfbpf_row rowpack__row(const struct flat_table *t, uint32_t i)
{
	return (struct sfbpf_row){ .pc_lo = (uint16_t)(t->rows[i].pc_off - t->pc_min),
				   .rule = (uint16_t)t->rows[i].rule };
}

/*
 * The index of the row of t covering pc, found as the unwinder finds it in
 * the packed rows (t's page index, rows packed by rowpack__row), or -1.
 */
int64_t rowpack__lookup(const struct flat_table *t, uint32_t pc);

#endif /* SFBPF_ROWPACK_H */
