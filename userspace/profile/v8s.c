// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's node processes: attach, the BPF step's settings, naming JavaScript frames (v8s.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/frame_names.h"
#include "interp/v8.h"
#include "procs/procmaps.h"
#include "profile/profile.h"
#include "profile/v8s.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

/* The metadata is the object's static data: a refusal is final. */
#define REFUSAL_TRIES 1
#define MAX_CACHED 65536
#define CHECK_AGAIN_NS 1000000ULL
/* A pc in no function's code object: not looked for again (a scan of up to 1 MiB) for this long. */
#define NOT_CODE_NS 100000000ULL
/*
 * A node maps its code space after it starts: attached as it starts up
 * (npm, a test runner), its settings hold no JIT code yet, and its walks end
 * at the first return into it. Its samples say so (no JIT hull, or a walk
 * that ended in memory the settings do not cover): the settings are read
 * again, 10 ms after the last push, twice as long each time nothing
 * changed, up to a second.
 */
#define REPUSH_MIN_NS 10000000ULL
#define REPUSH_MAX_NS 1000000000ULL

/* A frame resolved: the walk's identity -> its ids; check, check2: what is compared again. */
struct resolved {
	uint64_t key;
	uint64_t check, check2;
	uint32_t first, nr;
	bool code, leaf, not_code;
	uint64_t checked_ns;
};

struct node {
	int pid;
	uint64_t start_ticks;
	struct v8 *v8;
	struct hashmap cache;
	struct resolved *res;
	size_t nr_res, res_cap;
	uint64_t *ids;
	size_t nr_ids, ids_cap;
	bool disagreed; /* with its perf map: said once */
	struct sfbpf_v8_range jit; /* the JIT code's hull last pushed */
	uint64_t pushed_ns, repush_ns; /* when, and how long until it may be pushed again */
};

struct v8s_stats {
	uint64_t samples; /* samples spliced */
	uint64_t functions; /* interpreted and baseline frames named */
	uint64_t optimized; /* frames of optimised code named, inlined ones included */
	uint64_t unknown; /* frames that no longer read as what the walk saw: a marker */
	uint64_t mismatch; /* of unknown: the code at an optimised pc is another function's */
	uint64_t not_code; /* optimised pcs in no code object read as a function's: kept as pcs */
	uint64_t cache_stale;
	uint64_t perfmap_agree; /* optimised code the perf map names as the reader does */
	uint64_t perfmap_disagree; /* ... and names otherwise: the reader's name kept, said */
	uint64_t osr; /* frames of JIT code with a bytecode array that ran optimised code (OSR) */
};

struct v8s {
	int fd;
	struct runtime_host host;
	struct v8s_stats stats;
	uint64_t unknown_id;
};

static void forget_cache(struct node *n)
{
	hashmap__clear(&n->cache);
	n->nr_res = n->nr_ids = 0;
}

static void release(void *rt, struct runtime_proc *rp)
{
	struct node *n = rp->priv;

	(void)rt;
	hashmap__free(&n->cache);
	free(n->res);
	free(n->ids);
	v8__free(n->v8);
	free(n);
	rp->priv = NULL;
}

static void detach(void *rt, struct runtime_proc *rp)
{
	struct v8s *vs = rt;
	__u32 key = rp->pid;

	bpf_map_delete_elem(vs->fd, &key);
}

/* Whether pid may run V8: it maps a node or a libnode (the attach reads its symbols). */
static bool detect(int pid, const struct procmaps *pm)
{
	(void)pid;
	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *m = procmaps__get(pm, i);
		const char *b;

		if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO) || !(m->perms & PROCMAP_EXEC))
			continue;
		b = procmap__basename(m->path);
		if (!strncmp(b, "libnode.so", 10) || !strncmp(b, "nsolid", 6) ||
		    (!strncmp(b, "node", 4) && (!b[4] || (b[4] >= '0' && b[4] <= '9'))))
			return true;
	}
	return false;
}

