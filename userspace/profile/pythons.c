// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's Python processes: attach, BPF settings, splicing (pythons.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python.h"
#include "interp/python_names.h"
#include "procs/procmaps.h"
#include "profile/pythons.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

/*
 * An interpreter not initialised yet (-EAGAIN: seen at its exec, as a rule)
 * is tried again at its own samples, which say it runs (one stopped or
 * asleep has nothing to splice), and at the tracker's refreshes, 4 ms after
 * the first try, then twice as long each time up to a second: a process
 * whose samples come as it starts up is attached within milliseconds of its
 * first thread, one that never starts an interpreter costs an attach a
 * second while it runs. A refusal (-EPROTO) or unreadable memory (-EFAULT)
 * is tried MAX_ATTEMPTS times, then given up (counted).
 */
#define RETRY_MIN_NS (4 * 1000000ULL)
#define RETRY_MAX_NS (1000 * 1000000ULL)
#define MAX_ATTEMPTS 8
#define MAX_CODES 65536 /* code objects remembered per process; then forgotten at once */

enum state {
	ATTACHED,
	RETRY, /* not initialised, refused or unreadable so far: tried again (RETRY_MIN_NS) */
	NATIVE, /* no CPython, an unsupported one, or refused for good */
	/*
	 * Exited (or exec'd): no longer walked, but its samples still in the
	 * ring are spliced with its codes until pythons__drained() says a
	 * whole round of samples was read since.
	 */
	RETIRED,
};

/* A code object as resolved once: its names, or why it has none (err). */
struct code {
	uint64_t code;
	uint32_t stamp;
	int err; /* 0, -ESTALE (freed), or a read error */
	bool described; /* from the BPF walk's description, not read from the process */
	struct python_code c;
};

/* A frame resolved: (code, stamp, instruction) -> a python_names id. */
struct frame {
	uint64_t code;
	uint32_t stamp, lasti;
	uint64_t id;
};

struct pyproc {
	int pid;
	uint64_t start_ticks;
	enum state state;
	int err; /* the last attach's */
	unsigned int attempts;
	uint64_t next_try_ns;
	struct python *py;
	uint64_t retired_at; /* RETIRED: ps->drains then */
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

struct pythons {
	int fd;
	struct hashmap procs; /* pid -> struct pyproc * */
	struct pythons_stats stats;
	uint64_t freed_id, bad_id, full_id; /* the markers' names */
	uint32_t gen; /* the last attach generation given (bpf/abi.h) */
	uint64_t drains; /* pythons__drained() calls */
	size_t retired; /* processes RETIRED */
	size_t retrying; /* processes in RETRY: their samples look them up */
};

static bool proc_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return ((const struct pyproc *)HASHMAP_TO_PTR(val))->pid == *(const int *)key;
}

static uint32_t pid_hash(int pid)
{
	return (uint32_t)hash__mix64((uint64_t)pid);
}

static struct pyproc *find(struct pythons *ps, int pid)
{
	int64_t v = hashmap__find(&ps->procs, pid_hash(pid), proc_eq, NULL, &pid);

	return v < 0 ? NULL : HASHMAP_TO_PTR(v);
}

static void forget_codes(struct pyproc *p)
{
	for (size_t i = 0; i < p->nr_codes; i++)
		python__code_free(&p->codes_v[i].c);
	p->nr_codes = p->nr_frames = 0;
	hashmap__clear(&p->codes);
	hashmap__clear(&p->frames);
}

static void drop(struct pythons *ps, struct pyproc *p)
{
	__u32 key = p->pid;

	if (p->state == ATTACHED)
		bpf_map_delete_elem(ps->fd, &key);
	ps->retired -= p->state == RETIRED;
	ps->retrying -= p->state == RETRY;
	hashmap__del(&ps->procs, pid_hash(p->pid), proc_eq, NULL, &p->pid);
	forget_codes(p);
	hashmap__free(&p->codes);
	hashmap__free(&p->frames);
	free(p->codes_v);
	free(p->frames_v);
	python__free(p->py);
	free(p);
}

/*
 * Whether pid may run CPython: an object whose name says python (the
 * executable python3.N, libpython3.N.so), or an executable that embeds it
 * linked statically (python__embeds(): once per file). The attach then
 * opens it; every other process costs this look at the mappings just read.
 */
static bool maybe_python(int pid, const struct procmaps *pm)
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

