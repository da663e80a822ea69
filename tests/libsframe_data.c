// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Decodes the bare .sframe sections of libsframe's decode testsuite
 * (binutils libsframe/testsuite/libsframe.decode/DATA*) through the sfbpf
 * decoder and checks what libsframe's own tests say each must decode to.
 *
 * Usage: libsframe_data [LABEL=]FILE...
 * The file's base name selects the expectations below; a file with another
 * name gets only the generic checks. Prints PASS/FAIL lines; exits 1 on failure.
 *
 * Every file also gets generic checks: the FRE iterator yields each FDE's FRE
 * count, the counts add up to the header's, FRE starts increase within the
 * function, and the lookup API (find_fde, find_fre) finds every FDE and FRE at
 * its own first and last PC.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe/sframe.h"

#define TEST_PREFIX "libsframe_data: "
#include "testlib.h"

#define NONE -1 /* a rule printed as "u" (not tracked) */

/*
 * Where the sections are decoded as if mapped. They come from linked programs
 * whose code precedes .sframe, so at address 0 their function starts would be
 * negative; libsframe's tests do not depend on the address.
 */
#define SECT_ADDR 0x400000

/* One FRE of a flexible FDE: start offset, CFA = SP + cfa_off, RA/FP registers. */
struct flex_row {
	uint32_t start;
	int cfa_off;
	int ra_reg;
	int fp_reg;
};

struct expect {
	const char *name;
	const char *source; /* where the numbers come from */
	/* 0 or false: not stated, not checked. */
	int version;
	bool big_endian;
	uint8_t abi;
	uint8_t flags;
	uint32_t num_fdes;
	uint32_t fres_per_fde;
	/* When stated: FDE 0's size, type and FREs (fres_per_fde of them). */
	const struct flex_row *rows;
	uint32_t func_size;
	uint8_t fde_type;
};

/*
 * DATA-BE-V3's one function, per the objdump table in README-be-flipping-v3:
 * CFA stays SP + 160 (the s390x register save area); RA moves to r16 (%f0)
 * from PC offset 4 and back at 0x18; the FP is held in r17 (%f2) from 8 to
 * 0x14. The addresses there are pc 0x10000b0 plus these offsets.
 * be-flipping-v3.c checks the third row the same way (CFA offset 0xa0,
 * RA register 16, FP register 17, both register-based).
 */
static const struct flex_row be_v3_rows[] = {
	{ 0x00, 160, NONE, NONE }, { 0x04, 160, 16, NONE },   { 0x08, 160, 16, 17 },
	{ 0x14, 160, 16, NONE },   { 0x18, 160, NONE, NONE },
};

static const struct expect expects[] = {
	/* frecnt-1.c: "1 fde 4 fres" for a lone main(); asserts both counts. */
	{ .name = "DATA1", .source = "frecnt-1.c", .num_fdes = 1, .fres_per_fde = 4 },
	/* frecnt-2.c: foo() and main(), 2 FDEs with 4 FREs each. */
	{ .name = "DATA2", .source = "frecnt-2.c", .num_fdes = 2, .fres_per_fde = 4 },
	/* frecnt-v2.c: the same program, generated as an SFrame V2 section. */
	{ .name = "DATA-V2",
	  .source = "frecnt-v2.c",
	  .version = 2,
	  .num_fdes = 2,
	  .fres_per_fde = 4 },
	/*
	 * be-flipping.c: built with gcc -mbig-endian, 1 FDE with 5 FREs. Of the
	 * ABIs gas emits SFrame for, only AArch64 has -mbig-endian.
	 */
	{ .name = "DATA-BE",
	  .source = "be-flipping.c",
	  .big_endian = true,
	  .abi = SFRAME_ABI_AARCH64_ENDIAN_BIG,
	  .num_fdes = 1,
	  .fres_per_fde = 5 },
	/*
	 * README-be-flipping-v3 and be-flipping-v3.c: s390x gas --gsframe-3, one
	 * flexible FDE of 26 bytes with 5 FREs; flags FDE_SORTED and PCREL.
	 */
	{ .name = "DATA-BE-V3",
	  .source = "be-flipping-v3.c, README-be-flipping-v3",
	  .version = 3,
	  .big_endian = true,
	  .abi = SFRAME_ABI_S390X_ENDIAN_BIG,
	  .flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL,
	  .num_fdes = 1,
	  .fres_per_fde = 5,
	  .func_size = 26,
	  .fde_type = SFRAME_FDE_TYPE_FLEX,
	  .rows = be_v3_rows },
};

