// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The map loader's entries (see entries.h): an object's identity and hashes,
 * its slot in the objects map, its slices given back, its build started, the
 * places it was seen mapped and its file reopened through them, and the entry
 * freed. What tables.c (acquire, release, push), tablebudget.c (admission,
 * eviction, hotness) and tableshare.c all do to an entry, kept below the three
 * so that each calls down to it and none calls back up.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "maps/entries.h"
#include "tables/tableident.h"
#include "util/fileident.h"
#include "util/hash.h"
#include "util/clock.h"

void obj_key__from(struct obj_key *key, const struct elfobj_info *info, const struct stat *st,
		   int fd)
{
	struct statfs sfs;
	/*
	 * The filesystem's type last: a FUSE or network filesystem's server
	 * chooses its files' inode numbers and times, and an anonymous device
	 * number (FUSE, overlayfs, tmpfs) is reused after an unmount, so such
	 * a file could otherwise name a local file's identity.
	 */
	uint64_t v[8] = {
		st->st_dev,	     st->st_ino,
		st->st_size,	     st->st_mtim.tv_sec,
		st->st_mtim.tv_nsec, st->st_ctim.tv_sec,
		st->st_ctim.tv_nsec, fd >= 0 && !fstatfs(fd, &sfs) ? (uint64_t)sfs.f_type : 0
	};
	uint64_t mount;
	uint8_t n;

	_Static_assert(1 + sizeof(v) == OBJ_KEY_FILE_LEN, "obj_key: a file's identity");
	_Static_assert(OBJ_KEY_FILE_LEN + sizeof(mount) <= OBJ_KEY_MAX, "obj_key: too long");
	memset(key, 0, sizeof(*key));
	/* Whose word the identity is (fileident.h): the author's holds within its mount. */
	key->bytes[0] = fileident__kernel_kept(fd, st) ? 'F' : 'A';
	memcpy(key->bytes + 1, v, sizeof(v));
	key->len = 1 + sizeof(v);
	if (key->bytes[0] == 'A' && (mount = fileident__mount(fd))) {
		memcpy(key->bytes + key->len, &mount, sizeof(mount));
		key->len += sizeof(mount);
	}
	if (info && info->build_id_len) {
		n = info->build_id_len;
		key->hint[0] = 'B';
		memcpy(key->hint + 1, info->build_id, n);
		memcpy(key->hint + 1 + n, &v[2], 8);
		key->hint_len = 9 + n;
	}
}

uint32_t obj_key__ident(const struct obj_key *key, uint8_t out[OBJ_KEY_IDENT_MAX])
{
	out[0] = key->len;
	memcpy(out + 1, key->bytes, key->len);
	out[1 + key->len] = key->hint_len;
	memcpy(out + 2 + key->len, key->hint, key->hint_len);
	return 2u + key->len + key->hint_len;
}

bool obj_key__from_ident(struct obj_key *key, const uint8_t *b, uint32_t len)
{
	uint32_t n, h;

	memset(key, 0, sizeof(*key));
	if (len < 2 || (n = b[0]) > OBJ_KEY_MAX || len < 2 + n || (h = b[1 + n]) > OBJ_HINT_MAX ||
	    len != 2 + n + h)
		return false;
	key->len = (uint8_t)n;
	memcpy(key->bytes, b + 1, n);
	key->hint_len = (uint8_t)h;
	memcpy(key->hint, b + 2 + n, h);
	return true;
}

bool obj_key__stat(const struct obj_key *key, uint64_t out[5])
{
	uint64_t v[8];

	if (key->len < OBJ_KEY_FILE_LEN || !obj_key__is_file(key))
		return false;
	memcpy(v, key->bytes + 1, sizeof(v));
	out[0] = v[0];
	out[1] = v[1];
	out[2] = v[2];
	out[3] = v[3] * 1000000000ull + v[4];
	out[4] = v[5] * 1000000000ull + v[6];
	return true;
}

void obj_key__file(const struct obj_key *key, char buf[OBJ_KEY_FILE_MAX])
{
	uint64_t v[2] = { 0, 0 };

	if (key->len >= 1 + sizeof(v) && obj_key__is_file(key))
		memcpy(v, key->bytes + 1, sizeof(v));
	snprintf(buf, OBJ_KEY_FILE_MAX, "dev %llu, inode %llu", (unsigned long long)v[0],
		 (unsigned long long)v[1]);
}

uint32_t tables_key_hash(const struct obj_key *k)
{
	return (uint32_t)hash__bytes(k->bytes, k->len);
}

uint32_t tables_hint_hash(const struct obj_key *k)
{
	return (uint32_t)hash__bytes(k->hint, k->hint_len);
}

bool tables_is_ptr(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return HASHMAP_TO_PTR(val) == key;
}

/* ---- the objects map ------------------------------------------------------ */

