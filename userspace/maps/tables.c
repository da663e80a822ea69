// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Map loader (see tables.h). Rows and page indexes of all objects share two
 * spaces of segments (segments.h); each object owns a contiguous slice handed
 * out by a range allocator, and segments exist where slices are. An object
 * becomes visible to the BPF side only when its entry in the objects map is
 * written, after its rows, rules and pages are in place.
 * The budget and the choice of what to evict are in tablebudget.c, what is
 * done to one entry (slot, slices, freeing, reopening) in entries.c: this file
 * calls both, neither calls it.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "maps/rowpack.h"
#include "maps/tablebudget.h"
#include "maps/tablepart.h"
#include "maps/tableshare.h"
#include "tables/tablecache.h"
#include "tables/tableident.h"
#include "util/clock.h"
#include "util/log.h"

/*
 * Rows (or pages) written per step at most, into the mapped segments: a few
 * milliseconds of the sampling thread's time.
 */
#define PUSH_SLICE (512u << 10)
#define AGE_EVERY_NS 1000000000ULL
/* A table-less file is parsed again after this long unused. */
#define NEGATIVE_TTL_NS (600 * 1000000000ULL)

struct tables *tables__new(const struct tables_opts *opts)
{
	struct tableload_opts lopts = { .threaded = opts->async,
					.no_cfi = opts->no_cfi,
					.cache = opts->cache };
	struct tables *t = calloc(1, sizeof(*t));
	struct tables_sizes sz = { opts->max_rows, opts->max_pages, opts->max_rules,
				   opts->max_objects, opts->seg_shift };
	bool ok;

	if (!t)
		return NULL;
	t->opts = *opts;
	/* Rule indexes are 16 bits in a row. */
	if (t->opts.max_rules > SFBPF_MAX_RULES)
		t->opts.max_rules = SFBPF_MAX_RULES;
	ok = !slices__init(&t->rows, opts->max_rows) && !slices__init(&t->pages, opts->max_pages) &&
	     !segspace__init(&t->row_segs, opts->rows_fd, opts->max_rows, opts->seg_shift) &&
	     !segspace__init(&t->page_segs, opts->pages_fd, opts->max_pages, opts->seg_shift);
	t->slots = calloc(opts->max_objects ? opts->max_objects : 1, sizeof(*t->slots));
	t->slot_freed_ns = calloc(opts->max_objects ? opts->max_objects : 1, sizeof(uint64_t));
	t->fork_horizon_ns = UINT64_MAX;
	t->loader = tableload__new(&lopts);
	t->push_tail = &t->push_head;
	/* An empty segment lingers as an unreferenced table does. */
	t->row_segs.linger_ns = t->page_segs.linger_ns = opts->linger_ns;
	if (!ok || !t->slots || !t->slot_freed_ns || !t->loader) {
		tables__free(t);
		return NULL;
	}
	/*
	 * The grace period of each segment's link on a thread of its own: the
	 * sampling thread publishes a table once they are linked (push_slice).
	 */
	if (opts->async && (segspace__set_async(&t->row_segs, tableload__wake_fd(t->loader)) ||
			    segspace__set_async(&t->page_segs, tableload__wake_fd(t->loader))))
		pr_info("table segments are linked on the sampling thread");
	else if (opts->async)
		tables_keep_room(t); /* linked while the programs load and the scan runs */
	t->stats.rows_capacity = opts->max_rows;
	t->stats.pages_capacity = opts->max_pages;
	t->stats.rules_capacity = t->opts.max_rules;
	t->stats.budget_bytes = opts->budget_bytes ? opts->budget_bytes : tables__map_bytes(&sz);
	t->next_age_ns = clock__mono_ns() + AGE_EVERY_NS;
	t->next_rebalance_ns = clock__mono_ns() + TABLES_REBALANCE_NS;
	return t;
}

