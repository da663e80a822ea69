// SPDX-License-Identifier: GPL-2.0-or-later
/* Range allocator (see rangealloc.h): a sorted array of free extents. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maps/rangealloc.h"
#include "util/vec.h"

struct extent {
	uint32_t start, len;
};

struct rangealloc {
	uint32_t capacity, used;
	struct extent *free; /* sorted by start, never adjacent */
	uint32_t nr_free;
	size_t cap_free;
};

struct rangealloc *rangealloc__new(uint32_t capacity)
{
	struct rangealloc *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return NULL;
	ra->capacity = capacity;
	ra->cap_free = 16;
	ra->free = calloc(ra->cap_free, sizeof(*ra->free));
	if (!ra->free) {
		free(ra);
		return NULL;
	}
	if (capacity)
		ra->free[ra->nr_free++] = (struct extent){ 0, capacity };
	return ra;
}

void rangealloc__free(struct rangealloc *ra)
{
	if (!ra)
		return;
	free(ra->free);
	free(ra);
}

int64_t rangealloc__alloc(struct rangealloc *ra, uint32_t n)
{
	uint32_t i, start;

	if (n == 0)
		return 0;
	for (i = 0; i < ra->nr_free; i++) {
		struct extent *e = &ra->free[i];

		if (e->len < n)
			continue;
		start = e->start;
		e->start += n;
		e->len -= n;
		if (!e->len) {
			memmove(e, e + 1, (ra->nr_free - i - 1) * sizeof(*e));
			ra->nr_free--;
		}
		ra->used += n;
		return start;
	}
	return -ENOSPC;
}

int64_t rangealloc__fit(const struct rangealloc *ra, uint32_t n, uint32_t *len)
{
	uint32_t i;

	for (i = 0; i < ra->nr_free; i++) {
		if (ra->free[i].len >= n) {
			*len = ra->free[i].len;
			return ra->free[i].start;
		}
	}
	return -ENOSPC;
}

static int insert_at(struct rangealloc *ra, uint32_t i, struct extent e)
{
	if (VEC_RESERVE(ra->free, ra->cap_free, (size_t)ra->nr_free + 1, 16))
		return -ENOMEM;
	memmove(&ra->free[i + 1], &ra->free[i], (ra->nr_free - i) * sizeof(e));
	ra->free[i] = e;
	ra->nr_free++;
	return 0;
}

void rangealloc__release(struct rangealloc *ra, uint32_t start, uint32_t n)
{
	uint32_t i = 0;
	struct extent *prev, *next;

	if (n == 0)
		return;
	while (i < ra->nr_free && ra->free[i].start < start)
		i++;
	prev = i ? &ra->free[i - 1] : NULL;
	next = i < ra->nr_free ? &ra->free[i] : NULL;
	ra->used -= n;
	if (prev && prev->start + prev->len == start) {
		prev->len += n;
		if (next && start + n == next->start) {
			prev->len += next->len;
			memmove(next, next + 1, (ra->nr_free - i - 1) * sizeof(*next));
			ra->nr_free--;
		}
	} else if (next && start + n == next->start) {
		next->start = start;
		next->len += n;
	} else if (insert_at(ra, i, (struct extent){ start, n })) {
		ra->used += n; /* out of memory: leak the range rather than corrupt */
	}
}

uint32_t rangealloc__used(const struct rangealloc *ra)
{
	return ra->used;
}

uint32_t rangealloc__capacity(const struct rangealloc *ra)
{
	return ra->capacity;
}
