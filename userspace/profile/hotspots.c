// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's JVMs: attach, the BPF step's settings, naming Java frames (hotspots.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/hotspot.h"
#include "interp/frame_names.h"
#include "procs/procmaps.h"
#include "profile/hotspots.h"
#include "profile/profile.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

/*
 * A refusal (-EPROTO) is final: the tables are libjvm's static data, set by
 * its constructors before the JVM runs, and do not change. A JVM still
 * starting (-EAGAIN: no interpreter or code heap yet) is tried again
 * (runtimes.c).
 */
#define REFUSAL_TRIES 1
/* Resolutions kept per process; then forgotten at once (resolved again when met). */
#define MAX_CACHED 65536
/*
 * A resolution checked within the last millisecond is taken as it is: the
 * samples of a read come in bursts, many frames alike (a Method's check is
 * six reads of the process), and an unloading rarely falls in a burst.
 */
#define CHECK_AGAIN_NS 1000000ULL

/*
 * A frame resolved: an interpreted frame's ip as the BPF walk sent it, or a
 * code pc (as a leaf or a return address) -> its ids. check, check2: what
 * hotspot__method_is() (Method, its key: ConstMethod and names' Symbols) or
 * hotspot__blob_is() (blob, ident) compare at each use.
 */
struct resolved {
	uint64_t key;
	uint64_t check, check2;
	uint32_t first, nr; /* ids[first .. first + nr) of the process */
	bool code; /* a code pc (check: blob, check2: ident), else an interpreted frame */
	bool leaf;
	uint64_t checked_ns; /* when check, check2 last held */
	/*
	 * An interpreted frame of a JVM whose samples carry an epoch (its
	 * count of classes unloaded, abi.h): the count it was read at, lo ==
	 * hi (interpreted_at()); lo > hi: none.
	 */
	uint64_t lo, hi;
};

/* An attached JVM (struct runtime_proc's priv). */
struct jvm {
	int pid;
	uint64_t start_ticks;
	struct hotspot *hs;
	struct hashmap cache; /* -> index in res */
	struct resolved *res;
	size_t nr_res, res_cap;
	uint64_t *ids;
	size_t nr_ids, ids_cap;
};

struct hotspots_stats {
	uint64_t samples; /* samples spliced */
	uint64_t interpreted; /* interpreted frames named */
	uint64_t compiled; /* compiled frames named, inlined ones included */
	uint64_t stubs; /* frames of the JVM's code of no method (stubs, adapters) */
	uint64_t unknown; /* frames whose method or blob no longer read as one: a marker */
	uint64_t cache_stale; /* cached resolutions found stale (flushed, unloaded) */
	/* Of unknown: classes unloaded between the sample and its read (a Method maybe freed) */
	uint64_t unloaded_since;
	uint64_t flushed; /* of unknown: the nmethod at the pc is not the compilation sampled */
};

struct hotspots {
	int fd;
	struct hotspots_stats stats;
	uint64_t unknown_id; /* the marker's name */
};

static void forget_cache(struct jvm *j)
{
	hashmap__clear(&j->cache);
	j->nr_res = j->nr_ids = 0;
}

static void release(void *rt, struct runtime_proc *rp)
{
	struct jvm *j = rp->priv;

	(void)rt;
	hashmap__free(&j->cache);
	free(j->res);
	free(j->ids);
	hotspot__free(j->hs);
	free(j);
	rp->priv = NULL;
}

static void detach(void *rt, struct runtime_proc *rp)
{
	struct hotspots *hss = rt;
	__u32 key = rp->pid;

	bpf_map_delete_elem(hss->fd, &key);
}

/* Whether pid may run HotSpot: it maps a libjvm (the attach then reads it). */
static bool detect(int pid, const struct procmaps *pm)
{
	(void)pid;
	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if (!(m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)) &&
		    !strcmp(procmap__basename(m->path), "libjvm.so"))
			return true;
	}
	return false;
}

