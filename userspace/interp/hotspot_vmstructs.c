// SPDX-License-Identifier: GPL-2.0-or-later
/* HotSpot's vmStructs tables, read from a live JVM (hotspot_vmstructs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp/hotspot_vmstructs.h"
#include "procs/procmem.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/strset.h"
#include "util/vec.h"

/* Bounds on the target's data: 17 has ~800 fields and ~770 types, 25 fewer. */
#define HS_MAX_ENTRIES (1u << 16)
#define HS_MIN_STRIDE 16u
#define HS_MAX_STRIDE 256u
#define HS_MAX_NAME 256u /* "GrowableArray<...>" and the like, with room */
#define HS_BATCH 64u /* entries a read */

const char *const hs_sym_names[HS_SYM_NR] = {
	[HS_SYM_STRUCTS] = "gHotSpotVMStructs",
	[HS_SYM_STRUCT_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
	[HS_SYM_STRUCT_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
	[HS_SYM_STRUCT_TYPE_STRING] = "gHotSpotVMStructEntryTypeStringOffset",
	[HS_SYM_STRUCT_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[HS_SYM_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[HS_SYM_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[HS_SYM_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[HS_SYM_TYPES] = "gHotSpotVMTypes",
	[HS_SYM_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
	[HS_SYM_TYPE_SUPER] = "gHotSpotVMTypeEntrySuperclassNameOffset",
	[HS_SYM_TYPE_IS_OOP] = "gHotSpotVMTypeEntryIsOopTypeOffset",
	[HS_SYM_TYPE_IS_INTEGER] = "gHotSpotVMTypeEntryIsIntegerTypeOffset",
	[HS_SYM_TYPE_IS_UNSIGNED] = "gHotSpotVMTypeEntryIsUnsignedOffset",
	[HS_SYM_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
	[HS_SYM_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
	[HS_SYM_INTS] = "gHotSpotVMIntConstants",
	[HS_SYM_INT_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
	[HS_SYM_INT_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
	[HS_SYM_INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
	[HS_SYM_LONGS] = "gHotSpotVMLongConstants",
	[HS_SYM_LONG_NAME] = "gHotSpotVMLongConstantEntryNameOffset",
	[HS_SYM_LONG_VALUE] = "gHotSpotVMLongConstantEntryValueOffset",
	[HS_SYM_LONG_STRIDE] = "gHotSpotVMLongConstantEntryArrayStride",
};

struct hs_tables {
	struct strset names;
	struct hs_field *fields;
	struct hs_type *types;
	struct hs_const *consts[2]; /* ints, longs */
	size_t nr_fields, nr_types, nr_consts[2];
	size_t cap_fields, cap_types, cap_consts[2];
	struct hashmap by_field, by_type, by_const[2];
};

/* One kind of entry: its table symbol, its stride's, and its members'. */
struct entry_kind {
	const char *what;
	enum hs_sym table, stride;
	size_t nr_members;
	enum hs_sym members[6];
	uint8_t widths[6];
};

static const struct entry_kind kinds[] = {
	{ "struct",
	  HS_SYM_STRUCTS,
	  HS_SYM_STRUCT_STRIDE,
	  6,
	  { HS_SYM_STRUCT_TYPE_NAME, HS_SYM_STRUCT_FIELD_NAME, HS_SYM_STRUCT_TYPE_STRING,
	    HS_SYM_STRUCT_IS_STATIC, HS_SYM_STRUCT_OFFSET, HS_SYM_STRUCT_ADDRESS },
	  { 8, 8, 8, 4, 8, 8 } },
	{ "type",
	  HS_SYM_TYPES,
	  HS_SYM_TYPE_STRIDE,
	  6,
	  { HS_SYM_TYPE_NAME, HS_SYM_TYPE_SUPER, HS_SYM_TYPE_IS_OOP, HS_SYM_TYPE_IS_INTEGER,
	    HS_SYM_TYPE_IS_UNSIGNED, HS_SYM_TYPE_SIZE },
	  { 8, 8, 4, 4, 4, 8 } },
	{ "int constant",
	  HS_SYM_INTS,
	  HS_SYM_INT_STRIDE,
	  2,
	  { HS_SYM_INT_NAME, HS_SYM_INT_VALUE },
	  { 8, 4 } },
	{ "long constant",
	  HS_SYM_LONGS,
	  HS_SYM_LONG_STRIDE,
	  2,
	  { HS_SYM_LONG_NAME, HS_SYM_LONG_VALUE },
	  { 8, 8 } },
};

/* A kind's layout in this JVM: the table, its stride, its members' offsets. */
struct entry_layout {
	uint64_t table, stride, off[6];
};

static uint64_t get(const uint8_t *e, uint64_t off, uint8_t width)
{
	uint64_t v = 0;
	uint32_t v32;

	if (width == 4) {
		memcpy(&v32, e + off, 4);
		return v32;
	}
	memcpy(&v, e + off, 8);
	return v;
}

static int kind_layout(int pid, const uint64_t addrs[HS_SYM_NR], const struct entry_kind *k,
		       struct entry_layout *l)
{
	int err = procmem__u64(pid, addrs[k->table], &l->table);

	if (!err)
		err = procmem__u64(pid, addrs[k->stride], &l->stride);
	for (size_t i = 0; !err && i < k->nr_members; i++)
		err = procmem__u64(pid, addrs[k->members[i]], &l->off[i]);
	if (err)
		return err;
	/* Set by libjvm's constructors: zero before they run. */
	if (!l->table || !l->stride)
		return -EAGAIN;
	if (l->stride < HS_MIN_STRIDE || l->stride > HS_MAX_STRIDE) {
		pr_debug("hotspot: pid %d: %s entries of %lu bytes\n", pid, k->what,
			 (unsigned long)l->stride);
		return -EPROTO;
	}
	for (size_t i = 0; i < k->nr_members; i++)
		if (l->off[i] > l->stride - k->widths[i]) {
			pr_debug("hotspot: pid %d: %s member %s at %lu of %lu\n", pid, k->what,
				 hs_sym_names[k->members[i]], (unsigned long)l->off[i],
				 (unsigned long)l->stride);
			return -EPROTO;
		}
	return 0;
}

/* The target's string at addr, interned; "" for NULL when allowed. */
static int read_name(struct hs_tables *t, int pid, uint64_t addr, bool null_ok, const char **out)
{
	char buf[HS_MAX_NAME];
	long n;

	if (!addr) {
		*out = NULL;
		return null_ok ? 0 : -EPROTO;
	}
	n = procmem__str(pid, addr, buf, sizeof(buf));
	if (n == -E2BIG) {
		pr_debug("hotspot: pid %d: a name of %u bytes or more\n", pid, HS_MAX_NAME);
		return -EPROTO;
	}
	if (n < 0)
		return (int)n;
	*out = strset__intern(&t->names, buf);
	return *out ? 0 : -ENOMEM;
}

static uint32_t pair_hash(const char *a, const char *b)
{
	return (uint32_t)(hash__str(a) * 31 ^ hash__str(b ? b : ""));
}

struct field_key {
	const char *type, *name;
};

static bool field_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct hs_tables *t = ctx;
	const struct field_key *k = key;

	return !strcmp(t->fields[val].type, k->type) && !strcmp(t->fields[val].name, k->name);
}

static bool type_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct hs_tables *t = ctx;

	return !strcmp(t->types[val].name, key);
}

static bool int_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct hs_tables *t = ctx;

	return !strcmp(t->consts[0][val].name, key);
}

static bool long_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct hs_tables *t = ctx;

	return !strcmp(t->consts[1][val].name, key);
}

/* One entry e of kind ki, appended to its table (and its index). */
static int add_entry(struct hs_tables *t, int pid, size_t ki, const struct entry_layout *l,
		     const uint8_t *e)
{
	const uint8_t *w = kinds[ki].widths;
	const uint64_t *o = l->off;
	const char *s[3] = { NULL, NULL, NULL };
	int err = 0;

	if (ki == 0) {
		struct hs_field *f;

		for (int i = 0; i < 3 && !err; i++)
			err = read_name(t, pid, get(e, o[i], w[i]), i == 2, &s[i]);
		if (err)
			return err;
		if (VEC_RESERVE(t->fields, t->cap_fields, t->nr_fields + 1, 256))
			return -ENOMEM;
		f = &t->fields[t->nr_fields];
		*f = (struct hs_field){ s[0],
					s[1],
					s[2] ? s[2] : "",
					get(e, o[3], w[3]) != 0,
					get(e, o[4], w[4]),
					get(e, o[5], w[5]) };
		if (!s[1])
			return -EPROTO;
		return hashmap__add(&t->by_field, pair_hash(f->type, f->name), t->nr_fields++);
	}
	if (ki == 1) {
		struct hs_type *ty;

		for (int i = 0; i < 2 && !err; i++)
			err = read_name(t, pid, get(e, o[i], w[i]), i == 1, &s[i]);
		if (err)
			return err;
		if (VEC_RESERVE(t->types, t->cap_types, t->nr_types + 1, 256))
			return -ENOMEM;
		ty = &t->types[t->nr_types];
		*ty = (struct hs_type){ s[0],
					s[1],
					get(e, o[2], w[2]) != 0,
					get(e, o[3], w[3]) != 0,
					get(e, o[4], w[4]) != 0,
					get(e, o[5], w[5]) };
		return hashmap__add(&t->by_type, pair_hash(ty->name, NULL), t->nr_types++);
	}
	{
		size_t c = ki - 2;
		uint64_t v = get(e, o[1], w[1]);

		err = read_name(t, pid, get(e, o[0], w[0]), false, &s[0]);
		if (err)
			return err;
		if (VEC_RESERVE(t->consts[c], t->cap_consts[c], t->nr_consts[c] + 1, 256))
			return -ENOMEM;
		t->consts[c][t->nr_consts[c]] =
			(struct hs_const){ s[0], c ? (int64_t)v : (int64_t)(int32_t)(uint32_t)v };
		return hashmap__add(&t->by_const[c], pair_hash(s[0], NULL), t->nr_consts[c]++);
	}
}

/* Every entry of kind ki up to the one whose (first) name is NULL. */
static int read_kind(struct hs_tables *t, int pid, size_t ki, const struct entry_layout *l)
{
	uint8_t buf[HS_BATCH * HS_MAX_STRIDE];
	uint64_t at = l->table;

	for (uint32_t n = 0; n < HS_MAX_ENTRIES; n += HS_BATCH) {
		int err = procmem__read(pid, at, buf, HS_BATCH * l->stride);

		/* The table may end near an unmapped page: then an entry at a time. */
		for (uint32_t i = 0; i < HS_BATCH; i++) {
			uint8_t *e = buf + i * l->stride;

			if (err && procmem__read(pid, at + i * l->stride, e, l->stride))
				return err;
			if (!get(e, l->off[0], 8))
				return 0;
			err = 0;
			if ((err = add_entry(t, pid, ki, l, e)))
				return err;
		}
		at += HS_BATCH * l->stride;
	}
	pr_debug("hotspot: pid %d: no end to the %s table in %u entries\n", pid, kinds[ki].what,
		 HS_MAX_ENTRIES);
	return -EPROTO;
}

int hs_tables__read(int pid, const uint64_t addrs[HS_SYM_NR], struct hs_tables **out)
{
	struct entry_layout l[4];
	struct hs_tables *t;
	int err = 0;

	*out = NULL;
	for (size_t k = 0; k < HS_SYM_NR; k++)
		if (!addrs[k])
			return -ENOENT;
	for (size_t ki = 0; ki < 4 && !err; ki++)
		err = kind_layout(pid, addrs, &kinds[ki], &l[ki]);
	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t ki = 0; ki < 4 && !err; ki++)
		err = read_kind(t, pid, ki, &l[ki]);
	if (err) {
		hs_tables__free(t);
		return err;
	}
	*out = t;
	return 0;
}

void hs_tables__free(struct hs_tables *t)
{
	if (!t)
		return;
	strset__free(&t->names);
	free(t->fields);
	free(t->types);
	hashmap__free(&t->by_field);
	hashmap__free(&t->by_type);
	for (int c = 0; c < 2; c++) {
		free(t->consts[c]);
		hashmap__free(&t->by_const[c]);
	}
	free(t);
}

const struct hs_field *hs_tables__field(const struct hs_tables *t, const char *type,
					const char *name)
{
	struct field_key k = { type, name };
	int64_t v = hashmap__find(&t->by_field, pair_hash(type, name), field_eq, t, &k);

	return v < 0 ? NULL : &t->fields[v];
}

const struct hs_type *hs_tables__type(const struct hs_tables *t, const char *name)
{
	int64_t v = hashmap__find(&t->by_type, pair_hash(name, NULL), type_eq, t, name);

	return v < 0 ? NULL : &t->types[v];
}

bool hs_tables__const(const struct hs_tables *t, const char *name, int64_t *value)
{
	for (int c = 0; c < 2; c++) {
		int64_t v = hashmap__find(&t->by_const[c], pair_hash(name, NULL),
					  c ? long_eq : int_eq, t, name);

		if (v >= 0) {
			*value = t->consts[c][v].value;
			return true;
		}
	}
	return false;
}

size_t hs_tables__nr_fields(const struct hs_tables *t)
{
	return t->nr_fields;
}

const struct hs_field *hs_tables__field_at(const struct hs_tables *t, size_t i)
{
	return i < t->nr_fields ? &t->fields[i] : NULL;
}

size_t hs_tables__nr_types(const struct hs_tables *t)
{
	return t->nr_types;
}

const struct hs_type *hs_tables__type_at(const struct hs_tables *t, size_t i)
{
	return i < t->nr_types ? &t->types[i] : NULL;
}

size_t hs_tables__nr_consts(const struct hs_tables *t, bool long_consts)
{
	return t->nr_consts[long_consts];
}

const struct hs_const *hs_tables__const_at(const struct hs_tables *t, bool long_consts, size_t i)
{
	return i < t->nr_consts[long_consts] ? &t->consts[long_consts][i] : NULL;
}
