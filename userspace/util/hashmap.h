/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one hash map: open addressing from a 32-bit hash to a value, where the
 * value is an id (a position in the caller's own array of entries) or a
 * pointer to an entry the caller owns. Keys live in the entries, so the map
 * stores 12 bytes per slot and never copies or frees a key: the caller's
 * eq() tells whether the entry behind a value is the one being looked up.
 * Several entries may share a hash.
 *
 * Hashes come from util/hash.h. The load factor stays at or below 1/2;
 * deletion shifts later entries back (no tombstones). A zeroed struct
 * hashmap is an empty map. Values are below INT64_MAX. Not thread-safe.
 */
#ifndef SFBPF_UTIL_HASHMAP_H
#define SFBPF_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef bool (*hashmap_eq)(const void *ctx, uint64_t val, const void *key);

#define HASHMAP_MIN_CAP 256 /* slots at the first add; then doubled at half full */

struct hashmap {
	uint64_t *vals; /* value + 1; 0: empty */
	uint32_t *hashes;
	size_t cap, used; /* cap: a power of two */
};

/* The value stored under hash h whose entry eq() matches key, or -1. */
int64_t hashmap__find(const struct hashmap *m, uint32_t h, hashmap_eq eq, const void *ctx,
		      const void *key);
/* Adds val under hash h (the caller knows its key is absent). 0 or -ENOMEM. */
int hashmap__add(struct hashmap *m, uint32_t h, uint64_t val);
/* Removes the value stored under h whose entry eq() matches key; false: none. */
bool hashmap__del(struct hashmap *m, uint32_t h, hashmap_eq eq, const void *ctx, const void *key);
/*
 * Every value stored under hash h (whatever its key), in no order: start with
 * *iter = 0; false at the end. For entries several of which share a key.
 * The map must not change meanwhile.
 */
bool hashmap__next_at(const struct hashmap *m, uint32_t h, size_t *iter, uint64_t *val);
/* Every value once, in no order: start with *iter = 0; false at the end. */
bool hashmap__next(const struct hashmap *m, size_t *iter, uint64_t *val);
size_t hashmap__size(const struct hashmap *m);
/* Heap bytes its slots take (12 a slot); HASHMAP_SLOT_BYTES for what a doubling costs. */
#define HASHMAP_SLOT_BYTES (sizeof(uint64_t) + sizeof(uint32_t))
size_t hashmap__bytes(const struct hashmap *m);
/* Empties the map, keeping its memory. */
void hashmap__clear(struct hashmap *m);
void hashmap__free(struct hashmap *m);

/* Pointers as values, and back. */
#define HASHMAP_PTR(p) ((uint64_t)(uintptr_t)(p))
#define HASHMAP_TO_PTR(v) ((void *)(uintptr_t)(v))

#endif /* SFBPF_UTIL_HASHMAP_H */