/*
 * Tests only (tests/hsprofile.test, memlies): settings that no longer hold
 * for the JVM's memory, as a JVM could leave them between two readings,
 * to see the BPF step end such stacks with its reason and no wrong frame.
 * SFBPF_TEST_HS_LIE: "segmap", every code heap's segment map at an address
 * never mapped (page 0); "shift", its segments a size no heap has.
 */
static void test_lie(struct sfbpf_hs_proc *cfg)
{
	const char *lie = getenv("SFBPF_TEST_HS_LIE");

	for (__u32 i = 0; lie && i < cfg->nr_heaps && i < SFBPF_HS_MAX_HEAPS; i++) {
		if (!strcmp(lie, "segmap"))
			cfg->heaps[i].segmap = 16;
		else if (!strcmp(lie, "shift"))
			cfg->heaps[i].shift = 3;
	}
}

static int push(struct hotspots *hss, struct jvm *j)
{
	struct sfbpf_hs_proc cfg;
	__u32 key = j->pid;
	int err = hotspot__bpf_settings(j->hs, &cfg);

	if (err)
		return err;
	cfg.start_ticks = j->start_ticks;
	test_lie(&cfg);
	return bpf_map_update_elem(hss->fd, &key, &cfg, BPF_ANY) ? -errno : 0;
}

static int attach(void *rt, struct runtime_proc *rp)
{
	struct hotspots *hss = rt;
	struct jvm *j = calloc(1, sizeof(*j));
	int err;

	if (!j)
		return -ENOMEM;
	j->pid = rp->pid;
	j->start_ticks = rp->start_ticks;
	err = hotspot__attach(rp->pid, &j->hs);
	if (!err)
		err = push(hss, j);
	if (err) {
		hotspot__free(j->hs);
		free(j);
		return err;
	}
	pr_debug("hotspot: pid %d: JVM attached", rp->pid);
	rp->priv = j;
	return 0;
}

/* Its mappings changed: the settings again, should a heap have changed too. */
static void remapped(void *rt, struct runtime_proc *rp)
{
	push(rt, rp->priv);
}

struct cache_key {
	uint64_t key;
	bool code, leaf;
};

static bool res_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct resolved *r = &((const struct jvm *)ctx)->res[val];
	const struct cache_key *k = key;

	return r->key == k->key && r->code == k->code && r->leaf == k->leaf;
}

static uint32_t key_hash(const struct cache_key *k)
{
	return (uint32_t)hash__mix64(k->key ^ ((uint64_t)k->code << 1 | k->leaf));
}

/* The name of method at bci: a frame_names id, or 0 (unreadable, or no room). */
static uint64_t method_id(struct hotspots *hss, struct jvm *j, uint64_t method, int32_t bci,
			  uint64_t *const_method)
{
	struct hotspot_method m;
	char qual[2 * HOTSPOT_NAME_MAX + 2];
	int line;

	(void)hss;
	if (hotspot__method(j->hs, method, &m))
		return 0;
	*const_method = m.const_method;
	line = bci >= 0 ? hotspot__line(j->hs, &m, bci) : -1;
	snprintf(qual, sizeof(qual), "%s.%s", m.klass, m.name);
	return frame_names__intern("java", qual, m.file, 0, line > 0 ? (uint32_t)line : 0);
}

/*
 * Adds a resolution of nr ids to j's cache (forgotten at once at MAX_CACHED),
 * known true from epoch lo to hi (lo > hi: no epoch).
 */
static void remember(struct jvm *j, const struct cache_key *k, const uint64_t *ids, uint32_t nr,
		     uint64_t check, uint64_t check2, uint64_t lo, uint64_t hi)
{
	if (j->nr_res >= MAX_CACHED)
		forget_cache(j);
	if (VEC_RESERVE(j->res, j->res_cap, j->nr_res + 1, 64) ||
	    VEC_RESERVE(j->ids, j->ids_cap, j->nr_ids + nr, 256) ||
	    hashmap__add(&j->cache, key_hash(k), j->nr_res))
		return;
	j->res[j->nr_res++] = (struct resolved){ .key = k->key,
						 .check = check,
						 .check2 = check2,
						 .first = (uint32_t)j->nr_ids,
						 .nr = nr,
						 .code = k->code,
						 .leaf = k->leaf,
						 .checked_ns = clock__mono_ns(),
						 .lo = lo,
						 .hi = hi };
	memcpy(j->ids + j->nr_ids, ids, nr * sizeof(*ids));
	j->nr_ids += nr;
}