void tables__free(struct tables *t)
{
	size_t iter = 0;
	uint64_t val;

	if (!t)
		return;
	/* The loader first: its jobs point at entries. */
	tableload__free(t->loader);
	while (hashmap__next(&t->by_key, &iter, &val))
		entry__free(HASHMAP_TO_PTR(val));
	hashmap__free(&t->by_key);
	hashmap__free(&t->by_hint);
	hashmap__free(&t->by_alias);
	free(t->slots);
	free(t->slot_freed_ns);
	segspace__fini(&t->row_segs);
	segspace__fini(&t->page_segs);
	ruleset__clear(&t->rules);
	slices__fini(&t->rows);
	slices__fini(&t->pages);
	free(t);
}

/* ---- the objects map ------------------------------------------------------ */

static int publish_table(struct tables *t, const struct entry *e)
{
	struct sfbpf_object obj = { .row_start = e->row_start,
				    .row_count = e->nr_rows,
				    .page_start = e->page_start,
				    .page_count = e->nr_pages,
				    .pc_min = e->pc_min,
				    .flags = SFBPF_OBJ_F_PAGE_SHIFT(e->page_shift),
				    .gen = ++t->table_gen };
	uint32_t key = e->slot;

	return bpf_map_update_elem(t->opts.objects_fd, &key, &obj, BPF_ANY) ? -errno : 0;
}

/*
 * Rows [from, from + n) of e's table, packed (abi.h: the low 16 bits of the PC
 * from pc_min, and the rule's global index) into its slice.
 */
static void write_rows(struct tables *t, const struct entry *e, uint32_t from, uint32_t n)
{
	struct sfbpf_row packed;
	uint32_t i;

	for (i = from; i < from + n; i++) {
		packed = rowpack__row(e->ft, i);
		memcpy(segspace__entry(&t->row_segs, e->row_start + i), &packed, sizeof(packed));
	}
}

/* ---- building and pushing ------------------------------------------------- */

/* No table for e: remembered (with its slot while referenced). */
static void set_no_table(struct tables *t, struct entry *e, int err)
{
	char file[OBJ_KEY_FILE_MAX];

	if (e->has_ranges)
		tables_drop_rows(t, e);
	e->state = OBJ_NO_TABLE;
	e->err = err;
	if (e->refs)
		tables_publish_flags(t, e->slot, SFBPF_OBJ_F_NO_TABLE);
	else
		tables_release_slot(t, e);
	tables_drop_part(t, e); /* unpublished just now */
	obj_key__file(&e->key, file);
	pr_info("%s: table not loaded: %s (%s)", e->name,
		err == -ENOENT ? "no .sframe, no DWARF CFI" : strerror(-err), file);
}

/* e has its slices: its rows are written from the sampling thread, in slices. */
static void queue_push(struct tables *t, struct entry *e)
{
	e->state = OBJ_PUSHING;
	e->push_next = NULL;
	*t->push_tail = e;
	t->push_tail = &e->push_next;
	t->nr_pushing++;
}

/*
 * A table read back at start is not in the cache after all (evicted, or
 * refused): forgotten, not remembered as a file without a table. A process
 * that mapped the file meanwhile gets it built from the file.
 */
