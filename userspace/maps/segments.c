// SPDX-License-Identifier: GPL-2.0-or-later
/* Segments of a table space, created and freed as slices need them (see segments.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "maps/segments.h"
#include "util/clock.h"
#include "util/log.h"

static uint32_t valid_shift(uint32_t shift)
{
	if (!shift || shift > SFBPF_SEG_SHIFT_MAX)
		return SFBPF_SEG_SHIFT_MAX;
	return shift < SFBPF_SEG_SHIFT_MIN ? SFBPF_SEG_SHIFT_MIN : shift;
}

/* Bytes of a segment's element. */
static size_t seg_size(uint32_t shift)
{
	return (size_t)4 << shift;
}

int segspace__init(struct segspace *s, int outer_fd, uint32_t capacity, uint32_t shift)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->outer_fd = outer_fd;
	s->shift = valid_shift(shift);
	s->nr_segs = SFBPF_SEGS(capacity, s->shift);
	s->segs = calloc(s->nr_segs ? s->nr_segs : 1, sizeof(*s->segs));
	if (!s->segs)
		return -ENOMEM;
	for (i = 0; i < s->nr_segs; i++)
		s->segs[i].fd = -1;
	/*
	 * What the kernel charges for one: an mmap'able array keeps its
	 * header on a page of its own, before the values.
	 */
	s->seg_bytes = seg_size(s->shift) + (page > 0 ? (uint64_t)page : 4096);
	return 0;
}

/* Segment i's map and mapping go; unlink: take it out of the array of maps first. */
static void seg_free(struct segspace *s, uint32_t i, bool unlink)
{
	struct segment *g = &s->segs[i];

	if (g->fd < 0)
		return;
	/* A sample that still holds it keeps it until it is done (RCU). */
	if (unlink && s->outer_fd >= 0)
		bpf_map_delete_elem(s->outer_fd, &i);
	if (g->mem)
		munmap(g->mem, seg_size(s->shift));
	close(g->fd);
	s->lingering -= g->empty_since != 0;
	*g = (struct segment){ .fd = -1 };
	s->present--;
}

void segspace__fini(struct segspace *s)
{
	uint32_t i;

	/*
	 * Not unlinked one by one (a grace period each): the array of maps
	 * drops them when it goes.
	 */
	for (i = 0; s->segs && i < s->nr_segs; i++)
		seg_free(s, i, false);
	free(s->segs);
	s->segs = NULL;
}

/* One segment: an array of one element, the shape of the spaces' inner map. */
static int seg_map_create(uint32_t shift)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sfbpf_seg", 4, seg_size(shift), 1, &opts);

	return fd < 0 ? -errno : fd;
}

int segspace__new_segment(uint32_t shift)
{
	return seg_map_create(valid_shift(shift));
}

int segspace__new_map(const char *name, uint32_t capacity, uint32_t shift)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner, fd;

	shift = valid_shift(shift);
	inner = seg_map_create(shift);
	if (inner < 0)
		return inner;
	opts.inner_map_fd = inner;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, name, 4, 4, SFBPF_SEGS(capacity, shift),
			    &opts);
	fd = fd < 0 ? -errno : fd;
	close(inner);
	return fd;
}

