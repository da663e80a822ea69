// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The layout a walk of a JVM reads, from the JVM's own tables
 * (hotspot_int.h). Names are HotSpot's: "Type::field" as vmStructs.cpp
 * declares them, alternatives separated by '|' in the order they were used
 * (JDK 17 first), each taken only if this JVM declares it.
 */
#include <errno.h>
#include <string.h>

#include "interp/hotspot_int.h"
#include "util/log.h"

#define HS_MAX_NAME_LEN 128

/* Width of a member of C++ type s: a pointer's 8, else its type's size. */
static uint8_t width_of(const struct hs_tables *t, const char *s)
{
	const struct hs_type *ty;

	/* "Method*", and "JavaThread *const" (ThreadsList::_threads, a JavaThread* const*). */
	if (strchr(s, '*'))
		return 8;
	for (;;) {
		if (!strncmp(s, "const ", 6))
			s += 6;
		else if (!strncmp(s, "volatile ", 9))
			s += 9;
		else
			break;
	}
	ty = hs_tables__type(t, s);
	if (!ty || (ty->size != 1 && ty->size != 2 && ty->size != 4 && ty->size != 8))
		return 0;
	return (uint8_t)ty->size;
}

/* The first of names ("T::f|U::g") this JVM declares, or NULL. */
static const struct hs_field *lookup(const struct hs_tables *t, const char *names)
{
	char buf[HS_MAX_NAME_LEN];

	while (*names) {
		size_t len = strcspn(names, "|");
		const struct hs_field *f = NULL;
		char *sep;

		if (len < sizeof(buf)) {
			memcpy(buf, names, len);
			buf[len] = 0;
			/* The field is after the last "::": "HeapBlock::Header::_used". */
			for (sep = strstr(buf, "::"); sep && strstr(sep + 2, "::");)
				sep = strstr(sep + 2, "::");
			if (sep) {
				*sep = 0;
				f = hs_tables__field(t, buf, sep + 2);
			}
		}
		if (f)
			return f;
		names += len + (names[len] == '|');
	}
	return NULL;
}

struct resolver {
	const struct hs_tables *t;
	int pid;
	const char *missing; /* the first thing not found */
};

/* A member this JVM may lack (one of the versions' alternatives). */
static struct hs_member member_opt(const struct hs_tables *t, const char *names)
{
	const struct hs_field *f = lookup(t, names);
	uint8_t w = f && !f->is_static ? width_of(t, f->type_string) : 0;

	return w ? (struct hs_member){ f->offset, w } : (struct hs_member){ HS_NONE, 0 };
}

static struct hs_member member(struct resolver *r, const char *names)
{
	struct hs_member m = member_opt(r->t, names);

	if (m.off == HS_NONE)
		r->missing = r->missing ? r->missing : names;
	return m;
}

/* An embedded struct (or array), whose offset alone is read: width 0. */
static struct hs_member embedded(struct resolver *r, const char *names)
{
	const struct hs_field *f = lookup(r->t, names);

	if (!f || f->is_static) {
		r->missing = r->missing ? r->missing : names;
		return (struct hs_member){ HS_NONE, 0 };
	}
	return (struct hs_member){ f->offset, 0 };
}

/* Member m of an embedded struct at offset outer: one offset from the outer type. */
static struct hs_member nested(struct hs_member outer, struct hs_member m)
{
	if (outer.off == HS_NONE || m.off == HS_NONE)
		return (struct hs_member){ HS_NONE, 0 };
	return (struct hs_member){ outer.off + m.off, m.width };
}

/* A part this JVM's version must have. */
static void need(struct resolver *r, struct hs_member m, const char *what)
{
	if (m.off == HS_NONE && !r->missing)
		r->missing = what;
}

/* Which of two alternatives this JVM has: a missing name if neither. */
static void either(struct resolver *r, struct hs_member a, struct hs_member b, const char *what)
{
	if (a.off == HS_NONE && b.off == HS_NONE && !r->missing)
		r->missing = what;
}

/* A static's address in the process. */
static uint64_t static_at(struct resolver *r, const char *names)
{
	const struct hs_field *f = lookup(r->t, names);

	if (!f || !f->is_static || !f->address) {
		r->missing = r->missing ? r->missing : names;
		return HS_NONE;
	}
	return f->address;
}

/* A static this JVM may lack: HS_NONE. */
static uint64_t static_opt(const struct hs_tables *t, const char *names)
{
	const struct hs_field *f = lookup(t, names);

	return f && f->is_static && f->address ? f->address : HS_NONE;
}

static uint64_t size_of(struct resolver *r, const char *type)
{
	const struct hs_type *ty = hs_tables__type(r->t, type);

	if (!ty || !ty->size) {
		r->missing = r->missing ? r->missing : type;
		return HS_NONE;
	}
	return ty->size;
}

