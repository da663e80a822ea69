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
 *       An object whose FDEs make more than one chunk (cfi.h: a big table's
 *       build on both loader threads) is also walked in its chunks by two
 *       threads at once, in whatever order they take them, and the chunks
 *       merged with what completes its rows (complete__merge_parts): the
 *       same table, rows, rules, page index and counts, as the one walk
 *       merged alike ("cfiref chunks OBJ"); then a total line, "cfiref
 *       chunked: OBJECTS objects, CHUNKS chunks".
 *       An object with .eh_frame_hdr's search table is also read as a
 *       lookup index (cfi_index__open_lookup: the FDEs of a few PCs, a
 *       partial table's): at up to LOOKUP_PCS PCs spread over its table (row
 *       starts and row ends), the rows it walks must hold the whole walk's
 *       rule or a gap, and a gap only where the whole walk's rule comes from
 *       .debug_frame or overlapping FDEs (the object has some); its FDE at
 *       each PC is the full index's ("cfiref lookups OBJ"); then "cfiref
 *       looked up: OBJECTS objects, PCS PCs".
 *   cfiref --deadline ELF...  A walk on a deadline already past
 *       (cfi_index__flatten_until, a partial table's round out of time) stops
 *       after one run of FDEs, at the next one's start: below it the whole
 *       walk's rules, from it gaps, and a second walk of the code from there
 *       gives the whole walk's rules there; a lookup index's walk of the code
 *       around TABLEPART_ROUND_PCS PCs (as a round asks) stops alike, its rows
 *       below the stop those of its walk in full ("cfiref deadline OBJ").
 * Exits 1 on a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tables/cfi.h"
#include "tables/complete.h"
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

/* The first difference between two tables of the same object (an's and bn's), or NULL. */
static const char *diff_tables(const struct flat_table *a, const struct flat_table *b,
			       const char *an, const char *bn, char *buf, size_t n)
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
		snprintf(buf, n, "row %u: %s 0x%x %s; %s 0x%x %s", i, an, a->rows[i].pc_off, ra, bn,
			 b->rows[i].pc_off, rb);
		return buf;
	}
	if (a->nr_rows != b->nr_rows) {
		snprintf(buf, n, "%s %u rows, %s %u (the first %u equal)", an, a->nr_rows, bn,
			 b->nr_rows, i);
		return buf;
	}
	return NULL;
}

#define SAME(f)                                                                           \
	do {                                                                              \
		if (a->f != b->f) {                                                       \
			snprintf(buf, n, "stat " #f ": %s %llu, %s %llu", an,             \
				 (unsigned long long)a->f, bn, (unsigned long long)b->f); \
			return buf;                                                       \
		}                                                                         \
	} while (0)

static const char *diff_stats(const struct cfi_stats *a, const struct cfi_stats *b, const char *an,
			      const char *bn, char *buf, size_t n)
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
			 "stat unsupported libdw-error + cfa-program: %s %u + %u, %s %u + %u", an,
			 a->unsupported[CFI_UNSUP_LIBDW], a->unsupported[CFI_UNSUP_INSN], bn,
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
	why = diff_tables(a, b, "libdw", "interpreter", buf, sizeof(buf));
	if (!why)
		why = diff_stats(&sa, &sb, "libdw", "interpreter", buf, sizeof(buf));
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

/* ---- chunks ------------------------------------------------------------ */

struct walkers {
	const struct cfi_index *ix;
	struct flat_table **parts;
	struct cfi_stats *stats;
	uint32_t nr, next; /* next: atomic, the chunk to take */
	int err;
};