static int push(struct v8s *vs, struct node *n)
{
	struct sfbpf_v8_proc cfg;
	struct procmaps *pm;
	__u32 key = n->pid;
	int err = procmaps__read(n->pid, &pm);

	if (err)
		return err;
	err = v8__bpf_settings(n->v8, pm, &cfg);
	procmaps__free(pm);
	if (err)
		return err;
	cfg.start_ticks = n->start_ticks;
	/* The same hull again: the next push waits twice as long. */
	n->repush_ns = cfg.jit.lo == n->jit.lo && cfg.jit.hi == n->jit.hi && n->repush_ns ?
			       (n->repush_ns < REPUSH_MAX_NS ? 2 * n->repush_ns : REPUSH_MAX_NS) :
			       REPUSH_MIN_NS;
	n->jit = cfg.jit;
	n->pushed_ns = clock__mono_ns();
	return bpf_map_update_elem(vs->fd, &key, &cfg, BPF_ANY) ? -errno : 0;
}

static int attach(void *rt, struct runtime_proc *rp)
{
	struct v8s *vs = rt;
	struct node *n = calloc(1, sizeof(*n));
	int err;

	if (!n)
		return -ENOMEM;
	n->pid = rp->pid;
	n->start_ticks = rp->start_ticks;
	err = v8__attach(rp->pid, &n->v8);
	if (!err)
		err = push(vs, n);
	if (err) {
		v8__free(n->v8);
		free(n);
		return err;
	}
	pr_debug("v8: pid %d: V8 %s attached", rp->pid, v8__version(n->v8));
	rp->priv = n;
	return 0;
}

static void remapped(void *rt, struct runtime_proc *rp)
{
	push(rt, rp->priv);
}

struct cache_key {
	uint64_t key;
	bool leaf;
};

static bool res_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct resolved *r = &((const struct node *)ctx)->res[val];
	const struct cache_key *k = key;

	return r->key == k->key && r->leaf == k->leaf;
}

static uint32_t key_hash(const struct cache_key *k)
{
	return (uint32_t)hash__mix64(k->key ^ k->leaf);
}

/* code: ids are a code object's (check, check2 its Code and start); not_code: ids[0] a pc in none.
 */
static void remember(struct node *n, const struct cache_key *k, const uint64_t *ids, uint32_t nr,
		     bool code, bool not_code, uint64_t check, uint64_t check2)
{
	if (n->nr_res >= MAX_CACHED)
		forget_cache(n);
	if (VEC_RESERVE(n->res, n->res_cap, n->nr_res + 1, 64) ||
	    VEC_RESERVE(n->ids, n->ids_cap, n->nr_ids + nr, 256) ||
	    hashmap__add(&n->cache, key_hash(k), n->nr_res))
		return;
	n->res[n->nr_res++] = (struct resolved){ .key = k->key,
						 .check = check,
						 .check2 = check2,
						 .first = (uint32_t)n->nr_ids,
						 .nr = nr,
						 .code = code,
						 .not_code = not_code,
						 .leaf = k->leaf,
						 .checked_ns = clock__mono_ns() };
	memcpy(n->ids + n->nr_ids, ids, nr * sizeof(*ids));
	n->nr_ids += nr;
}

static const struct resolved *cached(struct v8s *vs, struct node *n, const struct cache_key *k)
{
	int64_t i = hashmap__find(&n->cache, key_hash(k), res_eq, n, k);
	const struct resolved *r;
	uint64_t now, key;
	bool ok;

	if (i < 0)
		return NULL;
	r = &n->res[i];
	now = clock__mono_ns();
	if (now - r->checked_ns < (r->not_code ? NOT_CODE_NS : CHECK_AGAIN_NS))
		return r;
	/* A pc in no code object may be in one now: looked for again. */
	ok = !r->not_code &&
	     (r->code ? v8__code_is(n->v8, r->check, r->check2) :
			!v8__function_key(n->v8, r->check, &key) && key == r->check2);
	if (ok) {
		n->res[i].checked_ns = now;
		return r;
	}
	vs->stats.cache_stale += !r->not_code;
	hashmap__del(&n->cache, key_hash(k), res_eq, n, k);
	return NULL;
}

