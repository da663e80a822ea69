// SPDX-License-Identifier: GPL-2.0-or-later
/* The program's table of named runtime frames: Python's, Java's (frame_names.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/frame_names.h"
#include "util/hash.h"
#include "util/hashmap.h"

/* What a map slot costs (a value and a hash at load 1/2): counted in the budget. */
#define SLOT_BYTES 24

/* What malloc takes for n bytes (glibc: an 8-byte header, 16-byte chunks). */
static size_t heap(size_t n)
{
	return (n + 8 + 15) & ~(size_t)15;
}

/* A function: its names and first line, shared by the entries of its lines. */
struct func {
	const char *runtime; /* the caller's string, kept for the program's life */
	char *qualname, *file;
	uint32_t firstline;
	uint32_t refs; /* entries naming it */
	uint32_t hash;
	size_t bytes;
};

struct entry {
	struct func *fn;
	char *label;
	uint32_t line;
	uint32_t hash; /* of (function, line) */
	uint64_t id;
	size_t bytes;
	bool marked; /* by the collection under way */
};

static struct {
	pthread_mutex_t lock;
	struct hashmap funcs; /* hash -> struct func * */
	struct hashmap entries; /* hash of (function, line) -> struct entry * */
	struct hashmap ids; /* hash of id -> struct entry * */
	uint64_t next_id; /* ids are never reused: a stale one names nothing */
	uint64_t budget; /* bytes; 0: no limit */
	bool refused_since; /* a refusal since the last collection */
	struct frame_names_stats st;
} names = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_id = 1 };

struct key {
	const char *runtime, *qualname, *file;
	uint32_t firstline, line;
	const struct func *fn; /* entries: the function found */
};

static bool func_eq(const void *ctx, uint64_t val, const void *k)
{
	const struct func *f = HASHMAP_TO_PTR(val);
	const struct key *key = k;

	(void)ctx;
	return f->firstline == key->firstline && !strcmp(f->qualname, key->qualname) &&
	       !strcmp(f->file, key->file) && !strcmp(f->runtime, key->runtime);
}

static bool entry_eq(const void *ctx, uint64_t val, const void *k)
{
	const struct entry *e = HASHMAP_TO_PTR(val);
	const struct key *key = k;

	(void)ctx;
	return e->fn == key->fn && e->line == key->line;
}

static bool id_eq(const void *ctx, uint64_t val, const void *k)
{
	(void)ctx;
	return ((const struct entry *)HASHMAP_TO_PTR(val))->id == *(const uint64_t *)k;
}

static uint32_t func_hash(const struct key *k)
{
	return (uint32_t)hash__mix64(hash__str(k->qualname) ^
				     hash__mix64(hash__str(k->file) + k->firstline) ^
				     hash__str(k->runtime));
}

static uint32_t entry_hash(const struct func *fn, uint32_t line)
{
	return (uint32_t)hash__mix64((uint64_t)(uintptr_t)fn ^ ((uint64_t)line << 40));
}

static uint32_t id_hash(uint64_t id)
{
	return (uint32_t)hash__mix64(id);
}

const char *frame_names__base(const char *file)
{
	const char *slash = strrchr(file, '/');

	return file[0] == '<' || !slash ? file : slash + 1;
}

/* py-spy's form: the file's base name (frame_names__base()). */
static char *make_label(const char *qualname, const char *file, uint32_t line)
{
	const char *base = frame_names__base(file);
	char *s;

	if (line ? asprintf(&s, "%s (%s:%u)", qualname, base, line) < 0 :
		   asprintf(&s, "%s (%s)", qualname, base) < 0)
		return NULL;
	return s;
}

static bool fits(size_t more)
{
	return !names.budget || names.st.bytes + more <= names.budget;
}

static void func_put(struct func *f, const struct key *k)
{
	if (--f->refs)
		return;
	hashmap__del(&names.funcs, f->hash, func_eq, NULL, k);
	names.st.bytes -= f->bytes;
	names.st.functions--;
	free(f->qualname);
	free(f->file);
	free(f);
}

/* The function of k, added (one reference more) if it fits. NULL: no room. */
static struct func *func_get(const struct key *k)
{
	uint32_t h = func_hash(k);
	int64_t v = hashmap__find(&names.funcs, h, func_eq, NULL, k);
	size_t bytes = heap(sizeof(struct func)) + heap(strlen(k->qualname) + 1) +
		       heap(strlen(k->file) + 1) + SLOT_BYTES;
	struct func *f;

	if (v >= 0) {
		f = HASHMAP_TO_PTR(v);
		f->refs++;
		return f;
	}
	if (!fits(bytes) || !(f = calloc(1, sizeof(*f))))
		return NULL;
	f->runtime = k->runtime;
	f->qualname = strdup(k->qualname);
	f->file = strdup(k->file);
	f->firstline = k->firstline;
	f->hash = h;
	f->bytes = bytes;
	f->refs = 1;
	if (!f->qualname || !f->file || hashmap__add(&names.funcs, h, HASHMAP_PTR(f))) {
		free(f->qualname);
		free(f->file);
		free(f);
		return NULL;
	}
	names.st.bytes += bytes;
	names.st.functions++;
	return f;
}

