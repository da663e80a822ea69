// SPDX-License-Identifier: GPL-2.0-or-later
/* The one hash map: see hashmap.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

/* The slot holding the matching value, or the empty slot that ends its probe. */
static size_t probe(const struct hashmap *m, uint32_t h, hashmap_eq eq, const void *ctx,
		    const void *key)
{
	size_t i;

	for (i = h & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->hashes[i] == h && eq(ctx, m->vals[i] - 1, key))
			break;
	return i;
}

bool hashmap__next_at(const struct hashmap *m, uint32_t h, size_t *iter, uint64_t *val)
{
	size_t mask = m->cap - 1, i;

	/* *iter: how far along h's probe run, which ends at an empty slot. */
	for (; m->cap && *iter <= mask; (*iter)++) {
		i = (h + *iter) & mask;
		if (!m->vals[i])
			return false;
		if (m->hashes[i] == h) {
			*val = m->vals[i] - 1;
			(*iter)++;
			return true;
		}
	}
	return false;
}

int64_t hashmap__find(const struct hashmap *m, uint32_t h, hashmap_eq eq, const void *ctx,
		      const void *key)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = probe(m, h, eq, ctx, key);
	return m->vals[i] ? (int64_t)(m->vals[i] - 1) : -1;
}

static void put(uint64_t *vals, uint32_t *hashes, size_t cap, uint32_t h, uint64_t stored)
{
	size_t i;

	for (i = h & (cap - 1); vals[i]; i = (i + 1) & (cap - 1))
		;
	vals[i] = stored;
	hashes[i] = h;
}

int hashmap__add(struct hashmap *m, uint32_t h, uint64_t val)
{
	size_t i, cap = m->cap ? m->cap * 2 : HASHMAP_MIN_CAP;
	uint32_t *hashes;
	uint64_t *vals;

	if ((m->used + 1) * 2 > m->cap) {
		vals = calloc(cap, sizeof(*vals));
		hashes = calloc(cap, sizeof(*hashes));
		if (!vals || !hashes) {
			free(vals);
			free(hashes);
			return -ENOMEM;
		}
		for (i = 0; i < m->cap; i++)
			if (m->vals[i])
				put(vals, hashes, cap, m->hashes[i], m->vals[i]);
		free(m->vals);
		free(m->hashes);
		m->vals = vals;
		m->hashes = hashes;
		m->cap = cap;
	}
	put(m->vals, m->hashes, m->cap, h, val + 1);
	m->used++;
	return 0;
}

/*
 * Linear probing without tombstones: after emptying slot i, every later
 * entry of the run whose home slot does not lie cyclically in (i, j] moves
 * back into the hole, so that no probe stops early.
 */
bool hashmap__del(struct hashmap *m, uint32_t h, hashmap_eq eq, const void *ctx, const void *key)
{
	size_t mask = m->cap - 1, i, j, home;

	if (!m->cap)
		return false;
	i = probe(m, h, eq, ctx, key);
	if (!m->vals[i])
		return false;
	for (j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
		home = m->hashes[j] & mask;
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->vals[i] = m->vals[j];
		m->hashes[i] = m->hashes[j];
		i = j;
	}
	m->vals[i] = 0;
	m->used--;
	return true;
}

bool hashmap__next(const struct hashmap *m, size_t *iter, uint64_t *val)
{
	for (; *iter < m->cap; (*iter)++) {
		if (m->vals[*iter]) {
			*val = m->vals[(*iter)++] - 1;
			return true;
		}
	}
	return false;
}

size_t hashmap__bytes(const struct hashmap *m)
{
	return m->cap * HASHMAP_SLOT_BYTES;
}

size_t hashmap__size(const struct hashmap *m)
{
	return m->used;
}

void hashmap__clear(struct hashmap *m)
{
	if (m->cap) {
		memset(m->vals, 0, m->cap * sizeof(*m->vals));
		m->used = 0;
	}
}

void hashmap__free(struct hashmap *m)
{
	free(m->vals);
	free(m->hashes);
	memset(m, 0, sizeof(*m));
}
