// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CFI reader test (driven by tests/cfi.test).
 *
 *   cfi compare ELF...  Rows synthesized from the file's .eh_frame against the
 *       rows of the .sframe gas/ld generated from the same CFI, at every PC of
 *       every function either describes. Differences must be one of the known,
 *       named exceptions (docs/DESIGN-cfi.md), each counted in the PASS line:
 *         plt-got   ld's SFrame for .plt.got says CFA = SP + 16; the code
 *                   (a bare jmp) and .eh_frame say SP + 8;
 *         no-sframe code .sframe does not describe at all: crt1/crti code
 *                   (_start, _init, _fini) assembled without --gsframe, PLT
 *                   sections ld gave no SFrame, or functions whose CFI this
 *                   SFrame version cannot express (gas skips them: RA
 *                   undefined, DRAP, signal frames in V1/V2).
 *   cfi scan ELF...     The reader over arbitrary objects (system libraries):
 *       must not crash; the table must be well-formed (sorted rows, rule ids in
 *       range, every row found by the page-index search); prints the counts.
 *   cfi signal ELF      The object's signal trampoline rows carry the x86-64
 *       rt_sigframe rule (libc's __restore_rt).
 *   cfi dump ELF        Rows and rules, for debugging.
 * Prints PASS/FAIL lines; exits 1 on a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tables/cfi.h"
#include "tables/complete.h"
#include "tables/flatbuild.h"
#include "tables/flatten.h"
#include "sframe/sframe_elf.h"
#include "testlib.h"
#include "elfinfo.h"

/* ---------------------------------------------------------------- rules */

static const struct sfbpf_rule *rule_at(const struct flat_table *t, uint64_t pc)
{
	int64_t r = pc > UINT32_MAX ? -1 : flat_table__lookup(t, (uint32_t)pc);

	return r < 0 ? &t->rules[SFBPF_RULE_GAP_ID] : &t->rules[t->rows[r].rule];
}

static bool is_gap(const struct sfbpf_rule *r)
{
	return r->flags & SFBPF_RULE_GAP;
}

/* Same recovery, field by field (fields a location does not use are ignored). */
static bool rule_eq(const struct sfbpf_rule *a, const struct sfbpf_rule *b)
{
	const uint8_t keep = SFBPF_RULE_CFA_DEREF | SFBPF_RULE_SIGNAL | SFBPF_RULE_GAP |
			     SFBPF_RULE_TOPMOST_ONLY | SFBPF_RULE_UNSUPPORTED |
			     SFBPF_RULE_MANGLED_RA;

	if (is_gap(a) || is_gap(b))
		return (a->flags & (SFBPF_RULE_GAP | SFBPF_RULE_UNSUPPORTED)) ==
		       (b->flags & (SFBPF_RULE_GAP | SFBPF_RULE_UNSUPPORTED));
	if (a->ra_loc == SFBPF_LOC_UNDEFINED || b->ra_loc == SFBPF_LOC_UNDEFINED)
		return a->ra_loc == b->ra_loc;
	if ((a->flags & keep) != (b->flags & keep) || a->cfa_reg != b->cfa_reg ||
	    a->cfa_off != b->cfa_off ||
	    (a->cfa_reg == SFBPF_REG_OTHER && a->cfa_regnum != b->cfa_regnum))
		return false;
	if (a->ra_loc != b->ra_loc || a->ra_off != b->ra_off ||
	    (a->flags & SFBPF_RULE_RA_DEREF) != (b->flags & SFBPF_RULE_RA_DEREF) ||
	    (a->ra_loc == SFBPF_LOC_REG && a->ra_reg != b->ra_reg))
		return false;
	if (a->fp_loc != b->fp_loc)
		return false;
	if (a->fp_loc == SFBPF_LOC_SAME)
		return true;
	return a->fp_off == b->fp_off &&
	       (a->flags & SFBPF_RULE_FP_DEREF) == (b->flags & SFBPF_RULE_FP_DEREF) &&
	       (a->fp_loc != SFBPF_LOC_REG || a->fp_reg == b->fp_reg);
}

static void fmt_loc(char *buf, size_t n, uint8_t loc, uint8_t reg, int32_t off, bool deref)
{
	static const char *const regs[] = { "sp", "fp", "ra", "reg" };

	switch (loc) {
	case SFBPF_LOC_SAME:
		snprintf(buf, n, "same");
		break;
	case SFBPF_LOC_UNDEFINED:
		snprintf(buf, n, "undef");
		break;
	case SFBPF_LOC_CFA:
		snprintf(buf, n, "%sc%+d%s", deref ? "*(" : "", off, deref ? ")" : "");
		break;
	default:
		snprintf(buf, n, "%s%s%+d%s", deref ? "*(" : "", regs[reg & 3], off,
			 deref ? ")" : "");
	}
}

static const char *fmt_rule(const struct sfbpf_rule *r, char *buf, size_t n)
{
	static const char *const regs[] = { "sp", "fp", "ra", "r" };
	char ra[32], fp[32], cfa[32], reg[8], x[16] = "";

	if (r->flags & SFBPF_RULE_UNSUPPORTED)
		return snprintf(buf, n, "unsupported"), buf;
	if (r->flags & SFBPF_RULE_GAP)
		return snprintf(buf, n, "gap"), buf;
	if (r->ra_loc == SFBPF_LOC_UNDEFINED)
		return snprintf(buf, n, "outermost"), buf;
	if (r->cfa_reg == SFBPF_REG_OTHER)
		snprintf(reg, sizeof(reg), "r%u", r->cfa_regnum);
	else
		snprintf(reg, sizeof(reg), "%s", regs[r->cfa_reg & 3]);
	snprintf(cfa, sizeof(cfa), "%s%s%+d%s", r->flags & SFBPF_RULE_CFA_DEREF ? "*(" : "", reg,
		 r->cfa_off, r->flags & SFBPF_RULE_CFA_DEREF ? ")" : "");
	fmt_loc(ra, sizeof(ra), r->ra_loc, r->ra_reg, r->ra_off, r->flags & SFBPF_RULE_RA_DEREF);
	fmt_loc(fp, sizeof(fp), r->fp_loc, r->fp_reg, r->fp_off, r->flags & SFBPF_RULE_FP_DEREF);
	/* The tracked callee-saved register (x86-64 rbx): shown where the frame saved it. */
	if (r->xreg_off8 == SFBPF_XREG_LOST)
		snprintf(x, sizeof(x), " x=lost");
	else if (r->xreg_off8 != SFBPF_XREG_SAME)
		snprintf(x, sizeof(x), " x=c%+d", r->xreg_off8 * 8);
	snprintf(buf, n, "cfa=%s ra=%s%s fp=%s%s%s%s", cfa, ra,
		 r->flags & SFBPF_RULE_MANGLED_RA ? "[s]" : "", fp, x,
		 r->flags & SFBPF_RULE_SIGNAL ? " signal" : "",
		 r->flags & SFBPF_RULE_TOPMOST_ONLY ? " topmost" : "");
	return buf;
}

static const char *check_table(const struct flat_table *t);

/* ---------------------------------------------------------------- compare */

struct cmp_counts {
	unsigned long pcs, equal, plt_got, no_sframe;
	unsigned long fns_no_sframe;
	char names[512]; /* functions without .sframe, for the PASS line */
};

/* Functions linked from objects assembled without --gsframe (crt1.o, crti.o). */
static bool crt_function(const char *name)
{
	return name && (!strcmp(name, "_start") || !strcmp(name, "_init") ||
			!strcmp(name, "_fini") || !strcmp(name, "_dl_relocate_static_pie"));
}

/* Can SFrame version v express rule r? (gas skips the function otherwise.) */
static bool sframe_can_express(const struct sfbpf_rule *r, int version)
{
	if (r->flags & SFBPF_RULE_UNSUPPORTED)
		return false;
	if (version >= 3)
		return true;
	return r->ra_loc != SFBPF_LOC_UNDEFINED && r->cfa_reg != SFBPF_REG_OTHER &&
	       !(r->flags & (SFBPF_RULE_CFA_DEREF | SFBPF_RULE_SIGNAL)) &&
	       r->fp_loc != SFBPF_LOC_REG && r->ra_loc != SFBPF_LOC_REG;
}

/* A mismatch that is a known, named exception? */
static bool plt_got_exception(const struct elfinfo *ei, uint64_t pc, const struct sfbpf_rule *s,
			      const struct sfbpf_rule *c)
{
	struct sfbpf_rule fixed = *s;

	if (strcmp(sect_of(ei, pc), ".plt.got"))
		return false;
	fixed.cfa_off = 8;
	return s->cfa_reg == SFBPF_REG_SP && s->cfa_off == 16 && rule_eq(&fixed, c);
}

/*
 * PCs of [lo, hi) with CFI rows but no .sframe function: a whole function of a
 * known kind, else a failure.
 */
static int no_sframe_span(const struct elfinfo *ei, const struct flat_table *c, int version,
			  uint64_t lo, uint64_t hi, struct cmp_counts *k, const char *path)
{
	const char *sym = sym_of(ei, lo), *sect = sect_of(ei, lo);
	bool plt = !strncmp(sect, ".plt", 4), expressible = true;
	char buf[128];
	uint64_t pc;

	for (pc = lo; pc < hi; pc++) {
		const struct sfbpf_rule *r = rule_at(c, pc);

		/* crt1's _start says RA undefined: the outermost frame, nothing else. */
		if ((r->flags & SFBPF_RULE_UNSUPPORTED) ||
		    (sym && !strcmp(sym, "_start") && r->ra_loc != SFBPF_LOC_UNDEFINED)) {
			test_fail("cfi compare %s: pc 0x%llx (%s, %s): CFI row %s", path,
				  (unsigned long long)pc, sym ? sym : "?", sect,
				  fmt_rule(r, buf, sizeof(buf)));
			return -1;
		}
		expressible &= sframe_can_express(r, version);
	}
	if (!crt_function(sym) && !plt && expressible) {
		test_fail("cfi compare %s: 0x%llx..0x%llx (%s, %s) has CFI rows (%s) but no SFrame",
			  path, (unsigned long long)lo, (unsigned long long)hi, sym ? sym : "?",
			  sect, fmt_rule(rule_at(c, lo), buf, sizeof(buf)));
		return -1;
	}
	k->no_sframe += hi - lo;
	k->fns_no_sframe++;
	if (strlen(k->names) < sizeof(k->names) - 80)
		snprintf(k->names + strlen(k->names), sizeof(k->names) - strlen(k->names), "%s%s%s",
			 k->names[0] ? "," : "", sym ? sym : sect,
			 expressible ? "" : "(inexpressible)");
	return 0;
}

static int compare_pcs(const struct elfinfo *ei, const struct flat_table *s,
		       const struct flat_table *c, int version, struct cmp_counts *k,
		       const char *path)
{
	uint64_t lo = UINT64_MAX, hi = 0, pc, span = 0;
	const struct sfbpf_rule *rs, *rc;
	char b1[128], b2[128];
	bool in_span = false;

	if (s->nr_rows) {
		lo = s->rows[0].pc_off;
		hi = s->rows[s->nr_rows - 1].pc_off;
	}
	if (c->nr_rows) {
		lo = c->rows[0].pc_off < lo ? c->rows[0].pc_off : lo;
		hi = c->rows[c->nr_rows - 1].pc_off > hi ? c->rows[c->nr_rows - 1].pc_off : hi;
	}
	for (pc = lo; pc <= hi; pc++) {
		rs = rule_at(s, pc);
		rc = rule_at(c, pc);
		/* A stretch SFrame leaves out while CFI covers it. */
		if (is_gap(rs) && !(is_gap(rc) && !(rc->flags & SFBPF_RULE_UNSUPPORTED))) {
			if (!in_span)
				span = pc;
			in_span = true;
			continue;
		}
		if (in_span && no_sframe_span(ei, c, version, span, pc, k, path))
			return -1;
		in_span = false;
		if (is_gap(rs))
			continue;
		k->pcs++;
		if (rule_eq(rs, rc)) {
			k->equal++;
		} else if (plt_got_exception(ei, pc, rs, rc)) {
			k->plt_got++;
		} else {
			test_fail("cfi compare %s: pc 0x%llx (%s): .sframe %s, .eh_frame %s", path,
				  (unsigned long long)pc, sym_of(ei, pc) ?: sect_of(ei, pc),
				  fmt_rule(rs, b1, sizeof(b1)), fmt_rule(rc, b2, sizeof(b2)));
			return -1;
		}
	}
	if (in_span)
		return no_sframe_span(ei, c, version, span, pc, k, path);
	return 0;
}

/* The rule the loader must pick at pc (tables/complete.h), from the two tables alone. */
static const struct sfbpf_rule *loader_choice(const struct elfinfo *ei, const struct flat_table *s,
					      const struct flat_table *c, uint64_t pc)
{
	static const struct sfbpf_rule jump_stub = {
		.cfa_reg = SFBPF_REG_SP,
		.cfa_off = 8,
		.ra_loc = SFBPF_LOC_CFA,
		.ra_off = -8,
		.fp_loc = SFBPF_LOC_SAME,
		.flags = SFBPF_RULE_RA_DEREF,
	};
	const struct sfbpf_rule *rs = rule_at(s, pc), *rc = rule_at(c, pc);
	const char *sect = sect_of(ei, pc);
	int64_t row = flat_table__lookup(s, (uint32_t)pc);

	if (!strncmp(sect, ".plt", 4) &&
	    (!strcmp(sect + 4, "") || !strcmp(sect + 4, ".sec") || !strcmp(sect + 4, ".got"))) {
		if (!is_gap(rc))
			return rc;
		if (!strcmp(sect, ".plt.got"))
			return &jump_stub;
	}
	if (!is_gap(rs))
		return rs;
	if (!is_gap(rc))
		return rc;
	return row >= 0 && s->rows[row].rule != SFBPF_RULE_GAP_ID ? rs : rc;
}

/*
 * The loader's table for an object with .sframe: SFrame rows, CFI rows where
 * SFrame has none and in PLT sections. Checked at every PC of both tables' span.
 */
static int check_merge(const struct elfinfo *ei, const struct flat_table *s,
		       const struct flat_table *c, const char *path)
{
	const struct sfbpf_rule *rm, *want;
	struct complete_info ci;
	struct flat_table *m = NULL;
	uint64_t pc, lo, hi;
	char b1[128], b2[128];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err, ret = 0;

	err = fd < 0 ? -errno : complete__read_fd(fd, &ci);
	if (fd >= 0)
		close(fd);
	if (!err)
		err = complete__merge(s, c, &ci, &m);
	if (err) {
		test_fail("cfi compare %s: merge: %s", path, strerror(-err));
		return -1;
	}
	lo = s->nr_rows && c->nr_rows ? (s->pc_min < c->pc_min ? s->pc_min : c->pc_min) :
	     s->nr_rows		      ? s->pc_min :
					c->pc_min;
	hi = s->nr_rows ? s->rows[s->nr_rows - 1].pc_off : 0;
	if (c->nr_rows && c->rows[c->nr_rows - 1].pc_off > hi)
		hi = c->rows[c->nr_rows - 1].pc_off;
	for (pc = lo; pc <= hi + 1 && !ret; pc++) {
		rm = rule_at(m, pc);
		want = loader_choice(ei, s, c, pc);
		if (memcmp(rm, want, sizeof(*rm))) {
			test_fail("cfi compare %s: merged table at 0x%llx: %s, want %s", path,
				  (unsigned long long)pc, fmt_rule(rm, b1, sizeof(b1)),
				  fmt_rule(want, b2, sizeof(b2)));
			ret = -1;
		}
	}
	if (!ret && check_table(m)) {
		test_fail("cfi compare %s: merged table: %s", path, check_table(m));
		ret = -1;
	}
	flat_table__free(m);
	return ret;
}

static int load_sframe_table(const char *path, struct flat_table **t, int *version)
{
	struct sframe_elf_error eerr;
	struct sframe_error serr;
	struct sframe_decoder *d = NULL;
	struct sframe_elf s = { 0 };
	int err;

	err = sframe_elf__load(path, &s, &eerr);
	if (err) {
		test_fail("cfi compare %s: no .sframe: %s", path, eerr.msg);
		return err;
	}
	err = sframe_decoder__new(s.data, s.size, s.addr, &d, &serr);
	if (err)
		test_fail("cfi compare %s: .sframe: %s", path, serr.msg);
	else
		*version = sframe_decoder__header(d)->version;
	if (!err && (err = flat_table__from_sframe(d, t)))
		test_fail("cfi compare %s: flatten: %s", path, strerror(-err));
	sframe_decoder__free(d);
	sframe_elf__release(&s);
	return err;
}

static bool need_debug_frame; /* compare-dbg: the rows must come from .debug_frame */

static int compare_file(const char *path)
{
	struct flat_table *s = NULL, *c = NULL;
	struct cmp_counts k = { 0 };
	struct cfi_stats st;
	struct elfinfo ei;
	int version = 0, ret = -1, err;

	if (elfinfo__read(&ei, path)) {
		test_fail("cfi compare %s: cannot read the ELF file", path);
		return -1;
	}
	if (load_sframe_table(path, &s, &version))
		goto cleanup;
	err = cfi__flatten_path(path, &c, &st);
	if (err) {
		test_fail("cfi compare %s: CFI reader: %s", path, strerror(-err));
		goto cleanup;
	}
	if (need_debug_frame && !st.fdes[CFI_SRC_DEBUG_FRAME]) {
		test_fail("cfi compare %s: no FDE read from .debug_frame", path);
		goto cleanup;
	}
	if (compare_pcs(&ei, s, c, version, &k, path) || check_merge(&ei, s, c, path))
		goto cleanup;
	if (k.pcs == 0 || k.equal * 10 < k.pcs * 9) {
		test_fail("cfi compare %s: only %lu of %lu PCs compared equal", path, k.equal,
			  k.pcs);
		goto cleanup;
	}
	test_pass(
		"cfi compare %s: V%d, %u+%u FDEs (.eh_frame+.debug_frame), %lu PCs: %lu equal, "
		"%lu plt-got; %lu bytes in %lu functions without SFrame (%s); %u unsupported rows; "
		"merged table checked",
		path, version, st.fdes[0], st.fdes[1], k.pcs, k.equal, k.plt_got, k.no_sframe,
		k.fns_no_sframe, k.names, st.unsupported_rows);
	ret = 0;
cleanup:
	flat_table__free(s);
	flat_table__free(c);
	free(ei.syms);
	return ret;
}

/* ---------------------------------------------------------------- scan */

static const char *check_table(const struct flat_table *t)
{
	uint32_t i;

	for (i = 0; i < t->nr_rows; i++) {
		if (t->rows[i].rule >= t->nr_rules)
			return "rule id out of range";
		if (i && t->rows[i].pc_off <= t->rows[i - 1].pc_off)
			return "rows not strictly sorted";
		if (i && t->rows[i].rule == t->rows[i - 1].rule)
			return "consecutive rows with the same rule";
		if (flat_table__lookup(t, t->rows[i].pc_off) != i)
			return "page-index search misses a row";
	}
	if (t->nr_rows && t->rows[t->nr_rows - 1].rule != SFBPF_RULE_GAP_ID)
		return "last row is not a gap";
	if (t->nr_rules < 1 || !(t->rules[0].flags & SFBPF_RULE_GAP))
		return "rule 0 is not the gap rule";
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int scan_file(const char *path)
{
	struct flat_table *t = NULL;
	struct cfi_stats st;
	uint64_t start = now_ns();
	const char *why;
	char reasons[256] = "";
	int err, i;

	err = cfi__flatten_path(path, &t, &st);
	if (err) {
		test_fail("cfi scan %s: %s", path, strerror(-err));
		return -1;
	}
	why = check_table(t);
	if (why) {
		test_fail("cfi scan %s: %s", path, why);
		flat_table__free(t);
		return -1;
	}
	for (i = 1; i < CFI_UNSUP__COUNT; i++)
		if (st.unsupported[i])
			snprintf(reasons + strlen(reasons), sizeof(reasons) - strlen(reasons),
				 " %s=%u", cfi_unsupported__name(i), st.unsupported[i]);
	test_pass("cfi scan %s: %u+%u FDEs (%u skipped, %u shadowed), %u CFI rows -> %u rows, "
		  "%u rules; plt %u, signal %u, outermost rows %u, topmost-only rows %u; "
		  "unsupported rows %u (%.3f%% of %llu code bytes)%s%s; %.1f ms",
		  path, st.fdes[CFI_SRC_EH_FRAME], st.fdes[CFI_SRC_DEBUG_FRAME], st.skipped_fdes,
		  st.shadowed_fdes, st.cfi_rows, st.rows, st.rules, st.plt_fdes, st.signal_fdes,
		  st.outermost_rows, st.topmost_rows, st.unsupported_rows,
		  st.code_bytes ? 100.0 * st.unsupported_bytes / st.code_bytes : 0.0,
		  (unsigned long long)st.code_bytes, reasons[0] ? ":" : "", reasons,
		  (now_ns() - start) / 1e6);
	flat_table__free(t);
	return 0;
}

/* ---------------------------------------------------------------- signal, dump */

/*
 * x86-64 rt_sigframe, as the trampoline sees it (SP = &uc after the handler's
 * ret popped pretcode): uc_mcontext.gregs at uc + 40, REG_RBP = 10,
 * REG_RSP = 15, REG_RIP = 16.
 */
static int signal_file(const char *path)
{
	struct sfbpf_rule want = {
		.cfa_reg = SFBPF_REG_SP,
		.cfa_off = 40 + 15 * 8,
		.ra_loc = SFBPF_LOC_REG,
		.ra_reg = SFBPF_REG_SP,
		.ra_off = 40 + 16 * 8,
		.fp_loc = SFBPF_LOC_REG,
		.fp_reg = SFBPF_REG_SP,
		.fp_off = 40 + 10 * 8,
		.flags = SFBPF_RULE_SIGNAL | SFBPF_RULE_CFA_DEREF | SFBPF_RULE_RA_DEREF |
			 SFBPF_RULE_FP_DEREF,
	};
	struct flat_table *t = NULL;
	unsigned good = 0, bad = 0;
	char buf[128];
	uint32_t i;
	int err = cfi__flatten_path(path, &t, NULL);

	if (err) {
		test_fail("cfi signal %s: %s", path, strerror(-err));
		return -1;
	}
	for (i = 0; i < t->nr_rows; i++) {
		const struct sfbpf_rule *r = &t->rules[t->rows[i].rule];

		if (!(r->flags & SFBPF_RULE_SIGNAL))
			continue;
		if (rule_eq(r, &want)) {
			good++;
		} else {
			bad++;
			printf("    row at 0x%x: %s\n", t->rows[i].pc_off,
			       fmt_rule(r, buf, sizeof(buf)));
		}
	}
	if (!good || bad)
		test_fail("cfi signal %s: %u signal rows with the rt_sigframe rule, %u other", path,
			  good, bad);
	else
		test_pass("cfi signal %s: %u signal-frame rows: %s", path, good,
			  fmt_rule(&want, buf, sizeof(buf)));
	flat_table__free(t);
	return good && !bad ? 0 : -1;
}

static int dump_file(const char *path)
{
	struct flat_table *t = NULL;
	struct elfinfo ei;
	char buf[128];
	uint32_t i;
	int err = cfi__flatten_path(path, &t, NULL);

	if (err) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return -1;
	}
	elfinfo__read(&ei, path);
	for (i = 0; i < t->nr_rows; i++) {
		const char *sym = sym_of(&ei, t->rows[i].pc_off);

		printf("%08x %-60s %s\n", t->rows[i].pc_off,
		       fmt_rule(&t->rules[t->rows[i].rule], buf, sizeof(buf)), sym ? sym : "");
	}
	free(ei.syms);
	flat_table__free(t);
	return 0;
}

/* ---------------------------------------------------------------- corrupt */

struct span {
	uint64_t off, size;
};

/* File offsets of the CFI sections (the bytes worth corrupting). */
static int cfi_spans(const char *path, struct span *spans, int max)
{
	int fd = open(path, O_RDONLY), n = 0;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *name;
	GElf_Shdr sh;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		while ((scn = elf_nextscn(elf, scn)) && n < max) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && (!strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr") ||
				     !strcmp(name, ".debug_frame")))
				spans[n++] = (struct span){ sh.sh_offset, sh.sh_size };
		}
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

