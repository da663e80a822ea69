// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Partial tables: the rows of the sampled code first, while an object's whole
 * table is being built (see tablepart.h).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps/rowpack.h"
#include "maps/tablebudget.h"
#include "maps/tablepart.h"
#include "tables/flatbuild.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/vec.h"

/* Whether e's slot may show a partial table now. */
static bool takes_pcs(const struct tables *t, const struct entry *e)
{
	/*
	 * A first build only (a reload's slot says NO_BUDGET, by design), and
	 * not a table other files share: theirs must come from the bytes they
	 * were compared with, and this one is read from the file as it is.
	 * Nor a table being read back from the cache: that takes milliseconds.
	 */
	return !t->opts.no_partial && t->opts.async && !t->opts.no_cfi && e->slot >= 0 &&
	       e->state == OBJ_PENDING && e->in_job && !e->promoting && !e->preloading &&
	       !e->nr_aliases && e->digest_state == DIGEST_NONE && (!e->part || !e->part->failed);
}

/* Whether the published partial table has a rule (not a gap) at pc. */
static bool covered(const struct tables *t, const struct entry_part *p, uint32_t pc)
{
	int64_t i;
	uint32_t rule;

	if (!p->ft)
		return false;
	i = flat_table__lookup(p->ft, pc);
	if (i < 0)
		return false;
	rule = p->ft->rows[i].rule; /* a global id once published */
	return rule < t->rules.nr_rules && !(t->rules.rules[rule].flags & SFBPF_RULE_GAP);
}

/* Where pc is, or would go, in p's sorted PCs. */
static uint32_t pc_index(const struct entry_part *p, uint64_t pc)
{
	uint32_t lo = 0, hi = p->nr_pcs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->pcs[mid] < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tablepart_want(struct tables *t, struct entry *e, uint64_t pc)
{
	struct entry_part *p;
	uint32_t i;

	if (!takes_pcs(t, e) || pc > UINT32_MAX)
		return 0;
	if (!e->part) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return 0;
		p->fd = -1;
		p->next = t->parts;
		t->parts = e;
		e->part = p;
	}
	p = e->part;
	if (covered(t, p, (uint32_t)pc))
		return 0;
	i = pc_index(p, pc);
	if (i < p->nr_pcs && p->pcs[i] == pc)
		return 1;
	if (p->nr_pcs == TABLEPART_MAX_PCS ||
	    VEC_RESERVE(p->pcs, p->cap_pcs, (size_t)p->nr_pcs + 1, 64) ||
	    VEC_RESERVE(p->fresh, p->cap_fresh, (size_t)p->nr_fresh + 1, 64))
		return 1;
	memmove(p->pcs + i + 1, p->pcs + i, (p->nr_pcs - i) * sizeof(*p->pcs));
	p->pcs[i] = pc;
	p->nr_pcs++;
	p->fresh[p->nr_fresh++] = pc;
	t->stats.partial_pcs++;
	return 1;
}

/*
 * The file, its FDEs found in .eh_frame_hdr as the PCs ask for them
 * (cfi_index__open_lookup), here: a millisecond for a compiler (its
 * sections and symbols read), where waiting for its whole build's index
 * took 15-30 ms. False: no such table (p->no_lookup from then on).
 */
static bool open_lookup(struct tables *t, struct entry *e)
{
	struct entry_part *p = e->part;
	int fd = tables_reopen(e), err = fd < 0 ? fd : cfi_index__open_lookup(fd, &p->ix);

	if (!err && (err = complete__read_fd(fd, &p->ci))) {
		cfi_index__free(p->ix);
		p->ix = NULL;
	}
	if (err) {
		if (fd >= 0)
			close(fd);
		p->no_lookup = true;
		return false;
	}
	p->fd = fd;
	t->stats.partial_lookups++;
	return true;
}

/*
 * The file and its FDEs, read on a loader thread (10-20 ms for a compiler:
 * on the sampling thread, no sample was read meanwhile), for an object
 * without .eh_frame_hdr. The PCs asked for wait for it; false when e gets
 * no partial table.
 */
static bool start_index(struct tables *t, struct entry *e)
{
	struct entry_part *p = e->part;
	struct tableload_job *job;
	int fd = tables_reopen(e);

	job = fd >= 0 ? tableload_job__new(fd, e->name, NULL) : NULL;
	if (fd >= 0)
		close(fd);
	if (!job) {
		p->failed = true;
		return false;
	}
	p->id = ++t->part_ids;
	job->owner = (void *)(uintptr_t)p->id;
	job->index_only = true;
	job->size = 0; /* small work: either thread, first */
	if (tableload__submit(t->loader, job)) {
		tableload_job__free(job);
		return false; /* the queue is full: tried again at the next PC */
	}
	p->indexing = true;
	return true;
}

