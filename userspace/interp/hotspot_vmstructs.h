/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HotSpot's own description of itself for out-of-process tools: the four
 * tables of vmStructs.cpp that the JDK's serviceability agent (jhsdb) reads.
 * Every field such a tool may follow, with its byte offset in its type (or,
 * for a static, its address in the process) and its C++ type; every type's
 * size and superclass; the named int and long constants. A JVM built from
 * any source, version or distribution describes itself this way, so sfbpf
 * learns each JVM's layout from the JVM and keeps no table of its own.
 *
 * libjvm exports, in .dynsym, the four tables' addresses (gHotSpotVMStructs,
 * gHotSpotVMTypes, gHotSpotVMIntConstants, gHotSpotVMLongConstants, each a
 * pointer variable) and, for each kind of entry, its stride and the offset
 * of each member in it (gHotSpotVMStructEntryTypeNameOffset ...). Those
 * offsets are set by libjvm's constructors, so all of it is read from the
 * process's memory, never the file. Each table ends at an entry whose name
 * is NULL. The tables are the target's data: every stride, offset and string
 * is bounded, and a table that breaks a bound is refused (-EPROTO), whole.
 */
#ifndef SFBPF_INTERP_HOTSPOT_VMSTRUCTS_H
#define SFBPF_INTERP_HOTSPOT_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The symbols of libjvm the tables are found by, in the order of hs_sym_names. */
enum hs_sym {
	HS_SYM_STRUCTS,
	HS_SYM_STRUCT_TYPE_NAME,
	HS_SYM_STRUCT_FIELD_NAME,
	HS_SYM_STRUCT_TYPE_STRING,
	HS_SYM_STRUCT_IS_STATIC,
	HS_SYM_STRUCT_OFFSET,
	HS_SYM_STRUCT_ADDRESS,
	HS_SYM_STRUCT_STRIDE,
	HS_SYM_TYPES,
	HS_SYM_TYPE_NAME,
	HS_SYM_TYPE_SUPER,
	HS_SYM_TYPE_IS_OOP,
	HS_SYM_TYPE_IS_INTEGER,
	HS_SYM_TYPE_IS_UNSIGNED,
	HS_SYM_TYPE_SIZE,
	HS_SYM_TYPE_STRIDE,
	HS_SYM_INTS,
	HS_SYM_INT_NAME,
	HS_SYM_INT_VALUE,
	HS_SYM_INT_STRIDE,
	HS_SYM_LONGS,
	HS_SYM_LONG_NAME,
	HS_SYM_LONG_VALUE,
	HS_SYM_LONG_STRIDE,
	HS_SYM_NR,
};

extern const char *const hs_sym_names[HS_SYM_NR];

struct hs_field {
	const char *type, *name; /* "CodeBlob", "_frame_size"; "HeapBlock::Header", "_used" */
	const char *type_string; /* the member's C++ type: "int", "Method*", "" if none */
	bool is_static;
	uint64_t offset; /* in its type (not static) */
	uint64_t address; /* of the variable in the process (static) */
};

struct hs_type {
	const char *name, *super; /* super: NULL for none */
	bool is_oop, is_integer, is_unsigned;
	uint64_t size;
};

struct hs_const {
	const char *name;
	int64_t value; /* an int constant sign-extended */
};

struct hs_tables;

/*
 * Read pid's tables; addrs[] are the hs_sym symbols' addresses in the
 * process (all must be known). 0, -ESRCH, -EFAULT (unreadable), -ENOMEM,
 * -EAGAIN (the table pointers still NULL: libjvm's constructors have not
 * run), -EPROTO (a table breaks a bound: said with pr_debug).
 */
int hs_tables__read(int pid, const uint64_t addrs[HS_SYM_NR], struct hs_tables **out);
void hs_tables__free(struct hs_tables *t);

/* Lookups: NULL / false where the JVM does not have it. */
const struct hs_field *hs_tables__field(const struct hs_tables *t, const char *type,
					const char *name);
const struct hs_type *hs_tables__type(const struct hs_tables *t, const char *name);
bool hs_tables__const(const struct hs_tables *t, const char *name, int64_t *value);

/* Everything, in table order: for tests and -vv. */
size_t hs_tables__nr_fields(const struct hs_tables *t);
const struct hs_field *hs_tables__field_at(const struct hs_tables *t, size_t i);
size_t hs_tables__nr_types(const struct hs_tables *t);
const struct hs_type *hs_tables__type_at(const struct hs_tables *t, size_t i);
/* ints: long_consts false; longs: true. */
size_t hs_tables__nr_consts(const struct hs_tables *t, bool long_consts);
const struct hs_const *hs_tables__const_at(const struct hs_tables *t, bool long_consts, size_t i);

#endif /* SFBPF_INTERP_HOTSPOT_VMSTRUCTS_H */
