/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ruby's VM in a process (issue #46, docs/DESIGN-ruby.md): the object that
 * runs it (libruby, or a ruby linked statically), found by the
 * ruby_current_vm_ptr it exports; its layout from the headers of the
 * version it says it is (ruby_version: ruby_layouts.h, written by
 * scripts/ruby/layouts.sh); the native code of the VM's loop (vm_exec_core,
 * which no symbol names: the code an instruction of a running iseq jumps
 * to); the BPF walk's settings; a frame's names and line, read from the
 * process while it lives.
 *
 * Checked before it is believed: the VM's lists of ractors and threads, a
 * thread's execution context and its control frames inside its VM stack; a
 * frame's iseq by its type, its pc inside its instructions. A version with
 * no known layout is -ENOTSUP; a VM whose structures disagree, -EPROTO.
 */
#ifndef SFBPF_INTERP_RUBY_H
#define SFBPF_INTERP_RUBY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "interp/codeparts.h"

/* One Ruby's layout (ruby_layouts.h): offsets in bytes, flags as its headers define them. */
struct ruby_layout {
	const char *version; /* RUBY_VERSION: "3.1.2" */
	const char *arch; /* "x86_64", "aarch64" */
	struct {
		uint16_t ractor_set, main_ractor, at_exit;
	} vm;
	struct {
		uint16_t threads_set, vmlr_node;
	} ractor;
	struct {
		uint16_t lt_node, ec, nt, tid; /* nt 0xffff: the TID is the thread's own */
	} th;
	struct {
		uint16_t vm_stack, vm_stack_size, cfp;
	} ec;
	struct {
		uint16_t size, pc, iseq, ep;
	} cfp;
	struct {
		uint32_t magic_mask, method, block, class_, top, cfunc, ifunc, eval, rescue, dummy,
			finish, cframe;
		uint32_t bmethod, env_local; /* VM_FRAME_FLAG_BMETHOD, VM_ENV_FLAG_LOCAL */
		uint16_t specval; /* bytes below ep of the previous env's pointer */
	} frame;
	struct {
		uint16_t body;
		uint32_t t_imemo, imemo_iseq, imemo_shift;
	} iseq;
	struct {
		uint16_t type, iseq_size, iseq_encoded, pathobj, label, first_lineno, insns_body,
			insns_positions, insns_size, insns_succ;
		uint8_t lineno_fixnum; /* first_lineno is a Fixnum (to 3.1), else an int */
		uint16_t local_iseq; /* a block's: the iseq of the method (or script) it is in */
		uint32_t type_block; /* ISEQ_TYPE_BLOCK: type's value for a block's iseq */
	} body;
	struct {
		/* me_cref: bytes below a frame's ep of its method entry; 0: owners not named */
		uint16_t me_cref, def, owner, iseqptr;
		uint32_t imemo_ment;
		uint16_t type_byte; /* rb_method_definition_t's type bit-field: byte, mask */
		uint32_t type_mask, type_iseq;
		/* A frame's special variables ($~, $_), once written, hold its entry there. */
		uint32_t imemo_svar;
		uint16_t svar_me; /* struct vm_svar's cref_or_me */
		/* A C method's (VM_METHOD_TYPE_CFUNC): named by its definition's original_id. */
		uint32_t type_cfunc;
		uint16_t original_id;
	} method;
	struct {
		/* An ID's serial: id >> scope_shift, an operator's (id <= last_op) the id itself */
		uint32_t scope_shift, last_op;
	} id;
	struct {
		uint32_t t_class, t_module, singleton; /* T_CLASS, T_MODULE, FL_SINGLETON */
		/* 3.3 on: offsets from the class (its rb_classext_t follows it) */
		uint16_t classpath, attached, perm_byte;
		uint32_t perm_mask; /* permanent_classpath's bit */
		/*
		 * To 3.1 (classpath 0): the class's rb_classext_t pointer, its
		 * instance variables' st_table, that table's entries (first,
		 * bound, array: each entry its hash, key and value, st.c's)
		 */
		uint16_t ext, iv_tbl, st_start, st_bound, st_entries;
	} klass;
	struct {
		uint16_t size, line_no;
	} insn_info;
	struct {
		uint32_t t_string, noembed, embed_len_mask,
			embed_len_shift; /* mask 0: len always */
		uint16_t len, ptr, ary;
	} str;
	struct {
		uint32_t t_array, embed, embed_len_mask, embed_len_shift;
		uint16_t len, ptr, ary; /* len, ptr: not embedded */
	} ary;
};

#define RUBY_EVAL_PARTS 8
#define RUBY_NAME_BYTES 256
#define RUBY_FILE_BYTES 512

struct ruby;

/*
 * A frame as Ruby's own backtraces say it: its iseq's label (a method's
 * name, "block in fib", "<main>", "<class:Worker>", "<top (required)>"),
 * its file, its first line and the line its pc is at.
 */
struct ruby_frame {
	char name[RUBY_NAME_BYTES];
	char file[RUBY_FILE_BYTES];
	uint32_t firstline, line;
};

/*
 * The Ruby that pid runs: 0 and *out, or -ENOENT (none), -EAGAIN (its VM or
 * its first frame not there yet), -ENOTSUP (a version with no known
 * layout), -EPROTO (its structures disagree with its version's layout), or
 * a read error.
 */
int ruby__attach(int pid, struct ruby **out);
void ruby__free(struct ruby *r);
/* Object files read, and found in the cache, for every attach (objfacts.h). */
void ruby__object_stats(uint64_t *reads, uint64_t *hits);
/* "3.1.2" */
const char *ruby__version(const struct ruby *r);
int ruby__bpf_settings(const struct ruby *r, struct sfbpf_rb_proc *cfg);
/* The native code of the VM's loop: its parts, process addresses (none if not found). */
size_t ruby__eval_parts(const struct ruby *r, const struct code_part **parts);
/*
 * YJIT's code in the process and its frames' shape (ruby_yjit.c, Ruby 3.1),
 * and the function each run of frames begins in (rb_vm_exec()): 0, *out and
 * *entry, -ENOENT (none found: YJIT off, another version, rb_vm_exec not
 * exported, or its code being written now), or a read error.
 */
struct jitcode_region;
int ruby__jit_code(const struct ruby *r, struct jitcode_region *out, struct code_part *entry);
/*
 * Whether a sample whose leaf is YJIT's code at pc came as YJIT pushed a
 * control frame (ruby_yjit.c): its innermost frame not its own yet.
 */
bool ruby__jit_pushing(const struct ruby *r, uint64_t pc);
/*
 * The frame of iseq at pc, stamped stamp (the walk's slots), with a block's
 * block_me (its method entry: SFBPF_RT_OWNER's slot, or the entry of the
 * nearest method frame outside it; believed only if the block's iseq is a
 * block's and its method is that entry's; 0: none): 0, or
 * -ESTALE (no iseq there now, or another one: collected), or a read error.
 * The line is the pc's when it lies in the iseq's instructions, else its
 * first.
 */
int ruby__frame(const struct ruby *r, uint64_t iseq, uint64_t pc, uint16_t stamp, uint64_t block_me,
		struct ruby_frame *out);

#endif /* SFBPF_INTERP_RUBY_H */
