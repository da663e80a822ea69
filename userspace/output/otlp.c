// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OTLP profiles writer, gathering (see otlp.h, otlp_int.h): the symbolized
 * stacks become the dictionary's deduplicated tables and the samples; the
 * request is then written in one pass by otlp_request.c.
 *
 * A frame and the functions inlined at its address (stackwalk.h: inlined
 * frames follow their caller, outermost first) make one Location whose
 * Lines are innermost first, the last being the caller, as profiles.proto
 * says. A user function is named by its DWARF declaration (file, first
 * line) where the object has one, else by the object it lives in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/otlp_int.h"
#include "output/pbwire.h"
#include "profile/aggregate.h"
#include "profile/snapshot.h"
#include "symbols/symbolize.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/vec.h"

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"
#define BUILD_ID_KEY "process.executable.build_id.gnu"

static uint64_t mix(uint64_t h, uint64_t v)
{
	return hash__mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/*
 * Index of the entry of a table equal (eq) to *key, hashed h: a copy of *key
 * appended when there is none. Negative errno.
 */
static int64_t intern(struct otlp_builder *b, void *v, size_t *n, size_t *cap, struct hashmap *ix,
		      uint32_t h, hashmap_eq eq, const void *key, size_t size)
{
	int64_t id = hashmap__find(ix, h, eq, b, key);

	if (id >= 0)
		return id;
	if (*n >= INT32_MAX)
		return -E2BIG;
	if (vec__reserve(v, cap, *n + 1, size, 256) || hashmap__add(ix, h, *n))
		return -ENOMEM;
	memcpy(*(char **)v + *n * size, key, size);
	return (int64_t)(*n)++;
}

/* The same for a table of the builder; key points at an entry of the table's type. */
#define INTERN(b, t, h, eq, key)        \
	((void)sizeof((key) == (t)->v), \
	 intern((b), &(t)->v, &(t)->n, &(t)->cap, &(t)->ix, (h), (eq), (key), sizeof(*(t)->v)))

static int64_t str_id(struct otlp_builder *b, const char *s)
{
	return strtab__id(&b->strs, s);
}

/* ---- attributes, functions, mappings ------------------------------------------------- */

static bool attr_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct otlp_attr *a = &((const struct otlp_builder *)ctx)->attrs.v[idx], *k = key;

	return a->key == k->key && a->is_int == k->is_int && a->str == k->str && a->num == k->num;
}

static int64_t attr_id(struct otlp_builder *b, const struct otlp_attr *k)
{
	uint32_t h = (uint32_t)mix(mix(mix(1, k->key), k->str), (uint64_t)k->num + k->is_int);

	return INTERN(b, &b->attrs, h, attr_eq, k);
}

/* A string attribute's index; 0 (none) for an empty value. */
static int64_t attr_str(struct otlp_builder *b, const char *key, const char *value)
{
	struct otlp_attr k = { 0 };
	int64_t ks, vs;

	if (!value || !*value)
		return 0;
	ks = str_id(b, key);
	vs = str_id(b, value);
	if (ks < 0 || vs < 0)
		return ks < 0 ? ks : vs;
	k.key = ks;
	k.str = vs;
	return attr_id(b, &k);
}

static bool func_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct otlp_func *f = &((const struct otlp_builder *)ctx)->funcs.v[idx], *k = key;

	return f->name == k->name && f->file == k->file && f->start_line == k->start_line;
}

static int64_t func_intern(struct otlp_builder *b, const struct otlp_func *k)
{
	uint32_t h = (uint32_t)mix(mix(mix(2, k->name), k->file), k->start_line);

	return INTERN(b, &b->funcs, h, func_eq, k);
}

static int64_t func_id(struct otlp_builder *b, const char *name, const char *file,
		       int64_t start_line)
{
	int64_t n = str_id(b, name), fl = str_id(b, file);
	struct otlp_func k;

	if (n < 0 || fl < 0)
		return n < 0 ? n : fl;
	k = (struct otlp_func){ .name = n, .file = fl, .start_line = start_line };
	return func_intern(b, &k);
}

/*
 * A frame's function name: a runtime's frame (Python's, Java's) by its
 * method's own name; its label, "method (File.java:LINE)", is the folded
 * output's, and as a function name would make each line a function.
 */
