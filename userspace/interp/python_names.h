/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Python frames as the outputs name them: one table, for the whole program,
 * of (qualified name, file, first line, line) → a frame id. The sample
 * ingestion resolves each Python frame the BPF walk sent while its process
 * and code object are alive (profile/pythons.h) and keeps only the id in
 * the stack, as SFBPF_PY_TAG | id in place of a user address; the frame
 * naming rule every output uses (profile/stackwalk.c: the snapshot, the live
 * view) names it from here, whenever they run: after the code object is
 * freed or its process gone.
 *
 * Budget (issue #28): the table's bytes (names, labels, map slots) stay
 * within python_names__set_budget()'s; a function's names are kept once
 * for all its lines. Past 7/8 of it, or after a refusal, the owner of the
 * stacks collects: it marks every id something still holds
 * (python_names__mark()) and python_names__sweep() frees the others, which
 * nothing may hold after (the ids themselves are never given again: a stale
 * one names nothing, never another frame). An intern that does not fit is
 * refused (0) and counted; the caller names the frame with a marker.
 * Strings returned stay valid until the entry is swept.
 *
 * Lifecycle: process-wide, from the first intern to exit. Thread-safe (one
 * mutex); a collection runs on the thread that interns and reads stacks.
 * Error rule: python_names__intern() returns 0 when out of memory or room.
 */
#ifndef SFBPF_INTERP_PYTHON_NAMES_H
#define SFBPF_INTERP_PYTHON_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi.h"

#define PYTHON_NAMES_MAX_ID SFBPF_PY_ADDR_MASK /* ids below it (a stack's ip holds one) */

struct python_names_stats {
	uint64_t entries; /* (function, line) pairs held */
	uint64_t functions; /* (qualname, file, first line) held */
	uint64_t bytes; /* held, as the budget counts them */
	uint64_t budget; /* bytes; 0: no limit */
	uint64_t evicted; /* entries swept: no stack held them */
	uint64_t refused; /* interns refused: no room (or memory) */
	uint64_t collections; /* sweeps */
};

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

/* A file as labels name it: its base name, "<frozen x>" and "<string>" as they are. */
const char *python_names__base(const char *file);

/* The names of a spliced stack's ip; false: not one (or unknown id). */
bool python_names__get(uint64_t ip, struct python_name *out);

/* Bytes the table may hold (0: no limit, the default). */
void python_names__set_budget(uint64_t bytes);
/* Whether a collection is due: past 7/8 of the budget, or a refusal since the last. */
bool python_names__want_collect(void);
/* A collection: mark every ip still held (any ip: others are ignored), then sweep: bytes freed. */
void python_names__mark(uint64_t ip);
uint64_t python_names__sweep(void);
void python_names__stats(struct python_names_stats *out);

#endif /* SFBPF_INTERP_PYTHON_NAMES_H */
