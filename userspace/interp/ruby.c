// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attaching to Ruby's VM (ruby.h): the object exporting ruby_current_vm_ptr,
 * its version's layout, the code of the VM's loop, and a frame's names read
 * from the process. Every read is bounded, every structure checked before it
 * is believed.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/objfacts.h"
#include "interp/objsyms.h"
#include "interp/ruby.h"
#include "interp/ruby_int.h"
#include "procs/procmaps.h"
#include "procs/procmem.h"
#include "procs/proctrack.h"
#include "tables/cfi.h"
#include "util/log.h"

#include "interp/ruby_layouts.h"

#if defined(__x86_64__)
#define RUBY_ARCH "x86_64"
#elif defined(__aarch64__)
#define RUBY_ARCH "aarch64"
#endif

#define STACK_WORDS_MAX (1ULL << 26) /* a VM stack larger than 512 MiB is no VM stack */
#define FIRST_FRAMES 64 /* control frames looked at for a running iseq, at attach */
#define LOOP_MIN 4096 /* bytes: the VM's loop is the biggest function of the library */

/* The ruby binary itself (a static build), a libruby it maps: objects named so. */
static bool maybe_ruby(const struct procmaps *pm, const struct procmap *m)
{
	if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO) || !(m->perms & PROCMAP_EXEC))
		return false;
	return m == procmaps__exe(pm) || strstr(procmap__basename(m->path), "ruby");
}

enum ruby_sym {
	SYM_VERSION,
	SYM_VM_PTR,
	SYM_AT_EXIT,
	SYM_STRING,
	SYM_ARRAY,
	SYM_KERNEL,
	SYM_ID2STR,
	SYM_VM_EXEC,
	SYM_NR
};

static const char *const sym_names[SYM_NR] = {
	[SYM_VERSION] = "ruby_version", /* RUBY_VERSION: the layout's key */
	[SYM_VM_PTR] = "ruby_current_vm_ptr", /* the VM (exported to 3.2) */
	[SYM_AT_EXIT] = "ruby_vm_at_exit", /* public API: its code reads the VM pointer */
	/* Public API, classes whose names are known: their instance variables' IDs */
	[SYM_STRING] = "rb_cString",
	[SYM_ARRAY] = "rb_cArray",
	[SYM_KERNEL] = "rb_mKernel",
	/* Public API: its code reads the global symbol table (ruby_ids.c) */
	[SYM_ID2STR] = "rb_id2str",
	/* vm.c's vm_exec, exported for MJIT's code: where each run of frames begins */
	[SYM_VM_EXEC] = "rb_vm_exec",
};
static const char *const core_names[3] = { "String", "Array", "Kernel" };

/* A Puma or Unicorn cluster is many processes of one library: read once (objfacts.h). */
static struct objfacts_kind facts_kind = {
	.names = sym_names,
	.nr = SYM_NR,
	.key = SYM_VERSION,
	.eval = -1,
};

static const struct ruby_layout *layout_of(const char *version)
{
	for (size_t i = 0; i < sizeof(ruby_layouts) / sizeof(ruby_layouts[0]); i++)
		if (!strcmp(ruby_layouts[i].version, version) &&
		    !strcmp(ruby_layouts[i].arch, RUBY_ARCH))
			return &ruby_layouts[i];
	return NULL;
}

/*
 * The first thread of the first ractor, its execution context checked: its
 * current control frame inside its VM stack. -EAGAIN before the VM has one.
 */