/* A cached resolution still true, or NULL (none, or stale: then dropped from the cache). */
static const struct resolved *cached(struct hotspots *hss, struct jvm *j, const struct cache_key *k)
{
	int64_t i = hashmap__find(&j->cache, key_hash(k), res_eq, j, k);
	const struct resolved *r;
	uint64_t now;
	bool ok;

	if (i < 0)
		return NULL;
	r = &j->res[i];
	now = clock__mono_ns();
	if (now - r->checked_ns < CHECK_AGAIN_NS)
		return r;
	ok = r->code ? hotspot__blob_is(j->hs, r->check, r->check2) :
		       hotspot__method_is(j->hs, r->check, r->check2);
	if (ok) {
		j->res[i].checked_ns = now;
		return r;
	}
	hss->stats.cache_stale++;
	hashmap__del(&j->cache, key_hash(k), res_eq, j, k);
	return NULL;
}

/* A JVM's frame that no longer reads as what the walk saw: the marker (one id). */
static uint32_t unknown(struct hotspots *hss, uint64_t *ids)
{
	hss->stats.unknown++;
	ids[0] = hss->unknown_id;
	return 1;
}

/*
 * An interpreted frame (method, bci) of a sample taken when the JVM had
 * unloaded e classes. A Method is freed, and its address given to another,
 * only after its class is unloaded, which counts, and a class a thread runs
 * is not unloaded: between two moves of the count, an address holds at most
 * one method that runs (before it, maybe one whose class was just unloaded,
 * not yet freed, that no thread runs). So a name is taken from a reading
 * made while the count is still e (the same before and after it), and kept
 * for the samples of that count only: a Method's key or names read again
 * later cannot vouch for it (a class reloaded may put the same names, and
 * the same Symbols, at the same addresses). Otherwise the frame is the
 * marker, never another method's name.
 */
static uint32_t interpreted_at(struct hotspots *hss, struct jvm *j, const struct cache_key *k,
			       uint64_t method, uint64_t bci, uint64_t e, uint64_t *ids)
{
	int64_t i = hashmap__find(&j->cache, key_hash(k), res_eq, j, k);
	uint64_t c, key, cm;

	if (i >= 0 && j->res[i].lo == e && j->res[i].hi == e) {
		ids[0] = j->ids[j->res[i].first];
		return 1;
	}
	if (hotspot__unloads(j->hs, &c))
		return unknown(hss, ids);
	if (c != e) {
		/* Classes unloaded since the sample, or one older than the cache's. */
		hss->stats.unloaded_since++;
		return unknown(hss, ids);
	}
	if (hotspot__method_key(j->hs, method, &key))
		return unknown(hss, ids);
	ids[0] = method_id(hss, j, method, bci == SFBPF_HS_BCI_NONE ? -1 : (int32_t)bci, &cm);
	if (!ids[0] || !hotspot__method_is(j->hs, method, key) || hotspot__unloads(j->hs, &c))
		return unknown(hss, ids);
	if (c != e) {
		hss->stats.unloaded_since++;
		return unknown(hss, ids);
	}
	if (i >= 0) {
		hss->stats.cache_stale++;
		hashmap__del(&j->cache, key_hash(k), res_eq, j, k);
	}
	remember(j, k, ids, 1, method, key, e, e);
	return 1;
}

/*
 * Whether j has unloaded classes since a sample of epoch (abi.h's rt_epoch;
 * 0: none, then nothing can be told and false).
 */
static bool unloaded_since(struct hotspots *hss, struct jvm *j, uint64_t epoch)
{
	uint64_t c;

	if (!(epoch & SFBPF_RT_EPOCH_VALID))
		return false;
	if (!hotspot__unloads(j->hs, &c) && c == (epoch & ~SFBPF_RT_EPOCH_VALID))
		return false;
	hss->stats.unloaded_since++;
	return true;
}

