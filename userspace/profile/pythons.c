// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's Python processes: attach, BPF settings, splicing (pythons.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python.h"
#include "interp/frame_names.h"
#include "procs/procmaps.h"
#include "profile/profile.h"
#include "profile/pythons.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

/*
 * An interpreter is read as it starts up: what it published may look torn
 * for a moment, so a refusal is final only at the eighth try (runtimes.c
 * spaces them).
 */
#define REFUSAL_TRIES 8
#define MAX_CODES 65536 /* code objects remembered per process; then forgotten at once */

/* A code object as resolved once: its names, or why it has none (err). */
struct code {
	uint64_t code;
	uint32_t stamp;
	int err; /* 0, -ESTALE (freed), or a read error */
	bool described; /* from the BPF walk's description, not read from the process */
	struct python_code c;
};

/* A frame resolved: (code, stamp, instruction) -> a frame_names id. */
struct frame {
	uint64_t code;
	uint32_t stamp, lasti;
	uint64_t id;
};

/* An attached process (struct runtime_proc's priv). */
struct pyproc {
	int pid;
	struct python *py;
	struct sfbpf_py_proc cfg; /* as pushed to py_procs: its gen names the codes held */
	struct code_part eval[PY_EVAL_PARTS]; /* the eval loop's code (python__eval_parts()) */
	size_t nr_eval;
	struct hashmap codes; /* -> index in codes_v */
	struct code *codes_v;
	size_t nr_codes, codes_cap;
	struct hashmap frames; /* -> index in frames_v */
	struct frame *frames_v;
	size_t nr_frames, frames_cap;
};

struct pythons_stats {
	uint64_t samples; /* samples spliced */
	uint64_t frames; /* Python frames named */
	uint64_t freed_code; /* of those, "[freed code]" */
	uint64_t bad_code; /* of those, "[bad code]": unreadable */
	uint64_t left; /* samples with Python frames no native eval frame took (py-left) */
	uint64_t short_; /* samples with a native eval frame and no Python frame left (py-short) */
	uint64_t no_proc; /* samples with Python frames of a process no longer attached */
	uint64_t codes_described; /* code objects named from the BPF walk's description */
	uint64_t codes_read; /* code objects (or whole line tables) read from the process */
	uint64_t described_stale; /* descriptions for another attach of the process: ignored */
	uint64_t line_unknown; /* past a description's line table, and no longer readable */
	uint64_t renewed; /* a process's codes forgotten at MAX_CODES (a new generation) */
};

struct pythons {
	int fd;
	struct pythons_stats stats;
	uint64_t freed_id, bad_id, full_id; /* the markers' names */
	uint32_t gen; /* the last attach generation given (bpf/abi.h) */
};

static void forget_codes(struct pyproc *p)
{
	for (size_t i = 0; i < p->nr_codes; i++)
		python__code_free(&p->codes_v[i].c);
	p->nr_codes = p->nr_frames = 0;
	hashmap__clear(&p->codes);
	hashmap__clear(&p->frames);
}

static void release(void *rt, struct runtime_proc *rp)
{
	struct pyproc *p = rp->priv;

	(void)rt;
	forget_codes(p);
	hashmap__free(&p->codes);
	hashmap__free(&p->frames);
	free(p->codes_v);
	free(p->frames_v);
	python__free(p->py);
	free(p);
	rp->priv = NULL;
}

static void detach(void *rt, struct runtime_proc *rp)
{
	struct pythons *ps = rt;
	__u32 key = rp->pid;

	bpf_map_delete_elem(ps->fd, &key);
}

/*
 * Whether pid may run CPython: an object whose name says python (the
 * executable python3.N, libpython3.N.so), or an executable that embeds it
 * linked statically (python__embeds(): once per file). The attach then
 * opens it; every other process costs this look at the mappings just read.
 */
static bool detect(int pid, const struct procmaps *pm)
{
	const struct procmap *exe = procmaps__exe(pm);

	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if (!(m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)) &&
		    strstr(procmap__basename(m->path), "python"))
			return true;
	}
	return exe && python__embeds(pid, exe);
}

