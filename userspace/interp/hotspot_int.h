/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside interp/hotspot: the layout a walk of a JVM's threads and the naming
 * of its methods read, resolved from the JVM's own tables
 * (hotspot_layout.c). Where HotSpot renamed or moved a field between
 * versions, the resolver takes whichever of the names this JVM has; a JVM
 * with none of them lacks that part (HS_NONE), and what needs it is not done.
 */
#ifndef SFBPF_INTERP_HOTSPOT_INT_H
#define SFBPF_INTERP_HOTSPOT_INT_H

#include <stdint.h>

#include "interp/hotspot_vmstructs.h"

struct hotspot_method;

#define HS_NONE UINT64_MAX

/* A member: its offset in its type, and its width in bytes (1, 2, 4 or 8). */
struct hs_member {
	uint64_t off;
	uint8_t width;
};

struct hs_layout {
	/* Threads: ThreadsSMRSupport's list of JavaThreads, each one's OS thread and anchor. */
	uint64_t java_thread_list; /* static: ThreadsList* (JDK 10+); HS_NONE before */
	struct hs_member list_length, list_threads;
	uint64_t thread_list_head; /* static, before JDK 10: Threads::_thread_list */
	struct hs_member thread_next; /* ... linked by JavaThread::_next */
	struct hs_member thread_osthread, osthread_tid;
	struct hs_member thread_anchor, anchor_sp, anchor_pc, anchor_fp;
	struct hs_member thread_state;
	int64_t state_in_native, state_in_vm, state_in_java, state_blocked;
	/* The interpreter's code: AbstractInterpreter::_code, a StubQueue. */
	uint64_t interp_code; /* static: StubQueue* */
	struct hs_member queue_buffer, queue_limit;
	uint64_t call_stub_return; /* static: StubRoutines::_call_stub_return_address */
	/* Methods and their names. */
	struct hs_member method_const; /* Method::_constMethod */
	struct hs_member const_pool, const_code_size, const_name_index, const_sig_index;
	struct hs_member const_flags;
	uint64_t const_size; /* sizeof(ConstMethod): its bytecodes follow it */
	int64_t flag_has_lines; /* the flag bit: a line number table follows the bytecodes */
	struct hs_member pool_tags, pool_holder, pool_length, pool_source_file;
	struct hs_member klass_source_file; /* before JDK 15: in the holder, not the pool */
	uint64_t pool_size; /* sizeof(ConstantPool): its slots follow it */
	struct hs_member klass_name;
	struct hs_member symbol_length, symbol_body;
	uint64_t array_u1_data; /* Array<u1>::_data */
	int64_t tag_utf8; /* JVM_CONSTANT_Utf8 */
	/* Interpreted frames: the slots of a frame, in words from its fp. */
	int64_t interp_method_slot, interp_bcp_slot, interp_sender_sp_slot;
	/* Compressed integers: UNSIGNED5's byte bias, 1 from JDK 20 on (0: Pack200's). */
	unsigned int unsigned5_x;

	/* The code cache: its heaps, each a range of segments and a map of them. */
	uint64_t code_heaps; /* static: GrowableArray<CodeHeap*>* */
	struct hs_member array_len, array_data;
	struct hs_member heap_low, heap_high, heap_segmap, heap_log2_segment;
	/* The heap's reserved end: its committed code grows up to it. */
	struct hs_member heap_reserved_high;
	uint64_t block_size; /* sizeof(HeapBlock): the blob follows its block's header */
	struct hs_member block_used;
	/* Blobs: code from code_begin (17-22: a pointer; 23+: an offset from the blob). */
	struct hs_member blob_name, blob_size, blob_frame_size, blob_code_begin, blob_code_offset;
	struct hs_member blob_frame_complete; /* from code begin: the frame is built past it */
	struct hs_member blob_kind; /* 23+; before, an nmethod is told by its name */
	int64_t kind_nmethod;
	/* nmethods: their Method, their deoptimisation, their debug information. */
	struct hs_member nm_method, nm_orig_pc_offset, nm_deopt_begin, nm_deopt_offset;
	struct hs_member nm_compile_id; /* with the blob's address, which compilation it is */
	struct hs_member nm_scopes_data_begin, nm_scopes_pcs_offset, nm_dependencies_offset;
	struct hs_member nm_metadata_offset; /* 17-22: from the blob */
	struct hs_member nm_immutable_data, nm_scopes_data_offset; /* 23+ */
	struct hs_member blob_mutable_data, blob_relocation_size; /* 25: metadata follows relocs */
	uint64_t pc_desc_size;
	struct hs_member pc_desc_pc_offset, pc_desc_scope;
	int64_t invocation_entry_bci;
};

