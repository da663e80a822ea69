// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OTLP profiles writer (see otlp.h). The dictionary and the samples are
 * gathered first, every table deduplicated through util/hashmap.h over the
 * builder's own arrays; the request is then written in one pass with the
 * wire writer (pbwire.h). Field numbers are those of proto/otlp/.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "output/otlp.h"
#include "output/pbwire.h"
#include "procs/cgroups.h"
#include "procs/mapinfo.h"
#include "profile/aggregate.h"
#include "profile/stackwalk.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/utf8.h"
#include "util/vec.h"

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"
#define SCOPE_NAME "sfbpf"

/* ---- the dictionary's entries ------------------------------------------------------- */

struct attr {
	int32_t key; /* string index */
	int32_t str; /* string value's index, if !is_int */
	int64_t num;
	bool is_int;
};

struct func {
	int32_t name, file;
};

struct mapping {
	uint64_t start, limit, offset;
	int32_t file, build_id_attr;
};

struct location {
	int32_t mapping, func, type_attr;
	uint64_t addr;
};

struct stack {
	size_t off, n; /* in the builder's pool of location indices */
};

/*
 * A frame placed before: (pid, address, kind, name). The name matters:
 * functions inlined at an address are frames of their own at that address.
 */
struct frame_key {
	uint64_t addr;
	uint32_t pid, kind;
	int32_t loc;
	const char *name; /* lookups only: compared with the location's function name */
};

struct sample {
	int32_t res, stack, thread_attr;
	int32_t next; /* the resource's next sample; -1: last */
	int64_t value;
};

struct resource {
	uint32_t pid;
	uint64_t cgroup_id;
	int32_t comm; /* string index: the executable name when /proc has none */
	int32_t first, last; /* samples */
};

struct builder {
	struct otlp_opts o;
	int64_t period;
	struct mapinfo *mi;
	char **strs;
	size_t nstrs, strs_cap;
	struct hashmap str_ix;
	struct attr *attrs;
	size_t nattrs, attrs_cap;
	struct hashmap attr_ix;
	struct func *funcs;
	size_t nfuncs, funcs_cap;
	struct hashmap func_ix;
	struct mapping *maps;
	size_t nmaps, maps_cap;
	struct hashmap map_ix;
	struct location *locs;
	size_t nlocs, locs_cap;
	struct hashmap loc_ix;
	int32_t *pool; /* the stacks' location indices */
	size_t npool, pool_cap;
	struct stack *stacks;
	size_t nstacks, stacks_cap;
	struct hashmap stack_ix;
	struct frame_key *frames;
	size_t nframes, frames_cap;
	struct hashmap frame_ix;
	struct sample *samples;
	size_t nsamples, samples_cap;
	struct hashmap sample_ix;
	struct resource *res;
	size_t nres, res_cap;
	struct hashmap res_ix;
	int32_t *scratch; /* one stack's locations while it is looked up */
	size_t scratch_cap;
	int32_t kernel_map, attr_kernel, attr_native;
	int32_t s_samples, s_count, s_type, s_unit; /* the profile's value types */
	char kernel_build_id[MAPINFO_BUILD_ID_HEX];
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return hash__mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/* Index of the new entry at *n of arr (zeroed), or -ENOMEM; the caller fills it. */
static int64_t append(void *arr, size_t *cap, size_t *n, size_t sz)
{
	if (vec__reserve(arr, cap, *n + 1, sz, 256))
		return -ENOMEM;
	memset(*(char **)arr + *n * sz, 0, sz);
	if (*n >= INT32_MAX)
		return -E2BIG; /* indices are int32 on the wire */
	return (int64_t)(*n)++;
}

/* ---- strings ------------------------------------------------------------------------ */

static bool str_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct builder *b = ctx;

	return !strcmp(b->strs[idx], key);
}

/* Protobuf strings are UTF-8: invalid bytes become '?', control characters '_'. */
static char *utf8_dup(const char *s)
{
	char *d = strdup(s);
	size_t i, n;

	for (i = 0; d && d[i]; i += n) {
		n = utf8__seq_len((unsigned char *)d + i);
		if (!n)
			d[i] = '?';
		else if (n == 1 && ((unsigned char)d[i] < 0x20 || d[i] == 0x7f))
			d[i] = '_';
		n = n ? n : 1;
	}
	return d;
}