/* -EAGAIN while the interpreter has no thread yet: it is starting up. */
static int attach(void *rt, struct runtime_proc *rp)
{
	struct pythons *ps = rt;
	struct pyproc *p = calloc(1, sizeof(*p));
	const struct code_part *parts;
	__u32 key = rp->pid;
	int err;

	if (!p)
		return -ENOMEM;
	p->pid = rp->pid;
	err = python__attach(rp->pid, &p->py);
	if (!err)
		err = python__bpf_settings(p->py, &p->cfg);
	if (!err) {
		p->cfg.start_ticks = rp->start_ticks;
		p->cfg.gen = ++ps->gen ? ps->gen : ++ps->gen;
		if (bpf_map_update_elem(ps->fd, &key, &p->cfg, BPF_ANY))
			err = -errno;
	}
	if (err) {
		python__free(p->py);
		free(p);
		return err;
	}
	p->nr_eval = python__eval_parts(p->py, &parts);
	memcpy(p->eval, parts, p->nr_eval * sizeof(*parts));
	if (!p->nr_eval)
		pr_info("python: pid %d: no _PyEval_EvalFrameDefault: Python frames go above the "
			"native ones",
			p->pid);
	pr_debug("python: pid %d: CPython %s attached", p->pid, python__version(p->py));
	rp->priv = p;
	return 0;
}

static void *pythons_new(const struct runtime_host *host)
{
	struct pythons *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->fd = profile__py_procs_fd(host->prof);
	ps->freed_id = frame_names__intern("python", "[freed code]", "", 0, 0);
	ps->bad_id = frame_names__intern("python", "[bad code]", "", 0, 0);
	ps->full_id = frame_names__intern("python", "[python names full]", "", 0, 0);
	return ps;
}

static void pythons_free(void *rt)
{
	free(rt);
}

struct code_key {
	uint64_t code;
	uint32_t stamp;
};

static bool code_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct code *c = &((const struct pyproc *)ctx)->codes_v[val];
	const struct code_key *k = key;

	return c->code == k->code && c->stamp == k->stamp;
}

static bool frame_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct frame *f = &((const struct pyproc *)ctx)->frames_v[val], *k = key;

	return f->code == k->code && f->stamp == k->stamp && f->lasti == k->lasti;
}

/*
 * p's codes are forgotten at once: the BPF walk is told with a new
 * generation, so that it describes again every code object it meets.
 */
static void renew(struct pythons *ps, struct pyproc *p)
{
	__u32 key = p->pid;

	forget_codes(p);
	p->cfg.gen = ++ps->gen ? ps->gen : ++ps->gen;
	bpf_map_update_elem(ps->fd, &key, &p->cfg, BPF_ANY);
	ps->stats.renewed++;
}

/* The entry of code object (code, stamp) of p; *fresh: added now, to fill. NULL: no memory. */
static struct code *code_slot(struct pythons *ps, struct pyproc *p, uint64_t code, uint32_t stamp,
			      bool *fresh)
{
	struct code_key k = { code, stamp };
	uint32_t h = (uint32_t)hash__mix64(code ^ ((uint64_t)stamp << 32));
	int64_t i = hashmap__find(&p->codes, h, code_eq, p, &k);
	struct code *c;

	*fresh = i < 0;
	if (i >= 0)
		return &p->codes_v[i];
	if (p->nr_codes >= MAX_CODES)
		renew(ps, p);
	if (VEC_RESERVE(p->codes_v, p->codes_cap, p->nr_codes + 1, 64) ||
	    hashmap__add(&p->codes, h, p->nr_codes))
		return NULL;
	c = &p->codes_v[p->nr_codes++];
	memset(c, 0, sizeof(*c));
	c->code = code;
	c->stamp = stamp;
	return c;
}

/* The code object (code, stamp) of p, read now if it is new. NULL: no memory. */
static struct code *code_get(struct pythons *ps, struct pyproc *p, uint64_t code, uint32_t stamp)
{
	bool fresh;
	struct code *c = code_slot(ps, p, code, stamp, &fresh);

