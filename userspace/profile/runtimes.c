// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's runtimes: their processes' states, retries and retirement (runtimes.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/frame_names.h"
#include "procs/procmaps.h"
#include "procs/proctrack.h"
#include "profile/hotspots.h"
#include "profile/phps.h"
#include "profile/perls.h"
#include "profile/rubies.h"
#include "profile/v8s.h"
#include "profile/pythons.h"
#include "profile/runtimes.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"

/*
 * A runtime still starting (-EAGAIN) is tried again at its samples, which
 * say it runs, and at the tracker's refreshes: 4 ms after the first try,
 * then twice as long each time up to a second. A process whose samples come
 * as it starts up is attached within milliseconds of its first thread; one
 * that never starts its runtime costs an attach a second while it runs.
 * Unreadable memory (-EFAULT, a process exiting) is tried MAX_ATTEMPTS times.
 */
#define RETRY_MIN_NS (4 * 1000000ULL)
#define RETRY_MAX_NS (1000 * 1000000ULL)
#define MAX_ATTEMPTS 8

/*
 * In splice order: CPython's frames come after the native ones in a sample
 * and replace its eval loop's; HotSpot's stand in the native walk's place.
 */
static const struct runtime_ops *const known[] = {
	&python_runtime, &hotspot_runtime, &v8_runtime, &php_runtime, &ruby_runtime, &perl_runtime
};
#define NR_RUNTIMES (sizeof(known) / sizeof(known[0]))

/* INHERITED: a forked child read through its parent (runtimes__fork), not read itself yet. */
enum state { ATTACHED, RETRY, NATIVE, RETIRED, INHERITED };

struct proc {
	struct runtime_proc p; /* first: the runtime's view */
	enum state state;
	unsigned int attempts;
	uint64_t next_try_ns;
	uint64_t retired_at; /* RETIRED: the runtime's drains then */
};

struct rt {
	const struct runtime_ops *ops;
	void *state; /* ops->new()'s */
	struct hashmap procs; /* pid -> struct proc * */
	struct sfbpf_sample *out; /* its spliced sample */
	uint64_t attached, refused, unsupported, unreadable, inherited;
	size_t retired, retrying;
};

struct runtimes {
	struct rt rt[NR_RUNTIMES];
	uint64_t drains;
};

static bool proc_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return ((const struct proc *)HASHMAP_TO_PTR(val))->p.pid == *(const int *)key;
}

static uint32_t pid_hash(int pid)
{
	return (uint32_t)hash__mix64((uint64_t)pid);
}

static struct proc *find(const struct rt *r, int pid)
{
	int64_t v;

	if (!hashmap__size(&r->procs))
		return NULL;
	v = hashmap__find(&r->procs, pid_hash(pid), proc_eq, NULL, &pid);
	return v < 0 ? NULL : HASHMAP_TO_PTR(v);
}

/* Whether pr's frames are named: attached, exited since, or a child read through its parent. */
static bool named(const struct proc *pr)
{
	return pr->state == ATTACHED || pr->state == RETIRED || pr->state == INHERITED;
}

static void drop(struct rt *r, struct proc *pr)
{
	if (pr->state == ATTACHED || pr->state == INHERITED)
		r->ops->detach(r->state, &pr->p);
	if (pr->p.priv)
		r->ops->release(r->state, &pr->p);
	r->retired -= pr->state == RETIRED;
	r->retrying -= pr->state == RETRY;
	hashmap__del(&r->procs, pid_hash(pr->p.pid), proc_eq, NULL, &pr->p.pid);
	free(pr);
}