static void *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto cleanup;
	buf = malloc(len ? (size_t)len : 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	*size = (size_t)len;
cleanup:
	fclose(f);
	return buf;
}

/* Does the FRE match "CFA = SP + off, RA/FP in register or untracked"? */
static bool row_matches(const struct sframe_fre *fre, const struct flex_row *row)
{
	const struct sframe_rule *ra = &fre->ra, *fp = &fre->fp;

	if (fre->start_off != row->start || fre->cfa.kind != SFRAME_RULE_OFFSET ||
	    fre->cfa.base != SFRAME_BASE_SP || fre->cfa.deref || fre->cfa.offset != row->cfa_off)
		return false;
	if (row->ra_reg == NONE ?
		    ra->kind != SFRAME_RULE_SAME :
		    ra->kind != SFRAME_RULE_OFFSET || ra->base != SFRAME_BASE_REG ||
			    (int64_t)ra->regnum != row->ra_reg || ra->deref || ra->offset)
		return false;
	return row->fp_reg == NONE ?
		       fp->kind == SFRAME_RULE_SAME :
		       fp->kind == SFRAME_RULE_OFFSET && fp->base == SFRAME_BASE_REG &&
			       (int64_t)fp->regnum == row->fp_reg && !fp->deref && !fp->offset;
}

static void check_rows(const struct sframe_decoder *d, const struct expect *e)
{
	struct sframe_fre_iter it;
	struct sframe_fre fre;
	struct sframe_fde fde;
	uint32_t i = 0;

	if (sframe_decoder__fde(d, 0, &fde)) {
		report(false, "FDE 0 rows", "no FDE 0");
		return;
	}
	report(fde.func_size == e->func_size, "FDE 0 size", "%u bytes, expected %u (%s)",
	       fde.func_size, e->func_size, e->source);
	report(fde.fde_type == e->fde_type, "FDE 0 type", "%u, expected %u (%s)", fde.fde_type,
	       e->fde_type, e->source);
	sframe_fre_iter__init(&it, d, &fde);
	while (i < e->fres_per_fde && sframe_fre_iter__next(&it, &fre)) {
		char what[32];

		snprintf(what, sizeof(what), "FDE 0 FRE %u", i);
		report(row_matches(&fre, &e->rows[i]), what,
		       "start 0x%x CFA kind %u base %u off %lld, RA kind %u reg %u, FP kind %u reg %u",
		       fre.start_off, fre.cfa.kind, fre.cfa.base, (long long)fre.cfa.offset,
		       fre.ra.kind, fre.ra.regnum, fre.fp.kind, fre.fp.regnum);
		i++;
	}
}

/* Header facts, each checked only where libsframe's tests state it. */
static void check_header(const struct sframe_decoder *d, const struct expect *e)
{
	const struct sframe_header *h = sframe_decoder__header(d);

	if (e->version)
		report(h->version == e->version, "version", "%u, expected %d (%s)", h->version,
		       e->version, e->source);
	if (e->big_endian)
		report(h->foreign_endian == (__BYTE_ORDER != __BIG_ENDIAN), "byte order",
		       "foreign_endian %d for a big-endian section (%s)", h->foreign_endian,
		       e->source);
	if (e->abi)
		report(h->abi_arch == e->abi, "ABI", "%u, expected %u (%s)", h->abi_arch, e->abi,
		       e->source);
	if (e->flags)
		report(h->flags == e->flags, "flags", "0x%x, expected 0x%x (%s)", h->flags,
		       e->flags, e->source);
	report(sframe_decoder__num_fdes(d) == e->num_fdes, "FDE count", "%u, expected %u (%s)",
	       sframe_decoder__num_fdes(d), e->num_fdes, e->source);
}