static int64_t constant(struct resolver *r, const char *names)
{
	const char *all = names;
	char buf[HS_MAX_NAME_LEN];
	int64_t v;

	while (*names) {
		size_t len = strcspn(names, "|");

		if (len < sizeof(buf)) {
			memcpy(buf, names, len);
			buf[len] = 0;
			if (hs_tables__const(r->t, buf, &v))
				return v;
		}
		names += len + (names[len] == '|');
	}
	r->missing = r->missing ? r->missing : all;
	return 0;
}

/* The code cache, its blobs and nmethods (docs/research/hotspot.md, sections 2, 3 and 7). */
static void resolve_code(struct resolver *r, struct hs_layout *l)
{
	const struct hs_tables *t = r->t;
	struct hs_member memory = embedded(r, "CodeHeap::_memory");
	struct hs_member segmap = embedded(r, "CodeHeap::_segmap");

	l->code_heaps = static_at(r, "CodeCache::_heaps");
	l->array_len = member(r, "GrowableArrayBase::_len|GenericGrowableArray::_len");
	l->array_data = member(r, "GrowableArray<int>::_data");
	l->heap_low = nested(memory, member(r, "VirtualSpace::_low"));
	l->heap_high = nested(memory, member(r, "VirtualSpace::_high"));
	l->heap_reserved_high = nested(memory, member(r, "VirtualSpace::_high_boundary"));
	l->heap_segmap = nested(segmap, member(r, "VirtualSpace::_low"));
	l->heap_log2_segment = member(r, "CodeHeap::_log2_segment_size");
	l->block_size = size_of(r, "HeapBlock");
	l->block_used =
		nested(embedded(r, "HeapBlock::_header"), member(r, "HeapBlock::Header::_used"));

	l->blob_name = member(r, "CodeBlob::_name");
	l->blob_size = member(r, "CodeBlob::_size");
	l->blob_frame_size = member(r, "CodeBlob::_frame_size");
	l->blob_frame_complete = member(r, "CodeBlob::_frame_complete_offset");
	l->blob_code_begin = member_opt(t, "CodeBlob::_code_begin");
	l->blob_code_offset = member_opt(t, "CodeBlob::_code_offset");
	either(r, l->blob_code_begin, l->blob_code_offset, "CodeBlob::_code_begin|_code_offset");
	l->blob_kind = member_opt(t, "CodeBlob::_kind");
	if (l->blob_kind.off != HS_NONE)
		l->kind_nmethod = constant(r, "CodeBlobKind::Nmethod");

	l->nm_method = member(r, "CompiledMethod::_method|nmethod::_method");
	l->nm_orig_pc_offset = member(r, "nmethod::_orig_pc_offset");
	l->nm_compile_id = member(r, "nmethod::_compile_id|CompiledMethod::_compile_id");
	l->nm_deopt_begin = member_opt(t, "CompiledMethod::_deopt_handler_begin");
	/* JDK 26 renamed the offset. */
	l->nm_deopt_offset = member_opt(
		t, "nmethod::_deopt_handler_offset|nmethod::_deopt_handler_entry_offset");
	either(r, l->nm_deopt_begin, l->nm_deopt_offset, "nmethod's deoptimisation handler");
	l->nm_scopes_pcs_offset = member(r, "nmethod::_scopes_pcs_offset");
	l->nm_scopes_data_begin = member_opt(t, "CompiledMethod::_scopes_data_begin");
	l->nm_dependencies_offset = member_opt(t, "nmethod::_dependencies_offset");
	l->nm_metadata_offset = member_opt(t, "nmethod::_metadata_offset");
	l->nm_immutable_data = member_opt(t, "nmethod::_immutable_data");
	l->nm_scopes_data_offset = member_opt(t, "nmethod::_scopes_data_offset");
	l->blob_mutable_data = member_opt(t, "CodeBlob::_mutable_data");
	l->blob_relocation_size = member_opt(t, "CodeBlob::_relocation_size");
	/* The two forms of the debug information: in the blob (17-22), or beside it (23+). */
	if (l->nm_immutable_data.off == HS_NONE) {
		need(r, l->nm_scopes_data_begin, "nmethod's scopes");
		need(r, l->nm_dependencies_offset, "nmethod's scopes' end");
		need(r, l->nm_metadata_offset, "nmethod's metadata");
	} else {
		need(r, l->nm_scopes_data_offset, "nmethod's scopes");
		need(r, l->blob_mutable_data, "nmethod's metadata");
		need(r, l->blob_relocation_size, "nmethod's metadata");
	}
	l->pc_desc_size = size_of(r, "PcDesc");
	l->pc_desc_pc_offset = member(r, "PcDesc::_pc_offset");
	l->pc_desc_scope = member(r, "PcDesc::_scope_decode_offset");
	l->invocation_entry_bci = constant(r, "InvocationEntryBci");
}

