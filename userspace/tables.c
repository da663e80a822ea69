// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Map loader (see tables.h). Rows and page indexes of all objects share two
 * big BPF arrays; each object owns a contiguous slice handed out by a range
 * allocator. An object becomes visible to the BPF side only when its entry in
 * the objects map is written, after its rows, rules and pages are in place.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfi.h"
#include "flatbuild.h"
#include "flatten.h"
#include "rangealloc.h"
#include "ruleset.h"
#include "sframe_elf.h"
#include "tables.h"

#define KEY_BUCKETS 4096
#define PUSH_CHUNK 8192

struct entry {
	struct obj_key key;
	int32_t obj; /* object index, or a negative errno: no table */
	uint32_t refs;
	uint32_t row_start, nr_rows;
	uint32_t page_start, nr_pages;
	struct entry *next; /* hash chain */
};

struct tables {
	struct tables_opts opts;
	struct rangealloc *rows, *pages;
	struct ruleset rules; /* mirrors the rules map: indexes are global rule ids */
	struct entry **buckets;
	struct entry **slots; /* object index -> entry */
	uint32_t nr_slots_used;
	struct tables_stats stats;
};

void obj_key__from(struct obj_key *key, const struct elfobj_info *info, const struct stat *st)
{
	memset(key, 0, sizeof(*key));
	if (info && info->build_id_len) {
		key->bytes[0] = 'B';
		memcpy(key->bytes + 1, info->build_id, info->build_id_len);
		key->len = 1 + info->build_id_len;
		return;
	}
	key->bytes[0] = 'S';
	memcpy(key->bytes + 1, &st->st_dev, 4);
	memcpy(key->bytes + 5, &st->st_ino, 8);
	memcpy(key->bytes + 13, &st->st_size, 8);
	memcpy(key->bytes + 21, &st->st_mtim.tv_sec, 8);
	key->len = 29;
}

static uint32_t key_hash(const struct obj_key *k)
{
	uint32_t h = 2166136261u, i;

	for (i = 0; i < k->len; i++)
		h = (h ^ k->bytes[i]) * 16777619u;
	return h % KEY_BUCKETS;
}

struct tables *tables__new(const struct tables_opts *opts)
{
	struct tables *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->opts = *opts;
	t->rows = rangealloc__new(opts->max_rows);
	t->pages = rangealloc__new(opts->max_pages);
	t->buckets = calloc(KEY_BUCKETS, sizeof(*t->buckets));
	t->slots = calloc(opts->max_objects ? opts->max_objects : 1, sizeof(*t->slots));
	if (!t->rows || !t->pages || !t->buckets || !t->slots) {
		tables__free(t);
		return NULL;
	}
	t->stats.rows_capacity = opts->max_rows;
	t->stats.pages_capacity = opts->max_pages;
	t->stats.rules_capacity = opts->max_rules;
	return t;
}

void tables__free(struct tables *t)
{
	struct entry *e, *next;
	uint32_t i;

	if (!t)
		return;
	for (i = 0; t->buckets && i < KEY_BUCKETS; i++)
		for (e = t->buckets[i]; e; e = next) {
			next = e->next;
			free(e);
		}
	free(t->buckets);
	free(t->slots);
	ruleset__clear(&t->rules);
	rangealloc__free(t->rows);
	rangealloc__free(t->pages);
	free(t);
}

/* Write n consecutive array elements starting at index start. */
static int push_array(int fd, uint32_t start, const void *values, uint32_t n, size_t elem)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t keys[PUSH_CHUNK], done, cnt, i;
	int err;

	for (done = 0; done < n; done += cnt) {
		cnt = n - done < PUSH_CHUNK ? n - done : PUSH_CHUNK;
		for (i = 0; i < cnt; i++)
			keys[i] = start + done + i;
		err = bpf_map_update_batch(fd, keys, (const char *)values + done * elem, &cnt, &opts);
		if (err)
			return err;
	}
	return 0;
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
			return err;
	}
	t->stats.rules_used = t->rules.nr_rules;
	return 0;
}