static void attach(struct rt *r, struct proc *pr)
{
	/* 4 ms, doubling at each try, a second at most (RETRY_MIN_NS). */
	uint64_t wait = RETRY_MIN_NS << (pr->attempts < 8 ? pr->attempts : 8);
	const char *name = r->ops->name;
	int err;

	pr->attempts++;
	pr->next_try_ns = clock__mono_ns() + (wait < RETRY_MAX_NS ? wait : RETRY_MAX_NS);
	r->retrying -= pr->state == RETRY;
	err = r->ops->attach(r->state, &pr->p);
	if (!err) {
		pr->state = ATTACHED;
		r->attached++;
		return;
	}
	if (err == -EAGAIN || (err == -EPROTO && pr->attempts < r->ops->refusal_tries) ||
	    (err != -EPROTO && err != -ENOTSUP && err != -ERANGE && err != -ENOENT &&
	     pr->attempts < MAX_ATTEMPTS)) {
		pr->state = RETRY;
		r->retrying++;
		pr_debug("%s: pid %d: %s: again in %llu ms", name, pr->p.pid,
			 err == -EAGAIN ? r->ops->starting : strerror(-err),
			 (unsigned long long)((pr->next_try_ns - clock__mono_ns()) / 1000000));
		return;
	}
	pr->state = NATIVE;
	if (err == -EPROTO)
		r->refused++;
	else if (err == -ENOTSUP || err == -ERANGE)
		r->unsupported++;
	else if (err != -ENOENT)
		r->unreadable++;
	if (err != -ENOENT)
		pr_info("%s: pid %d: profiled as native code: %s", name, pr->p.pid, strerror(-err));
}

static void retry_if_due(struct rt *r, struct proc *pr)
{
	if (pr->state == RETRY && clock__mono_ns() >= pr->next_try_ns)
		attach(r, pr);
}

static void updated(struct rt *r, int pid, uint64_t start_ticks, const struct procmaps *pm)
{
	struct proc *pr = find(r, pid);

	/* Another process under the PID, or the same one's new image (exec). */
	if (pr && (pr->p.start_ticks != start_ticks || pr->state == RETIRED)) {
		drop(r, pr);
		pr = NULL;
	}
	/* A forked child read itself now that it is seen living: its own reader if it reads. */
	if (pr && pr->state == INHERITED) {
		struct runtime_proc own = pr->p;

		own.priv = NULL;
		if (!r->ops->attach(r->state, &own)) {
			r->ops->release(r->state, &pr->p);
			pr->p.priv = own.priv;
			pr->state = ATTACHED;
			r->attached++;
		}
		return;
	}
	if (pr) {
		if (pr->state == ATTACHED && r->ops->remapped)
			r->ops->remapped(r->state, &pr->p);
		retry_if_due(r, pr);
		return;
	}
	if (!r->ops->detect(pid, pm))
		return;
	pr = calloc(1, sizeof(*pr));
	if (!pr || hashmap__add(&r->procs, pid_hash(pid), HASHMAP_PTR(pr))) {
		free(pr);
		return;
	}
	pr->p.pid = pid;
	pr->p.start_ticks = start_ticks;
	attach(r, pr);
}

static void on_updated(void *ctx, int pid, uint64_t start_ticks, const struct procmaps *pm)
{
	struct runtimes *rs = ctx;

	for (size_t i = 0; i < NR_RUNTIMES; i++)
		updated(&rs->rt[i], pid, start_ticks, pm);
}

/*
 * The exit (or exec) is read before the samples taken before it, which may
 * wait in the sample ring while the reader loads a new process's tables:
 * the process stops being walked now, and its names stay for those samples.
 */
static void on_removed(void *ctx, int pid)
{
	struct runtimes *rs = ctx;

	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct rt *r = &rs->rt[i];
		struct proc *pr = find(r, pid);

		if (!pr)
			continue;
		if (pr->state != ATTACHED && pr->state != INHERITED) {
			drop(r, pr);
			continue;
		}
		r->ops->detach(r->state, &pr->p);
		pr->state = RETIRED;
		pr->retired_at = rs->drains;
		r->retired++;
	}
}

struct proctrack_listener runtimes__listener(struct runtimes *rs)
{
	return (struct proctrack_listener){ .updated = on_updated,
					    .removed = on_removed,
					    .ctx = rs };
}

