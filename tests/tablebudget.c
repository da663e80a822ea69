// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table budget's eviction rule (userspace/maps/tablebudget.c) on real
 * BPF maps, without the BPF program: the test bumps the hit counters as the
 * unwinder would, and runs the rebalance itself instead of waiting 5 s.
 *
 * Usage: tablebudget FILE_A FILE_B FILE_C — ELF files of distinct identities
 * (copies with different mtimes will do) with tables of similar size, C the
 * same as B. The rows array is sized so that one fits, not two; every table stays
 * "fresh" (min residency 600 s) throughout. Checks:
 *   1. A new table (no heat yet) does not evict a fresh one: B is refused.
 *   2. A fresh table with no hits since it was loaded gives way to a hot
 *      one: B, hit 1000 times, is reloaded and A evicted. (Fresh tables used
 *      to be untouchable: while programs keep starting, their fresh tables
 *      kept a large hot one such as libc out for good.)
 *   3. A fresh table that is being hit keeps its room: A, now hot, does not
 *      come back over B, which took more hits in its few milliseconds.
 *   4. Past its residency, a table hit since it was loaded but not measured
 *      yet (heat 0 until the next rebalance) is not cold: a new table does
 *      not evict it.
 *   5. A reload refused because the table in its way is fresh and being hit
 *      is kept, and admitted once that table is past its residency and less
 *      than half as hot: no rebuild, no wait for the next rebalance (see
 *      park()).
 *   6. A parked reload yields to a hotter one at the next rebalance.
 * Exit status: 0 when the checks ran (verdicts on stdout), 2 on bad usage, 1
 * when maps or files could not be set up (reported as FAIL).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tablebudget.h"
#include "testlib.h"

static void add_hits(const struct maps *m, int64_t slot, uint64_t n)
{
	uint32_t key = slot;
	uint64_t v = 0;

	bpf_map_lookup_elem(m->hits, &key, &v);
	v += n;
	bpf_map_update_elem(m->hits, &key, &v, BPF_ANY);
}

/* The rows of each file's table, in a budget with room for both. */
static int measure(struct file *f, uint32_t *nr_rows)
{
	const uint32_t rows = 1 << 20, pages = 1 << 18, rules = 1 << 14, objects = 64;
	struct tables_stats st;
	struct maps m;
	struct tables *t;
	uint64_t before = 0;
	int i, err = 0;

	if (create_maps(&m, rows, pages, rules, objects))
		return -1;
	t = new_tables(&m, rows, pages, rules, objects, MIN_RESIDENCY_NS);
	for (i = 0; t && i < 2 && !err; i++) {
		err = tables__acquire_src(t, f[i].fd, &f[i].key, f[i].path, &f[i].src) < 0;
		settle(t);
		tables__stats(t, &st);
		nr_rows[i] = st.rows_used - before;
		before = st.rows_used;
		err |= !nr_rows[i];
	}
	tables__free(t);
	close_maps(&m);
	return t && !err ? 0 : -1;
}

/*
 * Check 5. B's reload is built while A, fresh, has no hits; A is hit
 * (40000 times) before B's reload is admitted: as a rate over its few
 * seconds, more than half B's (100000 hits), so the reload is refused and
 * kept; once A is past its residency, its hits weigh as heat — less than
 * half B's — and the kept reload goes in, without a rebuild nor a wait for
 * the next rebalance. -EAGAIN: A was past its residency before the reload
 * was admitted (slow builds): try a longer one.
 */
static int park(struct file *f, const uint32_t *nr, uint32_t rows, uint64_t residency_ns)
{
	const uint32_t pages = 1 << 18, rules = 1 << 14, objects = 64;
	struct timespec nap = { 0, 10000000 };
	struct tables_stats st;
	uint32_t fa, fb, ra, rb;
	uint64_t deadline;
	struct tables *t;
	struct maps m;
	int64_t a, b;

	if (create_maps(&m, rows, pages, rules, objects) ||
	    !(t = new_tables(&m, rows, pages, rules, objects, residency_ns))) {
		report(false, "tablebudget: setup", "maps of %u rows: %s", rows, strerror(errno));
		return -1;
	}
	a = tables__acquire_src(t, f[0].fd, &f[0].key, f[0].path, &f[0].src);
	settle(t);
	b = tables__acquire_src(t, f[1].fd, &f[1].key, f[1].path, &f[1].src);
	settle(t);
	add_hits(&m, b, 100000);
	tables_rebalance(t, clock__mono_ns()); /* B's reload: built at once (no thread) */
	add_hits(&m, a, 40000);
	tables__process(t, 0);
	tables__stats(t, &st);
	if (st.objects_over_budget != 2 || published(&m, a, &fa) != nr[0]) {
		tables__free(t);
		close_maps(&m);
		return -EAGAIN;
	}
	deadline = clock__mono_ns() + residency_ns + 3000000000ULL;
	while (!published(&m, b, &fb) && clock__mono_ns() < deadline) {
		nanosleep(&nap, NULL);
		tables__process(t, 0);
	}
	settle(t);
	tables__stats(t, &st);
	ra = published(&m, a, &fa);
	rb = published(&m, b, &fb);
	report(!ra && rb == nr[1] && st.promotions == 1 && st.loads == 3,
	       "tablebudget: a reload refused for now is admitted once its way clears",
	       "rows %u %u, promotions %llu, builds %llu", ra, rb,
	       (unsigned long long)st.promotions, (unsigned long long)st.loads);
	tables__free(t);
	close_maps(&m);
	return 0;
}

