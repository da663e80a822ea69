// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's JVMs: attach, the BPF step's settings, naming Java frames (hotspots.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/hotspot.h"
#include "interp/python_names.h"
#include "procs/procmaps.h"
#include "profile/hotspots.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

/*
 * A JVM still starting (-EAGAIN: no interpreter or code heap yet) is tried
 * again at its samples, 4 ms after the first try, then twice as long each
 * time up to a second; unreadable memory MAX_ATTEMPTS times. A refusal
 * (-EPROTO) is final: the tables are libjvm's static data, set by its
 * constructors before the JVM runs, and do not change.
 */
#define RETRY_MIN_NS (4 * 1000000ULL)
#define RETRY_MAX_NS (1000 * 1000000ULL)
#define MAX_ATTEMPTS 8
/* Resolutions kept per process; then forgotten at once (resolved again when met). */
#define MAX_CACHED 65536

enum state {
	ATTACHED,
	RETRY,
	NATIVE, /* no JVM we can read: native frames only */
	RETIRED, /* exited: its samples still in the ring are named until a round is read */
};

/*
 * A frame resolved: an interpreted frame's ip as the BPF walk sent it, or a
 * code pc (as a leaf or a return address) -> its ids. check, check2: what
 * hotspot__method_is() (Method, ConstMethod) or hotspot__blob_is() (blob,
 * ident) compare at each use.
 */
struct resolved {
	uint64_t key;
	uint64_t check, check2;
	uint32_t first, nr; /* ids[first .. first + nr) of the process */
	bool code; /* a code pc (check: blob, check2: ident), else an interpreted frame */
	bool leaf;
};

struct jvm {
	int pid;
	uint64_t start_ticks;
	enum state state;
	unsigned int attempts;
	uint64_t next_try_ns;
	uint64_t retired_at;
	struct hotspot *hs;
	struct hashmap cache; /* -> index in res */
	struct resolved *res;
	size_t nr_res, res_cap;
	uint64_t *ids;
	size_t nr_ids, ids_cap;
};

struct hotspots {
	int fd;
	struct hashmap procs; /* pid -> struct jvm * */
	struct hotspots_stats stats;
	uint64_t unknown_id; /* the marker's name */
	uint64_t drains;
	size_t retired, retrying;
};

static bool proc_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return ((const struct jvm *)HASHMAP_TO_PTR(val))->pid == *(const int *)key;
}

static uint32_t pid_hash(int pid)
{
	return (uint32_t)hash__mix64((uint64_t)pid);
}

static struct jvm *find(struct hotspots *hss, int pid)
{
	int64_t v = hashmap__find(&hss->procs, pid_hash(pid), proc_eq, NULL, &pid);

	return v < 0 ? NULL : HASHMAP_TO_PTR(v);
}

static void forget(struct jvm *j)
{
	hashmap__clear(&j->cache);
	j->nr_res = j->nr_ids = 0;
}

static void drop(struct hotspots *hss, struct jvm *j)
{
	__u32 key = j->pid;

	if (j->state == ATTACHED)
		bpf_map_delete_elem(hss->fd, &key);
	hss->retired -= j->state == RETIRED;
	hss->retrying -= j->state == RETRY;
	hashmap__del(&hss->procs, pid_hash(j->pid), proc_eq, NULL, &j->pid);
	hashmap__free(&j->cache);
	free(j->res);
	free(j->ids);
	hotspot__free(j->hs);
	free(j);
}

/* Whether pid may run HotSpot: it maps a libjvm (the attach then reads it). */
static bool maybe_jvm(const struct procmaps *pm)
{
	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if (!(m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)) &&
		    !strcmp(procmap__basename(m->path), "libjvm.so"))
			return true;
	}
	return false;
}

static void attach(struct hotspots *hss, struct jvm *j)
{
	uint64_t wait = RETRY_MIN_NS << (j->attempts < 8 ? j->attempts : 8);
	struct sfbpf_hs_proc cfg;
	__u32 key = j->pid;
	int err;

	j->attempts++;
	j->next_try_ns = clock__mono_ns() + (wait < RETRY_MAX_NS ? wait : RETRY_MAX_NS);
	hss->retrying -= j->state == RETRY;
	err = hotspot__attach(j->pid, &j->hs);
	if (!err)
		err = hotspot__bpf_settings(j->hs, &cfg);
	if (!err) {
		cfg.start_ticks = j->start_ticks;
		if (bpf_map_update_elem(hss->fd, &key, &cfg, BPF_ANY))
			err = -errno;
	}
	if (!err) {
		j->state = ATTACHED;
		hss->stats.attached++;
		pr_debug("hotspot: pid %d: JVM attached", j->pid);
		return;
	}
	hotspot__free(j->hs);
	j->hs = NULL;
	if (err == -EAGAIN || (err == -EFAULT && j->attempts < MAX_ATTEMPTS)) {
		j->state = RETRY;
		hss->retrying++;
		return;
	}
	j->state = NATIVE;
	hss->stats.refused += err == -EPROTO;
	hss->stats.unreadable += err != -EPROTO && err != -ENOENT;
	if (err != -ENOENT)
		pr_info("hotspot: pid %d: profiled as native code: %s", j->pid, strerror(-err));
}

