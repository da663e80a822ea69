// SPDX-License-Identifier: GPL-2.0-or-later
/* Arenas, growable vectors and id maps for the live view's model (see idmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "top/idmap.h"

/* ---- arenas and vectors ---- */

void *arena__alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c = a->head;
	size_t size;
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (!c || c->size - c->used < n) {
		size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->size = size;
		a->head = c;
	}
	p = c->data + c->used;
	c->used += n;
	return p;
}

void arena__free(struct arena *a)
{
	struct arena_chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

/* Grows *items (of size bytes each) to hold at least n. */
int vec__reserve(void **items, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap : 64;
	void *p;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	p = realloc(*items, c * size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*cap = c;
	return 0;
}

/* ---- id maps: open addressing, keys kept by the entities ---- */

uint64_t idmap_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

uint64_t idmap_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return idmap_mix64(h);
}

/* The id stored under key, or -1. */
int64_t idmap__find(const struct idmap *m, uint32_t h, idmap_eq eq, const void *ctx,
		    const void *key)
{
	size_t i;

	if (!m->cap)
		return -1;
	for (i = h & (m->cap - 1); m->ids[i]; i = (i + 1) & (m->cap - 1))
		if (m->hashes[i] == h && eq(ctx, m->ids[i] - 1, key))
			return m->ids[i] - 1;
	return -1;
}

static void idmap_put(uint32_t *ids, uint32_t *hashes, size_t cap, uint32_t h, uint32_t id)
{
	size_t i;

	for (i = h & (cap - 1); ids[i]; i = (i + 1) & (cap - 1))
		;
	ids[i] = id + 1;
	hashes[i] = h;
}

/* Adds id (absent) under hash h; load factor stays <= 1/2. */
int idmap__add(struct idmap *m, uint32_t h, uint32_t id)
{
	size_t i, cap = m->cap ? m->cap * 2 : 256;
	uint32_t *ids, *hashes;

	if ((m->used + 1) * 2 > m->cap) {
		ids = calloc(cap, sizeof(*ids));
		hashes = calloc(cap, sizeof(*hashes));
		if (!ids || !hashes) {
			free(ids);
			free(hashes);
			return -ENOMEM;
		}
		for (i = 0; i < m->cap; i++)
			if (m->ids[i])
				idmap_put(ids, hashes, cap, m->hashes[i], m->ids[i] - 1);
		free(m->ids);
		free(m->hashes);
		m->ids = ids;
		m->hashes = hashes;
		m->cap = cap;
	}
	idmap_put(m->ids, m->hashes, m->cap, h, id);
	m->used++;
	return 0;
}

void idmap__clear(struct idmap *m)
{
	if (m->cap) {
		memset(m->ids, 0, m->cap * sizeof(*m->ids));
		m->used = 0;
	}
}

void idmap__free(struct idmap *m)
{
	free(m->ids);
	free(m->hashes);
	memset(m, 0, sizeof(*m));
}
