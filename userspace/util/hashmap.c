// SPDX-License-Identifier: GPL-2.0-or-later
/* The one hash map: see hashmap.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

int64_t hashmap__find(const struct hashmap *m, uint32_t h, hashmap_eq eq, const void *ctx,
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

static void put(uint32_t *ids, uint32_t *hashes, size_t cap, uint32_t h, uint32_t id)
{
	size_t i;

	for (i = h & (cap - 1); ids[i]; i = (i + 1) & (cap - 1))
		;
	ids[i] = id + 1;
	hashes[i] = h;
}

int hashmap__add(struct hashmap *m, uint32_t h, uint32_t id)
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
				put(ids, hashes, cap, m->hashes[i], m->ids[i] - 1);
		free(m->ids);
		free(m->hashes);
		m->ids = ids;
		m->hashes = hashes;
		m->cap = cap;
	}
	put(m->ids, m->hashes, m->cap, h, id);
	m->used++;
	return 0;
}

void hashmap__clear(struct hashmap *m)
{
	if (m->cap) {
		memset(m->ids, 0, m->cap * sizeof(*m->ids));
		m->used = 0;
	}
}

void hashmap__free(struct hashmap *m)
{
	free(m->ids);
	free(m->hashes);
	memset(m, 0, sizeof(*m));
}