/* A compiled frame's pc, its compile id's and exact bits taken off (abi.h: SFBPF_HS_COMPILED). */
static uint64_t code_pc(uint64_t ip)
{
	return (ip & SFBPF_HS_INTERP) == SFBPF_HS_COMPILED ? ip & SFBPF_HS_PC_MASK : ip;
}

/*
 * The names of one user frame of a JVM's sample (its epoch: 0, none) into
 * ids (at most max): how many; 0 when it is not the JVM's (a native frame:
 * kept as it is).
 */
static uint32_t frame_ids(struct hotspots *hss, struct jvm *j, uint64_t ip, uint64_t epoch,
			  bool leaf, uint64_t *ids, uint32_t max)
{
	uint64_t pc = code_pc(ip);
	struct cache_key k = { .key = ip, .code = false, .leaf = false };
	struct hotspot_code_frames cf;
	const struct resolved *r;
	uint64_t check = 0, check2 = 0;
	uint32_t n = 0;

	if ((ip & SFBPF_HS_INTERP) == SFBPF_HS_INTERP) {
		uint64_t method = (ip & SFBPF_HS_METHOD_MASK) << 3;
		uint64_t bci = (ip >> SFBPF_HS_BCI_SHIFT) & SFBPF_HS_BCI_NONE;

		hss->stats.interpreted++;
		if (epoch & SFBPF_RT_EPOCH_VALID)
			return interpreted_at(hss, j, &k, method, bci,
					      epoch & ~SFBPF_RT_EPOCH_VALID, ids);
		r = cached(hss, j, &k);
		if (r) {
			ids[0] = j->ids[r->first];
			return 1;
		}
		/* The key before the names: a Method freed meanwhile then reads as another. */
		if (hotspot__method_key(j->hs, method, &check2))
			return unknown(hss, ids);
		ids[0] = method_id(hss, j, method, bci == SFBPF_HS_BCI_NONE ? -1 : (int32_t)bci,
				   &check);
		if (!ids[0] || !hotspot__method_is(j->hs, method, check2))
			return unknown(hss, ids);
		remember(j, &k, ids, 1, method, check2, 1, 0);
		return 1;
	}
	/* Stopped there, not calling out: a leaf, or the frame a signal interrupted. */
	if ((ip & SFBPF_HS_INTERP) == SFBPF_HS_COMPILED && (ip & SFBPF_HS_EXACT))
		leaf = true;
	/* Native code (most frames of most samples): nothing read. */
	if (!hotspot__owns(j->hs, pc - !leaf))
		return 0;
	k.code = true;
	k.leaf = leaf;
	r = cached(hss, j, &k);
	if (r) {
		n = r->nr < max ? r->nr : max;
		memcpy(ids, j->ids + r->first, n * sizeof(*ids));
		hss->stats.compiled += n;
		return n;
	}
	if (hotspot__code_pc(j->hs, pc, leaf, &cf))
		return 0;
	check = cf.blob;
	check2 = cf.ident;
	/* An nmethod (its ident has a compile id) that is not the compilation the walk saw. */
	if (pc != ip && cf.ident >> 32 &&
	    ((cf.ident >> 32) & SFBPF_HS_ID_MASK) !=
		    ((ip >> SFBPF_HS_ID_SHIFT) & SFBPF_HS_ID_MASK)) {
		hss->stats.flushed++;
		return unknown(hss, ids);
	}
	/*
	 * The scopes' Methods, as interpreted_at()'s: a compilation the walk
	 * saw run is not flushed before its classes are unloaded, which
	 * counts, and a Method is freed only after that. A class unloaded
	 * since the sample may have had its Methods freed and their memory
	 * given to another class's (a compile id still at its pc): names are
	 * taken only from a reading the count did not move across.
	 */
	if (cf.nr && unloaded_since(hss, j, epoch))
		return unknown(hss, ids);
	if (!cf.nr) {
		hss->stats.stubs++;
		ids[0] = frame_names__intern("java", cf.stub, "", 0, 0);
		n = ids[0] != 0;
	}
	for (uint32_t i = 0; i < cf.nr && n < max; i++) {
		uint64_t cm;

		ids[n] = method_id(hss, j, cf.frames[i].method, cf.frames[i].bci, &cm);
		if (!ids[n]) {
			hss->stats.unknown++;
			ids[n] = hss->unknown_id;
		}
		n++;
	}
	if (cf.nr && unloaded_since(hss, j, epoch))
		return unknown(hss, ids);
	hss->stats.compiled += cf.nr ? n : 0;
	if (n)
		remember(j, &k, ids, n, check, check2, 1, 0);
	return n;
}

