// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Flattener test: for every PC of every function of each ELF file given, the
 * row the flattened table finds (with the same page-index + binary search the
 * BPF unwinder does) must carry the rule of the FRE the decoder finds; PCs
 * covered by no FDE must land on a gap row or on nothing.
 *
 * --built checks exact rows of built sections with what gas emits and the
 * decoder alone cannot show right: FREs sharing a start (the later wins), an
 * FRE at the function's end (no row past the function), V1/V2 FDEs without
 * FREs (gaps, not outermost frames) and reserved-type FDEs (gaps).
 * --rows ELF prints one line per row, "pc rule", for scripts.
 * Usage: flatten [--built] [--rows ELF] ELF...   Prints PASS/FAIL lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tables/flatten.h"
#include "sframe/sframe_elf.h"
#include "sframe_builder.h"
#include "testlib.h"

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
				test_fail("%s: pc 0x%llx has no FRE but row %lld", path,
					  (unsigned long long)pc, (long long)r);
				return -1;
			}
			continue;
		}
		why = r < 0 ? "no row" : mismatch(&t->rules[t->rows[r].rule], &fre);
		if (why) {
			test_fail("%s: pc 0x%llx (FDE %u, FRE %u): %s", path,
				  (unsigned long long)pc, f->index, fre.index, why);
			return -1;
		}
	}
	/* The byte after the function is either the next function or a gap. */
	if (sframe_decoder__find_fde(d, pc, &next) && !is_gap(t, pc)) {
		test_fail("%s: pc 0x%llx after FDE %u matches a row", path, (unsigned long long)pc,
			  f->index);
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
		test_fail("%s: %s", path, eerr.msg);
		return -1;
	}
	if (sframe_decoder__new(s.data, s.size, s.addr, &d, &serr)) {
		test_fail("%s: %s", path, serr.msg);
		goto cleanup;
	}
	if (flat_table__from_sframe(d, &t)) {
		test_fail("%s: flatten failed", path);
		goto cleanup;
	}
	for (i = 0; i < sframe_decoder__num_fdes(d); i++) {
		sframe_decoder__fde(d, i, &f);
		if (check_fde(d, t, &f, path, &pcs))
			goto cleanup;
	}
	if (t->nr_rows && (!is_gap(t, t->pc_min ? t->pc_min - 1 : 0) ||
			   !is_gap(t, t->rows[t->nr_rows - 1].pc_off))) {
		test_fail("%s: PCs outside all functions match rows", path);
		goto cleanup;
	}
	test_pass("flatten %s: %u FDEs, %u FREs -> %u rows, %u rules, %u pages, %lu PCs", path,
		  t->nr_fdes, t->nr_fres, t->nr_rows, t->nr_rules, t->nr_pages, pcs);
	ret = 0;
cleanup:
	flat_table__free(t);
	sframe_decoder__free(d);
	sframe_elf__release(&s);
	return ret;
}

/* A row's rule as text: "gap", "outermost", "unsupported" or "sp+16 fp=c-16". */
static void rule_str(const struct sfbpf_rule *r, char *buf, size_t len)
{
	static const char *const regs[] = { "sp", "fp", "ra", "reg" };
	int n;

	if (r->flags & SFBPF_RULE_UNSUPPORTED) {
		snprintf(buf, len, "unsupported");
		return;
	}
	if (r->flags & SFBPF_RULE_GAP) {
		snprintf(buf, len, "gap");
		return;
	}
	if (r->ra_loc == SFBPF_LOC_UNDEFINED) {
		snprintf(buf, len, "outermost");
		return;
	}
	n = snprintf(buf, len, "%s%+d", regs[r->cfa_reg & 3], r->cfa_off);
	if (r->fp_loc == SFBPF_LOC_CFA && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " fp=c%+d", r->fp_off);
}