static int64_t str_id(struct builder *b, const char *s)
{
	uint32_t h;
	int64_t id;
	char *copy;

	if (!s || !*s)
		return 0;
	h = (uint32_t)hash__str(s);
	id = hashmap__find(&b->str_ix, h, str_eq, b, s);
	if (id >= 0)
		return id;
	copy = utf8_dup(s);
	if (!copy)
		return -ENOMEM;
	id = append(&b->strs, &b->strs_cap, &b->nstrs, sizeof(*b->strs));
	if (id < 0 || hashmap__add(&b->str_ix, h, id)) {
		free(copy);
		if (id >= 0)
			b->nstrs--;
		return id < 0 ? id : -ENOMEM;
	}
	b->strs[id] = copy;
	return id;
}

/* ---- attributes, functions, mappings, locations -------------------------------------- */

static bool attr_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct attr *a = &((const struct builder *)ctx)->attrs[idx], *k = key;

	return a->key == k->key && a->is_int == k->is_int && a->str == k->str && a->num == k->num;
}

static int64_t attr_add(struct builder *b, const struct attr *k)
{
	uint32_t h = (uint32_t)mix(mix(mix(1, k->key), k->str), (uint64_t)k->num + k->is_int);
	int64_t id = hashmap__find(&b->attr_ix, h, attr_eq, b, k);

	if (id >= 0)
		return id;
	id = append(&b->attrs, &b->attrs_cap, &b->nattrs, sizeof(*b->attrs));
	if (id < 0)
		return id;
	b->attrs[id] = *k;
	return hashmap__add(&b->attr_ix, h, id) ? -ENOMEM : id;
}

/* A string attribute's index; 0 (none) for an empty value. */
static int64_t attr_str(struct builder *b, const char *key, const char *value)
{
	struct attr k = { 0 };
	int64_t ks, vs;

	if (!value || !*value)
		return 0;
	ks = str_id(b, key);
	vs = str_id(b, value);
	if (ks < 0 || vs < 0)
		return -ENOMEM;
	k.key = ks;
	k.str = vs;
	return attr_add(b, &k);
}

static bool func_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct func *f = &((const struct builder *)ctx)->funcs[idx], *k = key;

	return f->name == k->name && f->file == k->file;
}

static int64_t func_id(struct builder *b, const char *name, const char *file)
{
	int64_t n = str_id(b, name), fl = str_id(b, file), id;
	struct func k;
	uint32_t h;

	if (n < 0 || fl < 0)
		return -ENOMEM;
	k = (struct func){ n, fl };
	h = (uint32_t)mix(mix(2, n), fl);
	id = hashmap__find(&b->func_ix, h, func_eq, b, &k);
	if (id >= 0)
		return id;
	id = append(&b->funcs, &b->funcs_cap, &b->nfuncs, sizeof(*b->funcs));
	if (id < 0)
		return id;
	b->funcs[id] = k;
	return hashmap__add(&b->func_ix, h, id) ? -ENOMEM : id;
}

static bool map_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct mapping *m = &((const struct builder *)ctx)->maps[idx], *k = key;

	return m->start == k->start && m->limit == k->limit && m->offset == k->offset &&
	       m->file == k->file && m->build_id_attr == k->build_id_attr;
}

static int64_t map_id(struct builder *b, const struct mapping *k)
{
	uint32_t h = (uint32_t)mix(mix(mix(mix(3, k->start), k->offset), k->file),
				   k->build_id_attr);
	int64_t id = hashmap__find(&b->map_ix, h, map_eq, b, k);

	if (id >= 0)
		return id;
	id = append(&b->maps, &b->maps_cap, &b->nmaps, sizeof(*b->maps));
	if (id < 0)
		return id;
	b->maps[id] = *k;
	return hashmap__add(&b->map_ix, h, id) ? -ENOMEM : id;
}

#define BUILD_ID_KEY "process.executable.build_id.gnu"