void tablepart_indexed(struct tables *t, struct tableload_job *job)
{
	uint64_t id = (uint64_t)(uintptr_t)job->owner;
	struct entry_part *p;
	struct entry *e;

	for (e = t->parts; e; e = e->part->next) {
		p = e->part;
		if (p->id != id || !p->indexing)
			continue;
		p->indexing = false;
		if (job->err) {
			/* Outermost functions, PLT sections, Go's stack switches: needed too. */
			pr_debug("%s: no partial table: %s", e->name, strerror(-job->err));
			p->failed = true;
			return;
		}
		p->ix = job->ix;
		p->ci = job->ci;
		p->fd = job->fd;
		job->ix = NULL;
		job->fd = -1;
		return;
	}
}

/*
 * The code around the first nr_fresh PCs asked for since the last build
 * (TABLEPART_AROUND FDEs on each side), less the code walked before (its
 * FDEs are in p->local), into want (room for nr_fresh + nr_walked ranges):
 * their number, sorted and disjoint, or -ENOMEM.
 */
static int64_t wanted_ranges(struct entry_part *p, uint32_t nr_fresh, struct cfi_range *want)
{
	struct cfi_range *asked = calloc(nr_fresh, sizeof(*asked));
	uint32_t i, j = 0, n, m = 0;
	uint64_t lo;

	if (!asked)
		return -ENOMEM;
	for (i = 0; i < nr_fresh; i++)
		if (!cfi_index__around(p->ix, p->fresh[i], TABLEPART_AROUND, &asked[i]))
			asked[i] = (struct cfi_range){ p->fresh[i], p->fresh[i] + 1 };
	n = cfi_ranges__join(asked, nr_fresh);
	/* asked less walked: both sorted and disjoint. */
	for (i = 0; i < n; i++) {
		lo = asked[i].lo;
		while (j < p->nr_walked && p->walked[j].hi <= lo)
			j++;
		while (j < p->nr_walked && p->walked[j].lo < asked[i].hi) {
			if (p->walked[j].lo > lo)
				want[m++] = (struct cfi_range){ lo, p->walked[j].lo };
			if (p->walked[j].hi >= asked[i].hi)
				break;
			lo = p->walked[j++].hi;
		}
		if (j == p->nr_walked || p->walked[j].lo >= asked[i].hi)
			want[m++] = (struct cfi_range){ lo, asked[i].hi };
	}
	free(asked);
	return m;
}

/*
 * After a walk of want[0 .. n) for the first nr fresh PCs that stopped at
 * done (its time up; UINT64_MAX: it walked all): the code below done joins
 * p->walked (never walked again), and the PCs at or past it stay first in
 * the queue, in the order they were asked, for the next round. 0 or -ENOMEM.
 */
static int took(struct entry_part *p, uint32_t nr, const struct cfi_range *want, uint32_t n,
		uint64_t done)
{
	struct cfi_range *all;
	uint32_t i, m = p->nr_walked, k = 0;

	if (n && want[0].lo < done) {
		all = realloc(p->walked, ((size_t)m + n) * sizeof(*all));
		if (!all)
			return -ENOMEM;
		for (i = 0; i < n && want[i].lo < done; i++) {
			all[m] = want[i];
			all[m].hi = all[m].hi < done ? all[m].hi : done;
			m++;
		}
		p->walked = all;
		p->nr_walked = cfi_ranges__join(all, m);
	}
	for (i = 0; i < nr; i++)
		if (p->fresh[i] >= done)
			p->fresh[k++] = p->fresh[i];
	memmove(p->fresh + k, p->fresh + nr, (p->nr_fresh - nr) * sizeof(*p->fresh));
	p->nr_fresh -= nr - k;
	return 0;
}

/*
 * The rows of the FDEs around the PCs asked for since the last build (the
 * first TABLEPART_ROUND_PCS of them), walked until deadline (those it did
 * not reach are asked for again), merged into those built before (a table
 * of thousands of FDEs is not walked again for a few more), then completed
 * as the whole table is (rules still local): 0, -ENOENT (none of them has
 * an FDE: nothing new), or an error.
 */