/* The table's rows as "pc:rule;" text. */
static void rows_str(const struct flat_table *t, char *buf, size_t len)
{
	size_t n = 0;
	char rule[64];

	buf[0] = 0;
	for (uint32_t i = 0; i < t->nr_rows && n < len; i++) {
		rule_str(&t->rules[t->rows[i].rule], rule, sizeof(rule));
		n += snprintf(buf + n, len - n, "%#x:%s;", t->rows[i].pc_off, rule);
	}
}

#define BUILT_ADDR 0x10000

struct built_case {
	const char *name;
	uint8_t version;
	void (*build)(struct sfb_sect *s);
	const char *want; /* rows_str() of the flattened table */
};

/*
 * AMD64 (RA at CFA-8): f at 0xf000, 0x20 bytes: sp+8; at 1 sp+16, then at 1
 * again sp+16 with FP saved (a zero-byte .p2align between two CFI
 * directives); fp+16 at 4; sp+8 at 0x20, the end (CFI after the last
 * instruction). g right behind at 0xf020 says nothing before 2, so the end
 * FRE must not leak into it; h at 0xf040 starts with a duplicate pair.
 */
static void build_gas_orders(struct sfb_sect *s)
{
	struct sfb_func *fn = sfb_add_func(s, -0x1000, 0x20, SFRAME_FRE_TYPE_ADDR1);

	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	sfb_add_fre(fn, 1, SFB_SP, SFB_W1, 1, (int32_t[]){ 16 });
	sfb_add_fre(fn, 1, SFB_SP, SFB_W1, 2, (int32_t[]){ 16, -16 });
	sfb_add_fre(fn, 4, SFB_FP, SFB_W1, 2, (int32_t[]){ 16, -16 });
	sfb_add_fre(fn, 0x20, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	fn = sfb_add_func(s, -0xfe0, 0x10, SFRAME_FRE_TYPE_ADDR1);
	sfb_add_fre(fn, 2, SFB_SP, SFB_W1, 1, (int32_t[]){ 24 });
	sfb_add_fre(fn, 0x10, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	fn = sfb_add_func(s, -0xfc0, 0x10, SFRAME_FRE_TYPE_ADDR1);
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 32 });
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	sfb_add_fre(fn, 8, SFB_SP, SFB_W1, 1, (int32_t[]){ 16 });
	sfb_add_fre(fn, 8, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
}

#define GAS_ORDERS_ROWS                                                                  \
	"0xf000:sp+8;0xf001:sp+16 fp=c-16;0xf004:fp+16 fp=c-16;0xf020:gap;0xf022:sp+24;" \
	"0xf030:gap;0xf040:sp+8;0xf050:gap;"

/* Functions without FREs between two with: V1/V2 gaps, V3 outermost. */
static void build_no_fres(struct sfb_sect *s)
{
	struct sfb_func *fn = sfb_add_func(s, -0x1000, 0x10, SFRAME_FRE_TYPE_ADDR1);

	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	sfb_add_func(s, -0xff0, 0x10, SFRAME_FRE_TYPE_ADDR1);
	fn = sfb_add_func(s, -0xfe0, 0x10, SFRAME_FRE_TYPE_ADDR1);
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 16 });
}

/* The middle function has a reserved FRE type (V1-V3) or FDE type (V3): a gap. */
static void build_reserved_fre_type(struct sfb_sect *s)
{
	struct sfb_func *fn;

	build_no_fres(s);
	fn = &s->funcs[1];
	fn->fre_type = 7;
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 32 });
}

static void build_reserved_fde_type(struct sfb_sect *s)
{
	build_reserved_fre_type(s);
	s->funcs[1].fre_type = SFRAME_FRE_TYPE_ADDR1;
	s->funcs[1].info2 = 9;
}