/* A slot without rows: its frames use the frame-pointer chain (flags say why). */
void tables_publish_flags(struct tables *t, int32_t slot, uint32_t flags)
{
	struct sfbpf_object obj = { .flags = flags };
	uint32_t key = slot;

	if (slot >= 0)
		bpf_map_update_elem(t->opts.objects_fd, &key, &obj, BPF_ANY);
}

/* ---- entries -------------------------------------------------------------- */

static void part_free(struct entry_part *p)
{
	if (!p)
		return;
	cfi_index__free(p->ix);
	if (p->fd >= 0)
		close(p->fd);
	flat_table__free(p->ft);
	flat_table__free(p->wait_ft);
	flat_table__free(p->local);
	free(p->walked);
	free(p->pcs);
	free(p->fresh);
	free(p);
}

void entry__free(struct entry *e)
{
	struct obj_alias *a, *next;

	part_free(e->part);
	for (a = e->aliases; a; a = next) {
		next = a->sibling;
		free(a);
	}
	flat_table__free(e->ft);
	tables_unpin(e);
	free(e->name);
	free(e);
}

int tables_pin(struct entry *e, int fd)
{
	if (!obj_key__pinned(&e->key) || e->pin_fd >= 0)
		return 0;
	e->pin_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return e->pin_fd < 0 ? -errno : 0;
}

void tables_unpin(struct entry *e)
{
	if (e->pin_fd >= 0)
		close(e->pin_fd);
	e->pin_fd = -1;
}

void tables_release_ranges(struct tables *t, uint32_t row_start, uint32_t nr_rows,
			   uint32_t page_start, uint32_t nr_pages)
{
	if (!nr_rows && !nr_pages)
		return;
	slices__release(&t->rows, row_start, nr_rows);
	slices__release(&t->pages, page_start, nr_pages);
	segspace__put(&t->row_segs, row_start, nr_rows);
	segspace__put(&t->page_segs, page_start, nr_pages);
	/* Samples in flight may still read them: see push_after. */
	t->recycled_ns = clock__mono_ns();
}

/* Gives back e's slices of the rows and pages arrays (its slot stays). */
void tables_drop_rows(struct tables *t, struct entry *e)
{
	tables_release_ranges(t, e->row_start, e->nr_rows, e->page_start, e->nr_pages);
	e->row_start = e->page_start = 0;
	e->has_ranges = false;
}

void tables_drop_part(struct tables *t, struct entry *e)
{
	struct entry_part *p = e->part;
	struct entry **pp;

	if (!p)
		return;
	for (pp = &t->parts; *pp; pp = &(*pp)->part->next)
		if (*pp == e) {
			*pp = p->next;
			break;
		}
	if (p->has_ranges)
		tables_release_ranges(t, p->row_start, p->nr_rows, p->page_start, p->nr_pages);
	if (p->wait_ft)
		tables_release_ranges(t, p->wait_row_start, p->wait_nr_rows, p->wait_page_start,
				      p->wait_nr_pages);
	part_free(p);
	e->part = NULL;
}

bool tables_ident_key(const struct obj_key *key, struct sfbpf_ident_key *out)
{
	uint64_t v[8];

	/* The vDSO (procs/vdso.h): the kernel's one image, named by a key of its own. */
	if (key->len && key->bytes[0] == 'V') {
		memset(out, 0, sizeof(*out));
		out->ino = SFBPF_IDENT_VDSO_INO;
		return true;
	}
	if (key->len < OBJ_KEY_FILE_LEN || key->bytes[0] != 'F')
		return false;
	memcpy(v, key->bytes + 1, sizeof(v));
	memset(out, 0, sizeof(*out));
	/* The kernel's dev_t (MKDEV: major << 20 | minor), not glibc's. */
	out->dev = (uint64_t)major(v[0]) << 20 | minor(v[0]);
	out->ino = v[1];
	out->ctime_sec = (int64_t)v[5];
	out->ctime_nsec = (uint32_t)v[6];
	return true;
}

void tables_release_slot(struct tables *t, struct entry *e)
{
	struct sfbpf_ident_key ik;
	struct obj_alias *a;

	if (e->slot < 0)
		return;
	/* First: no walk finds the slot by a file's identity once it may serve another. */
	if (e->ident == 1 && tables_ident_key(&e->key, &ik))
		bpf_map_delete_elem(t->opts.idents_fd, &ik);
	if (e->ident == 1)
		e->ident = 0;
	for (a = e->aliases; a; a = a->sibling) {
		if (a->ident == 1 && tables_ident_key(&a->key, &ik))
			bpf_map_delete_elem(t->opts.idents_fd, &ik);
		if (a->ident == 1)
			a->ident = 0;
	}
	tables_publish_flags(t, e->slot, 0);
	t->slots[e->slot] = NULL;
	t->slot_freed_ns[e->slot] = clock__mono_ns();
	e->slot = -1;
}

