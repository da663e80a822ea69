/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Folded-stack writer (Brendan Gregg's format, as perf + stackcollapse-perf.pl
 * produce it), one line per distinct symbolized stack:
 *
 *   comm;[truncated];user_root;...;user_leaf;kernel_root_[k];...;kernel_leaf_[k] COUNT
 *
 * Where DWARF describes a user address, the functions inlined there follow
 * its function as frames of their own, suffixed "_[i]" as perf's
 * stackcollapse marks them (sfbpf-top --no-inline folds them away).
 * "[truncated]" only when the user stack lost its root (aggr_stop_truncated()).
 * A user frame without a symbol is "[MODULE]" (e.g. "[libc.so.6]"), or
 * "[unknown]" when no mapping covers it; an unknown kernel frame is
 * "[unknown]_[k]". Return addresses (every frame but the leaf) are looked up
 * at addr - 1, so a call that ends a function is charged to that function.
 * Names are sanitized: ';' becomes ':', control characters become '_'. The
 * idle task (pid 0, "swapper/N") is "swapper", as in perf. Lines that
 * symbolize identically are merged; output is sorted by line (strcmp).
 */
#ifndef SFBPF_FOLDED_H
#define SFBPF_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

struct snapshot;

struct folded_opts {
	bool pid; /* "comm-PID" instead of "comm" (stackcollapse-perf.pl --pid) */
	bool weight; /* print summed sample weights instead of sample counts */
};

/*
 * The stacks of snap (snapshot.h); opts may be NULL (defaults). path "-" is
 * stdout. Returns 0 or a negative errno.
 */
int folded__write(const struct snapshot *snap, const struct folded_opts *opts, const char *path);
int folded__write_file(const struct snapshot *snap, const struct folded_opts *opts, FILE *f);

#endif /* SFBPF_FOLDED_H */
