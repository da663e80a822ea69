/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPython's own frames, read from outside a running process: which object
 * holds the interpreter (the executable, or libpython3.N.so), its version,
 * where `_PyRuntime` is, and the layout of the structures a stack walk reads
 * (docs/DESIGN-python.md), then every thread's chain of Python frames read
 * with process_vm_readv. The process is never stopped, traced or changed:
 * a frame read while the thread moves on may be stale, and every pointer
 * followed is checked (a code object must have PyCode_Type's address as its
 * type) before anything is taken from it.
 *
 * This is the userspace half of issue #29 and the proof of its layouts: the
 * BPF walk will read the same fields, in the same order, from the layout
 * python__layout() gives.
 *
 * Lifecycle: python__attach() → python__threads() / python__code_line() any
 * number of times → python__free().
 * Error rule: negative errno.
 *   -ENOENT   no CPython in the process (no object defines _PyRuntime)
 *   -ENOTSUP  a CPython this code has no layout for (before 3.9, 3.14+, a
 *             free-threaded or debug build), said once with pr_info
 *   -EAGAIN   no thread state yet: an interpreter not initialised (try again)
 *   -EPROTO   the layout failed the attach-time checks (python_checks)
 *   -ESRCH    the process is gone; -EFAULT an unreadable address
 */
#ifndef SFBPF_INTERP_PYTHON_H
#define SFBPF_INTERP_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/abi.h"
#include "interp/codeparts.h"

struct python;

/* Where the layout came from. */
enum python_layout_src {
	PYTHON_LAYOUT_BUILTIN = 0, /* the minor version's own (3.9-3.12) */
	PYTHON_LAYOUT_DEBUG_OFFSETS = 1, /* _Py_DebugOffsets at _PyRuntime (3.13) */
};

/* What the attach-time checks judged (each a count of things checked). */
struct python_checks {
	uint32_t threads; /* thread states reached from the interpreters */
	uint32_t threads_interp; /* ... whose interp field is the interpreter */
	uint32_t threads_task; /* ... whose native id is a task of the process (3.11+) */
	uint32_t codes; /* code objects met in the first walk */
	uint32_t codes_typed; /* ... whose type is PyCode_Type */
};

struct python_frame {
	uint64_t code; /* the code object's address in the process */
	int64_t lasti; /* byte offset of the instruction in its bytecode; -1: not started */
	/* The outermost frame one call of the native eval loop
	 * (_PyEval_EvalFrameDefault) runs: that native frame stands for this
	 * frame and the younger ones up to the next entry frame. */
	bool entry;
};

struct python_thread {
	uint64_t tstate; /* PyThreadState's address */
	uint64_t thread_id; /* pthread_self() of the thread: threading.get_ident() */
	uint64_t native_id; /* the kernel's TID (3.11+; 0 before: not kept) */
	uint32_t nr_frames;
	uint32_t shims; /* frames that run no code: C-stack entry shims (3.12+), incomplete */
	uint32_t untyped; /* frames whose code is not a code object (left out) */
	struct python_frame *frames; /* innermost first */
};

/* Attach to pid (nothing in it changes). 0 or a negative errno (above). */
int python__attach(int pid, struct python **out);
/*
 * Whether pid's mapping m (its executable) embeds CPython linked statically,
 * whatever its name: it exports _PyRuntime. Kept per file by its identity.
 */
struct procmap;
bool python__embeds(int pid, const struct procmap *m);
/*
 * Objects whose symbols and eval loop were read from their file (reads), and
 * attaches that found them known by the file's identity (hits): a few files
 * of interpreters serve every process of a host.
 */
void python__object_stats(uint64_t *reads, uint64_t *hits);
void python__free(struct python *py);

/* "3.11.2" and where the layout came from; the checks of the attach. */
const char *python__version(const struct python *py);
enum python_layout_src python__layout_src(const struct python *py);
const struct python_checks *python__checks(const struct python *py);
/* The layout's offsets, one "name=value" per line (what the tests compare with DWARF). */
void python__print_layout(const struct python *py, FILE *f);

/*
 * Every thread's frames, read now. *threads is an array of *nr; free it
 * with python__threads_free(). At most 4,096 threads and 1,024 frames each.
 */
int python__threads(struct python *py, struct python_thread **threads, size_t *nr);
void python__threads_free(struct python_thread *threads, size_t nr);

/*
 * A frame's name as Python shows it (co_qualname from 3.11, co_name before),
 * its file and the line of the instruction at lasti (0: none). Strings are
 * NUL-terminated, cut to their buffers.
 */
int python__code_line(struct python *py, const struct python_frame *fr, char *name, size_t name_len,
		      char *file, size_t file_len, int *line);

/* A code object's names and line table, read once (python__code()). */
struct python_code {
	char name[256]; /* co_qualname (3.11+), co_name before */
	char file[512];
	int firstlineno;
	uint8_t *linetable;
	size_t linetable_len;
	int64_t covered; /* instructions below this byte offset have their line in linetable */
};

/*
 * The code object at code, if it still is the one the BPF walk saw: its
 * type is PyCode_Type and the low 32 bits of its line table's address are
 * stamp (SFBPF_PY_* in bpf/abi.h). -ESTALE: freed (or reused) since; else
 * a read error. Free with python__code_free().
 */
int python__code(struct python *py, uint64_t code, uint32_t stamp, struct python_code *out);
/*
 * The code object as the BPF walk described it (size bytes of rec) while it
 * ran: what python__code() gives, from those bytes. Its line table may be
 * the first SFBPF_PY_TABLE_BYTES of a longer one (covered). -EPROTO: not a
 * code object; -ENODATA: a name the walk could not copy (read it with
 * python__code() then); -EINVAL: a malformed record.
 */
int python__code_captured(const struct python *py, const struct sfbpf_py_code *rec, size_t size,
			  struct python_code *out);
/*
 * The line of the instruction at byte offset lasti (0: none). -ERANGE: past
 * the part of the line table a description carried (python__code() has all).
 */
int python__code_lineno(const struct python *py, const struct python_code *c, int64_t lasti);
void python__code_free(struct python_code *c);

/*
 * _PyEval_EvalFrameDefault's code in the process: its symbol's range and
 * the parts the compiler split from it (codeparts.h), in *parts; how many
 * (0: not known).
 */
#define PY_EVAL_PARTS 8
size_t python__eval_parts(const struct python *py, const struct code_part **parts);
/*
 * The BPF walk's settings (bpf/abi.h) for this interpreter; the caller sets
 * start_ticks. -ERANGE: an offset the settings cannot hold.
 */
int python__bpf_settings(const struct python *py, struct sfbpf_py_proc *out);

#endif /* SFBPF_INTERP_PYTHON_H */
