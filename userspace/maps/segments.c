// SPDX-License-Identifier: GPL-2.0-or-later
/* Segments of a table space, created and freed as slices need them (see segments.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "maps/segments.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/vec.h"

/* A link (fd: a duplicate of the segment's, closed once done) or an unlink (fd -1) of segment i. */
struct seg_op {
	uint32_t i, gen;
	int fd;
};

/* The thread that links and unlinks an async space's segments (segspace__set_async). */
struct seglinker {
	int outer_fd;
	int wake_fd; /* written after each batch of links (a dup), -1: none */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	struct seg_op *ops; /* asked, in order */
	size_t nr_ops, cap_ops;
	/* Per segment, written by the thread: the gen of the last link done, and its error. */
	uint32_t *done_gen;
	int *err;
};

static void queue_op(struct segspace *s, uint32_t i, int fd);

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

	uint32_t gen = g->gen;

	if (g->fd < 0)
		return;
	/* A sample that still holds it keeps it until it is done (RCU). */
	if (unlink && s->outer_fd >= 0 && s->linker)
		queue_op(s, i, -1);
	else if (unlink && s->outer_fd >= 0)
		bpf_map_delete_elem(s->outer_fd, &i);
	if (g->mem)
		munmap(g->mem, seg_size(s->shift));
	close(g->fd);
	s->lingering -= g->empty_since != 0;
	/* Its gen goes on: a link asked for a new segment i is told from the old one's. */
	*g = (struct segment){ .fd = -1, .gen = gen };
	s->present--;
}

static void linker_stop(struct seglinker *l);

