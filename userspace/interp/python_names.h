/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Python frames as the outputs name them: one table, for the whole program,
 * of (qualified name, file, first line, line) → a frame id. The sample
 * ingestion resolves each Python frame the BPF walk sent while its process
 * and code object are alive (profile/pythons.h) and keeps only the id in
 * the stack, as SFBPF_PY_TAG | id in place of a user address; the stack
 * walk every output uses (profile/stackwalk.c) and the live view name it
 * from here, whenever they run: after the code object is freed or its
 * process gone.
 *
 * Lifecycle: entries are never removed (at most PYTHON_NAMES_MAX: a
 * program's distinct Python (function, line) pairs); strings stay valid
 * until exit. Thread-safe (one mutex).
 * Error rule: python_names__intern() returns 0 when out of memory or full.
 */
#ifndef SFBPF_INTERP_PYTHON_NAMES_H
#define SFBPF_INTERP_PYTHON_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi.h"

#define PYTHON_NAMES_MAX (1u << 22)

struct python_name {
	const char *qualname;
	const char *file; /* co_filename as the process has it */
	const char *label; /* "qualname (file.py:line)": folded, SVG, the live view */
	uint32_t firstline; /* co_firstlineno */
	uint32_t line; /* of the instruction; 0: none */
};

/* The frame's id (>= 1), the same for the same four values; 0: no room. */
uint64_t python_names__intern(const char *qualname, const char *file, uint32_t firstline,
			      uint32_t line);
/* A user "address" standing for frame id: what a spliced stack holds. */
static inline uint64_t python_names__ip(uint64_t id)
{
	return SFBPF_PY_TAG | id;
}

static inline bool python_names__is_ip(uint64_t ip)
{
	return (ip & SFBPF_PY_TAG) && !(ip & SFBPF_PY_ENTRY);
}

/* The names of a spliced stack's ip; false: not one (or unknown id). */
bool python_names__get(uint64_t ip, struct python_name *out);

#endif /* SFBPF_INTERP_PYTHON_NAMES_H */
