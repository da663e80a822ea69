// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The symbolized snapshot (see snapshot.h): the one walk of the aggregated
 * stacks.
 *
 * Names are only valid until the symbolizer's next lookup, and those
 * pointing into its cached objects only while it keeps them: a lookup may
 * take a newer snapshot of a process and evict an object an earlier frame
 * named. So each string is interned into the snapshot's string set, where it
 * stays put, as soon as its entry is named. An entry (process, address) is
 * named once: its frames are kept once, and every stack holding it refers to
 * them (a stack is its header and its frames' ids, root first).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregate.h"
#include "profile/snapshot.h"
#include "symbols/symbolize.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/strset.h"
#include "util/vec.h"

struct snap_stack {
	uint64_t count, weight, cgroup_id;
	uint64_t aggr_id, key_hash; /* a kept stack's: which aggregated stack it names */
	const char *exe;
	uint32_t pid;
	size_t first_id; /* its frame ids: ids[first_id ...] */
	size_t nr_frames, first_user, first_kernel;
};

/* The frames of one stack entry: ids[first ... first + nr), in the first stack it is in. */
struct snap_entry {
	uint64_t space; /* the pid, or KERNEL_SPACE */
	uint64_t addr;
	size_t first;
	uint32_t nr;
};

#define KERNEL_SPACE (1ULL << 32)

struct snapshot {
	struct symbolizer *sym; /* while it is made (end_walk()) */
	const struct ksyms *ks;
	struct sw_entry named; /* the entry being named */

	struct strset strings; /* every string of its frames and stacks */

	struct sw_frame *frames; /* distinct, their strings interned */
	size_t nr_frames, frames_cap;
	struct hashmap frames_map;

	struct snap_entry *entries;
	size_t nr_entries, entries_cap;
	struct hashmap entries_map;

	uint32_t *ids; /* the stacks' frames */
	size_t nr_ids, ids_cap;
	struct snap_stack *stacks;
	size_t nr_stacks, stacks_cap;
	size_t max_frames; /* the deepest stack's */

	/* Kept names (snapshot__keep()): a stack's index by its aggregator id. */
	struct hashmap kept_map;
	const struct snapshot *kept; /* while a snapshot is made with them (snapshot__new_kept()) */
	bool (*want)(uint32_t pid, void *ctx); /* while keeping: whose stacks */
	void *want_ctx;
};

/* What identifies an aggregated stack besides its id: its process and its frames. */
static uint64_t stack_key_hash(const struct aggr_stack *st)
{
	uint64_t h = hash__mix64(st->pid ^ ((uint64_t)st->nr_user << 32) ^
				 ((uint64_t)st->nr_kernel << 48));
	uint32_t i;

	for (i = 0; i < (uint32_t)st->nr_user + st->nr_kernel; i++)
		h = hash__mix64(h ^ st->ips[i]);
	return h;
}

/* The snapshot's copy of str (NULL stays NULL); *err = -ENOMEM without memory. */
static const char *intern(struct snapshot *s, const char *str, int *err)
{
	const char *copy = strset__intern(&s->strings, str);

	if (str && !copy)
		*err = -ENOMEM;
	return copy;
}

/* Interned strings compare by pointer: two frames are one when every field is. */
static bool frame_same(const struct sw_frame *a, const struct sw_frame *b)
{
	return a->kind == b->kind && a->symbol == b->symbol && a->python == b->python &&
	       a->mapped == b->mapped && a->inlined == b->inlined && a->addr == b->addr &&
	       a->elf_addr == b->elf_addr && a->map_start == b->map_start &&
	       a->map_end == b->map_end && a->map_offset == b->map_offset && a->line == b->line &&
	       a->decl_line == b->decl_line && a->name == b->name && a->function == b->function &&
	       a->module == b->module && a->path == b->path && a->build_id == b->build_id &&
	       a->file == b->file && a->decl_file == b->decl_file;
}

static bool frame_eq(const void *ctx, uint64_t id, const void *key)
{
	return frame_same(&((const struct snapshot *)ctx)->frames[id], key);
}

static uint32_t frame_hash(const struct sw_frame *f)
{
	uint64_t h =
		hash__mix64(f->addr ^ ((uint64_t)f->kind << 56) ^ ((uint64_t)f->inlined << 60));

	h = hash__mix64(h ^ (uintptr_t)f->name ^ ((uint64_t)f->line << 32));
	return (uint32_t)hash__mix64(h ^ (uintptr_t)f->file ^ (uintptr_t)f->module);
}

/* The id of frame f (its strings the walk's), added if new; negative errno. */
static int64_t frame_id(struct snapshot *s, const struct sw_frame *f)
{
	struct sw_frame k = *f;
	int err = 0;
	uint32_t h;
	int64_t id;

	k.name = intern(s, f->name, &err);
	k.function = intern(s, f->function, &err);
	k.module = intern(s, f->module, &err);
	k.path = intern(s, f->path, &err);
	k.build_id = intern(s, f->build_id, &err);
	k.file = intern(s, f->file, &err);
	k.decl_file = intern(s, f->decl_file, &err);
	if (err)
		return err;
	h = frame_hash(&k);
	id = hashmap__find(&s->frames_map, h, frame_eq, s, &k);
	if (id >= 0)
		return id;
	if (VEC_RESERVE(s->frames, s->frames_cap, s->nr_frames + 1, 256) ||
	    hashmap__add(&s->frames_map, h, s->nr_frames))
		return -ENOMEM;
	s->frames[s->nr_frames] = k;
	return (int64_t)s->nr_frames++;
}

static bool entry_eq(const void *ctx, uint64_t id, const void *key)
{
	const struct snap_entry *a = &((const struct snapshot *)ctx)->entries[id], *b = key;

	return a->addr == b->addr && a->space == b->space;
}

/* Appends the frame ids of one stack entry, naming it the first time. */
static int add_entry(struct snapshot *s, uint32_t pid, enum sw_kind kind, uint64_t addr)
{
	struct snap_entry key = { kind == SW_KERNEL ? KERNEL_SPACE : pid, addr, 0, 0 }, *e;
	uint32_t h = (uint32_t)hash__mix64(key.space * 0x9E3779B97F4A7C15ULL ^ addr);
	int64_t i = hashmap__find(&s->entries_map, h, entry_eq, s, &key), id;
	int n, j;

	if (i < 0) {
		/* Named the first time: its frames' ids stay where this stack's are. */
		n = stackwalk__entry(s->sym, s->ks, pid, kind, addr, &s->named);
		if (n < 0 || VEC_RESERVE(s->entries, s->entries_cap, s->nr_entries + 1, 256) ||
		    VEC_RESERVE(s->ids, s->ids_cap, s->nr_ids + n, 1024) ||
		    hashmap__add(&s->entries_map, h, s->nr_entries))
			return -ENOMEM;
		key.first = s->nr_ids;
		key.nr = n;
		for (j = 0; j < n; j++) {
			id = frame_id(s, &s->named.frames[j]);
			if (id < 0)
				return (int)id;
			s->ids[s->nr_ids++] = (uint32_t)id;
		}
		s->entries[s->nr_entries++] = key;
		return 0;
	}
	e = &s->entries[i];
	if (VEC_RESERVE(s->ids, s->ids_cap, s->nr_ids + e->nr, 1024))
		return -ENOMEM;
	memcpy(s->ids + s->nr_ids, s->ids + e->first, e->nr * sizeof(*s->ids));
	s->nr_ids += e->nr;
	return 0;
}

/* A pseudo-frame: the task's command, or "[truncated]". */
static int add_frame(struct snapshot *s, enum sw_kind kind, const char *name)
{
	int64_t id = frame_id(s, &(struct sw_frame){ .kind = kind, .name = name });

	if (id < 0 || VEC_RESERVE(s->ids, s->ids_cap, s->nr_ids + 1, 1024))
		return id < 0 ? (int)id : -ENOMEM;
	s->ids[s->nr_ids++] = (uint32_t)id;
	return 0;
}

/* Stack k, its frames added: its process's executable, and it counts. */
static int end_stack(struct snapshot *s, struct snap_stack *k, const char *exe)
{
	int err = 0;

	k->exe = intern(s, exe, &err);
	if (err)
		return err;
	if (k->nr_frames > s->max_frames)
		s->max_frames = k->nr_frames;
	s->nr_stacks++;
	return 0;
}

/* Names stack st into s, as count samples of that weight. */
static int name_stack(struct snapshot *s, const struct aggr_stack *st, uint64_t count,
		      uint64_t weight)
{
	const uint64_t *kips = st->ips + st->nr_user;
	struct snap_stack *k;
	int err = 0, j;

	if (VEC_RESERVE(s->stacks, s->stacks_cap, s->nr_stacks + 1, 256))
		return -ENOMEM;
	k = &s->stacks[s->nr_stacks];
	*k = (struct snap_stack){ .count = count,
				  .weight = weight,
				  .cgroup_id = st->cgroup_id,
				  .aggr_id = st->id,
				  .key_hash = stack_key_hash(st),
				  .pid = st->pid,
				  .first_id = s->nr_ids };
	err = add_frame(s, SW_COMM, stackwalk__comm(st));
	if (!err && st->truncated)
		err = add_frame(s, SW_TRUNCATED, "[truncated]");
	k->first_user = s->nr_ids - k->first_id;
	/* Root first. */
	for (j = st->nr_user - 1; !err && j >= 0; j--)
		err = add_entry(s, st->pid, SW_USER, stackwalk__addr(st->ips[j], j == 0));
	k->first_kernel = s->nr_ids - k->first_id;
	for (j = st->nr_kernel - 1; !err && j >= 0; j--)
		err = add_entry(s, st->pid, SW_KERNEL, stackwalk__addr(kips[j], j == 0));
	if (err)
		return err;
	k->nr_frames = s->nr_ids - k->first_id;
	/* Once its frames are named: a lookup may take a newer snapshot of the process. */
	return end_stack(s, k, s->sym ? symbolizer__exe(s->sym, st->pid) : NULL);
}

static bool kept_eq(const void *ctx, uint64_t idx, const void *key)
{
	return ((const struct snapshot *)ctx)->stacks[idx].aggr_id == *(const uint64_t *)key;
}

static uint32_t kept_hash(uint64_t aggr_id)
{
	return (uint32_t)hash__mix64(aggr_id);
}

/* The kept names of st, if kept has the same stack: NULL if not. */
static const struct snap_stack *kept_stack(const struct snapshot *kept, const struct aggr_stack *st)
{
	const struct snap_stack *k;
	int64_t i;

	if (!kept)
		return NULL;
	i = hashmap__find(&kept->kept_map, kept_hash(st->id), kept_eq, kept, &st->id);
	if (i < 0)
		return NULL;
	k = &kept->stacks[i];
	return k->pid == st->pid && k->key_hash == stack_key_hash(st) ? k : NULL;
}

/* A kept stack's frames, as this snapshot's: count samples of that weight. */
static int copy_kept(struct snapshot *s, const struct snap_stack *from, uint64_t count,
		     uint64_t weight)
{
	const struct snapshot *kept = s->kept;
	struct snap_stack *k;
	int64_t id;
	size_t j;

	if (VEC_RESERVE(s->stacks, s->stacks_cap, s->nr_stacks + 1, 256) ||
	    VEC_RESERVE(s->ids, s->ids_cap, s->nr_ids + from->nr_frames, 1024))
		return -ENOMEM;
	k = &s->stacks[s->nr_stacks];
	*k = *from;
	k->count = count;
	k->weight = weight;
	k->first_id = s->nr_ids;
	for (j = 0; j < from->nr_frames; j++) {
		id = frame_id(s, &kept->frames[kept->ids[from->first_id + j]]);
		if (id < 0)
			return (int)id;
		s->ids[s->nr_ids++] = (uint32_t)id;
	}
	return end_stack(s, k, from->exe);
}

static int walk_stack(const struct aggr_stack *st, void *ctx)
{
	struct snapshot *s = ctx;
	const struct snap_stack *k = kept_stack(s->kept, st);
	int err;

	if (!k)
		return name_stack(s, st, st->count, st->weight);
	/* Named when its process was forgotten; samples since (its PID again): named now. */
	err = copy_kept(s, k, st->count < k->count ? st->count : k->count,
			st->weight < k->weight ? st->weight : k->weight);
	if (err || st->count <= k->count)
		return err;
	return name_stack(s, st, st->count - k->count,
			  st->weight > k->weight ? st->weight - k->weight : 0);
}

/* snapshot__keep()'s walk: the wanted processes' stacks not kept yet. */
static int keep_stack(const struct aggr_stack *st, void *ctx)
{
	struct snapshot *s = ctx;
	int err;

	if (!s->want(st->pid, s->want_ctx) || kept_stack(s, st))
		return 0;
	err = name_stack(s, st, st->count, st->weight);
	if (!err && hashmap__add(&s->kept_map, kept_hash(st->id), s->nr_stacks - 1))
		err = -ENOMEM;
	return err;
}

/* Frees what only the walk needs: the lookups of the frames and entries named. */
static void end_walk(struct snapshot *s)
{
	hashmap__free(&s->frames_map);
	hashmap__free(&s->entries_map);
	free(s->entries);
	s->entries = NULL;
	free(s->named.frames);
	s->named.frames = NULL;
}

struct snapshot *snapshot__new_kept(const struct aggregator *a, struct symbolizer *sym,
				    const struct ksyms *ks, const struct snapshot *kept)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->sym = sym;
	s->ks = ks;
	s->kept = kept;
	err = aggregator__for_each(a, walk_stack, s);
	s->kept = NULL;
	end_walk(s);
	if (!err)
		return s;
	snapshot__free(s);
	errno = -err;
	return NULL;
}

