// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Symbolized stack walk (see stackwalk.h).
 *
 * The symbolizer's strings are only valid until its next call, and those that
 * point into its cached objects (build-ids, DWARF names and files) only while
 * the object is cached: a lookup later in the same stack may take a new
 * snapshot of the process and evict an object an earlier frame named. So
 * every string of a user frame is copied into a pool that is reused for every
 * stack. The pool may move while a stack is built: frames record pool
 * offsets, turned into pointers once the stack is complete. Kernel names,
 * comms and constant names are stable for the whole walk and are used in place.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python_names.h"
#include "profile/aggregate.h"
#include "symbols/ksyms.h"
#include "profile/stackwalk.h"
#include "symbols/symbolize.h"
#include "util/vec.h"

#define NO_OFF ((size_t)-1)

/* Where a user frame's strings are in the pool (NO_OFF: not pooled). */
struct pooled {
	size_t name, module, path, build_id, file, decl_file;
};

struct walker {
	struct symbolizer *sym;
	const struct ksyms *ks;
	sw_cb cb;
	void *ctx;
	char *pool;
	size_t len, cap;
	/* Grown to the deepest stack seen: inlined functions add frames. */
	struct sw_frame *frames;
	struct pooled *offs;
	size_t frames_cap, offs_cap;
};

/* Room for n more frames after the first `used`. */
static int reserve_frames(struct walker *w, size_t used, size_t n)
{
	if (VEC_RESERVE(w->frames, w->frames_cap, used + n, 256) ||
	    VEC_RESERVE(w->offs, w->offs_cap, used + n, 256))
		return -ENOMEM;
	return 0;
}

/* Copy s (n bytes, plus a NUL) into the pool; its offset, or NO_OFF without memory. */
static size_t pool_add(struct walker *w, const char *s, size_t n, const char *prefix,
		       const char *suffix)
{
	size_t np = strlen(prefix), ns = strlen(suffix), need = np + n + ns + 1, off;

	if (VEC_RESERVE(w->pool, w->cap, w->len + need, 4096))
		return NO_OFF;
	off = w->len;
	memcpy(w->pool + off, prefix, np);
	memcpy(w->pool + off + np, s, n);
	memcpy(w->pool + off + np + n, suffix, ns + 1);
	w->len += need;
	return off;
}

static int pool_str(struct walker *w, const char *s, size_t *off)
{
	*off = s ? pool_add(w, s, strlen(s), "", "") : NO_OFF;
	return s && *off == NO_OFF ? -ENOMEM : 0;
}

const char *stackwalk__user_name(const struct sym_info *si, char *buf, size_t len, bool *symbol)
{
	*symbol = true;
	if (si->name && si->name[0])
		return si->name;
	/* No symbol, but the DWARF names the function. */
	if (si->nr_lines && si->lines[si->nr_lines - 1].function)
		return si->lines[si->nr_lines - 1].function;
	*symbol = false;
	if (!si->mapped || !si->module || !si->module[0])
		return "[unknown]";
	if (si->module[0] == '[')
		return si->module;
	snprintf(buf, len, "[%s]", si->module);
	return buf;
}

/*
 * The frames of one user address, root first: its function, then the
 * functions inlined into it, innermost last, all at one address. Adds them
 * at w->frames[*n]; advances *n.
 */
static int user_frames(struct walker *w, uint32_t pid, uint64_t addr, size_t *n)
{
	char buf[PATH_MAX + 2];
	struct sym_info si = {};
	const char *name;
	struct sw_frame *f;
	struct pooled *o;
	size_t i;
	int err;

	if (w->sym)
		symbolizer__user(w->sym, pid, addr, &si);
	err = reserve_frames(w, *n, si.nr_lines ? si.nr_lines : 1);
	if (err)
		return err;
	f = &w->frames[*n];
	o = &w->offs[*n];
	*o = (struct pooled){ NO_OFF, NO_OFF, NO_OFF, NO_OFF, NO_OFF, NO_OFF };
	*f = (struct sw_frame){ .kind = SW_USER, .addr = addr };
	f->mapped = si.mapped;
	f->elf_addr = si.elf_addr;
	f->map_start = si.map_start;
	f->map_end = si.map_end;
	f->map_offset = si.map_offset;
	/* "" (none) is constant; a build-id lives in its symcache object: pooled. */
	f->build_id = si.build_id && !si.build_id[0] ? "" : NULL;
	err = pool_str(w, si.module, &o->module);
	if (!err)
		err = pool_str(w, si.path, &o->path);
	if (!err && !f->build_id)
		err = pool_str(w, si.build_id, &o->build_id);
	if (err)
		return err;
	for (i = 0; i < si.nr_lines; i++) {
		const struct srcline_frame *l = &si.lines[si.nr_lines - 1 - i];

		if (i) {
			f[i] = f[0];
			o[i] = o[0];
			f[i].inlined = true;
			f[i].symbol = l->function != NULL;
			f[i].name = "[unknown]";
			err = pool_str(w, l->function, &o[i].name);
		}
		f[i].line = l->line;
		f[i].decl_line = l->decl_line;
		if (!err)
			err = pool_str(w, l->file, &o[i].file);
		if (!err)
			err = pool_str(w, l->decl_file, &o[i].decl_file);
		if (err)
			return err;
	}
	*n += si.nr_lines ? si.nr_lines : 1;
	name = stackwalk__user_name(&si, buf, sizeof(buf), &f->symbol);
	if (!f->symbol) {
		o->decl_file = NO_OFF;
		f->decl_line = 0;
	}
	return pool_str(w, name, &o->name);
}

