/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slices of one table array (rows or pages) in two arenas: small tables in
 * the top eighth, large ones below (small ones spill there when the top is
 * full). A small table that stays hot would otherwise sit anywhere and keep
 * a large one from finding a contiguous slice, whatever is evicted around
 * it. Each arena is a first-fit range allocator (rangealloc.h).
 */
#ifndef SFBPF_SLICES_H
#define SFBPF_SLICES_H

#include <stdbool.h>
#include <stdint.h>

#include "maps/rangealloc.h"

struct slices {
	struct rangealloc *big, *small;
	uint32_t cap; /* entries in the array */
	uint32_t small_base; /* the small arena: [small_base, cap) */
	uint32_t small_max; /* tables up to this size are small */
};

/* 0 or -ENOMEM. */
int slices__init(struct slices *s, uint32_t cap);
void slices__fini(struct slices *s);
/* Start of n free entries, or -ENOSPC / -ENOMEM. */
int64_t slices__alloc(struct slices *s, uint32_t n);
void slices__release(struct slices *s, uint32_t start, uint32_t n);
/*
 * Where a large (or, with small, a small) table of n entries would go now
 * (-ENOSPC: nowhere in that arena), and the free room there.
 */
int64_t slices__fit(const struct slices *s, bool small, uint32_t n, uint32_t *len);
uint32_t slices__used(const struct slices *s);

/* The arenas a table of n entries may live in, in the order they are tried. */
struct slices_arena {
	uint32_t base, end;
};
uint32_t slices__arenas(const struct slices *s, uint32_t n, struct slices_arena out[2]);

#endif /* SFBPF_SLICES_H */
