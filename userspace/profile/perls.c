// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's Perl processes: attach, BPF settings, splicing (perls.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "interp/frame_names.h"
#include "interp/perl.h"
#include "procs/procmaps.h"
#include "profile/perls.h"
#include "profile/profile.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

/* An interpreter whose structures disagree is read again once: it may be mid-start. */
#define REFUSAL_TRIES 2
#define MAX_FRAMES_CACHED 65536 /* frames remembered per process; then forgotten at once */

/* A frame resolved: (CV, COP with stamp and kind) -> a frame_names id. */
struct frame {
	uint64_t cv, word; /* as slots 0 and 1 hold them */
	uint64_t id;
};

/* An attached process (struct runtime_proc's priv). */
struct plproc {
	int pid;
	struct perl *pl;
	struct code_part eval[PERL_EVAL_PARTS];
	size_t nr_eval;
	struct hashmap frames; /* -> index in frames_v */
	struct frame *frames_v;
	size_t nr_frames, frames_cap;
};

struct perls_stats {
	uint64_t samples; /* samples spliced */
	uint64_t frames; /* Perl frames named */
	uint64_t freed; /* of those, "[freed sub]": no CV, or another, there now */
	uint64_t bad; /* of those, "[bad sub]": unreadable */
	uint64_t left; /* samples with Perl frames no frame of the ops loop took */
	uint64_t short_; /* samples with a frame of the ops loop and no Perl frame left */
	uint64_t no_proc; /* samples with Perl frames of a process no longer attached */
	uint64_t read; /* frames read from the process (not cached) */
};

struct perls {
	int fd;
	struct perls_stats stats;
	uint64_t freed_id, bad_id, full_id; /* the markers' names */
};

static void forget(void *rt, struct runtime_proc *rp)
{
	struct plproc *p = rp->priv;

	(void)rt;
	p->nr_frames = 0;
	hashmap__clear(&p->frames);
}

static void release(void *rt, struct runtime_proc *rp)
{
	struct plproc *p = rp->priv;

	(void)rt;
	hashmap__free(&p->frames);
	free(p->frames_v);
	perl__free(p->pl);
	free(p);
	rp->priv = NULL;
}

static void detach(void *rt, struct runtime_proc *rp)
{
	struct perls *ps = rt;
	__u32 key = rp->pid;

	bpf_map_delete_elem(ps->fd, &key);
}

/*
 * Whether pid may run Perl: an executable object whose name says perl (perl,
 * linked statically, a libperl). The attach reads its symbols.
 */
static bool detect(int pid, const struct procmaps *pm)
{
	(void)pid;
	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO) || !(m->perms & PROCMAP_EXEC))
			continue;
		if (strstr(procmap__basename(m->path), "perl"))
			return true;
	}
	return false;
}

static int attach(void *rt, struct runtime_proc *rp)
{
	struct perls *ps = rt;
	struct plproc *p = calloc(1, sizeof(*p));
	struct sfbpf_pl_proc cfg;
	const struct code_part *parts;
	__u32 key = rp->pid;
	int err;

	if (!p)
		return -ENOMEM;
	p->pid = rp->pid;
	err = perl__attach(rp->pid, &p->pl);
	if (!err)
		err = perl__bpf_settings(p->pl, &cfg);
	if (!err) {
		cfg.start_ticks = rp->start_ticks;
		if (bpf_map_update_elem(ps->fd, &key, &cfg, BPF_ANY))
			err = -errno;
	}
	if (err) {
		perl__free(p->pl);
		free(p);
		return err;
	}
	p->nr_eval = perl__eval_parts(p->pl, &parts);
	memcpy(p->eval, parts, p->nr_eval * sizeof(*parts));
	if (!p->nr_eval)
		pr_info("perl: pid %d: no Perl_runops_standard: Perl frames go above the native ones",
			p->pid);
	pr_debug("perl: pid %d: Perl %s attached", p->pid, perl__version(p->pl));
	rp->priv = p;
	return 0;
}

