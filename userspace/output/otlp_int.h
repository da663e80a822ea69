/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the OTLP profiles writer (otlp.h), shared by its two halves:
 * otlp.c gathers the request's dictionary and samples from the symbolized
 * stacks into a struct otlp_builder, every table deduplicated; otlp_request.c
 * writes the gathered request with the wire writer (pbwire.h).
 *
 * Lifecycle: otlp__encode() (otlp.c) owns the builder from init to free;
 * otlp_put_request() only reads it. Every table's entry 0 is its zero value,
 * as the schema wants; indices are int32 on the wire, so no table grows past
 * INT32_MAX entries (-E2BIG). Errors: negative errno; the wire writer's
 * stick in its w->err.
 */
#ifndef SFBPF_OTLP_INT_H
#define SFBPF_OTLP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/otlp.h"
#include "output/strtab.h"
#include "symbols/ksyms.h"
#include "tables/elfobj.h"
#include "util/hashmap.h"

struct pbw;

/* A deduplicated table: entries v[0 .. n), ix maps an entry's hash to its index. */
#define OTLP_TABLE(type)           \
	struct {                   \
		type *v;           \
		size_t n, cap;     \
		struct hashmap ix; \
	}

/* An array the tables' entries point into by (offset, count). */
#define OTLP_POOL(type)        \
	struct {               \
		type *v;       \
		size_t n, cap; \
	}

struct otlp_attr {
	int32_t key; /* string index */
	int32_t str; /* the string value's index, if !is_int */
	int64_t num;
	bool is_int;
};

struct otlp_func {
	int32_t name, file; /* file: the declaration's (DWARF), else the object's */
	int64_t start_line; /* 0: unknown */
};

struct otlp_mapping {
	uint64_t start, limit, offset;
	int32_t file, build_id_attr;
};

struct otlp_line {
	int32_t func;
	int64_t line; /* 0: unknown */
};

/* lines[off .. off + n) of the pool, innermost first: the last is the caller. */
struct otlp_location {
	uint64_t addr;
	int32_t mapping, type_attr;
	size_t off, n;
};

struct otlp_stack {
	size_t off, n; /* in the pool of location indices, leaf first */
};

/*
 * A frame placed before: (pid, address, kind, name, inline depth) -> its
 * location, so that most frames skip the mapping, symbol and string lookups.
 */
struct otlp_frame {
	uint64_t addr;
	uint32_t pid, kind;
	size_t n; /* the frames of the location: 1 + those inlined at addr */
	int32_t loc;
	const char *name; /* lookups only: the outermost frame's raw name */
};

struct otlp_sample {
	int32_t res, stack, thread_attr; /* the key: equal ones add up */
	int32_t next; /* the resource's next sample; -1: last */
	int64_t value;
};

struct otlp_resource {
	uint32_t pid;
	uint64_t cgroup_id; /* with pid, the key */
	int32_t comm; /* string index: the thread's comm (the name when exe is unknown) */
	int32_t exe; /* string index: the executable's path when first seen; 0: unknown */
	int32_t first, last; /* its samples */
};

struct otlp_builder {
	struct otlp_opts o;
	int64_t period;
	struct strtab strs;
	OTLP_TABLE(struct otlp_attr) attrs;
	OTLP_TABLE(struct otlp_func) funcs;
	OTLP_TABLE(struct otlp_mapping) maps;
	OTLP_TABLE(struct otlp_location) locs;
	OTLP_TABLE(struct otlp_stack) stacks;
	OTLP_TABLE(struct otlp_frame) frames;
	OTLP_TABLE(struct otlp_sample) samples;
	OTLP_TABLE(struct otlp_resource) res;
	OTLP_POOL(struct otlp_line) lines;
	OTLP_POOL(int32_t) stack_locs;
	int32_t kernel_map, attr_kernel, attr_native;
	int32_t s_samples, s_count, s_type, s_unit; /* the profile's value types */
	char kernel_build_id[ELFOBJ_BUILD_ID_HEX];
};

/* The gathered request (otlp_request.c): resource profiles, then the dictionary. */
void otlp_put_request(struct pbw *w, const struct otlp_builder *b);

#endif /* SFBPF_OTLP_INT_H */