/* Takes e's aliases out of the alias table (entry__free frees them). */
static void unlink_aliases(struct tables *t, struct entry *e)
{
	struct obj_alias *a;

	for (a = e->aliases; a; a = a->sibling)
		hashmap__del(&t->by_alias, tables_key_hash(&a->key), tables_is_ptr, NULL, a);
}

/* Forgets e entirely: unpublished, slices and slot freed. Not while a job builds it. */
void tables_free_entry(struct tables *t, struct entry *e)
{
	tables_unpark(t, e);
	/* Unpublish first so no new sample walks into the freed slices. */
	tables_release_slot(t, e);
	tables_drop_part(t, e);
	if (e->has_ranges)
		tables_drop_rows(t, e);
	hashmap__del(&t->by_key, tables_key_hash(&e->key), tables_is_ptr, NULL, e);
	if (e->key.hint_len)
		hashmap__del(&t->by_hint, tables_hint_hash(&e->key), tables_is_ptr, NULL, e);
	unlink_aliases(t, e);
	entry__free(e);
}

void tables_unpark(struct tables *t, struct entry *e)
{
	if (!e || t->parked != e)
		return;
	t->parked = NULL;
	e->promoting = false;
	t->promoting--;
	flat_table__free(e->ft);
	e->ft = NULL;
}

/* ---- building and reopening ----------------------------------------------- */

/* The job's identity for the cache's identity index; without one it is only not indexed. */
static void set_ident(struct tableload_job *job, const struct obj_key *key)
{
	uint8_t ident[OBJ_KEY_IDENT_MAX];
	uint64_t st[5];
	uint32_t n;

	_Static_assert(OBJ_KEY_IDENT_MAX <= TABLEIDENT_MAX, "obj_key: too long for the index");
	/* An authored identity is never recorded: it stands for no bytes after a restart. */
	if (obj_key__authored(key) || !obj_key__stat(key, st))
		return;
	n = obj_key__ident(key, ident);
	tableload_job__set_ident(job, ident, n, st);
}

/* Submits e's build from fd. -EAGAIN when the loader's queue is full. */
int tables_start_job(struct tables *t, struct entry *e, int fd)
{
	struct tableload_job *job = tableload_job__new(fd, e->name, e);
	int err;

	if (!job)
		return -ENOMEM;
	/* Only files with a build-id are ever compared (tableshare.c). */
	job->want_digest = e->key.hint_len != 0;
	if (t->opts.cache)
		set_ident(job, &e->key);
	e->in_job = true;
	e->hurried = false;
	e->job_seq = ++t->job_seq;
	err = tableload__submit(t->loader, job);
	if (err) {
		e->in_job = false;
		tableload_job__free(job);
		t->stats.load_busy++;
		return -EAGAIN;
	}
	return 0;
}

/* A process mapping e: remembered (once per process) to reopen the file later. */
void tables_note_src(struct entry *e, const struct tables_src *src)
{
	uint32_t i;

	if (!src || src->pid <= 0)
		return;
	for (i = 0; i < TABLES_SRCS; i++)
		if (e->src[i].pid == src->pid) {
			e->src[i] = *src;
			return;
		}
	e->src[e->src_next] = *src;
	e->src_next = (e->src_next + 1) % TABLES_SRCS;
}

/* e's file through one mapping: the fd if it is still e's file. */
static int reopen_at(const struct entry *e, const struct tables_src *src)
{
	struct elfobj_info info;
	struct obj_key key;
	struct stat st;
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, src->pid,
		 src->start, src->end);
	fd = fileident__open_regular(path, &st);
	if (fd < 0)
		return fd;
	if (elfobj__read(fd, &info)) {
		close(fd);
		return -EIO;
	}
	obj_key__from(&key, &info, &st, fd);
	if (key.len != e->key.len || memcmp(key.bytes, e->key.bytes, key.len)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Newest first. */
int tables_reopen(const struct entry *e)
{
	uint32_t i, k;
	int fd = -ENOENT;
	char path[32];

	/*
	 * An author's identity without a mount number names its file only
	 * while pinned: the pinned file, opened anew (an offset of its own), or
	 * none.
	 */
	if (obj_key__pinned(&e->key)) {
		if (e->pin_fd < 0)
			return -ESTALE;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", e->pin_fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	for (i = 1; i <= TABLES_SRCS && fd < 0; i++) {
		k = (e->src_next + TABLES_SRCS - i) % TABLES_SRCS;
		if (e->src[k].pid > 0)
			fd = reopen_at(e, &e->src[k]);
	}
	return fd;
}

uint32_t tables__slot_files(const struct tables *t, uint32_t obj, uint64_t since_ns,
			    struct tables_slot_file *out, uint32_t max, const char **name)
{
	const struct obj_alias *a;
	const struct entry *e;
	uint32_t n = 0;

	*name = NULL;
	if (obj >= t->opts.max_objects || !(e = t->slots[obj]) || t->slot_freed_ns[obj] >= since_ns)
		return 0;
	*name = e->name;
	if (n < max && e->ident == 1 && obj_key__stat(&e->key, out[n].st))
		out[n++].delta = e->ident_delta;
	for (a = e->aliases; a && n < max; a = a->sibling)
		if (a->ident == 1 && obj_key__stat(&a->key, out[n].st))
			out[n++].delta = a->ident_delta;
	return n;
}

/* ---- finding and making entries ------------------------------------------ */

static bool same_identity(const struct obj_key *a, const struct obj_key *b)
{
	return a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

/* A new owner starts with no hits. */
static void reset_hits(struct tables *t, int32_t slot)
{
	uint32_t key = slot;
	uint64_t zero = 0;

	if (t->opts.obj_hits_fd > 0)
		bpf_map_update_elem(t->opts.obj_hits_fd, &key, &zero, BPF_ANY);
}

static bool entry_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return same_identity(&((const struct entry *)HASHMAP_TO_PTR(val))->key, key);
}

static bool alias_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return same_identity(&((const struct obj_alias *)HASHMAP_TO_PTR(val))->key, key);
}