struct hs_splice {
	struct hotspots *hss;
	struct jvm *jv;
	uint64_t epoch;
};

/* runtime__splice_frames()'s step: a frame's names as stack ips. */
static uint32_t splice_frame(void *ctx, uint64_t ip, bool leaf, uint64_t *ips, uint32_t max)
{
	struct hs_splice *c = ctx;
	uint32_t m = frame_ids(c->hss, c->jv, ip, c->epoch, leaf, ips, max);

	for (uint32_t i = 0; i < m; i++)
		ips[i] = frame_names__ip(ips[i]);
	return m;
}

/*
 * An interpreted frame (Method, bytecode index) becomes its method's name
 * and line; a pc in a code heap the methods its nmethod runs there,
 * inlined ones as frames of their own, innermost first; a stub's pc the
 * stub's name.
 */
static int splice(void *rt, struct runtime_proc *rp, const struct sfbpf_sample *in, size_t size,
		  struct sfbpf_sample *out)
{
	struct hotspots *hss = rt;
	struct hs_splice c = { .hss = hss, .jv = rp ? rp->priv : NULL, .epoch = in->rt_epoch };
	int r;

	if (!rp)
		return SFBPF_SAMPLE_HDR_SIZE + ((size_t)in->nr_user + in->nr_kernel) * 8 > size ||
				       in->nr_user > SFBPF_MAX_FRAMES ?
			       -EINVAL :
			       0;
	r = runtime__splice_frames(in, size, out, splice_frame, code_pc, &c);
	if (r == 1)
		hss->stats.samples++;
	return r;
}

static void mark_names(void *rt)
{
	frame_names__mark(frame_names__ip(((struct hotspots *)rt)->unknown_id));
}

static void forget(void *rt, struct runtime_proc *rp)
{
	(void)rt;
	forget_cache(rp->priv);
}

static void *hotspots_new(const struct runtime_host *host)
{
	struct hotspots *hss = calloc(1, sizeof(*hss));

	if (!hss)
		return NULL;
	hss->fd = profile__hs_procs_fd(host->prof);
	hss->unknown_id = frame_names__intern("java", "[unknown java]", "", 0, 0);
	return hss;
}

static void hotspots_free(void *rt)
{
	free(rt);
}

static void counters(const void *rt, runtime_put_fn put, void *ctx)
{
	const struct hotspots_stats *st = &((const struct hotspots *)rt)->stats;

	put(ctx, "hs_spliced", st->samples, false);
	put(ctx, "hs_named_interpreted", st->interpreted, false);
	put(ctx, "hs_named_compiled", st->compiled, false);
	put(ctx, "hs_named_stubs", st->stubs, false);
	put(ctx, "hs_unknown", st->unknown, false);
	put(ctx, "hs_cache_stale", st->cache_stale, false);
	put(ctx, "hs_unloaded_since", st->unloaded_since, false);
	put(ctx, "hs_flushed", st->flushed, false);
}

const struct runtime_ops hotspot_runtime = {
	.name = "hotspot",
	.prefix = "hs",
	.starting = "no interpreter or code heap yet",
	.refusal_tries = REFUSAL_TRIES,
	.new = hotspots_new,
	.free = hotspots_free,
	.detect = detect,
	.attach = attach,
	.remapped = remapped,
	.detach = detach,
	.release = release,
	.splice = splice,
	.mark_names = mark_names,
	.forget = forget,
	.counters = counters,
};