/* Kernel frames: one mapping with the running kernel's build-id, no range. */
static int64_t kernel_map_id(struct builder *b)
{
	struct mapping k = { 0 };
	int64_t f, a, id;

	if (b->kernel_map)
		return b->kernel_map;
	f = str_id(b, KERNEL_MAPPING_NAME);
	a = attr_str(b, BUILD_ID_KEY, b->kernel_build_id);
	if (f < 0 || a < 0)
		return -ENOMEM;
	k.file = f;
	k.build_id_attr = a;
	id = map_id(b, &k);
	if (id > 0)
		b->kernel_map = id;
	return id;
}

/* A user frame's mapping: the live process's range, else just the file. */
static int64_t user_map_id(struct builder *b, uint32_t pid, const struct sw_frame *f)
{
	struct mapping k = { 0 };
	struct map_entry e;
	int64_t fl, a = 0;

	if (mapinfo__find(b->mi, pid, f->addr, &e) == 0 &&
	    !strcmp(e.path, f->path ? f->path : "")) {
		k.start = e.start;
		k.limit = e.end;
		k.offset = e.offset;
		a = attr_str(b, BUILD_ID_KEY, e.build_id);
	}
	fl = str_id(b, f->path ? f->path : f->module);
	if (fl < 0 || a < 0)
		return -ENOMEM;
	k.file = fl;
	k.build_id_attr = a;
	return map_id(b, &k);
}

static bool loc_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct location *l = &((const struct builder *)ctx)->locs[idx], *k = key;

	return l->mapping == k->mapping && l->addr == k->addr && l->func == k->func &&
	       l->type_attr == k->type_attr;
}

static int64_t loc_id(struct builder *b, int64_t map, uint64_t addr, int64_t func, int32_t type)
{
	struct location k;
	uint32_t h;
	int64_t id;

	if (map < 0 || func < 0)
		return map < 0 ? map : func;
	k = (struct location){ .mapping = map, .func = func, .type_attr = type, .addr = addr };
	h = (uint32_t)mix(mix(mix(mix(4, map), addr), func), type);
	id = hashmap__find(&b->loc_ix, h, loc_eq, b, &k);
	if (id >= 0)
		return id;
	id = append(&b->locs, &b->locs_cap, &b->nlocs, sizeof(*b->locs));
	if (id < 0)
		return id;
	b->locs[id] = k;
	return hashmap__add(&b->loc_ix, h, id) ? -ENOMEM : id;
}

static int64_t place_frame(struct builder *b, uint32_t pid, const struct sw_frame *f)
{
	const char *file;

	switch (f->kind) {
	case SW_KERNEL:
		file = f->module ? f->module : KERNEL_MAPPING_NAME;
		return loc_id(b, kernel_map_id(b), f->addr, func_id(b, f->name, file),
			      b->attr_kernel);
	case SW_USER:
		if (!f->mapped)
			return loc_id(b, 0, f->addr, func_id(b, f->name, NULL), b->attr_native);
		file = f->path ? f->path : f->module;
		return loc_id(b, user_map_id(b, pid, f), f->addr, func_id(b, f->name, file),
			      b->attr_native);
	default: /* "[truncated]": no address, no mapping */
		return loc_id(b, 0, 0, func_id(b, f->name, NULL), 0);
	}
}

static bool frame_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct builder *b = ctx;
	const struct frame_key *f = &b->frames[idx], *k = key;

	/* A name utf8_dup() changed never matches: placed again, deduplicated by loc_id(). */
	return f->addr == k->addr && f->pid == k->pid && f->kind == k->kind &&
	       !strcmp(b->strs[b->funcs[b->locs[f->loc].func].name], k->name);
}

/* A frame met before (most are) skips the symbol, mapping and string lookups. */
static int64_t frame_loc(struct builder *b, uint32_t pid, const struct sw_frame *f)
{
	struct frame_key k = { .addr = f->addr,
			       .pid = f->kind == SW_KERNEL ? 0 : pid,
			       .kind = f->kind,
			       .name = f->name ? f->name : "" };
	uint32_t h = (uint32_t)mix(mix(mix(mix(5, k.addr), k.pid), k.kind), hash__str(k.name));
	int64_t id = hashmap__find(&b->frame_ix, h, frame_eq, b, &k), loc;

	if (id >= 0)
		return b->frames[id].loc;
	loc = place_frame(b, pid, f);
	if (loc < 0)
		return loc;
	id = append(&b->frames, &b->frames_cap, &b->nframes, sizeof(*b->frames));
	if (id < 0)
		return id;
	k.loc = loc;
	k.name = NULL;
	b->frames[id] = k;
	return hashmap__add(&b->frame_ix, h, id) ? -ENOMEM : loc;
}

