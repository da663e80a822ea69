/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Arenas: memory handed out in small pieces that stay put until the whole
 * arena is freed, so that pointers to entries (names, keys) stay valid while
 * the arrays indexing them grow. A zeroed struct arena is empty.
 */
#ifndef SFBPF_UTIL_ARENA_H
#define SFBPF_UTIL_ARENA_H

#include <stddef.h>

/*
 * Chunks double from ARENA_FIRST_CHUNK to ARENA_CHUNK: a set of a few names (a
 * source file's, one of hundreds kept) takes a few KiB, a big one is in few
 * chunks. A fixed 256 KiB first chunk made every small arena cost that much.
 */
#define ARENA_FIRST_CHUNK (4u << 10)
#define ARENA_CHUNK (256u << 10)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

struct arena {
	struct arena_chunk *head;
};

/* n bytes (8-aligned, uninitialized) that stay put until arena__free(); NULL: no memory. */
void *arena__alloc(struct arena *a, size_t n);
void arena__free(struct arena *a);
/* The heap bytes its chunks take. */
size_t arena__bytes(const struct arena *a);

#endif /* SFBPF_UTIL_ARENA_H */
