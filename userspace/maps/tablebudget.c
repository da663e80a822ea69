// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table budget (see tables.h): map capacities from a number of bytes,
 * admission of a built table (evicting colder ones when it does not fit),
 * and hotness from the unwinder's per-slot hit counters, which brings back
 * over-budget tables that turned hot.
 *
 * Eviction order: lingering tables (no process maps them), oldest first;
 * then tables that have been loaded for at least min_residency_ns and are
 * cold (no hits lately, counting those not yet folded into their heat: a
 * table loaded since the last rebalance has no heat yet, and is not cold for
 * that) or much colder than the table asking for room (less than half its
 * heat), coldest first. A fresher table is never judged cold
 * (its heat is not measured yet) but gives way to a table more than twice as
 * hot as its hit rate since it was loaded: else, while processes keep
 * starting, fresh tables of short-lived programs always sit somewhere in the
 * slice a large hot table needs, and keep it out for good. Without hit
 * counters only lingering tables are evicted: nothing tells a cold table from
 * a hot one.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps/tablebudget.h"
#include "util/clock.h"
#include "util/log.h"

#define MIB (1ULL << 20)
#define DEFAULT_MIN_RESIDENCY_NS (30 * 1000000000ULL)
#define MAX_PROMOTIONS 4 /* candidates tried per rebalance (one reload started) */
/*
 * A reload refused for now (the tables in its way are still fresh and hit,
 * or being pushed) is kept this long, tried again every PARK_RETRY_NS, rather
 * than rebuilt at the next rebalance.
 */
#define PARK_NS TABLES_REBALANCE_NS
#define PARK_RETRY_NS 100000000ULL
#define SLOT_BYTES (sizeof(struct sfbpf_object) + sizeof(uint64_t)) /* + its hit counter */
/* Rows and page entries: 4 bytes each in their segments (bpf/abi.h). */
#define ROW_BYTES sizeof(struct sfbpf_row)
#define PAGE_BYTES sizeof(uint32_t)

static uint64_t clamp64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Map memory of one segment of 1 << shift entries: its element and the array's header page. */
static uint64_t seg_cost(uint32_t shift)
{
	long page = sysconf(_SC_PAGESIZE);

	return (ROW_BYTES << shift) + (page > 0 ? (uint64_t)page : 4096);
}

/* Segments of a space of n entries (whole segments: n is a multiple). */
static uint64_t nr_segs(uint32_t n, uint32_t shift)
{
	return SFBPF_SEGS(n, shift);
}

void tables__size_budget(uint64_t bytes, struct tables_sizes *out)
{
	uint64_t fixed, rest, segs, row_segs;
	uint32_t shift = SFBPF_SEG_SHIFT_MAX;

	/* Slots cost little; a system maps a few thousand distinct files at most. */
	out->objects = clamp64(bytes / 8192, 1024, 65536);
	/* Rules are shared system-wide: a few thousand distinct ones in practice. */
	out->rules = clamp64(bytes / 1536, 1024, SFBPF_MAX_RULES);
	fixed = (uint64_t)out->objects * SLOT_BYTES +
		(uint64_t)out->rules * sizeof(struct sfbpf_rule);
	rest = bytes > fixed ? bytes - fixed : 0;
	/*
	 * Rows and pages come in whole segments, created as tables need them:
	 * the largest segments that still leave 32 of them in the budget, so
	 * that the two arenas of each space (slices.h) never need more than
	 * the budget holds.
	 */
	while (shift > SFBPF_SEG_SHIFT_MIN && rest < 32 * seg_cost(shift))
		shift--;
	out->seg_shift = shift;
	segs = rest / seg_cost(shift);
	/*
	 * A table's page index has at most one page per FLAT_ROWS_PER_PAGE
	 * rows (flat_table__coarsen_pages), plus its last page and sentinel;
	 * sparse tables may have more (their pages stop growing at 64 KiB):
	 * the page space gets twice what the rule asks, a fifth of the entries.
	 */
	row_segs = segs * 4 / 5;
	row_segs = row_segs ? row_segs : 1;
	out->rows = clamp64(row_segs << shift, 1u << shift, UINT32_MAX / 2);
	out->pages = clamp64((segs > row_segs + 1 ? segs - row_segs : 1) << shift, 1u << shift,
			     UINT32_MAX / 2);
}

