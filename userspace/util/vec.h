/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Growing an array by doubling, written once. An array is a pointer and a
 * capacity in elements kept by the caller; vec__reserve() makes room for
 * `need` elements in all, keeping the contents.
 */
#ifndef SFBPF_UTIL_VEC_H
#define SFBPF_UTIL_VEC_H

#include <stddef.h>

/*
 * Makes *arr hold at least need elements of elem_size bytes: the capacity
 * doubles from min_cap (at least 1) until it fits. On failure the array is
 * unchanged and -ENOMEM is returned (also when the size would overflow).
 */
int vec__reserve(void *arr, size_t *cap, size_t need, size_t elem_size, size_t min_cap);

/* The same, for a typed pointer: VEC_RESERVE(w->lines, w->lines_cap, n + 1, 64). */
#define VEC_RESERVE(arr, cap, need, min_cap) \
	vec__reserve(&(arr), &(cap), (need), sizeof(*(arr)), (min_cap))

#endif /* SFBPF_UTIL_VEC_H */
