// SPDX-License-Identifier: GPL-2.0-or-later
/* Slices of a table array in two arenas (see slices.h). */
#include <errno.h>
#include <stddef.h>

#include "maps/slices.h"

int slices__init(struct slices *s, uint32_t cap)
{
	uint32_t small = cap / 8;

	s->cap = cap;
	s->small_base = cap - small;
	s->small_max = cap / 64;
	s->big = rangealloc__new(s->small_base);
	s->small = rangealloc__new(small);
	if (!s->big || !s->small) {
		slices__fini(s);
		return -ENOMEM;
	}
	return 0;
}

void slices__fini(struct slices *s)
{
	rangealloc__free(s->big);
	rangealloc__free(s->small);
	s->big = s->small = NULL;
}

int64_t slices__alloc(struct slices *s, uint32_t n)
{
	int64_t start = -ENOSPC;

	if (n && n <= s->small_max) {
		start = rangealloc__alloc(s->small, n);
		if (start >= 0)
			return s->small_base + start;
	}
	start = rangealloc__alloc(s->big, n);
	return start;
}

void slices__release(struct slices *s, uint32_t start, uint32_t n)
{
	if (start >= s->small_base && n)
		rangealloc__release(s->small, start - s->small_base, n);
	else
		rangealloc__release(s->big, start, n);
}

int64_t slices__fit(const struct slices *s, bool small, uint32_t n, uint32_t *len)
{
	int64_t start;

	if (!small)
		return rangealloc__fit(s->big, n, len);
	start = n <= s->small_max ? rangealloc__fit(s->small, n, len) : -ENOSPC;
	return start < 0 ? start : s->small_base + start;
}

uint32_t slices__used(const struct slices *s)
{
	return rangealloc__used(s->big) + rangealloc__used(s->small);
}

uint32_t slices__arenas(const struct slices *s, uint32_t n, struct slices_arena out[2])
{
	uint32_t k = 0;

	if (n && n <= s->small_max && s->small_base < s->cap)
		out[k++] = (struct slices_arena){ s->small_base, s->cap };
	out[k++] = (struct slices_arena){ 0, s->small_base };
	return k;
}
