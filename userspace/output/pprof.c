// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pprof writer (see pprof.h). The profile is built in memory as protobuf-c
 * messages, deduplicating strings, functions, mappings and locations through
 * hash tables, then packed straight into a gzip stream: the serialized profile
 * is never held whole in memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile/aggregate.h"
#include "output/outfile.h"
#include "output/pprof.h"
#include "output/strtab.h"
#include "symbols/ksyms.h"
#include "tables/elfobj.h"
#include "profile.pb-c.h"
#include "profile/snapshot.h"
#include "symbols/srcline.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/vec.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"

/* ---- hash keys: (util/hashmap.h indexes the builder's arrays) ------------------ */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

/* ---- builder ------------------------------------------------------------------ */

struct mapping {
	PbMapping pb;
	bool synthetic; /* range grown from the addresses seen (process gone) */
};

/* Lines, innermost first, and the pointers protobuf-c wants: one allocation, never moved. */
struct location {
	PbLocation pb;
	PbLine *lines;
};

/* A frame already placed: (pid, address, kind) -> location, skipping its lookups. */
struct frame_key {
	uint64_t addr;
	uint32_t pid;
	uint32_t kind;
	int64_t loc;
};

struct builder {
	struct pprof_opts opts;
	int64_t period;
	struct strtab strs;
	PbFunction *funcs;
	size_t nfuncs, funcs_cap;
	struct hashmap func_ix;
	struct mapping *maps;
	size_t nmaps, maps_cap;
	struct hashmap map_ix;
	struct location *locs;
	size_t nlocs, locs_cap;
	struct hashmap loc_ix;
	struct frame_key *frames;
	size_t nframes, frames_cap;
	struct hashmap frame_ix;
	PbSample *samples;
	size_t nsamples, samples_cap;
	PbLabel *extra_labels; /* shared by every sample */
	int64_t s_comm, s_pid, s_cgroup; /* label keys */
	int64_t kernel_map; /* its mapping id; 0: none yet */
	char kernel_build_id[ELFOBJ_BUILD_ID_HEX];
};

/* Index of s in the string table (output/strtab.h); negative errno. */
static int64_t str_id(struct builder *b, const char *s)
{
	return strtab__id(&b->strs, s);
}

/* ---- functions ------------------------------------------------------------------ */

static bool func_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct builder *b = ctx;
	const PbFunction *f = &b->funcs[idx], *k = key;

	return f->name == k->name && f->system_name == k->system_name &&
	       f->filename == k->filename && f->start_line == k->start_line;
}

/* Function id (1-based) for a name in a file, from its first line (0: unknown); negative errno. */
static int64_t func_id(struct builder *b, const char *name, const char *file, int64_t start_line)
{
	PbFunction key = PERFTOOLS__PROFILES__FUNCTION__INIT;
	uint64_t h;
	int64_t id;

	key.name = key.system_name = str_id(b, name);
	key.filename = str_id(b, file);
	key.start_line = start_line;
	if (key.name < 0 || key.filename < 0)
		return -ENOMEM;
	h = mix(mix(mix(1, key.name), key.filename), start_line);
	id = hashmap__find(&b->func_ix, (uint32_t)h, func_eq, b, &key);
	if (id >= 0)
		return id + 1;
	if (VEC_RESERVE(b->funcs, b->funcs_cap, b->nfuncs + 1, 256))
		return -ENOMEM;
	key.id = b->nfuncs + 1;
	b->funcs[b->nfuncs] = key;
	if (hashmap__add(&b->func_ix, (uint32_t)h, b->nfuncs))
		return -ENOMEM;
	return ++b->nfuncs;
}

/* ---- mappings ------------------------------------------------------------------- */

static bool map_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct builder *b = ctx;
	const struct mapping *m = &b->maps[idx], *k = key;

	if (m->synthetic != k->synthetic || m->pb.filename != k->pb.filename)
		return false;
	return m->synthetic ||
	       (m->pb.memory_start == k->pb.memory_start &&
		m->pb.memory_limit == k->pb.memory_limit &&
		m->pb.file_offset == k->pb.file_offset && m->pb.build_id == k->pb.build_id);
}

