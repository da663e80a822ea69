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
 * struct _Py_DebugOffsets: a cookie, the version, then per structure its
 * size followed by the offsets of its fields, all uint64_t. The struct
 * itself grows between minor versions (3.14 and 3.15 add fields in the
 * middle), so its own layout is known per minor version: the word index of
 * each field sfbpf takes, from that version's pycore_debug_offsets.h
 * (pycore_runtime.h in 3.13). A version not listed is refused: a wrong
 * reading of the struct would be a wrong layout behind the right cookie.
 */
enum do_field {
	DO_RUNTIME_SIZE,
	DO_RUNTIME_INTERP_HEAD,
	DO_INTERP_SIZE,
	DO_INTERP_NEXT,
	DO_INTERP_THREADS_HEAD,
	DO_TSTATE_SIZE,
	DO_TSTATE_NEXT,
	DO_TSTATE_INTERP,
	DO_TSTATE_CURRENT_FRAME,
	DO_TSTATE_THREAD_ID,
	DO_TSTATE_NATIVE_ID,
	DO_FRAME_SIZE,
	DO_FRAME_PREVIOUS,
	DO_FRAME_EXECUTABLE,
	DO_FRAME_INSTR_PTR,
	DO_FRAME_OWNER,
	DO_CODE_SIZE,
	DO_CODE_FILENAME,
	DO_CODE_NAME,
	DO_CODE_QUALNAME,
	DO_CODE_LINETABLE,
	DO_CODE_FIRSTLINENO,
	DO_CODE_ADAPTIVE,
	DO_OBJECT_SIZE,
	DO_OBJECT_TYPE,
	DO_BYTES_SIZE,
	DO_BYTES_OB_SIZE,
	DO_BYTES_SVAL,
	DO_STR_SIZE,
	DO_STR_STATE,
	DO_STR_LENGTH,
	DO_STR_ASCII_SIZE,
	DO_STR_COMPACT_SIZE, /* 3.15+; 0: not published */
	DO__COUNT,
};

#define DO_VERSION 1 /* the same word in every version */
#define DO_FREE_THREADED 2

static const struct do_version {
	unsigned int minor;
	unsigned int words; /* the struct's size in words */
	uint8_t at[DO__COUNT]; /* word index of each field */
} do_versions[] = {
	{ 13, 73, { 3,	5,  6,	8,  9,	19, 21, 22, 23, 24, 25, 28, 29, 30, 31, 33, 34,
		    35, 36, 37, 38, 39, 43, 44, 45, 64, 65, 66, 67, 68, 69, 70, 0 } },
	{ 14, 95, { 3,	5,  6,	8,  9,	22, 24, 25, 26, 27, 28, 31, 32, 33, 34, 36, 39,
		    40, 41, 42, 43, 44, 48, 50, 51, 74, 75, 76, 77, 78, 79, 80, 0 } },
	{ 15, 111, { 3,	 5,  6,	 8,  9,	 22, 24, 25, 26, 30, 31, 39, 40, 41, 42, 44, 47,
		     48, 49, 50, 51, 52, 56, 58, 59, 86, 87, 88, 89, 90, 91, 92, 93 } },
};

/* Offset at field i, which must lie inside a structure of the size at field size_i. */
static int do_field(const uint64_t *w, const struct do_version *v, int i, int size_i, uint32_t *out)
{
	uint64_t off = w[v->at[i]], size = w[v->at[size_i]];

	if (off >= size || size > (1u << 24))
		return -EPROTO;
	*out = (uint32_t)off;
	return 0;
}

int py_layout__from_debug_offsets(const void *buf, size_t len, struct py_layout *l)
{
	static const struct {
		int field, size_field;
		size_t at;
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
	const struct do_version *v = NULL;
	uint64_t w[PY_DEBUG_OFFSETS_LEN / 8], ascii, compact;
	unsigned int minor;
	size_t i;

	if (len < 3 * 8 || memcmp(buf, "xdebugpy", 8))
		return -EPROTO;
	memcpy(w, buf, len < sizeof(w) ? len : sizeof(w));
	if ((w[DO_VERSION] >> 24) != 3)
		return -EPROTO;
	minor = (w[DO_VERSION] >> 16) & 0xff;
	for (i = 0; i < sizeof(do_versions) / sizeof(do_versions[0]); i++)
		if (do_versions[i].minor == minor)
			v = &do_versions[i];
	/* Another minor version has another struct; free-threading, another object header. */
	if (!v || w[DO_FREE_THREADED])
		return -ENOTSUP;
	if (len < v->words * 8)
		return -EPROTO;
	memset(l, 0, sizeof(*l));
	l->hexversion = (uint32_t)w[DO_VERSION];
	l->instr = PY_INSTR_POINTER;
	l->lines = PY_LINES_LOCATIONS;
	l->cframe_frame = PY_NONE;
	l->frame_is_entry = PY_NONE;
	/*
	 * The interpreter's own frames, which run no code: the C-stack shim (3
	 * in 3.12 and 3.13); from 3.14 the interpreter's entry frames (3) and,
	 * in 3.14, the C stack's (4). Every owner value from this one up.
	 */
	l->owner_cstack = 3;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint32_t *f = (uint32_t *)((char *)l + fields[i].at);

		if (do_field(w, v, fields[i].field, fields[i].size_field, f))
			return -EPROTO;
	}
	/* ASCII data follows the PyASCIIObject (its size is published); other
	 * compact strings add utf8_length and utf8 (3.12 dropped wstr), their
	 * size published from 3.15. */
	ascii = w[v->at[DO_STR_ASCII_SIZE]];
	compact = v->at[DO_STR_COMPACT_SIZE] ? w[v->at[DO_STR_COMPACT_SIZE]] : ascii + 16;
	if (ascii > 256 || compact > 256 || compact < ascii)
		return -EPROTO;
	l->str_ascii_size = (uint32_t)ascii;
	l->str_compact_size = (uint32_t)compact;
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