uint64_t tables__map_bytes(const struct tables_sizes *s)
{
	uint32_t shift = s->seg_shift ? s->seg_shift : SFBPF_SEG_SHIFT_MAX;

	return (nr_segs(s->rows, shift) + nr_segs(s->pages, shift)) * seg_cost(shift) +
	       (uint64_t)s->rules * sizeof(struct sfbpf_rule) + (uint64_t)s->objects * SLOT_BYTES;
}

uint64_t tables__default_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;

	return clamp64(ram / 512, 32 * MIB, 256 * MIB);
}

/* ---- admission and eviction ----------------------------------------------- */

static uint64_t min_residency(const struct tables *t)
{
	return t->opts.min_residency_ns ? t->opts.min_residency_ns : DEFAULT_MIN_RESIDENCY_NS;
}

static bool fresh(const struct tables *t, const struct entry *v, uint64_t now)
{
	return now - v->loaded_ns < min_residency(t);
}

/*
 * Is fresh table v less than half as hot as e? Its rate is its hits since it
 * was loaded (hits_live, read by read_live_hits()) over its age; e's rate is
 * its heat over two rebalance periods (heat = heat / 2 + hits converges to
 * twice a period's hits; less while e's history is short, which only favours
 * v). A table asking for room with no heat never evicts a fresh one.
 */
static bool fresh_colder(const struct entry *v, const struct entry *e, uint64_t now)
{
	uint64_t hits = v->hits_live > v->hits_at_load ? v->hits_live - v->hits_at_load : 0;
	double v_rate, e_rate;

	if (!e->heat)
		return false;
	v_rate = (double)hits / (double)(now - v->loaded_ns + 1);
	e_rate = (double)e->heat / (2.0 * TABLES_REBALANCE_NS);
	return v_rate * 2 < e_rate;
}

static bool evictable(const struct tables *t, const struct entry *v, const struct entry *e,
		      uint64_t now)
{
	uint64_t unread;

	if (v == e || v->state != OBJ_LOADED)
		return false;
	if (!v->refs)
		return true; /* lingering */
	if (t->opts.obj_hits_fd <= 0)
		return false;
	if (fresh(t, v, now))
		return fresh_colder(v, e, now);
	/* Hits since the last rebalance count in full: the next one adds them. */
	unread = v->hits_live > v->hits_seen ? v->hits_live - v->hits_seen : 0;
	if (!v->heat && !unread)
		return true; /* cold */
	return (v->heat + unread) * 2 < e->heat;
}

/* The hit counters of the referenced tables, now: what evictable() compares. */
static void read_live_hits(struct tables *t)
{
	struct entry *v;
	uint32_t i;

	if (t->opts.obj_hits_fd <= 0)
		return;
	for (i = 0; i < t->opts.max_objects; i++) {
		v = t->slots[i];
		if (!v || v->state != OBJ_LOADED || !v->refs)
			continue;
		if (bpf_map_lookup_elem(t->opts.obj_hits_fd, &i, &v->hits_live))
			v->hits_live = v->hits_seen; /* (an array: cannot fail) */
	}
}

void tables_note_loaded(struct tables *t, struct entry *e)
{
	uint32_t key = e->slot;
	uint64_t hits = 0;

	if (t->opts.obj_hits_fd > 0 && e->slot >= 0 &&
	    bpf_map_lookup_elem(t->opts.obj_hits_fd, &key, &hits))
		hits = 0;
	e->hits_at_load = e->hits_live = hits;
}

