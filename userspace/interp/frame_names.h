/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The frames of every runtime (runtime.h: CPython's, HotSpot's) as the
 * outputs name them: one table, for the whole program, of (qualified name,
 * file, first line, line) → a frame id. Each runtime resolves the frames
 * the BPF walk sent while their process is alive (profile/pythons.h,
 * profile/hotspots.h) and keeps only the id in the stack, as
 * SFBPF_PY_TAG | id in place of a user address; the frame naming rule every
 * output uses (profile/stackwalk.c: the snapshot, the live view) names it
 * from here, whenever they run: after the code is freed or its process gone.
 * (Its counters and budget option keep their first names, py_names_* and
 * --max-python-mem: scripts read them.)
 *
 * Budget (issue #28): the table's bytes (names, labels, map slots) stay
 * within frame_names__set_budget()'s; a function's names are kept once
 * for all its lines. Past 7/8 of it, or after a refusal, the owner of the
 * stacks collects: it marks every id something still holds
 * (frame_names__mark()) and frame_names__sweep() frees the others, which
 * nothing may hold after (the ids themselves are never given again: a stale
 * one names nothing, never another frame). An intern that does not fit is
 * refused (0) and counted; the caller names the frame with a marker.
 * Strings returned stay valid until the entry is swept.
 *
 * Lifecycle: process-wide, from the first intern to exit. Thread-safe (one
 * mutex); a collection runs on the thread that interns and reads stacks.
 * Error rule: frame_names__intern() returns 0 when out of memory or room.
 */
#ifndef SFBPF_INTERP_FRAME_NAMES_H
#define SFBPF_INTERP_FRAME_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi.h"

#define FRAME_NAMES_MAX_ID SFBPF_PY_ADDR_MASK /* ids below it (a stack's ip holds one) */

struct frame_names_stats {
	uint64_t entries; /* (function, line) pairs held */
	uint64_t functions; /* (qualname, file, first line) held */
	uint64_t bytes; /* held, as the budget counts them */
	uint64_t budget; /* bytes; 0: no limit */
	uint64_t evicted; /* entries swept: no stack held them */
	uint64_t refused; /* interns refused: no room (or memory) */
	uint64_t collections; /* sweeps */
};

struct frame_name {
	const char *runtime; /* "python", "java": the module the outputs show it in */
	const char *qualname;
	const char *file; /* as the runtime has it (co_filename, a class's source file) */
	const char *label; /* "qualname (file.py:line)": folded, SVG, the live view */
	uint32_t firstline; /* the function's first line (co_firstlineno); 0: unknown */
	uint32_t line; /* of the instruction; 0: none */
};

/*
 * The frame's id (>= 1), the same for the same five values; 0: no room.
 * runtime: a string that lives as long as the program.
 */
uint64_t frame_names__intern(const char *runtime, const char *qualname, const char *file,
			     uint32_t firstline, uint32_t line);
/* A user "address" standing for frame id: what a spliced stack holds. */
static inline uint64_t frame_names__ip(uint64_t id)
{
	return SFBPF_PY_TAG | id;
}

static inline bool frame_names__is_ip(uint64_t ip)
{
	return (ip & SFBPF_PY_TAG) && !(ip & SFBPF_PY_ENTRY);
}

/* A file as labels name it: its base name, "<frozen x>" and "<string>" as they are. */
const char *frame_names__base(const char *file);

/* The names of a spliced stack's ip; false: not one (or unknown id). */
bool frame_names__get(uint64_t ip, struct frame_name *out);

/* Bytes the table may hold (0: no limit, the default). */
void frame_names__set_budget(uint64_t bytes);
/* Whether a collection is due: past 7/8 of the budget, or a refusal since the last. */
bool frame_names__want_collect(void);
/* A collection: mark every ip still held (any ip: others are ignored), then sweep: bytes freed. */
void frame_names__mark(uint64_t ip);
uint64_t frame_names__sweep(void);
void frame_names__stats(struct frame_names_stats *out);

#endif /* SFBPF_INTERP_FRAME_NAMES_H */