void runtimes__fork(struct runtimes *rs, int pid, int parent, uint64_t start_ticks)
{
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct rt *r = &rs->rt[i];
		struct proc *pp = find(r, parent), *pr = find(r, pid);

		if (!r->ops->inherit || !pp || pp->state != ATTACHED)
			continue;
		/* Known under this start already (read before its fork's event), or an earlier one.
		 */
		if (pr && pr->p.start_ticks == start_ticks)
			continue;
		if (pr)
			drop(r, pr);
		pr = calloc(1, sizeof(*pr));
		if (!pr)
			return;
		pr->p.pid = pid;
		pr->p.start_ticks = start_ticks;
		if (r->ops->inherit(r->state, &pp->p, &pr->p) ||
		    hashmap__add(&r->procs, pid_hash(pid), HASHMAP_PTR(pr))) {
			if (pr->p.priv)
				r->ops->release(r->state, &pr->p);
			free(pr);
			continue;
		}
		pr->state = INHERITED;
		r->inherited++;
	}
}

static bool known_pid(const struct runtimes *rs, int pid)
{
	for (size_t i = 0; i < NR_RUNTIMES; i++)
		if (find(&rs->rt[i], pid))
			return true;
	return false;
}

/*
 * A sample whose walk read a runtime's frames, of a process no runtime here
 * knows: a forked child, given its parent's settings by the kernel
 * (sfbpf_fork), sampled before its fork's event was read (the rings are
 * read in either order). It is offered to the runtimes now, as the event
 * would (lifecycle's on_young), so that this sample is named; one gone
 * already cannot be (its frames stay unnamed, counted by its runtime).
 */
static void offer_forked(struct runtimes *rs, int pid)
{
	struct procmaps *pm = NULL;
	uint64_t ticks;

	if (proctrack_start_ticks(pid, &ticks) || procmaps__snapshot(pid, 0, &pm))
		return;
	on_updated(rs, pid, ticks, pm);
	procmaps__free(pm);
}

const struct sfbpf_sample *runtimes__splice(struct runtimes *rs, const struct sfbpf_sample *in,
					    size_t *size)
{
	if (in->nr_py && !known_pid(rs, (int)in->pid))
		offer_forked(rs, (int)in->pid);
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct rt *r = &rs->rt[i];
		struct proc *pr = find(r, (int)in->pid);

		if (pr && r->retrying)
			retry_if_due(r, pr);
		if (pr && !named(pr))
			pr = NULL;
		if (r->ops->splice(r->state, pr ? &pr->p : NULL, in, *size, r->out) > 0) {
			in = r->out;
			*size = SFBPF_SAMPLE_HDR_SIZE +
				((size_t)in->nr_user + in->nr_kernel) * sizeof(__u64);
		}
	}
	return in;
}

void runtimes__describe(struct runtimes *rs, const struct runtime_ops *ops, int pid,
			const void *rec, size_t size)
{
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct rt *r = &rs->rt[i];
		struct proc *pr;

		if (r->ops != ops || !ops->describe)
			continue;
		pr = find(r, pid);
		if (pr && !named(pr))
			pr = NULL;
		ops->describe(r->state, pr ? &pr->p : NULL, rec, size);
	}
}

bool runtimes__attached(const struct runtimes *rs, int pid)
{
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		const struct proc *pr = find(&rs->rt[i], pid);

		if (pr && pr->state == ATTACHED)
			return true;
	}
	return false;
}

void runtimes__mark_names(struct runtimes *rs)
{
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct rt *r = &rs->rt[i];
		size_t iter = 0;
		uint64_t v;

		r->ops->mark_names(r->state);
		while (hashmap__next(&r->procs, &iter, &v)) {
			struct proc *pr = HASHMAP_TO_PTR(v);

			if (pr->p.priv)
				r->ops->forget(r->state, &pr->p);
		}
	}
}