/* ---- stacks, resources, samples ------------------------------------------------------ */

struct stack_key {
	const int32_t *locs;
	size_t n;
};

static bool stack_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct builder *b = ctx;
	const struct stack *s = &b->stacks[idx];
	const struct stack_key *k = key;

	return s->n == k->n && !memcmp(b->pool + s->off, k->locs, k->n * sizeof(*k->locs));
}

static int64_t stack_id(struct builder *b, const int32_t *locs, size_t n)
{
	struct stack_key k = { locs, n };
	uint32_t h = (uint32_t)hash__bytes(locs, n * sizeof(*locs));
	int64_t id = hashmap__find(&b->stack_ix, h, stack_eq, b, &k);

	if (id >= 0)
		return id;
	if (VEC_RESERVE(b->pool, b->pool_cap, b->npool + n, 4096))
		return -ENOMEM;
	id = append(&b->stacks, &b->stacks_cap, &b->nstacks, sizeof(*b->stacks));
	if (id < 0)
		return id;
	memcpy(b->pool + b->npool, locs, n * sizeof(*locs));
	b->stacks[id] = (struct stack){ b->npool, n };
	b->npool += n;
	return hashmap__add(&b->stack_ix, h, id) ? -ENOMEM : id;
}

static bool res_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct resource *r = &((const struct builder *)ctx)->res[idx], *k = key;

	return r->pid == k->pid && r->cgroup_id == k->cgroup_id;
}

static int64_t res_id(struct builder *b, const struct sw_stack *st)
{
	struct resource k = { .pid = st->pid, .cgroup_id = st->raw ? st->raw->cgroup_id : 0 };
	uint32_t h = (uint32_t)mix(mix(6, k.pid), k.cgroup_id);
	int64_t id = hashmap__find(&b->res_ix, h, res_eq, b, &k), comm;

	if (id >= 0)
		return id;
	comm = str_id(b, st->frames[0].name);
	if (comm < 0)
		return comm;
	id = append(&b->res, &b->res_cap, &b->nres, sizeof(*b->res));
	if (id < 0)
		return id;
	k.comm = comm;
	k.first = k.last = -1;
	b->res[id] = k;
	return hashmap__add(&b->res_ix, h, id) ? -ENOMEM : id;
}

/* Samples are identified by (resource, stack, attributes): equal ones add up. */
struct sample_key {
	int32_t res, stack, thread_attr;
};

static bool sample_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct builder *b = ctx;
	const struct sample *s = &b->samples[idx];
	const struct sample_key *k = key;

	return s->res == k->res && s->stack == k->stack && s->thread_attr == k->thread_attr;
}

static int add_sample(const struct sw_stack *st, void *ctx)
{
	struct builder *b = ctx;
	size_t n = 0, i;
	int64_t r, s, t, id, loc;
	struct sample_key k;
	struct resource *res;
	uint32_t h;

	if (!st->count && !st->weight)
		return 0;
	if (VEC_RESERVE(b->scratch, b->scratch_cap, st->nr_frames, 256))
		return -ENOMEM;
	/* Leaf first; frames[0] is the comm: the thread.name attribute. */
	for (i = st->nr_frames - 1; i >= 1; i--) {
		loc = frame_loc(b, st->pid, &st->frames[i]);
		if (loc < 0)
			return loc;
		b->scratch[n++] = loc;
	}
	s = stack_id(b, b->scratch, n);
	r = res_id(b, st);
	t = attr_str(b, "thread.name", st->frames[0].name);
	if (s < 0 || r < 0 || t < 0)
		return s < 0 ? s : r < 0 ? r : t;
	k = (struct sample_key){ r, s, t };
	h = (uint32_t)mix(mix(mix(7, r), s), t);
	res = &b->res[r];
	id = hashmap__find(&b->sample_ix, h, sample_eq, b, &k);
	if (id < 0) {
		id = append(&b->samples, &b->samples_cap, &b->nsamples, sizeof(*b->samples));
		if (id < 0 || hashmap__add(&b->sample_ix, h, id))
			return id < 0 ? id : -ENOMEM;
		b->samples[id] = (struct sample){ .res = r, .stack = s, .thread_attr = t, .next = -1 };
		if (res->last >= 0)
			b->samples[res->last].next = id;
		else
			res->first = id;
		res->last = id;
	}
	b->samples[id].value += b->o.po.value_from_weight ?
					(int64_t)st->weight * b->o.po.weight_scale :
					(int64_t)st->count;
	return 0;
}

