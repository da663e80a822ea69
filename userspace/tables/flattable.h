/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table one object's unwind rows are built into, whatever their source
 * (SFrame: flatten.h; DWARF CFI: cfi.h; the merges of flatbuild.h and
 * complete.h), and what the map loader pushes: rows sorted by PC, their rules,
 * and a page index (bpf/abi.h). Its own file because every producer and the
 * loader share it: kept in one producer, the others would reach into it.
 *
 * Lifecycle: a producer hands a table over; flat_table__free() frees it.
 */
#ifndef SFBPF_FLATTABLE_H
#define SFBPF_FLATTABLE_H

#include <stdint.h>

#include "bpf/abi.h"

/* A row as built: its full ELF address (the push packs it: struct sfbpf_row). */
struct flat_row {
	uint32_t pc_off; /* ELF virtual address the row starts at */
	uint32_t rule; /* index into the table's rules[] (0 = gap), global once admitted */
};

struct flat_table {
	struct flat_row *rows;
	uint32_t nr_rows;
	struct sfbpf_rule *rules; /* rules[0] is the gap rule */
	uint32_t nr_rules;
	uint32_t *pages; /* see bpf/abi.h; nr_pages includes the sentinel */
	uint32_t nr_pages;
	uint32_t pc_min;
	uint8_t page_shift; /* the pages' granularity (log2 bytes); 0: SFBPF_PAGE_SHIFT */
	/* What was skipped, for diagnostics. */
	uint32_t nr_fdes;
	uint32_t nr_fres;
	uint32_t nr_skipped_fdes; /* overlapping or out of 32-bit range */
	uint32_t nr_reserved_fdes; /* of a reserved FRE/FDE type: a gap (sframe_fde.reserved) */
	uint32_t nr_unsupported_fres; /* rules struct sfbpf_rule cannot hold (CFA reg > 255) */
};

/* What the decoder counted about the source of src, carried into dst (a merge of sources). */
static inline void flat_table__copy_counts(struct flat_table *dst, const struct flat_table *src)
{
	dst->nr_fdes = src->nr_fdes;
	dst->nr_fres = src->nr_fres;
	dst->nr_skipped_fdes = src->nr_skipped_fdes;
	dst->nr_reserved_fdes = src->nr_reserved_fdes;
	dst->nr_unsupported_fres = src->nr_unsupported_fres;
}

void flat_table__free(struct flat_table *t);

/*
 * Objects with few rows per page get coarser pages (a per-object granularity,
 * in bits 8-11 of sfbpf_object.flags): a page entry costs as much map memory
 * as a row, so the index is kept to at most 1/FLAT_ROWS_PER_PAGE of the rows
 * (half a byte per row), up to the coarsest page (64 KiB: a row keeps 16 bits
 * of its PC). The flag bits are part of the ABI (SFBPF_OBJ_PAGE_SHIFT, bpf/abi.h).
 */
#define FLAT_ROWS_PER_PAGE 8

/* The granularity of t's page index, in log2 bytes. */
static inline unsigned flat_table__page_shift(const struct flat_table *t)
{
	return t->page_shift ? t->page_shift : SFBPF_PAGE_SHIFT;
}

/*
 * Coarsens t's page index (built at SFBPF_PAGE_SHIFT) to the finest
 * granularity with at most one page per FLAT_ROWS_PER_PAGE rows. In place.
 */
void flat_table__coarsen_pages(struct flat_table *t);

/* Index of the row covering pc, or -1 (the same search the BPF side does). */
int64_t flat_table__lookup(const struct flat_table *t, uint32_t pc);

#endif /* SFBPF_FLATTABLE_H */
