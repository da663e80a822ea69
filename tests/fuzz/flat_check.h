/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every flattened table must satisfy, whatever built it (SFrame in
 * flatten.c, DWARF CFI in cfi.c): the BPF unwinder's search is only right
 * on tables like these. Used by the flatten, elf_sframe and cfi targets.
 */
#ifndef SFBPF_FLAT_CHECK_H
#define SFBPF_FLAT_CHECK_H

#include "tables/flatten.h"
#include "fuzz.h"

/*
 * Rows strictly increasing, rule indexes in range, neighbours with distinct
 * rules (merged otherwise), the last row a gap (nothing past the last
 * function matches it), pc_min the first row's page.
 */
static inline void flat_check_rows(const struct flat_table *t)
{
	uint32_t i;

	FUZZ_CHECK(t->nr_rules >= 1 && (t->rules[0].flags & SFBPF_RULE_GAP), "no gap rule 0");
	if (!t->nr_rows) {
		FUZZ_CHECK(t->nr_pages == 0, "%u pages without rows", t->nr_pages);
		return;
	}
	for (i = 0; i < t->nr_rows; i++) {
		FUZZ_CHECK(t->rows[i].rule < t->nr_rules, "row %u: rule %u of %u", i,
			   t->rows[i].rule, t->nr_rules);
		if (!i)
			continue;
		FUZZ_CHECK(t->rows[i].pc_off > t->rows[i - 1].pc_off,
			   "row %u at %#x not after row %u at %#x", i, t->rows[i].pc_off, i - 1,
			   t->rows[i - 1].pc_off);
		FUZZ_CHECK(t->rows[i].rule != t->rows[i - 1].rule,
			   "rows %u and %u share rule %u (not merged)", i - 1, i, t->rows[i].rule);
	}
	FUZZ_CHECK(t->rows[t->nr_rows - 1].rule == SFBPF_RULE_GAP_ID, "last row is not a gap");
	FUZZ_CHECK(t->pc_min <= t->rows[0].pc_off && t->rows[0].pc_off - t->pc_min < 256,
		   "pc_min %#x vs first row %#x", t->pc_min, t->rows[0].pc_off);
}

/* pages[p] is the first row at or after page p; the sentinel is nr_rows. */
static inline void flat_check_pages(const struct flat_table *t)
{
	uint32_t p, r;

	if (!t->nr_rows)
		return;
	FUZZ_CHECK(t->nr_pages >= 2 && t->pages[t->nr_pages - 1] == t->nr_rows,
		   "%u pages, sentinel %u", t->nr_pages, t->nr_pages ? t->pages[t->nr_pages - 1] : 0);
	for (p = 0; p + 1 < t->nr_pages; p++) {
		uint64_t page = t->pc_min + ((uint64_t)p << SFBPF_PAGE_SHIFT);

		r = t->pages[p];
		FUZZ_CHECK(r <= t->nr_rows && (!p || r >= t->pages[p - 1]), "page %u: row %u", p, r);
		FUZZ_CHECK(r == t->nr_rows || t->rows[r].pc_off >= page,
			   "page %u: first row %u at %#x before the page", p, r, t->rows[r].pc_off);
		FUZZ_CHECK(!r || t->rows[r - 1].pc_off < page, "page %u: row %u not the first", p, r);
	}
}

/* The lookup gives the last row starting at or before pc (or -1 past the table). */
static inline int64_t flat_check_lookup(const struct flat_table *t, uint64_t pc64)
{
	uint32_t pc = (uint32_t)pc64;
	int64_t r;

	if (pc64 > UINT32_MAX)
		return -1;
	r = flat_table__lookup(t, pc);
	if (r < 0) {
		FUZZ_CHECK(!t->nr_rows || pc < t->rows[0].pc_off ||
				   pc >= t->rows[t->nr_rows - 1].pc_off,
			   "lookup(%#x) found nothing inside the table", pc);
		return -1;
	}
	FUZZ_CHECK(r < t->nr_rows && t->rows[r].pc_off <= pc, "lookup(%#x) = row %lld", pc,
		   (long long)r);
	FUZZ_CHECK(r + 1 == t->nr_rows || t->rows[r + 1].pc_off > pc,
		   "lookup(%#x) = row %lld, but row %lld starts at %#x", pc, (long long)r,
		   (long long)r + 1, t->rows[r + 1].pc_off);
	return r;
}