/*
 * Check 6. B's reload is parked (A fresh and hit, as in check 5), when C,
 * over budget too, turns far hotter: at the next rebalance the parked
 * reload yields and C's is built and admitted (A, fresh but far colder than
 * C, evicted).
 */
static void yield(struct file *f, const uint32_t *nr, uint32_t rows)
{
	const uint32_t pages = 1 << 18, rules = 1 << 14, objects = 64;
	struct tables_stats st;
	uint32_t fa, fb, fc, ra, rb, rc;
	bool parked;
	struct tables *t;
	struct maps m;
	int64_t a, b, c;

	if (create_maps(&m, rows, pages, rules, objects) ||
	    !(t = new_tables(&m, rows, pages, rules, objects, MIN_RESIDENCY_NS))) {
		report(false, "tablebudget: setup", "maps of %u rows: %s", rows, strerror(errno));
		return;
	}
	a = tables__acquire_src(t, f[0].fd, &f[0].key, f[0].path, &f[0].src);
	settle(t);
	b = tables__acquire_src(t, f[1].fd, &f[1].key, f[1].path, &f[1].src);
	c = tables__acquire_src(t, f[2].fd, &f[2].key, f[2].path, &f[2].src);
	settle(t);
	add_hits(&m, b, 100000);
	tables_rebalance(t, clock__mono_ns());
	add_hits(&m, a, 4000000); /* as a rate, far above B's until A is 800 s old */
	tables__process(t, 0);
	parked = t->parked && t->parked->slot == b;
	/*
	 * Far hotter than fresh A at any age this test can reach: A's rate is
	 * 4e6 hits over its age, C's 1e15 over two rebalance periods (1e5 per
	 * ns), so C outranks A once A is 80 ns old. (With 1e9 hits A had to be
	 * 80 ms old: a quiet machine ran the check sooner and failed it.)
	 */
	add_hits(&m, c, 1000000000000000ULL);
	tables_rebalance(t, clock__mono_ns());
	settle(t);
	tables__stats(t, &st);
	ra = published(&m, a, &fa);
	rb = published(&m, b, &fb);
	rc = published(&m, c, &fc);
	report(parked && !ra && !rb && rc == nr[2] && !t->parked && st.promotions == 2,
	       "tablebudget: a parked reload yields to a hotter one",
	       "B parked first %d, rows %u %u %u, still parked %d, promotions %llu", parked, ra, rb,
	       rc, t->parked != NULL, (unsigned long long)st.promotions);
	tables__free(t);
	close_maps(&m);
}

