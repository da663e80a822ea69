// SPDX-License-Identifier: GPL-2.0-or-later
/* Arenas: see arena.h. */
#include <stdlib.h>

#include "util/arena.h"

void *arena__alloc(struct arena *a, size_t n)
{
	struct arena_chunk *c = a->head;
	size_t size;
	void *p;

	n = (n + 7) & ~(size_t)7;
	if (!c || c->size - c->used < n) {
		size = ARENA_FIRST_CHUNK;
		if (c)
			size = c->size >= ARENA_CHUNK / 2 ? ARENA_CHUNK : c->size * 2;
		if (n > size)
			size = n;
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

size_t arena__bytes(const struct arena *a)
{
	const struct arena_chunk *c;
	size_t n = 0;

	for (c = a->head; c; c = c->next)
		n += sizeof(*c) + c->size;
	return n;
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
