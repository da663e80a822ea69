// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The CFA interpreter against the libdw row walk it replaced (driven by
 * tests/cfiref.test).
 *
 *   cfiref ELF...  Each object's table built both ways (SFBPF_CFI_ROWS=libdw,
 *       then the interpreter): the same error, or the same rows (start PC and
 *       rule, compared byte for byte: CFA, RA and FP rules and flags) and the
 *       same counts (FDEs, CFI rows, unsupported rows by reason, PLT and
 *       signal FDEs, outermost and topmost-only rows, code bytes). The first
 *       difference is printed. One PASS/FAIL line per object, then a total:
 *       "cfiref total: OBJECTS objects, ROWS rows, CFI_ROWS CFI rows".
 * Exits 1 on a failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tables/cfi.h"
#include "testlib.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void fmt_rule(const struct sfbpf_rule *r, char *buf, size_t n)
{
	snprintf(buf, n, "cfa reg %u(%u)%+d ra loc %u reg %u %+d fp loc %u reg %u %+d flags 0x%02x",
		 r->cfa_reg, r->cfa_regnum, r->cfa_off, r->ra_loc, r->ra_reg, r->ra_off, r->fp_loc,
		 r->fp_reg, r->fp_off, r->flags);
}

/* The first difference between two tables of the same object, or NULL. */
static const char *diff_tables(const struct flat_table *a, const struct flat_table *b, char *buf,
			       size_t n)
{
	char ra[160], rb[160];
	uint32_t i;

	for (i = 0; i < a->nr_rows && i < b->nr_rows; i++) {
		const struct sfbpf_rule *x = &a->rules[a->rows[i].rule];
		const struct sfbpf_rule *y = &b->rules[b->rows[i].rule];

		if (a->rows[i].pc_off == b->rows[i].pc_off && !memcmp(x, y, sizeof(*x)))
			continue;
		fmt_rule(x, ra, sizeof(ra));
		fmt_rule(y, rb, sizeof(rb));
		snprintf(buf, n, "row %u: libdw 0x%x %s; interpreter 0x%x %s", i, a->rows[i].pc_off,
			 ra, b->rows[i].pc_off, rb);
		return buf;
	}
	if (a->nr_rows != b->nr_rows) {
		snprintf(buf, n, "libdw %u rows, interpreter %u (the first %u equal)", a->nr_rows,
			 b->nr_rows, i);
		return buf;
	}
	return NULL;
}

#define SAME(f)                                                                       \
	do {                                                                          \
		if (a->f != b->f) {                                                   \
			snprintf(buf, n, "stat " #f ": libdw %llu, interpreter %llu", \
				 (unsigned long long)a->f, (unsigned long long)b->f); \
			return buf;                                                   \
		}                                                                     \
	} while (0)

static const char *diff_stats(const struct cfi_stats *a, const struct cfi_stats *b, char *buf,
			      size_t n)
{
	int i;

	SAME(fdes[CFI_SRC_EH_FRAME]);
	SAME(fdes[CFI_SRC_DEBUG_FRAME]);
	SAME(cies);
	SAME(cfi_rows);
	SAME(rows);
	SAME(rules);
	SAME(unsupported_rows);
	for (i = 0; i < CFI_UNSUP__COUNT; i++)
		if (i != CFI_UNSUP_LIBDW && i != CFI_UNSUP_INSN)
			SAME(unsupported[i]);
	/*
	 * The same rows, named by who found the program wrong: libdw (an invalid
	 * CFA is an error there), or the interpreter (cfa-program).
	 */
	if (a->unsupported[CFI_UNSUP_LIBDW] + a->unsupported[CFI_UNSUP_INSN] !=
	    b->unsupported[CFI_UNSUP_LIBDW] + b->unsupported[CFI_UNSUP_INSN]) {
		snprintf(buf, n,
			 "stat unsupported libdw-error + cfa-program: libdw %u + %u, "
			 "interpreter %u + %u",
			 a->unsupported[CFI_UNSUP_LIBDW], a->unsupported[CFI_UNSUP_INSN],
			 b->unsupported[CFI_UNSUP_LIBDW], b->unsupported[CFI_UNSUP_INSN]);
		return buf;
	}
	SAME(plt_fdes);
	SAME(signal_fdes);
	SAME(outermost_rows);
	SAME(topmost_rows);
	SAME(skipped_fdes);
	SAME(shadowed_fdes);
	SAME(unsupported_bytes);
	SAME(code_bytes);
	return NULL;
}

static uint64_t total_objects, total_rows, total_cfi_rows;

static int build(const char *path, bool libdw, struct flat_table **t, struct cfi_stats *st,
		 uint64_t *ns)
{
	uint64_t start;
	int err;

	if (libdw)
		setenv("SFBPF_CFI_ROWS", "libdw", 1);
	else
		unsetenv("SFBPF_CFI_ROWS");
	start = now_ns();
	err = cfi__flatten_path(path, t, st);
	*ns = now_ns() - start;
	unsetenv("SFBPF_CFI_ROWS");
	return err;
}

static int compare(const char *path)
{
	struct flat_table *a = NULL, *b = NULL;
	struct cfi_stats sa, sb;
	uint64_t na, nb;
	const char *why = NULL;
	char buf[512];
	int ea, eb;

	ea = build(path, true, &a, &sa, &na);
	eb = build(path, false, &b, &sb, &nb);
	if (ea || eb) {
		if (ea != eb)
			test_fail("cfiref %s: libdw %s, interpreter %s", path, strerror(-ea),
				  strerror(-eb));
		else
			test_pass("cfiref %s: both %s", path, strerror(-ea));
		flat_table__free(a);
		flat_table__free(b);
		return ea != eb;
	}
	why = diff_tables(a, b, buf, sizeof(buf));
	if (!why)
		why = diff_stats(&sa, &sb, buf, sizeof(buf));
	if (why)
		test_fail("cfiref %s: %s", path, why);
	else
		test_pass("cfiref %s: %u rows, %u rules, %u CFI rows, %u unsupported: identical "
			  "(libdw %.1f ms, interpreter %.1f ms)",
			  path, b->nr_rows, b->nr_rules, sb.cfi_rows, sb.unsupported_rows, na / 1e6,
			  nb / 1e6);
	if (!why) {
		total_objects++;
		total_rows += b->nr_rows;
		total_cfi_rows += sb.cfi_rows;
	}
	flat_table__free(a);
	flat_table__free(b);
	return why != NULL;
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s ELF...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		failed |= compare(argv[i]);
	printf("cfiref total: %llu objects, %llu rows, %llu CFI rows\n",
	       (unsigned long long)total_objects, (unsigned long long)total_rows,
	       (unsigned long long)total_cfi_rows);
	return failed;
}
