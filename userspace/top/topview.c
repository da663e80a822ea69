// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sfbpf-top's model (see topview.h).
 *
 * Everything lives in tables of ids: interned strings, functions ("syms"),
 * rows (group + function), and one entry per aggregator stack holding its
 * frames as sym ids and its distinct rows. Entities are allocated from arenas
 * so that pointers to them stay valid while the id tables grow; lookups go
 * through one open-addressing map type whose keys live in the entities.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregate.h"
#include "util/arena.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/strset.h"
#include "util/vec.h"
#include "symbols/ksyms.h"
#include "profile/session.h"
#include "profile/stackwalk.h"
#include "symbols/symbolize.h"
#include "top/topview.h"
#include "top/topview_int.h"

#define DECAY_MIN_TOTAL 0.5 /* rows decayed below this are dropped from the table */

/* ---- the model (struct topview: topview_int.h) ---- */

/* -- strings -- */

static bool has_controls(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* The interned copy of s, control characters replaced (safe on a terminal). */
static const char *intern(struct topview *tv, const char *s)
{
	const char *copy;
	char *clean, *p;

	if (!has_controls(s))
		return strset__intern(&tv->strings, s);
	clean = strdup(s);
	if (!clean)
		return NULL;
	for (p = clean; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
	copy = strset__intern(&tv->strings, clean);
	free(clean);
	return copy;
}

/* -- functions -- */

static uint32_t sym_hash(const struct topview_sym *k)
{
	return (uint32_t)hash__mix64((uintptr_t)k->name * 31 + (uintptr_t)k->module * 7 +
				     k->kernel);
}

static bool sym_eq(const void *ctx, uint64_t id, const void *key)
{
	const struct topview_sym *a = ((const struct topview *)ctx)->syms[id], *b = key;

	return a->name == b->name && a->module == b->module && a->kernel == b->kernel;
}

int64_t topview_sym_id(const struct topview *tv, const struct topview_sym *sym)
{
	return hashmap__find(&tv->syms_map, sym_hash(sym), sym_eq, tv, sym);
}

/*
 * Sym id of (name, module, kernel), created if new; -ENOMEM. py: a Python frame's
 * qualname and file's base name, which its label (name) is made of.
 */
static int64_t sym_get(struct topview *tv, const char *name, const char *module, bool kernel,
		       const char *py_function, const char *py_file)
{
	struct topview_sym key = { .name = intern(tv, name),
				   .module = intern(tv, module),
				   .kernel = kernel },
			   *s;
	uint32_t h;
	int64_t id;

	if (!key.name || !key.module)
		return -ENOMEM;
	h = sym_hash(&key);
	id = hashmap__find(&tv->syms_map, h, sym_eq, tv, &key);
	if (id >= 0)
		return id;
	/* Everything that can fail before the sym is in the map: never half of one there. */
	if (py_function && py_file) {
		key.py_function = intern(tv, py_function);
		key.py_file = intern(tv, py_file);
		if (!key.py_function || !key.py_file)
			return -ENOMEM;
	}
	s = arena__alloc(&tv->syms_arena, sizeof(*s));
	if (!s || VEC_RESERVE(tv->syms, tv->syms_cap, tv->nr_syms + 1, 64) ||
	    VEC_RESERVE(tv->marks, tv->marks_cap, tv->nr_syms + 1, 64) ||
	    hashmap__add(&tv->syms_map, h, tv->nr_syms))
		return -ENOMEM;
	*s = key;
	tv->marks[tv->nr_syms] = 0;
	tv->syms[tv->nr_syms] = s;
	return tv->nr_syms++;
}

/*
 * A frame, named as every output names it (stackwalk.h), with its module as
 * perf top shows it: "[kernel.kallsyms]" or "[ext4]" for the kernel, "python"
 * or "java" for a runtime's frame, "[unknown]" where there is none.
 */
static int64_t sym_named(struct topview *tv, uint32_t pid, bool kernel, uint64_t addr)
{
	const struct sw_frame *f = &tv->name.f;
	char module[128];

	bool unknown;

	stackwalk__name(tv->sym, tv->ks, pid, kernel ? SW_KERNEL : SW_USER, addr, &tv->name);
	if (!kernel) {
		unknown = !f->symbol && !strcmp(f->name, "[unknown]");
		return sym_get(tv, f->name,
			       !unknown && f->module && f->module[0] ? f->module : "[unknown]",
			       false, f->python ? f->function : NULL,
			       f->python && f->file ? frame_names__base(f->file) : NULL);
	}
	if (!f->symbol)
		return sym_get(tv, f->name, "[unknown]", true, NULL, NULL);
	if (!f->module)
		return sym_get(tv, f->name, "[kernel.kallsyms]", true, NULL, NULL);
	snprintf(module, sizeof(module), "[%s]", f->module);
	return sym_get(tv, f->name, module, true, NULL, NULL);
}

static bool addr_eq(const void *ctx, uint64_t id, const void *key)
{
	const struct addr_entry *a = &((const struct topview *)ctx)->addrs[id], *b = key;

	return a->addr == b->addr && a->space == b->space;
}

/* Frames repeat across stacks: symbolize each (process, address) once. */
static int64_t sym_frame(struct topview *tv, uint32_t pid, bool kernel, uint64_t addr)
{
	struct addr_entry key = { kernel ? KERNEL_SPACE : pid, addr, 0 };
	uint32_t h = (uint32_t)hash__mix64(key.space * 0x9E3779B97F4A7C15ULL ^ addr);
	int64_t id = hashmap__find(&tv->addrs_map, h, addr_eq, tv, &key), sym;

	if (id >= 0)
		return tv->addrs[id].sym;
	sym = sym_named(tv, pid, kernel, addr);
	if (sym < 0 || VEC_RESERVE(tv->addrs, tv->addrs_cap, tv->nr_addrs + 1, 64) ||
	    hashmap__add(&tv->addrs_map, h, tv->nr_addrs))
		return -ENOMEM;
	key.sym = sym;
	tv->addrs[tv->nr_addrs++] = key;
	return sym;
}

/* -- rows -- */

static bool row_eq(const void *ctx, uint64_t id, const void *key)
{
	const struct topview_row *a = ((const struct topview *)ctx)->rows[id], *b = key;

	return a->sym == b->sym && a->pid == b->pid && a->comm == b->comm;
}

/* Row of sym in s's group under the current grouping. */
static int64_t row_get(struct topview *tv, const struct tv_stack *s, uint32_t sym)
{
	struct topview_row key = { .sym = tv->syms[sym] }, *r;
	int64_t id;
	uint32_t h;

	switch (tv->opts.group) {
	case TOPVIEW_GROUP_PID:
		key.pid = s->pid;
		key.comm = s->comm;
		break;
	case TOPVIEW_GROUP_COMM:
		key.comm = s->comm;
		break;
	default:
		key.comm = intern(tv, "-");
		if (!key.comm)
			return -ENOMEM;
	}
	h = (uint32_t)hash__mix64((uintptr_t)key.sym * 31 + (uintptr_t)key.comm * 7 + key.pid);
	id = hashmap__find(&tv->rows_map, h, row_eq, tv, &key);
	if (id >= 0)
		return id;
	r = arena__alloc(&tv->rows_arena, sizeof(*r));
	if (!r || VEC_RESERVE(tv->rows, tv->rows_cap, tv->nr_rows + 1, 64) ||
	    hashmap__add(&tv->rows_map, h, tv->nr_rows))
		return -ENOMEM;
	*r = key;
	r->id = tv->nr_rows;
	tv->rows[tv->nr_rows] = r;
	return tv->nr_rows++;
}

/* Fills s->rows: one per distinct frame function, the leaf's first. */
static int stack_rows(struct topview *tv, struct tv_stack *s)
{
	int64_t row;
	unsigned i;

	if (++tv->stamp == 0) { /* wrapped: forget old stamps */
		memset(tv->marks, 0, tv->nr_syms * sizeof(*tv->marks));
		tv->stamp = 1;
	}
	s->nr_rows = 0;
	for (i = 0; i < s->nr; i++) {
		if (tv->marks[s->syms[i]] == tv->stamp)
			continue;
		tv->marks[s->syms[i]] = tv->stamp;
		row = row_get(tv, s, s->syms[i]);
		if (row < 0)
			return (int)row;
		s->rows[s->nr_rows++] = row;
	}
	return 0;
}

/* -- stacks -- */

static uint32_t id_hash(uint64_t id)
{
	return (uint32_t)hash__mix64(id);
}

static bool id_eq(const void *ctx, uint64_t val, const void *key)
{
	return ((const struct topview *)ctx)->stacks[val].id == *(const uint64_t *)key;
}

static int stack_add(struct topview *tv, const struct aggr_stack *st)
{
	unsigned nr = st->nr_user + st->nr_kernel, i, k = 0;
	const uint64_t *kips = st->ips + st->nr_user;
	struct tv_stack *s;
	int64_t sym;

	if (VEC_RESERVE(tv->stacks, tv->stacks_cap, tv->nr_stacks + 1, 64))
		return -ENOMEM;
	s = &tv->stacks[tv->nr_stacks];
	memset(s, 0, sizeof(*s));
	s->id = st->id;
	s->pid = st->pid;
	s->truncated = st->truncated;
	s->cgroup_id = st->cgroup_id;
	s->comm = intern(tv, stackwalk__comm(st));
	s->syms = arena__alloc(&tv->stacks_arena, (nr ? nr : 1) * sizeof(*s->syms));
	s->rows = arena__alloc(&tv->stacks_arena, (nr ? nr : 1) * sizeof(*s->rows));
	if (!s->comm || !s->syms || !s->rows)
		return -ENOMEM;
	/* Leaf first: the kernel part, then the user part. */
	for (i = 0; i < st->nr_kernel; i++, k++) {
		sym = sym_frame(tv, st->pid, true, stackwalk__addr(kips[i], i == 0));
		if (sym < 0)
			return (int)sym;
		s->syms[k] = sym;
	}
	for (i = 0; i < st->nr_user; i++, k++) {
		sym = sym_frame(tv, st->pid, false, stackwalk__addr(st->ips[i], i == 0));
		if (sym < 0)
			return (int)sym;
		s->syms[k] = sym;
	}
	s->nr = nr;
	/* A process's stack (evicted ones folded in): a row of its own, as batch prints it. */
	if (!nr && st->truncated) {
		s->syms[0] = tv->truncated_sym;
		s->nr = 1;
	}
	if (hashmap__add(&tv->ids_map, id_hash(s->id), tv->nr_stacks))
		return -ENOMEM;
	tv->nr_stacks++;
	return stack_rows(tv, s);
}

static void stack_count(struct topview *tv, struct tv_stack *s, double w, uint64_t n)
{
	struct topview_row *leaf;
	unsigned i;

	s->weight += w;
	s->samples += n;
	tv->total_weight += w;
	tv->total_samples += n;
	if (!s->nr_rows)
		return;
	leaf = tv->rows[s->rows[0]];
	leaf->self += w;
	leaf->samples += n;
	for (i = 0; i < s->nr_rows; i++)
		tv->rows[s->rows[i]]->total += w;
}

/* Process stacks by (pid, comm, cgroup): where an evicted stack's samples went. */
static uint32_t fold_hash(const struct tv_stack *s)
{
	return (uint32_t)hash__mix64(s->pid * 0x9E3779B97F4A7C15ULL ^ (uintptr_t)s->comm ^
				     s->cgroup_id * 31);
}

static bool fold_eq(const void *ctx, uint64_t i, const void *key)
{
	const struct tv_stack *a = &((const struct topview *)ctx)->stacks[i], *b = key;

	return a->pid == b->pid && a->comm == b->comm && a->cgroup_id == b->cgroup_id;
}

/*
 * A stack counts all its samples, those folded into it from evicted stacks
 * (aggregate.h) too: an evicted stack leaves the table (stack_remove) with
 * what it weighed, and its samples live on in its process's stack, counted
 * there (unfold() takes out what the evicted stack had counted already).
 */
static int update_one(const struct aggr_stack *st, void *arg)
{
	struct topview *tv = arg;
	int64_t i = hashmap__find(&tv->ids_map, id_hash(st->id), id_eq, tv, &st->id);
	struct tv_stack *s;
	uint64_t d;
	double w;
	int err;

	if (i < 0) {
		err = stack_add(tv, st);
		if (err)
			return err;
		i = (int64_t)tv->nr_stacks - 1;
	}
	s = &tv->stacks[i];
	s->visit = tv->visit;
	if (st->count > s->seen) {
		d = st->count - s->seen;
		w = tv->opts.weight ? (double)(st->weight - s->seen_weight) : (double)d;
		s->seen = st->count;
		s->seen_weight = st->weight;
		stack_count(tv, s, w, d);
	}
	s->fold_left = 0;
	if (st->folded > s->seen_folded) {
		s->fold_left = st->folded - s->seen_folded;
		s->seen_folded = st->folded;
		if (hashmap__add(&tv->folds_map, fold_hash(s), i))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Stack x is gone from the aggregator. Evicted, its samples were counted
 * again, all of them, in its process's stack this update: what x had
 * counted itself (seen) comes off there, and what x weighs in the table now
 * (cumulative: the same; interval: nothing; decay: less) goes there instead,
 * as x leaves the table. Every sample stays counted once, in its process.
 * Dropped as idle (no process stack took it), nothing moves.
 */
static void unfold(struct topview *tv, const struct tv_stack *x)
{
	int64_t i = hashmap__find(&tv->folds_map, fold_hash(x), fold_eq, tv, x);
	struct tv_stack *p = i >= 0 ? &tv->stacks[i] : NULL;
	double seen_w = tv->opts.weight ? (double)x->seen_weight : (double)x->seen;

	if (!p || p == x || p->fold_left < x->seen)
		return;
	p->fold_left -= x->seen;
	stack_count(tv, p, x->weight - seen_w, x->samples - x->seen);
}

/* Stack i left the aggregator (evicted, dropped as idle, reset): out of the table too. */
static void stack_remove(struct topview *tv, size_t i)
{
	struct tv_stack *s = &tv->stacks[i], *last = &tv->stacks[tv->nr_stacks - 1];
	struct topview_row *leaf;
	unsigned k;

	tv->total_weight -= s->weight;
	tv->total_samples -= s->samples;
	if (s->nr_rows) {
		leaf = tv->rows[s->rows[0]];
		leaf->self -= s->weight;
		leaf->samples -= s->samples;
		for (k = 0; k < s->nr_rows; k++)
			tv->rows[s->rows[k]]->total -= s->weight;
	}
	hashmap__del(&tv->ids_map, id_hash(s->id), id_eq, tv, &s->id);
	if (s != last) {
		hashmap__del(&tv->ids_map, id_hash(last->id), id_eq, tv, &last->id);
		*s = *last;
		/* Re-adding what was just deleted needs no memory. */
		hashmap__add(&tv->ids_map, id_hash(s->id), i);
	}
	tv->nr_stacks--;
	tv->removed++;
}

/*
 * The model anew from the stacks still there, once as many have gone:
 * functions, rows, names and the address cache of stacks long gone are
 * freed, so the model follows the aggregator's size however long it runs.
 * Counts carry over exactly; row ids change (as with a regrouping).
 */
static int rebuild(struct topview *tv)
{
	struct topview *n = topview__new(&tv->opts, tv->sym, tv->ks), tmp;
	const struct topview_sym *old;
	struct tv_stack *s, *ns;
	int64_t id;
	size_t i;
	unsigned k;
	int err;

	if (!n)
		return -ENOMEM;
	for (i = 0; i < tv->nr_stacks; i++) {
		s = &tv->stacks[i];
		if (VEC_RESERVE(n->stacks, n->stacks_cap, n->nr_stacks + 1, 64))
			goto nomem;
		ns = &n->stacks[n->nr_stacks];
		*ns = *s;
		ns->weight = 0;
		ns->samples = 0;
		ns->comm = intern(n, s->comm);
		ns->syms = arena__alloc(&n->stacks_arena, (s->nr ? s->nr : 1) * sizeof(*ns->syms));
		ns->rows = arena__alloc(&n->stacks_arena, (s->nr ? s->nr : 1) * sizeof(*ns->rows));
		if (!ns->comm || !ns->syms || !ns->rows)
			goto nomem;
		for (k = 0; k < s->nr; k++) {
			old = tv->syms[s->syms[k]];
			id = sym_get(n, old->name, old->module, old->kernel, old->py_function,
				     old->py_file);
			if (id < 0)
				goto nomem;
			ns->syms[k] = id;
		}
		if (hashmap__add(&n->ids_map, id_hash(ns->id), n->nr_stacks))
			goto nomem;
		n->nr_stacks++;
		err = stack_rows(n, ns);
		if (err)
			goto fail;
		stack_count(n, ns, s->weight, s->samples);
	}
	n->visit = tv->visit;
	n->rebuilds = tv->rebuilds + 1;
	tmp = *tv;
	*tv = *n;
	*n = tmp;
	topview__free(n);
	return 0;
nomem:
	err = -ENOMEM;
fail:
	topview__free(n);
	return err;
}

static void scale(struct topview *tv, double f)
{
	size_t i;

	for (i = 0; i < tv->nr_stacks; i++)
		tv->stacks[i].weight *= f;
	for (i = 0; i < tv->nr_rows; i++) {
		tv->rows[i]->self *= f;
		tv->rows[i]->total *= f;
	}
	tv->total_weight *= f;
}

void topview__zero(struct topview *tv)
{
	size_t i;

	scale(tv, 0);
	for (i = 0; i < tv->nr_stacks; i++)
		tv->stacks[i].samples = 0;
	for (i = 0; i < tv->nr_rows; i++)
		tv->rows[i]->samples = 0;
	tv->total_samples = 0;
}

int topview__update(struct topview *tv, const struct aggregator *a)
{
	size_t i;
	int err;

	if (tv->opts.counts == TOPVIEW_INTERVAL)
		topview__zero(tv);
	else if (tv->opts.counts == TOPVIEW_DECAY)
		scale(tv, tv->opts.decay);
	tv->visit++;
	hashmap__clear(&tv->folds_map);
	err = aggregator__for_each(a, update_one, tv);
	if (err)
		return err;
	/* Before any removal: removals move stacks, the folds map holds indexes. */
	for (i = 0; i < tv->nr_stacks; i++)
		if (tv->stacks[i].visit != tv->visit)
			unfold(tv, &tv->stacks[i]);
	for (i = tv->nr_stacks; i > 0; i--)
		if (tv->stacks[i - 1].visit != tv->visit)
			stack_remove(tv, i - 1);
	if (tv->removed > 1024 && tv->removed > tv->nr_stacks)
		return rebuild(tv);
	return 0;
}

void topview__set_counts(struct topview *tv, enum topview_counts counts)
{
	tv->opts.counts = counts;
}

enum topview_group topview__group(const struct topview *tv)
{
	return tv->opts.group;
}

int topview__set_group(struct topview *tv, enum topview_group group)
{
	struct tv_stack *s;
	size_t i;
	int err;

	tv->opts.group = group;
	hashmap__clear(&tv->rows_map);
	arena__free(&tv->rows_arena);
	tv->nr_rows = 0;
	for (i = 0; i < tv->nr_stacks; i++) {
		s = &tv->stacks[i];
		err = stack_rows(tv, s);
		if (err)
			return err;
	}
	tv->total_weight = 0;
	tv->total_samples = 0;
	for (i = 0; i < tv->nr_stacks; i++) {
		s = &tv->stacks[i];
		double w = s->weight;
		uint64_t n = s->samples;

		s->weight = 0;
		s->samples = 0;
		stack_count(tv, s, w, n);
	}
	return 0;
}

void topview__totals(const struct topview *tv, struct topview_totals *out)
{
	out->weight = tv->total_weight;
	out->samples = tv->total_samples;
	out->stacks = tv->nr_stacks;
	out->rows = tv->nr_rows;
	out->syms = tv->nr_syms;
	out->addrs = tv->nr_addrs;
	out->rebuilds = tv->rebuilds;
}

struct topview *topview__new(const struct topview_opts *opts, struct symbolizer *sym,
			     const struct ksyms *ks)
{
	struct topview *tv = calloc(1, sizeof(*tv));
	int64_t t;

	if (!tv)
		goto nomem;
	if (opts)
		tv->opts = *opts;
	if (!(tv->opts.decay > 0 && tv->opts.decay < 1))
		tv->opts.decay = TOPVIEW_DEFAULT_DECAY;
	tv->sym = sym;
	tv->ks = ks;
	t = sym_get(tv, "[truncated]", "", false, NULL, NULL);
	if (t < 0)
		goto nomem;
	tv->truncated_sym = t;
	return tv;
nomem:
	topview__free(tv);
	errno = ENOMEM;
	return NULL;
}

void topview__free(struct topview *tv)
{
	if (!tv)
		return;
	strset__free(&tv->strings);
	arena__free(&tv->syms_arena);
	arena__free(&tv->rows_arena);
	arena__free(&tv->stacks_arena);
	hashmap__free(&tv->syms_map);
	hashmap__free(&tv->addrs_map);
	hashmap__free(&tv->rows_map);
	hashmap__free(&tv->ids_map);
	hashmap__free(&tv->folds_map);
	free(tv->syms);
	free(tv->marks);
	free(tv->addrs);
	free(tv->rows);
	free(tv->stacks);
	free(tv->sel);
	free(tv->nodes);
	free(tv);
}

/* ---- selection ---- */

static bool row_visible(const struct topview *tv, const struct topview_row *r,
			const struct topview_filter *f)
{
	int i;

	if (tv->opts.counts == TOPVIEW_DECAY ? r->total < DECAY_MIN_TOTAL :
					       r->total <= 0 && !r->samples)
		return false;
	if (!f)
		return true;
	if ((f->hide_kernel && r->sym->kernel) || (f->hide_user && !r->sym->kernel))
		return false;
	if (f->search && *f->search && !strcasestr(r->sym->name, f->search))
		return false;
	if (f->nr_pids) {
		for (i = 0; i < f->nr_pids; i++)
			if ((uint32_t)f->pids[i] == r->pid)
				break;
		if (i == f->nr_pids)
			return false;
	}
	return true;
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct topview_row *a = *(const struct topview_row *const *)pa;
	const struct topview_row *b = *(const struct topview_row *const *)pb;
	enum topview_sort key = *(const enum topview_sort *)arg;
	int c = 0;

	if (key == TOPVIEW_SORT_TOTAL)
		c = cmp_num(a->total, b->total);
	else if (key == TOPVIEW_SORT_SAMPLES)
		c = cmp_num((double)a->samples, (double)b->samples);
	if (!c)
		c = cmp_num(a->self, b->self);
	if (!c)
		c = cmp_num(a->total, b->total);
	if (!c)
		c = strcmp(a->sym->name, b->sym->name);
	if (!c)
		c = strcmp(a->comm, b->comm);
	if (!c)
		c = a->pid < b->pid ? -1 : a->pid > b->pid;
	return c;
}

int topview__select(struct topview *tv, enum topview_sort key, const struct topview_filter *f,
		    const struct topview_row *const **rows)
{
	size_t i, n = 0;

	if (VEC_RESERVE(tv->sel, tv->sel_cap, tv->nr_rows ? tv->nr_rows : 1, 64))
		return -ENOMEM;
	for (i = 0; i < tv->nr_rows; i++)
		if (row_visible(tv, tv->rows[i], f))
			tv->sel[n++] = tv->rows[i];
	qsort_r(tv->sel, n, sizeof(*tv->sel), cmp_rows, &key);
	*rows = tv->sel;
	return (int)n;
}

const struct topview_row *topview__row(const struct topview *tv, uint32_t id)
{
	return id < tv->nr_rows ? tv->rows[id] : NULL;
}
