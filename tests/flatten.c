// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Flattener test: for every PC of every function of each ELF file given, the
 * row the flattened table finds (with the same page-index + binary search the
 * BPF unwinder does) must carry the rule of the FRE the decoder finds; PCs
 * covered by no FDE must land on a gap row or on nothing.
 * Usage: flatten ELF...   Prints PASS/FAIL lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tables/flatten.h"
#include "sframe/sframe_elf.h"

static int expect_reg(const struct sframe_rule *r)
{
	return r->base == SFRAME_BASE_SP ? SFBPF_REG_SP :
	       r->base == SFRAME_BASE_FP ? SFBPF_REG_FP :
					   -1;
}

/* Does rule (from the table) say what fre (from the decoder) says? */
static const char *mismatch(const struct sfbpf_rule *rule, const struct sframe_fre *fre)
{
	if (fre->ra.kind == SFRAME_RULE_UNDEFINED)
		return rule->ra_loc == SFBPF_LOC_UNDEFINED ? NULL : "outermost";
	if (rule->flags & SFBPF_RULE_GAP)
		return "gap";
	if (expect_reg(&fre->cfa) >= 0 && rule->cfa_reg != expect_reg(&fre->cfa))
		return "cfa base";
	if (rule->cfa_off != fre->cfa.offset)
		return "cfa offset";
	if (!!(rule->flags & SFBPF_RULE_CFA_DEREF) != fre->cfa.deref)
		return "cfa deref";
	if (fre->ra.kind == SFRAME_RULE_OFFSET && fre->ra.base == SFRAME_BASE_CFA &&
	    (rule->ra_loc != SFBPF_LOC_CFA || rule->ra_off != fre->ra.offset))
		return "ra";
	if (fre->ra.kind == SFRAME_RULE_SAME && rule->ra_loc != SFBPF_LOC_SAME)
		return "ra same";
	if (fre->fp.kind == SFRAME_RULE_OFFSET && fre->fp.base == SFRAME_BASE_CFA &&
	    (rule->fp_loc != SFBPF_LOC_CFA || rule->fp_off != fre->fp.offset))
		return "fp";
	if (fre->fp.kind == SFRAME_RULE_SAME && rule->fp_loc != SFBPF_LOC_SAME)
		return "fp same";
	return NULL;
}

static int is_gap(const struct flat_table *t, uint64_t pc)
{
	int64_t r = pc > UINT32_MAX ? -1 : flat_table__lookup(t, (uint32_t)pc);

	return r < 0 || t->rows[r].rule == SFBPF_RULE_GAP_ID;
}

static int check_fde(const struct sframe_decoder *d, const struct flat_table *t,
		     const struct sframe_fde *f, const char *path, unsigned long *pcs)
{
	struct sframe_fde next;
	struct sframe_fre fre;
	uint64_t pc;
	int64_t r;
	const char *why;

	for (pc = f->func_start; pc < f->func_start + f->func_size; pc++, (*pcs)++) {
		r = flat_table__lookup(t, (uint32_t)pc);
		if (sframe_decoder__find_fre(d, f, pc, &fre)) {
			if (r >= 0 && t->rows[r].rule != SFBPF_RULE_GAP_ID) {
				printf("FAIL: %s: pc 0x%llx has no FRE but row %lld\n", path,
				       (unsigned long long)pc, (long long)r);
				return -1;
			}
			continue;
		}
		why = r < 0 ? "no row" : mismatch(&t->rules[t->rows[r].rule], &fre);
		if (why) {
			printf("FAIL: %s: pc 0x%llx (FDE %u, FRE %u): %s\n", path,
			       (unsigned long long)pc, f->index, fre.index, why);
			return -1;
		}
	}
	/* The byte after the function is either the next function or a gap. */
	if (sframe_decoder__find_fde(d, pc, &next) && !is_gap(t, pc)) {
		printf("FAIL: %s: pc 0x%llx after FDE %u matches a row\n", path,
		       (unsigned long long)pc, f->index);
		return -1;
	}
	return 0;
}

static int check_file(const char *path)
{
	struct sframe_elf_error eerr;
	struct sframe_error serr;
	struct sframe_decoder *d = NULL;
	struct flat_table *t = NULL;
	struct sframe_elf s = { 0 };
	struct sframe_fde f;
	unsigned long pcs = 0;
	uint32_t i;
	int ret = -1;

	if (sframe_elf__load(path, &s, &eerr)) {
		printf("FAIL: %s: %s\n", path, eerr.msg);
		return -1;
	}
	if (sframe_decoder__new(s.data, s.size, s.addr, &d, &serr)) {
		printf("FAIL: %s: %s\n", path, serr.msg);
		goto cleanup;
	}
	if (flat_table__from_sframe(d, &t)) {
		printf("FAIL: %s: flatten failed\n", path);
		goto cleanup;
	}
	for (i = 0; i < sframe_decoder__num_fdes(d); i++) {
		sframe_decoder__fde(d, i, &f);
		if (check_fde(d, t, &f, path, &pcs))
			goto cleanup;
	}
	if (t->nr_rows && (!is_gap(t, t->pc_min ? t->pc_min - 1 : 0) ||
			   !is_gap(t, t->rows[t->nr_rows - 1].pc_off))) {
		printf("FAIL: %s: PCs outside all functions match rows\n", path);
		goto cleanup;
	}
	printf("PASS: flatten %s: %u FDEs, %u FREs -> %u rows, %u rules, %u pages, %lu PCs\n", path,
	       t->nr_fdes, t->nr_fres, t->nr_rows, t->nr_rules, t->nr_pages, pcs);
	ret = 0;
cleanup:
	flat_table__free(t);
	sframe_decoder__free(d);
	sframe_elf__release(&s);
	return ret;
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	for (i = 1; i < argc; i++)
		failed |= check_file(argv[i]) != 0;
	return failed;
}