/* ---- the request --------------------------------------------------------------------- */

static void packed(struct pbw *w, unsigned field, const int32_t *v, size_t n)
{
	size_t m, i;

	if (!n)
		return;
	m = pbw_begin(w, field);
	for (i = 0; i < n; i++)
		pbw_varint(w, (uint64_t)(int64_t)v[i]);
	pbw_end(w, m);
}

static void put_attr(struct pbw *w, const struct builder *b, const struct attr *a)
{
	size_t m = pbw_begin(w, 6), v; /* attribute_table */

	pbw_int(w, 1, a->key);
	v = pbw_begin(w, 2); /* AnyValue */
	if (a->is_int)
		pbw_uint_always(w, 3, (uint64_t)a->num);
	else
		pbw_str_always(w, 1, b->strs[a->str]);
	pbw_end(w, v);
	pbw_end(w, m);
}

static void put_dictionary(struct pbw *w, const struct builder *b)
{
	static const uint8_t zero_ids[24];
	size_t d = pbw_begin(w, 2), m, l, i;

	pbw_end(w, pbw_begin(w, 1)); /* mapping_table[0] = Mapping{} */
	for (i = 1; i < b->nmaps; i++) {
		const struct mapping *mp = &b->maps[i];

		m = pbw_begin(w, 1);
		pbw_uint(w, 1, mp->start);
		pbw_uint(w, 2, mp->limit);
		pbw_uint(w, 3, mp->offset);
		pbw_int(w, 4, mp->file);
		packed(w, 5, &mp->build_id_attr, mp->build_id_attr ? 1 : 0);
		pbw_end(w, m);
	}
	pbw_end(w, pbw_begin(w, 2)); /* location_table[0] */
	for (i = 1; i < b->nlocs; i++) {
		const struct location *lc = &b->locs[i];

		m = pbw_begin(w, 2);
		pbw_int(w, 1, lc->mapping);
		pbw_uint(w, 2, lc->addr);
		l = pbw_begin(w, 3); /* one Line: inlined frames are not told apart */
		pbw_int(w, 1, lc->func);
		pbw_end(w, l);
		packed(w, 4, &lc->type_attr, lc->type_attr ? 1 : 0);
		pbw_end(w, m);
	}
	pbw_end(w, pbw_begin(w, 3)); /* function_table[0] */
	for (i = 1; i < b->nfuncs; i++) {
		m = pbw_begin(w, 3);
		pbw_int(w, 1, b->funcs[i].name);
		pbw_int(w, 2, b->funcs[i].name); /* no demangling: the system name is the name */
		pbw_int(w, 3, b->funcs[i].file);
		pbw_end(w, m);
	}
	/* link_table[0]: the all-zero ids of their full lengths, as the schema advises. */
	m = pbw_begin(w, 4);
	pbw_bytes(w, 1, zero_ids, 16);
	pbw_bytes(w, 2, zero_ids, 8);
	pbw_end(w, m);
	for (i = 0; i < b->nstrs; i++)
		pbw_str_always(w, 5, b->strs[i]);
	pbw_end(w, pbw_begin(w, 6)); /* attribute_table[0] */
	for (i = 1; i < b->nattrs; i++)
		put_attr(w, b, &b->attrs[i]);
	pbw_end(w, pbw_begin(w, 7)); /* stack_table[0] */
	for (i = 1; i < b->nstacks; i++) {
		m = pbw_begin(w, 7);
		packed(w, 1, b->pool + b->stacks[i].off, b->stacks[i].n);
		pbw_end(w, m);
	}
	pbw_end(w, d);
}

static void kv_str(struct pbw *w, const char *key, const char *value)
{
	size_t m, v;
	char *clean;

	if (!value || !*value)
		return;
	clean = utf8_dup(value);
	if (!clean) {
		w->err = -ENOMEM;
		return;
	}
	m = pbw_begin(w, 1); /* Resource.attributes */
	pbw_str(w, 1, key);
	v = pbw_begin(w, 2);
	pbw_str_always(w, 1, clean);
	pbw_end(w, v);
	pbw_end(w, m);
	free(clean);
}