static int64_t alloc_slot(struct tables *t)
{
	uint32_t i;

	for (i = 0; i < t->opts.max_objects; i++)
		if (!t->slots[i])
			return i;
	return -ENOSPC;
}

/* Rows and pages into their slices, then the object entry that publishes them. */
static int push_table(struct tables *t, struct entry *e, struct flat_table *ft)
{
	struct sfbpf_object obj = { 0 };
	uint32_t *ids = calloc(ft->nr_rules ? ft->nr_rules : 1, sizeof(*ids));
	int64_t rs = -ENOSPC, ps = -ENOSPC, slot;
	uint32_t i;
	int err = -ENOMEM;

	if (!ids)
		return -ENOMEM;
	err = intern_rules(t, ft, ids);
	if (err)
		goto cleanup;
	for (i = 0; i < ft->nr_rows; i++)
		ft->rows[i].rule = ids[ft->rows[i].rule];
	slot = alloc_slot(t);
	rs = rangealloc__alloc(t->rows, ft->nr_rows);
	ps = rangealloc__alloc(t->pages, ft->nr_pages);
	err = slot < 0 ? (int)slot : rs < 0 ? (int)rs : ps < 0 ? (int)ps : 0;
	if (err)
		goto cleanup;
	err = push_array(t->opts.rows_fd, rs, ft->rows, ft->nr_rows, sizeof(*ft->rows));
	if (!err)
		err = push_array(t->opts.pages_fd, ps, ft->pages, ft->nr_pages, sizeof(*ft->pages));
	obj = (struct sfbpf_object){ .row_start = rs, .row_count = ft->nr_rows,
				     .page_start = ps, .page_count = ft->nr_pages,
				     .pc_min = ft->pc_min };
	if (!err)
		err = bpf_map_update_elem(t->opts.objects_fd, &(uint32_t){ slot }, &obj, BPF_ANY);
	if (err)
		goto cleanup;
	e->obj = slot;
	e->row_start = rs, e->nr_rows = ft->nr_rows;
	e->page_start = ps, e->nr_pages = ft->nr_pages;
	t->slots[slot] = e;
cleanup:
	if (err && rs >= 0)
		rangealloc__release(t->rows, rs, ft->nr_rows);
	if (err && ps >= 0)
		rangealloc__release(t->pages, ps, ft->nr_pages);
	free(ids);
	return err;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Table from the object's .sframe: 0, -ENOENT (none), or why it is unusable. */
static int sframe_table(struct tables *t, int fd, const char *name, struct flat_table **ft,
			uint64_t *bytes)
{
	struct sframe_elf_error eerr;
	struct sframe_error serr;
	struct sframe_decoder *d = NULL;
	struct sframe_elf s = { 0 };
	int err;

	err = sframe_elf__load_fd(fd, &s, &eerr);
	if (err)
		goto cleanup;
	err = sframe_decoder__new(s.data, s.size, s.addr, &d, &serr);
	if (err) {
		t->stats.objects_rejected++;
		fprintf(stderr, "sfbpf: %s: rejected .sframe: %s: %s (at byte 0x%llx)\n", name,
			sframe_errcode__name(serr.code), serr.msg, (unsigned long long)serr.offset);
		goto cleanup;
	}
	err = flat_table__from_sframe(d, ft);
	*bytes = s.size;
cleanup:
	sframe_decoder__free(d);
	sframe_elf__release(&s);
	return err;
}

/* Table synthesized from the object's DWARF CFI (see cfi.h). */
static int cfi_table(struct tables *t, int fd, const char *name, struct flat_table **ft)
{
	struct cfi_stats st;
	int err = cfi__flatten_fd(fd, ft, &st);

	if (!err && t->opts.verbose)
		fprintf(stderr, "sfbpf: %s: %u rows from %s (%u CFI rows, %u unsupported)\n", name,
			st.rows, st.fdes[CFI_SRC_DEBUG_FRAME] && !st.fdes[CFI_SRC_EH_FRAME] ?
			".debug_frame" : ".eh_frame", st.cfi_rows, st.unsupported_rows);
	else if (err && err != -ENOENT && t->opts.verbose)
		fprintf(stderr, "sfbpf: %s: no table from DWARF CFI: %s\n", name, strerror(-err));
	return err;
}

/*
 * .sframe rows completed with CFI rows where .sframe describes nothing (code
 * assembled without --gsframe, such as crt1.o's _start: with it, stacks end at
 * the outermost frame). The SFrame table stays as is if there is no CFI.
 */
static int complete_sframe(struct tables *t, int fd, const char *name, struct flat_table **ft)
{
	struct flat_table *cft = NULL, *merged = NULL;
	int err;

	if (cfi_table(t, fd, name, &cft))
		return 0;
	err = flat_table__merge(*ft, cft, &merged);
	flat_table__free(cft);
	if (err)
		return err;
	flat_table__free(*ft);
	*ft = merged;
	return 0;
}

/*
 * Table from .sframe (completed from CFI), else (none, or rejected) from
 * DWARF CFI alone; pushed to the maps. Returns 0 or why the object has no table.
 */
static int load_object(struct tables *t, struct entry *e, int fd, const char *name)
{
	struct flat_table *ft = NULL;
	uint64_t sframe_bytes = 0;
	bool from_cfi = false;
	int err;

	err = sframe_table(t, fd, name, &ft, &sframe_bytes);
	if (!t->opts.no_cfi) {
		if (!err) {
			err = complete_sframe(t, fd, name, &ft);
		} else if (err != -ENOMEM && err != -E2BIG) {
			from_cfi = true;
			err = cfi_table(t, fd, name, &ft);
		}
	}
	if (!err)
		err = push_table(t, e, ft);
	if (err == -ENOSPC)
		t->stats.objects_over_budget++;
	if (!err && from_cfi) {
		t->stats.objects_eh_frame++;
		t->stats.rows_eh_frame += ft->nr_rows;
	} else if (!err) {
		t->stats.sframe_bytes += sframe_bytes;
		t->stats.objects_sframe++;
		t->stats.rows_sframe += ft->nr_rows;
	}
	if (err && t->opts.verbose)
		fprintf(stderr, "sfbpf: %s: table not loaded: %s\n", name,
			err == -ENOENT ? "no .sframe, no DWARF CFI" : strerror(-err));
	flat_table__free(ft);
	return err;
}

int64_t tables__acquire(struct tables *t, int fd, const struct obj_key *key, const char *name)
{
	uint32_t b = key_hash(key);
	struct entry *e;
	uint64_t start;
	int err;

	for (e = t->buckets[b]; e; e = e->next)
		if (e->key.len == key->len && !memcmp(e->key.bytes, key->bytes, key->len))
			break;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->key = *key;
		start = now_ns();
		err = load_object(t, e, fd, name);
		t->stats.load_ns += now_ns() - start;
		if (err) {
			e->obj = err; /* remembered: the file is not parsed again */
			t->stats.objects_without_table++;
		} else {
			t->stats.objects++;
		}
		e->next = t->buckets[b];
		t->buckets[b] = e;
	}
	if (e->obj < 0)
		return -ENOENT;
	e->refs++;
	return e->obj;
}

void tables__release(struct tables *t, uint32_t obj)
{
	struct sfbpf_object empty = { 0 };
	struct entry *e, **pp;

	if (obj >= t->opts.max_objects || !(e = t->slots[obj]) || --e->refs)
		return;
	/* Unpublish first so no new sample walks into the freed slices. */
	bpf_map_update_elem(t->opts.objects_fd, &obj, &empty, BPF_ANY);
	rangealloc__release(t->rows, e->row_start, e->nr_rows);
	rangealloc__release(t->pages, e->page_start, e->nr_pages);
	t->slots[obj] = NULL;
	t->stats.objects--;
	for (pp = &t->buckets[key_hash(&e->key)]; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	free(e);
}

void tables__stats(const struct tables *t, struct tables_stats *out)
{
	*out = t->stats;
	out->rows_used = rangealloc__used(t->rows);
	out->pages_used = rangealloc__used(t->pages);
}
