/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What python.c, python_layout.c and python_lines.c share: the layout of the
 * CPython structures a stack walk reads, and the line-table decoders. The
 * layout is a flat list of offsets so that the BPF walk can take the same
 * struct as read-only settings (docs/DESIGN-python.md).
 */
#ifndef SFBPF_INTERP_PYTHON_INT_H
#define SFBPF_INTERP_PYTHON_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "interp/python.h"
#include "procs/procmem.h"

#define PY_NONE UINT32_MAX /* a field this version does not have */

/* How a frame says which instruction it is at. */
enum py_instr {
	PY_INSTR_LASTI_BYTES, /* 3.9: int f_lasti, a byte offset */
	PY_INSTR_LASTI_UNITS, /* 3.10: int f_lasti, in 2-byte code units */
	PY_INSTR_POINTER, /* 3.11+: a pointer into co_code_adaptive */
};

/* How a code object maps instructions to lines. */
enum py_lines {
	PY_LINES_LNOTAB, /* 3.9: co_lnotab */
	PY_LINES_310, /* 3.10: co_linetable, (bytes, line delta) pairs */
	PY_LINES_LOCATIONS, /* 3.11+: co_linetable, the location table */
};

struct py_layout {
	uint32_t hexversion; /* PY_VERSION_HEX */
	enum py_instr instr;
	enum py_lines lines;
	/* _PyRuntime and the interpreters */
	uint32_t runtime_interp_head;
	uint32_t interp_next;
	uint32_t interp_threads_head;
	/* PyThreadState */
	uint32_t tstate_next;
	uint32_t tstate_interp;
	uint32_t tstate_frame; /* frame (3.9/3.10), cframe (3.11/3.12), current_frame */
	uint32_t cframe_frame; /* _PyCFrame.current_frame (3.11/3.12), else PY_NONE */
	uint32_t tstate_thread_id;
	uint32_t tstate_native_id;
	/* PyFrameObject (3.9/3.10) or _PyInterpreterFrame */
	uint32_t frame_previous;
	uint32_t frame_code;
	uint32_t frame_instr;
	uint32_t frame_owner; /* char, 3.11+ */
	uint32_t frame_is_entry; /* char, 3.11 only */
	uint32_t owner_cstack; /* 3.12+: owners from this one up run no code, else PY_NONE */
	/* PyCodeObject */
	uint32_t code_filename;
	uint32_t code_name;
	uint32_t code_qualname;
	uint32_t code_firstlineno;
	uint32_t code_linetable;
	uint32_t code_adaptive; /* co_code_adaptive (3.11+) */
	/* PyObject, bytes, str */
	uint32_t ob_type;
	uint32_t bytes_size;
	uint32_t bytes_data;
	uint32_t str_state;
	uint32_t str_length;
	uint32_t str_ascii_size; /* sizeof(PyASCIIObject): ASCII data follows */
	uint32_t str_compact_size; /* sizeof(PyCompactUnicodeObject): other data follows */
};

/* An attached interpreter (python.h): python.c attaches, python_code.c reads code objects. */
struct python {
	int pid;
	uint64_t runtime; /* _PyRuntime's address in the process */
	uint64_t code_type; /* PyCode_Type's */
	struct code_part eval[PY_EVAL_PARTS]; /* _PyEval_EvalFrameDefault's code and its parts */
	size_t nr_eval; /* 0: unknown */
	struct py_layout layout;
	enum python_layout_src src;
	struct python_checks checks;
	char version[32];
};

/* The built-in layout of minor version 3.minor, or NULL (not 9-12). */
const struct py_layout *py_layout__builtin(unsigned int minor);

/*
 * Fill *l from the _Py_DebugOffsets read at _PyRuntime (len bytes at buf):
 * 0, -EPROTO (no cookie, offsets past their structs' sizes), -ENOTSUP (a
 * version whose debug-offsets struct is not known, or free-threaded).
 */
int py_layout__from_debug_offsets(const void *buf, size_t len, struct py_layout *l);
/* Bytes of _PyRuntime to read for the call above: the largest known struct (3.15's). */
#define PY_DEBUG_OFFSETS_LEN 888

/* name=value lines, one per field. */
void py_layout__print(const struct py_layout *l, FILE *f);

/*
 * The line of the instruction at byte offset addr (-1: before the first
 * instruction) from a code object's table: 0 when the table gives none.
 */
int py_lines__line(enum py_lines kind, const uint8_t *tab, size_t len, int firstlineno,
		   int64_t addr);
/*
 * The first len bytes of a longer table: the byte offset below which every
 * instruction's line is in them (the last entry, maybe cut, left out).
 */
int64_t py_lines__covered(enum py_lines kind, const uint8_t *tab, size_t len);

#endif /* SFBPF_INTERP_PYTHON_INT_H */
