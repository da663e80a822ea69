// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CPython layouts: the built-in ones of 3.9 to 3.12, and 3.13's from the
 * _Py_DebugOffsets the interpreter publishes at the start of _PyRuntime.
 *
 * The built-in offsets are the x86-64/AArch64 (LP64) layouts of each minor
 * version's structures as its headers declare them (Include/cpython/ and
 * Include/internal/ of that version). Within a minor version CPython keeps
 * them (the ABI of PyThreadState and the frame and code objects is what
 * extensions compiled for 3.N rely on), so they are keyed on the minor
 * version, never on a distribution's build; tests/pyframes.test compares
 * each with the DWARF of pyenv's builds, and python.c's attach-time checks
 * refuse a process where they do not hold.
 */
#include <errno.h>
#include <string.h>

#include "interp/python_int.h"

#define N PY_NONE

static const struct py_layout layout_39 = {
	.hexversion = 0x03090000,
	.instr = PY_INSTR_LASTI_BYTES,
	.lines = PY_LINES_LNOTAB,
	.runtime_interp_head = 32, /* interpreters.head */
	.interp_next = 0,
	.interp_threads_head = 8, /* tstate_head */
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 24, /* PyFrameObject *frame */
	.cframe_frame = N,
	.tstate_thread_id = 176,
	.tstate_native_id = N,
	.frame_previous = 24, /* f_back */
	.frame_code = 32,
	.frame_instr = 104, /* int f_lasti */
	.frame_owner = N,
	.frame_is_entry = N,
	.owner_cstack = N,
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = N,
	.code_firstlineno = 40,
	.code_linetable = 120, /* co_lnotab */
	.code_adaptive = N,
	.ob_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.str_state = 32,
	.str_length = 16,
	.str_ascii_size = 48,
	.str_compact_size = 72,
};

/* 3.10: f_lasti moved and counts code units; co_lnotab became co_linetable. */
static const struct py_layout layout_310 = {
	.hexversion = 0x030a0000,
	.instr = PY_INSTR_LASTI_UNITS,
	.lines = PY_LINES_310,
	.runtime_interp_head = 32,
	.interp_next = 0,
	.interp_threads_head = 8,
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 24,
	.cframe_frame = N,
	.tstate_thread_id = 176,
	.tstate_native_id = N,
	.frame_previous = 24,
	.frame_code = 32,
	.frame_instr = 96,
	.frame_owner = N,
	.frame_is_entry = N,
	.owner_cstack = N,
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = N,
	.code_firstlineno = 40,
	.code_linetable = 120,
	.code_adaptive = N,
	.ob_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.str_state = 32,
	.str_length = 16,
	.str_ascii_size = 48,
	.str_compact_size = 72,
};

/*
 * 3.11: interpreter frames in the thread's data stack, reached through
 * tstate->cframe->current_frame; the first frame each _PyEval_EvalFrameDefault
 * call runs has is_entry set.
 */
static const struct py_layout layout_311 = {
	.hexversion = 0x030b0000,
	.instr = PY_INSTR_POINTER,
	.lines = PY_LINES_LOCATIONS,
	.runtime_interp_head = 40,
	.interp_next = 0,
	.interp_threads_head = 16, /* threads.head */
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 56, /* _PyCFrame *cframe */
	.cframe_frame = 8,
	.tstate_thread_id = 152,
	.tstate_native_id = 160,
	.frame_previous = 48,
	.frame_code = 32, /* f_code */
	.frame_instr = 56, /* prev_instr */
	.frame_owner = 69,
	.frame_is_entry = 68,
	.owner_cstack = N,
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_firstlineno = 72,
	.code_linetable = 136,
	.code_adaptive = 184,
	.ob_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.str_state = 32,
	.str_length = 16,
	.str_ascii_size = 48,
	.str_compact_size = 72,
};

/*
 * 3.12: each _PyEval_EvalFrameDefault call pushes a shim frame owned by the C
 * stack below the frames it runs; str lost its wstr fields.
 */
