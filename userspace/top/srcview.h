/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live view's source page (key a, like perf's annotate): the source
 * lines where one function's own samples (Self) fell, with their counts.
 *
 * Each distinct stack whose leaf frame is the function (named as topview.h
 * and stackwalk.h name frames, in the row's PID or command) adds its samples
 * to the line its leaf address resolves to (symbolize.h): the innermost
 * line, so code inlined into the function is charged to the line it came
 * from, and that line names the inlined function. A Python function's own
 * samples are those whose innermost frame is one of its Python frames, each
 * at the line its instruction is on (its file read under its process's
 * root). Counts are the session's samples so far (not decayed). Source text
 * is shown when the file is readable here (at most SRCVIEW_MAX_FILE bytes).
 *
 * Error convention: negative errno.
 */
#ifndef SFBPF_SRCVIEW_H
#define SFBPF_SRCVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "util/strset.h"

struct aggregator;
struct symbolizer;

#define SRCVIEW_MAX_FILE (8u << 20)

/*
 * Which function: a user symbol of a module, in one process or command, or in
 * all. A runtime's function (py_function set: a row of module "python" or "java",
 * whose name is one of its frames' labels, "qualname (file.py:line)") is its
 * frames of that qualname and file base name (topview_sym's), at any line.
 */
struct srcview_query {
	const char *name;
	const char *module;
	uint32_t pid; /* 0: any */
	const char *comm; /* NULL or "-": any */
	const char *py_function, *py_file; /* NULL: not a Python function */
};

struct srcview_line {
	const char *file; /* NULL: the address has no source line */
	uint32_t line;
	const char *function; /* the innermost function there (an inlined one, or name) */
	uint64_t samples;
	uint32_t pid; /* a Python file's process (the path is under its root); 0: ours */
};

struct srcview {
	struct srcview_line *lines; /* by file, then line; the line-less entry last */
	size_t nr_lines, cap;
	uint64_t samples; /* all of the function's own samples */
	struct strset names; /* the lines' files and functions: the page's own copies */
};

/*
 * Fill v (zeroed, or filled before: it is reused) with q's lines over a's
 * stacks. The lines' strings are v's own copies, valid until the next
 * collect or srcview__free(): the symbolizer's are valid only until its next
 * lookup, which may evict the object they belong to (symcache.h), and the
 * page names many stacks. Returns 0 or a negative errno.
 */
int srcview__collect(struct srcview *v, const struct aggregator *a, struct symbolizer *sym,
		     const struct srcview_query *q);
void srcview__free(struct srcview *v);

/*
 * Line `line` of file (without its newline), read the first time and kept;
 * NULL if unreadable or shorter. The cache lives until srcview__free_text().
 * pid: the file is that process's (a Python source file): opened under its
 * root, as the process names it (procmaps.h), never ours; 0: ours.
 */
const char *srcview__text(uint32_t pid, const char *file, uint32_t line);
void srcview__free_text(void);

#endif /* SFBPF_SRCVIEW_H */