void runtimes__drained(struct runtimes *rs)
{
	rs->drains++;
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct rt *r = &rs->rt[i];
		size_t iter = 0;
		uint64_t v;

		while (r->retired && hashmap__next(&r->procs, &iter, &v)) {
			struct proc *pr = HASHMAP_TO_PTR(v);

			/* Retired in an earlier round than the last whole one: its samples are
			 * read. */
			if (pr->state == RETIRED && pr->retired_at + 2 <= rs->drains) {
				drop(r, pr);
				iter = 0; /* drop() shifted the map */
			}
		}
	}
}

static void put(void *ctx, const char *name, uint64_t value, bool gauge)
{
	struct runtimes_stats *out = ctx;
	struct runtime_counter *c;

	if (out->nr >= RUNTIMES_MAX_COUNTERS)
		return; /* a runtime with too many: a test (sessionstats) says so */
	c = &out->c[out->nr++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->value = value;
	c->gauge = gauge;
}

static void put_common(struct runtimes_stats *out, const char *prefix, const char *what,
		       uint64_t value)
{
	char name[40];

	snprintf(name, sizeof(name), "%s_%s", prefix, what);
	put(out, name, value, false);
}

void runtimes__stats(const struct runtimes *rs, struct runtimes_stats *out)
{
	out->nr = 0;
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		const struct rt *r = &rs->rt[i];
		const char *px = r->ops->prefix;

		put_common(out, px, "attached", r->attached);
		put_common(out, px, "refused", r->refused);
		put_common(out, px, "unsupported", r->unsupported);
		put_common(out, px, "unreadable", r->unreadable);
		if (r->ops->inherit)
			put_common(out, px, "inherited", r->inherited);
		r->ops->counters(r->state, put, out);
	}
}

struct runtimes *runtimes__new(const struct runtime_host *host)
{
	struct runtimes *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct rt *r = &rs->rt[i];

		r->ops = known[i];
		r->out = malloc(sizeof(*r->out));
		r->state = r->out ? r->ops->new (host) : NULL;
		if (!r->state) {
			free(r->out);
			r->out = NULL;
			runtimes__free(rs);
			errno = ENOMEM;
			return NULL;
		}
	}
	return rs;
}

void runtimes__free(struct runtimes *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < NR_RUNTIMES; i++) {
		struct rt *r = &rs->rt[i];
		size_t iter = 0;
		uint64_t v;

		if (!r->state)
			continue;
		while (hashmap__next(&r->procs, &iter, &v)) {
			drop(r, HASHMAP_TO_PTR(v));
			iter = 0; /* drop() shifted the map */
		}
		hashmap__free(&r->procs);
		r->ops->free(r->state);
		free(r->out);
	}
	free(rs);
}

int runtime__splice_frames(const struct sfbpf_sample *in, size_t size, struct sfbpf_sample *out,
			   runtime_frame_fn frame, uint64_t (*kept)(uint64_t ip), void *ctx)
{
	uint32_t nu = in->nr_user, n = 0, m;
	uint64_t ips[RUNTIME_MAX_SPLICED];
	bool cut = false, any = false;

	if (SFBPF_SAMPLE_HDR_SIZE + ((size_t)nu + in->nr_kernel) * 8 > size ||
	    nu > SFBPF_MAX_FRAMES)
		return -EINVAL;
	memcpy(out, in, SFBPF_SAMPLE_HDR_SIZE);
	for (uint32_t j = 0; j < nu && !cut; j++) {
		m = frame(ctx, in->ips[j], j == 0, ips, RUNTIME_MAX_SPLICED);
		if (!m) {
			uint64_t ip = kept ? kept(in->ips[j]) : in->ips[j];

			/* Its pc, never the walk's raw identity: any that had one is spliced. */
			any |= ip != in->ips[j];
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = ip;
			continue;
		}
		any = true;
		for (uint32_t i = 0; i < m && i < RUNTIME_MAX_SPLICED && !cut; i++) {
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = ips[i];
		}
	}
	if (!any)
		return 0;
	if (cut)
		out->stop = SFBPF_STOP_DEPTH;
	memcpy(&out->ips[n], in->ips + nu, in->nr_kernel * sizeof(uint64_t));
	/* Python's slots, or V8's words, if any, were read before: none follow. */
	out->nr_user = n;
	out->nr_py = 0;
	out->flags &= ~SFBPF_SAMPLE_V8_WORDS;
	return 1;
}

