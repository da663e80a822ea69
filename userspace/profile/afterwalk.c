// SPDX-License-Identifier: GPL-2.0-or-later
/* The half every after-walk runtime shares: attach, frame cache, splicing (afterwalk.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/frame_names.h"
#include "procs/procmaps.h"
#include "procs/proctrack.h"
#include "profile/afterwalk.h"
#include "profile/runtimes.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

#define MAX_FRAMES_CACHED 65536 /* frames remembered per process; then forgotten at once */
#define SETTINGS_MAX 256 /* bytes of a runtime's BPF settings */

/* A frame resolved: its two slots -> a frame_names id. */
struct frame {
	uint64_t a, b, owner;
	uint64_t id;
};

/*
 * A frame the process's memory no longer holds because the process exited
 * before its sample was read (a busy machine's reader lagging a pool that
 * recycles its workers): said as such rather than "bad", for every runtime.
 */
#define EXITED_MARKER "[unread: process exited]"

/* An attached process (struct runtime_proc's priv). */
struct proc {
	int pid;
	uint64_t start_ticks; /* tells it from a later process under its PID */
	bool exited; /* found gone: its frames unread since are the exited marker's */
	void *rt; /* the runtime's reader */
	struct code_part eval[AFTERWALK_PARTS];
	size_t nr_eval;
	struct code_part jit,
		entry; /* its JIT code, where runs begin (kind->jit_code); lo == hi: none */
	uint32_t jit_looks; /* times looked for it */
	struct hashmap frames; /* -> index in frames_v */
	struct frame *frames_v;
	size_t nr_frames, frames_cap;
};

struct afterwalk {
	const struct afterwalk_kind *kind;
	struct runtime_host host;
	int fd; /* the settings map */
	uint64_t freed_id, bad_id, full_id, exited_id; /* the markers' names */
	struct {
		uint64_t samples; /* samples spliced */
		uint64_t frames; /* frames named */
		uint64_t freed; /* of those, the "freed" marker: gone by the time it was read */
		uint64_t bad; /* of those, the "bad" marker: unreadable */
		uint64_t exited; /* of those, unreadable once the process had exited */
		uint64_t left; /* samples with frames no eval loop frame took */
		uint64_t short_; /* samples with an eval loop frame and no frame left */
		uint64_t no_proc; /* samples with frames of a process no longer attached */
		uint64_t read; /* frames read from the process (not cached) */
		uint64_t jit; /* processes whose JIT code was found (its frames stepped) */
		uint64_t pushing; /* samples in JIT code pushing a frame: the innermost left out */
	} stats;
};

bool afterwalk__maps_named(const struct procmaps *pm, const char *word)
{
	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO) || !(m->perms & PROCMAP_EXEC))
			continue;
		if (strstr(procmap__basename(m->path), word))
			return true;
	}
	return false;
}

void *afterwalk__new(const struct afterwalk_kind *kind, const struct runtime_host *host, int fd)
{
	struct afterwalk *aw = calloc(1, sizeof(*aw));

	if (!aw)
		return NULL;
	aw->kind = kind;
	aw->host = *host;
	aw->fd = fd;
	aw->freed_id = frame_names__intern(kind->runtime, kind->freed, "", 0, 0);
	aw->bad_id = frame_names__intern(kind->runtime, kind->bad, "", 0, 0);
	aw->full_id = frame_names__intern(kind->runtime, kind->full, "", 0, 0);
	aw->exited_id = frame_names__intern(kind->runtime, EXITED_MARKER, "", 0, 0);
	return aw;
}

void afterwalk__free(void *aw)
{
	free(aw);
}

void afterwalk__forget(void *aw, struct runtime_proc *rp)
{
	struct proc *p = rp->priv;

	(void)aw;
	p->nr_frames = 0;
	hashmap__clear(&p->frames);
}

void afterwalk__release(void *aw, struct runtime_proc *rp)
{
	const struct afterwalk *w = aw;
	struct proc *p = rp->priv;

	hashmap__free(&p->frames);
	free(p->frames_v);
	w->kind->free(p->rt);
	free(p);
	rp->priv = NULL;
}