static void *perls_new(const struct runtime_host *host)
{
	struct perls *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->fd = profile__pl_procs_fd(host->prof);
	ps->freed_id = frame_names__intern("perl", "[freed sub]", "", 0, 0);
	ps->bad_id = frame_names__intern("perl", "[bad sub]", "", 0, 0);
	ps->full_id = frame_names__intern("perl", "[perl names full]", "", 0, 0);
	return ps;
}

static void perls_free(void *rt)
{
	free(rt);
}

static bool frame_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct frame *f = &((const struct plproc *)ctx)->frames_v[val], *k = key;

	return f->cv == k->cv && f->word == k->word;
}

/* The frame_names id of one frame the BPF walk sent (slots a, b). */
static uint64_t frame_id(struct perls *ps, struct plproc *p, uint64_t a, uint64_t b)
{
	struct frame k = { .cv = a & SFBPF_PY_ADDR_MASK, .word = b };
	uint32_t h = (uint32_t)hash__mix64(k.cv ^ hash__mix64(k.word));
	int64_t i = hashmap__find(&p->frames, h, frame_eq, p, &k);
	struct perl_frame f;
	int err;

	ps->stats.frames++;
	if (i >= 0)
		return p->frames_v[i].id;
	ps->stats.read++;
	err = perl__frame(p->pl, k.cv, k.word, &f);
	if (err) {
		ps->stats.freed += err == -ESTALE;
		ps->stats.bad += err != -ESTALE;
		pr_debug("perl: pid %d: frame %#llx/%#llx: %s", p->pid, (unsigned long long)k.cv,
			 (unsigned long long)k.word, strerror(-err));
		return err == -ESTALE ? ps->freed_id : ps->bad_id;
	}
	k.id = frame_names__intern("perl", f.name, f.file, 0, f.line);
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
	struct perls *ps = rt;

	frame_names__mark(frame_names__ip(ps->freed_id));
	frame_names__mark(frame_names__ip(ps->bad_id));
	frame_names__mark(frame_names__ip(ps->full_id));
}

/* Whether pc is in the ops loop: a native frame that runs a run of Perl frames. */
static bool in_eval(const void *ctx, uint64_t pc)
{
	const struct plproc *p = ctx;

	for (size_t i = 0; i < p->nr_eval; i++)
		if (pc >= p->eval[i].lo && pc < p->eval[i].hi)
			return true;
	return false;
}

static int splice(void *rt, struct runtime_proc *rp, const struct sfbpf_sample *in, size_t size,
		  struct sfbpf_sample *out)
{
	struct perls *ps = rt;
	const __u64 *slots = in->ips + in->nr_user + in->nr_kernel;
	uint32_t n = in->nr_py, j;
	uint64_t ids[SFBPF_PY_MAX_FRAMES];
	bool entry[SFBPF_PY_MAX_FRAMES], left, was_short;
	struct plproc *p;

	if (!n || !(in->flags & SFBPF_SAMPLE_PERL))
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
	out->flags &= ~SFBPF_SAMPLE_PERL;
	ps->stats.left += left;
	ps->stats.short_ += was_short;
	ps->stats.samples++;
	return 1;
}

static void counters(const void *rt, runtime_put_fn put, void *ctx)
{
	const struct perls_stats *st = &((const struct perls *)rt)->stats;
	uint64_t reads, hits;

	perl__object_stats(&reads, &hits);
	put(ctx, "perl_object_reads", reads, false);
	put(ctx, "perl_object_hits", hits, false);
	put(ctx, "perl_spliced", st->samples, false);
	put(ctx, "perl_named", st->frames, false);
	put(ctx, "perl_frames_read", st->read, false);
	put(ctx, "perl_freed_sub", st->freed, false);
	put(ctx, "perl_bad_sub", st->bad, false);
	put(ctx, "perl_left", st->left, false);
	put(ctx, "perl_short", st->short_, false);
	put(ctx, "perl_no_proc", st->no_proc, false);
}

const struct runtime_ops perl_runtime = {
	.name = "perl",
	.prefix = "perl",
	.starting = "not started",
	.refusal_tries = REFUSAL_TRIES,
	.new = perls_new,
	.free = perls_free,
	.detect = detect,
	.attach = attach,
	.detach = detach,
	.release = release,
	.splice = splice,
	.mark_names = mark_names,
	.forget = forget,
	.counters = counters,
};