/*
 * What each native frame of in does: runs[j] 1 if it takes a run of the
 * runtime's frames, -1 if it goes (a JIT frame the loop frame outside it
 * called, and the frames between), 0 if it stays.
 */
static void eval_frames(const struct sfbpf_sample *in, uint32_t nu,
			int (*in_eval)(const void *ctx, uint64_t pc), const void *ctx, int8_t *runs)
{
	uint32_t j, l;

	for (j = 0; j < nu; j++)
		runs[j] = (int8_t)in_eval(ctx, in->ips[j] - (j > 0));
	for (j = 0; j < nu; j++) {
		if (runs[j] != RUNTIME_EVAL_JIT)
			continue;
		for (l = j + 1; l < nu && !runs[l]; l++)
			;
		if (l < nu && runs[l] == RUNTIME_EVAL_LOOP)
			for (; j < l; j++)
				runs[j] = -1;
	}
	for (j = 0; j < nu; j++)
		runs[j] = runs[j] == RUNTIME_EVAL_LOOP || runs[j] == RUNTIME_EVAL_JIT ? 1 :
			  runs[j] < 0						      ? -1 :
											0;
}

void runtime__splice_after(const struct sfbpf_sample *in, struct sfbpf_sample *out,
			   const uint64_t *ids, const bool *entry, uint32_t npy,
			   int (*in_eval)(const void *ctx, uint64_t pc), const void *ctx,
			   bool *left, bool *was_short)
{
	uint32_t nu = in->nr_user, k = 0, n = 0, j, runs = 0, evals = 0;
	int8_t part[SFBPF_MAX_FRAMES];
	bool cut = false;

	*was_short = false;
	memcpy(out, in, SFBPF_SAMPLE_HDR_SIZE);
	if (nu > SFBPF_MAX_FRAMES)
		nu = SFBPF_MAX_FRAMES;
	eval_frames(in, nu, in_eval, ctx, part);
	/*
	 * A whole native stack holds the eval frame of every run that entered
	 * its loop: the runs past those are the innermost, pushed and not yet
	 * run (a block set up by rb_yield, a function by its caller's call):
	 * theirs is the leaf, not their callers' eval frames. With no eval
	 * frame at all (its loop not found) they go outermost, as said.
	 */
	if (in->stop == SFBPF_STOP_OUTERMOST) {
		for (j = 0; j < npy; j++)
			runs += entry[j] || j + 1 == npy;
		for (j = 0; j < nu; j++)
			evals += part[j] > 0;
		for (; evals && runs > evals && k < npy; runs--) {
			do {
				cut = n >= SFBPF_MAX_FRAMES;
				if (!cut)
					out->ips[n++] = frame_names__ip(ids[k]);
			} while (!cut && !entry[k++] && k < npy);
		}
	}
	/* Leaf first, as the sample: each eval frame takes its run of the runtime's frames. */
	for (j = 0; j < nu && !cut; j++) {
		if (part[j] < 0) /* the loop's frame outside takes their run */
			continue;
		if (!part[j] || k >= npy) {
			*was_short |= k >= npy && part[j];
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = in->ips[j];
			continue;
		}
		do {
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = frame_names__ip(ids[k]);
		} while (!cut && !entry[k++] && k < npy);
	}
	*left = k < npy;
	for (; k < npy && !cut; k++) {
		cut = n >= SFBPF_MAX_FRAMES;
		if (!cut)
			out->ips[n++] = frame_names__ip(ids[k]);
	}
	if (cut)
		out->stop = SFBPF_STOP_DEPTH;
	memcpy(&out->ips[n], in->ips + nu, in->nr_kernel * sizeof(uint64_t));
	out->nr_user = n;
	out->nr_py = 0;
}