static uint32_t unknown(struct v8s *vs, uint64_t *ids)
{
	vs->stats.unknown++;
	ids[0] = vs->unknown_id;
	return 1;
}

/*
 * Whether a perf map's name for V8's code (node --perf-basic-prof:
 * "JS:*name script:line:col", "LazyCompile:*name script:line" before V8 11)
 * is the function f: the name after the kind and the tier's mark, "" for an
 * anonymous function, then a space. A name cut at V8_NAME_MAX is its prefix.
 */
static bool perfmap_names(const char *map, const struct v8_func *f)
{
	const char *name = strcmp(f->name, "(anonymous)") ? f->name : "";
	size_t len = strlen(name);
	const char *p = strchr(map, ':');

	if (!p)
		return false;
	p++;
	if (*p && strchr("*~^+", *p))
		p++;
	return !strncmp(p, name, len) && (p[len] == ' ' || len == V8_NAME_MAX - 1);
}

/*
 * The process's perf map, when it writes one, against the reader for the
 * optimised code at pc, whose own function f is: the reader's names win
 * (they hold the inlined functions and the line), and a disagreement is
 * counted and said once a process.
 */
static void check_perfmap(struct v8s *vs, struct node *n, uint64_t pc, const struct v8_func *f)
{
	const char *map = vs->host.jit_name ? vs->host.jit_name(vs->host.ctx, n->pid, pc) : NULL;

	if (!map)
		return;
	if (perfmap_names(map, f)) {
		vs->stats.perfmap_agree++;
		return;
	}
	vs->stats.perfmap_disagree++;
	if (!n->disagreed)
		pr_warn("v8: pid %d: its perf map names the code at %#" PRIx64
			" \"%s\", V8's metadata %s (%s:%u): V8's is shown",
			n->pid, pc, map, f->name, f->file, f->line);
	n->disagreed = true;
}

static uint64_t func_id(const struct v8_func *f)
{
	return frame_names__intern("js", f->name, f->file, 0, f->line);
}

/* An interpreted or baseline frame's function (JS form ip) into ids[0]: 1. */
static uint32_t function_ids(struct v8s *vs, struct node *n, uint64_t ip, uint64_t *ids)
{
	struct cache_key k = { .key = ip, .leaf = false };
	uint64_t sfi = (ip & SFBPF_V8_SFI_MASK) << 3, key, again;
	uint32_t off = (uint32_t)((ip >> SFBPF_V8_OFF_SHIFT) & SFBPF_V8_OFF_NONE);
	const struct resolved *r;
	struct v8_func f;

	vs->stats.functions++;
	r = cached(vs, n, &k);
	if (r) {
		ids[0] = n->ids[r->first];
		return 1;
	}
	/* The key before the names: a function moved meanwhile then reads as another. */
	if (v8__function_key(n->v8, sfi, &key) || v8__function(n->v8, sfi, off, &f))
		return unknown(vs, ids);
	ids[0] = func_id(&f);
	if (!ids[0] || v8__function_key(n->v8, sfi, &again) || again != key)
		return unknown(vs, ids);
	remember(n, &k, ids, 1, false, false, sfi, key);
	return 1;
}

/*
 * An optimised frame (CODE form ip) into ids, at most max: how many. A pc
 * in no function's code object: its pc, counted, unless osr (a frame of JIT
 * code with a bytecode array, whose code may be baseline code): 0 then.
 */
