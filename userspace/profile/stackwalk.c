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
	struct sw_name name; /* the frame being named */
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

const char *stackwalk__comm(const struct aggr_stack *st)
{
	/* The idle tasks are "swapper/N" per CPU; perf names them all "swapper". */
	if (st->pid == 0)
		return "swapper";
	return st->comm[0] ? st->comm : "[unknown]";
}

/* A native user frame: the symbol, else the DWARF's function, else its module. */
static void name_user(struct sw_name *out)
{
	const struct sym_info *si = &out->si;
	struct sw_frame *f = &out->f;
	const struct srcline_frame *outer = si->nr_lines ? &si->lines[si->nr_lines - 1] : NULL;

	f->mapped = si->mapped;
	f->elf_addr = si->elf_addr;
	f->module = si->module;
	f->path = si->path;
	f->map_start = si->map_start;
	f->map_end = si->map_end;
	f->map_offset = si->map_offset;
	f->build_id = si->build_id;
	if (outer) {
		f->file = outer->file;
		f->line = outer->line;
		f->decl_file = outer->decl_file;
		f->decl_line = outer->decl_line;
	}
	f->symbol = true;
	if (si->name && si->name[0]) {
		f->name = si->name;
		return;
	}
	/* No symbol, but the DWARF names the function. */
	if (outer && outer->function) {
		f->name = outer->function;
		return;
	}
	f->symbol = false;
	f->decl_file = NULL;
	f->decl_line = 0;
	if (!si->mapped || !si->module || !si->module[0])
		return;
	if (si->module[0] == '[') {
		f->name = si->module;
		return;
	}
	snprintf(out->buf, sizeof(out->buf), "[%s]", si->module);
	f->name = out->buf;
}

/* A Python frame: its names live as long as the program (python_names.h). */
static void name_python(struct sw_name *out)
{
	struct sw_frame *f = &out->f;
	struct python_name pn;

	f->build_id = "";
	if (!python_names__get(f->addr, &pn))
		return;
	f->symbol = f->python = true;
	f->name = pn.label;
	f->function = pn.qualname;
	f->module = "python";
	f->file = f->decl_file = pn.file[0] ? pn.file : NULL;
	f->line = pn.line;
	f->decl_line = pn.firstline;
}

void stackwalk__name(struct symbolizer *sym, const struct ksyms *ks, uint32_t pid,
		     enum sw_kind kind, uint64_t addr, struct sw_name *out)
{
	struct sw_frame *f = &out->f;
	const struct ksym *k;

	*f = (struct sw_frame){ .kind = kind, .addr = addr, .name = "[unknown]" };
	out->si = (struct sym_info){};
	if (kind == SW_KERNEL) {
		k = ks ? ksyms__find(ks, addr) : NULL;
		if (k && k->name[0]) {
			f->symbol = true;
			f->name = k->name;
			f->module = k->module;
		}
		return;
	}
	if (python_names__is_ip(addr)) {
		name_python(out);
		return;
	}
	if (sym)
		symbolizer__user(sym, pid, addr, &out->si);
	name_user(out);
}

/*
 * The frames of one user address, root first: its function, then the
 * functions inlined into it, innermost last, all at one address. Adds them
 * at w->frames[*n]; advances *n.
 */
static int user_frames(struct walker *w, uint32_t pid, uint64_t addr, size_t *n)
{
	const struct sym_info *si = &w->name.si;
	struct sw_frame *f;
	struct pooled *o;
	size_t i, nr;
	int err;

	stackwalk__name(w->sym, w->ks, pid, SW_USER, addr, &w->name);
	nr = si->nr_lines ? si->nr_lines : 1;
	err = reserve_frames(w, *n, nr);
	if (err)
		return err;
	f = &w->frames[*n];
	o = &w->offs[*n];
	*o = (struct pooled){ NO_OFF, NO_OFF, NO_OFF, NO_OFF, NO_OFF, NO_OFF };
	*f = w->name.f;
	*n += nr;
	if (f->python) /* its names live as long as the program */
		return 0;
	/* "" (none) is constant; a build-id lives in its symcache object: pooled. */
	if (!f->build_id || f->build_id[0])
		err = pool_str(w, f->build_id, &o->build_id);
	if (!err)
		err = pool_str(w, f->name, &o->name);
	if (!err)
		err = pool_str(w, f->module, &o->module);
	if (!err)
		err = pool_str(w, f->path, &o->path);
	if (!err)
		err = pool_str(w, f->file, &o->file);
	if (!err)
		err = pool_str(w, f->decl_file, &o->decl_file);
	for (i = 1; !err && i < nr; i++) {
		const struct srcline_frame *l = &si->lines[nr - 1 - i];

		f[i] = f[0];
		o[i] = o[0];
		f[i].inlined = true;
		f[i].symbol = l->function != NULL;
		f[i].name = "[unknown]";
		f[i].line = l->line;
		f[i].decl_line = l->decl_line;
		err = pool_str(w, l->function, &o[i].name);
		if (!err)
			err = pool_str(w, l->file, &o[i].file);
		if (!err)
			err = pool_str(w, l->decl_file, &o[i].decl_file);
	}
	return err;
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
		.pid = st->pid, .cgroup_id = st->cgroup_id, .count = st->count, .weight = st->weight
	};
	size_t n = 0, i;
	int j, err;

	w->len = 0;
	err = reserve_frames(w, 0, 2 + st->nr_kernel);
	if (err)
		return err;
	w->frames[n++] = (struct sw_frame){ .kind = SW_COMM, .name = stackwalk__comm(st) };
	if (st->truncated)
		w->frames[n++] = (struct sw_frame){ .kind = SW_TRUNCATED, .name = "[truncated]" };
	out.first_user = n;
	/* Root first. */
	for (j = st->nr_user - 1; j >= 0; j--) {
		err = user_frames(w, st->pid, stackwalk__addr(st->ips[j], j == 0), &n);
		if (err)
			return err;
	}
	out.first_kernel = n;
	err = reserve_frames(w, n, st->nr_kernel);
	if (err)
		return err;
	for (j = st->nr_kernel - 1; j >= 0; j--) {
		stackwalk__name(w->sym, w->ks, st->pid, SW_KERNEL, stackwalk__addr(kips[j], j == 0),
				&w->name);
		w->frames[n++] = w->name.f;
	}
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
	/* Once every frame is looked up: a lookup may take a newer snapshot of the process. */
	out.exe = w->sym ? symbolizer__exe(w->sym, st->pid) : NULL;
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