/* Resolve l from t: 0, or -EPROTO naming (pr_debug) the first part it lacks. */
int hs_layout__resolve(const struct hs_tables *t, int pid, struct hs_layout *l);

/* Member m of the object at base, zero-extended: 0, -ENOENT (none), or procmem's errors. */
int hs_read_member(int pid, uint64_t base, struct hs_member m, uint64_t *v);
/* The names of the Method at method: 0, -EPROTO (not a method as the layout reads one), ... */
int hs_method_name(int pid, const struct hs_layout *l, uint64_t method, struct hotspot_method *out);
/* Method's key: its ConstMethod and the Symbols of its names, mixed (hotspot__method_is()). */
int hs_method_key(int pid, const struct hs_layout *l, uint64_t method, uint64_t *key);
/* The line of bytecode index bci of the ConstMethod at cm, or -1 (none known). */
int hs_method_line(int pid, const struct hs_layout *l, uint64_t cm, int bci);

/*
 * The address of the perf data counter name (a jlong: "java.cls.unloadedClasses")
 * in pid (hotspot_perfdata.c): 0, -ENOENT (no perf data, or no such counter),
 * -EPROTO (the memory breaks a bound), or procmem's errors.
 */
int hs_perfdata__counter(int pid, const struct hs_tables *t, const char *name, uint64_t *addr);

/* HotSpot's compressed unsigned integer at *at (advanced past it); x: the layout's unsigned5_x. */
int hs_unsigned5(int pid, uint64_t *at, unsigned int x, uint32_t *v);

/* The code cache's heaps (hotspot_code.c): read at each walk, their committed ends grow. */
#define HS_MAX_HEAPS 8

struct hs_heap {
	uint64_t lo, hi; /* committed code */
	uint64_t reserved_hi; /* where hi may grow to */
	uint64_t segmap; /* a byte per segment */
	uint32_t shift; /* log2 of the segment size */
};

struct hs_code {
	struct hs_heap heaps[HS_MAX_HEAPS];
	size_t nr;
};

enum hs_blob_kind {
	HS_BLOB_OTHER, /* stubs, adapters, runtime blobs: no Java method of their own */
	HS_BLOB_NMETHOD, /* a compiled Java method */
	HS_BLOB_NATIVE_WRAPPER, /* the compiled wrapper of a native method */
};

/* A method a compiled pc stands for, and its bytecode index there. */
struct hs_scope {
	uint64_t method;
	int32_t bci;
};

int hs_code__heaps(int pid, const struct hs_layout *l, struct hs_code *c);
/* The blob holding pc: 0, -ENOENT (none: not compiled code), -EPROTO, procmem's errors. */
int hs_code__blob(int pid, const struct hs_layout *l, const struct hs_code *c, uint64_t pc,
		  uint64_t *blob);
int hs_code__code_begin(int pid, const struct hs_layout *l, uint64_t blob, uint64_t *begin);
enum hs_blob_kind hs_code__kind(int pid, const struct hs_layout *l, uint64_t blob);
/*
 * The methods nmethod nm runs at pc (a return address, or the pc the anchor
 * saved), innermost (inlined) first, at most max: its PcDesc for exactly pc.
 */
int hs_code__scopes(int pid, const struct hs_layout *l, uint64_t nm, uint64_t pc,
		    struct hs_scope *out, uint32_t max, uint32_t *nr);
/*
 * The same for a pc the code was stopped at, not a return address (a
 * sample's leaf): the first PcDesc after it, as HotSpot's own samplers
 * (JFR, AsyncGetCallTrace: pc_desc_near(pc + 1)) take it.
 */
int hs_code__scopes_near(int pid, const struct hs_layout *l, uint64_t nm, uint64_t pc,
			 struct hs_scope *out, uint32_t max, uint32_t *nr);

#endif /* SFBPF_INTERP_HOTSPOT_INT_H */