struct entry *tables_find_entry(struct tables *t, const struct obj_key *key)
{
	uint32_t h = tables_key_hash(key);
	size_t iter = 0;
	struct entry *e;
	uint64_t val;
	int64_t v;

	/* An author's identity without a mount number: only a pinned entry's is its file. */
	if (obj_key__pinned(key)) {
		while (hashmap__next_at(&t->by_key, h, &iter, &val)) {
			e = HASHMAP_TO_PTR(val);
			if (e->pin_fd >= 0 && same_identity(&e->key, key))
				return e;
		}
		return NULL; /* and never an alias's: none is made for it (tableshare.c) */
	}
	v = hashmap__find(&t->by_key, h, entry_eq, NULL, key);
	if (v >= 0)
		return HASHMAP_TO_PTR(v);
	/* Other files whose tables would be built from an entry's bytes (tableshare.c). */
	v = hashmap__find(&t->by_alias, h, alias_eq, NULL, key);
	return v >= 0 ? ((struct obj_alias *)HASHMAP_TO_PTR(v))->e : NULL;
}

bool tables_slot_free(const struct tables *t, uint32_t i)
{
	return !t->slots[i] &&
	       (t->fork_horizon_ns == UINT64_MAX || t->slot_freed_ns[i] < t->fork_horizon_ns);
}

/*
 * A free slot, reclaiming the oldest lingering table if there is none: one
 * whose last reference went before the fork horizon (a copy of an entry made
 * before then may name it, unheard yet; used_ns is set at every release).
 */
int64_t tables_alloc_slot(struct tables *t)
{
	struct entry *oldest = NULL, *e;
	uint32_t i;

	for (i = 0; i < t->opts.max_objects; i++) {
		e = t->slots[i];
		if (!e && tables_slot_free(t, i))
			return i;
		if (e && e->state == OBJ_LOADED && !e->refs && e->used_ns < t->fork_horizon_ns &&
		    (!oldest || e->used_ns < oldest->used_ns))
			oldest = e;
	}
	if (!oldest)
		return -ENOSPC;
	i = oldest->slot;
	t->stats.evictions++;
	tables_free_entry(t, oldest);
	return i;
}

/* e takes the free slot, flagged PENDING (its table is being built or read back). */
void tables_place_entry(struct tables *t, struct entry *e, int32_t slot)
{
	e->slot = slot;
	e->used_ns = clock__mono_ns();
	t->slots[slot] = e;
	reset_hits(t, slot);
	tables_publish_flags(t, slot, SFBPF_OBJ_F_PENDING);
}

struct entry *tables_new_entry(struct tables *t, const struct obj_key *key, const char *name)
{
	struct entry *e = calloc(1, sizeof(*e));
	uint32_t h = tables_key_hash(key);

	if (!e)
		return NULL;
	e->name = strdup(name ? name : "?");
	if (!e->name || hashmap__add(&t->by_key, h, HASHMAP_PTR(e))) {
		free(e->name);
		free(e);
		return NULL;
	}
	e->key = *key;
	e->seq = ++t->entries_made;
	e->slot = -1;
	e->pin_fd = -1;
	e->state = OBJ_PENDING;
	if (key->hint_len && hashmap__add(&t->by_hint, tables_hint_hash(key), HASHMAP_PTR(e))) {
		hashmap__del(&t->by_key, h, tables_is_ptr, NULL, e);
		free(e->name);
		free(e);
		return NULL;
	}
	return e;
}
