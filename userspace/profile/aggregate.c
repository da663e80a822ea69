// SPDX-License-Identifier: GPL-2.0-or-later
/* Stack aggregator (see aggregate.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregate.h"
#include "util/hashmap.h"

#define CHUNK_BYTES (1u << 20) /* holds ~110 of the largest stacks (1024 + 127 frames) */

struct chunk {
	struct chunk *next;
	size_t used; /* bytes of data in use */
	uint64_t data[]; /* CHUNK_BYTES: 8-byte aligned stacks, back to back */
};

struct aggregator {
	struct hashmap index; /* the stacks, by key_hash() */
	struct chunk *head, *tail;
	size_t nchunks;
	uint64_t budget; /* bytes of chunks and the index; 0: none */
	uint64_t misses; /* samples that found no room since the last compaction */
	uint64_t next_id; /* of the next new stack */
	struct aggr_totals totals;
};

static size_t stack_bytes(unsigned nr_frames)
{
	return sizeof(struct aggr_stack) + nr_frames * sizeof(uint64_t);
}

/* xxh64-style rounds and avalanche: cheap, and good on pointer-like words. */
static uint64_t round64(uint64_t acc, uint64_t v)
{
	acc += v * 0xC2B2AE3D27D4EB4FULL;
	acc = acc << 31 | acc >> 33;
	return acc * 0x9E3779B185EBCA87ULL;
}

static uint64_t avalanche(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xC2B2AE3D27D4EB4FULL;
	h ^= h >> 29;
	h *= 0x165667B19E3779F9ULL;
	return h ^ (h >> 32);
}

/* A sample, or a stack being moved, as the aggregator sees it: comm normalized, stop folded. */
struct key {
	uint32_t pid;
	uint16_t nr_user, nr_kernel;
	uint64_t cgroup_id;
	const uint64_t *ips;
	unsigned n; /* frames */
	bool truncated;
	char comm[SFBPF_TASK_COMM_LEN]; /* up to the NUL, zero-padded */
};

static uint32_t key_hash(const struct key *k)
{
	const struct key *s = k;
	uint64_t h = 0x27D4EB2F165667C5ULL, w;
	unsigned i;

	h = round64(h, (uint64_t)s->pid << 32 | (uint64_t)s->nr_user << 16 | s->nr_kernel);
	h = round64(h, k->truncated);
	h = round64(h, s->cgroup_id);
	memcpy(&w, k->comm, 8);
	h = round64(h, w);
	memcpy(&w, k->comm + 8, 8);
	h = round64(h, w);
	for (i = 0; i < k->n; i++)
		h = round64(h, s->ips[i]);
	return (uint32_t)avalanche(h);
}

static bool key_equal(const struct aggr_stack *a, const struct key *k)
{
	const struct key *s = k;

	return a->pid == s->pid && a->nr_user == s->nr_user && a->nr_kernel == s->nr_kernel &&
	       a->truncated == k->truncated && a->cgroup_id == s->cgroup_id &&
	       !memcmp(a->comm, k->comm, sizeof(a->comm)) &&
	       !memcmp(a->ips, s->ips, k->n * sizeof(a->ips[0]));
}

static bool stack_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return key_equal(HASHMAP_TO_PTR(val), key);
}

struct aggregator *aggregator__new(void)
{
	struct aggregator *a = calloc(1, sizeof(*a));

	if (!a)
		errno = ENOMEM;
	return a;
}