/* A PLT-like PCMASK FDE whose last FRE starts at the block's end: it covers nothing. */
static void build_mask_end(struct sfb_sect *s)
{
	struct sfb_func *fn = sfb_add_func(s, -0x1000, 0x20, SFRAME_FRE_TYPE_ADDR1);

	fn->pctype = SFRAME_FDE_PCTYPE_MASK;
	fn->rep_size = 16;
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	sfb_add_fre(fn, 6, SFB_SP, SFB_W1, 1, (int32_t[]){ 16 });
	sfb_add_fre(fn, 16, SFB_SP, SFB_W1, 1, (int32_t[]){ 24 });
}

#define NO_FRES_GAP "0xf000:sp+8;0xf010:gap;0xf020:sp+16;0xf030:gap;"

static const struct built_case built_cases[] = {
	{ "v1 gas orders", 1, build_gas_orders, GAS_ORDERS_ROWS },
	{ "v2 gas orders", 2, build_gas_orders, GAS_ORDERS_ROWS },
	{ "v3 gas orders", 3, build_gas_orders, GAS_ORDERS_ROWS },
	{ "v1 FDE without FREs", 1, build_no_fres, NO_FRES_GAP },
	{ "v2 FDE without FREs", 2, build_no_fres, NO_FRES_GAP },
	{ "v3 FDE without FREs", 3, build_no_fres,
	  "0xf000:sp+8;0xf010:outermost;0xf020:sp+16;0xf030:gap;" },
	{ "v1 reserved FRE type", 1, build_reserved_fre_type, NO_FRES_GAP },
	{ "v2 reserved FRE type", 2, build_reserved_fre_type, NO_FRES_GAP },
	{ "v3 reserved FRE type", 3, build_reserved_fre_type, NO_FRES_GAP },
	{ "v3 reserved FDE type", 3, build_reserved_fde_type, NO_FRES_GAP },
	{ "v2 PCMASK FRE at the block end", 2, build_mask_end,
	  "0xf000:sp+8;0xf006:sp+16;0xf010:sp+8;0xf016:sp+16;0xf020:gap;" },
	{ "v3 PCMASK FRE at the block end", 3, build_mask_end,
	  "0xf000:sp+8;0xf006:sp+16;0xf010:sp+8;0xf016:sp+16;0xf020:gap;" },
};

static int check_built(const struct built_case *c)
{
	static struct sfb_sect s;
	static struct sfb_out o;
	struct sframe_decoder *d = NULL;
	struct flat_table *t = NULL;
	struct sframe_error err;
	uint32_t reserved = 0;
	char got[1024];
	int ret = -1;

	s = (struct sfb_sect){ .version = c->version,
			       .flags = SFRAME_F_FDE_SORTED |
					(c->version == 3 ? SFRAME_F_FDE_FUNC_START_PCREL : 0),
			       .abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE,
			       .fixed_ra = -8 };
	c->build(&s);
	for (uint32_t i = 0; i < s.nfuncs; i++)
		reserved += sfb_reserved(&s, &s.funcs[i]) != SFRAME_FDE_OK;
	if (sfb_build(&s, &o)) {
		test_fail("flatten built %s: builder overflow", c->name);
		return -1;
	}
	if (sframe_decoder__new(o.buf, o.size, BUILT_ADDR, &d, &err)) {
		test_fail("flatten built %s: decoder rejects it: %s: %s", c->name,
			  sframe_errcode__name(err.code), err.msg);
		return -1;
	}
	if (flat_table__from_sframe(d, &t)) {
		test_fail("flatten built %s: flatten failed", c->name);
		goto out;
	}
	rows_str(t, got, sizeof(got));
	if (strcmp(got, c->want))
		test_fail("flatten built %s: rows %s, want %s", c->name, got, c->want);
	else if (t->nr_reserved_fdes != reserved)
		test_fail("flatten built %s: %u reserved FDEs counted, want %u", c->name,
			  t->nr_reserved_fdes, reserved);
	else {
		test_pass("flatten built %s: %s", c->name, got);
		ret = 0;
	}
out:
	flat_table__free(t);
	sframe_decoder__free(d);
	return ret;
}

