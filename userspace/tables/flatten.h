/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Flattener: turns one object's decoded SFrame section into the table the BPF
 * unwinder searches — rows sorted by PC (one per FRE, PLT blocks expanded,
 * explicit gap rows between functions), deduplicated rules, and a page index.
 */
#ifndef SFBPF_FLATTEN_H
#define SFBPF_FLATTEN_H

#include <stdint.h>

#include "sframe/sframe.h"
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

/*
 * Flatten d. Each FRE's rule applies from its start to the next FRE's (the
 * later of two FREs at one start wins; FREs at the function's end are left
 * out); FDEs without usable FREs are gaps, except V3's outermost frames.
 * Rules that do not fit struct sfbpf_rule become SFBPF_RULE_UNSUPPORTED rows,
 * where the walk stops. Row PCs are d's function start addresses (ELF virtual addresses
 * when sect_addr was the section's sh_addr). Returns 0 or a negative errno
 * (-ENOMEM, -E2BIG when the table would not fit 32-bit PCs or row indexes).
 */
int flat_table__from_sframe(const struct sframe_decoder *d, struct flat_table **out);
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

#endif /* SFBPF_FLATTEN_H */