/*
 * What evicting v costs: lingering tables next to nothing (the oldest least),
 * referenced ones their heat, above any lingering one.
 */
static uint64_t victim_cost(const struct entry *v, uint64_t now)
{
	uint64_t age = now - v->used_ns;

	if (!v->refs)
		return 1 + (age < 1000000000000ULL ? (1000000000000ULL - age) >> 30 : 0);
	return (1ULL << 20) + v->heat;
}

struct span {
	uint32_t start, len;
	struct entry *e;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The slices of one array (rows or pages) in use, sorted by start. */
static uint32_t collect_spans(struct tables *t, bool rows, struct span *out)
{
	uint32_t i, n = 0;
	struct entry *e;

	for (i = 0; i < t->opts.max_objects; i++) {
		e = t->slots[i];
		if (!e || !e->has_ranges)
			continue;
		out[n++] = rows ? (struct span){ e->row_start, e->nr_rows, e } :
				  (struct span){ e->page_start, e->nr_pages, e };
	}
	qsort(out, n, sizeof(*out), span_cmp);
	return n;
}

static void evict(struct tables *t, struct entry *v)
{
	t->stats.evictions++;
	pr_info("%s: table evicted (%u rows, %s)", v->name, v->nr_rows,
		v->refs ? "cold" : "unused");
	if (!v->refs) {
		tables_free_entry(t, v);
		return;
	}
	/* Unpublished before its slices can be reused. */
	tables_publish_flags(t, v->slot, SFBPF_OBJ_F_NO_BUDGET);
	tables_drop_rows(t, v);
	v->state = OBJ_NO_BUDGET;
}

/*
 * The cheapest run of consecutive tables in [base, end) that, with the free
 * space around them, makes need contiguous entries: an object needs one
 * contiguous slice, and evicting the coldest tables wherever they are may
 * free enough space in total but not in one piece. A run holding a table
 * that may not be evicted does not count. Two pointers over the tables in
 * address order: the run [i, j) frees [end of table i-1, start of table j).
 * Returns its cost (UINT64_MAX: none) and the run in *bi, *bj.
 */
static uint64_t best_window(struct tables *t, const struct entry *e, const struct span *sp,
			    uint32_t n, uint32_t base, uint32_t end, uint32_t need, uint64_t now,
			    uint32_t *bi, uint32_t *bj)
{
	uint64_t cost = 0, best = UINT64_MAX, from, to = 0;
	uint32_t i, j;

	for (i = 0, j = 0; i <= n; i++) {
		if (j < i) {
			j = i;
			cost = 0;
		}
		from = i ? (uint64_t)sp[i - 1].start + sp[i - 1].len : base;
		for (;;) {
			to = j < n ? sp[j].start : end;
			to = to > from ? to : from; /* (slices never overlap) */
			if (to - from >= need || j >= n || !evictable(t, sp[j].e, e, now))
				break;
			cost += victim_cost(sp[j].e, now);
			j++;
		}
		if (to - from >= need) {
			if (cost < best) {
				best = cost;
				*bi = i;
				*bj = j;
			}
		} else if (j < n) {
			/* Table j must stay: no run starting at or before it can cross it. */
			i = j;
			j++;
			cost = 0;
			continue;
		} else {
			break; /* runs starting further on are shorter */
		}
		if (j > i)
			cost -= victim_cost(sp[i].e, now);
	}
	return best;
}

/* Evicts the cheapest run making need contiguous entries where e's slice may go. */
static bool evict_window(struct tables *t, struct entry *e, bool rows, uint32_t need, uint64_t now)
{
	const struct slices *sl = rows ? &t->rows : &t->pages;
	struct span *sp = calloc(t->opts.max_objects, sizeof(*sp));
	struct slices_arena arenas[2];
	uint32_t n, k, nr, a, lo, i, bi = 0, bj = 0;
	uint64_t best = UINT64_MAX;

	if (!sp)
		return false;
	n = collect_spans(t, rows, sp);
	nr = slices__arenas(sl, need, arenas);
	for (a = 0; a < nr && best == UINT64_MAX; a++) {
		/* The spans inside this arena. */
		for (lo = 0; lo < n && sp[lo].start < arenas[a].base; lo++)
			;
		for (k = lo; k < n && sp[k].start < arenas[a].end; k++)
			;
		best = best_window(t, e, sp + lo, k - lo, arenas[a].base, arenas[a].end, need, now,
				   &bi, &bj);
		bi += lo;
		bj += lo;
	}
	for (i = bi; best != UINT64_MAX && i < bj; i++)
		evict(t, sp[i].e);
	free(sp);
	return best != UINT64_MAX;
}

/* Could e's table fit at all, in an otherwise empty big arena? */
static bool fits_arena(const struct tables *t, const struct entry *e)
{
	return e->nr_rows <= t->rows.small_base && e->nr_pages <= t->pages.small_base;
}

/* Could evicting every candidate make room for e? (Fragmentation aside.) */
static bool room_possible(struct tables *t, const struct entry *e, uint64_t now)
{
	uint64_t rows = t->rows.cap - slices__used(&t->rows);
	uint64_t pages = t->pages.cap - slices__used(&t->pages);
	const struct entry *v;
	uint32_t i;

	if (!fits_arena(t, e))
		return false; /* never: not worth a reload */
	for (i = 0; i < t->opts.max_objects && (rows < e->nr_rows || pages < e->nr_pages); i++) {
		v = t->slots[i];
		if (v && evictable(t, v, e, now)) {
			rows += v->nr_rows;
			pages += v->nr_pages;
		}
	}
	return rows >= e->nr_rows && pages >= e->nr_pages;
}

/*
 * The segments slices [rs, +nr_rows) and [ps, +nr_pages) lie in; the slices
 * are given back if they cannot be had (the kernel refused the memory).
 */
static int get_segments(struct tables *t, const struct entry *e, int64_t rs, int64_t ps)
{
	int err = segspace__get(&t->row_segs, rs, e->nr_rows);

	if (!err) {
		err = segspace__get(&t->page_segs, ps, e->nr_pages);
		if (err)
			segspace__put(&t->row_segs, rs, e->nr_rows);
	}
	if (err) {
		slices__release(&t->rows, rs, e->nr_rows);
		slices__release(&t->pages, ps, e->nr_pages);
	}
	return err;
}

/* Slices for e's table (and their segments), evicting until they fit. */
static int make_room(struct tables *t, struct entry *e, int64_t *rs, int64_t *ps)
{
	uint64_t now = clock__mono_ns();
	int round;

	if (!fits_arena(t, e))
		return -ENOSPC;
	for (round = 0;; round++) {
		*rs = slices__alloc(&t->rows, e->nr_rows);
		*ps = slices__alloc(&t->pages, e->nr_pages);
		if (*rs >= 0 && *ps >= 0)
			return get_segments(t, e, *rs, *ps);
		if (*rs >= 0)
			slices__release(&t->rows, *rs, e->nr_rows);
		if (*ps >= 0)
			slices__release(&t->pages, *ps, e->nr_pages);
		if (*rs == -ENOMEM || *ps == -ENOMEM)
			return -ENOMEM;
		/* A table read back for no process yet takes free room only. */
		if (e->preloading && !e->refs)
			return -ENOSPC;
		/* No free room: who could give some, by their hits now. */
		if (!round) {
			read_live_hits(t);
			if (!room_possible(t, e, now))
				return -ENOSPC;
		}
		/* Rows first: evicting for them frees pages too. */
		if (round == 2 || (*rs < 0 && !evict_window(t, e, true, e->nr_rows, now)) ||
		    (*rs >= 0 && *ps < 0 && !evict_window(t, e, false, e->nr_pages, now)))
			return -ENOSPC;
	}
}

/* Global rule ids for a table's local rules, pushing new ones to the map. */
static int intern_rules(struct tables *t, const struct flat_table *ft, uint32_t *ids)
{
	uint32_t i, before;
	int64_t id;
	int err;

	for (i = 0; i < ft->nr_rules; i++) {
		before = t->rules.nr_rules;
		id = ruleset__intern(&t->rules, &ft->rules[i], t->opts.max_rules);
		if (id < 0)
			return (int)id;
		ids[i] = (uint32_t)id;
		if (t->rules.nr_rules == before)
			continue;
		err = bpf_map_update_elem(t->opts.rules_fd, &ids[i], &ft->rules[i], BPF_ANY);
		if (err)
			return -errno;
	}
	return 0;
}

/* e's table takes the slices [rs, +nr_rows) and [ps, +nr_pages). */
static void take_slices(struct tables *t, struct entry *e, struct flat_table *ft, int64_t rs,
			int64_t ps)
{
	e->row_start = rs;
	e->page_start = ps;
	e->has_ranges = true;
	e->pushed_rows = e->pushed_pages = 0;
	e->push_after = t->recycled_ns ? t->recycled_ns + TABLES_QUARANTINE_NS : 0;
	e->ft = ft;
}

int tables_intern_table(struct tables *t, struct flat_table *ft)
{
	uint32_t *ids = calloc(ft->nr_rules ? ft->nr_rules : 1, sizeof(*ids));
	uint32_t i;
	int err;

	if (!ids)
		return -ENOMEM;
	err = intern_rules(t, ft, ids);
	for (i = 0; !err && i < ft->nr_rows; i++)
		ft->rows[i].rule = ids[ft->rows[i].rule];
	free(ids);
	return err;
}

int tables_admit(struct tables *t, struct entry *e, struct flat_table *ft, bool park)
{
	int64_t rs, ps;
	int err;

	/* Sparse tables get coarser pages: page entries cost as much as rows. */
	flat_table__coarsen_pages(ft);
	e->nr_rows = ft->nr_rows;
	e->nr_pages = ft->nr_pages;
	e->pc_min = ft->pc_min;
	e->page_shift = flat_table__page_shift(ft);
	err = tables_intern_table(t, ft);
	if (err)
		goto fail;
	err = make_room(t, e, &rs, &ps);
	if (err == -ENOSPC && park && !t->parked && fits_arena(t, e)) {
		/* Its rules are interned and its rows carry their global ids: kept as is. */
		e->ft = ft;
		e->parked_until = clock__mono_ns() + PARK_NS;
		e->park_retry_ns = clock__mono_ns() + PARK_RETRY_NS;
		t->parked = e;
		return -EAGAIN;
	}
	if (err)
		goto fail;
	take_slices(t, e, ft, rs, ps);
	return 0;
fail:
	flat_table__free(ft);
	return err;
}

bool tables_retry_parked(struct tables *t, uint64_t now)
{
	struct entry *e = t->parked;
	struct flat_table *ft;
	int64_t rs, ps;

	if (!e || now < e->park_retry_ns)
		return false;
	if (now >= e->parked_until) {
		pr_info("%s: still no room for its reload", e->name);
		tables_unpark(t, e);
		return false;
	}
	e->park_retry_ns = now + PARK_RETRY_NS;
	if (make_room(t, e, &rs, &ps))
		return false;
	ft = e->ft;
	t->parked = NULL;
	e->promoting = false;
	t->promoting--;
	take_slices(t, e, ft, rs, ps);
	return true;
}

/* One space's reserve (which: 0 large, 1 small): the free room a table would take, to want. */
static void keep_room(struct segspace *segs, const struct slices *sl, unsigned which, uint32_t want,
		      uint32_t kept[2])
{
	uint32_t len = 0, n;
	int64_t start;

	if (sl->cap < 8 * want)
		return;
	start = slices__fit(sl, which == 1, which == 1 ? 1 : want, &len);
	n = start < 0 ? 0 : len < want ? len : want;
	if (start < 0)
		start = 0;
	if ((uint32_t)start == kept[0] && n == kept[1])
		return;
	if (!segspace__reserve(segs, which, (uint32_t)start, n)) {
		kept[0] = (uint32_t)start;
		kept[1] = n;
	}
}

void tables_keep_room(struct tables *t)
{
	/*
	 * Linking a segment waits out an RCU grace period (10-35 ms): a table
	 * built while its new segments were linked waited for them after its
	 * build, before its slot could be written (cc1's, 480k rows: 31-34
	 * ms). Where the next large table goes, and the next small one (the
	 * libraries: the top eighth), stay linked ahead.
	 */
	keep_room(&t->row_segs, &t->rows, 0, TABLES_RESERVE_ROWS, t->kept[0]);
	keep_room(&t->page_segs, &t->pages, 0, TABLES_RESERVE_ROWS / 8, t->kept[1]);
	keep_room(&t->row_segs, &t->rows, 1, TABLES_RESERVE_SMALL, t->kept[2]);
	keep_room(&t->page_segs, &t->pages, 1, TABLES_RESERVE_SMALL / 8, t->kept[3]);
}

/* ---- hotness -------------------------------------------------------------- */

static void read_heat(struct tables *t)
{
	struct entry *e;
	uint64_t hits, delta;
	uint32_t i;

	for (i = 0; i < t->opts.max_objects; i++) {
		e = t->slots[i];
		if (!e)
			continue;
		e->want_promote = false; /* decided again below */
		if (bpf_map_lookup_elem(t->opts.obj_hits_fd, &i, &hits))
			continue;
		delta = hits >= e->hits_seen ? hits - e->hits_seen : hits;
		e->hits_seen = e->hits_live = hits;
		e->heat = e->heat / 2 + delta;
	}
}

/* The hottest over-budget table that could get room, not yet being reloaded. */
static struct entry *promotion_candidate(struct tables *t, uint64_t now)
{
	struct entry *best = NULL, *e;
	uint32_t i;