static const struct py_layout layout_312 = {
	.hexversion = 0x030c0000,
	.instr = PY_INSTR_POINTER,
	.lines = PY_LINES_LOCATIONS,
	.runtime_interp_head = 40,
	.interp_next = 0,
	.interp_threads_head = 72,
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_frame = 56,
	.cframe_frame = 0,
	.tstate_thread_id = 136,
	.tstate_native_id = 144,
	.frame_previous = 8,
	.frame_code = 0,
	.frame_instr = 56, /* prev_instr */
	.frame_owner = 70,
	.frame_is_entry = N,
	.owner_cstack = 3,
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_firstlineno = 68,
	.code_linetable = 136,
	.code_adaptive = 192,
	.ob_type = 8,
	.bytes_size = 16,
	.bytes_data = 32,
	.str_state = 32,
	.str_length = 16,
	.str_ascii_size = 40,
	.str_compact_size = 56,
};

const struct py_layout *py_layout__builtin(unsigned int minor)
{
	switch (minor) {
	case 9:
		return &layout_39;
	case 10:
		return &layout_310;
	case 11:
		return &layout_311;
	case 12:
		return &layout_312;
	}
	return NULL;
}

/*
 * 3.13's struct _Py_DebugOffsets: a cookie, the version, then per structure
 * its size followed by the offsets of its fields, all uint64_t. The struct
 * itself grows between minor versions (3.14 adds fields in the middle), so
 * its own layout is known per minor version: 3.13's below. Word indexes.
 */
enum {
	DO_VERSION = 1,
	DO_FREE_THREADED = 2,
	DO_RUNTIME_SIZE = 3,
	DO_RUNTIME_INTERP_HEAD = 5,
	DO_INTERP_SIZE = 6,
	DO_INTERP_NEXT = 8,
	DO_INTERP_THREADS_HEAD = 9,
	DO_TSTATE_SIZE = 19,
	DO_TSTATE_NEXT = 21,
	DO_TSTATE_INTERP = 22,
	DO_TSTATE_CURRENT_FRAME = 23,
	DO_TSTATE_THREAD_ID = 24,
	DO_TSTATE_NATIVE_ID = 25,
	DO_FRAME_SIZE = 28,
	DO_FRAME_PREVIOUS = 29,
	DO_FRAME_EXECUTABLE = 30,
	DO_FRAME_INSTR_PTR = 31,
	DO_FRAME_OWNER = 33,
	DO_CODE_SIZE = 34,
	DO_CODE_FILENAME = 35,
	DO_CODE_NAME = 36,
	DO_CODE_QUALNAME = 37,
	DO_CODE_LINETABLE = 38,
	DO_CODE_FIRSTLINENO = 39,
	DO_CODE_ADAPTIVE = 43,
	DO_OBJECT_SIZE = 44,
	DO_OBJECT_TYPE = 45,
	DO_BYTES_SIZE = 64,
	DO_BYTES_OB_SIZE = 65,
	DO_BYTES_SVAL = 66,
	DO_STR_SIZE = 67,
	DO_STR_STATE = 68,
	DO_STR_LENGTH = 69,
	DO_STR_ASCII_SIZE = 70,
	DO_WORDS = 73,
};

/* Offset at word i, which must lie inside a structure of the size at word size_i. */
static int do_field(const uint64_t *w, int i, int size_i, uint32_t *out)
{
	if (w[i] >= w[size_i] || w[size_i] > (1u << 24))
		return -EPROTO;
	*out = (uint32_t)w[i];
	return 0;
}