static const char *func_name(const struct sw_frame *f)
{
	return f->python && f->function ? f->function : f->name;
}

/* A frame's function: a user one where DWARF declares it, else in its object. */
static int64_t frame_func(struct otlp_builder *b, const struct sw_frame *f)
{
	switch (f->kind) {
	case SW_KERNEL:
		return func_id(b, f->name, f->module ? f->module : KERNEL_MAPPING_NAME, 0);
	case SW_USER:
		if (f->decl_file)
			return func_id(b, func_name(f), f->decl_file, f->decl_line);
		if (!f->mapped || f->python)
			return func_id(b, func_name(f), NULL, 0);
		return func_id(b, f->name, f->path ? f->path : f->module, 0);
	default: /* "[truncated]" */
		return func_id(b, f->name, NULL, 0);
	}
}

static bool map_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct otlp_mapping *m = &((const struct otlp_builder *)ctx)->maps.v[idx], *k = key;

	return m->start == k->start && m->limit == k->limit && m->offset == k->offset &&
	       m->file == k->file && m->build_id_attr == k->build_id_attr;
}

static int64_t map_id(struct otlp_builder *b, const struct otlp_mapping *k)
{
	uint32_t h =
		(uint32_t)mix(mix(mix(mix(3, k->start), k->offset), k->file), k->build_id_attr);

	return INTERN(b, &b->maps, h, map_eq, k);
}

/* Kernel frames: one mapping with the running kernel's build-id, no range. */
static int64_t kernel_map_id(struct otlp_builder *b)
{
	struct otlp_mapping k = { 0 };
	int64_t f, a, id;

	if (b->kernel_map)
		return b->kernel_map;
	f = str_id(b, KERNEL_MAPPING_NAME);
	a = attr_str(b, BUILD_ID_KEY, b->kernel_build_id);
	if (f < 0 || a < 0)
		return f < 0 ? f : a;
	k.file = f;
	k.build_id_attr = a;
	id = map_id(b, &k);
	if (id > 0)
		b->kernel_map = id;
	return id;
}

/* A user frame's mapping, as the symbolizer snapshotted it; else just the file. */
static int64_t user_map_id(struct otlp_builder *b, const struct sw_frame *f)
{
	struct otlp_mapping k = { 0 };
	int64_t fl, a = 0;

	if (!f->mapped)
		return 0;
	if (f->map_end > f->map_start) {
		k.start = f->map_start;
		k.limit = f->map_end;
		k.offset = f->map_offset;
		a = attr_str(b, BUILD_ID_KEY, f->build_id);
	}
	fl = str_id(b, f->path ? f->path : f->module);
	if (fl < 0 || a < 0)
		return fl < 0 ? fl : a;
	k.file = fl;
	k.build_id_attr = a;
	return map_id(b, &k);
}

/* ---- locations ------------------------------------------------------------------------ */

static bool loc_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct otlp_builder *b = ctx;
	const struct otlp_location *l = &b->locs.v[idx], *k = key;
	const struct otlp_line *x = b->lines.v + l->off, *y = b->lines.v + k->off;
	size_t i;

	if (l->addr != k->addr || l->mapping != k->mapping || l->type_attr != k->type_attr ||
	    l->n != k->n)
		return false;
	for (i = 0; i < k->n; i++) {
		if (x[i].func != y[i].func || x[i].line != y[i].line)
			return false;
	}
	return true;
}

/* A location's hash but for its lines, which place_frames() mixes in. */
static uint64_t loc_hash_head(const struct otlp_location *k)
{
	return mix(mix(mix(mix(4, k->mapping), k->addr), k->type_attr), k->n);
}

/*
 * A runtime's frames' type, in OpenTelemetry's words for it (the semantic
 * conventions' profile.frame.type: "cpython", "jvm", "v8js", "php", "ruby", "perl").
 */