static int build(struct entry_part *p, uint64_t deadline, struct flat_table **out)
{
	uint32_t nr = p->nr_fresh < TABLEPART_ROUND_PCS ? p->nr_fresh : TABLEPART_ROUND_PCS;
	struct cfi_range *want = calloc((size_t)nr + p->nr_walked, sizeof(*want));
	struct flat_table *cft = NULL, *all = NULL;
	struct complete_info ci;
	int64_t n = want ? wanted_ranges(p, nr, want) : -ENOMEM;
	int err = n < 0 ? (int)n : 0, taken;
	uint64_t done = UINT64_MAX;

	*out = NULL;
	/*
	 * Within the round's deadline, not only checked between rounds: a
	 * stack scan's PCs in a big object name a few thousand FDEs (a
	 * millisecond or two), more on a slow machine.
	 */
	if (!err && n)
		err = cfi_index__flatten_until(p->ix, want, (uint32_t)n, deadline, &done, &cft,
					       NULL);
	/* Taken whatever the walk did, but the PCs it did not reach: none is asked for forever. */
	taken = took(p, nr, want, err ? 0 : (uint32_t)n, err ? UINT64_MAX : done);
	err = err ? err : taken;
	free(want);
	if (!err && (!cft || !cft->nr_rows))
		err = -ENOENT;
	if (!err && p->local)
		err = flat_table__merge(p->local, cft, &all);
	if (!err) {
		if (all)
			flat_table__free(cft);
		else
			all = cft;
		cft = NULL;
		flat_table__free(p->local);
		p->local = all;
		/*
		 * Not the entry code's outermost rule (complete.h), wherever p->ci
		 * came from: a partial table has only the sampled functions' rows,
		 * so its gap after the entry point may run on over functions it
		 * has not read.
		 */
		ci = p->ci;
		ci.entry = (struct complete_range){ 0, 0 };
		err = complete__merge(NULL, p->local, &ci, out);
	}
	flat_table__free(cft);
	return err;
}

/* Where one partial table lies in the row and page arrays. */
struct part_slices {
	uint32_t row_start, nr_rows, page_start, nr_pages;
};

/* New slices for ft's rows and pages, mapped for writes: 0, or an error (none taken). */
static int take_slices(struct tables *t, const struct flat_table *ft, struct part_slices *out)
{
	int64_t rs = slices__alloc(&t->rows, ft->nr_rows);
	int64_t ps = rs >= 0 ? slices__alloc(&t->pages, ft->nr_pages) : -ENOSPC;
	int err = rs < 0 ? (int)rs : ps < 0 ? (int)ps : 0;

	if (!err) {
		err = segspace__get(&t->row_segs, rs, ft->nr_rows);
		if (!err && (err = segspace__get(&t->page_segs, ps, ft->nr_pages)))
			segspace__put(&t->row_segs, rs, ft->nr_rows);
	}
	if (err) {
		if (rs >= 0)
			slices__release(&t->rows, rs, ft->nr_rows);
		if (ps >= 0)
			slices__release(&t->pages, ps, ft->nr_pages);
		return err;
	}
	*out = (struct part_slices){ rs, ft->nr_rows, ps, ft->nr_pages };
	return 0;
}

static void release_slices(struct tables *t, const struct part_slices *s)
{
	tables_release_ranges(t, s->row_start, s->nr_rows, s->page_start, s->nr_pages);
}

/* Writes ft to its slices (published later: finish()). */
static int write_slices(struct tables *t, const struct part_slices *s, const struct flat_table *ft)
{
	struct sfbpf_row packed;
	uint32_t i;
	int err;

	err = segspace__map(&t->row_segs, s->row_start, ft->nr_rows);
	if (!err)
		err = segspace__map(&t->page_segs, s->page_start, ft->nr_pages);
	if (!err) {
		for (i = 0; i < ft->nr_rows; i++) {
			packed = rowpack__row(ft, i);
			memcpy(segspace__entry(&t->row_segs, s->row_start + i), &packed,
			       sizeof(packed));
		}
		segspace__write(&t->page_segs, s->page_start, ft->pages, ft->nr_pages);
	}
	/* Unmapped as the pushes do (they map what they write again): not in our RSS. */
	segspace__unmap(&t->row_segs);
	segspace__unmap(&t->page_segs);
	return err;
}

/*
 * The written table in e's slot once its segments are linked: 1 (published;
 * the one before given back), 0 (not yet: a new segment's link waits out its
 * grace period on the linker's thread, which wakes the sampling thread when
 * done), or an error (its slices given back; the table published before, if
 * any, stays until the whole one; -ESTALE: e takes no partial table now).
 */