static void attach(struct pythons *ps, struct pyproc *p)
{
	struct sfbpf_py_proc cfg;
	/* 4 ms, doubling at each try, a second at most (RETRY_MIN_NS). */
	uint64_t wait = RETRY_MIN_NS << (p->attempts < 8 ? p->attempts : 8);
	__u32 key = p->pid;
	int err;

	p->attempts++;
	p->next_try_ns = clock__mono_ns() + (wait < RETRY_MAX_NS ? wait : RETRY_MAX_NS);
	ps->retrying -= p->state == RETRY;
	err = python__attach(p->pid, &p->py);
	if (!err) {
		err = python__bpf_settings(p->py, &cfg);
		cfg.start_ticks = p->start_ticks;
		cfg.gen = ++ps->gen ? ps->gen : ++ps->gen;
		p->cfg = cfg;
		if (!err && bpf_map_update_elem(ps->fd, &key, &cfg, BPF_ANY))
			err = -errno;
		if (!err) {
			const struct code_part *parts;

			p->nr_eval = python__eval_parts(p->py, &parts);
			memcpy(p->eval, parts, p->nr_eval * sizeof(*parts));
			if (!p->nr_eval)
				pr_info("python: pid %d: no _PyEval_EvalFrameDefault: Python "
					"frames go above the native ones",
					p->pid);
		}
		if (err) {
			python__free(p->py);
			p->py = NULL;
		}
	}
	p->err = err;
	if (!err) {
		p->state = ATTACHED;
		ps->stats.attached++;
		pr_debug("python: pid %d: CPython %s attached", p->pid, python__version(p->py));
		return;
	}
	/* An interpreter starting up has no thread yet: again while it runs. */
	if (err == -EAGAIN || ((err == -EPROTO || err == -EFAULT) && p->attempts < MAX_ATTEMPTS)) {
		p->state = RETRY;
		ps->retrying++;
		pr_debug("python: pid %d: %s: again in %llu ms", p->pid,
			 err == -EAGAIN ? "no thread yet" : strerror(-err),
			 (unsigned long long)((p->next_try_ns - clock__mono_ns()) / 1000000));
		return;
	}
	p->state = NATIVE;
	if (err == -EPROTO)
		ps->stats.refused++;
	else if (err == -ENOTSUP || err == -ERANGE)
		ps->stats.unsupported++;
	if (err != -ENOENT)
		pr_info("python: pid %d: profiled as native code: %s", p->pid, strerror(-err));
}

static void on_updated(void *ctx, int pid, uint64_t start_ticks, const struct procmaps *pm)
{
	struct pythons *ps = ctx;
	struct pyproc *p = find(ps, pid);

	/* Another process under the PID, or the same one's new image (exec). */
	if (p && (p->start_ticks != start_ticks || p->state == RETIRED)) {
		drop(ps, p);
		p = NULL;
	}
	if (p && (p->state != RETRY || clock__mono_ns() < p->next_try_ns))
		return;
	if (!p) {
		if (!maybe_python(pid, pm))
			return;
		p = calloc(1, sizeof(*p));
		if (!p || hashmap__add(&ps->procs, pid_hash(pid), HASHMAP_PTR(p))) {
			free(p);
			return;
		}
		p->pid = pid;
		p->start_ticks = start_ticks;
	}
	attach(ps, p);
}

void pythons__sampled(struct pythons *ps, int pid)
{
	struct pyproc *p;

	if (!ps->retrying)
		return;
	p = find(ps, pid);
	if (p && p->state == RETRY && clock__mono_ns() >= p->next_try_ns)
		attach(ps, p);
}

/*
 * The exit (or exec) is read before the samples taken before it, which may
 * wait in the sample ring while the reader loads a new process's tables:
 * the process stops being walked now, and its codes stay for those samples.
 */
static void on_removed(void *ctx, int pid)
{
	struct pythons *ps = ctx;
	struct pyproc *p = find(ps, pid);
	__u32 key = pid;

	if (!p)
		return;
	if (p->state != ATTACHED) {
		drop(ps, p);
		return;
	}
	bpf_map_delete_elem(ps->fd, &key);
	p->state = RETIRED;
	p->retired_at = ps->drains;
	ps->retired++;
}

void pythons__drained(struct pythons *ps)
{
	size_t iter = 0;
	uint64_t v;

	ps->drains++;
	while (ps->retired && hashmap__next(&ps->procs, &iter, &v)) {
		struct pyproc *p = HASHMAP_TO_PTR(v);

		/* Retired in an earlier round than the last whole one: its samples are read. */
		if (p->state == RETIRED && p->retired_at + 2 <= ps->drains) {
			drop(ps, p);
			iter = 0; /* drop() shifted the map */
		}
	}
}

struct proctrack_listener pythons__listener(struct pythons *ps)
{
	return (struct proctrack_listener){ .updated = on_updated,
					    .removed = on_removed,
					    .ctx = ps };
}

struct pythons *pythons__new(int py_procs_fd)
{
	struct pythons *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->fd = py_procs_fd;
	ps->freed_id = python_names__intern("[freed code]", "", 0, 0);
	ps->bad_id = python_names__intern("[bad code]", "", 0, 0);
	ps->full_id = python_names__intern("[python names full]", "", 0, 0);
	return ps;
}