static int64_t runtime_attr(struct otlp_builder *b, const char *runtime)
{
	if (runtime && !strcmp(runtime, "python"))
		return attr_str(b, "profile.frame.type", "cpython");
	if (runtime && !strcmp(runtime, "java"))
		return attr_str(b, "profile.frame.type", "jvm");
	if (runtime && !strcmp(runtime, "js"))
		return attr_str(b, "profile.frame.type", "v8js");
	if (runtime && !strcmp(runtime, "php"))
		return attr_str(b, "profile.frame.type", "php");
	if (runtime && !strcmp(runtime, "ruby"))
		return attr_str(b, "profile.frame.type", "ruby");
	if (runtime && !strcmp(runtime, "perl"))
		return attr_str(b, "profile.frame.type", "perl");
	return b->attr_native;
}

/*
 * The location of frames[0 .. n): a frame and the functions inlined at its
 * address, outermost first. Its lines are written at the end of the pool
 * and kept only if the location is new.
 */
static int64_t place_frames(struct otlp_builder *b, const struct sw_frame *frames, size_t n)
{
	const struct sw_frame *f = &frames[0];
	struct otlp_location k = { .addr = f->addr, .off = b->lines.n, .n = n };
	struct otlp_line *lines;
	int64_t map = 0, fn, id;
	size_t i, before;
	uint64_t h;

	if (f->kind == SW_KERNEL) {
		map = kernel_map_id(b);
		k.type_attr = b->attr_kernel;
	} else if (f->kind == SW_USER) {
		map = user_map_id(b, f);
		k.type_attr = f->python ? runtime_attr(b, f->module) : b->attr_native;
		if (k.type_attr < 0)
			return k.type_attr;
	} else { /* "[truncated]": no address, no mapping */
		k.addr = 0;
	}
	if (map < 0)
		return map;
	k.mapping = map;
	if (VEC_RESERVE(b->lines.v, b->lines.cap, b->lines.n + n, 1024))
		return -ENOMEM;
	h = loc_hash_head(&k);
	for (i = 0; i < n; i++) {
		fn = frame_func(b, &frames[n - 1 - i]);
		if (fn < 0)
			return fn;
		lines = &b->lines.v[b->lines.n + i];
		*lines = (struct otlp_line){ .func = fn, .line = frames[n - 1 - i].line };
		h = mix(mix(h, lines->func), lines->line);
	}
	before = b->locs.n;
	id = INTERN(b, &b->locs, (uint32_t)h, loc_eq, &k);
	if (id >= 0 && b->locs.n > before)
		b->lines.n += n;
	return id;
}

/* The outermost function's name of a location: the name its frames were placed by. */
static const char *loc_name(const struct otlp_builder *b, int32_t loc)
{
	const struct otlp_location *l = &b->locs.v[loc];

	return b->strs.strs[b->funcs.v[b->lines.v[l->off + l->n - 1].func].name];
}

static bool frame_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct otlp_builder *b = ctx;
	const struct otlp_frame *f = &b->frames.v[idx], *k = key;

	/* A name the string table cleaned never matches: placed again, deduplicated then. */
	return f->addr == k->addr && f->pid == k->pid && f->kind == k->kind && f->n == k->n &&
	       !strcmp(loc_name(b, f->loc), k->name);
}

/* Location of frames[0 .. n) (as place_frames()); frames met before skip every lookup. */
static int64_t frame_loc(struct otlp_builder *b, uint32_t pid, const struct sw_frame *frames,
			 size_t n)
{
	const struct sw_frame *f = &frames[0];
	struct otlp_frame k = { .addr = f->addr,
				.pid = f->kind == SW_KERNEL ? 0 : pid,
				.kind = f->kind,
				.n = n,
				.name = func_name(f) ? func_name(f) : "" };
	uint32_t h =
		(uint32_t)mix(mix(mix(mix(mix(5, k.addr), k.pid), k.kind), n), hash__str(k.name));
	int64_t id = hashmap__find(&b->frames.ix, h, frame_eq, b, &k), loc;

	if (id >= 0)
		return b->frames.v[id].loc;
	loc = place_frames(b, frames, n);
	if (loc < 0)
		return loc;
	k.loc = loc;
	k.name = NULL; /* raw names live during the callback only */
	if (VEC_RESERVE(b->frames.v, b->frames.cap, b->frames.n + 1, 1024) ||
	    hashmap__add(&b->frames.ix, h, b->frames.n))
		return -ENOMEM;
	b->frames.v[b->frames.n++] = k;
	return loc;
}