static int first_context(const struct ruby *r, uint64_t *cfp, uint64_t *end)
{
	const struct ruby_layout *l = r->l;
	uint64_t vm, head, node, th, ec, stack, size;
	int err;

	if ((err = rd(r, r->vm_ptr, &vm)))
		return err;
	if (!vm)
		return -EAGAIN;
	head = vm + l->vm.ractor_set;
	if ((err = rd(r, head, &node)))
		return err;
	if (!node || node == head)
		return -EAGAIN;
	head = node - l->ractor.vmlr_node + l->ractor.threads_set;
	if ((err = rd(r, head, &node)))
		return err;
	if (!node || node == head)
		return -EAGAIN;
	th = node - l->th.lt_node;
	if ((err = rd(r, th + l->th.ec, &ec)))
		return err;
	if (!ec)
		return -EAGAIN;
	if ((err = rd(r, ec + l->ec.vm_stack, &stack)) ||
	    (err = rd(r, ec + l->ec.vm_stack_size, &size)) || (err = rd(r, ec + l->ec.cfp, cfp)))
		return err;
	if (!stack || !size || size > STACK_WORDS_MAX)
		return -EPROTO;
	*end = stack + size * 8;
	if (*cfp < stack || *cfp >= *end || (*end - *cfp) % l->cfp.size)
		return -EPROTO;
	return 0;
}

/*
 * The TID standing for a forked process's leader (abi.h: leader_tid): Ruby
 * stores a thread's native TID when it starts, and a forked child's thread
 * keeps its parent's, so a child forked before the session (a unicorn's or
 * puma's cluster worker) has no thread with its leader's TID: the one
 * thread's whose TID is no task of the process is it. r->leader_tid 0
 * where a thread has the leader's TID, or none could be told; -EAGAIN while
 * several have TIDs of no task here (a child before its rb_thread_atfork(),
 * which still lists the parent's threads).
 */
#define THREADS_MAX 4096
static int forked_leader(struct ruby *r)
{
	const struct ruby_layout *l = r->l;
	uint64_t leader, vm, rhead, rnode, thead, tnode, th, nt, *tids;
	size_t ntids, nstale = 0, steps = 0;
	uint32_t tid, stale = 0;
	int err = 0;

	r->leader_tid = 0;
	tids = malloc(THREADS_MAX * sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	ntids = proctrack_task_ids(r->pid, tids, THREADS_MAX, &leader);
	if (!leader || ntids == THREADS_MAX || (err = rd(r, r->vm_ptr, &vm)) || !vm ||
	    (err = rd(r, rhead = vm + l->vm.ractor_set, &rnode)))
		goto out;
	while (rnode && rnode != rhead && steps < THREADS_MAX) {
		thead = rnode - l->ractor.vmlr_node + l->ractor.threads_set;
		if ((err = rd(r, thead, &tnode)))
			goto out;
		for (; tnode && tnode != thead && steps < THREADS_MAX; steps++) {
			bool live = false;

			th = tnode - l->th.lt_node;
			nt = th;
			if (l->th.nt != 0xffff && ((err = rd(r, th + l->th.nt, &nt)) || !nt))
				goto out;
			if ((err = rd32(r, nt + l->th.tid, &tid)))
				goto out;
			if (tid == leader)
				goto out; /* not forked: matched by its TID */
			for (size_t i = 0; i < ntids && !live; i++)
				live = tids[i] == tid;
			if (!live) {
				stale = tid;
				nstale++;
			}
			if ((err = rd(r, tnode, &tnode)))
				goto out;
		}
		if ((err = rd(r, rnode, &rnode)))
			goto out;
	}
	if (nstale > 1)
		err = -EAGAIN;
	else if (nstale == 1 && steps < THREADS_MAX)
		r->leader_tid = stale;
out:
	free(tids);
	return err == -EFAULT ? 0 : err;
}

/*
 * An address the VM's loop jumps to: the first instruction of an iseq the
 * main thread runs (its encoded form holds the address of each
 * instruction's code, inside vm_exec_core). -EAGAIN before any runs.
 */
static int loop_address(const struct ruby *r, uint64_t *addr)
{
	const struct ruby_layout *l = r->l;
	uint64_t cfp, end, iseq, ep, flags, magic, body, enc;
	int err = first_context(r, &cfp, &end);

	for (unsigned int i = 0; !err && i < FIRST_FRAMES && cfp < end; i++, cfp += l->cfp.size) {
		if ((err = rd(r, cfp + l->cfp.iseq, &iseq)) || (err = rd(r, cfp + l->cfp.ep, &ep)))
			break;
		if (!iseq || !ep || rd(r, ep, &flags))
			continue;
		magic = flags & l->frame.magic_mask;
		if (magic == l->frame.cfunc || magic == l->frame.ifunc || magic == l->frame.dummy)
			continue;
		if ((err = iseq_body(r, iseq, &body)))
			return err == -ESTALE ? -EPROTO : err;
		if ((err = rd(r, body + l->body.iseq_encoded, &enc)) || (err = rd(r, enc, addr)))
			return err;
		return *addr ? 0 : -EPROTO;
	}
	return err ? err : -EAGAIN;
}

/* The parts of the function at vaddr in the object open at fd (its FDE's, and the split ones). */
static size_t loop_parts(int fd, uint64_t vaddr, struct code_part *parts, size_t max)
{
	struct cfi_index *ix = NULL;
	uint64_t lo, hi;
	size_t n = 0;
	Elf *elf;

	if (cfi_index__open(fd, &ix))
		return 0;
	if (cfi_index__fde_at(ix, vaddr, &lo, &hi) && hi - lo >= LOOP_MIN) {
		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ, NULL);
		if (elf) {
			n = codeparts__find(elf, fd, lo, hi - lo, parts, max);
			elf_end(elf);
		}
	}
	cfi_index__free(ix);
	return n;
}