void afterwalk__detach(void *aw, struct runtime_proc *rp)
{
	const struct afterwalk *w = aw;
	const struct proc *p = rp->priv;
	__u32 key = rp->pid;

	bpf_map_delete_elem(w->fd, &key);
	/* An exec keeps the process's start: its new image's mappings are no JIT code of this. */
	if (p && p->jit.hi && w->host.set_jit)
		w->host.set_jit(w->host.ctx, p->pid, p->start_ticks, NULL);
}

/*
 * How many times a process's JIT code is looked for: at its attach, then as
 * its mappings change (its code may be made writable when first looked at).
 */
#define JIT_LOOKS 8

/*
 * The runtime's JIT code, if it has some: its frames stepped by the table of
 * their shape (the loader's, from the host) and taken as eval frames.
 */
static void attach_jit(struct afterwalk *w, struct proc *p)
{
	struct jitcode_region r;
	struct code_part entry;
	int err;

	if (!p->nr_eval || !w->kind->jit_code || p->jit.hi || p->jit_looks >= JIT_LOOKS)
		return;
	p->jit_looks++;
	if (w->kind->jit_code(p->rt, &r, &entry))
		return;
	err = w->host.set_jit ? w->host.set_jit(w->host.ctx, p->pid, p->start_ticks, &r) : -ENOTSUP;
	if (err) {
		pr_info("%s: pid %d: its JIT code at %#llx not stepped: %s", w->kind->runtime,
			p->pid, (unsigned long long)r.lo, strerror(-err));
		return;
	}
	w->stats.jit++;
	p->jit = (struct code_part){ r.lo, r.hi };
	p->entry = entry;
	pr_debug("%s: pid %d: JIT code %#llx-%#llx, CFA at SP+%d", w->kind->runtime, p->pid,
		 (unsigned long long)r.lo, (unsigned long long)r.hi, r.cfa_off);
}

int afterwalk__attach(void *aw, struct runtime_proc *rp)
{
	struct afterwalk *w = aw;
	const struct afterwalk_kind *k = w->kind;
	struct proc *p = calloc(1, sizeof(*p));
	uint8_t cfg[SETTINGS_MAX];
	const struct code_part *parts;
	__u32 key = rp->pid;
	int err;

	if (!p)
		return -ENOMEM;
	if (k->settings_size > sizeof(cfg)) {
		free(p);
		return -EINVAL;
	}
	p->pid = rp->pid;
	p->start_ticks = rp->start_ticks;
	err = k->attach(rp->pid, &p->rt);
	if (!err)
		err = k->settings(p->rt, cfg);
	if (!err) {
		/* Every runtime's settings begin with the process's start time. */
		memcpy(cfg, &(uint64_t){ rp->start_ticks }, sizeof(uint64_t));
		if (bpf_map_update_elem(w->fd, &key, cfg, BPF_ANY))
			err = -errno;
	}
	if (err) {
		if (p->rt)
			k->free(p->rt);
		free(p);
		return err;
	}
	p->nr_eval = k->eval_parts(p->rt, &parts);
	if (p->nr_eval > AFTERWALK_PARTS)
		p->nr_eval = AFTERWALK_PARTS;
	memcpy(p->eval, parts, p->nr_eval * sizeof(*parts));
	if (!p->nr_eval)
		pr_info("%s: pid %d: %s", k->runtime, p->pid, k->no_loop);
	attach_jit(w, p);
	pr_debug("%s: pid %d: %s attached", k->runtime, p->pid, k->version(p->rt));
	rp->priv = p;
	return 0;
}

void afterwalk__remapped(void *aw, struct runtime_proc *rp)
{
	attach_jit(aw, rp->priv);
}

int afterwalk__inherit(void *aw, const struct runtime_proc *parent, struct runtime_proc *child)
{
	const struct afterwalk *w = aw;
	const struct proc *pp = parent->priv;
	struct proc *p;
	int err;

	if (!w->kind->inherit || !pp)
		return -ENOTSUP;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = child->pid;
	p->start_ticks = child->start_ticks;
	err = w->kind->inherit(pp->rt, child->pid, &p->rt);
	if (err) {
		free(p);
		return err;
	}
	/* The same image: the same loop. Its settings are the kernel's copy of the parent's. */
	p->nr_eval = pp->nr_eval;
	memcpy(p->eval, pp->eval, sizeof(p->eval));
	p->jit = pp->jit;
	p->entry = pp->entry;
	pr_debug("%s: pid %d: read through its parent %d", w->kind->runtime, p->pid, pp->pid);
	child->priv = p;
	return 0;
}