static int finish(struct tables *t, struct entry *e)
{
	struct entry_part *p = e->part;
	struct flat_table *ft = p->wait_ft;
	struct part_slices s = { p->wait_row_start, p->wait_nr_rows, p->wait_page_start,
				 p->wait_nr_pages };
	struct sfbpf_object obj = { .row_start = s.row_start,
				    .row_count = ft->nr_rows,
				    .page_start = s.page_start,
				    .page_count = ft->nr_pages,
				    .pc_min = ft->pc_min,
				    .flags = SFBPF_OBJ_F_PAGE_SHIFT(flat_table__page_shift(ft)) };
	uint32_t key = e->slot;
	int ret;

	if (!takes_pcs(t, e)) {
		/* Its whole table is in (or given up) meanwhile. */
		p->wait_ft = NULL;
		release_slices(t, &s);
		flat_table__free(ft);
		return -ESTALE;
	}
	ret = segspace__linked(&t->row_segs, s.row_start, s.nr_rows);
	if (ret > 0)
		ret = segspace__linked(&t->page_segs, s.page_start, s.nr_pages);
	if (!ret)
		return 0;
	if (ret > 0) {
		/* The walk sees the slot's table whole or not at all: rows first, then the slot. */
		obj.gen = ++t->table_gen;
		if (bpf_map_update_elem(t->opts.objects_fd, &key, &obj, BPF_ANY))
			ret = -errno;
	}
	p->wait_ft = NULL;
	if (ret < 0) {
		pr_debug("%s: partial table not published: %s", e->name, strerror(-ret));
		release_slices(t, &s);
		flat_table__free(ft);
		p->failed = true;
		return ret;
	}
	if (p->has_ranges)
		tables_release_ranges(t, p->row_start, p->nr_rows, p->page_start, p->nr_pages);
	flat_table__free(p->ft);
	p->ft = ft;
	p->has_ranges = true;
	p->row_start = s.row_start, p->nr_rows = s.nr_rows;
	p->page_start = s.page_start, p->nr_pages = s.nr_pages;
	t->stats.partial_tables++;
	t->stats.partial_rows += ft->nr_rows;
	pr_debug("%s: partial table in use, %u rows for %u PCs", e->name, ft->nr_rows, p->nr_pcs);
	return 1;
}

/* e's partial table again, with the PCs asked for since the last one, until deadline. */
static void update(struct tables *t, struct entry *e, uint64_t deadline)
{
	struct entry_part *p = e->part;
	struct flat_table *ft = NULL;
	struct part_slices s;
	int err, ret;

	if (!p->ix) {
		/*
		 * The whole build's index if it has read it already; else
		 * .eh_frame_hdr's table; else the index once the build has read
		 * it, or an index job of its own.
		 */
		ret = tableload__shared_index(t->loader, e, &p->ix, &p->ci);
		if (ret > 0) {
			p->indexing = false; /* an index job asked before finds no taker */
			t->stats.partial_shared++;
		} else if (!p->no_lookup && open_lookup(t, e)) {
			p->indexing = false;
		} else {
			if (ret < 0 && !p->indexing)
				start_index(t, e);
			return;
		}
	}
	err = build(p, deadline, &ft);
	if (err == -ENOENT)
		return; /* no FDE covers any of them: they stay gaps */
	if (!err) {
		flat_table__coarsen_pages(ft);
		err = tables_intern_table(t, ft);
	}
	if (!err && !(err = take_slices(t, ft, &s)) && (err = write_slices(t, &s, ft)))
		release_slices(t, &s);
	if (err) {
		/* The table published before (if any) stays until the whole one. */
		pr_debug("%s: partial table not published: %s", e->name, strerror(-err));
		flat_table__free(ft);
		p->failed = true;
		return;
	}
	p->wait_ft = ft;
	p->wait_row_start = s.row_start, p->wait_nr_rows = s.nr_rows;
	p->wait_page_start = s.page_start, p->wait_nr_pages = s.nr_pages;
	finish(t, e);
}

void tablepart_process(struct tables *t, uint64_t deadline)
{
	struct entry *e, *next;
	struct entry_part *p;

	for (e = t->parts; e; e = next) {
		p = e->part;
		next = p->next;
		if (p->wait_ft && finish(t, e) == 0)
			continue; /* the next table waits for the one written */
		if (!p->nr_fresh || !takes_pcs(t, e))
			continue;
		/* New slices may be ones just freed, still read by a walk in flight. */
		if (clock__mono_ns() < t->recycled_ns + TABLES_QUARANTINE_NS ||
		    clock__mono_ns() >= deadline)
			break;
		update(t, e, deadline);
	}
}
