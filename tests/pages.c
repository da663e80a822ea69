// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Page index granularity test: each ELF file's table is built as the loader
 * builds it (tableload.h: .sframe completed from CFI, else CFI), once as built
 * and once with its page index coarsened (flat_table__coarsen_pages, what the
 * loader pushes); for every PC from the first row to past the last, both
 * lookups (the BPF unwinder's search) must find the same row, or both no rule;
 * and the search in the maps' 4-byte rows (rowpack.h) exactly the row the
 * full-PC search finds.
 *
 * Usage: pages [-c] ELF...   -c: the files must get coarser pages (a sparse
 * fixture: a test that coarsens nothing proves nothing). Prints PASS/FAIL lines
 * and "pages FILE rows=N pages=N->N shift=S".
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tables/flatten.h"
#include "maps/rowpack.h"
#include "tables/tableload.h"
#include "testlib.h"
#include "testload.h"

/* The table of path, as the loader builds it; NULL if it has none. */
static struct flat_table *build(struct tableload *tl, const char *path)
{
	struct flat_table *ft;

	return testload_path(tl, path, &ft) ? NULL : ft;
}

/* No rule for pc: past the index, or on a gap row (the unwinder stops either way). */
static int no_rule(const struct flat_table *t, int64_t row)
{
	return row < 0 || t->rows[row].rule == SFBPF_RULE_GAP_ID;
}

/*
 * Every PC of the table's range: the same row through both indexes (or no
 * rule through both: the coarse index reaches past the last row's page).
 */
static int compare(const struct flat_table *fine, const struct flat_table *coarse, const char *path)
{
	uint64_t pc, end = (uint64_t)fine->rows[fine->nr_rows - 1].pc_off + 64;
	int64_t a, b;

	for (pc = fine->pc_min; pc < end && pc <= UINT32_MAX; pc++) {
		a = flat_table__lookup(fine, (uint32_t)pc);
		b = flat_table__lookup(coarse, (uint32_t)pc);
		/* The maps' 4-byte rows must find exactly the row the full PCs do. */
		if (rowpack__lookup(fine, (uint32_t)pc) != a ||
		    rowpack__lookup(coarse, (uint32_t)pc) != b) {
			test_fail("pages %s: pc %#llx: packed rows find rows %lld / %lld, full "
				  "PCs %lld / %lld (256-byte / %u-byte pages)",
				  path, (unsigned long long)pc,
				  (long long)rowpack__lookup(fine, (uint32_t)pc),
				  (long long)rowpack__lookup(coarse, (uint32_t)pc), (long long)a,
				  (long long)b, 1u << flat_table__page_shift(coarse));
			return -1;
		}
		if (a != b && !(no_rule(fine, a) && no_rule(coarse, b))) {
			test_fail("pages %s: pc %#llx: row %lld with 256-byte pages, %lld with "
				  "%u-byte pages",
				  path, (unsigned long long)pc, (long long)a, (long long)b,
				  1u << flat_table__page_shift(coarse));
			return -1;
		}
	}
	return 0;
}

static int check(struct tableload *tl, const char *path, int want_coarse)
{
	struct flat_table *fine = build(tl, path), *coarse = build(tl, path);
	int err = -1;

	if (!fine || !coarse || !fine->nr_rows) {
		test_fail("pages %s: no table", path);
		goto out;
	}
	flat_table__coarsen_pages(coarse);
	printf("pages %s rows=%u pages=%u->%u shift=%u\n", path, fine->nr_rows, fine->nr_pages,
	       coarse->nr_pages, flat_table__page_shift(coarse));
	if (coarse->nr_pages > coarse->nr_rows / FLAT_ROWS_PER_PAGE + 2 &&
	    flat_table__page_shift(coarse) < SFBPF_PAGE_SHIFT + SFBPF_OBJ_PAGE_SHIFT_MAX) {
		test_fail("pages %s: %u page entries for %u rows", path, coarse->nr_pages,
			  coarse->nr_rows);
		goto out;
	}
	if (want_coarse && flat_table__page_shift(coarse) == SFBPF_PAGE_SHIFT) {
		test_fail("pages %s: not coarsened (%u rows, %u pages): not a sparse table", path,
			  fine->nr_rows, fine->nr_pages);
		goto out;
	}
	if (compare(fine, coarse, path))
		goto out;
	test_pass("pages %s: every PC finds the same row with %u-byte pages, and in the "
		  "packed rows",
		  path, 1u << flat_table__page_shift(coarse));
	err = 0;
out:
	flat_table__free(fine);
	flat_table__free(coarse);
	return err;
}

int main(int argc, char **argv)
{
	struct tableload_opts opts = { .threaded = false };
	struct tableload *tl = tableload__new(&opts);
	int i = 1, want_coarse = 0, failed = 0;

	if (!tl)
		return 1;
	if (i < argc && !strcmp(argv[i], "-c")) {
		want_coarse = 1;
		i++;
	}
	for (; i < argc; i++)
		failed |= check(tl, argv[i], want_coarse) != 0;
	tableload__free(tl);
	return failed;
}
