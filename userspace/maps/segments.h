/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The backing of one table space (rows or pages, bpf/abi.h): an array of maps
 * whose segments — one mmap'able BPF array each, 1 << shift entries of 4
 * bytes — exist only where some table's slice lies. segspace__get() creates
 * what a new slice needs, segspace__put() frees segments no slice uses any
 * more: the map memory follows what is loaded, and the slices (slices.h) stay
 * the one record of who owns which entries.
 *
 * Linking or unlinking a map in an array of maps makes the kernel wait for an
 * RCU grace period (10-35 ms measured here, per call): the segments a slice
 * needs are linked in one batch, and an empty segment lingers (linger_ns)
 * before it is unlinked, one per segspace__reap() call. With
 * segspace__set_async(), a thread of the space's own makes those calls, in
 * the order they were asked: the sampling thread, which reads the samples
 * and publishes tables, never waits a grace period out (a big table's
 * admission did, 34 ms for cc1's, while its processes' samples waited to
 * be read). A slice's rows can be written at once (the segment exists, and
 * is mapped through its own descriptor); a table is published only once
 * segspace__linked() says its segments are in the array of maps.
 */
#ifndef SFBPF_SEGMENTS_H
#define SFBPF_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi.h"

struct segment {
	int fd; /* -1: absent */
	uint32_t *mem; /* its element while mapped for writes (segspace__map()), else NULL */
	uint32_t used; /* entries of it inside some slice */
	uint64_t empty_since; /* present and unused since then (CLOCK_MONOTONIC ns); 0: in use */
	uint32_t gen; /* links asked for it: linked once the linker has done the last */
	uint8_t reserved; /* kept linked though empty: a bit per segspace__reserve() range */
};

struct seglinker;

struct segspace {
	int outer_fd; /* the array of maps (rows or pages) */
	uint32_t shift; /* a segment holds 1 << shift entries */
	uint32_t nr_segs;
	uint32_t present; /* segments that exist */
	uint64_t seg_bytes; /* map memory one segment takes */
	uint64_t linger_ns; /* an empty segment is kept this long; 0: freed at once */
	uint32_t lingering; /* empty segments kept */
	struct segment *segs;
	struct seglinker *linker; /* NULL: links and unlinks on the caller's thread */
};

/*
 * A space of capacity entries in segments of 1 << shift entries (0: the
 * most, SFBPF_SEG_SHIFT_MAX) in the array of maps outer_fd, which must have
 * room for them and inner maps of that size. 0, or a negative errno.
 */
int segspace__init(struct segspace *s, int outer_fd, uint32_t capacity, uint32_t shift);
void segspace__fini(struct segspace *s);
/*
 * Links and unlinks on a thread of the space's own from now on (see above):
 * 0, or a negative errno (the space stays synchronous). wake_fd (an
 * eventfd, or -1): written after each batch of links, so that whoever waits
 * for segspace__linked() need not poll for it; the space keeps a dup.
 */
int segspace__set_async(struct segspace *s, int wake_fd);
/*
 * Whether the segments of [start, start + n) are linked: 1, 0 (being linked),
 * or the negative errno their link failed with (the caller gives the slice
 * back; a later segspace__get() links the segment again).
 */
int segspace__linked(struct segspace *s, uint32_t start, uint32_t n);
/*
 * Keeps the segments of [start, start + n) present and linked though no
 * slice uses them (async spaces only: -ENOTSUP otherwise): where the next
 * table will likely go, so that the grace period of their link passes
 * while it is built, not after. Up to SEGSPACE_RESERVES ranges, named by
 * which; the range which named before is let go (its empty segments linger
 * as any). 0 or a negative errno.
 */
#define SEGSPACE_RESERVES 2
int segspace__reserve(struct segspace *s, unsigned which, uint32_t start, uint32_t n);
/* Waits until segspace__linked() is not 0, and returns it. */
int segspace__wait_linked(struct segspace *s, uint32_t start, uint32_t n);
/* Creates the segments that entries [start, start + n) need. 0 or a negative errno. */
int segspace__get(struct segspace *s, uint32_t start, uint32_t n);
/* [start, start + n) is no slice's any more: the segments left unused go (or linger). */
void segspace__put(struct segspace *s, uint32_t start, uint32_t n);
/* Frees one segment that has been empty for linger_ns, if any. */
void segspace__reap(struct segspace *s);
/*
 * Maps the segments of [start, start + n) (they exist: a slice got them) for
 * writes. 0 or a negative errno. segspace__unmap() unmaps every segment once
 * no write is pending: the pages stay the map's, and mapped they would also
 * count in our RSS (MiBs of it).
 */
int segspace__map(struct segspace *s, uint32_t start, uint32_t n);
void segspace__unmap(struct segspace *s);
/* Entry i (4 bytes), to be written; its segment must be mapped (segspace__map()). */
static inline void *segspace__entry(const struct segspace *s, uint32_t i)
{
	return &s->segs[i >> s->shift].mem[i & ((1u << s->shift) - 1)];
}
/* Writes n 4-byte entries from src at start (inside one slice). */
void segspace__write(const struct segspace *s, uint32_t start, const void *src, uint32_t n);
/*
 * An array of maps for a space of capacity entries, made without a BPF
 * object (tests): its fd, or a negative errno. The BPF programs declare
 * their own (bpf/unwind_maps.h).
 */
int segspace__new_map(const char *name, uint32_t capacity, uint32_t shift);
/* A new segment of 1 << shift entries, unlinked (an inner map's template): its fd or -errno. */
int segspace__new_segment(uint32_t shift);
/* Map memory the existing segments take. */
uint64_t segspace__bytes(const struct segspace *s);

#endif /* SFBPF_SEGMENTS_H */