static bool finds_fde(const struct sframe_decoder *d, uint64_t pc, uint32_t index)
{
	struct sframe_fde found;

	return sframe_decoder__find_fde(d, pc, &found) >= 0 && found.index == index;
}

/* Walks every FDE's FREs; checks counts, order and that lookups find them. */
static void check_walk(const struct sframe_decoder *d, const struct expect *e)
{
	uint32_t i, n = sframe_decoder__num_fdes(d), total = 0;
	struct sframe_fre_iter it;
	struct sframe_fde fde;
	struct sframe_fre fre, hit;
	char bad[160] = "";

	for (i = 0; i < n && !sframe_decoder__fde(d, i, &fde); i++) {
		uint32_t cnt = 0;
		int64_t prev = -1;

		if (e && fde.num_fres != e->fres_per_fde && !bad[0])
			snprintf(bad, sizeof(bad), "FDE %u has %u FREs, expected %u (%s)", i,
				 fde.num_fres, e->fres_per_fde, e->source);
		if (fde.func_size && fde.pctype == SFRAME_FDE_PCTYPE_INC &&
		    (!finds_fde(d, fde.func_start, i) ||
		     !finds_fde(d, fde.func_start + fde.func_size - 1, i)) &&
		    !bad[0])
			snprintf(bad, sizeof(bad), "find_fde misses FDE %u at its own range", i);
		sframe_fre_iter__init(&it, d, &fde);
		while (sframe_fre_iter__next(&it, &fre)) {
			if ((int64_t)fre.start_off <= prev && !bad[0])
				snprintf(bad, sizeof(bad),
					 "FDE %u FRE %u: start 0x%x not increasing", i, cnt,
					 fre.start_off);
			if (fde.pctype == SFRAME_FDE_PCTYPE_INC &&
			    (sframe_decoder__find_fre(d, &fde, fde.func_start + fre.start_off,
						      &hit) ||
			     hit.index != fre.index ||
			     sframe_decoder__find_fre(d, &fde, fde.func_start + fre.end_off - 1,
						      &hit) ||
			     hit.index != fre.index) &&
			    !bad[0])
				snprintf(bad, sizeof(bad), "find_fre misses FDE %u FRE %u", i, cnt);
			prev = fre.start_off;
			cnt++;
		}
		if (cnt != fde.num_fres && !bad[0])
			snprintf(bad, sizeof(bad), "FDE %u: iterator gave %u FREs, FDE says %u", i,
				 cnt, fde.num_fres);
		total += cnt;
	}
	if (total != sframe_decoder__header(d)->num_fres && !bad[0])
		snprintf(bad, sizeof(bad), "%u FREs in all, header says %u", total,
			 sframe_decoder__header(d)->num_fres);
	report(!bad[0], "FRE walk and lookups", "%s", bad);
}

static const struct expect *find_expect(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		if (!strcmp(base, expects[i].name))
			return &expects[i];
	return NULL;
}

static void check_file(const char *arg)
{
	const char *eq = strchr(arg, '='), *path = eq ? eq + 1 : arg;
	struct sframe_decoder *d = NULL;
	struct sframe_error err = { 0 };
	const struct expect *e;
	static char name[128]; /* test_tag until the next file */
	size_t size = 0;
	void *data;
	int ret;

	snprintf(name, sizeof(name), "%.*s: ", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
	test_tag = name;
	e = find_expect(path);
	data = read_file(path, &size);
	if (!data) {
		report(false, "read", "%s: %s", path, strerror(errno));
		return;
	}
	ret = sframe_decoder__new(data, size, SECT_ADDR, &d, &err);
	report(ret == 0, "decode", "%s at 0x%llx: %s", sframe_errcode__name(err.code),
	       (unsigned long long)err.offset, err.msg);
	if (ret == 0) {
		if (e) {
			check_header(d, e);
			if (e->rows)
				check_rows(d, e);
		}
		check_walk(d, e);
	}
	sframe_decoder__free(d);
	free(data);
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s [LABEL=]FILE...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		check_file(argv[i]);
	return failures ? 1 : 0;
}