static void on_updated(void *ctx, int pid, uint64_t start_ticks, const struct procmaps *pm)
{
	struct hotspots *hss = ctx;
	struct jvm *j = find(hss, pid);

	if (j && (j->start_ticks != start_ticks || j->state == RETIRED)) {
		drop(hss, j);
		j = NULL;
	}
	if (j && j->state == ATTACHED) {
		struct sfbpf_hs_proc cfg;
		__u32 key = pid;

		/* Its mappings changed: the settings again, should a heap have changed too. */
		if (!hotspot__bpf_settings(j->hs, &cfg)) {
			cfg.start_ticks = j->start_ticks;
			bpf_map_update_elem(hss->fd, &key, &cfg, BPF_ANY);
		}
		return;
	}
	if (j && (j->state != RETRY || clock__mono_ns() < j->next_try_ns))
		return;
	if (!j) {
		if (!maybe_jvm(pm))
			return;
		j = calloc(1, sizeof(*j));
		if (!j || hashmap__add(&hss->procs, pid_hash(pid), HASHMAP_PTR(j))) {
			free(j);
			return;
		}
		j->pid = pid;
		j->start_ticks = start_ticks;
	}
	attach(hss, j);
}

static void on_removed(void *ctx, int pid)
{
	struct hotspots *hss = ctx;
	struct jvm *j = find(hss, pid);
	__u32 key = pid;

	if (!j)
		return;
	if (j->state != ATTACHED) {
		drop(hss, j);
		return;
	}
	bpf_map_delete_elem(hss->fd, &key);
	j->state = RETIRED;
	j->retired_at = hss->drains;
	hss->retired++;
}

struct proctrack_listener hotspots__listener(struct hotspots *hss)
{
	return (struct proctrack_listener){ .updated = on_updated,
					    .removed = on_removed,
					    .ctx = hss };
}

void hotspots__drained(struct hotspots *hss)
{
	size_t iter = 0;
	uint64_t v;

	hss->drains++;
	while (hss->retired && hashmap__next(&hss->procs, &iter, &v)) {
		struct jvm *j = HASHMAP_TO_PTR(v);

		if (j->state == RETIRED && j->retired_at + 2 <= hss->drains) {
			drop(hss, j);
			iter = 0;
		}
	}
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

/* The name of method at bci: a python_names id, or 0 (unreadable, or no room). */
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
	return python_names__intern(qual, m.file, 0, line > 0 ? (uint32_t)line : 0);
}

/* Adds a resolution of nr ids to j's cache (forgotten at once at MAX_CACHED). */
static void remember(struct jvm *j, const struct cache_key *k, const uint64_t *ids, uint32_t nr,
		     uint64_t check, uint64_t check2)
{
	if (j->nr_res >= MAX_CACHED)
		forget(j);
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
						 .leaf = k->leaf };
	memcpy(j->ids + j->nr_ids, ids, nr * sizeof(*ids));
	j->nr_ids += nr;
}

/* A cached resolution still true, or NULL (none, or stale: then dropped from the cache). */
static const struct resolved *cached(struct hotspots *hss, struct jvm *j, const struct cache_key *k)
{
	int64_t i = hashmap__find(&j->cache, key_hash(k), res_eq, j, k);
	const struct resolved *r;
	bool ok;

	if (i < 0)
		return NULL;
	r = &j->res[i];
	ok = r->code ? hotspot__blob_is(j->hs, r->check, r->check2) :
		       hotspot__method_is(j->hs, r->check, r->check2);
	if (ok)
		return r;
	hss->stats.cache_stale++;
	hashmap__del(&j->cache, key_hash(k), res_eq, j, k);
	return NULL;
}

/*
 * The names of one user frame of a JVM's sample into ids (at most max):
 * how many; 0 when it is not the JVM's (a native frame: kept as it is).
 */