static void preload_failed(struct tables *t, struct entry *e)
{
	int fd;

	e->preloading = false;
	if (!e->refs) {
		tables_free_entry(t, e);
		return;
	}
	fd = tables_reopen(e);
	if (fd >= 0 && !tables_start_job(t, e, fd)) {
		close(fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	set_no_table(t, e, fd < 0 ? fd : -EAGAIN);
}

/* A finished build: into the push queue if it fits the budget. */
static void job_done(struct tables *t, struct tableload_job *job)
{
	struct entry *e = job->owner;
	bool reload = e->promoting;
	int err;

	e->in_job = false;
	if (e->preloading && job->err) {
		preload_failed(t, e);
		return;
	}
	if (e->promoting) {
		e->promoting = false;
		t->promoting--;
	}
	t->stats.loads++;
	t->stats.load_ns += job->build_ns;
	if (job->build_ns > t->stats.max_load_ns)
		t->stats.max_load_ns = job->build_ns;
	if (job->chunks) {
		t->stats.split_builds++;
		t->stats.split_chunks += job->chunks;
		t->stats.split_chunks_helped += job->chunks_helped;
	}
	if (job->rejected && !e->counted_rejected) {
		t->stats.objects_rejected++;
		e->counted_rejected = true;
	}
	if (job->err) {
		set_no_table(t, e, job->err);
		return;
	}
	/*
	 * Its aliases were found equal to e->digest: a table built from other
	 * bytes (the file rewritten in place, within one ctime tick, since it
	 * was compared or first built) is not theirs, nor e's any more.
	 */
	if (e->digest_state != DIGEST_NONE &&
	    (!job->has_digest || memcmp(job->digest, e->digest, SHA256_BYTES))) {
		pr_info("%s: rewritten in place since its bytes were compared", e->name);
		t->stats.same_id_other_bytes++;
		set_no_table(t, e, -ESTALE);
		return;
	}
	if (job->has_digest) {
		memcpy(e->digest, job->digest, SHA256_BYTES);
		e->digest_state = DIGEST_BUILT;
	}
	e->from_cfi = job->from_cfi;
	e->sframe_bytes = job->sframe_bytes;
	err = tables_admit(t, e, job->ft, reload && e->refs);
	e->preloading = false;
	job->ft = NULL; /* taken */
	if (err == -EAGAIN) {
		/* Parked: still the one reload under way; tried again as its way clears. */
		pr_info("%s: %u rows over the table budget, for now", e->name, e->nr_rows);
		e->promoting = true;
		t->promoting++;
		t->stats.objects_over_budget++;
		return;
	}
	if (err == -ENOSPC) {
		pr_info("%s: %u rows over the table budget", e->name, e->nr_rows);
		e->state = OBJ_NO_BUDGET;
		t->stats.objects_over_budget++;
		if (e->refs) {
			tables_publish_flags(t, e->slot, SFBPF_OBJ_F_NO_BUDGET);
			tables_drop_part(t, e);
		} else {
			tables_free_entry(t, e);
		}
		return;
	}
	if (err) {
		set_no_table(t, e, err);
		return;
	}
	queue_push(t, e);
}

static void collect_done(struct tables *t)
{
	struct tableload_job *job;

	while ((job = tableload__take(t->loader))) {
		if (job->index_only)
			tablepart_indexed(t, job);
		else
			job_done(t, job);
		tableload_job__free(job);
	}
}

/* Pushed completely: publish it, or let it go if nobody wants it any more. */
static void push_finished(struct tables *t, struct entry *e)
{
	struct flat_table *ft = e->ft;
	char file[OBJ_KEY_FILE_MAX];
	int err;

	err = publish_table(t, e);
	if (err) {
		set_no_table(t, e, err);
		return;
	}
	/* The whole table replaces the partial one: its slices go. */
	tables_drop_part(t, e);
	e->state = OBJ_LOADED;
	e->loaded_ns = e->used_ns = clock__mono_ns();
	tables_note_loaded(t, e);
	/* The moment the walk can use it; the file named as the kernel knows it. */
	obj_key__file(&e->key, file);
	pr_info("%s: table in use, %u rows (%s)", e->name, ft->nr_rows, file);
	if (e->from_cfi) {
		t->stats.objects_eh_frame++;
		t->stats.rows_eh_frame += ft->nr_rows;
	} else {
		t->stats.objects_sframe++;
		t->stats.rows_sframe += ft->nr_rows;
		t->stats.sframe_bytes += e->sframe_bytes;
	}
	if (ft->nr_rows > t->stats.max_rows_object)
		t->stats.max_rows_object = ft->nr_rows;
	flat_table__free(ft);
	e->ft = NULL;
	if (!e->refs && !t->opts.linger_ns)
		tables_free_entry(t, e);
}

/*
 * Writes a slice of the rows and pages of the head of the push queue.
 * Returns 1 when there is more to push, 0 when the queue is empty, -EAGAIN
 * when the head must wait for freed slices to be quiet.
 */
static int push_slice(struct tables *t)
{
	struct entry *e = t->push_head;
	struct flat_table *ft;
	uint32_t n;

	if (!e)
		return 0;
	if (clock__mono_ns() < e->push_after)
		return -EAGAIN;
	ft = e->ft;
	/* Unmapped once the queue empties (below): mapped here, where they are written. */
	if (segspace__map(&t->row_segs, e->row_start, ft->nr_rows) ||
	    segspace__map(&t->page_segs, e->page_start, ft->nr_pages))
		return -EAGAIN;
	n = ft->nr_rows - e->pushed_rows;
	n = n < PUSH_SLICE ? n : PUSH_SLICE;
	write_rows(t, e, e->pushed_rows, n);
	e->pushed_rows += n;
	if (e->pushed_rows == ft->nr_rows) {
		n = ft->nr_pages - e->pushed_pages;
		n = n < PUSH_SLICE ? n : PUSH_SLICE;
		segspace__write(&t->page_segs, e->page_start + e->pushed_pages,
				ft->pages + e->pushed_pages, n);
		e->pushed_pages += n;
	}
	if (e->pushed_rows < ft->nr_rows || e->pushed_pages < ft->nr_pages)
		return 1;
	t->push_head = e->push_next;
	if (!t->push_head) {
		t->push_tail = &t->push_head;
		/* Nothing left to write: the mappings would only count in our RSS. */
		segspace__unmap(&t->row_segs);
		segspace__unmap(&t->page_segs);
	}
	/* Written; published once its segments are in the arrays of maps (publish_linked). */
	e->push_next = t->linking;
	t->linking = e;
	return 1;
}

/* The written tables whose segments are linked now: published (or failed). */
static void publish_linked(struct tables *t)
{
	struct entry **pp = &t->linking, *e;
	int linked;

	while ((e = *pp)) {
		linked = segspace__linked(&t->row_segs, e->row_start, e->ft->nr_rows);
		if (linked > 0)
			linked = segspace__linked(&t->page_segs, e->page_start, e->ft->nr_pages);
		if (!linked) {
			pp = &e->push_next;
			continue;
		}
		*pp = e->push_next;
		t->nr_pushing--;
		if (linked < 0)
			set_no_table(t, e, linked);
		else
			push_finished(t, e);
	}
}

/* Pushes until the queue is empty or the deadline passes (0: no deadline). */
static void push_until(struct tables *t, uint64_t deadline)
{
	uint64_t start = clock__mono_ns();
	struct timespec nap = { 0, 200000 };
	int ret;

	for (;;) {
		ret = push_slice(t);
		publish_linked(t);
		if (!ret && t->linking)
			ret = -EAGAIN; /* all written, not all linked yet */
		if (ret == -EAGAIN && !deadline) {
			nanosleep(&nap, NULL);
			continue;
		}
		if (ret <= 0 || (deadline && clock__mono_ns() >= deadline))
			break;
	}
	t->stats.push_ns += clock__mono_ns() - start;
}

/* Synchronous loader: what was just built goes to the maps at once. */
static void settle(struct tables *t)
{
	if (t->opts.async)
		return;
	collect_done(t);
	push_until(t, 0);
}

/* ---- acquire and release -------------------------------------------------- */

/* e's build, if still queued, goes ahead of the others (once a build). */
static void hurry(struct tables *t, struct entry *e)
{
	if (!e->in_job || e->hurried)
		return;
	e->hurried = true;
	if (tableload__hurry(t->loader, e))
		t->stats.hurried++;
}

/* A known object: one more reference (and a reload, if it turned hot). */
static int64_t acquire_known(struct tables *t, struct entry *e, int fd,
			     const struct tables_src *src)
{
	e->used_ns = clock__mono_ns();
	tables_note_src(e, src);
	/* Only table-less files are remembered without a slot. */
	if (e->slot < 0)
		return -ENOENT;
	e->refs++;
	if (e->preloaded) {
		e->preloaded = false;
		t->stats.preload_used++;
		/* Its process's start-up waits for it now (tables__pending_at), and it goes first.
		 */
		if (e->in_job && !e->job_seq)
			e->job_seq = ++t->job_seq;
		hurry(t, e);
	}
	if (e->state == OBJ_NO_BUDGET && e->want_promote && !e->in_job && !t->promoting &&
	    !tables_start_job(t, e, fd)) {
		e->want_promote = false;
		e->promoting = true;
		t->promoting++;
		t->stats.promotions++;
		settle(t);
	}
	return e->slot;
}

int64_t tables__acquire_src(struct tables *t, int fd, const struct obj_key *key, const char *name,
			    const struct tables_src *src)
{
	struct entry *e = tables_find_entry(t, key);
	char file[OBJ_KEY_FILE_MAX];
	int64_t slot;
	int err;

	if (!e && (e = tables_find_same_bytes(t, fd, key))) {
		obj_key__file(key, file);
		pr_info("%s: the table of %s, same bytes (%s)", name ? name : "?", e->name, file);
		/*
		 * A partial table was read from e's file as it is, not from the
		 * bytes just compared: not for another file's processes. The
		 * slot waits for the whole table again.
		 */
		if (e->part && e->part->has_ranges)
			tables_publish_flags(t, e->slot, SFBPF_OBJ_F_PENDING);
		tables_drop_part(t, e);
	}
	if (e)
		return acquire_known(t, e, fd, src);
	slot = tables_alloc_slot(t);
	if (slot < 0) {
		t->stats.objects_over_budget++;
		return slot;
	}
	e = tables_new_entry(t, key, name);
	if (!e)
		return -ENOMEM;
	tables_place_entry(t, e, slot);
	tables_note_src(e, src);
	e->refs = 1; /* held across the synchronous build below */
	err = tables_pin(e, fd);
	if (!err)
		err = tables_start_job(t, e, fd);
	if (err) {
		tables_free_entry(t, e);
		return err;
	}
	if (!t->opts.async) {
		/* Synchronous: built already; publish it before returning. */
		settle(t);
		if (e->state == OBJ_NO_TABLE) {
			e->refs = 0;
			tables_unpin(e);
			tables_release_slot(t, e);
			return -ENOENT;
		}
	}
	return e->slot;
}

int64_t tables__acquire(struct tables *t, int fd, const struct obj_key *key, const char *name)
{
	return tables__acquire_src(t, fd, key, name, NULL);
}

uint32_t tables__preload(struct tables *t, uint32_t max)
{
	struct tableident *ix = t->opts.cache ? tablecache__ident(t->opts.cache) : NULL;
	struct tableident_rec *recs = NULL;
	struct tableload_job *job;
	uint32_t nr = 0, i, queued = 0;
	struct obj_key key;
	struct entry *e;
	uint64_t bytes, total = 0;
	int64_t slot;

	if (!ix || !t->opts.async || tableident__recent(ix, max, &recs, &nr))
		return 0;
	for (i = 0, slot = 0; i < nr; i++) {
		if (!obj_key__from_ident(&key, recs[i].ident, recs[i].len) ||
		    tables_find_entry(t, &key) ||
		    !tablecache__holds(t->opts.cache, recs[i].digest, &bytes))
			continue;
		/* Files of about twice the map memory their tables take: half the budget at most.
		 */
		if (t->opts.budget_bytes && total + bytes > t->opts.budget_bytes)
			continue;
		total += bytes;
		/* A free slot only: a lingering table is worth more than a guess. */
		while (slot < t->opts.max_objects && !tables_slot_free(t, slot))
			slot++;
		if (slot == t->opts.max_objects || !(e = tables_new_entry(t, &key, recs[i].name)))
			break;
		job = tableload_job__preload(recs[i].digest, bytes, e->name, e);
		if (!job || tableload__submit(t->loader, job)) {
			tableload_job__free(job);
			tables_free_entry(t, e);
			break;
		}
		tables_place_entry(t, e, (int32_t)slot);
		/* Not waited for at start (job_seq 0) until a process maps it. */
		e->in_job = e->preloading = e->preloaded = true;
		t->stats.preloaded++;
		queued++;
	}
	free(recs);
	if (queued)
		pr_info("reading back %u tables used before the restart", queued);
	return queued;
}

bool tables__partial_wanted(const struct tables *t)
{
	return !t->opts.no_partial && t->opts.async && tableload__in_flight(t->loader);
}

bool tables__partial_active(const struct tables *t)
{
	return t->parts != NULL;
}

int tables__want_pc(struct tables *t, uint32_t obj, uint64_t pc)
{
	struct entry *e;

	if (obj >= t->opts.max_objects || !(e = t->slots[obj]))
		return 0;
	/* The sampled code first: its whole table too, ahead of the queue. */
	hurry(t, e);
	return tablepart_want(t, e, pc);
}

void tables__release(struct tables *t, uint32_t obj)
{
	struct entry *e;

	if (obj >= t->opts.max_objects || !(e = t->slots[obj]) || !e->refs)
		return;
	e->used_ns = clock__mono_ns();
	if (--e->refs)
		return;
	tables_unpin(e);
	switch (e->state) {
	case OBJ_LOADED:
		if (!t->opts.linger_ns)
			tables_free_entry(t, e);
		break;
	case OBJ_NO_BUDGET:
		if (!e->in_job)
			tables_free_entry(t, e); /* nothing in the maps; rebuilt if needed */
		break;
	case OBJ_NO_TABLE:
		tables_release_slot(t, e); /* remembered without a slot */
		break;
	default: /* loading: finished, then lingers (or goes) */
		break;
	}
}

int tables__hold(struct tables *t, uint32_t obj)
{
	struct entry *e;

	if (obj >= t->opts.max_objects || !(e = t->slots[obj]))
		return -ENOENT;
	e->refs++;
	e->used_ns = clock__mono_ns();
	return 0;
}

void tables__publish_ident(struct tables *t, uint32_t obj, const struct obj_key *key,
			   uint64_t delta, uint64_t text_vaddr)
{
	struct sfbpf_ident id = { .obj = obj, .delta = delta, .text_vaddr = text_vaddr };
	struct sfbpf_ident_key ik;
	uint64_t *at_delta;
	struct obj_alias *a;
	struct entry *e;
	uint8_t *state;

	if (t->opts.idents_fd <= 0 || obj >= t->opts.max_objects || !(e = t->slots[obj]) ||
	    !tables_ident_key(key, &ik))
		return;
	/* The entry's own file, or one sharing its table (the same bytes: tableshare.h). */
	state = &e->ident;
	at_delta = &e->ident_delta;
	if (e->key.len != key->len || memcmp(e->key.bytes, key->bytes, key->len)) {
		for (a = e->aliases; a; a = a->sibling)
			if (a->key.len == key->len && !memcmp(a->key.bytes, key->bytes, key->len))
				break;
		if (!a)
			return;
		state = &a->ident;
		at_delta = &a->ident_delta;
	}
	if (*state == 2 || (*state == 1 && *at_delta == delta))
		return;
	if (*state == 1) {
		/* Two executable segments, two layouts: one bias cannot serve both. */
		bpf_map_delete_elem(t->opts.idents_fd, &ik);
		*state = 2;
		return;
	}
	if (!bpf_map_update_elem(t->opts.idents_fd, &ik, &id, BPF_ANY)) {
		*state = 1;
		*at_delta = delta;
	}
}

void tables__fork_horizon(struct tables *t, uint64_t horizon_ns)
{
	t->fork_horizon_ns = horizon_ns;
}

/* ---- housekeeping --------------------------------------------------------- */

/* Lingering tables past linger_ns, and table-less files long unused. */
static void age(struct tables *t, uint64_t now)
{
	size_t iter = 0;
	struct entry *e;
	uint64_t val;
	uint32_t i;

	for (i = 0; i < t->opts.max_objects; i++) {
		e = t->slots[i];
		if (e && e->state == OBJ_LOADED && !e->refs &&
		    now - e->used_ns >= t->opts.linger_ns) {
			t->stats.aged_out++;
			tables_free_entry(t, e);
		}
	}
	while (hashmap__next(&t->by_key, &iter, &val)) {
		e = HASHMAP_TO_PTR(val);
		if (e->state == OBJ_NO_TABLE && e->slot < 0 &&
		    now - e->used_ns >= NEGATIVE_TTL_NS) {
			tables_free_entry(t, e);
			iter--; /* its slot again: the deletion moved a later entry into it */
		}
	}
}

uint32_t tables__process(struct tables *t, uint64_t budget_ns)
{
	uint64_t now = clock__mono_ns();
	struct entry *parked;

	collect_done(t);
	parked = t->parked;
	if (tables_retry_parked(t, now))
		queue_push(t, parked);
	push_until(t, now + (budget_ns ? budget_ns : 1));
	/* The sampled code's rows of tables still being built: within the same budget. */
	if (t->parts)
		tablepart_process(t, now + (budget_ns ? budget_ns : 1));
	now = clock__mono_ns();
	if (t->opts.linger_ns && now >= t->next_age_ns) {
		age(t, now);
		t->next_age_ns = now + AGE_EVERY_NS;
	}
	if (t->opts.obj_hits_fd > 0 && now >= t->next_rebalance_ns) {
		tables_rebalance(t, now);
		t->next_rebalance_ns = now + TABLES_REBALANCE_NS;
	}
	if (t->opts.async)
		tables_keep_room(t);
	segspace__reap(&t->row_segs);
	segspace__reap(&t->page_segs);
	return tables__pending(t);
}

int tables__wake_fd(const struct tables *t)
{
	return tableload__wake_fd(t->loader);
}

uint32_t tables__pending(const struct tables *t)
{
	return tableload__in_flight(t->loader) + t->nr_pushing;
}

uint64_t tables__mark(const struct tables *t)
{
	return t->job_seq;
}

uint32_t tables__pending_at(const struct tables *t, uint64_t mark)
{
	const struct entry *e;
	uint32_t i, n = 0;

	/* Being built or pushed: an entry in either state holds its slot. */
	for (i = 0; i < t->opts.max_objects; i++) {
		e = t->slots[i];
		n += e && e->job_seq && e->job_seq <= mark &&
		     (e->in_job || e->state == OBJ_PUSHING);
	}
	return n;
}

void tables__stats(const struct tables *t, struct tables_stats *out)
{
	const struct entry *e;
	size_t iter = 0;
	uint64_t val;

	*out = t->stats;
	out->rows_used = slices__used(&t->rows);
	out->pages_used = slices__used(&t->pages);
	out->rules_used = t->rules.nr_rules;
	out->table_bytes = (out->rows_used + out->pages_used) * 4 +
			   out->rules_used * sizeof(struct sfbpf_rule);
	out->map_bytes = segspace__bytes(&t->row_segs) + segspace__bytes(&t->page_segs) +
			 (uint64_t)t->opts.max_rules * sizeof(struct sfbpf_rule) +
			 (uint64_t)t->opts.max_objects * (sizeof(struct sfbpf_object) + 8);
	out->objects = out->objects_pending = out->objects_no_budget = 0;
	out->objects_lingering = out->objects_without_table = 0;
	while (hashmap__next(&t->by_key, &iter, &val)) {
		e = HASHMAP_TO_PTR(val);
		switch (e->state) {
		case OBJ_LOADED:
			out->objects++;
			out->objects_lingering += !e->refs;
			break;
		case OBJ_PENDING:
		case OBJ_PUSHING:
			out->objects_pending++;
			break;
		case OBJ_NO_BUDGET:
			out->objects_no_budget++;
			break;
		default:
			out->objects_without_table++;
			break;
		}
	}
}