static void free_chunks(struct chunk *c)
{
	struct chunk *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

void aggregator__free(struct aggregator *a)
{
	if (!a)
		return;
	free_chunks(a->head);
	hashmap__free(&a->index);
	free(a);
}

static struct aggr_stack *chunk_alloc(struct aggregator *a, size_t bytes)
{
	struct chunk *c = a->tail;
	void *p;

	if (!c || CHUNK_BYTES - c->used < bytes) {
		if (c && c->next) {
			c = c->next; /* kept by aggregator__reset */
		} else {
			c = malloc(sizeof(*c) + CHUNK_BYTES);
			if (!c)
				return NULL;
			a->nchunks++;
			c->next = NULL;
			if (a->tail)
				a->tail->next = c;
			else
				a->head = c;
		}
		c->used = 0;
		a->tail = c;
	}
	p = (char *)c->data + c->used;
	c->used += bytes; /* multiple of 8: stacks stay aligned */
	return p;
}

/* A new stack for k, in the chunks. */
static struct aggr_stack *new_stack(struct aggregator *a, const struct key *k)
{
	const struct key *s = k;
	struct aggr_stack *st = chunk_alloc(a, stack_bytes(k->n));

	if (!st)
		return NULL;
	memset(st, 0, sizeof(*st));
	st->id = ++a->next_id;
	st->pid = s->pid;
	st->cgroup_id = s->cgroup_id;
	st->nr_user = s->nr_user;
	st->nr_kernel = s->nr_kernel;
	st->truncated = k->truncated;
	memcpy(st->comm, k->comm, sizeof(st->comm));
	memcpy(st->ips, s->ips, k->n * sizeof(st->ips[0]));
	return st;
}

/* Find or insert the stack of k: hashed and compared in place, copied only when new. */
static struct aggr_stack *lookup(struct aggregator *a, const struct key *k)
{
	uint32_t h = key_hash(k);
	int64_t v = hashmap__find(&a->index, h, stack_eq, NULL, k);
	struct aggr_stack *st;

	if (v >= 0)
		return HASHMAP_TO_PTR(v);
	st = new_stack(a, k);
	/* Its chunk bytes stay taken when the index cannot grow: reset or compaction frees them. */
	if (!st || hashmap__add(&a->index, h, HASHMAP_PTR(st)))
		return NULL;
	a->totals.stacks++;
	return st;
}

/* The stack of k, or NULL. */
static struct aggr_stack *find(const struct aggregator *a, const struct key *k)
{
	int64_t v = hashmap__find(&a->index, key_hash(k), stack_eq, NULL, k);

	return v >= 0 ? HASHMAP_TO_PTR(v) : NULL;
}

static void key_of(struct key *k, const struct aggr_stack *st)
{
	k->pid = st->pid;
	k->nr_user = st->nr_user;
	k->nr_kernel = st->nr_kernel;
	k->cgroup_id = st->cgroup_id;
	k->ips = st->ips;
	k->n = st->nr_user + st->nr_kernel;
	k->truncated = st->truncated;
	memcpy(k->comm, st->comm, sizeof(k->comm));
}

uint64_t aggregator__bytes(const struct aggregator *a)
{
	return (uint64_t)a->nchunks * (sizeof(struct chunk) + CHUNK_BYTES) +
	       hashmap__bytes(&a->index);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * The stacks last counted at or before sample cut are folded into their
 * process, a stack without frames (pid, comm and cgroup kept, truncated):
 * every sample stays counted, in every output, and its weight; only where in
 * the code it was is lost. Or, with drop, forgotten (the live view's window,
 * when nothing wants the whole run). The others move, in order, into fresh
 * chunks, keeping their ids. 0, or -ENOMEM with nothing changed.
 */
static int compact(struct aggregator *a, uint64_t cut, bool drop)
{
	struct aggregator *n = aggregator__new();
	uint64_t evicted = 0, folded = 0, dropped = 0, stacks;
	const struct aggr_stack *old;
	struct aggr_stack *st, *to;
	const struct chunk *c;
	size_t off;
	struct key k;

	if (!n)
		return -ENOMEM;
	for (c = a->head; c; c = c == a->tail ? NULL : c->next)
		for (off = 0; off < c->used; off += stack_bytes(st->nr_user + st->nr_kernel)) {
			bool evict;

			st = (void *)((char *)c->data + off);
			key_of(&k, st);
			evict = st->last <= cut && (k.n || drop);
			if (evict && drop) {
				dropped++;
				continue;
			}
			if (evict) {
				k.nr_user = k.nr_kernel = 0;
				k.n = 0;
				k.truncated = true;
				evicted++;
				folded += st->count;
			}
			to = lookup(n, &k);
			if (!to)
				goto fail;
			/*
			 * Ids carry over, a process's stack's too when an
			 * evicted stack creates it anew: the live view follows
			 * stacks by id.
			 */
			if (!to->count && !to->folded) {
				old = evict ? find(a, &k) : st;
				to->id = old ? old->id : ++a->next_id;
			}
			to->count += st->count;
			to->weight += st->weight;
			to->folded += evict ? st->count : st->folded;
			to->folded_weight += evict ? st->weight : st->folded_weight;
			if (st->last > to->last)
				to->last = st->last;
		}
	stacks = n->totals.stacks;
	n->totals = a->totals;
	n->totals.stacks = stacks;
	n->totals.evicted += evicted;
	n->totals.folded += folded;
	n->totals.dropped += dropped;
	n->totals.compactions++;
	n->budget = a->budget;
	n->misses = a->misses;
	n->next_id = a->next_id;
	free_chunks(a->head);
	hashmap__free(&a->index);
	*a = *n;
	free(n);
	return 0;
fail:
	aggregator__free(n);
	return -ENOMEM;
}

/* Make room: fold the quarter of the stacks counted least recently. */
static int compact_coldest(struct aggregator *a)
{
	uint64_t *last, cut;
	const struct aggr_stack *st;
	const struct chunk *c;
	size_t nr = 0, off;

	if (!a->totals.stacks)
		return -ENOENT;
	last = malloc(a->totals.stacks * sizeof(*last));
	if (!last)
		return -ENOMEM;
	for (c = a->head; c; c = c == a->tail ? NULL : c->next)
		for (off = 0; off < c->used; off += stack_bytes(st->nr_user + st->nr_kernel)) {
			st = (const void *)((const char *)c->data + off);
			last[nr++] = st->last;
		}
	qsort(last, nr, sizeof(*last), cmp_u64);
	cut = last[nr / 4];
	free(last);
	return compact(a, cut, false);
}

int aggregator__drop_idle(struct aggregator *a, uint64_t since)
{
	if (!since || !a->totals.stacks)
		return 0;
	return compact(a, since - 1, true);
}

/* Whether the index doubles when one more stack is added (hashmap.h: load <= 1/2). */
static bool index_full(const struct aggregator *a)
{
	return (a->index.used + 1) * 2 > a->index.cap;
}

/* What the index grows by when one more stack is added. */
static uint64_t slots_growth(const struct aggregator *a)
{
	return !index_full(a) ?
		       0 :
		       (a->index.cap ? a->index.cap : HASHMAP_MIN_CAP) * HASHMAP_SLOT_BYTES;
}

/* Room for one more stack of n frames within the budget? Compacts first if not. */
static bool room_for(struct aggregator *a, unsigned n)
{
	uint64_t need = stack_bytes(n) + sizeof(struct chunk) + CHUNK_BYTES;

	if (!a->budget || aggregator__bytes(a) + need + slots_growth(a) <= a->budget)
		return true;
	/* The last chunk may still have room: no new chunk needed. */
	if (a->tail && CHUNK_BYTES - a->tail->used >= stack_bytes(n) && !index_full(a))
		return true;
	/*
	 * A compaction costs a pass over every stack: when the last one left no
	 * room, the next waits for as many samples as a quarter of the stacks.
	 */
	if (a->misses && a->misses < a->totals.stacks / 4 + 64) {
		a->misses++;
		return false;
	}
	a->misses = 1;
	if (compact_coldest(a))
		return false;
	/* Fewer stacks now: the slot array may not need to grow any more. */
	need += slots_growth(a);
	if (aggregator__bytes(a) + need <= a->budget)
		a->misses = 0;
	return aggregator__bytes(a) + need <= a->budget ||
	       (a->tail && CHUNK_BYTES - a->tail->used >= stack_bytes(n) && !index_full(a));
}

int aggregator__add(struct aggregator *a, const struct sfbpf_sample *s)
{
	struct aggr_stack *st;
	struct key k = { 0 };
	size_t len;

	if (s->nr_user > SFBPF_MAX_FRAMES || s->nr_kernel > SFBPF_MAX_KFRAMES) {
		a->totals.invalid++;
		return -EINVAL;
	}
	k.pid = s->pid;
	k.nr_user = s->nr_user;
	k.nr_kernel = s->nr_kernel;
	k.cgroup_id = s->cgroup_id;
	k.ips = (const uint64_t *)s->ips;
	k.n = s->nr_user + s->nr_kernel;
	k.truncated = aggr_stop_truncated(s->stop);
	/* Up to the NUL, zero-padded: equal comms hash equally whatever follows. */
	len = strnlen(s->comm, sizeof(s->comm) - 1);
	memcpy(k.comm, s->comm, len);
	memset(k.comm + len, 0, sizeof(k.comm) - len);

	st = find(a, &k);
	if (!st && !room_for(a, k.n)) {
		/* No room even after compaction: into its process, else refused. */
		k.nr_user = k.nr_kernel = 0;
		k.n = 0;
		k.truncated = true;
		st = find(a, &k);
		if (!st) {
			a->totals.refused++;
			return -ENOSPC;
		}
		st->folded++;
		st->folded_weight += s->weight;
		a->totals.folded++;
	}
	if (!st)
		st = lookup(a, &k);
	if (!st)
		return -ENOMEM;
	st->count++;
	st->weight += s->weight;
	a->totals.samples++;
	st->last = a->totals.samples;
	a->totals.weight += s->weight;
	a->totals.truncated += aggr_stop_truncated(s->stop);
	if (s->stop < SFBPF_STOP__COUNT)
		a->totals.by_stop[s->stop]++;
	return 0;
}

int aggregator__add_raw(struct aggregator *a, const void *data, size_t size)
{
	const struct sfbpf_sample *s = data;

	if (size < SFBPF_SAMPLE_HDR_SIZE ||
	    size < SFBPF_SAMPLE_HDR_SIZE + ((size_t)s->nr_user + s->nr_kernel) * sizeof(__u64)) {
		a->totals.invalid++;
		return -EINVAL;
	}
	return aggregator__add(a, s);
}

int aggregator__for_each(const struct aggregator *a, aggr_cb cb, void *ctx)
{
	const struct chunk *c;
	size_t off;
	int err;

	for (c = a->head; c; c = c == a->tail ? NULL : c->next) {
		for (off = 0; off < c->used;) {
			const struct aggr_stack *st = (const void *)((const char *)c->data + off);

			err = cb(st, ctx);
			if (err)
				return err;
			off += stack_bytes(st->nr_user + st->nr_kernel);
		}
	}
	return 0;
}

void aggregator__totals(const struct aggregator *a, struct aggr_totals *out)
{
	*out = a->totals;
}

void aggregator__reset(struct aggregator *a)
{
	struct aggr_totals kept = a->totals;

	hashmap__clear(&a->index);
	memset(&a->totals, 0, sizeof(a->totals));
	/* The budget's counts go on: metrics read them as counters that only grow. */
	a->totals.evicted = kept.evicted;
	a->totals.folded = kept.folded;
	a->totals.refused = kept.refused;
	a->totals.dropped = kept.dropped;
	a->totals.compactions = kept.compactions;
	a->misses = 0;
	if (a->head)
		a->head->used = 0;
	a->tail = a->head;
}

void aggregator__set_budget(struct aggregator *a, uint64_t bytes)
{
	a->budget = bytes;
}
