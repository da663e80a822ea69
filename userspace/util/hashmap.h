/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one hash map: an open-addressing index from a hash to an id (a
 * position in the caller's own array of entries). Keys live in the entries,
 * so the map stores 8 bytes per slot and never copies or frees a key; the
 * caller's eq() compares a candidate id with the key being looked up. Ids are
 * never removed one by one (tables that age entries rebuild or clear).
 *
 * Hashes come from util/hash.h. The load factor stays at or below 1/2.
 * A zeroed struct hashmap is an empty map. Not thread-safe.
 */
#ifndef SFBPF_UTIL_HASHMAP_H
#define SFBPF_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef bool (*hashmap_eq)(const void *ctx, uint32_t id, const void *key);

struct hashmap {
	uint32_t *ids; /* id + 1; 0: empty */
	uint32_t *hashes;
	size_t cap, used; /* cap: a power of two */
};

/* The id stored under hash h whose key eq() matches, or -1. */
int64_t hashmap__find(const struct hashmap *m, uint32_t h, hashmap_eq eq, const void *ctx,
		      const void *key);
/* Adds id (absent) under hash h. 0 or -ENOMEM. */
int hashmap__add(struct hashmap *m, uint32_t h, uint32_t id);
/* Empties the map, keeping its memory. */
void hashmap__clear(struct hashmap *m);
void hashmap__free(struct hashmap *m);

#endif /* SFBPF_UTIL_HASHMAP_H */