/* Mapping id (1-based) for key (filled but for id); negative errno. */
static int64_t map_id(struct builder *b, const struct mapping *key)
{
	uint64_t h = mix(mix(2, key->pb.filename), key->synthetic);
	int64_t id;

	if (!key->synthetic)
		h = mix(mix(mix(h, key->pb.memory_start), key->pb.file_offset), key->pb.build_id);
	id = hashmap__find(&b->map_ix, (uint32_t)h, map_eq, b, key);
	if (id >= 0)
		return id + 1;
	if (VEC_RESERVE(b->maps, b->maps_cap, b->nmaps + 1, 256))
		return -ENOMEM;
	b->maps[b->nmaps] = *key;
	b->maps[b->nmaps].pb.id = b->nmaps + 1;
	if (hashmap__add(&b->map_ix, (uint32_t)h, b->nmaps))
		return -ENOMEM;
	return ++b->nmaps;
}

/* A synthetic or kernel mapping's range covers every address it holds. */
static void map_cover(struct builder *b, int64_t id, uint64_t addr)
{
	PbMapping *m = &b->maps[id - 1].pb;

	if (!b->maps[id - 1].synthetic)
		return;
	if (!m->memory_limit || addr < m->memory_start)
		m->memory_start = addr;
	if (addr >= m->memory_limit)
		m->memory_limit = addr + 1;
}

/* One mapping for every kernel frame, its range grown from their addresses. */
static int64_t kernel_map_id(struct builder *b)
{
	struct mapping key = { .pb = PERFTOOLS__PROFILES__MAPPING__INIT, .synthetic = true };
	int64_t id;

	if (b->kernel_map)
		return b->kernel_map;
	key.pb.filename = str_id(b, KERNEL_MAPPING_NAME);
	key.pb.build_id = str_id(b, b->kernel_build_id);
	key.pb.has_functions = true;
	if (key.pb.filename < 0 || key.pb.build_id < 0)
		return -ENOMEM;
	id = map_id(b, &key);
	if (id > 0)
		b->kernel_map = id;
	return id;
}

/*
 * The mapping of a user frame, as the symbolizer snapshotted it; without one
 * (an unreadable process), a mapping grown from the frames.
 */
static int64_t user_map_id(struct builder *b, const struct sw_frame *f)
{
	struct mapping key = { .pb = PERFTOOLS__PROFILES__MAPPING__INIT };
	const char *file = f->path ? f->path : f->module;
	if (f->mapped && f->map_end > f->map_start) {
		key.pb.memory_start = f->map_start;
		key.pb.memory_limit = f->map_end;
		key.pb.file_offset = f->map_offset;
		key.pb.build_id = str_id(b, f->build_id);
	} else {
		key.synthetic = true;
	}
	key.pb.filename = str_id(b, file);
	key.pb.has_functions = true;
	if (key.pb.filename < 0 || key.pb.build_id < 0)
		return -ENOMEM;
	return map_id(b, &key);
}

/* ---- locations ------------------------------------------------------------------ */

static bool loc_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct builder *b = ctx;
	const struct location *l = &b->locs[idx], *k = key;
	size_t i;

	if (l->pb.mapping_id != k->pb.mapping_id || l->pb.address != k->pb.address ||
	    l->pb.n_line != k->pb.n_line)
		return false;
	for (i = 0; i < k->pb.n_line; i++) {
		if (l->lines[i].function_id != k->lines[i].function_id ||
		    l->lines[i].line != k->lines[i].line)
			return false;
	}
	return true;
}