int main(int argc, char **argv)
{
	const uint32_t pages = 1 << 18, rules = 1 << 14, objects = 64;
	struct file f[3];
	struct tables_stats st;
	uint32_t nr[3], big, rows, fa, fb, ra, rb;
	const uint64_t park_residency_ns[] = { 1000000000ULL, 3000000000ULL, 7000000000ULL };
	struct maps m;
	struct tables *t;
	int64_t a, b;
	int i, ret = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE_A FILE_B FILE_C\n", argv[0]);
		return 2;
	}
	if (open_file(&f[0], argv[1]) || open_file(&f[1], argv[2]) || open_file(&f[2], argv[3]) ||
	    !memcmp(&f[0].key, &f[1].key, sizeof(f[0].key)) ||
	    !memcmp(&f[0].key, &f[2].key, sizeof(f[0].key)) ||
	    !memcmp(&f[1].key, &f[2].key, sizeof(f[0].key))) {
		report(false, "tablebudget: setup",
		       "%s, %s, %s: unreadable ELF files, or one identity", argv[1], argv[2],
		       argv[3]);
		return 1;
	}
	if (measure(f, nr)) {
		report(false, "tablebudget: setup", "no tables for %s and %s (or no BPF maps)",
		       argv[1], argv[2]);
		return 1;
	}
	/* The big arena (7/8 of the array) holds the larger table and half the smaller. */
	big = nr[0] > nr[1] ? nr[0] : nr[1];
	big += (nr[0] + nr[1] - big) / 2;
	rows = big / 7 * 8 + 8;
	if (create_maps(&m, rows, pages, rules, objects) ||
	    !(t = new_tables(&m, rows, pages, rules, objects, MIN_RESIDENCY_NS))) {
		report(false, "tablebudget: setup", "maps of %u rows: %s", rows, strerror(errno));
		return 1;
	}
	printf("tables of %u and %u rows, an array of %u\n", nr[0], nr[1], rows);

	a = tables__acquire_src(t, f[0].fd, &f[0].key, f[0].path, &f[0].src);
	settle(t);
	b = tables__acquire_src(t, f[1].fd, &f[1].key, f[1].path, &f[1].src);
	settle(t);
	tables__stats(t, &st);
	ra = published(&m, a, &fa);
	rb = published(&m, b, &fb);
	report(a >= 0 && b >= 0 && ra == nr[0] && !rb && (fb & SFBPF_OBJ_F_NO_BUDGET) &&
		       st.objects_over_budget == 1 && !st.evictions,
	       "tablebudget: a new table does not evict a fresh one",
	       "slots %lld %lld, rows %u %u, B's flags %#x, over budget %u, evictions %llu",
	       (long long)a, (long long)b, ra, rb, fb, st.objects_over_budget,
	       (unsigned long long)st.evictions);

	/* B is hit (its frames walk by frame pointers), A is not. */
	add_hits(&m, b, 1000);
	tables_rebalance(t, clock__mono_ns());
	settle(t);
	tables__stats(t, &st);
	ra = published(&m, a, &fa);
	rb = published(&m, b, &fb);
	report(!ra && (fa & SFBPF_OBJ_F_NO_BUDGET) && rb == nr[1] && st.promotions == 1 &&
		       st.evictions == 1,
	       "tablebudget: a fresh table without hits gives way to a hot one",
	       "rows %u %u, A's flags %#x, promotions %llu, evictions %llu", ra, rb, fa,
	       (unsigned long long)st.promotions, (unsigned long long)st.evictions);

	/* Now A is hot, but B, fresh, took more hits still since it was loaded. */
	add_hits(&m, a, 1000);
	add_hits(&m, b, 2000);
	tables_rebalance(t, clock__mono_ns());
	settle(t);
	tables__stats(t, &st);
	ra = published(&m, a, &fa);
	rb = published(&m, b, &fb);
	report(!ra && rb == nr[1] && st.promotions == 1 && st.evictions == 1,
	       "tablebudget: a fresh table being hit keeps its room",
	       "rows %u %u, promotions %llu, evictions %llu", ra, rb,
	       (unsigned long long)st.promotions, (unsigned long long)st.evictions);

	tables__free(t);
	close_maps(&m);

	/*
	 * Past its residency (1 ns) but not measured yet (no rebalance since it
	 * was loaded: heat 0), A is being hit: not cold, a new table cannot
	 * evict it.
	 */
	if (create_maps(&m, rows, pages, rules, objects) ||
	    !(t = new_tables(&m, rows, pages, rules, objects, 1))) {
		report(false, "tablebudget: setup", "maps of %u rows: %s", rows, strerror(errno));
		return 1;
	}
	a = tables__acquire_src(t, f[0].fd, &f[0].key, f[0].path, &f[0].src);
	settle(t);
	add_hits(&m, a, 10);
	b = tables__acquire_src(t, f[1].fd, &f[1].key, f[1].path, &f[1].src);
	settle(t);
	tables__stats(t, &st);
	ra = published(&m, a, &fa);
	rb = published(&m, b, &fb);
	report(ra == nr[0] && !rb && !st.evictions,
	       "tablebudget: a table hit since it was loaded is not cold before it is measured",
	       "rows %u %u, evictions %llu", ra, rb, (unsigned long long)st.evictions);
	tables__free(t);
	close_maps(&m);

	/* Attempts with longer residencies, should the builds be too slow for a short one. */
	for (i = 0; i < 3; i++) {
		ret = park(f, nr, rows, park_residency_ns[i]);
		if (ret != -EAGAIN)
			break;
	}
	if (ret == -EAGAIN)
		report(false,
		       "tablebudget: a reload refused for now is admitted once its way clears",
		       "never refused: A was past its residency before B's reload was admitted");
	nr[2] = nr[1]; /* C: a copy of B */
	yield(f, nr, rows);
	return 0;
}
