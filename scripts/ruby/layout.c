// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prints one row of userspace/interp/ruby_layouts.h: the offsets the walk
 * reads, as this Ruby's own headers lay them out. Compiled by
 * scripts/ruby/layouts.sh against the exact version's headers: the MJIT
 * header its -dev package ships (every VM structure, preprocessed with the
 * build's configuration: 3.0 to 3.2), else the VM headers of its source
 * package with the -dev package's config.h (3.3 on). RUBY_VERSION_S and
 * RUBY_ARCH_S come from the command line (ruby itself says them).
 */
#ifdef SFBPF_RUBY_MIN_HEADER
#include SFBPF_RUBY_MIN_HEADER
#else
#include "vm_core.h"
#include "iseq.h"
#include "ractor_core.h"
#include "internal/class.h"
#endif

int printf(const char *fmt, ...);

#define OFF(type, field) ((unsigned)__builtin_offsetof(type, field))

/* The TID of a thread: its own field to 3.2, its native thread's from 3.3. */
#ifdef RB_THREAD_T_HAS_NATIVE_ID
#if defined(SFBPF_RUBY_MIN_HEADER)
#define TH_NT 0xffffu
#define NT_TID OFF(rb_thread_t, tid)
#else
#define TH_NT OFF(rb_thread_t, nt)
#define NT_TID OFF(struct rb_native_thread, tid)
#endif
#else
#error "this Ruby keeps no native TID per thread: the walk cannot tell its threads"
#endif

/* A string's length: in its flags when embedded, to 3.1; its len field from 3.2. */
#ifdef SFBPF_RUBY_MIN_HEADER
#define STR_EMBED_MASK ((unsigned)RSTRING_EMBED_LEN_MASK)
#define STR_EMBED_SHIFT ((unsigned)RSTRING_EMBED_LEN_SHIFT)
#define STR_LEN OFF(struct RString, as.heap.len)
#else
#define STR_EMBED_MASK 0u
#define STR_EMBED_SHIFT 0u
#define STR_LEN OFF(struct RString, len)
#endif

/* The first line: a Fixnum to 3.1, an int from 3.2. */
#define LINENO_FIXNUM                            \
	((unsigned)__builtin_types_compatible_p( \
		__typeof__(((struct rb_iseq_constant_body *)0)->location.first_lineno), VALUE))

/*
 * Methods' owners, named as Ruby 3.4's backtraces do ("Calc#fib"). A class
 * keeps its path, and a singleton class its object, in fields from 3.3
 * (rb_classext_t's classpath, attached_object); to 3.1 they are instance
 * variables ("__classpath__", "__attached__") in the st_table of its
 * rb_classext_t, under IDs Ruby allocates when it starts and does not
 * export: found in each process (ruby.c). 3.2 keeps a class's instance
 * variables by object shape, and a 3.1 built with USE_RVARGC its
 * rb_classext_t after it: me_cref 0, owners not named. Bit-fields are
 * found by setting them in a zeroed copy: byte and mask.
 */
static void probe(const unsigned char *p, unsigned size, unsigned *byte, unsigned *mask)
{
	for (unsigned i = 0; i < size; i++)
		if (p[i]) {
			*byte = i;
			*mask = p[i];
			return;
		}
}

#if defined(SFBPF_RUBY_MIN_HEADER) && defined(RCLASS_IV_TBL) && !USE_RVARGC
#define OWNERS_IN_IVARS 1
#endif

#if !defined(SFBPF_RUBY_MIN_HEADER) || defined(OWNERS_IN_IVARS)
static void method_entries(void)
{
	struct rb_method_definition_struct def;
	unsigned type_byte = 0, type_mask = 0;

	__builtin_memset(&def, 0, sizeof(def));
	def.type = (rb_method_type_t)((1u << VM_METHOD_TYPE_MINIMUM_BITS) - 1);
	probe((const unsigned char *)&def, sizeof(def), &type_byte, &type_mask);
	printf("\t  .method = { .me_cref = %u, .imemo_ment = %u, .def = %u, .owner = %u,"
	       " .type_byte = %u, .type_mask = %#x, .type_iseq = %u, .iseqptr = %u,"
	       " .imemo_svar = %u, .svar_me = %u, .type_cfunc = %u, .original_id = %u },\n",
	       (unsigned)(-VM_ENV_DATA_INDEX_ME_CREF * 8), (unsigned)imemo_ment,
	       OFF(rb_callable_method_entry_t, def), OFF(rb_callable_method_entry_t, owner),
	       type_byte, type_mask, (unsigned)VM_METHOD_TYPE_ISEQ,
	       OFF(struct rb_method_definition_struct, body.iseq.iseqptr), (unsigned)imemo_svar,
	       OFF(struct vm_svar, cref_or_me), (unsigned)VM_METHOD_TYPE_CFUNC,
	       OFF(struct rb_method_definition_struct, original_id));
	/* A C method's name: its ID's serial (symbol.h's rb_id_to_serial()). */
	printf("\t  .id = { .scope_shift = %u, .last_op = %#x },\n", (unsigned)RUBY_ID_SCOPE_SHIFT,
	       (unsigned)tLAST_OP_ID);
}
#endif

static void methods(void)
{
#ifdef OWNERS_IN_IVARS
	method_entries();
	printf("\t  .klass = { .t_class = %#x, .t_module = %#x, .singleton = %#x, .ext = %u,"
	       " .iv_tbl = %u, .st_start = %u, .st_bound = %u, .st_entries = %u },\n",
	       (unsigned)RUBY_T_CLASS, (unsigned)RUBY_T_MODULE, (unsigned)RUBY_FL_SINGLETON,
	       OFF(struct RClass, ptr), OFF(rb_classext_t, iv_tbl), OFF(st_table, entries_start),
	       OFF(st_table, entries_bound), OFF(st_table, entries));
#elif defined(SFBPF_RUBY_MIN_HEADER)
	printf("\t  .method = { .me_cref = 0 },\n");
	printf("\t  .klass = { .t_class = 0 },\n");
#else
	struct RClass_and_rb_classext_t c;
	unsigned perm_byte = 0, perm_mask = 0;

	method_entries();
	__builtin_memset(&c, 0, sizeof(c));
	c.classext.permanent_classpath = 1;
	probe((const unsigned char *)&c, sizeof(c), &perm_byte, &perm_mask);
	printf("\t  .klass = { .t_class = %#x, .t_module = %#x, .singleton = %#x,"
	       " .classpath = %u, .attached = %u, .perm_byte = %u, .perm_mask = %#x },\n",
	       (unsigned)RUBY_T_CLASS, (unsigned)RUBY_T_MODULE, (unsigned)RUBY_FL_SINGLETON,
	       OFF(struct RClass_and_rb_classext_t, classext.classpath),
	       OFF(struct RClass_and_rb_classext_t, classext.as.singleton_class.attached_object),
	       perm_byte, perm_mask);
#endif
}

int main(void)
{
	printf("\t{ \"%s\", \"%s\",\n", RUBY_VERSION_S, RUBY_ARCH_S);
	printf("\t  .vm = { .ractor_set = %u, .main_ractor = %u, .at_exit = %u },\n",
	       OFF(rb_vm_t, ractor.set), OFF(rb_vm_t, ractor.main_ractor), OFF(rb_vm_t, at_exit));
	printf("\t  .ractor = { .threads_set = %u, .vmlr_node = %u },\n",
	       OFF(rb_ractor_t, threads.set), OFF(rb_ractor_t, vmlr_node));
	printf("\t  .th = { .lt_node = %u, .ec = %u, .nt = %u, .tid = %u },\n",
	       OFF(rb_thread_t, lt_node), OFF(rb_thread_t, ec), TH_NT, NT_TID);
	printf("\t  .ec = { .vm_stack = %u, .vm_stack_size = %u, .cfp = %u },\n",
	       OFF(rb_execution_context_t, vm_stack), OFF(rb_execution_context_t, vm_stack_size),
	       OFF(rb_execution_context_t, cfp));
	printf("\t  .cfp = { .size = %u, .pc = %u, .iseq = %u, .ep = %u },\n",
	       (unsigned)sizeof(rb_control_frame_t), OFF(rb_control_frame_t, pc),
	       OFF(rb_control_frame_t, iseq), OFF(rb_control_frame_t, ep));
	printf("\t  .frame = { .magic_mask = %#x, .method = %#x, .block = %#x, .class_ = %#x,"
	       " .top = %#x, .cfunc = %#x, .ifunc = %#x, .eval = %#x, .rescue = %#x,"
	       " .dummy = %#x, .finish = %#x, .cframe = %#x, .bmethod = %#x, .env_local = %#x,"
	       " .specval = %u },\n",
	       (unsigned)VM_FRAME_MAGIC_MASK, (unsigned)VM_FRAME_MAGIC_METHOD,
	       (unsigned)VM_FRAME_MAGIC_BLOCK, (unsigned)VM_FRAME_MAGIC_CLASS,
	       (unsigned)VM_FRAME_MAGIC_TOP, (unsigned)VM_FRAME_MAGIC_CFUNC,
	       (unsigned)VM_FRAME_MAGIC_IFUNC, (unsigned)VM_FRAME_MAGIC_EVAL,
	       (unsigned)VM_FRAME_MAGIC_RESCUE, (unsigned)VM_FRAME_MAGIC_DUMMY,
	       (unsigned)VM_FRAME_FLAG_FINISH, (unsigned)VM_FRAME_FLAG_CFRAME,
	       (unsigned)VM_FRAME_FLAG_BMETHOD, (unsigned)VM_ENV_FLAG_LOCAL,
	       (unsigned)(-VM_ENV_DATA_INDEX_SPECVAL * 8));
	printf("\t  .iseq = { .body = %u, .t_imemo = %#x, .imemo_iseq = %u, .imemo_shift = %u },\n",
	       OFF(rb_iseq_t, body), (unsigned)RUBY_T_IMEMO, (unsigned)imemo_iseq,
	       (unsigned)RUBY_FL_USHIFT);
	printf("\t  .body = { .type = %u, .iseq_size = %u, .iseq_encoded = %u, .pathobj = %u,"
	       " .label = %u, .first_lineno = %u, .insns_body = %u, .insns_positions = %u,"
	       " .insns_size = %u, .insns_succ = %u, .lineno_fixnum = %u, .local_iseq = %u,"
	       " .type_block = %u },\n",
	       OFF(struct rb_iseq_constant_body, type),
	       OFF(struct rb_iseq_constant_body, iseq_size),
	       OFF(struct rb_iseq_constant_body, iseq_encoded),
	       OFF(struct rb_iseq_constant_body, location.pathobj),
	       OFF(struct rb_iseq_constant_body, location.label),
	       OFF(struct rb_iseq_constant_body, location.first_lineno),
	       OFF(struct rb_iseq_constant_body, insns_info.body),
	       OFF(struct rb_iseq_constant_body, insns_info.positions),
	       OFF(struct rb_iseq_constant_body, insns_info.size),
	       OFF(struct rb_iseq_constant_body, insns_info.succ_index_table), LINENO_FIXNUM,
	       OFF(struct rb_iseq_constant_body, local_iseq), (unsigned)ISEQ_TYPE_BLOCK);
	methods();
	printf("\t  .insn_info = { .size = %u, .line_no = %u },\n",
	       (unsigned)sizeof(struct iseq_insn_info_entry),
	       OFF(struct iseq_insn_info_entry, line_no));
	printf("\t  .str = { .t_string = %#x, .noembed = %#x, .embed_len_mask = %#x,"
	       " .embed_len_shift = %u, .len = %u, .ptr = %u, .ary = %u },\n",
	       (unsigned)RUBY_T_STRING, (unsigned)RSTRING_NOEMBED, STR_EMBED_MASK, STR_EMBED_SHIFT,
	       STR_LEN, OFF(struct RString, as.heap.ptr), OFF(struct RString, as.embed.ary));
	printf("\t  .ary = { .t_array = %#x, .embed = %#x, .embed_len_mask = %#x,"
	       " .embed_len_shift = %u, .len = %u, .ptr = %u, .ary = %u } },\n",
	       (unsigned)RUBY_T_ARRAY, (unsigned)RARRAY_EMBED_FLAG, (unsigned)RARRAY_EMBED_LEN_MASK,
	       (unsigned)RARRAY_EMBED_LEN_SHIFT, OFF(struct RArray, as.heap.len),
	       OFF(struct RArray, as.heap.ptr), OFF(struct RArray, as.ary));
	return 0;
}