int hs_layout__resolve(const struct hs_tables *t, int pid, struct hs_layout *l)
{
	struct resolver r = { t, pid, NULL };
	int64_t sender_sp;

	/* The thread list: an array since JDK 10 (ThreadsSMRSupport), a linked list before. */
	l->java_thread_list = static_opt(t, "ThreadsSMRSupport::_java_thread_list");
	if (l->java_thread_list != HS_NONE) {
		l->list_length = member(&r, "ThreadsList::_length");
		l->list_threads = member(&r, "ThreadsList::_threads");
	} else {
		l->thread_list_head = static_at(&r, "Threads::_thread_list");
		l->thread_next = member(&r, "JavaThread::_next");
	}
	/* JDK 25 moved the OS thread from JavaThread to Thread. */
	l->thread_osthread = member(&r, "JavaThread::_osthread|Thread::_osthread");
	l->osthread_tid = member(&r, "OSThread::_thread_id");
	l->thread_anchor = embedded(&r, "JavaThread::_anchor");
	l->anchor_sp = member(&r, "JavaFrameAnchor::_last_Java_sp");
	l->anchor_pc = member(&r, "JavaFrameAnchor::_last_Java_pc");
	l->anchor_fp = member(&r, "JavaFrameAnchor::_last_Java_fp");
	l->thread_state = member(&r, "JavaThread::_thread_state");
	l->state_in_native = constant(&r, "_thread_in_native");
	l->state_in_vm = constant(&r, "_thread_in_vm");
	l->state_in_java = constant(&r, "_thread_in_Java");
	l->state_blocked = constant(&r, "_thread_blocked");

	l->interp_code = static_at(&r, "AbstractInterpreter::_code");
	l->queue_buffer = member(&r, "StubQueue::_stub_buffer");
	l->queue_limit = member(&r, "StubQueue::_buffer_limit");
	l->call_stub_return = static_at(&r, "StubRoutines::_call_stub_return_address");

	l->method_const = member(&r, "Method::_constMethod");
	l->const_pool = member(&r, "ConstMethod::_constants");
	l->const_code_size = member(&r, "ConstMethod::_code_size");
	l->const_name_index = member(&r, "ConstMethod::_name_index");
	l->const_sig_index = member(&r, "ConstMethod::_signature_index");
	/* JDK 21 made the flags a ConstMethodFlags of 32 bits. */
	l->const_flags = member(&r, "ConstMethod::_flags|ConstMethod::_flags._flags");
	l->const_size = size_of(&r, "ConstMethod");
	l->flag_has_lines = constant(
		&r,
		"ConstMethod::_has_linenumber_table|ConstMethodFlags::_misc_has_linenumber_table");
	l->pool_tags = member(&r, "ConstantPool::_tags");
	l->pool_holder = member(&r, "ConstantPool::_pool_holder");
	l->pool_length = member(&r, "ConstantPool::_length");
	/* Moved from InstanceKlass to ConstantPool in JDK 15. */
	l->pool_source_file = member_opt(t, "ConstantPool::_source_file_name_index");
	l->klass_source_file = member_opt(t, "InstanceKlass::_source_file_name_index");
	either(&r, l->pool_source_file, l->klass_source_file, "the source file's index");
	l->pool_size = size_of(&r, "ConstantPool");
	l->klass_name = member(&r, "Klass::_name");
	l->symbol_length = member(&r, "Symbol::_length");
	l->symbol_body = embedded(&r, "Symbol::_body");
	l->array_u1_data = embedded(&r, "Array<u1>::_data").off;
	l->tag_utf8 = constant(&r, "JVM_CONSTANT_Utf8");

	resolve_code(&r, l);

	/*
	 * The interpreter's frame slots other than these two are not published:
	 * they are each architecture's, unchanged since JDK 9 (frame_x86.hpp,
	 * frame_aarch64.hpp). The published two must agree, or none is trusted.
	 */
	sender_sp = constant(&r, "frame::interpreter_frame_sender_sp_offset");
	l->interp_sender_sp_slot = sender_sp;
	l->interp_method_slot = -3;
#if defined(__aarch64__)
	l->interp_bcp_slot = -9;
#else
	l->interp_bcp_slot = -8;
#endif
	if (!r.missing &&
	    (sender_sp != -1 || constant(&r, "frame::interpreter_frame_last_sp_offset") != -2))
		r.missing = "frame::interpreter_frame_sender_sp_offset = -1, last_sp_offset = -2";
	if (r.missing) {
		pr_debug("hotspot: pid %d: the JVM's tables have no %s\n", pid, r.missing);
		return -EPROTO;
	}
	return 0;
}