/* A Python frame: its names live as long as the program (python_names.h). */
static int python_frame(struct walker *w, uint64_t ip, size_t *n)
{
	struct python_name pn;
	struct sw_frame *f;
	int err = reserve_frames(w, *n, 1);

	if (err)
		return err;
	f = &w->frames[*n];
	w->offs[*n] = (struct pooled){ NO_OFF, NO_OFF, NO_OFF, NO_OFF, NO_OFF, NO_OFF };
	*f = (struct sw_frame){ .kind = SW_USER, .addr = ip, .name = "[unknown]", .build_id = "" };
	if (python_names__get(ip, &pn)) {
		f->symbol = f->python = true;
		f->name = pn.label;
		f->function = pn.qualname;
		f->module = "python";
		f->file = f->decl_file = pn.file[0] ? pn.file : NULL;
		f->line = pn.line;
		f->decl_line = pn.firstline;
	}
	(*n)++;
	return 0;
}

static void kernel_frame(struct walker *w, uint64_t addr, struct sw_frame *f)
{
	const struct ksym *k = w->ks ? ksyms__find(w->ks, addr) : NULL;

	*f = (struct sw_frame){ .kind = SW_KERNEL, .addr = addr, .name = "[unknown]" };
	if (k && k->name[0]) {
		f->symbol = true;
		f->name = k->name;
		f->module = k->module;
	}
}

static const char *pool_ptr(const struct walker *w, size_t off, const char *dflt)
{
	return off == NO_OFF ? dflt : w->pool + off;
}

static int walk_one(const struct aggr_stack *st, void *ctx)
{
	struct walker *w = ctx;
	const uint64_t *kips = st->ips + st->nr_user;
	struct sw_stack out = {
		.raw = st, .pid = st->pid, .count = st->count, .weight = st->weight
	};
	size_t n = 0, i;
	int j, err;

	w->len = 0;
	err = reserve_frames(w, 0, 2 + st->nr_kernel);
	if (err)
		return err;
	/* The idle tasks are "swapper/N" per CPU; perf names them all "swapper". */
	w->frames[n] = (struct sw_frame){ .kind = SW_COMM, .name = st->comm };
	if (st->pid == 0 || !st->comm[0])
		w->frames[n].name = st->pid == 0 ? "swapper" : "[unknown]";
	n++;
	if (st->truncated)
		w->frames[n++] = (struct sw_frame){ .kind = SW_TRUNCATED, .name = "[truncated]" };
	out.first_user = n;
	/* Root first. Frames above the leaf hold return addresses: look up addr - 1. */
	for (j = st->nr_user - 1; j >= 0; j--) {
		if (python_names__is_ip(st->ips[j]))
			err = python_frame(w, st->ips[j], &n);
		else
			err = user_frames(w, st->pid, st->ips[j] - (j > 0), &n);
		if (err)
			return err;
	}
	out.first_kernel = n;
	err = reserve_frames(w, n, st->nr_kernel);
	if (err)
		return err;
	for (j = st->nr_kernel - 1; j >= 0; j--)
		kernel_frame(w, kips[j] - (j > 0), &w->frames[n++]);
	/* The pool is complete: it will not move any more. */
	for (i = out.first_user; i < out.first_kernel; i++) {
		struct sw_frame *f = &w->frames[i];
		const struct pooled *o = &w->offs[i];

		f->name = pool_ptr(w, o->name, f->name);
		f->module = pool_ptr(w, o->module, f->module);
		f->path = pool_ptr(w, o->path, f->path);
		f->build_id = pool_ptr(w, o->build_id, f->build_id);
		f->file = pool_ptr(w, o->file, f->file);
		f->decl_file = pool_ptr(w, o->decl_file, f->decl_file);
	}
	out.frames = w->frames;
	out.nr_frames = n;
	return w->cb(&out, w->ctx);
}

int stackwalk__for_each(const struct aggregator *a, struct symbolizer *sym, const struct ksyms *ks,
			sw_cb cb, void *ctx)
{
	struct walker *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	w->sym = sym;
	w->ks = ks;
	w->cb = cb;
	w->ctx = ctx;
	err = aggregator__for_each(a, walk_one, w);
	free(w->frames);
	free(w->offs);
	free(w->pool);
	free(w);
	return err;
}