struct snapshot *snapshot__new(const struct aggregator *a, struct symbolizer *sym,
			       const struct ksyms *ks)
{
	return snapshot__new_kept(a, sym, ks, NULL);
}

int snapshot__keep(struct snapshot **kept, const struct aggregator *a, struct symbolizer *sym,
		   const struct ksyms *ks, bool (*want)(uint32_t pid, void *ctx), void *ctx)
{
	struct snapshot *s = *kept;
	int err;

	if (!s && !(s = *kept = calloc(1, sizeof(*s))))
		return -ENOMEM;
	s->sym = sym;
	s->ks = ks;
	s->want = want;
	s->want_ctx = ctx;
	err = aggregator__for_each(a, keep_stack, s);
	s->want = NULL;
	s->sym = NULL;
	/* Entries are named per PID: the next call's PIDs may be other processes. */
	hashmap__free(&s->entries_map);
	s->nr_entries = 0;
	return err;
}

size_t snapshot__kept_stacks(const struct snapshot *kept)
{
	return kept ? kept->nr_stacks : 0;
}

void snapshot__free(struct snapshot *s)
{
	if (!s)
		return;
	end_walk(s);
	hashmap__free(&s->kept_map);
	strset__free(&s->strings);
	free(s->frames);
	free(s->ids);
	free(s->stacks);
	free(s);
}

int snapshot__for_each(const struct snapshot *s, sw_cb cb, void *ctx)
{
	struct sw_frame *frames = calloc(s->max_frames ? s->max_frames : 1, sizeof(*frames));
	struct sw_stack st;
	size_t i, j;
	int err = 0;

	if (!frames)
		return -ENOMEM;
	for (i = 0; i < s->nr_stacks && !err; i++) {
		const struct snap_stack *k = &s->stacks[i];

		for (j = 0; j < k->nr_frames; j++)
			frames[j] = s->frames[s->ids[k->first_id + j]];
		st = (struct sw_stack){ .pid = k->pid,
					.count = k->count,
					.weight = k->weight,
					.cgroup_id = k->cgroup_id,
					.exe = k->exe,
					.nr_frames = k->nr_frames,
					.frames = frames,
					.first_user = k->first_user,
					.first_kernel = k->first_kernel };
		err = cb(&st, ctx);
	}
	free(frames);
	return err;
}