int py_layout__from_debug_offsets(const void *buf, size_t len, struct py_layout *l)
{
	static const struct {
		int word, size_word;
		size_t field;
	} fields[] = {
		{ DO_RUNTIME_INTERP_HEAD, DO_RUNTIME_SIZE,
		  offsetof(struct py_layout, runtime_interp_head) },
		{ DO_INTERP_NEXT, DO_INTERP_SIZE, offsetof(struct py_layout, interp_next) },
		{ DO_INTERP_THREADS_HEAD, DO_INTERP_SIZE,
		  offsetof(struct py_layout, interp_threads_head) },
		{ DO_TSTATE_NEXT, DO_TSTATE_SIZE, offsetof(struct py_layout, tstate_next) },
		{ DO_TSTATE_INTERP, DO_TSTATE_SIZE, offsetof(struct py_layout, tstate_interp) },
		{ DO_TSTATE_CURRENT_FRAME, DO_TSTATE_SIZE,
		  offsetof(struct py_layout, tstate_frame) },
		{ DO_TSTATE_THREAD_ID, DO_TSTATE_SIZE,
		  offsetof(struct py_layout, tstate_thread_id) },
		{ DO_TSTATE_NATIVE_ID, DO_TSTATE_SIZE,
		  offsetof(struct py_layout, tstate_native_id) },
		{ DO_FRAME_PREVIOUS, DO_FRAME_SIZE, offsetof(struct py_layout, frame_previous) },
		{ DO_FRAME_EXECUTABLE, DO_FRAME_SIZE, offsetof(struct py_layout, frame_code) },
		{ DO_FRAME_INSTR_PTR, DO_FRAME_SIZE, offsetof(struct py_layout, frame_instr) },
		{ DO_FRAME_OWNER, DO_FRAME_SIZE, offsetof(struct py_layout, frame_owner) },
		{ DO_CODE_FILENAME, DO_CODE_SIZE, offsetof(struct py_layout, code_filename) },
		{ DO_CODE_NAME, DO_CODE_SIZE, offsetof(struct py_layout, code_name) },
		{ DO_CODE_QUALNAME, DO_CODE_SIZE, offsetof(struct py_layout, code_qualname) },
		{ DO_CODE_LINETABLE, DO_CODE_SIZE, offsetof(struct py_layout, code_linetable) },
		{ DO_CODE_FIRSTLINENO, DO_CODE_SIZE, offsetof(struct py_layout, code_firstlineno) },
		{ DO_CODE_ADAPTIVE, DO_CODE_SIZE, offsetof(struct py_layout, code_adaptive) },
		{ DO_OBJECT_TYPE, DO_OBJECT_SIZE, offsetof(struct py_layout, ob_type) },
		{ DO_BYTES_OB_SIZE, DO_BYTES_SIZE, offsetof(struct py_layout, bytes_size) },
		{ DO_BYTES_SVAL, DO_BYTES_SIZE, offsetof(struct py_layout, bytes_data) },
		{ DO_STR_STATE, DO_STR_SIZE, offsetof(struct py_layout, str_state) },
		{ DO_STR_LENGTH, DO_STR_SIZE, offsetof(struct py_layout, str_length) },
	};
	uint64_t w[DO_WORDS];
	size_t i;

	if (len < sizeof(w) || memcmp(buf, "xdebugpy", 8))
		return -EPROTO;
	memcpy(w, buf, sizeof(w));
	/* The struct's own layout is 3.13's: another minor version has another. */
	if ((w[DO_VERSION] >> 16) != 0x030d)
		return -ENOTSUP;
	if (w[DO_FREE_THREADED])
		return -ENOTSUP;
	memset(l, 0, sizeof(*l));
	l->hexversion = (uint32_t)w[DO_VERSION];
	l->instr = PY_INSTR_POINTER;
	l->lines = PY_LINES_LOCATIONS;
	l->cframe_frame = PY_NONE;
	l->frame_is_entry = PY_NONE;
	l->owner_cstack = 3;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint32_t *f = (uint32_t *)((char *)l + fields[i].field);

		if (do_field(w, fields[i].word, fields[i].size_word, f))
			return -EPROTO;
	}
	/* ASCII data follows the PyASCIIObject (its size is published); other
	 * compact strings add utf8_length and utf8 (3.12 dropped wstr). */
	if (w[DO_STR_ASCII_SIZE] > 256)
		return -EPROTO;
	l->str_ascii_size = (uint32_t)w[DO_STR_ASCII_SIZE];
	l->str_compact_size = l->str_ascii_size + 16;
	return 0;
}

void py_layout__print(const struct py_layout *l, FILE *f)
{
#define P(x) fprintf(f, "%s=%d\n", #x, l->x == PY_NONE ? -1 : (int)l->x)
	P(runtime_interp_head);
	P(interp_next);
	P(interp_threads_head);
	P(tstate_next);
	P(tstate_interp);
	P(tstate_frame);
	P(cframe_frame);
	P(tstate_thread_id);
	P(tstate_native_id);
	P(frame_previous);
	P(frame_code);
	P(frame_instr);
	P(frame_owner);
	P(frame_is_entry);
	P(code_filename);
	P(code_name);
	P(code_qualname);
	P(code_firstlineno);
	P(code_linetable);
	P(code_adaptive);
	P(ob_type);
	P(bytes_size);
	P(bytes_data);
	P(str_state);
	P(str_length);
	P(str_ascii_size);
	P(str_compact_size);
#undef P
}