/* ---- stacks, resources, samples ------------------------------------------------------- */

static bool stack_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct otlp_builder *b = ctx;
	const struct otlp_stack *s = &b->stacks.v[idx], *k = key;

	return s->n == k->n && !memcmp(b->stack_locs.v + s->off, b->stack_locs.v + k->off,
				       k->n * sizeof(*b->stack_locs.v));
}

/* The stack of the n locations at the end of the pool, which stay only if it is new. */
static int64_t stack_id(struct otlp_builder *b, size_t n)
{
	struct otlp_stack k = { .off = b->stack_locs.n, .n = n };
	uint32_t h = (uint32_t)hash__bytes(b->stack_locs.v + k.off, n * sizeof(*b->stack_locs.v));
	size_t before = b->stacks.n;
	int64_t id = INTERN(b, &b->stacks, h, stack_eq, &k);

	if (id >= 0 && b->stacks.n > before)
		b->stack_locs.n += n;
	return id;
}

static bool res_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct otlp_resource *r = &((const struct otlp_builder *)ctx)->res.v[idx], *k = key;

	return r->pid == k->pid && r->cgroup_id == k->cgroup_id;
}

static int64_t res_id(struct otlp_builder *b, const struct sw_stack *st)
{
	struct otlp_resource k = {
		.pid = st->pid, .cgroup_id = st->cgroup_id, .first = -1, .last = -1
	};
	int64_t comm = str_id(b, st->frames[0].name), exe = 0;
	const char *path = st->exe;

	if (path && *path)
		exe = str_id(b, path);
	if (comm < 0 || exe < 0)
		return comm < 0 ? comm : exe;
	k.comm = comm; /* kept from the resource's first stack */
	k.exe = exe;
	return INTERN(b, &b->res, (uint32_t)mix(mix(6, k.pid), k.cgroup_id), res_eq, &k);
}

/* Samples are identified by (resource, stack, attributes): equal ones add up. */
static bool sample_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct otlp_sample *s = &((const struct otlp_builder *)ctx)->samples.v[idx], *k = key;

	return s->res == k->res && s->stack == k->stack && s->thread_attr == k->thread_attr;
}

static int64_t sample_id(struct otlp_builder *b, int32_t res, int32_t stack, int32_t thread)
{
	struct otlp_sample k = { .res = res, .stack = stack, .thread_attr = thread, .next = -1 };
	size_t before = b->samples.n;
	struct otlp_resource *r = &b->res.v[res];
	int64_t id = INTERN(b, &b->samples, (uint32_t)mix(mix(mix(7, res), stack), thread),
			    sample_eq, &k);

	if (id >= 0 && b->samples.n > before) { /* new: the resource's samples in order */
		if (r->last >= 0)
			b->samples.v[r->last].next = id;
		else
			r->first = id;
		r->last = id;
	}
	return id;
}

static int add_sample(const struct sw_stack *st, void *ctx)
{
	struct otlp_builder *b = ctx;
	size_t n = 0, i, j;
	int64_t r, s, t, loc;

	if (!st->count && !st->weight)
		return 0;
	/*
	 * Leaf first; frames[0] is the comm: the thread.name attribute. A frame
	 * and those inlined into it (after it, at its address) are one location.
	 */
	for (i = st->nr_frames - 1; i >= 1; i = j - 1) {
		for (j = i; j > 1 && st->frames[j].inlined; j--)
			;
		loc = frame_loc(b, st->pid, &st->frames[j], i - j + 1);
		if (loc < 0)
			return loc;
		/* After frame_loc(): the pool's end is where its locations go. */
		if (VEC_RESERVE(b->stack_locs.v, b->stack_locs.cap, b->stack_locs.n + n + 1, 4096))
			return -ENOMEM;
		b->stack_locs.v[b->stack_locs.n + n++] = loc;
	}
	s = stack_id(b, n);
	r = res_id(b, st);
	t = attr_str(b, "thread.name", st->frames[0].name);
	if (s < 0 || r < 0 || t < 0)
		return s < 0 ? s : r < 0 ? r : t;
	s = sample_id(b, r, s, t);
	if (s < 0)
		return s;
	b->samples.v[s].value += b->o.po.value_from_weight ?
					 (int64_t)st->weight * b->o.po.weight_scale :
					 (int64_t)st->count;
	return 0;
}