static uint32_t frame_ids(struct hotspots *hss, struct jvm *j, uint64_t ip, bool leaf,
			  uint64_t *ids, uint32_t max)
{
	struct cache_key k = { .key = ip, .code = false, .leaf = false };
	struct hotspot_code_frames cf;
	const struct resolved *r;
	uint64_t check = 0, check2 = 0;
	uint32_t n = 0;

	if ((ip & SFBPF_HS_INTERP) == SFBPF_HS_INTERP) {
		uint64_t method = (ip & SFBPF_HS_METHOD_MASK) << 3;
		uint64_t bci = (ip >> SFBPF_HS_BCI_SHIFT) & SFBPF_HS_BCI_NONE;

		hss->stats.interpreted++;
		r = cached(hss, j, &k);
		if (r) {
			ids[0] = j->ids[r->first];
			return 1;
		}
		ids[0] = method_id(hss, j, method, bci == SFBPF_HS_BCI_NONE ? -1 : (int32_t)bci,
				   &check2);
		if (!ids[0]) {
			hss->stats.unknown++;
			ids[0] = hss->unknown_id;
			return 1;
		}
		remember(j, &k, ids, 1, method, check2);
		return 1;
	}
	/* Native code (most frames of most samples): nothing read. */
	if (!hotspot__owns(j->hs, ip - !leaf))
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
	if (hotspot__code_pc(j->hs, ip, leaf, &cf))
		return 0;
	check = cf.blob;
	check2 = cf.ident;
	if (!cf.nr) {
		hss->stats.stubs++;
		ids[0] = python_names__intern(cf.stub, "", 0, 0);
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
	hss->stats.compiled += cf.nr ? n : 0;
	if (n)
		remember(j, &k, ids, n, check, check2);
	return n;
}

int hotspots__splice(struct hotspots *hss, const struct sfbpf_sample *in, size_t size,
		     struct sfbpf_sample *out)
{
	uint32_t nu = in->nr_user, n = 0, j, m;
	uint64_t ids[HOTSPOT_MAX_SCOPES];
	bool cut = false, any = false;
	struct jvm *jv;

	if (SFBPF_SAMPLE_HDR_SIZE + ((size_t)nu + in->nr_kernel) * 8 > size ||
	    nu > SFBPF_MAX_FRAMES)
		return -EINVAL;
	jv = find(hss, in->pid);
	if (jv && jv->state == RETRY && hss->retrying && clock__mono_ns() >= jv->next_try_ns)
		attach(hss, jv);
	if (!jv || (jv->state != ATTACHED && jv->state != RETIRED))
		return 0;
	memcpy(out, in, SFBPF_SAMPLE_HDR_SIZE);
	for (j = 0; j < nu && !cut; j++) {
		m = frame_ids(hss, jv, in->ips[j], j == 0, ids, HOTSPOT_MAX_SCOPES);
		if (!m) {
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = in->ips[j];
			continue;
		}
		any = true;
		for (uint32_t i = 0; i < m && !cut; i++) {
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = python_names__ip(ids[i]);
		}
	}
	if (!any)
		return 0;
	hss->stats.samples++;
	if (cut)
		out->stop = SFBPF_STOP_DEPTH;
	memcpy(&out->ips[n], in->ips + nu, in->nr_kernel * sizeof(uint64_t));
	/* Python's slots, if any, were spliced before: none follow. */
	out->nr_user = n;
	out->nr_py = 0;
	return 1;
}

void hotspots__mark_names(struct hotspots *hss)
{
	size_t iter = 0;
	uint64_t v;

	python_names__mark(python_names__ip(hss->unknown_id));
	while (hashmap__next(&hss->procs, &iter, &v))
		forget(HASHMAP_TO_PTR(v));
}

struct hotspots *hotspots__new(int hs_procs_fd)
{
	struct hotspots *hss = calloc(1, sizeof(*hss));

	if (!hss)
		return NULL;
	hss->fd = hs_procs_fd;
	hss->unknown_id = python_names__intern("[unknown java]", "", 0, 0);
	return hss;
}

void hotspots__free(struct hotspots *hss)
{
	size_t iter = 0;
	uint64_t v;

	if (!hss)
		return;
	while (hashmap__next(&hss->procs, &iter, &v)) {
		drop(hss, HASHMAP_TO_PTR(v));
		iter = 0;
	}
	hashmap__free(&hss->procs);
	free(hss);
}

void hotspots__stats(const struct hotspots *hss, struct hotspots_stats *out)
{
	*out = hss->stats;
}
