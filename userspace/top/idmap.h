/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Building blocks of the live view's model (topview.c): arenas, so that
 * pointers to entities stay valid while their id tables grow; vectors; and
 * one open-addressing map type from a 32-bit hash to an id, whose keys live
 * in the entities (the caller's eq compares them).
 */
#ifndef SFBPF_IDMAP_H
#define SFBPF_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARENA_CHUNK (256u << 10)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

struct arena {
	struct arena_chunk *head;
};

typedef bool (*idmap_eq)(const void *ctx, uint32_t id, const void *key);

struct idmap {
	uint32_t *ids; /* id + 1; 0: empty */
	uint32_t *hashes;
	size_t cap, used; /* cap: a power of two */
};

/* n bytes (8-aligned, uninitialized) that stay put until arena__free(); NULL: no memory. */
void *arena__alloc(struct arena *a, size_t n);
void arena__free(struct arena *a);
/* Grows *items (of size bytes each, capacity *cap) to hold n; -ENOMEM. */
int vec__reserve(void **items, size_t *cap, size_t n, size_t size);
uint64_t idmap_mix64(uint64_t h);
uint64_t idmap_hash_str(const char *s);
/* The id stored under hash h whose key eq() matches, or -1. */
int64_t idmap__find(const struct idmap *m, uint32_t h, idmap_eq eq, const void *ctx,
		    const void *key);
/* Adds id (absent) under hash h; load factor stays <= 1/2. 0 or -ENOMEM. */
int idmap__add(struct idmap *m, uint32_t h, uint32_t id);
void idmap__clear(struct idmap *m);
void idmap__free(struct idmap *m);

#endif /* SFBPF_IDMAP_H */