/* Location id (1-based) of an address and its lines (innermost first); negative errno. */
static int64_t loc_id(struct builder *b, int64_t map, uint64_t addr, const PbLine *lines, size_t n)
{
	struct location key = { .pb = PERFTOOLS__PROFILES__LOCATION__INIT };
	uint64_t h;
	int64_t id;
	size_t i;

	if (map < 0)
		return map;
	key.pb.mapping_id = map;
	key.pb.address = addr;
	key.pb.n_line = n;
	key.lines = (PbLine *)lines;
	h = mix(mix(3, map), addr);
	for (i = 0; i < n; i++)
		h = mix(mix(h, lines[i].function_id), lines[i].line);
	id = hashmap__find(&b->loc_ix, (uint32_t)h, loc_eq, b, &key);
	if (id >= 0)
		return id + 1;
	if (VEC_RESERVE(b->locs, b->locs_cap, b->nlocs + 1, 256))
		return -ENOMEM;
	key.lines = malloc(n * (sizeof(PbLine) + sizeof(PbLine *)));
	if (!key.lines)
		return -ENOMEM;
	key.pb.line = (PbLine **)(key.lines + n);
	for (i = 0; i < n; i++) {
		key.lines[i] = lines[i];
		key.pb.line[i] = &key.lines[i];
	}
	key.pb.id = b->nlocs + 1;
	b->locs[b->nlocs] = key;
	if (hashmap__add(&b->loc_ix, (uint32_t)h, b->nlocs)) {
		free(key.lines);
		return -ENOMEM;
	}
	if (map)
		map_cover(b, map, addr);
	return ++b->nlocs;
}

/* A user frame's function: its DWARF declaration's file and line when known. */
static int64_t user_func_id(struct builder *b, const struct sw_frame *f)
{
	if (f->decl_file)
		return func_id(b, f->function ? f->function : f->name, f->decl_file, f->decl_line);
	/* A runtime's method with no source file (a JVM's hidden class): no file either. */
	if (f->python && f->function)
		return func_id(b, f->function, NULL, 0);
	return func_id(b, f->name, f->path ? f->path : f->module, 0);
}

/*
 * frames[0 .. n): a frame and the functions inlined at its address, outermost
 * first; they make one location whose lines are innermost first.
 */
static int64_t place_frame(struct builder *b, const struct sw_frame *frames, size_t n)
{
	const struct sw_frame *f = &frames[0];
	PbLine lines[SRCLINE_MAX_DEPTH + 1];
	size_t i;
	int64_t map, fn;

	switch (f->kind) {
	case SW_KERNEL:
		map = kernel_map_id(b);
		fn = func_id(b, f->name, f->module ? f->module : KERNEL_MAPPING_NAME, 0);
		n = 1;
		break;
	case SW_USER:
		map = f->mapped ? user_map_id(b, f) : 0;
		fn = 0;
		if (n > SRCLINE_MAX_DEPTH + 1)
			n = SRCLINE_MAX_DEPTH + 1;
		for (i = 0; i < n && fn >= 0; i++) {
			fn = user_func_id(b, &frames[n - 1 - i]);
			perftools__profiles__line__init(&lines[i]);
			lines[i].function_id = fn;
			lines[i].line = frames[n - 1 - i].line;
		}
		/* Tell readers the mapping's functions have lines: nothing to symbolize again. */
		if (map > 0 && f->line) {
			b->maps[map - 1].pb.has_filenames = true;
			b->maps[map - 1].pb.has_line_numbers = true;
		}
		if (map > 0 && n > 1)
			b->maps[map - 1].pb.has_inline_frames = true;
		return fn < 0 ? fn : loc_id(b, map, f->addr, lines, n);
	default: /* [truncated]: no address */
		map = 0;
		fn = func_id(b, f->name, NULL, 0);
		n = 1;
		break;
	}
	if (fn < 0)
		return fn;
	perftools__profiles__line__init(&lines[0]);
	lines[0].function_id = fn;
	return loc_id(b, map, f->addr, lines, 1);
}

static bool frame_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct builder *b = ctx;
	const struct frame_key *f = &b->frames[idx], *k = key;

	return f->addr == k->addr && f->pid == k->pid && f->kind == k->kind;
}

/*
 * Location of a frame. One address of one process always symbolizes alike
 * within a profile, so frames met again (most are) skip the symbol, mapping
 * and string lookups.
 */