	if (c && fresh) {
		c->err = python__code(p->py, code, stamp, &c->c);
		ps->stats.codes_read++;
	}
	return c;
}

/*
 * A code object the BPF walk described (an struct sfbpf_py_code of size
 * bytes, read from the ring before the samples holding it): its names are
 * taken from it, not from the process, where it may be gone when the
 * sample is read.
 */
static void describe(void *rt, struct runtime_proc *rp, const void *r, size_t size)
{
	struct pythons *ps = rt;
	struct pyproc *p = rp ? rp->priv : NULL;
	const struct sfbpf_py_code *rec = r;
	struct code *c;
	bool fresh;

	/* Another attach's (an exited process, a renewed one): its samples are not spliced. */
	if (!p || rec->gen != p->cfg.gen) {
		ps->stats.described_stale++;
		return;
	}
	c = code_slot(ps, p, rec->code, rec->stamp, &fresh);
	if (!c || (!fresh && !c->err))
		return; /* no memory, or named already (described on two CPUs at once) */
	python__code_free(&c->c);
	c->err = python__code_captured(p->py, rec, size, &c->c);
	c->described = true;
	if (c->err == -ENODATA) {
		c->err = python__code(p->py, rec->code, rec->stamp, &c->c);
		ps->stats.codes_read++;
	}
	ps->stats.codes_described++;
}

/* The line of instruction lasti of c: past a description's part of the table, read it all. */
static uint32_t code_line(struct pythons *ps, struct pyproc *p, struct code *c, uint32_t lasti)
{
	struct python_code full;
	int line = python__code_lineno(p->py, &c->c, lasti);

	if (line != -ERANGE)
		return line > 0 ? (uint32_t)line : 0;
	ps->stats.codes_read++;
	if (python__code(p->py, c->code, c->stamp, &full)) {
		ps->stats.line_unknown++;
		return 0;
	}
	python__code_free(&c->c);
	c->c = full;
	line = python__code_lineno(p->py, &c->c, lasti);
	return line > 0 ? (uint32_t)line : 0;
}

/* The frame_names id of one frame the BPF walk sent (slots a, b). */
static uint64_t frame_id(struct pythons *ps, struct pyproc *p, uint64_t a, uint64_t b)
{
	struct frame k = { .code = a & SFBPF_PY_ADDR_MASK, .stamp = b >> 32, .lasti = (uint32_t)b };
	uint32_t h =
		(uint32_t)hash__mix64(k.code ^ ((uint64_t)k.stamp << 32) ^ hash__mix64(k.lasti));
	int64_t i = hashmap__find(&p->frames, h, frame_eq, p, &k);
	struct code *c;

	ps->stats.frames++;
	if (i >= 0)
		k.id = p->frames_v[i].id;
	else if (!(c = code_get(ps, p, k.code, k.stamp)))
		return ps->bad_id;
	else if (c->err)
		k.id = c->err == -ESTALE ? ps->freed_id : ps->bad_id;
	else
		k.id = frame_names__intern("python", c->c.name, c->c.file,
					   (uint32_t)c->c.firstlineno,
					   code_line(ps, p, c, k.lasti));
	if (!k.id) /* no room in frame_names: counted there */
		return ps->full_id ? ps->full_id : ps->bad_id;
	/* Not the markers: a description arriving later (another CPU's) still names it. */
	if (i < 0 && k.id != ps->freed_id && k.id != ps->bad_id &&
	    !VEC_RESERVE(p->frames_v, p->frames_cap, p->nr_frames + 1, 64) &&
	    !hashmap__add(&p->frames, h, p->nr_frames))
		p->frames_v[p->nr_frames++] = k;
	ps->stats.freed_code += k.id == ps->freed_id;
	ps->stats.bad_code += k.id == ps->bad_id;
	return k.id;
}

static void mark_names(void *rt)
{
	struct pythons *ps = rt;

	frame_names__mark(frame_names__ip(ps->freed_id));
	frame_names__mark(frame_names__ip(ps->bad_id));
	frame_names__mark(frame_names__ip(ps->full_id));
}

