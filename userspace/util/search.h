/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sorted-range search, written once. Mappings, kernel symbols, ELF
 * symbols and the symbolizer's snapshots are arrays sorted by a 64-bit start
 * address; finding the one an address falls in starts with how many of them
 * start at or below it. Each caller then decides what "in" means (an end, a
 * size, nested symbols), so that part stays with it.
 *
 * Inline: it runs for every frame symbolized, and the compiler then sees the
 * element size and the key's offset as constants.
 */
#ifndef SFBPF_UTIL_SEARCH_H
#define SFBPF_UTIL_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * How many of the count elements of elem_size bytes at base, sorted by the
 * uint64_t at key_off in each, have a key at or below key: the element key
 * falls in, if any, is the one before that index. 0 with no such element.
 */
static inline size_t search__upto(const void *base, size_t count, size_t elem_size, size_t key_off,
				  uint64_t key)
{
	const char *p = base;
	size_t lo = 0, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, p + mid * elem_size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The same, for a typed array and its key field: SEARCH_UPTO(pm->maps, pm->count, start, addr). */
#define SEARCH_UPTO(arr, count, field, key)                                                       \
	({                                                                                        \
		_Static_assert(sizeof((arr)->field) == sizeof(uint64_t), "a 64-bit key");         \
		search__upto((arr), (count), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field), \
			     (key));                                                              \
	})

#endif /* SFBPF_UTIL_SEARCH_H */