static void kv_int(struct pbw *w, const char *key, int64_t value)
{
	size_t m = pbw_begin(w, 1), v;

	pbw_str(w, 1, key);
	v = pbw_begin(w, 2);
	pbw_uint_always(w, 3, (uint64_t)value);
	pbw_end(w, v);
	pbw_end(w, m);
}

/* The executable's file name from /proc, else the comm (the process is gone). */
static void exe_name(const struct builder *b, const struct resource *r, char *buf, size_t size)
{
	char link[64], path[PATH_MAX], *base;
	ssize_t n = -1;

	if (r->pid) {
		snprintf(link, sizeof(link), "/proc/%u/exe", r->pid);
		n = readlink(link, path, sizeof(path) - 1);
	}
	if (n <= 0) {
		snprintf(buf, size, "%s", b->strs[r->comm]);
		return;
	}
	path[n] = '\0';
	if (n > 10 && !strcmp(path + n - 10, " (deleted)"))
		path[n - 10] = '\0';
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(buf, size, "%.*s", (int)strnlen(base, size - 1), base);
}

static void put_resource(struct pbw *w, const struct builder *b, const struct resource *r)
{
	const struct pprof_opts *po = &b->o.po;
	const char *cg = NULL;
	struct cgroup_info ci;
	char exe[256], svc[300];
	size_t m;

	if (po->cgroup_path && r->cgroup_id)
		cg = po->cgroup_path(po->cgroup_ctx, r->cgroup_id);
	cgroups_parse_path(cg, &ci);
	exe_name(b, r, exe, sizeof(exe));
	if (ci.unit[0])
		snprintf(svc, sizeof(svc), "%s", ci.unit);
	else
		snprintf(svc, sizeof(svc), "unknown_service:%s", exe);
	m = pbw_begin(w, 1); /* Resource */
	kv_str(w, "host.name", b->o.hostname);
	kv_str(w, "service.name", svc);
	if (r->pid) /* the idle task is no process */
		kv_int(w, "process.pid", r->pid);
	kv_str(w, "process.executable.name", exe);
	kv_str(w, "container.id", ci.container_id);
	kv_str(w, "k8s.pod.uid", ci.pod_uid);
	for (size_t i = 0; i < po->nr_labels; i++)
		kv_str(w, po->labels[i].key, po->labels[i].value);
	pbw_end(w, m);
}

static void put_profile(struct pbw *w, const struct builder *b, const struct resource *r)
{
	const struct pprof_opts *po = &b->o.po;
	uint8_t id[16];
	size_t m, t, s;
	int32_t i;

	if (getrandom(id, sizeof(id), GRND_NONBLOCK) != sizeof(id)) {
		uint64_t x = hash__mix64((uint64_t)clock() ^ (uint64_t)getpid() << 32 ^
					 (uint64_t)(uintptr_t)r);

		memcpy(id, &x, 8);
		x = hash__mix64(x + (uint64_t)po->time_nanos);
		memcpy(id + 8, &x, 8);
	}
	m = pbw_begin(w, 2); /* ScopeProfiles.profiles */
	t = pbw_begin(w, 1); /* sample_type */
	pbw_int(w, 1, po->value_from_weight ? b->s_type : b->s_samples);
	pbw_int(w, 2, po->value_from_weight ? b->s_unit : b->s_count);
	pbw_end(w, t);
	for (i = r->first; i >= 0; i = b->samples[i].next) {
		s = pbw_begin(w, 2);
		pbw_int(w, 1, b->samples[i].stack);
		packed(w, 2, &b->samples[i].thread_attr, b->samples[i].thread_attr ? 1 : 0);
		t = pbw_begin(w, 4); /* values, packed */
		pbw_varint(w, (uint64_t)b->samples[i].value);
		pbw_end(w, t);
		pbw_end(w, s);
	}
	pbw_fixed64(w, 3, (uint64_t)po->time_nanos);
	pbw_uint(w, 4, (uint64_t)po->duration_nanos);
	if (b->period) {
		t = pbw_begin(w, 5);
		pbw_int(w, 1, b->s_type);
		pbw_int(w, 2, b->s_unit);
		pbw_end(w, t);
		pbw_int(w, 6, b->period);
	}
	pbw_bytes(w, 7, id, sizeof(id));
	pbw_end(w, m);
}