static uint32_t code_ids(struct v8s *vs, struct node *n, uint64_t ip, bool leaf, bool osr,
			 uint64_t *ids, uint32_t max)
{
	struct cache_key k = { .key = ip, .leaf = leaf };
	const struct resolved *r;
	struct v8_code_frames cf;
	uint64_t pc = ip & SFBPF_V8_PC_MASK;
	uint32_t nr = 0;
	int err;

	r = cached(vs, n, &k);
	if (r && r->not_code && osr)
		return 0;
	if (r) {
		nr = r->nr < max ? r->nr : max;
		memcpy(ids, n->ids + r->first, nr * sizeof(*ids));
		if (r->not_code)
			vs->stats.not_code++;
		else
			vs->stats.optimized += nr;
		return nr;
	}
	err = v8__code(n->v8, pc, leaf, &cf);
	if (err == -ENOENT || err == -ENOTSUP) {
		ids[0] = pc;
		remember(n, &k, ids, 1, false, true, 0, 0);
		if (osr)
			return 0;
		vs->stats.not_code++;
		return 1;
	}
	if (err || !cf.nr)
		return unknown(vs, ids);
	/* The code at pc is another function's than the frame's: freed and reused, or a prologue.
	 */
	if (((ip >> SFBPF_V8_CHECK_SHIFT) & SFBPF_V8_CHECK_MASK) != SFBPF_V8_UNCHECKED &&
	    sfbpf_v8_check(cf.sfi) != ((ip >> SFBPF_V8_CHECK_SHIFT) & SFBPF_V8_CHECK_MASK)) {
		vs->stats.mismatch++;
		return unknown(vs, ids);
	}
	for (uint32_t i = 0; i < cf.nr && nr < max; i++) {
		ids[nr] = func_id(&cf.frames[i]);
		if (!ids[nr]) {
			vs->stats.unknown++;
			ids[nr] = vs->unknown_id;
		}
		nr++;
	}
	if (!v8__code_is(n->v8, cf.code, cf.start))
		return unknown(vs, ids);
	if (cf.nr < V8_MAX_INLINED)
		check_perfmap(vs, n, pc, &cf.frames[cf.nr - 1]);
	vs->stats.optimized += nr;
	remember(n, &k, ids, nr, true, false, cf.code, cf.start);
	return nr;
}

/*
 * The names of one user frame into ids (at most max): how many; 0 when it
 * is not a JavaScript frame the walk identified (kept as it is). words,
 * nwords: the sample's V8 words (SFBPF_V8_JIT frames' functions).
 */
static uint32_t frame_ids(struct v8s *vs, struct node *n, uint64_t ip, bool leaf,
			  const uint64_t *words, uint32_t nwords, uint64_t *ids, uint32_t max)
{
	uint64_t form = ip & SFBPF_V8_JS, sfi;
	uint32_t i, nr;

	if (form == SFBPF_V8_JS)
		return function_ids(vs, n, ip, ids);
	if (form == SFBPF_V8_CODE)
		return code_ids(vs, n, ip, leaf, false, ids, max);
	if (form != SFBPF_V8_JIT)
		return 0;
	/*
	 * JIT code with a bytecode array: code replaced on the stack (OSR),
	 * optimised code of the frame's own function, named as optimised code
	 * is; else baseline code, named by the function.
	 */
	i = (uint32_t)((ip >> SFBPF_V8_CHECK_SHIFT) & SFBPF_V8_CHECK_MASK);
	if (i >= nwords)
		return unknown(vs, ids);
	sfi = words[2 * i];
	nr = code_ids(vs, n,
		      SFBPF_V8_CODE | sfbpf_v8_check(sfi) << SFBPF_V8_CHECK_SHIFT |
			      (ip & SFBPF_V8_PC_MASK),
		      leaf, true, ids, max);
	if (nr) {
		vs->stats.osr++;
		return nr;
	}
	return function_ids(vs, n,
			    SFBPF_V8_JS | SFBPF_V8_OFF_NONE << SFBPF_V8_OFF_SHIFT |
				    ((sfi >> 3) & SFBPF_V8_SFI_MASK),
			    ids);
}