static void *walk_chunks(void *arg)
{
	struct walkers *w = arg;
	uint32_t k;
	int err;

	while ((k = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->nr) {
		err = cfi_index__flatten_chunk(w->ix, k, &w->parts[k], &w->stats[k]);
		if (err)
			__atomic_store_n(&w->err, err, __ATOMIC_RELAXED);
	}
	return NULL;
}

static uint64_t total_chunked, total_chunks;

/* Where the merged tables differ beyond their rows: page index and counts. */
static const char *diff_meta(const struct flat_table *a, const struct flat_table *b, char *buf,
			     size_t n)
{
	uint32_t i;

	if (a->nr_fdes != b->nr_fdes || a->nr_fres != b->nr_fres ||
	    a->nr_skipped_fdes != b->nr_skipped_fdes || a->nr_rules != b->nr_rules) {
		snprintf(buf, n, "counts: fdes %u/%u, fres %u/%u, skipped %u/%u, rules %u/%u",
			 a->nr_fdes, b->nr_fdes, a->nr_fres, b->nr_fres, a->nr_skipped_fdes,
			 b->nr_skipped_fdes, a->nr_rules, b->nr_rules);
		return buf;
	}
	if (a->pc_min != b->pc_min || a->nr_pages != b->nr_pages) {
		snprintf(buf, n, "page index: %u/%u pages", a->nr_pages, b->nr_pages);
		return buf;
	}
	for (i = 0; i < a->nr_pages; i++)
		if (a->pages[i] != b->pages[i]) {
			snprintf(buf, n, "page %u: row %u/%u", i, a->pages[i], b->pages[i]);
			return buf;
		}
	return NULL;
}

/*
 * path's whole table walked in chunks by two threads and merged, against
 * the one walk merged (nothing to check when it is one chunk).
 */
static int chunks(const char *path)
{
	struct walkers w = { 0 };
	struct flat_table *whole = NULL, *a = NULL, *b = NULL;
	struct complete_info ci;
	struct cfi_stats sw, sj;
	struct cfi_index *ix = NULL;
	const char *why = NULL;
	pthread_t th[2];
	char buf[512];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err, i;
	uint32_t k;

	err = fd < 0 ? -errno : cfi_index__open(fd, &ix);
	if (!err && complete__read_fd(fd, &ci))
		memset(&ci, 0, sizeof(ci));
	if (err || cfi_index__nr_chunks(ix) < 2)
		goto out; /* one walk only: compared above */
	w = (struct walkers){ .ix = ix, .nr = cfi_index__nr_chunks(ix) };
	w.parts = calloc(w.nr, sizeof(*w.parts));
	w.stats = calloc(w.nr, sizeof(*w.stats));
	err = w.parts && w.stats ? cfi_index__flatten(ix, NULL, 0, &whole, &sw) : -ENOMEM;
	for (i = 0; !err && i < 2; i++)
		err = -pthread_create(&th[i], NULL, walk_chunks, &w);
	while (i-- > 0)
		pthread_join(th[i], NULL);
	if (!err)
		err = w.err;
	if (!err)
		cfi_index__join(ix, w.parts, w.stats, w.nr, &sj);
	if (!err)
		err = complete__merge(NULL, whole, &ci, &a);
	if (!err)
		err = complete__merge_parts(NULL, (const struct flat_table *const *)w.parts, w.nr,
					    &ci, &b);
	if (err) {
		snprintf(buf, sizeof(buf), "%s", strerror(-err));
		why = buf;
	}
	if (!why)
		why = diff_tables(a, b, "one walk", "chunks", buf, sizeof(buf));
	if (!why)
		why = diff_meta(a, b, buf, sizeof(buf));
	/* Rows and rules are the chunks' (cfi.h); the CIEs run again in each chunk. */
	sw.rows = sj.rows = sw.rules = sj.rules = 0;
	if (!why)
		why = diff_stats(&sw, &sj, "one walk", "chunks", buf, sizeof(buf));
	if (why)
		test_fail("cfiref chunks %s: %s", path, why);
	else
		test_pass("cfiref chunks %s: %u chunks on 2 threads, %u rows merged: identical",
			  path, w.nr, a->nr_rows);
	if (!why) {
		total_chunked++;
		total_chunks += w.nr;
	}
out:
	for (k = 0; k < w.nr && w.parts; k++)
		flat_table__free(w.parts[k]);
	free(w.parts);
	free(w.stats);
	flat_table__free(whole);
	flat_table__free(a);
	flat_table__free(b);
	cfi_index__free(ix);
	if (fd >= 0)
		close(fd);
	return why != NULL;
}

/* ---- lookups ----------------------------------------------------------- */

#define LOOKUP_PCS 4096

static uint64_t total_looked, total_looked_pcs;

/* The rule at pc, NULL for none (a gap, or outside every row). */
static const struct sfbpf_rule *rule_at(const struct flat_table *t, uint32_t pc)
{
	int64_t i = flat_table__lookup(t, pc);
	const struct sfbpf_rule *r;

	if (i < 0 || t->rows[i].rule == SFBPF_RULE_GAP_ID)
		return NULL;
	r = &t->rules[t->rows[i].rule];
	return r->flags & SFBPF_RULE_GAP ? NULL : r;
}

/* PCs spread over t's rows: starts and last bytes, sorted, each once, as want ranges. */
static uint32_t spread_pcs(const struct flat_table *t, struct cfi_range *want)
{
	uint32_t step = t->nr_rows / (LOOKUP_PCS / 2) + 1, i, n = 0;
	uint64_t pc, last = 0;

	for (i = 0; i < t->nr_rows && n + 2 <= LOOKUP_PCS; i += step) {
		pc = t->rows[i].pc_off;
		if (!n || pc > last)
			want[n++] = (struct cfi_range){ pc, pc + 1 };
		last = pc;
		if (i + 1 < t->nr_rows && t->rows[i + 1].pc_off - 1 > pc) {
			pc = t->rows[i + 1].pc_off - 1;
			want[n++] = (struct cfi_range){ pc, pc + 1 };
			last = pc;
		}
	}
	return n;
}

/*
 * The code around some of the PCs (cfi_index__around, 4 FDEs each side, as
 * partial tables ask), walked from the lookup index: at every row start of
 * the whole table inside those ranges, its rule or an allowed gap. NULL, or
 * what differs (in buf).
 */
static const char *around(const struct flat_table *whole, const struct cfi_index *lix,
			  const struct cfi_range *pcs, uint32_t nr_pcs, bool gaps_allowed,
			  char *buf, size_t n)
{
	struct cfi_range *want = calloc(nr_pcs, sizeof(*want));
	const struct sfbpf_rule *rw, *rl;
	struct flat_table *lt = NULL;
	uint32_t i, k, nr = 0, m = 0, checked = 0;
	int err;

	for (k = 0; want && k < nr_pcs; k += 16)
		if (cfi_index__around(lix, pcs[k].lo, 4, &want[m]))
			m++;
	if (want)
		nr = cfi_ranges__join(want, m);
	err = !want ? -ENOMEM : cfi_index__flatten(lix, want, nr, &lt, NULL);
	if (err && err != -ENOENT) {
		snprintf(buf, n, "around: lookup walk: %s", strerror(-err));
		free(want);
		return buf;
	}
	for (i = 0, k = 0; i < whole->nr_rows && k < nr; i++) {
		uint32_t pc = whole->rows[i].pc_off;

		while (k < nr && want[k].hi <= pc)
			k++;
		if (k == nr || pc < want[k].lo)
			continue;
		rw = rule_at(whole, pc);
		rl = lt ? rule_at(lt, pc) : NULL;
		checked++;
		if ((rl && (!rw || memcmp(rl, rw, sizeof(*rl)))) || (!rl && rw && !gaps_allowed)) {
			snprintf(buf, n, "around: 0x%x: lookup %s, the whole walk %s", pc,
				 rl ? "a rule" : "no rule",
				 !rw ? "none" :
				 rl  ? "a different one" :
				       "one");
			break;
		}
	}
	if (i == whole->nr_rows || k == nr)
		buf = m && !checked ? strcpy(buf, "around: no row inside the ranges") : NULL;
	flat_table__free(lt);
	free(want);
	return buf;
}

/*
 * path's lookup index against its full index at PCs spread over its whole
 * table: the same rule or a gap at each, a gap only where allowed; the same
 * around some of them.
 */
static int lookups(const char *path)
{
	struct flat_table *whole = NULL, *lt = NULL;
	struct cfi_index *ix = NULL, *lix = NULL;
	struct cfi_range *want = calloc(LOOKUP_PCS, sizeof(*want));
	const struct sfbpf_rule *rw, *rl;
	uint32_t nr, k, gaps = 0, held = 0;
	uint64_t lo, hi, llo, lhi;
	const char *why = NULL;
	struct cfi_stats sw;
	char buf[512], ra[160], rb[160];
	bool gaps_allowed;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	err = fd < 0 ? -errno : !want ? -ENOMEM : cfi_index__open_lookup(fd, &lix);
	if (err)
		goto out; /* no usable .eh_frame_hdr (or not ELF): partial tables read every FDE */
	err = cfi_index__open(fd, &ix);
	if (!err)
		err = cfi_index__flatten(ix, NULL, 0, &whole, &sw);
	if (err) {
		snprintf(buf, sizeof(buf), "a lookup index, but no whole table: %s",
			 strerror(-err));
		why = buf;
		goto out;
	}
	gaps_allowed = sw.fdes[CFI_SRC_DEBUG_FRAME] || sw.unsupported[CFI_UNSUP_OVERLAP];
	nr = spread_pcs(whole, want);
	err = cfi_index__flatten(lix, want, nr, &lt, NULL);
	if (err == -ENOENT || (!err && !lt->nr_rows)) {
		err = 0; /* no FDE of .eh_frame at any of them: all gaps, checked below */
	} else if (err) {
		snprintf(buf, sizeof(buf), "lookup walk: %s", strerror(-err));
		why = buf;
	}
	for (k = 0; !why && k < nr; k++) {
		rw = rule_at(whole, (uint32_t)want[k].lo);
		rl = lt ? rule_at(lt, (uint32_t)want[k].lo) : NULL;
		if (rl && (!rw || memcmp(rl, rw, sizeof(*rl)))) {
			fmt_rule(rl, ra, sizeof(ra));
			if (rw)
				fmt_rule(rw, rb, sizeof(rb));
			snprintf(buf, sizeof(buf), "0x%llx: lookup %s, whole walk %s",
				 (unsigned long long)want[k].lo, ra, rw ? rb : "no rule");
			why = buf;
		} else if (!rl && rw && !gaps_allowed) {
			snprintf(buf, sizeof(buf), "0x%llx: lookup no rule, the whole walk one",
				 (unsigned long long)want[k].lo);
			why = buf;
		} else if (rl && (!cfi_index__fde_at(lix, want[k].lo, &llo, &lhi) ||
				  !cfi_index__fde_at(ix, want[k].lo, &lo, &hi) || llo != lo ||
				  lhi != hi)) {
			snprintf(buf, sizeof(buf), "0x%llx: lookup's FDE is not the full index's",
				 (unsigned long long)want[k].lo);
			why = buf;
		}
		gaps += !rl && rw;
		held += rl != NULL;
	}
	if (!why && !held) {
		snprintf(buf, sizeof(buf), "no rule at any of %u PCs", nr);
		why = buf;
	}
	if (!why)
		why = around(whole, lix, want, nr, gaps_allowed, buf, sizeof(buf));
	if (why) {
		test_fail("cfiref lookups %s: %s", path, why);
	} else {
		test_pass("cfiref lookups %s: %u PCs, %u with the whole walk's rule, %u gaps "
			  "(.debug_frame or overlaps)",
			  path, nr, held, gaps);
		total_looked++;
		total_looked_pcs += nr;
	}
out:
	free(want);
	flat_table__free(whole);
	flat_table__free(lt);
	cfi_index__free(ix);
	cfi_index__free(lix);
	if (fd >= 0)
		close(fd);
	return why != NULL;
}

/* ---- deadlines ---------------------------------------------------------- */

#define ROUND_PCS 32 /* maps/tablepart.h: TABLEPART_ROUND_PCS */
#define ROUND_AROUND 16 /* TABLEPART_AROUND */

static uint32_t nr_fdes(const struct cfi_stats *st)
{
	return st->fdes[CFI_SRC_EH_FRAME] + st->fdes[CFI_SRC_DEBUG_FRAME];
}

static bool same_rule(const struct sfbpf_rule *a, const struct sfbpf_rule *b)
{
	return a == b || (a && b && !memcmp(a, b, sizeof(*a)));
}

/*
 * At every row start of ref: below done, part's rule is ref's; from done on,
 * part has a gap and rest (if not NULL) ref's rule. The first PC that
 * differs, or -1.
 */
static int64_t split_differs(const struct flat_table *ref, const struct flat_table *part,
			     const struct flat_table *rest, uint64_t done)
{
	uint32_t i, pc;

	for (i = 0; i < ref->nr_rows; i++) {
		pc = ref->rows[i].pc_off;
		if (pc < done ? !same_rule(rule_at(part, pc), rule_at(ref, pc)) :
				rule_at(part, pc) ||
					(rest && !same_rule(rule_at(rest, pc), rule_at(ref, pc))))
			return pc;
	}
	return -1;
}

/* A walk whose deadline is already past: one run of FDEs, whatever the object. */
static const char *expired(const struct cfi_index *ix, const struct cfi_range *want, uint32_t nr,
			   const struct flat_table *ref, uint32_t *fdes, uint64_t *done,
			   uint64_t *ns, char *buf, size_t n)
{
	struct flat_table *part = NULL, *rest = NULL;
	struct cfi_range from;
	struct cfi_stats st;
	uint64_t t = now_ns();
	int64_t pc = -1;
	int err = cfi_index__flatten_until(ix, want, nr, 1, done, &part, &st);

	*ns = now_ns() - t;
	*fdes = err ? 0 : nr_fdes(&st);
	if (!err && !want) {
		/* The rest of a whole walk, from where this one stopped: the round after. */
		from = (struct cfi_range){ *done, UINT64_MAX };
		err = cfi_index__flatten(ix, &from, 1, &rest, NULL);
	}
	if (!err)
		pc = split_differs(ref, part, rest, *done);
	if (err)
		snprintf(buf, n, "walk: %s", strerror(-err));
	else if (*fdes > 1 || *done == UINT64_MAX)
		snprintf(buf, n, "%u FDEs walked, stopped at 0x%llx (want 1 at most, stopped)",
			 *fdes, (unsigned long long)*done);
	else if (pc >= 0)
		snprintf(buf, n, "stopped at 0x%llx: at 0x%llx not the full walk's rule",
			 (unsigned long long)*done, (unsigned long long)pc);
	flat_table__free(part);
	flat_table__free(rest);
	return err || *fdes > 1 || *done == UINT64_MAX || pc >= 0 ? buf : NULL;
}

static int deadline(const char *path)
{
	struct flat_table *whole = NULL, *round = NULL;
	struct cfi_index *ix = NULL, *lix = NULL;
	struct cfi_range want[ROUND_PCS];
	struct cfi_stats sw, sr;
	uint32_t k, m = 0, nr = 0, fdes = 0, lfdes = 0, pc;
	uint64_t done = 0, ldone = 0, ns = 0, lns = 0, round_ns = 0, whole_ns = now_ns();
	const char *why = NULL;
	char buf[512];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	err = fd < 0 ? -errno : cfi_index__open(fd, &ix);
	if (!err)
		err = cfi_index__flatten(ix, NULL, 0, &whole, &sw);
	whole_ns = now_ns() - whole_ns;
	if (err) {
		snprintf(buf, sizeof(buf), "no whole table: %s", strerror(-err));
		why = buf;
		goto out;
	}
	if (nr_fdes(&sw) < 2 * ROUND_PCS * ROUND_AROUND) {
		snprintf(buf, sizeof(buf), "%u FDEs: too few to stop early", nr_fdes(&sw));
		why = buf;
		goto out;
	}
	why = expired(ix, NULL, 0, whole, &fdes, &done, &ns, buf, sizeof(buf));
	/* A round's ranges: the code around PCs spread over the table. */
	if (!why && !cfi_index__open_lookup(fd, &lix)) {
		for (k = 0; k < ROUND_PCS; k++) {
			pc = whole->rows[(uint64_t)whole->nr_rows * k / ROUND_PCS].pc_off;
			m += cfi_index__around(lix, pc, ROUND_AROUND, &want[m]);
		}
		nr = cfi_ranges__join(want, m);
		round_ns = now_ns();
		err = cfi_index__flatten(lix, want, nr, &round, &sr);
		round_ns = now_ns() - round_ns;
		if (err) {
			snprintf(buf, sizeof(buf), "lookup round: %s", strerror(-err));
			why = buf;
		} else {
			why = expired(lix, want, nr, round, &lfdes, &ldone, &lns, buf, sizeof(buf));
		}
	}
	if (why)
		goto out;
	test_pass("cfiref deadline %s: past its deadline a whole walk took %u of %u FDEs "
		  "(%llu us, the whole %llu us) and stopped at 0x%llx; a lookup round of %u "
		  "ranges %u of %u (%llu us, in full %llu us)",
		  path, fdes, nr_fdes(&sw), (unsigned long long)ns / 1000,
		  (unsigned long long)whole_ns / 1000, (unsigned long long)done, nr, lfdes,
		  lix ? nr_fdes(&sr) : 0, (unsigned long long)lns / 1000,
		  (unsigned long long)round_ns / 1000);
out:
	if (why)
		test_fail("cfiref deadline %s: %s", path, why);
	flat_table__free(whole);
	flat_table__free(round);
	cfi_index__free(ix);
	cfi_index__free(lix);
	if (fd >= 0)
		close(fd);
	return why != NULL;
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s [--deadline] ELF...\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "--deadline")) {
		for (i = 2; i < argc; i++)
			failed |= deadline(argv[i]);
		return failed;
	}
	for (i = 1; i < argc; i++) {
		failed |= compare(argv[i]);
		failed |= chunks(argv[i]);
		failed |= lookups(argv[i]);
	}
	printf("cfiref looked up: %llu objects, %llu PCs\n", (unsigned long long)total_looked,
	       (unsigned long long)total_looked_pcs);
	printf("cfiref chunked: %llu objects, %llu chunks\n", (unsigned long long)total_chunked,
	       (unsigned long long)total_chunks);
	printf("cfiref total: %llu objects, %llu rows, %llu CFI rows\n",
	       (unsigned long long)total_objects, (unsigned long long)total_rows,
	       (unsigned long long)total_cfi_rows);
	return failed;
}