static void put_request(struct pbw *w, const struct builder *b)
{
	size_t rp, sp, sc, i;

	for (i = 0; i < b->nres; i++) {
		rp = pbw_begin(w, 1); /* resource_profiles */
		put_resource(w, b, &b->res[i]);
		sp = pbw_begin(w, 2); /* scope_profiles */
		sc = pbw_begin(w, 1);
		pbw_str(w, 1, SCOPE_NAME);
		pbw_end(w, sc);
		put_profile(w, b, &b->res[i]);
		pbw_end(w, sp);
		pbw_end(w, rp);
	}
	put_dictionary(w, b);
}

/* ---- setup --------------------------------------------------------------------------- */

/* Every entry 0 is its table's zero value; strings a profile header needs exist up front. */
static int builder__init(struct builder *b, const struct otlp_opts *o)
{
	struct timespec ts;
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
	if (!b->o.po.time_nanos && !clock_gettime(CLOCK_REALTIME, &ts))
		b->o.po.time_nanos = ts.tv_sec * 1000000000LL + ts.tv_nsec - b->o.po.duration_nanos;
	b->mi = mapinfo__new();
	if (!b->mi || append(&b->strs, &b->strs_cap, &b->nstrs, sizeof(*b->strs)) < 0 ||
	    append(&b->attrs, &b->attrs_cap, &b->nattrs, sizeof(*b->attrs)) < 0 ||
	    append(&b->funcs, &b->funcs_cap, &b->nfuncs, sizeof(*b->funcs)) < 0 ||
	    append(&b->maps, &b->maps_cap, &b->nmaps, sizeof(*b->maps)) < 0 ||
	    append(&b->locs, &b->locs_cap, &b->nlocs, sizeof(*b->locs)) < 0 ||
	    append(&b->stacks, &b->stacks_cap, &b->nstacks, sizeof(*b->stacks)) < 0)
		return -ENOMEM;
	b->strs[0] = strdup("");
	if (!b->strs[0])
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
	b->attr_kernel = attr_str(b, "profile.frame.type", "kernel");
	b->attr_native = attr_str(b, "profile.frame.type", "native");
	if (b->attr_kernel < 0 || b->attr_native < 0)
		return -ENOMEM;
	mapinfo__kernel_build_id(b->kernel_build_id);
	return 0;
}

static void builder__free(struct builder *b)
{
	size_t i;

	for (i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->attrs);
	free(b->funcs);
	free(b->maps);
	free(b->locs);
	free(b->pool);
	free(b->stacks);
	free(b->frames);
	free(b->samples);
	free(b->res);
	free(b->scratch);
	hashmap__free(&b->str_ix);
	hashmap__free(&b->attr_ix);
	hashmap__free(&b->func_ix);
	hashmap__free(&b->map_ix);
	hashmap__free(&b->loc_ix);
	hashmap__free(&b->stack_ix);
	hashmap__free(&b->frame_ix);
	hashmap__free(&b->sample_ix);
	hashmap__free(&b->res_ix);
	mapinfo__free(b->mi);
}

int otlp__encode(const struct aggregator *a, struct symbolizer *sym, const struct ksyms *ks,
		 const struct otlp_opts *opts, void **data, size_t *size)
{
	struct builder b = {};
	struct pbw w = {};
	int err;

	*data = NULL;
	*size = 0;
	err = builder__init(&b, opts);
	if (!err)
		err = stackwalk__for_each(a, sym, ks, add_sample, &b);
	if (!err) {
		put_request(&w, &b);
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

int otlp_gzip(const void *data, size_t size, void **out, size_t *out_size)
{
	z_stream z = {};
	uLong bound;
	void *buf;
	int ret;

	/* windowBits 15 + 16: a gzip header and trailer, as Content-Encoding: gzip wants. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, size) + 32;
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = size;
	z.next_out = buf;
	z.avail_out = bound;
	ret = deflate(&z, Z_FINISH);
	*out_size = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	return 0;
}