	for (i = 0; i < t->opts.max_objects; i++) {
		e = t->slots[i];
		if (!e || e == t->parked || e->state != OBJ_NO_BUDGET || !e->refs || e->in_job ||
		    e->want_promote || !e->heat || (best && e->heat <= best->heat))
			continue;
		if (room_possible(t, e, now))
			best = e;
	}
	return best;
}

/*
 * One reload at a time, the hottest first: reloads admitted together would
 * take each other's room (the smaller, built first, winning).
 */
void tables_rebalance(struct tables *t, uint64_t now)
{
	struct entry *e;
	int i, fd;

	read_heat(t);
	/* A parked reload yields to a hotter one: it only holds the slot while it waits. */
	if (t->parked) {
		e = promotion_candidate(t, now);
		if (e && e->heat > t->parked->heat) {
			pr_info("%s: reload dropped for a hotter one", t->parked->name);
			tables_unpark(t, t->parked);
		}
	}
	for (i = 0; i < MAX_PROMOTIONS && !t->promoting; i++) {
		e = promotion_candidate(t, now);
		if (!e)
			break;
		fd = tables_reopen(e);
		pr_info("%s: hot (%llu), reloading%s", e->name, (unsigned long long)e->heat,
			fd < 0 ? " with the next process that maps it" : "");
		if (fd < 0) {
			e->want_promote = true; /* with the next process that maps it */
			continue;
		}
		if (!tables_start_job(t, e, fd)) {
			e->promoting = true;
			t->promoting++;
			t->stats.promotions++;
		} else {
			e->want_promote = true;
		}
		close(fd);
	}
}