static void entry_free(struct entry *e)
{
	struct key k = { e->fn->runtime,   e->fn->qualname, e->fn->file,
			 e->fn->firstline, e->line,	    e->fn };

	hashmap__del(&names.entries, e->hash, entry_eq, NULL, &k);
	hashmap__del(&names.ids, id_hash(e->id), id_eq, NULL, &e->id);
	names.st.bytes -= e->bytes;
	names.st.entries--;
	func_put(e->fn, &k);
	free(e->label);
	free(e);
}

static uint64_t intern(const char *runtime, const char *qualname, const char *file,
		       uint32_t firstline, uint32_t line)
{
	struct key k = { runtime, qualname, file, firstline, line, NULL };
	struct entry *e;
	size_t bytes;
	int64_t v;

	v = hashmap__find(&names.funcs, func_hash(&k), func_eq, NULL, &k);
	k.fn = v >= 0 ? HASHMAP_TO_PTR(v) : NULL;
	v = k.fn ? hashmap__find(&names.entries, entry_hash(k.fn, line), entry_eq, NULL, &k) : -1;
	if (v >= 0)
		return ((struct entry *)HASHMAP_TO_PTR(v))->id;
	e = calloc(1, sizeof(*e));
	if (!e)
		return 0;
	e->label = make_label(qualname, file, line);
	bytes = heap(sizeof(*e)) + (e->label ? heap(strlen(e->label) + 1) : 0) + 2 * SLOT_BYTES;
	if (!e->label || !fits(bytes) || !(e->fn = func_get(&k))) {
		free(e->label);
		free(e);
		return 0;
	}
	k.fn = e->fn;
	e->line = line;
	e->hash = entry_hash(e->fn, line);
	e->id = names.next_id;
	e->bytes = bytes;
	if (!fits(bytes) || hashmap__add(&names.entries, e->hash, HASHMAP_PTR(e))) {
		func_put(e->fn, &k);
		free(e->label);
		free(e);
		return 0;
	}
	if (hashmap__add(&names.ids, id_hash(e->id), HASHMAP_PTR(e))) {
		hashmap__del(&names.entries, e->hash, entry_eq, NULL, &k);
		func_put(e->fn, &k);
		free(e->label);
		free(e);
		return 0;
	}
	names.next_id++;
	names.st.bytes += bytes;
	names.st.entries++;
	return e->id;
}

uint64_t frame_names__intern(const char *runtime, const char *qualname, const char *file,
			     uint32_t firstline, uint32_t line)
{
	uint64_t id;

	pthread_mutex_lock(&names.lock);
	id = names.next_id < FRAME_NAMES_MAX_ID ? intern(runtime, qualname, file, firstline, line) :
						  0;
	if (!id) {
		names.st.refused++;
		names.refused_since = true;
	}
	pthread_mutex_unlock(&names.lock);
	return id;
}

static struct entry *by_id(uint64_t id)
{
	int64_t v = hashmap__find(&names.ids, id_hash(id), id_eq, NULL, &id);

	return v < 0 ? NULL : HASHMAP_TO_PTR(v);
}

bool frame_names__get(uint64_t ip, struct frame_name *out)
{
	struct entry *e;

	if (!frame_names__is_ip(ip))
		return false;
	pthread_mutex_lock(&names.lock);
	e = by_id(ip & SFBPF_PY_ADDR_MASK);
	if (e)
		*out = (struct frame_name){ .runtime = e->fn->runtime,
					    .qualname = e->fn->qualname,
					    .file = e->fn->file,
					    .label = e->label,
					    .firstline = e->fn->firstline,
					    .line = e->line };
	pthread_mutex_unlock(&names.lock);
	return e != NULL;
}

void frame_names__set_budget(uint64_t bytes)
{
	pthread_mutex_lock(&names.lock);
	names.budget = bytes;
	names.st.budget = bytes;
	pthread_mutex_unlock(&names.lock);
}

bool frame_names__want_collect(void)
{
	bool want;

	pthread_mutex_lock(&names.lock);
	want = names.budget && (names.refused_since || names.st.bytes > names.budget / 8 * 7);
	pthread_mutex_unlock(&names.lock);
	return want;
}

void frame_names__mark(uint64_t ip)
{
	struct entry *e;

	if (!frame_names__is_ip(ip))
		return;
	pthread_mutex_lock(&names.lock);
	e = by_id(ip & SFBPF_PY_ADDR_MASK);
	if (e)
		e->marked = true;
	pthread_mutex_unlock(&names.lock);
}

uint64_t frame_names__sweep(void)
{
	struct entry **dead;
	size_t iter = 0, n = 0, cap;
	uint64_t v, before;

	pthread_mutex_lock(&names.lock);
	before = names.st.bytes;
	cap = hashmap__size(&names.ids);
	dead = cap ? malloc(cap * sizeof(*dead)) : NULL;
	while (dead && hashmap__next(&names.ids, &iter, &v)) {
		struct entry *e = HASHMAP_TO_PTR(v);

		if (!e->marked)
			dead[n++] = e;
		e->marked = false;
	}
	/* Freed after the walk: a deletion shifts the map under the iterator. */
	for (size_t i = 0; i < n; i++)
		entry_free(dead[i]);
	free(dead);
	names.st.evicted += n;
	names.st.collections++;
	names.refused_since = false;
	before -= names.st.bytes;
	pthread_mutex_unlock(&names.lock);
	return before;
}

void frame_names__stats(struct frame_names_stats *out)
{
	pthread_mutex_lock(&names.lock);
	*out = names.st;
	pthread_mutex_unlock(&names.lock);
}
