// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The symbolized snapshot (see snapshot.h).
 *
 * The walk's strings live during its callback only, so each is interned into
 * the snapshot's arena, where it stays put; frames are then compared by
 * their fields, strings by pointer, and each distinct frame is kept once
 * (stacks share most of theirs: the same functions of the same processes).
 * A stack is its header and the ids of its frames, root first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregate.h"
#include "profile/snapshot.h"
#include "util/arena.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/vec.h"

struct snap_stack {
	uint64_t count, weight, cgroup_id;
	const char *exe;
	uint32_t pid;
	size_t first_id; /* its frame ids: ids[first_id ...] */
	size_t nr_frames, first_user, first_kernel;
};

struct snapshot {
	struct arena strings_arena;
	const char **strings;
	size_t nr_strings, strings_cap;
	struct hashmap strings_map;

	struct sw_frame *frames; /* distinct, their strings interned */
	size_t nr_frames, frames_cap;
	struct hashmap frames_map;

	uint32_t *ids;
	size_t nr_ids, ids_cap;
	struct snap_stack *stacks;
	size_t nr_stacks, stacks_cap;
	size_t max_frames; /* the deepest stack's */
};

static bool str_eq(const void *ctx, uint64_t id, const void *key)
{
	return !strcmp(((const struct snapshot *)ctx)->strings[id], key);
}

/* The snapshot's copy of s (NULL stays NULL); *err = -ENOMEM without memory. */
static const char *intern(struct snapshot *s, const char *str, int *err)
{
	uint32_t h;
	int64_t id;
	size_t n;
	char *copy;

	if (!str)
		return NULL;
	h = (uint32_t)hash__str(str);
	id = hashmap__find(&s->strings_map, h, str_eq, s, str);
	if (id >= 0)
		return s->strings[id];
	n = strlen(str) + 1;
	copy = arena__alloc(&s->strings_arena, n);
	if (!copy || VEC_RESERVE(s->strings, s->strings_cap, s->nr_strings + 1, 256) ||
	    hashmap__add(&s->strings_map, h, s->nr_strings)) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(copy, str, n);
	s->strings[s->nr_strings++] = copy;
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

static int keep_stack(const struct sw_stack *st, void *ctx)
{
	struct snapshot *s = ctx;
	struct snap_stack *k;
	int64_t id;
	int err = 0;
	size_t i;

	if (VEC_RESERVE(s->stacks, s->stacks_cap, s->nr_stacks + 1, 256) ||
	    VEC_RESERVE(s->ids, s->ids_cap, s->nr_ids + st->nr_frames, 1024))
		return -ENOMEM;
	k = &s->stacks[s->nr_stacks];
	*k = (struct snap_stack){ .count = st->count,
				  .weight = st->weight,
				  .cgroup_id = st->cgroup_id,
				  .pid = st->pid,
				  .first_id = s->nr_ids,
				  .nr_frames = st->nr_frames,
				  .first_user = st->first_user,
				  .first_kernel = st->first_kernel };
	k->exe = intern(s, st->exe, &err);
	if (err)
		return err;
	for (i = 0; i < st->nr_frames; i++) {
		id = frame_id(s, &st->frames[i]);
		if (id < 0)
			return (int)id;
		s->ids[s->nr_ids++] = (uint32_t)id;
	}
	if (st->nr_frames > s->max_frames)
		s->max_frames = st->nr_frames;
	s->nr_stacks++;
	return 0;
}

struct snapshot *snapshot__new(const struct aggregator *a, struct symbolizer *sym,
			       const struct ksyms *ks)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	err = stackwalk__for_each(a, sym, ks, keep_stack, s);
	/* Only the stacks are looked up from now on. */
	hashmap__free(&s->strings_map);
	hashmap__free(&s->frames_map);
	if (err) {
		snapshot__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void snapshot__free(struct snapshot *s)
{
	if (!s)
		return;
	arena__free(&s->strings_arena);
	hashmap__free(&s->strings_map);
	hashmap__free(&s->frames_map);
	free(s->strings);
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
