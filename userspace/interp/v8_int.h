/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside interp/v8: the layout V8's postmortem metadata publishes
 * (v8_layout.c), read from the object's v8dbg_* symbols by class and field,
 * whatever C++ type a version spells in the symbol's name. A field no
 * version publishes is found where the objects themselves show it
 * (v8_names.c: calibration, each checked by instance types).
 */
#ifndef SFBPF_INTERP_V8_INT_H
#define SFBPF_INTERP_V8_INT_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/v8.h"
#include "util/hashmap.h"

#define V8_NONE UINT16_MAX

struct v8_layout {
	/* Frame slots, bytes from fp. */
	int16_t fp_context, fp_function, fp_bytecode_array, fp_bytecode_offset;
	/* Objects: a tagged pointer's tag, its map, the map's instance type. */
	uint16_t map, map_type;
	uint16_t type_map, type_sfi, type_script, type_scope_info, type_bytecode_array;
	uint16_t type_byte_array, type_fixed_array, type_code, type_istream, type_oddball;
	/* V8 12+: arrays of trusted space, a Code's function behind a wrapper. */
	uint16_t type_trusted_fixed_array, type_protected_fixed_array, type_trusted_byte_array;
	uint16_t type_sfi_wrapper, wrapper_shared, type_bytecode_wrapper, type_interpreter_data;
	uint16_t first_nonstring;
	/* Strings. */
	uint16_t str_repr_mask, str_enc_mask, str_one_byte, str_seq, str_cons, str_ext;
	uint16_t str_sliced, str_thin;
	uint16_t str_length, seq_chars, seq2_chars, cons_first, cons_second, sliced_parent;
	uint16_t sliced_offset, thin_actual, ext_resource;
	/* Functions and scripts. */
	uint16_t jsf_shared, sfi_name, sfi_script, sfi_function_data;
	uint16_t script_name, script_source, script_line_ends;
	uint16_t si_ncontextlocals, si_first_vars;
	/* Arrays. */
	uint16_t fa_length, fa_data, ba_header, ba_length;
	/*
	 * Code: the header before its instructions, an InstructionStream's
	 * (11+), or a Code's own that holds them (10.x: code_inline); the
	 * field of a Code that points at them (11+; V8_NONE: found).
	 */
	uint16_t istream_header, code_start;
	bool code_inline;
	uint16_t code_deopt, code_spt, code_bytecode; /* V8_NONE: found by calibration */
	int16_t deopt_sfi, deopt_literals, deopt_inlining;
	/* The interpreter's array and offset registers, V8's codes (-1: none). */
	int16_t reg_bytecode_array, reg_bytecode_offset;
	int32_t version[4];
};

/* The object's V8 in a process. */
struct v8 {
	int pid;
	struct v8_layout l;
	char version[32];
	bool unsupported; /* a V8 whose metadata says a form the walk cannot read */
	/* The embedded builtins, ELF addresses, and the object's file identity. */
	uint64_t blob_lo, blob_hi, bias;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint64_t blob_off; /* the blob's file offset */
	/* Calibrated: the BytecodeArray's position table field; an InstructionStream's map. */
	uint16_t ba_spt;
	uint64_t istream_map;
	/* The layout's, or found on the first optimised code (V8_NONE, -1: not yet). */
	uint16_t code_start, code_deopt, code_spt;
	int16_t deopt_sfi, deopt_literals, deopt_inlining;
	/* Scripts' line ends, cached by the script's address and source. */
	struct hashmap scripts;
	struct v8_script *sc;
	size_t nr_sc, sc_cap;
};

struct v8_script {
	uint64_t addr, source;
	uint32_t *ends; /* offset of each line's end */
	uint32_t nr;
	char file[V8_FILE_MAX];
};

/* v8.c: heap objects, checked by type (0, or an error). */
int v8_type(struct v8 *v, uint64_t p, uint16_t *type);
int v8_field(struct v8 *v, uint64_t p, uint16_t off, uint64_t *out);
bool v8_smi(uint64_t w, int64_t *out);
/* A string's characters, up to max of them, to fn in chunks; *len its length. */
typedef int (*v8_chars_fn)(void *ctx, const void *chars, size_t n, bool wide);
int v8_chars(struct v8 *v, uint64_t s, v8_chars_fn fn, void *ctx, uint64_t max, uint64_t *len);
int v8_string(struct v8 *v, uint64_t s, char *out, size_t size);

/* v8_names.c, for v8_code.c. */
#define V8_POS_OFFSET(raw) ((int64_t)(((raw) >> 1) & 0x3fffffff) - 1)
#define V8_POS_INLINING(raw) ((int64_t)(((raw) >> 31) & 0xffff) - 1)
int v8_table_find(const uint8_t *p, size_t n, int64_t target, int64_t limit, uint64_t *raw);
int v8_byte_array(struct v8 *v, uint64_t ba, uint8_t **out, size_t *n);
int v8_function_at(struct v8 *v, uint64_t sfi, int64_t pos, struct v8_func *f);

static inline bool v8_is_byte_array(const struct v8 *v, uint16_t type)
{
	return type != V8_NONE &&
	       (type == v->l.type_byte_array || type == v->l.type_trusted_byte_array);
}

static inline bool v8_is_fixed_array(const struct v8 *v, uint16_t type)
{
	return type != V8_NONE &&
	       (type == v->l.type_fixed_array || type == v->l.type_trusted_fixed_array ||
		type == v->l.type_protected_fixed_array);
}

/*
 * The layout from the object's v8dbg_* symbols (elf: the file's), its
 * builtins' ELF range into *lo, *hi (0, 0: no symbol tells it): 0, or
 * -ENOENT (no V8 metadata), -ENOTSUP (pointer compression, other tagging).
 */
int v8_layout__read(Elf *elf, struct v8_layout *l, uint64_t *lo, uint64_t *hi);

#endif /* SFBPF_INTERP_V8_INT_H */