/* Structure, then lookups at, before and after every row (up to budget). */
static inline void flat_check_table(const struct flat_table *t, uint32_t budget)
{
	uint32_t i;

	flat_check_rows(t);
	flat_check_pages(t);
	for (i = 0; i < t->nr_rows && budget > 2; i++, budget -= 3) {
		flat_check_lookup(t, t->rows[i].pc_off);
		flat_check_lookup(t, (uint64_t)t->rows[i].pc_off + 1);
		flat_check_lookup(t, (uint64_t)t->rows[i].pc_off - 1);
	}
}

/*
 * Known, reported, not fixed yet (see fuzz_skip_known()): the decoder accepts
 * a PCMASK FDE whose FRE starts at or past its repetition block, and its rows
 * then go backwards (regress/flatten/pcmask-fre-past-rep-size.sframe).
 */
static inline bool flat_known_pcmask_bug(const struct sframe_decoder *d)
{
	uint32_t i, n = sframe_decoder__num_fdes(d);
	struct sframe_fre_iter it;
	struct sframe_fre fre;
	struct sframe_fde f;

	for (i = 0; i < n; i++) {
		sframe_decoder__fde(d, i, &f);
		if (f.pctype != SFRAME_FDE_PCTYPE_MASK)
			continue;
		sframe_fre_iter__init(&it, d, &f);
		while (sframe_fre_iter__next(&it, &fre))
			if (fre.end_off < fre.start_off)
				return true;
	}
	return false;
}

/*
 * Known, reported, not fixed yet: in a PCMASK FDE whose first FRE starts past
 * offset 0, the flattener gives the PCs before it in every block but the
 * first the previous block's last rule instead of a gap
 * (regress/flatten/pcmask-first-fre-late.sframe).
 */
static inline bool flat_known_pcmask_late_bug(const struct sframe_decoder *d)
{
	uint32_t i, n = sframe_decoder__num_fdes(d);
	struct sframe_fre_iter it;
	struct sframe_fre fre;
	struct sframe_fde f;

	for (i = 0; i < n; i++) {
		sframe_decoder__fde(d, i, &f);
		if (f.pctype != SFRAME_FDE_PCTYPE_MASK)
			continue;
		sframe_fre_iter__init(&it, d, &f);
		if (sframe_fre_iter__next(&it, &fre) && fre.start_off > 0)
			return true;
	}
	return false;
}

/*
 * Known, reported, not fixed yet: PCMASK FDEs expand to up to 2^16 rows each
 * and an object may reach 2^26 rows (512 MiB) before the flattener gives up,
 * whatever the loader's budget. Inputs that expand past 2^20 rows only make
 * fuzzing slow while that holds (tests/hostile.test: pcmask-bomb).
 */
static inline bool flat_known_expansion_bug(const struct sframe_decoder *d)
{
	uint32_t i, n = sframe_decoder__num_fdes(d);
	uint64_t rows = 0, blocks;
	struct sframe_fde f;

	for (i = 0; i < n; i++) {
		sframe_decoder__fde(d, i, &f);
		if (f.pctype != SFRAME_FDE_PCTYPE_MASK || !f.num_fres)
			continue;
		blocks = f.rep_size ? f.func_size / f.rep_size + 1 : f.func_size / 16 + 1;
		rows += blocks * f.num_fres < (1u << 16) ? blocks * f.num_fres : (1u << 16);
	}
	return rows > (1u << 20);
}

/* Any of the known bugs above. */
static inline bool flat_known_bug(const struct sframe_decoder *d)
{
	return flat_known_pcmask_bug(d) || flat_known_pcmask_late_bug(d) ||
	       flat_known_expansion_bug(d);
}

#endif /* SFBPF_FLAT_CHECK_H */