static int64_t frame_loc(struct builder *b, uint32_t pid, const struct sw_frame *f, size_t n)
{
	struct frame_key key = { .addr = f->addr,
				 .pid = f->kind == SW_KERNEL ? 0 : pid,
				 .kind = f->kind };
	uint32_t h = (uint32_t)mix(mix(mix(4, key.addr), key.pid), key.kind);
	int64_t id = hashmap__find(&b->frame_ix, h, frame_eq, b, &key);

	if (id >= 0)
		return b->frames[id].loc;
	key.loc = place_frame(b, f, n);
	if (key.loc < 0)
		return key.loc;
	if (VEC_RESERVE(b->frames, b->frames_cap, b->nframes + 1, 256) ||
	    hashmap__add(&b->frame_ix, h, b->nframes))
		return -ENOMEM;
	b->frames[b->nframes++] = key;
	return key.loc;
}

/* ---- samples -------------------------------------------------------------------- */

/* One allocation per sample: location ids, values, label pointers and own labels. */
struct sample_mem {
	int64_t values[2]; /* first: Sample.value points at the allocation */
	PbLabel comm, pid, cgroup;
	PbLabel cg_more[PPROF_MAX_CGROUP_LABELS]; /* opts.cgroup_labels */
	PbLabel *labels[]; /* then the location ids */
};

/* The task's cgroup path, when known: how fleets tell containers and services apart. */
static bool add_cgroup_label(struct builder *b, const struct sw_stack *st, PbLabel *l)
{
	const char *path;

	if (!b->opts.cgroup_path || !st->cgroup_id)
		return false;
	path = b->opts.cgroup_path(b->opts.cgroup_ctx, st->cgroup_id);
	if (!path)
		return false;
	perftools__profiles__label__init(l);
	l->key = b->s_cgroup;
	l->str = str_id(b, path);
	return l->str > 0;
}

static int add_sample(const struct sw_stack *st, void *ctx)
{
	struct builder *b = ctx;
	size_t nlabels = 3 + PPROF_MAX_CGROUP_LABELS + b->opts.nr_labels;
	size_t nlocs = st->nr_frames - 1, i, j, n = 0;
	struct sample_mem *m;
	uint64_t *ids;
	PbSample *s;
	int64_t id;

	if (!st->count && !st->weight)
		return 0;
	if (VEC_RESERVE(b->samples, b->samples_cap, b->nsamples + 1, 256))
		return -ENOMEM;
	m = calloc(1, sizeof(*m) + nlabels * sizeof(PbLabel *) + nlocs * sizeof(uint64_t));
	if (!m)
		return -ENOMEM;
	s = &b->samples[b->nsamples++];
	perftools__profiles__sample__init(s);
	s->value = m->values; /* owns m: freed through it */
	s->label = m->labels;
	ids = (uint64_t *)(m->labels + nlabels);
	s->location_id = ids;
	/* Leaf first; frames[0] is the comm, a label here. Inlined frames join their caller's. */
	for (i = st->nr_frames - 1; i >= 1; i = j - 1) {
		for (j = i; j > 1 && st->frames[j].inlined; j--)
			;
		id = frame_loc(b, st->pid, &st->frames[j], i - j + 1);
		if (id < 0)
			return id;
		ids[s->n_location_id++] = id;
	}
	m->values[0] = st->count;
	m->values[1] = b->opts.value_from_weight ? (int64_t)st->weight * b->opts.weight_scale :
						   (int64_t)st->count * b->period;
	s->n_value = 2;
	perftools__profiles__label__init(&m->comm);
	m->comm.key = b->s_comm;
	m->comm.str = str_id(b, st->frames[0].name);
	if (m->comm.str < 0)
		return -ENOMEM;
	m->labels[n++] = &m->comm;
	/* A zero numeric label reads back as no label: the idle task has none. */
	if (st->pid) {
		perftools__profiles__label__init(&m->pid);
		m->pid.key = b->s_pid;
		m->pid.num = st->pid;
		m->labels[n++] = &m->pid;
	}
	if (add_cgroup_label(b, st, &m->cgroup))
		m->labels[n++] = &m->cgroup;
	if (b->opts.cgroup_labels && st->cgroup_id) {
		struct pprof_label more[PPROF_MAX_CGROUP_LABELS];
		size_t k = b->opts.cgroup_labels(b->opts.cgroup_ctx, st->cgroup_id, more,
						 PPROF_MAX_CGROUP_LABELS);

		for (i = 0; i < k && i < PPROF_MAX_CGROUP_LABELS; i++) {
			perftools__profiles__label__init(&m->cg_more[i]);
			m->cg_more[i].key = str_id(b, more[i].key);
			m->cg_more[i].str = str_id(b, more[i].value);
			if (m->cg_more[i].key < 0 || m->cg_more[i].str < 0)
				return -ENOMEM;
			if (m->cg_more[i].key && m->cg_more[i].str) /* empty: no label */
				m->labels[n++] = &m->cg_more[i];
		}
	}
	for (i = 0; i < b->opts.nr_labels; i++)
		m->labels[n++] = &b->extra_labels[i];
	s->n_label = n;
	return 0;
}