static bool frame_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct frame *f = &((const struct proc *)ctx)->frames_v[val], *k = key;

	return f->a == k->a && f->b == k->b && f->owner == k->owner;
}

/* Whether p's process has exited (or its PID is another's now): asked after a failed read. */
static bool proc_exited(struct proc *p)
{
	if (!p->exited && proctrack_exited(p->pid, p->start_ticks))
		p->exited = true;
	return p->exited;
}

/* The frame_names id of one frame the BPF walk sent (slots a, b; its owner's slot, or 0). */
static uint64_t frame_id(struct afterwalk *w, struct proc *p, uint64_t a, uint64_t b,
			 uint64_t owner)
{
	struct frame k = { .a = a & SFBPF_PY_ADDR_MASK, .b = b, .owner = owner };
	uint32_t h = (uint32_t)hash__mix64(k.a ^ hash__mix64(k.b ^ hash__mix64(k.owner)));
	int64_t i = hashmap__find(&p->frames, h, frame_eq, p, &k);
	struct afterwalk_frame f;
	int err;

	w->stats.frames++;
	if (i >= 0)
		return p->frames_v[i].id;
	w->stats.read++;
	memset(&f, 0, sizeof(f));
	err = w->kind->frame(p->rt, a & SFBPF_PY_ADDR_MASK, b, owner, &f);
	if (err) {
		pr_debug("%s: pid %d: frame %#llx/%#llx: %s", w->kind->runtime, p->pid,
			 (unsigned long long)a, (unsigned long long)b, strerror(-err));
		if (p->start_ticks && proc_exited(p)) {
			w->stats.exited++;
			return w->exited_id;
		}
		w->stats.freed += err == -ESTALE;
		w->stats.bad += err != -ESTALE;
		return err == -ESTALE ? w->freed_id : w->bad_id;
	}
	k.id = frame_names__intern(w->kind->runtime, f.name, f.file, f.firstline, f.line);
	if (!k.id) /* no room in frame_names: counted there */
		return w->full_id ? w->full_id : w->bad_id;
	if (p->nr_frames >= MAX_FRAMES_CACHED)
		afterwalk__forget(w, &(struct runtime_proc){ .priv = p });
	if (!VEC_RESERVE(p->frames_v, p->frames_cap, p->nr_frames + 1, 64) &&
	    !hashmap__add(&p->frames, h, p->nr_frames))
		p->frames_v[p->nr_frames++] = k;
	return k.id;
}

void afterwalk__mark_names(void *aw)
{
	const struct afterwalk *w = aw;

	frame_names__mark(frame_names__ip(w->freed_id));
	frame_names__mark(frame_names__ip(w->bad_id));
	frame_names__mark(frame_names__ip(w->full_id));
	frame_names__mark(frame_names__ip(w->exited_id));
}

/* Whether pc is in the eval loop, or in JIT code: a native frame that runs a run of frames. */
static int in_eval(const void *ctx, uint64_t pc)
{
	const struct proc *p = ctx;

	for (size_t i = 0; i < p->nr_eval; i++)
		if (pc >= p->eval[i].lo && pc < p->eval[i].hi)
			return RUNTIME_EVAL_LOOP;
	if (pc >= p->jit.lo && pc < p->jit.hi)
		return RUNTIME_EVAL_JIT;
	return pc >= p->entry.lo && pc < p->entry.hi ? RUNTIME_EVAL_ENTRY : 0;
}

/* Whether in's leaf is p's JIT code pushing a frame (kind->jit_pushing). */
static bool pushing(const struct afterwalk *w, const struct proc *p, const struct sfbpf_sample *in)
{
	uint64_t pc = in->ips[0];

	return w->kind->jit_pushing && p->jit.hi && in->nr_user && pc >= p->jit.lo &&
	       pc < p->jit.hi && w->kind->jit_pushing(p->rt, pc);
}

