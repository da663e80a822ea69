/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Flattener: turns one object's decoded SFrame section into the table the BPF
 * unwinder searches — rows sorted by PC (one per FRE, PLT blocks expanded,
 * explicit gap rows between functions), deduplicated rules, and a page index.
 */
#ifndef SFBPF_FLATTEN_H
#define SFBPF_FLATTEN_H

#include <stdint.h>

#include "sframe.h"
#include "../bpf/profile.h"

struct flat_table {
	struct sfbpf_row *rows; /* rule = index into rules[] (0 = gap) */
	uint32_t nr_rows;
	struct sfbpf_rule *rules; /* rules[0] is the gap rule */
	uint32_t nr_rules;
	uint32_t *pages; /* see bpf/profile.h; nr_pages includes the sentinel */
	uint32_t nr_pages;
	uint32_t pc_min;
	/* What was skipped, for diagnostics. */
	uint32_t nr_fdes;
	uint32_t nr_fres;
	uint32_t nr_skipped_fdes; /* overlapping or out of 32-bit range */
};

/*
 * Flatten d. Row PCs are d's function start addresses (ELF virtual addresses
 * when sect_addr was the section's sh_addr). Returns 0 or a negative errno
 * (-ENOMEM, -E2BIG when the table would not fit 32-bit PCs or row indexes).
 */
int flat_table__from_sframe(const struct sframe_decoder *d, struct flat_table **out);
void flat_table__free(struct flat_table *t);

/* Index of the row covering pc, or -1 (the same search the BPF side does). */
int64_t flat_table__lookup(const struct flat_table *t, uint32_t pc);

#endif /* SFBPF_FLATTEN_H */