/* Segment i mapped for writes (it exists). 0 or a negative errno. */
static int seg_map(struct segspace *s, uint32_t i)
{
	struct segment *g = &s->segs[i];
	void *mem;

	if (g->mem)
		return 0;
	mem = mmap(NULL, seg_size(s->shift), PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	g->mem = mem;
	return 0;
}

/* Creates segment i, not linked yet (segspace__map() maps it for the writes). */
static int seg_create(struct segspace *s, uint32_t i)
{
	int fd = seg_map_create(s->shift);

	if (fd < 0) {
		pr_warn("table segment: cannot create a %zu KiB BPF array: %s",
			seg_size(s->shift) >> 10, strerror(-fd));
		return fd;
	}
	s->segs[i] = (struct segment){ .fd = fd };
	s->present++;
	return 0;
}

int segspace__map(struct segspace *s, uint32_t start, uint32_t n)
{
	uint32_t i;
	int err = 0;

	for (i = start >> s->shift; n && !err && i < s->nr_segs &&
				    (uint64_t)i << s->shift < (uint64_t)start + n;
	     i++)
		err = s->segs[i].fd >= 0 ? seg_map(s, i) : -ENOENT;
	return err;
}

void segspace__unmap(struct segspace *s)
{
	uint32_t i;

	for (i = 0; s->segs && i < s->nr_segs; i++) {
		if (s->segs[i].mem) {
			munmap(s->segs[i].mem, seg_size(s->shift));
			s->segs[i].mem = NULL;
		}
	}
}

/*
 * Kernels before 6.x (5.10 among them) have no batch update for arrays of
 * maps (ENOTSUPP, 524): one update per segment there, each with its own grace
 * period. Remembered once seen.
 */
#define SEG_ENOTSUPP 524
static bool no_batch;

/* Links segments [first, first + n) into the array of maps: one at a time. */
static int seg_link_each(struct segspace *s, uint32_t first, uint32_t n)
{
	uint32_t i, key;
	int err;

	for (i = 0; i < n; i++) {
		key = first + i;
		if (bpf_map_update_elem(s->outer_fd, &key, &s->segs[key].fd, BPF_ANY)) {
			err = -errno;
			pr_warn("table segment %u: cannot link it: %s", key, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Links segments [first, first + n) into the array of maps: one batch, one grace period. */
static int seg_link(struct segspace *s, uint32_t first, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t keys[64], count, i, k;
	int fds[64], err = 0;

	for (i = 0; i < n && !err; i += k) {
		k = n - i < 64 ? n - i : 64;
		if (__atomic_load_n(&no_batch, __ATOMIC_RELAXED)) {
			err = seg_link_each(s, first + i, k);
			continue;
		}
		for (count = 0; count < k; count++) {
			keys[count] = first + i + count;
			fds[count] = s->segs[first + i + count].fd;
		}
		if (!bpf_map_update_batch(s->outer_fd, keys, fds, &count, &opts))
			continue;
		err = -errno;
		if (err == -SEG_ENOTSUPP) { /* refused as a whole: nothing linked */
			__atomic_store_n(&no_batch, true, __ATOMIC_RELAXED);
			err = seg_link_each(s, first + i, k);
			continue;
		}
		pr_warn("table segments %u-%u: cannot link them: %s", first + i, first + i + k - 1,
			strerror(-err));
	}
	return err;
}

/* The entries of [start, end) in segment i. */
static uint32_t overlap(const struct segspace *s, uint32_t i, uint64_t start, uint64_t end)
{
	uint64_t lo = (uint64_t)i << s->shift, hi = lo + (1ULL << s->shift);

	lo = lo > start ? lo : start;
	hi = hi < end ? hi : end;
	return hi > lo ? (uint32_t)(hi - lo) : 0;
}

int segspace__get(struct segspace *s, uint32_t start, uint32_t n)
{
	uint64_t end = (uint64_t)start + n;
	uint32_t i, first = start >> s->shift, last, lo = UINT32_MAX, hi = 0;
	int err = 0;

	if (!n)
		return 0;
	last = (uint32_t)((end - 1) >> s->shift);
	if (last >= s->nr_segs)
		return -ERANGE;
	/*
	 * Create the missing ones, then link them in one batch (a present one
	 * between them is linked again: harmless).
	 */
	for (i = first; i <= last && !err; i++) {
		if (s->segs[i].fd >= 0)
			continue;
		err = seg_create(s, i);
		lo = i < lo ? i : lo;
		hi = i + 1;
	}
	if (!err && hi > lo)
		err = seg_link(s, lo, hi - lo);
	if (err) {
		for (i = lo; i < hi; i++)
			if (!s->segs[i].used && !s->segs[i].empty_since)
				seg_free(s, i, true);
		return err;
	}
	for (i = first; i <= last; i++) {
		if (s->segs[i].empty_since) {
			s->segs[i].empty_since = 0;
			s->lingering--;
		}
		s->segs[i].used += overlap(s, i, start, end);
	}
	return 0;
}

void segspace__put(struct segspace *s, uint32_t start, uint32_t n)
{
	uint64_t end = (uint64_t)start + n, now = 0;
	struct segment *g;
	uint32_t i, k;

	for (i = start >> s->shift; n && i < s->nr_segs && (uint64_t)i << s->shift < end; i++) {
		g = &s->segs[i];
		k = overlap(s, i, start, end);
		g->used -= k < g->used ? k : g->used;
		if (g->used || g->fd < 0)
			continue;
		if (!s->linger_ns) {
			seg_free(s, i, true);
			continue;
		}
		now = now ? now : clock__mono_ns();
		g->empty_since = now;
		s->lingering++;
	}
}

void segspace__reap(struct segspace *s)
{
	uint64_t now;
	uint32_t i;

	if (!s->lingering)
		return;
	now = clock__mono_ns();
	for (i = 0; i < s->nr_segs; i++)
		if (s->segs[i].empty_since && now - s->segs[i].empty_since >= s->linger_ns) {
			seg_free(s, i, true);
			return;
		}
}

void segspace__write(const struct segspace *s, uint32_t start, const void *src, uint32_t n)
{
	uint32_t per = 1u << s->shift, k;
	const char *p = src;

	while (n) {
		k = per - (start & (per - 1));
		k = k < n ? k : n;
		memcpy(segspace__entry(s, start), p, (size_t)k * 4);
		p += (size_t)k * 4;
		start += k;
		n -= k;
	}
}

uint64_t segspace__bytes(const struct segspace *s)
{
	return (uint64_t)s->present * s->seg_bytes;
}
