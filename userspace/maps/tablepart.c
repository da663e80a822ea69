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
 * The file and its FDEs, read on a loader thread (10-20 ms for a compiler:
 * on the sampling thread, no sample was read meanwhile). The PCs asked for
 * wait for it; false when e gets no partial table.
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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The rows of the FDEs covering the PCs asked for since the last build,
 * merged into those built before (each FDE is walked once: a table of
 * thousands of FDEs is not walked again for one more), then completed as
 * the whole table is (rules still local): 0, -ENOENT (none of them has an
 * FDE: nothing new), or an error.
 */
static int build(struct entry_part *p, struct flat_table **out)
{
	struct cfi_range *want = calloc(p->nr_fresh, sizeof(*want));
	struct flat_table *cft = NULL, *all = NULL;
	uint32_t i;
	int err = -ENOMEM;

	*out = NULL;
	if (!want)
		return err;
	qsort(p->fresh, p->nr_fresh, sizeof(*p->fresh), cmp_u64);
	for (i = 0; i < p->nr_fresh; i++)
		want[i] = (struct cfi_range){ p->fresh[i], p->fresh[i] + 1 };
	err = cfi_index__flatten(p->ix, want, p->nr_fresh, &cft, NULL);
	p->nr_fresh = 0;
	free(want);
	if (!err && !cft->nr_rows)
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
		err = complete__merge(NULL, p->local, &p->ci, out);
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

/* Writes ft to its slices, then the slot: the walk sees it whole or not at all. */
static int publish(struct tables *t, const struct entry *e, const struct part_slices *s,
		   const struct flat_table *ft)
{
	struct sfbpf_object obj = { .row_start = s->row_start,
				    .row_count = ft->nr_rows,
				    .page_start = s->page_start,
				    .page_count = ft->nr_pages,
				    .pc_min = ft->pc_min,
				    .flags = SFBPF_OBJ_F_PAGE_SHIFT(flat_table__page_shift(ft)),
				    .gen = ++t->table_gen };
	struct sfbpf_row packed;
	uint32_t key = e->slot, i;
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
	/* A few hundred rows: a new segment for them is rare, and waited for. */
	if (!err && (err = segspace__wait_linked(&t->row_segs, s->row_start, ft->nr_rows)) > 0)
		err = segspace__wait_linked(&t->page_segs, s->page_start, ft->nr_pages);
	if (err > 0)
		err = 0;
	if (!err && bpf_map_update_elem(t->opts.objects_fd, &key, &obj, BPF_ANY))
		err = -errno;
	return err;
}

/* e's partial table again, with the PCs asked for since the last one. */
static void update(struct tables *t, struct entry *e)
{
	struct entry_part *p = e->part;
	struct part_slices old = { p->row_start, p->nr_rows, p->page_start, p->nr_pages }, s;
	struct flat_table *ft = NULL;
	int err, ret;

	if (!p->ix) {
		/* The whole build's index, as soon as it has read it; else a job of its own. */
		ret = tableload__shared_index(t->loader, e, &p->ix, &p->ci);
		if (ret < 0 && !p->indexing)
			start_index(t, e);
		if (ret <= 0)
			return;
		p->indexing = false; /* an index job asked before finds no taker */
		t->stats.partial_shared++;
	}
	err = build(p, &ft);
	if (err == -ENOENT)
		return; /* no FDE covers any of them: they stay gaps */
	if (!err) {
		flat_table__coarsen_pages(ft);
		err = tables_intern_table(t, ft);
	}
	if (!err && !(err = take_slices(t, ft, &s)) && (err = publish(t, e, &s, ft)))
		release_slices(t, &s);
	if (err) {
		/* The table published before (if any) stays until the whole one. */
		pr_debug("%s: partial table not published: %s", e->name, strerror(-err));
		flat_table__free(ft);
		p->failed = true;
		return;
	}
	if (p->has_ranges)
		release_slices(t, &old);
	flat_table__free(p->ft);
	p->ft = ft;
	p->has_ranges = true;
	p->row_start = s.row_start, p->nr_rows = s.nr_rows;
	p->page_start = s.page_start, p->nr_pages = s.nr_pages;
	t->stats.partial_tables++;
	t->stats.partial_rows += ft->nr_rows;
	pr_debug("%s: partial table in use, %u rows for %u PCs", e->name, ft->nr_rows, p->nr_pcs);
}

void tablepart_process(struct tables *t, uint64_t deadline)
{
	struct entry *e, *next;
	struct entry_part *p;

	for (e = t->parts; e; e = next) {
		p = e->part;
		next = p->next;
		if (!p->nr_fresh || !takes_pcs(t, e))
			continue;
		/* New slices may be ones just freed, still read by a walk in flight. */
		if (clock__mono_ns() < t->recycled_ns + TABLES_QUARANTINE_NS ||
		    clock__mono_ns() >= deadline)
			break;
		update(t, e);
	}
}
