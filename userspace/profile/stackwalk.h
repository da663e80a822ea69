/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one rule frames are named by: every output (folded, pprof, OTLP, the
 * SVG flame graph, through snapshot.h) and the live view name the frames of
 * an aggregated stack with it, so that they name them the same way. A
 * stack's named frames, root first:
 *
 *   comm, [truncated]?, user root ... user leaf, kernel root ... kernel leaf
 *
 * - comm: the task's command; the idle tasks (pid 0, "swapper/N") are all
 *   "swapper", as in perf.
 * - "[truncated]" only when the user stack lost its root (aggr_stop_truncated()).
 * - A user frame is its function symbol; without one, "[MODULE]" (e.g.
 *   "[libc.so.6]"; already bracketed names such as "[vdso]" stay as they are),
 *   or "[unknown]" when no mapping covers the address.
 * - Where the object's DWARF covers a user address (symbolize.h, srcline.h),
 *   its frame carries the source file and line, and the functions inlined
 *   there follow it as frames of their own (inlined = true, same address),
 *   outermost first, unless the symbolizer folds inlines away. A user frame
 *   with no symbol but a DWARF function takes that function's name.
 * - A Python frame (spliced in place of the eval loop's native frame,
 *   profile/pythons.h) is "qualname (file.py:line)", py-spy's form, with
 *   function the qualified name alone, file/line the line executed and
 *   decl_file/decl_line the code object's file and first line.
 * - A kernel frame is its kallsyms symbol, or "[unknown]". Writers mark kernel
 *   frames their own way (folded: "_[k]" suffix).
 * - Every frame but a leaf holds a return address and is looked up at
 *   addr - 1, so a call that ends a function is charged to that function.
 *
 * Names are raw (writers sanitize for their format); empty names become
 * "[unknown]".
 */
#ifndef SFBPF_STACKWALK_H
#define SFBPF_STACKWALK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/frame_names.h"
#include "symbols/symbolize.h"

struct aggr_stack;
struct ksyms;

enum sw_kind {
	SW_COMM = 0, /* root pseudo-frame: the task's command */
	SW_TRUNCATED, /* "[truncated]": the user stack's root is missing */
	SW_USER,
	SW_KERNEL,
};

struct sw_frame {
	enum sw_kind kind;
	bool symbol; /* name is a function symbol (not "[MODULE]"/"[unknown]") */
	bool python; /* user: a Python frame (name is its label, function its qualname) */
	const char *function; /* the function's own name where name says more (Python), or NULL */
	bool mapped; /* user: a mapping covered addr */
	const char *name;
	uint64_t addr; /* user/kernel: the address looked up (return address - 1) */
	uint64_t elf_addr; /* user: addr in the object's ELF address space, 0 if none */
	const char *module; /* user: "libc.so.6", "[vdso]"...; kernel: "ext4" or NULL (vmlinux) */
	const char *path; /* user: mapped file path, NULL if anonymous */
	/* user, mapped: the mapping covering addr, and its object's build-id ("" if none) */
	uint64_t map_start, map_end, map_offset;
	const char *build_id;
	bool inlined; /* user: inlined into the frame before it, at the same address */
	const char *file; /* user: source file of line (DWARF); NULL if unknown */
	uint32_t line; /* its line, 0 if unknown */
	const char *decl_file; /* user: where the function is declared (DWARF), or NULL */
	uint32_t decl_line; /* the function's first line, 0 if unknown */
};

/*
 * The address entry ip of a stack is looked up at: a return address at
 * ip - 1, the innermost entry of its part (leaf) and Python frames' ids as
 * they are.
 */
static inline uint64_t stackwalk__addr(uint64_t ip, bool leaf)
{
	return leaf || frame_names__is_ip(ip) ? ip : ip - 1;
}

/* The name of a stack's task (its SW_COMM frame). */
const char *stackwalk__comm(const struct aggr_stack *st);

/*
 * One frame named by the rules above, for the views that name addresses one
 * at a time and keep the names (the live view, its source page). kind is
 * SW_USER or SW_KERNEL; addr is what stackwalk__addr() gives; pid the
 * stack's process. out->f is the frame itself, without the functions
 * inlined there (their names are in out->si.lines, innermost first, as the
 * symbolizer said of a native user frame). Strings are valid until the
 * symbolizer's next call, and while *out lives.
 */
struct sw_name {
	struct sw_frame f;
	struct sym_info si;
	char buf[PATH_MAX + 2]; /* "[MODULE]" */
};
void stackwalk__name(struct symbolizer *sym, const struct ksyms *ks, uint32_t pid,
		     enum sw_kind kind, uint64_t addr, struct sw_name *out);

/*
 * Every frame one stack entry stands for, root first, as the outputs show
 * them: the frame stackwalk__name() names, then, at a native user address,
 * the functions inlined there (inlined = true, same address), innermost
 * last. Into e->frames, grown as needed (free() it when done); strings as
 * stackwalk__name()'s. Returns how many frames, or -ENOMEM.
 */
struct sw_entry {
	struct sw_name name;
	struct sw_frame *frames;
	size_t cap;
};
int stackwalk__entry(struct symbolizer *sym, const struct ksyms *ks, uint32_t pid,
		     enum sw_kind kind, uint64_t addr, struct sw_entry *e);

#endif /* SFBPF_STACKWALK_H */
