// SPDX-License-Identifier: GPL-2.0-or-later
/* Segments of a table space, created and freed as slices need them (see segments.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tables/segments.h"
#include "util/log.h"

#define SEG_BYTES ((size_t)SFBPF_SEG_ENTRIES * 4)

int segspace__init(struct segspace *s, int outer_fd, uint32_t capacity)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t i;

	memset(s, 0, sizeof(*s));
	s->outer_fd = outer_fd;
	s->nr_segs = (uint32_t)(((uint64_t)capacity + SFBPF_SEG_ENTRIES - 1) >> SFBPF_SEG_SHIFT);
	s->segs = calloc(s->nr_segs ? s->nr_segs : 1, sizeof(*s->segs));
	if (!s->segs)
		return -ENOMEM;
	for (i = 0; i < s->nr_segs; i++)
		s->segs[i].fd = -1;
	/*
	 * What the kernel charges for one: an mmap'able array keeps its
	 * header on a page of its own, before the values.
	 */
	s->seg_bytes = SEG_BYTES + (page > 0 ? (uint64_t)page : 4096);
	return 0;
}

static void seg_free(struct segspace *s, uint32_t i)
{
	struct segment *g = &s->segs[i];

	if (g->fd < 0)
		return;
	/* Unlinked first: a sample that still holds it keeps it until it is done. */
	if (s->outer_fd >= 0)
		bpf_map_delete_elem(s->outer_fd, &i);
	if (g->mem)
		munmap(g->mem, SEG_BYTES);
	close(g->fd);
	g->fd = -1;
	g->mem = NULL;
	s->present--;
}

void segspace__fini(struct segspace *s)
{
	uint32_t i;

	for (i = 0; s->segs && i < s->nr_segs; i++)
		seg_free(s, i);
	free(s->segs);
	s->segs = NULL;
}

/* One segment: an array of one element, the shape of the spaces' inner map. */
static int seg_map_create(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sfbpf_seg", 4, SEG_BYTES, 1, &opts);

	return fd < 0 ? -errno : fd;
}

int segspace__new_map(const char *name, uint32_t capacity)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int inner = seg_map_create(), fd;

	if (inner < 0)
		return inner;
	opts.inner_map_fd = inner;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, name, 4, 4, SFBPF_SEGS(capacity), &opts);
	fd = fd < 0 ? -errno : fd;
	close(inner);
	return fd;
}

/* Creates segment i, mapped, and links it into the space. */
static int seg_create(struct segspace *s, uint32_t i)
{
	struct segment *g = &s->segs[i];
	int fd, err;
	void *mem;

	fd = seg_map_create();
	if (fd < 0) {
		err = fd;
		pr_warn("table segment: cannot create a %zu KiB BPF array: %s", SEG_BYTES >> 10,
			strerror(-err));
		return err;
	}
	mem = mmap(NULL, SEG_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	if (bpf_map_update_elem(s->outer_fd, &i, &fd, BPF_ANY)) {
		err = -errno;
		pr_warn("table segment %u: cannot link it: %s", i, strerror(-err));
		munmap(mem, SEG_BYTES);
		close(fd);
		return err;
	}
	g->fd = fd;
	g->mem = mem;
	s->present++;
	return 0;
}

/* The entries of [start, start + n) in segment i. */
static uint32_t overlap(uint32_t i, uint64_t start, uint64_t end)
{
	uint64_t lo = (uint64_t)i << SFBPF_SEG_SHIFT, hi = lo + SFBPF_SEG_ENTRIES;

	lo = lo > start ? lo : start;
	hi = hi < end ? hi : end;
	return hi > lo ? (uint32_t)(hi - lo) : 0;
}

int segspace__get(struct segspace *s, uint32_t start, uint32_t n)
{
	uint64_t end = (uint64_t)start + n;
	uint32_t i, first = start >> SFBPF_SEG_SHIFT;
	int err;

	if (!n)
		return 0;
	if (((end - 1) >> SFBPF_SEG_SHIFT) >= s->nr_segs)
		return -ERANGE;
	for (i = first; (uint64_t)i << SFBPF_SEG_SHIFT < end; i++) {
		if (s->segs[i].fd < 0 && (err = seg_create(s, i))) {
			if (i > first) /* what the earlier segments got */
				segspace__put(s, start,
					      (uint32_t)(((uint64_t)i << SFBPF_SEG_SHIFT) - start));
			return err;
		}
		s->segs[i].used += overlap(i, start, end);
	}
	return 0;
}

void segspace__put(struct segspace *s, uint32_t start, uint32_t n)
{
	uint64_t end = (uint64_t)start + n;
	uint32_t i, k;

	for (i = start >> SFBPF_SEG_SHIFT;
	     n && i < s->nr_segs && (uint64_t)i << SFBPF_SEG_SHIFT < end; i++) {
		k = overlap(i, start, end);
		s->segs[i].used -= k < s->segs[i].used ? k : s->segs[i].used;
		if (!s->segs[i].used)
			seg_free(s, i);
	}
}

void segspace__write(const struct segspace *s, uint32_t start, const void *src, uint32_t n)
{
	const char *p = src;
	uint32_t k;

	while (n) {
		k = SFBPF_SEG_ENTRIES - (start & SFBPF_SEG_MASK);
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