/* ---- setup ---------------------------------------------------------------------------- */

/* Every dictionary table's entry 0 is its zero value; looking a zero value up finds it. */
static int zero_entries(struct otlp_builder *b)
{
	static const struct otlp_attr attr0;
	static const struct otlp_func func0;
	static const struct otlp_mapping map0;
	static const struct otlp_location loc0;
	static const struct otlp_stack stack0;

	if (attr_id(b, &attr0) || func_intern(b, &func0) || map_id(b, &map0) ||
	    INTERN(b, &b->locs, (uint32_t)loc_hash_head(&loc0), loc_eq, &loc0) ||
	    INTERN(b, &b->stacks, (uint32_t)hash__bytes(NULL, 0), stack_eq, &stack0))
		return -ENOMEM;
	return 0;
}

/* The options' defaults, the tables' zero entries, the strings every profile header needs. */
static int builder__init(struct otlp_builder *b, const struct otlp_opts *o)
{
	int64_t ids[4];

	b->o = *o;
	if (!b->o.po.type)
		b->o.po.type = "cpu";
	if (!b->o.po.unit)
		b->o.po.unit = "nanoseconds";
	if (!b->o.po.weight_scale)
		b->o.po.weight_scale = 1;
	b->period = b->o.po.period;
	if (!b->period && b->o.po.freq && !b->o.po.value_from_weight)
		b->period = 1000000000LL / b->o.po.freq;
	if (!b->period && !b->o.po.value_from_weight)
		return -EINVAL;
	if (!b->o.po.time_nanos)
		b->o.po.time_nanos = clock__wall_ns() - b->o.po.duration_nanos;
	/* The pools are never NULL: lookups compare their (empty) ends with memcmp(). */
	if (strtab__init(&b->strs) || VEC_RESERVE(b->lines.v, b->lines.cap, 1, 1024) ||
	    VEC_RESERVE(b->stack_locs.v, b->stack_locs.cap, 1, 4096) || zero_entries(b))
		return -ENOMEM;
	ids[0] = str_id(b, "samples");
	ids[1] = str_id(b, "count");
	ids[2] = str_id(b, b->o.po.type);
	ids[3] = str_id(b, b->o.po.unit);
	if (ids[0] < 0 || ids[1] < 0 || ids[2] < 0 || ids[3] < 0)
		return -ENOMEM;
	b->s_samples = ids[0];
	b->s_count = ids[1];
	b->s_type = ids[2];
	b->s_unit = ids[3];
	ids[0] = attr_str(b, "profile.frame.type", "kernel");
	ids[1] = attr_str(b, "profile.frame.type", "native");
	if (ids[0] < 0 || ids[1] < 0)
		return -ENOMEM;
	b->attr_kernel = ids[0];
	b->attr_native = ids[1];
	ksyms__kernel_build_id(b->kernel_build_id);
	return 0;
}

#define FREE_TABLE(t)                    \
	do {                             \
		free((t)->v);            \
		hashmap__free(&(t)->ix); \
	} while (0)

static void builder__free(struct otlp_builder *b)
{
	strtab__free(&b->strs);
	FREE_TABLE(&b->attrs);
	FREE_TABLE(&b->funcs);
	FREE_TABLE(&b->maps);
	FREE_TABLE(&b->locs);
	FREE_TABLE(&b->stacks);
	FREE_TABLE(&b->frames);
	FREE_TABLE(&b->samples);
	FREE_TABLE(&b->res);
	free(b->lines.v);
	free(b->stack_locs.v);
}

int otlp__encode(const struct snapshot *snap, const struct otlp_opts *opts, void **data,
		 size_t *size)
{
	struct otlp_builder b = {};
	struct pbw w = {};
	int err;

	*data = NULL;
	*size = 0;
	err = builder__init(&b, opts);
	if (!err)
		err = snapshot__for_each(snap, add_sample, &b);
	if (!err) {
		otlp_put_request(&w, &b);
		err = w.err;
	}
	builder__free(&b);
	if (err) {
		pbw_free(&w);
		return err;
	}
	*data = w.buf;
	*size = w.len;
	return 0;
}