void segspace__fini(struct segspace *s)
{
	uint32_t i;

	/*
	 * Not unlinked one by one (a grace period each): the array of maps
	 * drops them when it goes.
	 */
	linker_stop(s->linker);
	s->linker = NULL;
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

	for (i = start >> s->shift;
	     n && !err && i < s->nr_segs && (uint64_t)i << s->shift < (uint64_t)start + n; i++)
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

/* Links segments keys[0..n) (their maps fds[]) into the array of maps outer_fd: one at a time. */
static int link_each(int outer_fd, const uint32_t *keys, const int *fds, uint32_t n)
{
	uint32_t i;
	int err;

	for (i = 0; i < n; i++) {
		if (bpf_map_update_elem(outer_fd, &keys[i], &fds[i], BPF_ANY)) {
			err = -errno;
			pr_warn("table segment %u: cannot link it: %s", keys[i], strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Links segments keys[0..n) (n <= 64) into the array of maps: one batch, one grace period. */
static int link_batch(int outer_fd, uint32_t *keys, int *fds, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t count = n;
	int err;

	if (__atomic_load_n(&no_batch, __ATOMIC_RELAXED))
		return link_each(outer_fd, keys, fds, n);
	if (!bpf_map_update_batch(outer_fd, keys, fds, &count, &opts))
		return 0;
	err = -errno;
	if (err == -SEG_ENOTSUPP) { /* refused as a whole: nothing linked */
		__atomic_store_n(&no_batch, true, __ATOMIC_RELAXED);
		return link_each(outer_fd, keys, fds, n);
	}
	pr_warn("table segments %u-%u: cannot link them: %s", keys[0], keys[n - 1], strerror(-err));
	return err;
}

/* Links segments [first, first + n) into the array of maps, on this thread. */
static int seg_link(struct segspace *s, uint32_t first, uint32_t n)
{
	uint32_t keys[64], count, i, k;
	int fds[64], err = 0;

	for (i = 0; i < n && !err; i += k) {
		k = n - i < 64 ? n - i : 64;
		for (count = 0; count < k; count++) {
			keys[count] = first + i + count;
			fds[count] = s->segs[first + i + count].fd;
		}
		err = link_batch(s->outer_fd, keys, fds, k);
	}
	return err;
}

/* ---- the linker thread ------------------------------------------------------ */

/* Links a run of link ops (at most 64, in order): each segment's outcome, then its gen. */
static void do_links(struct seglinker *l, const struct seg_op *ops, uint32_t n)
{
	uint32_t keys[64], i;
	int fds[64], err;

	for (i = 0; i < n; i++) {
		keys[i] = ops[i].i;
		fds[i] = ops[i].fd;
	}
	err = link_batch(l->outer_fd, keys, fds, n);
	for (i = 0; i < n; i++) {
		__atomic_store_n(&l->err[ops[i].i], err, __ATOMIC_RELAXED);
		__atomic_store_n(&l->done_gen[ops[i].i], ops[i].gen, __ATOMIC_RELEASE);
		close(ops[i].fd);
	}
}

static void *linker_main(void *arg)
{
	struct seglinker *l = arg;
	struct seg_op *ops;
	uint64_t one = 1;
	size_t nr, i, k;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (!l->stop && !l->nr_ops)
			pthread_cond_wait(&l->cond, &l->lock);
		if (l->stop)
			break;
		ops = l->ops;
		nr = l->nr_ops;
		l->ops = NULL;
		l->nr_ops = l->cap_ops = 0;
		pthread_mutex_unlock(&l->lock);
		for (i = 0; i < nr; i += k) {
			if (ops[i].fd < 0) {
				bpf_map_delete_elem(l->outer_fd, &ops[i].i);
				k = 1;
				continue;
			}
			/* A run of links: one batch, one grace period. */
			for (k = 1; i + k < nr && k < 64 && ops[i + k].fd >= 0; k++)
				;
			do_links(l, ops + i, (uint32_t)k);
		}
		free(ops);
		if (l->wake_fd >= 0 && write(l->wake_fd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is full, and readable already */
		}
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* Asks the linker to link segment i (fd >= 0: its map) or to unlink it (fd -1). */
static void queue_op(struct segspace *s, uint32_t i, int fd)
{
	struct seglinker *l = s->linker;
	struct seg_op op = { .i = i, .gen = fd >= 0 ? ++s->segs[i].gen : 0, .fd = -1 };
	int err = 0;

	if (fd >= 0 && (op.fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		err = -errno;
	pthread_mutex_lock(&l->lock);
	if (!err && VEC_RESERVE(l->ops, l->cap_ops, l->nr_ops + 1, 16))
		err = -ENOMEM;
	if (!err) {
		l->ops[l->nr_ops++] = op;
		pthread_cond_signal(&l->cond);
	}
	pthread_mutex_unlock(&l->lock);
	if (!err)
		return;
	if (op.fd >= 0)
		close(op.fd);
	if (fd < 0) {
		/* Not asked: unlinked here, as without a linker. */
		bpf_map_delete_elem(s->outer_fd, &i);
		return;
	}
	__atomic_store_n(&l->err[i], err, __ATOMIC_RELAXED);
	__atomic_store_n(&l->done_gen[i], op.gen, __ATOMIC_RELEASE);
}

/* Stops the thread after the op it is in; the ops not done are dropped (the space goes). */
static void linker_stop(struct seglinker *l)
{
	size_t i;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	for (i = 0; i < l->nr_ops; i++)
		if (l->ops[i].fd >= 0)
			close(l->ops[i].fd);
	free(l->ops);
	free(l->done_gen);
	free(l->err);
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

int segspace__set_async(struct segspace *s, int wake_fd)
{
	struct seglinker *l;
	uint32_t i, n = s->nr_segs ? s->nr_segs : 1;
	int err;

	if (s->linker)
		return 0;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->outer_fd = s->outer_fd;
	l->wake_fd = wake_fd >= 0 ? fcntl(wake_fd, F_DUPFD_CLOEXEC, 3) : -1;
	l->done_gen = calloc(n, sizeof(*l->done_gen));
	l->err = calloc(n, sizeof(*l->err));
	if (!l->done_gen || !l->err) {
		free(l->done_gen);
		free(l->err);
		if (l->wake_fd >= 0)
			close(l->wake_fd);
		free(l);
		return -ENOMEM;
	}
	/* What was linked on the caller's thread so far is done. */
	for (i = 0; i < s->nr_segs; i++)
		l->done_gen[i] = s->segs[i].gen;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	err = pthread_create(&l->thread, NULL, linker_main, l);
	if (err) {
		pthread_cond_destroy(&l->cond);
		pthread_mutex_destroy(&l->lock);
		free(l->done_gen);
		free(l->err);
		if (l->wake_fd >= 0)
			close(l->wake_fd);
		free(l);
		return -err;
	}
	s->linker = l;
	return 0;
}

/* Segment i's link: 1 done, 0 under way, or the negative errno it failed with. */
static int seg_linked(const struct segspace *s, uint32_t i)
{
	const struct seglinker *l = s->linker;

	if (!l || __atomic_load_n(&l->done_gen[i], __ATOMIC_ACQUIRE) != s->segs[i].gen)
		return !l;
	return __atomic_load_n(&l->err[i], __ATOMIC_RELAXED) ?: 1;
}

int segspace__linked(struct segspace *s, uint32_t start, uint32_t n)
{
	uint32_t i;
	int ret;

	for (i = start >> s->shift;
	     n && i < s->nr_segs && (uint64_t)i << s->shift < (uint64_t)start + n; i++) {
		ret = seg_linked(s, i);
		if (ret != 1)
			return ret;
	}
	return 1;
}

int segspace__wait_linked(struct segspace *s, uint32_t start, uint32_t n)
{
	struct timespec nap = { 0, 200000 };
	int ret;

	while (!(ret = segspace__linked(s, start, n)))
		nanosleep(&nap, NULL);
	return ret;
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
		/* With a linker, one whose link failed is linked again. */
		if (s->segs[i].fd >= 0 && (!s->linker || seg_linked(s, i) >= 0))
			continue;
		if (s->segs[i].fd < 0)
			err = seg_create(s, i);
		/* Asked, not waited for: the caller publishes once segspace__linked(). */
		if (!err && s->linker)
			queue_op(s, i, s->segs[i].fd);
		lo = i < lo ? i : lo;
		hi = i + 1;
	}
	if (!err && hi > lo && !s->linker)
		err = seg_link(s, lo, hi - lo);
	if (err) {
		for (i = lo; i < hi; i++)
			if (!s->segs[i].used && !s->segs[i].empty_since && !s->segs[i].reserved)
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
		if (g->used || g->fd < 0 || g->reserved)
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

/* An empty segment no range needs: it lingers (or goes at once). */
static void seg_let_go(struct segspace *s, uint32_t i, uint64_t now)
{
	struct segment *g = &s->segs[i];

	if (g->fd < 0 || g->used || g->empty_since)
		return;
	if (!s->linger_ns) {
		seg_free(s, i, true);
		return;
	}
	g->empty_since = now;
	s->lingering++;
}

int segspace__reserve(struct segspace *s, unsigned which, uint32_t start, uint32_t n)
{
	uint64_t now = clock__mono_ns(), end = (uint64_t)start + n;
	uint32_t i, first = start >> s->shift;
	uint32_t last = n ? (uint32_t)((end - 1) >> s->shift) : 0;
	uint8_t bit = (uint8_t)(1u << which);
	struct segment *g;
	int err = 0;

	if (!s->linker || which >= SEGSPACE_RESERVES)
		return -ENOTSUP;
	if (n && last >= s->nr_segs)
		return -ERANGE;
	for (i = 0; i < s->nr_segs; i++) {
		g = &s->segs[i];
		if ((g->reserved & bit) && !(n && i >= first && i <= last)) {
			g->reserved &= (uint8_t)~bit;
			if (!g->reserved)
				seg_let_go(s, i, now);
		}
	}
	for (i = first; n && i <= last && !err; i++) {
		g = &s->segs[i];
		if (g->fd < 0 && !(err = seg_create(s, i)))
			queue_op(s, i, g->fd);
		if (err)
			break;
		g->reserved |= bit;
		if (g->empty_since) {
			g->empty_since = 0;
			s->lingering--;
		}
	}
	return err;
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