/*
 * find_fde in an unsorted section (a relocatable object), whose functions may
 * overlap: a: [0xf000,+0x20), an empty b at a's start (after a in section
 * order), c: [0xf008,+4) inside a, an empty d at 0xf010. The last start <= pc
 * is often one that does not cover pc: the covering one before it answers.
 */
static int check_unsorted_lookup(void)
{
	static const struct {
		uint64_t pc;
		int64_t want; /* function start, or -1: none covers pc */
	} cases[] = { { 0xf000, 0xf000 }, { 0xf009, 0xf008 }, { 0xf00c, 0xf000 },
		      { 0xf010, 0xf000 }, { 0xf01f, 0xf000 }, { 0xf020, -1 },
		      { 0xefff, -1 } };
	static struct sfb_sect s;
	static struct sfb_out o;
	struct sframe_decoder *d = NULL;
	struct sframe_error err;
	struct sframe_fde f;
	struct sfb_func *fn;
	int ret = 0;

	s = (struct sfb_sect){ .version = 2, .abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE, .fixed_ra = -8 };
	fn = sfb_add_func(&s, -0x1000, 0x20, SFRAME_FRE_TYPE_ADDR1);
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	sfb_add_func(&s, -0x1000, 0, SFRAME_FRE_TYPE_ADDR1);
	fn = sfb_add_func(&s, -0xff8, 4, SFRAME_FRE_TYPE_ADDR1);
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 16 });
	sfb_add_func(&s, -0xff0, 0, SFRAME_FRE_TYPE_ADDR1);
	if (sfb_build(&s, &o) || sframe_decoder__new(o.buf, o.size, BUILT_ADDR, &d, &err)) {
		test_fail("decoder unsorted lookup: section not built or rejected");
		return -1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = sframe_decoder__find_fde(d, cases[i].pc, &f);
		int64_t got = rc ? -1 : (int64_t)f.func_start;

		if (got != cases[i].want) {
			test_fail("decoder unsorted lookup: find_fde(%#llx) = %lld, want %lld",
				  (unsigned long long)cases[i].pc, (long long)got,
				  (long long)cases[i].want);
			ret = -1;
		}
	}
	if (!ret)
		test_pass("decoder unsorted lookup: %zu PCs find the covering function",
			  sizeof(cases) / sizeof(cases[0]));
	sframe_decoder__free(d);
	return ret;
}

/* One line per row: "0xPC rule". */
static int print_rows(const char *path)
{
	struct sframe_elf_error eerr;
	struct sframe_error serr;
	struct sframe_decoder *d = NULL;
	struct flat_table *t = NULL;
	struct sframe_elf s = { 0 };
	char rule[64];
	int ret = -1;

	if (sframe_elf__load(path, &s, &eerr)) {
		fprintf(stderr, "%s: %s\n", path, eerr.msg);
		return -1;
	}
	if (sframe_decoder__new(s.data, s.size, s.addr, &d, &serr))
		fprintf(stderr, "%s: %s\n", path, serr.msg);
	else if (flat_table__from_sframe(d, &t))
		fprintf(stderr, "%s: flatten failed\n", path);
	else
		ret = 0;
	for (uint32_t i = 0; !ret && i < t->nr_rows; i++) {
		rule_str(&t->rules[t->rows[i].rule], rule, sizeof(rule));
		printf("%#x %s\n", t->rows[i].pc_off, rule);
	}
	flat_table__free(t);
	sframe_decoder__free(d);
	sframe_elf__release(&s);
	return ret;
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--built")) {
			for (size_t k = 0; k < sizeof(built_cases) / sizeof(built_cases[0]); k++)
				failed |= check_built(&built_cases[k]) != 0;
			failed |= check_unsorted_lookup() != 0;
		} else if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
			failed |= print_rows(argv[++i]) != 0;
		} else {
			failed |= check_file(argv[i]) != 0;
		}
	}
	return failed;
}