int afterwalk__splice(void *aw, struct runtime_proc *rp, const struct sfbpf_sample *in, size_t size,
		      struct sfbpf_sample *out)
{
	struct afterwalk *w = aw;
	const __u64 *slots = in->ips + in->nr_user + in->nr_kernel;
	uint32_t n = in->nr_py, j, m, first;
	uint64_t owner, outer;
	uint64_t ids[SFBPF_PY_MAX_FRAMES], offered[SFBPF_PY_MAX_FRAMES];
	bool entry[SFBPF_PY_MAX_FRAMES], left, was_short;
	struct proc *p;

	if (!n || !(in->flags & w->kind->flag))
		return 0;
	if (n > SFBPF_PY_MAX_FRAMES ||
	    SFBPF_SAMPLE_HDR_SIZE + ((size_t)in->nr_user + in->nr_kernel + 2 * n) * 8 > size)
		return -EINVAL;
	if (!rp) {
		w->stats.no_proc++;
		return 0;
	}
	p = rp->priv;
	first = 0;
	if (pushing(w, p, in)) {
		/* The innermost frame, and the owner its pair may carry. */
		first = 1 + (n > 1 && (slots[2] & SFBPF_RT_OWNER));
		w->stats.pushing++;
	}
	/* What the nearest frame outside each offers those without an owner (innermost first). */
	for (j = n, outer = 0; j-- > 0;) {
		offered[j] = outer;
		if (w->kind->outer_owner && !(slots[2 * j] & SFBPF_RT_OWNER) &&
		    w->kind->outer_owner(slots[2 * j] & SFBPF_PY_ADDR_MASK))
			outer = w->kind->outer_owner(slots[2 * j] & SFBPF_PY_ADDR_MASK);
	}
	/* A frame, and the owner the pair after it may carry (SFBPF_RT_OWNER): one id. */
	for (j = first, m = 0; j < n; j++) {
		owner = j + 1 < n && (slots[2 * j + 2] & SFBPF_RT_OWNER) ?
				slots[2 * j + 2] & SFBPF_PY_ADDR_MASK & ~SFBPF_RT_OWNER :
				0;
		if (slots[2 * j] & SFBPF_RT_OWNER) /* one without its frame: none sent before */
			continue;
		/* None sent: the one outside offers, unless the frame offers its own. */
		if (!owner && offered[j] &&
		    !w->kind->outer_owner(slots[2 * j] & SFBPF_PY_ADDR_MASK))
			owner = offered[j];
		ids[m] = frame_id(w, p, slots[2 * j], slots[2 * j + 1], owner);
		entry[m++] = slots[2 * j] & SFBPF_PY_ENTRY;
	}
	runtime__splice_after(in, out, ids, entry, m, in_eval, p, &left, &was_short);
	out->flags &= ~w->kind->flag;
	w->stats.left += left;
	w->stats.short_ += was_short;
	w->stats.samples++;
	return 1;
}

void afterwalk__counters(const void *aw, runtime_put_fn put, void *ctx)
{
	const struct afterwalk *w = aw;
	const char *rt = w->kind->runtime;
	uint64_t reads, hits;
	char name[40];
	const struct {
		const char *what;
		uint64_t v;
	} c[] = {
		{ "spliced", w->stats.samples },
		{ "named", w->stats.frames },
		{ "frames_read", w->stats.read },
		{ NULL, w->stats.freed },
		{ NULL, w->stats.bad },
		{ "left", w->stats.left },
		{ "short", w->stats.short_ },
		{ "no_proc", w->stats.no_proc },
		{ "exited", w->stats.exited },
		{ "jit_code", w->stats.jit },
		{ "jit_pushing", w->stats.pushing },
	};
	/* The JIT's counters only for a runtime with JIT code (the last two). */
	size_t nc = sizeof(c) / sizeof(c[0]) - (w->kind->jit_code ? 0 : 2);

	w->kind->object_stats(&reads, &hits);
	snprintf(name, sizeof(name), "%s_object_reads", rt);
	put(ctx, name, reads, false);
	snprintf(name, sizeof(name), "%s_object_hits", rt);
	put(ctx, name, hits, false);
	for (size_t i = 0; i < nc; i++) {
		if (c[i].what)
			snprintf(name, sizeof(name), "%s_%s", rt, c[i].what);
		else
			snprintf(name, sizeof(name), "%s",
				 i == 3 ? w->kind->freed_counter : w->kind->bad_counter);
		put(ctx, name, c[i].v, false);
	}
}
