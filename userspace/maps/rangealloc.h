/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * First-fit allocator of index ranges in a fixed-size array (the BPF row and
 * page arrays): objects own contiguous slices, freed slices coalesce.
 */
#ifndef SFBPF_RANGEALLOC_H
#define SFBPF_RANGEALLOC_H

#include <stdint.h>

struct rangealloc;

struct rangealloc *rangealloc__new(uint32_t capacity);
void rangealloc__free(struct rangealloc *ra);
/* Start of a free range of n entries, or -ENOSPC / -ENOMEM. */
int64_t rangealloc__alloc(struct rangealloc *ra, uint32_t n);
void rangealloc__release(struct rangealloc *ra, uint32_t start, uint32_t n);
uint32_t rangealloc__used(const struct rangealloc *ra);
/* Where rangealloc__alloc() would put n entries (-ENOSPC: nowhere), and the free extent's length.
 */
int64_t rangealloc__fit(const struct rangealloc *ra, uint32_t n, uint32_t *len);
uint32_t rangealloc__capacity(const struct rangealloc *ra);

#endif /* SFBPF_RANGEALLOC_H */