struct v8_splice {
	struct v8s *vs;
	struct node *nd;
	const uint64_t *words; /* the sample's V8 words: nwords entries of two */
	uint32_t nwords;
};

/* runtime__splice_frames()'s step: a frame's names (or its pc, kept) as stack ips. */
static uint32_t splice_frame(void *ctx, uint64_t ip, bool leaf, uint64_t *ips, uint32_t max)
{
	struct v8_splice *c = ctx;
	uint32_t m = frame_ids(c->vs, c->nd, ip, leaf, c->words, c->nwords, ips, max);

	for (uint32_t i = 0; i < m; i++)
		if (ips[i] != (ip & SFBPF_V8_PC_MASK))
			ips[i] = frame_names__ip(ips[i]);
	return m;
}

static int splice(void *rt, struct runtime_proc *rp, const struct sfbpf_sample *in, size_t size,
		  struct sfbpf_sample *out)
{
	struct v8s *vs = rt;
	struct v8_splice c = { .vs = vs, .nd = rp ? rp->priv : NULL };
	int r;

	if (!rp)
		return SFBPF_SAMPLE_HDR_SIZE + ((size_t)in->nr_user + in->nr_kernel) * 8 > size ||
				       in->nr_user > SFBPF_MAX_FRAMES ?
			       -EINVAL :
			       0;
	if (in->flags & SFBPF_SAMPLE_V8_WORDS) {
		if (in->nr_py > SFBPF_V8_WORDS_MAX ||
		    SFBPF_SAMPLE_HDR_SIZE +
				    ((size_t)in->nr_user + in->nr_kernel + 2 * in->nr_py) * 8 >
			    size)
			return -EINVAL;
		c.words = (const uint64_t *)in->ips + in->nr_user + in->nr_kernel;
		c.nwords = in->nr_py;
	}
	if (c.nd &&
	    (!c.nd->jit.lo || in->stop == SFBPF_STOP_NO_ROW || in->stop == SFBPF_STOP_NO_MAPPING) &&
	    clock__mono_ns() - c.nd->pushed_ns >= c.nd->repush_ns)
		push(vs, c.nd);
	r = runtime__splice_frames(in, size, out, splice_frame, NULL, &c);
	if (r == 1)
		vs->stats.samples++;
	return r;
}

static void mark_names(void *rt)
{
	frame_names__mark(frame_names__ip(((struct v8s *)rt)->unknown_id));
}

static void forget(void *rt, struct runtime_proc *rp)
{
	(void)rt;
	forget_cache(rp->priv);
}

static void *v8s_new(const struct runtime_host *host)
{
	struct v8s *vs = calloc(1, sizeof(*vs));

	if (!vs)
		return NULL;
	vs->host = *host;
	vs->fd = profile__v8_procs_fd(host->prof);
	vs->unknown_id = frame_names__intern("js", "[unknown js]", "", 0, 0);
	return vs;
}

static void v8s_free(void *rt)
{
	free(rt);
}

static void counters(const void *rt, runtime_put_fn put, void *ctx)
{
	const struct v8s_stats *st = &((const struct v8s *)rt)->stats;

	put(ctx, "v8_spliced", st->samples, false);
	put(ctx, "v8_named_functions", st->functions, false);
	put(ctx, "v8_named_optimized", st->optimized, false);
	put(ctx, "v8_unknown", st->unknown, false);
	put(ctx, "v8_mismatch", st->mismatch, false);
	put(ctx, "v8_not_code", st->not_code, false);
	put(ctx, "v8_cache_stale", st->cache_stale, false);
	put(ctx, "v8_named_osr", st->osr, false);
	put(ctx, "v8_perfmap_agree", st->perfmap_agree, false);
	put(ctx, "v8_perfmap_disagree", st->perfmap_disagree, false);
}

const struct runtime_ops v8_runtime = {
	.name = "v8",
	.prefix = "v8",
	.starting = "not started",
	.refusal_tries = REFUSAL_TRIES,
	.new = v8s_new,
	.free = v8s_free,
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