void pythons__free(struct pythons *ps)
{
	size_t iter = 0;
	uint64_t v;

	if (!ps)
		return;
	while (hashmap__next(&ps->procs, &iter, &v)) {
		drop(ps, HASHMAP_TO_PTR(v));
		iter = 0; /* drop() shifted the map */
	}
	hashmap__free(&ps->procs);
	free(ps);
}

void pythons__stats(const struct pythons *ps, struct pythons_stats *out)
{
	*out = ps->stats;
	python__object_stats(&out->object_reads, &out->object_hits);
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

void pythons__describe(struct pythons *ps, const struct sfbpf_py_code *rec, size_t size)
{
	struct pyproc *p = find(ps, (int)rec->pid);
	struct code *c;
	bool fresh;

	/* Another attach's (an exited process, a renewed one): its samples are not spliced. */
	if (!p || (p->state != ATTACHED && p->state != RETIRED) || rec->gen != p->cfg.gen) {
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

/* The python_names id of one frame the BPF walk sent (slots a, b). */
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
		k.id = python_names__intern(c->c.name, c->c.file, (uint32_t)c->c.firstlineno,
					    code_line(ps, p, c, k.lasti));
	if (!k.id) /* no room in python_names: counted there */
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

void pythons__mark_names(struct pythons *ps)
{
	size_t iter = 0;
	uint64_t v;

	python_names__mark(python_names__ip(ps->freed_id));
	python_names__mark(python_names__ip(ps->bad_id));
	python_names__mark(python_names__ip(ps->full_id));
	/* The frames' ids are a cache: named again from the codes when met again. */
	while (hashmap__next(&ps->procs, &iter, &v)) {
		struct pyproc *p = HASHMAP_TO_PTR(v);

		p->nr_frames = 0;
		hashmap__clear(&p->frames);
	}
}

/* Whether pc is in the eval loop's code: a native frame that runs a run of Python frames. */
static bool in_eval(const struct pyproc *p, uint64_t pc)
{
	for (size_t i = 0; i < p->nr_eval; i++)
		if (pc >= p->eval[i].lo && pc < p->eval[i].hi)
			return true;
	return false;
}

int pythons__splice(struct pythons *ps, const struct sfbpf_sample *in, size_t size,
		    struct sfbpf_sample *out)
{
	const __u64 *py = in->ips + in->nr_user + in->nr_kernel;
	uint32_t npy = in->nr_py, nu = in->nr_user, k = 0, n = 0, j;
	uint64_t ids[SFBPF_PY_MAX_FRAMES];
	bool entry[SFBPF_PY_MAX_FRAMES], cut = false, was_short = false;
	struct pyproc *p;

	if (!npy)
		return 0;
	if (npy > SFBPF_PY_MAX_FRAMES ||
	    SFBPF_SAMPLE_HDR_SIZE + ((size_t)nu + in->nr_kernel + 2 * npy) * 8 > size)
		return -EINVAL;
	p = find(ps, in->pid);
	if (!p || (p->state != ATTACHED && p->state != RETIRED)) {
		ps->stats.no_proc++;
		return 0;
	}
	for (j = 0; j < npy; j++) {
		ids[j] = frame_id(ps, p, py[2 * j], py[2 * j + 1]);
		entry[j] = py[2 * j] & SFBPF_PY_ENTRY;
	}
	memcpy(out, in, SFBPF_SAMPLE_HDR_SIZE);
	/* Leaf first, as the sample: each eval frame takes its run of Python frames. */
	for (j = 0; j < nu && !cut; j++) {
		uint64_t pc = in->ips[j] - (j > 0);

		if (!in_eval(p, pc)) {
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = in->ips[j];
			continue;
		}
		if (k >= npy) {
			was_short = true;
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = in->ips[j];
			continue;
		}
		do {
			cut = n >= SFBPF_MAX_FRAMES;
			if (!cut)
				out->ips[n++] = python_names__ip(ids[k]);
		} while (!cut && !entry[k++] && k < npy);
	}
	/* Frames no eval frame took (a native walk cut short): outermost, after the rest. */
	ps->stats.left += k < npy;
	for (; k < npy && !cut; k++) {
		cut = n >= SFBPF_MAX_FRAMES;
		if (!cut)
			out->ips[n++] = python_names__ip(ids[k]);
	}
	ps->stats.short_ += was_short;
	ps->stats.samples++;
	if (cut)
		out->stop = SFBPF_STOP_DEPTH;
	memcpy(&out->ips[n], in->ips + nu, in->nr_kernel * sizeof(uint64_t));
	out->nr_user = n;
	out->nr_py = 0;
	return 1;
}
