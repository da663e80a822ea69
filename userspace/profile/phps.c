// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's PHP processes: attach, BPF settings, splicing (phps.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "interp/frame_names.h"
#include "interp/php.h"
#include "procs/procmaps.h"
#include "profile/phps.h"
#include "profile/profile.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

/* The build ID and the symbol table are the binary's static data: a refusal is final. */
#define REFUSAL_TRIES 1
#define MAX_FRAMES_CACHED 65536 /* frames remembered per process; then forgotten at once */

/* A frame resolved: (function, opline, stamp) -> a frame_names id. */
struct frame {
	uint64_t func, opline; /* opline with the stamp, as slot 1 holds them */
	uint64_t id;
};

/* An attached process (struct runtime_proc's priv). */
struct phpproc {
	int pid;
	struct php *php;
	struct code_part eval[PHP_EVAL_PARTS];
	size_t nr_eval;
	struct hashmap frames; /* -> index in frames_v */
	struct frame *frames_v;
	size_t nr_frames, frames_cap;
};

struct phps_stats {
	uint64_t samples; /* samples spliced */
	uint64_t frames; /* PHP frames named */
	uint64_t freed; /* of those, "[freed function]": no user function there now */
	uint64_t bad; /* of those, "[bad function]": unreadable */
	uint64_t left; /* samples with PHP frames no execute_ex frame took */
	uint64_t short_; /* samples with an execute_ex frame and no PHP frame left */
	uint64_t no_proc; /* samples with PHP frames of a process no longer attached */
	uint64_t read; /* frames read from the process (not cached) */
};

struct phps {
	int fd;
	struct phps_stats stats;
	uint64_t freed_id, bad_id, full_id; /* the markers' names */
};

static void forget(void *rt, struct runtime_proc *rp)
{
	struct phpproc *p = rp->priv;

	(void)rt;
	p->nr_frames = 0;
	hashmap__clear(&p->frames);
}

static void release(void *rt, struct runtime_proc *rp)
{
	struct phpproc *p = rp->priv;

	(void)rt;
	hashmap__free(&p->frames);
	free(p->frames_v);
	php__free(p->php);
	free(p);
	rp->priv = NULL;
}

static void detach(void *rt, struct runtime_proc *rp)
{
	struct phps *ps = rt;
	__u32 key = rp->pid;

	bpf_map_delete_elem(ps->fd, &key);
}

/*
 * Whether pid may run PHP: an executable object whose name says php (php8.2,
 * php-fpm8.2, php-cgi8.2, libphp8.2.so). The attach reads its symbols.
 */
static bool detect(int pid, const struct procmaps *pm)
{
	(void)pid;
	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *m = procmaps__get(pm, i);
		const char *b;

		if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO) || !(m->perms & PROCMAP_EXEC))
			continue;
		b = procmap__basename(m->path);
		if (!strncmp(b, "php", 3) || !strncmp(b, "libphp", 6))
			return true;
	}
	return false;
}

static int attach(void *rt, struct runtime_proc *rp)
{
	struct phps *ps = rt;
	struct phpproc *p = calloc(1, sizeof(*p));
	struct sfbpf_php_proc cfg;
	const struct code_part *parts;
	__u32 key = rp->pid;
	int err;

	if (!p)
		return -ENOMEM;
	p->pid = rp->pid;
	err = php__attach(rp->pid, &p->php);
	if (!err)
		err = php__bpf_settings(p->php, &cfg);
	if (!err) {
		cfg.start_ticks = rp->start_ticks;
		if (bpf_map_update_elem(ps->fd, &key, &cfg, BPF_ANY))
			err = -errno;
	}
	if (err) {
		php__free(p->php);
		free(p);
		return err;
	}
	p->nr_eval = php__eval_parts(p->php, &parts);
	memcpy(p->eval, parts, p->nr_eval * sizeof(*parts));
	if (!p->nr_eval)
		pr_info("php: pid %d: no execute_ex: PHP frames go above the native ones", p->pid);
	pr_debug("php: pid %d: PHP %s attached", p->pid, php__version(p->php));
	rp->priv = p;
	return 0;
}

static void *phps_new(const struct runtime_host *host)
{
	struct phps *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->fd = profile__php_procs_fd(host->prof);
	ps->freed_id = frame_names__intern("php", "[freed function]", "", 0, 0);
	ps->bad_id = frame_names__intern("php", "[bad function]", "", 0, 0);
	ps->full_id = frame_names__intern("php", "[php names full]", "", 0, 0);
	return ps;
}

static void phps_free(void *rt)
{
	free(rt);
}

static bool frame_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct frame *f = &((const struct phpproc *)ctx)->frames_v[val], *k = key;

	return f->func == k->func && f->opline == k->opline;
}

