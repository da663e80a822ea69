// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: decoder, then flattener, then the lookup the BPF
 * unwinder does, on arbitrary section bytes.
 *
 * The table must pass flat_check_table() (sorted, merged, gap-terminated,
 * a page index that brackets every row, lookups landing on the last row at
 * or before the PC). When the flattener skipped nothing, the rule a PC
 * inside a function finds must also say what the decoder's FRE says.
 *
 * The section address is the ELF file's sh_addr, which the file's author
 * chooses: it is picked from the input's length among a usual one, one just
 * under the 32-bit limit of row PCs, and one where 64-bit ends wrap.
 */
#include <string.h>

#include "flat_check.h"
#include "tables/flatten.h"
#include "fuzz.h"

#define MAX_PCS 4096 /* lookups checked per input */

static const uint64_t sect_addrs[] = { 0x400000ull, 0xfff00000ull, 0xfffffffffff00000ull };

/* What the decoder says at pc versus the rule the table gives. */
static void check_rule(const struct sframe_decoder *d, const struct flat_table *t, uint64_t pc)
{
	const struct sfbpf_rule *rule;
	struct sframe_fde f;
	struct sframe_fre fre;
	int64_t r = flat_check_lookup(t, pc);

	if (t->nr_skipped_fdes || pc > UINT32_MAX || sframe_decoder__find_fde(d, pc, &f))
		return;
	if (f.num_fres == 0 || f.reserved) {
		/*
		 * V3: a default FDE without FREs = outermost. V1/V2 ones, flexible
		 * ones and reserved-type FDEs describe nothing: a gap CFI may fill
		 * (no row at all, when the table holds only gaps).
		 */
		bool outermost = sframe_decoder__header(d)->version >= SFRAME_VERSION_3 &&
				 !f.reserved && f.fde_type == SFRAME_FDE_TYPE_DEFAULT;

		FUZZ_CHECK(outermost ? r >= 0 && t->rules[t->rows[r].rule].ra_loc ==
							   SFBPF_LOC_UNDEFINED :
				       r < 0 || t->rows[r].rule == SFBPF_RULE_GAP_ID,
			   "pc %#llx: FDE %u without FREs", (unsigned long long)pc, f.index);
		return;
	}
	FUZZ_CHECK(r >= 0, "pc %#llx in FDE %u has no row", (unsigned long long)pc, f.index);
	rule = &t->rules[t->rows[r].rule];
	if (sframe_decoder__find_fre(d, &f, pc, &fre)) {
		FUZZ_CHECK(t->rows[r].rule == SFBPF_RULE_GAP_ID,
			   "pc %#llx before FDE %u's first FRE is not a gap", (unsigned long long)pc,
			   f.index);
		return;
	}
	if (fre.ra.kind == SFRAME_RULE_UNDEFINED) {
		FUZZ_CHECK(rule->ra_loc == SFBPF_LOC_UNDEFINED, "pc %#llx: not outermost",
			   (unsigned long long)pc);
		return;
	}
	/* A CFA register whose number does not fit the rule's 8 bits: unsupported. */
	if (fre.cfa.base == SFRAME_BASE_REG && fre.cfa.regnum > UINT8_MAX) {
		FUZZ_CHECK(rule->flags & SFBPF_RULE_UNSUPPORTED, "pc %#llx: CFA r%u not unsupported",
			   (unsigned long long)pc, fre.cfa.regnum);
		return;
	}
	FUZZ_CHECK(!(rule->flags & SFBPF_RULE_GAP), "pc %#llx: gap inside FDE %u FRE %u",
		   (unsigned long long)pc, f.index, fre.index);
	FUZZ_CHECK(rule->cfa_off == (int32_t)fre.cfa.offset &&
			   !!(rule->flags & SFBPF_RULE_CFA_DEREF) == fre.cfa.deref,
		   "pc %#llx: CFA offset %d, FRE says %lld", (unsigned long long)pc, rule->cfa_off,
		   (long long)fre.cfa.offset);
}

/* PCs around every function's bounds and FRE starts, up to MAX_PCS. */
static void check_pcs(const struct sframe_decoder *d, const struct flat_table *t)
{
	uint32_t i, n = sframe_decoder__num_fdes(d), budget = MAX_PCS;
	struct sframe_fre_iter it;
	struct sframe_fre fre;
	struct sframe_fde f;

	for (i = 0; i < n && budget > 3; i++) {
		sframe_decoder__fde(d, i, &f);
		check_rule(d, t, f.func_start - 1);
		check_rule(d, t, f.func_start + f.func_size - 1);
		check_rule(d, t, f.func_start + f.func_size);
		budget -= 3;
		/* PCMASK: the start of the second repetition block too. */
		if (f.pctype == SFRAME_FDE_PCTYPE_MASK && f.rep_size) {
			check_rule(d, t, f.func_start + f.rep_size);
			budget--;
		}
		sframe_fre_iter__init(&it, d, &f);
		while (budget > 2 && sframe_fre_iter__next(&it, &fre)) {
			check_rule(d, t, f.func_start + fre.start_off);
			check_rule(d, t, f.func_start + fre.end_off - 1);
			budget -= 2;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t addr = sect_addrs[size % (sizeof(sect_addrs) / sizeof(sect_addrs[0]))];
	struct sframe_decoder *d = NULL;
	struct flat_table *t = NULL;
	uint32_t n;
	int ret;

	if (sframe_decoder__new(data, size, addr, &d, NULL))
		return 0;
	if (fuzz_skip_known() && flat_known_bug(d)) {
		sframe_decoder__free(d);
		return 0;
	}
	n = sframe_decoder__num_fdes(d);
	ret = flat_table__from_sframe(d, &t);
	FUZZ_CHECK(ret == 0 || ret == -E2BIG || ret == -ENOMEM, "flatten returned %d", ret);
	if (!ret) {
		/* A PCMASK FDE too big to expand counts as flattened and skipped. */
		FUZZ_CHECK(t->nr_fdes <= n && t->nr_fdes + t->nr_skipped_fdes >= n,
			   "%u flattened + %u skipped of %u FDEs", t->nr_fdes, t->nr_skipped_fdes, n);
		flat_check_table(t, MAX_PCS);
		check_pcs(d, t);
	}
	flat_table__free(t);
	sframe_decoder__free(d);
	return 0;
}