#define AT_EXIT_BYTES 96 /* ruby_vm_at_exit's first instructions: where it loads the VM */

/*
 * The VM pointer's address (the object's), where 3.3 on no longer export it:
 * ruby_vm_at_exit(), Ruby's public API, loads it (GET_VM()) and then reads
 * the VM's at_exit list. The first load of a word at a PC-relative address
 * into a register is believed only if that register is then read at the
 * at_exit offset the version's headers give. x86-64 only. 0 or -ENOENT.
 */
static int vm_ptr_from_code(int fd, uint64_t fn, uint64_t size, uint32_t at_exit, uint64_t *out)
{
	uint64_t n = size < AT_EXIT_BYTES ? size : AT_EXIT_BYTES, cand = 0;
	x86_reg reg = X86_REG_INVALID;
	int err = -ENOENT;
	cs_insn *insn = NULL;
	uint8_t *code;
	size_t count;
	csh cs;
	Elf *elf;

	elf_version(EV_CURRENT);
	if (!n || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -ENOENT;
	code = codeparts__read(elf, fd, fn, fn + n);
	elf_end(elf);
	if (!code)
		return -ENOENT;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		free(code);
		return -ENOENT;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	count = cs_disasm(cs, code, n, fn, 0, &insn);
	for (size_t i = 0; i < count && err; i++) {
		const cs_x86 *x = &insn[i].detail->x86;

		if (insn[i].id != X86_INS_MOV || x->op_count != 2 ||
		    x->operands[0].type != X86_OP_REG || x->operands[1].type != X86_OP_MEM ||
		    x->operands[1].size != 8)
			continue;
		if (reg == X86_REG_INVALID && x->operands[1].mem.base == X86_REG_RIP &&
		    x->operands[1].mem.index == X86_REG_INVALID) {
			reg = x->operands[0].reg;
			cand = insn[i].address + insn[i].size + (uint64_t)x->operands[1].mem.disp;
		} else if (reg != X86_REG_INVALID && x->operands[1].mem.base == reg &&
			   x->operands[1].mem.index == X86_REG_INVALID) {
			if (x->operands[1].mem.disp == (int64_t)at_exit) {
				*out = cand;
				err = 0;
			} else {
				break;
			}
		}
	}
	cs_free(insn, count);
	cs_close(&cs);
	free(code);
	return err;
}

/* objsyms__detect's test: the object at m exports the VM pointer (its layout into ctx). */
static int is_ruby(int pid, const struct procmaps *pm, const struct procmap *m, void *ctx)
{
	struct ruby *r = ctx;
	struct objfacts f;
	uint64_t bias = 0;
	int fd, err;
	long len;

	fd = procmap__open(pid, m);
	if (fd < 0)
		return fd;
	err = objfacts__get(&facts_kind, fd, &f);
	if (!err)
		err = f.err;
	if (!err && (!f.vals[SYM_VERSION] || (!f.vals[SYM_VM_PTR] && !f.vals[SYM_AT_EXIT])))
		err = -ENOENT;
	if (!err)
		err = objsyms__bias(pm, m, &f.info, &bias);
	if (err)
		goto out;
	len = procmem__str(pid, f.vals[SYM_VERSION] + bias, r->version, sizeof(r->version));
	if (len < 0) {
		err = (int)len;
		goto out;
	}
	r->text = m->start;
	if (!(r->l = layout_of(r->version))) {
		r->unsupported = true;
		err = -ENOENT;
		goto out;
	}
	r->vm_ptr = f.vals[SYM_VM_PTR];
	/* A program embedding it may have its own copy (objsyms.h). */
	if (r->vm_ptr)
		r->vm_ptr =
			objsyms__interposed(pid, pm, m, "ruby_current_vm_ptr", r->vm_ptr + bias) -
			bias;
	if (!r->vm_ptr && vm_ptr_from_code(fd, f.vals[SYM_AT_EXIT], f.sizes[SYM_AT_EXIT],
					   r->l->vm.at_exit, &r->vm_ptr)) {
		pr_info("ruby: pid %d: %s: no VM pointer found in ruby_vm_at_exit: refused", pid,
			m->path);
		err = -EPROTO;
		goto out;
	}
	r->vm_ptr += bias;
	r->bias = bias;
	for (int i = 0; i < 3; i++)
		r->core[i] = f.vals[SYM_STRING + i] ? f.vals[SYM_STRING + i] + bias : 0;
	r->id2str = f.vals[SYM_ID2STR];
	r->id2str_size = f.sizes[SYM_ID2STR];
	if (f.vals[SYM_VM_EXEC])
		r->vm_exec =
			(struct code_part){ f.vals[SYM_VM_EXEC] + bias,
					    f.vals[SYM_VM_EXEC] + bias + f.sizes[SYM_VM_EXEC] };
	r->fd = dup(fd);
	if (r->fd < 0)
		err = -errno;
out:
	close(fd);
	return err;
}

/*
 * To 3.1 a class keeps its instance variables in an st_table (st.c, the
 * same since 2.4): entries [entries_start, entries_bound) of its entries
 * array, each its hash, key and value; a deleted one's hash all ones.
 */
#define IVARS_MAX 128 /* a class with more: read no further, its methods' owner unnamed */
#define ST_DELETED UINT64_MAX

struct st_entry {
	uint64_t hash, key, record;
};

/* The instance variables of class klass into e (IVARS_MAX): how many, or an error. */
static int class_ivars(const struct ruby *r, uint64_t klass, struct st_entry *e)
{
	const struct ruby_layout *l = r->l;
	uint64_t ext, tbl, start, bound, entries;
	int err;

	if ((err = rd(r, klass + l->klass.ext, &ext)) || !ext ||
	    (err = rd(r, ext + l->klass.iv_tbl, &tbl)) || !tbl)
		return err;
	if ((err = rd(r, tbl + l->klass.st_start, &start)) ||
	    (err = rd(r, tbl + l->klass.st_bound, &bound)) ||
	    (err = rd(r, tbl + l->klass.st_entries, &entries)))
		return err;
	if (bound == start)
		return 0;
	if (bound < start || !entries)
		return -EPROTO;
	if (bound - start > IVARS_MAX)
		return -E2BIG;
	err = procmem__read(r->pid, entries + start * sizeof(*e), e, (bound - start) * sizeof(*e));
	return err ? err : (int)(bound - start);
}

int ruby_class_ivar(const struct ruby *r, uint64_t klass, uint64_t id, uint64_t *val)
{
	struct st_entry e[IVARS_MAX];
	int n = class_ivars(r, klass, e);

	for (int i = 0; i < n; i++)
		if (e[i].hash != ST_DELETED && e[i].key == id) {
			*val = e[i].record;
			return 0;
		}
	return n < 0 ? n : -ENOENT;
}

/* Class klass's instance variable id is the String name. */
static bool ivar_names(const struct ruby *r, uint64_t klass, uint64_t id, const char *name)
{
	char buf[16];
	uint64_t v;

	return !ruby_class_ivar(r, klass, id, &v) && !ruby_read_str(r, v, buf, sizeof(buf)) &&
	       !strcmp(buf, name);
}

/*
 * To 3.1: the IDs under which a class keeps its path ("__classpath__", set
 * once the path is permanent) and a singleton class its object
 * ("__attached__"). Ruby allocates them as it starts and exports no table
 * of IDs' names: learnt from core classes whose names are known. String's
 * instance variable holding "String" is believed only if Array's and
 * Kernel's under the same ID hold "Array" and "Kernel"; the one of String's
 * singleton class holding String, only if Array's holds Array. Otherwise
 * owners stay unnamed: a frame is its label alone, as before 3.3's fields.
 */
static void learn_ids(struct ruby *r)
{
	const struct ruby_layout *l = r->l;
	struct st_entry e[IVARS_MAX];
	uint64_t cls[3], meta[2], flags, v;
	int n;

	if (!l->method.me_cref || l->klass.classpath || !l->klass.iv_tbl)
		return;
	for (int c = 0; c < 3; c++)
		if (!r->core[c] || rd(r, r->core[c], &cls[c]) || !cls[c])
			return;
	n = class_ivars(r, cls[0], e);
	for (int i = 0; i < n && !r->id_classpath; i++)
		if (e[i].hash != ST_DELETED && ivar_names(r, cls[0], e[i].key, core_names[0]) &&
		    ivar_names(r, cls[1], e[i].key, core_names[1]) &&
		    ivar_names(r, cls[2], e[i].key, core_names[2]))
			r->id_classpath = e[i].key;
	/* Their singleton classes: RBasic's klass, the word after its flags. */
	for (int c = 0; c < 2; c++)
		if (rd(r, cls[c] + 8, &meta[c]) || !meta[c] || rd(r, meta[c], &flags) ||
		    !(flags & l->klass.singleton))
			return;
	n = class_ivars(r, meta[0], e);
	for (int i = 0; i < n && !r->id_attached; i++)
		if (e[i].hash != ST_DELETED && e[i].record == cls[0] &&
		    !ruby_class_ivar(r, meta[1], e[i].key, &v) && v == cls[1])
			r->id_attached = e[i].key;
}

/* Owners named (a C method's too), and the definition's name where the layout says. */
static bool names_cfuncs(const struct ruby *r)
{
	return r->l->method.me_cref && r->l->method.original_id;
}

int ruby__attach(int pid, struct ruby **out)
{
	struct ruby *r = calloc(1, sizeof(*r));
	uint64_t addr = 0;
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->pid = pid;
	r->fd = -1;
	err = objsyms__detect(pid, "ruby", maybe_ruby, is_ruby, r);
	if (err == -ENOENT && r->unsupported) {
		pr_info("ruby: pid %d: Ruby %s: no known layout, profiled as native code", pid,
			r->version);
		err = -ENOTSUP;
	}
	/* The VM checked, and its loop found, once it runs an iseq (-EAGAIN before). */
	if (!err)
		err = loop_address(r, &addr);
	if (err == -EPROTO)
		pr_info("ruby: pid %d: its VM disagrees with Ruby %s's layout: refused", pid,
			r->version);
	/* The loop is the same object's code: static, or in libruby beside the VM pointer. */
	if (!err && addr >= r->bias)
		r->nr_eval = loop_parts(r->fd, addr - r->bias, r->eval, RUBY_EVAL_PARTS);
	if (!err)
		err = forked_leader(r);
	/* It runs Ruby code: its core classes are made, its symbols registered. */
	if (!err)
		learn_ids(r);
	if (!err && names_cfuncs(r) && ruby_ids_find(r, r->fd, r->id2str, r->id2str_size))
		pr_info("ruby: pid %d: Ruby %s: no symbol table believed in rb_id2str's code: "
			"C methods left to their native frames",
			pid, r->version);
	for (size_t i = 0; !err && i < r->nr_eval; i++) {
		r->eval[i].lo += r->bias;
		r->eval[i].hi += r->bias;
	}
	if (!err)
		r->yjit_cache = ruby_yjit_cache_new(r->version);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

void ruby__object_stats(uint64_t *reads, uint64_t *hits)
{
	objfacts__stats(&facts_kind, reads, hits);
}

void ruby__free(struct ruby *r)
{
	if (r)
		free(r->yjit_cache);
	free(r);
}

const char *ruby__version(const struct ruby *r)
{
	return r->version;
}

int ruby__bpf_settings(const struct ruby *r, struct sfbpf_rb_proc *cfg)
{
	const struct ruby_layout *l = r->l;

	if (l->cfp.size > SFBPF_RB_CFP_SPAN || l->cfp.pc + 8 > l->cfp.size ||
	    l->cfp.iseq + 8 > l->cfp.size || l->cfp.ep + 8 > l->cfp.size || (l->cfp.pc & 7) ||
	    (l->cfp.iseq & 7) || (l->cfp.ep & 7))
		return -ENOTSUP;
	memset(cfg, 0, sizeof(*cfg));
	cfg->vm_ptr = r->vm_ptr;
	cfg->vm_ractor_set = l->vm.ractor_set;
	cfg->ractor_threads_set = l->ractor.threads_set;
	cfg->ractor_vmlr_node = l->ractor.vmlr_node;
	cfg->th_lt_node = l->th.lt_node;
	cfg->th_ec = l->th.ec;
	cfg->th_nt = l->th.nt;
	cfg->tid = l->th.tid;
	cfg->ec_vm_stack = l->ec.vm_stack;
	cfg->ec_vm_stack_size = l->ec.vm_stack_size;
	cfg->ec_cfp = l->ec.cfp;
	cfg->cfp_size = l->cfp.size;
	cfg->cfp_pc = l->cfp.pc;
	cfg->cfp_iseq = l->cfp.iseq;
	cfg->cfp_ep = l->cfp.ep;
	cfg->iseq_body = l->iseq.body;
	cfg->magic_mask = l->frame.magic_mask;
	cfg->magic_cfunc = l->frame.cfunc;
	cfg->magic_ifunc = l->frame.ifunc;
	cfg->magic_dummy = l->frame.dummy;
	cfg->flag_finish = l->frame.finish;
	cfg->magic_method = l->frame.method;
	cfg->magic_block = l->frame.block;
	cfg->env_me = l->frame.env_local | l->frame.bmethod;
	cfg->env_prev = l->frame.specval;
	cfg->method_entries = l->method.me_cref; /* 0 in 3.2: owners not named */
	cfg->leader_tid = r->leader_tid;
	/* C methods sent only where they can be named. */
	if (r->ids)
		cfg->me_def = l->method.def;
	if (l->method.me_cref) {
		cfg->svar_me = l->method.svar_me;
		cfg->svar_mask = 0x1f | 0xfu << l->iseq.imemo_shift;
		cfg->svar_flags = l->iseq.t_imemo | l->method.imemo_svar << l->iseq.imemo_shift;
	}
	return 0;
}

size_t ruby__eval_parts(const struct ruby *r, const struct code_part **parts)
{
	*parts = r->eval;
	return r->nr_eval;
}