static unsigned long long rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * Rounds of random damage to the CFI bytes of a copy of the file (a few bytes
 * set at random, sometimes a run of them): the reader must return an error or
 * a well-formed table, never crash (ASan aborts on any bad access).
 */
static int corrupt_file(const char *path, int rounds)
{
	struct span spans[4];
	unsigned ok = 0, unsup = 0, errs[8] = { 0 };
	int nspans = cfi_spans(path, spans, 4), fd, i, j, err;
	struct flat_table *t;
	struct cfi_stats st;
	struct stat sb;
	uint8_t *orig, *copy;
	const char *why;

	fd = open(path, O_RDONLY);
	if (nspans <= 0 || fd < 0 || fstat(fd, &sb)) {
		test_fail("cfi corrupt %s: no CFI section to corrupt", path);
		return -1;
	}
	orig = malloc(sb.st_size);
	copy = malloc(sb.st_size);
	if (!orig || !copy || pread(fd, orig, sb.st_size, 0) != sb.st_size) {
		test_fail("cfi corrupt %s: cannot read", path);
		return -1;
	}
	close(fd);
	for (i = 0; i < rounds; i++) {
		const struct span *sp = &spans[rng() % nspans];
		int n = 1 + rng() % 8;

		memcpy(copy, orig, sb.st_size);
		for (j = 0; j < n; j++) {
			uint64_t at = sp->off + rng() % sp->size,
				 len = rng() % 4 ? 1 : 1 + rng() % 16;

			for (; len-- && at < sp->off + sp->size; at++)
				copy[at] = rng() % 3 ? (uint8_t)rng() : (rng() % 2 ? 0 : 0xff);
		}
		fd = memfd_create("cfi-corrupt", 0);
		if (fd < 0 || write(fd, copy, sb.st_size) != sb.st_size) {
			test_fail("cfi corrupt %s: memfd", path);
			return -1;
		}
		err = cfi__flatten_fd(fd, &t, &st);
		close(fd);
		if (err) {
			errs[(-err) & 7]++;
			continue;
		}
		why = check_table(t);
		flat_table__free(t);
		if (why) {
			test_fail("cfi corrupt %s: round %d: %s", path, i, why);
			return -1;
		}
		ok++;
		unsup += st.unsupported_rows > 0;
	}
	test_pass("cfi corrupt %s: %d rounds: %u well-formed tables (%u with unsupported rows), "
		  "%u errors",
		  path, rounds, ok, unsup, rounds - ok);
	free(orig);
	free(copy);
	return 0;
}

int main(int argc, char **argv)
{
	int (*fn)(const char *) = NULL;
	int i, failed = 0;

	if (argc >= 2 && !strcmp(argv[1], "compare"))
		fn = compare_file;
	else if (argc >= 2 && !strcmp(argv[1], "scan"))
		fn = scan_file;
	else if (argc >= 2 && !strcmp(argv[1], "signal"))
		fn = signal_file;
	else if (argc >= 2 && !strcmp(argv[1], "compare-dbg"))
		fn = compare_file, need_debug_frame = true;
	else if (argc >= 2 && !strcmp(argv[1], "dump"))
		fn = dump_file;
	else if (argc == 4 && !strcmp(argv[1], "corrupt"))
		return corrupt_file(argv[2], atoi(argv[3])) ? 1 : 0;
	if (!fn) {
		fprintf(stderr,
			"usage: %s compare|compare-dbg|scan|signal|dump ELF...\n"
			"       %s corrupt ELF ROUNDS\n",
			argv[0], argv[0]);
		return 2;
	}
	for (i = 2; i < argc; i++)
		failed |= fn(argv[i]) != 0;
	return failed;
}