/* ---- output --------------------------------------------------------------------- */

/* protobuf-c appends a few bytes at a time: stage them, deflate 64 KiB at once. */
struct gz_buffer {
	ProtobufCBuffer base;
	z_stream z;
	FILE *f;
	int err;
	size_t staged;
	unsigned char in[1 << 16];
	unsigned char out[1 << 16];
};

static void gz_run(struct gz_buffer *g, const uint8_t *data, size_t len, int flush)
{
	int ret;

	g->z.next_in = (Bytef *)data;
	g->z.avail_in = len;
	do {
		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		ret = deflate(&g->z, flush);
		if (ret == Z_STREAM_ERROR) {
			g->err = -EIO;
			return;
		}
		len = sizeof(g->out) - g->z.avail_out;
		if (len && fwrite(g->out, 1, len, g->f) != len) {
			g->err = -EIO;
			return;
		}
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
}

static void gz_append(ProtobufCBuffer *buf, size_t len, const uint8_t *data)
{
	struct gz_buffer *g = (struct gz_buffer *)buf;

	if (g->err)
		return;
	if (g->staged + len > sizeof(g->in)) {
		gz_run(g, g->in, g->staged, Z_NO_FLUSH);
		g->staged = 0;
	}
	if (len >= sizeof(g->in)) {
		gz_run(g, data, len, Z_NO_FLUSH);
		return;
	}
	memcpy(g->in + g->staged, data, len);
	g->staged += len;
}

/* Pack p into f, gzip-compressed (what pprof readers expect). */
static int write_gzip(const PbProfile *p, FILE *f)
{
	struct gz_buffer *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return -ENOMEM;
	g->base.append = gz_append;
	g->f = f;
	/*
	 * windowBits 15 + 16: a gzip header and trailer instead of zlib's. Fastest
	 * level, as Go's profiles: location ids compress little at any level.
	 */
	if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	perftools__profiles__profile__pack_to_buffer(p, &g->base);
	if (!g->err)
		gz_run(g, g->in, g->staged, Z_FINISH);
	deflateEnd(&g->z);
	err = g->err;
	free(g);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}

/* Pointer arrays protobuf-c wants, over the builder's element arrays. */
static void **ptrs(void *elems, size_t n, size_t sz)
{
	void **p = calloc(n ? n : 1, sizeof(*p));
	size_t i;

	for (i = 0; p && i < n; i++)
		p[i] = (char *)elems + i * sz;
	return p;
}

static int emit(struct builder *b, FILE *f)
{
	PbProfile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbValueType types[2], period_type, *type_ptrs[2] = { &types[0], &types[1] };
	int64_t comment;
	size_t i;
	int err = -ENOMEM;

	for (i = 0; i < 2; i++)
		perftools__profiles__value_type__init(&types[i]);
	perftools__profiles__value_type__init(&period_type);
	types[0].type = str_id(b, "samples");
	types[0].unit = str_id(b, "count");
	types[1].type = period_type.type = str_id(b, b->opts.type);
	types[1].unit = period_type.unit = str_id(b, b->opts.unit);
	comment = str_id(b, b->opts.comment);
	if (types[0].type < 0 || types[0].unit < 0 || types[1].type < 0 || types[1].unit < 0 ||
	    comment < 0)
		return -ENOMEM;
	p.n_sample_type = 2;
	p.sample_type = type_ptrs;
	p.period_type = &period_type;
	p.period = b->period;
	p.time_nanos = b->opts.time_nanos;
	p.duration_nanos = b->opts.duration_nanos;
	p.n_comment = comment ? 1 : 0;
	p.comment = &comment;
	p.n_string_table = b->strs.n;
	p.string_table = b->strs.strs;
	p.n_sample = b->nsamples;
	p.sample = (PbSample **)ptrs(b->samples, b->nsamples, sizeof(*b->samples));
	p.n_mapping = b->nmaps;
	p.mapping = (PbMapping **)ptrs(b->maps, b->nmaps, sizeof(*b->maps));
	p.n_location = b->nlocs;
	p.location = (PbLocation **)ptrs(b->locs, b->nlocs, sizeof(*b->locs));
	p.n_function = b->nfuncs;
	p.function = (PbFunction **)ptrs(b->funcs, b->nfuncs, sizeof(*b->funcs));
	if (p.sample && p.mapping && p.location && p.function)
		err = write_gzip(&p, f);
	free(p.sample);
	free(p.mapping);
	free(p.location);
	free(p.function);
	return err;
}

/* ---- setup ---------------------------------------------------------------------- */

static int builder__init(struct builder *b, const struct pprof_opts *opts)
{
	size_t i;

	if (opts)
		b->opts = *opts;
	if (!b->opts.type)
		b->opts.type = "cpu";
	if (!b->opts.unit)
		b->opts.unit = "nanoseconds";
	if (!b->opts.weight_scale)
		b->opts.weight_scale = 1;
	b->period = b->opts.period;
	if (!b->period && b->opts.freq)
		b->period = 1000000000LL / b->opts.freq;
	if (!b->period && !b->opts.value_from_weight)
		return -EINVAL; /* count x period needs a period */
	if (!b->opts.time_nanos)
		b->opts.time_nanos = clock__wall_ns() - b->opts.duration_nanos;
	b->extra_labels = calloc(b->opts.nr_labels + 1, sizeof(*b->extra_labels));
	if (!b->extra_labels || strtab__init(&b->strs))
		return -ENOMEM;
	b->s_comm = str_id(b, "comm");
	b->s_pid = str_id(b, "pid");
	b->s_cgroup = str_id(b, "cgroup");
	for (i = 0; i < b->opts.nr_labels; i++) {
		perftools__profiles__label__init(&b->extra_labels[i]);
		b->extra_labels[i].key = str_id(b, b->opts.labels[i].key);
		b->extra_labels[i].str = str_id(b, b->opts.labels[i].value);
		if (b->extra_labels[i].key <= 0 || b->extra_labels[i].str < 0)
			return b->extra_labels[i].key ? -ENOMEM : -EINVAL;
	}
	ksyms__kernel_build_id(b->kernel_build_id);
	return b->s_comm < 0 || b->s_pid < 0 || b->s_cgroup < 0 ? -ENOMEM : 0;
}

static void builder__free(struct builder *b)
{
	size_t i;

	for (i = 0; i < b->nsamples; i++)
		free(b->samples[i].value); /* the sample's whole allocation */
	free(b->samples);
	free(b->funcs);
	free(b->maps);
	for (i = 0; i < b->nlocs; i++)
		free(b->locs[i].lines);
	free(b->locs);
	strtab__free(&b->strs);
	hashmap__free(&b->func_ix);
	hashmap__free(&b->map_ix);
	hashmap__free(&b->loc_ix);
	free(b->frames);
	hashmap__free(&b->frame_ix);
	free(b->extra_labels);
}

int pprof__write_file(const struct snapshot *snap, const struct pprof_opts *opts, FILE *f)
{
	struct builder b = {};
	int err;

	err = builder__init(&b, opts);
	if (!err)
		err = snapshot__for_each(snap, add_sample, &b);
	if (!err)
		err = emit(&b, f);
	builder__free(&b);
	return err;
}

int pprof__write(const struct snapshot *snap, const struct pprof_opts *opts, const char *path)
{
	struct outfile out;
	int err = outfile__open(&out, path);

	if (err)
		return err;
	return outfile__close(&out, pprof__write_file(snap, opts, out.f));
}