/* The frame_names id of one frame the BPF walk sent (slots a, b). */
static uint64_t frame_id(struct phps *ps, struct phpproc *p, uint64_t a, uint64_t b)
{
	struct frame k = { .func = a & SFBPF_PY_ADDR_MASK, .opline = b };
	uint32_t h = (uint32_t)hash__mix64(k.func ^ hash__mix64(k.opline));
	int64_t i = hashmap__find(&p->frames, h, frame_eq, p, &k);
	struct php_frame f;
	int err;

	ps->stats.frames++;
	if (i >= 0)
		return p->frames_v[i].id;
	ps->stats.read++;
	err = php__frame(p->php, k.func, k.opline & SFBPF_PHP_OPLINE_MASK,
			 (uint16_t)(k.opline >> 48), &f);
	if (err) {
		ps->stats.freed += err == -ESTALE;
		ps->stats.bad += err != -ESTALE;
		return err == -ESTALE ? ps->freed_id : ps->bad_id;
	}
	k.id = frame_names__intern("php", f.name, f.file, f.firstline, f.line);
	if (!k.id) /* no room in frame_names: counted there */
		return ps->full_id ? ps->full_id : ps->bad_id;
	if (p->nr_frames >= MAX_FRAMES_CACHED)
		forget(ps, &(struct runtime_proc){ .priv = p });
	if (!VEC_RESERVE(p->frames_v, p->frames_cap, p->nr_frames + 1, 64) &&
	    !hashmap__add(&p->frames, h, p->nr_frames))
		p->frames_v[p->nr_frames++] = k;
	return k.id;
}

static void mark_names(void *rt)
{
	struct phps *ps = rt;

	frame_names__mark(frame_names__ip(ps->freed_id));
	frame_names__mark(frame_names__ip(ps->bad_id));
	frame_names__mark(frame_names__ip(ps->full_id));
}

/* Whether pc is in execute_ex: a native frame that runs a run of PHP frames. */
static bool in_eval(const void *ctx, uint64_t pc)
{
	const struct phpproc *p = ctx;

	for (size_t i = 0; i < p->nr_eval; i++)
		if (pc >= p->eval[i].lo && pc < p->eval[i].hi)
			return true;
	return false;
}

static int splice(void *rt, struct runtime_proc *rp, const struct sfbpf_sample *in, size_t size,
		  struct sfbpf_sample *out)
{
	struct phps *ps = rt;
	const __u64 *slots = in->ips + in->nr_user + in->nr_kernel;
	uint32_t n = in->nr_py, j;
	uint64_t ids[SFBPF_PY_MAX_FRAMES];
	bool entry[SFBPF_PY_MAX_FRAMES], left, was_short;
	struct phpproc *p;

	if (!n || !(in->flags & SFBPF_SAMPLE_PHP))
		return 0;
	if (n > SFBPF_PY_MAX_FRAMES ||
	    SFBPF_SAMPLE_HDR_SIZE + ((size_t)in->nr_user + in->nr_kernel + 2 * n) * 8 > size)
		return -EINVAL;
	if (!rp) {
		ps->stats.no_proc++;
		return 0;
	}
	p = rp->priv;
	for (j = 0; j < n; j++) {
		ids[j] = frame_id(ps, p, slots[2 * j], slots[2 * j + 1]);
		entry[j] = slots[2 * j] & SFBPF_PY_ENTRY;
	}
	runtime__splice_after(in, out, ids, entry, n, in_eval, p, &left, &was_short);
	out->flags &= ~SFBPF_SAMPLE_PHP;
	ps->stats.left += left;
	ps->stats.short_ += was_short;
	ps->stats.samples++;
	return 1;
}

static void counters(const void *rt, runtime_put_fn put, void *ctx)
{
	const struct phps_stats *st = &((const struct phps *)rt)->stats;
	uint64_t reads, hits;

	php__object_stats(&reads, &hits);
	put(ctx, "php_object_reads", reads, false);
	put(ctx, "php_object_hits", hits, false);
	put(ctx, "php_spliced", st->samples, false);
	put(ctx, "php_named", st->frames, false);
	put(ctx, "php_frames_read", st->read, false);
	put(ctx, "php_freed_function", st->freed, false);
	put(ctx, "php_bad_function", st->bad, false);
	put(ctx, "php_left", st->left, false);
	put(ctx, "php_short", st->short_, false);
	put(ctx, "php_no_proc", st->no_proc, false);
}

const struct runtime_ops php_runtime = {
	.name = "php",
	.prefix = "php",
	.starting = "not started",
	.refusal_tries = REFUSAL_TRIES,
	.new = phps_new,
	.free = phps_free,
	.detect = detect,
	.attach = attach,
	.detach = detach,
	.release = release,
	.splice = splice,
	.mark_names = mark_names,
	.forget = forget,
	.counters = counters,
};