/* The frames' ids are a cache: named again from the codes when met again. */
static void forget(void *rt, struct runtime_proc *rp)
{
	struct pyproc *p = rp->priv;

	(void)rt;
	p->nr_frames = 0;
	hashmap__clear(&p->frames);
}

/* Whether pc is in the eval loop's code: a native frame that runs a run of Python frames. */
static int in_eval(const void *ctx, uint64_t pc)
{
	const struct pyproc *p = ctx;

	for (size_t i = 0; i < p->nr_eval; i++)
		if (pc >= p->eval[i].lo && pc < p->eval[i].hi)
			return RUNTIME_EVAL_LOOP;
	return 0;
}

/*
 * Every native frame of the eval loop (_PyEval_EvalFrameDefault) is
 * replaced by the Python frames it runs (innermost first, up to and
 * including the next frame marked as its call's outermost).
 */
static int splice(void *rt, struct runtime_proc *rp, const struct sfbpf_sample *in, size_t size,
		  struct sfbpf_sample *out)
{
	struct pythons *ps = rt;
	const __u64 *py = in->ips + in->nr_user + in->nr_kernel;
	uint32_t npy = in->nr_py, j;
	uint64_t ids[SFBPF_PY_MAX_FRAMES];
	bool entry[SFBPF_PY_MAX_FRAMES], left, was_short;
	struct pyproc *p;

	/* None, or V8's words (a node's), or PHP's frames: not Python's. */
	if (!npy || (in->flags & (SFBPF_SAMPLE_V8_WORDS | SFBPF_SAMPLE_PHP | SFBPF_SAMPLE_RUBY |
				  SFBPF_SAMPLE_PERL)))
		return 0;
	if (npy > SFBPF_PY_MAX_FRAMES ||
	    SFBPF_SAMPLE_HDR_SIZE + ((size_t)in->nr_user + in->nr_kernel + 2 * npy) * 8 > size)
		return -EINVAL;
	if (!rp) {
		ps->stats.no_proc++;
		return 0;
	}
	p = rp->priv;
	for (j = 0; j < npy; j++) {
		ids[j] = frame_id(ps, p, py[2 * j], py[2 * j + 1]);
		entry[j] = py[2 * j] & SFBPF_PY_ENTRY;
	}
	runtime__splice_after(in, out, ids, entry, npy, in_eval, p, &left, &was_short);
	ps->stats.left += left;
	ps->stats.short_ += was_short;
	ps->stats.samples++;
	return 1;
}

static void counters(const void *rt, runtime_put_fn put, void *ctx)
{
	const struct pythons_stats *st = &((const struct pythons *)rt)->stats;
	uint64_t reads, hits;

	python__object_stats(&reads, &hits);
	put(ctx, "py_object_reads", reads, false);
	put(ctx, "py_object_hits", hits, false);
	put(ctx, "py_spliced", st->samples, false);
	put(ctx, "py_named", st->frames, false);
	put(ctx, "py_freed_code", st->freed_code, false);
	put(ctx, "py_bad_code", st->bad_code, false);
	put(ctx, "py_left", st->left, false);
	put(ctx, "py_short", st->short_, false);
	put(ctx, "py_no_proc", st->no_proc, false);
	put(ctx, "py_codes_described", st->codes_described, false);
	put(ctx, "py_codes_read", st->codes_read, false);
	put(ctx, "py_described_stale", st->described_stale, false);
	put(ctx, "py_line_unknown", st->line_unknown, false);
	put(ctx, "py_codes_renewed", st->renewed, false);
}

const struct runtime_ops python_runtime = {
	.name = "python",
	.prefix = "py",
	.starting = "no thread yet",
	.refusal_tries = REFUSAL_TRIES,
	.new = pythons_new,
	.free = pythons_free,
	.detect = detect,
	.attach = attach,
	.detach = detach,
	.release = release,
	.splice = splice,
	.mark_names = mark_names,
	.forget = forget,
	.describe = describe,
	.counters = counters,
};
