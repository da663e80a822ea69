// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * YJIT's code in a Ruby 3.1 process (ruby.h's ruby__jit_code()). What 3.1's
 * sources say (docs/DESIGN-ruby.md):
 *
 * The region: rb_yjit_init() asks alloc_exec_mem() (yjit_asm.c) for
 * --yjit-exec-mem-size MiB (256 by default), mapped anonymous, private and
 * read-execute at the first free address from the page of that function
 * in libruby on, in 4 MiB steps, below it + INT32_MAX (its code calls the
 * VM's with 32-bit displacements); all of it filled with 0x1E (PUSH DS, a
 * fault in 64-bit mode); then split in two code blocks of half the size,
 * the inline one and the outlined one, each written from its start. While
 * YJIT compiles, it makes both writable (cb_mark_all_writeable()). No
 * symbol names the region, and Debian's library exports none of YJIT's.
 *
 * The frames: its entry (yjit_entry_prologue(), yjit_codegen.c) pushes the
 * three registers it keeps the VM's state in (r13, r12, rbx: the control
 * frame, the execution context, the VM's stack pointer) and calls out with
 * the stack so, to its exits' three pops and ret; it never writes rbp or
 * rsp otherwise. So a frame's CFA is rsp + 32 and the caller's rbp is in
 * rbp, except at its entry's and exits' few instructions and inside two C
 * calls made with two more pushes (newhash's rb_hash_bulk_insert, and
 * toregexp's rb_reg_new_ary): there the step reads a wrong return address,
 * which the walk finds in no mapping, and the stack ends (jitcode.h).
 *
 * Its pushes of control frames: unlike the interpreter's vm_push_frame(),
 * which fills the frame and then moves ec->cfp to it, YJIT moves ec->cfp
 * first (gen_send_iseq(): sub r13, 0x40; mov [r12+cfp], r13; then self,
 * sp, __bp__, ep, iseq; gen_send_cfunc(): sub qword [r12+cfp], 0x40; then
 * through rcx pc, sp, iseq, block_code, __bp__, ep). A sample in between
 * finds the innermost frame holding what the frame last at that place
 * held: another method's iseq, or a freed one. ruby_yjit_pushing() tells
 * such a pc by the code ahead of it (ruby__jit_pushing(): a process's,
 * cached by pc), and the splice leaves that frame out: the sample is its
 * caller's, calling it.
 * 3.3's YJIT (in Rust) keeps rbp as a frame pointer; Debian builds 3.3
 * without YJIT: not found here.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "interp/ruby_int.h"
#include "procs/jitcode.h"
#include "procs/procmaps.h"
#include "procs/procmem.h"

#define YJIT_FILL 0x1e
#define YJIT_CFA_OFF 32 /* three pushes and the return address */
#define YJIT_REACH 0x7fffffffULL /* INT32_MAX: from the function's page on */
#define MIB (1ULL << 20)

/* Whether the byte at addr is YJIT's fill (a code block's end never written). */
static bool filled(const struct ruby *r, uint64_t addr)
{
	uint8_t b;

	return !procmem__read(r->pid, addr, &b, 1) && b == YJIT_FILL;
}

/*
 * Whether the mapping i (of size bytes) touches anonymous writable memory on
 * either side that is as large or larger (the other half, perhaps merged
 * with a writable neighbour).
 */
static bool beside_writable(const struct procmaps *pm, size_t i, uint64_t size)
{
	const struct procmap *m = procmaps__get(pm, i), *o;

	for (int d = -1; d <= 1; d += 2) {
		if ((d < 0 && i == 0) || (d > 0 && i + 1 >= procmaps__count(pm)))
			continue;
		o = procmaps__get(pm, i + d);
		if ((o->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)) == PROCMAP_F_ANON &&
		    (o->perms & PROCMAP_WRITE) && o->end - o->start >= size &&
		    (d < 0 ? o->end == m->start : o->start == m->end))
			return true;
	}
	return false;
}

/*
 * The region as the kernel shows it while YJIT runs code: one anonymous,
 * private, read-execute mapping of whole MiBs past the library's code and
 * within its reach, whose two halves each end in the fill. Found while YJIT
 * compiles (a half or both writable, perhaps merged with a neighbour): not
 * found this time.
 */
int ruby__jit_code(const struct ruby *r, struct jitcode_region *out, struct code_part *entry)
{
	struct procmaps *pm = NULL;
	int err;

	if (strncmp(r->version, "3.1.", 4) || !r->text || r->vm_exec.lo == r->vm_exec.hi)
		return -ENOENT;
	*entry = r->vm_exec;
	err = procmaps__read(r->pid, &pm);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < procmaps__count(pm) && err == -ENOENT; i++) {
		const struct procmap *m = procmaps__get(pm, i);
		uint64_t size = m->end - m->start;

		if ((m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)) != PROCMAP_F_ANON ||
		    m->perms != (PROCMAP_READ | PROCMAP_EXEC) || m->start <= r->text ||
		    m->start - r->text >= YJIT_REACH || size < MIB || size % MIB)
			continue;
		/*
		 * One half of it, the other writable as YJIT compiles (its two
		 * mprotect()s apart): not found this time.
		 */
		if (beside_writable(pm, i, size))
			continue;
		if (filled(r, m->start + size / 2 - 1) && filled(r, m->end - 1)) {
			*out = (struct jitcode_region){ .lo = m->start,
							.hi = m->end,
							.cfa_off = YJIT_CFA_OFF,
							.name = "[ruby-yjit]" };
			err = 0;
		}
	}
	procmaps__free(pm);
	return err;
}

/* Whether operand op is memory at [base + disp] that the instruction writes. */
static bool writes(const cs_x86_op *op, x86_reg base, int64_t disp)
{
	return op->type == X86_OP_MEM && (op->access & CS_AC_WRITE) && op->mem.base == base &&
	       op->mem.index == X86_REG_INVALID && op->mem.disp == disp;
}

#define PUSH_LOOKAHEAD 24 /* instructions: a push's stores are a dozen */

int ruby_yjit_pushing(const uint8_t *code, size_t n, uint64_t pc, const struct ruby_yjit_offs *o)
{
	cs_insn *insn = NULL;
	size_t count, i;
	int ret = 0;
	csh cs;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	count = cs_disasm(cs, code, n, pc, PUSH_LOOKAHEAD, &insn);
	for (i = 0; i < count; i++) {
		const cs_x86 *x = &insn[i].detail->x86;

		/* Control leaves the straight line: no push under way here. */
		if (cs_insn_group(cs, &insn[i], CS_GRP_JUMP) ||
		    cs_insn_group(cs, &insn[i], CS_GRP_CALL) ||
		    cs_insn_group(cs, &insn[i], CS_GRP_RET) || !x->op_count)
			break;
		/* ec->cfp still to be moved: the innermost frame is whole. */
		if (writes(&x->operands[0], X86_REG_R12, o->ec_cfp))
			break;
		/* The new frame's iseq or ep still to be written, ec->cfp moved already. */
		if ((x->operands[0].mem.base == X86_REG_R13 ||
		     x->operands[0].mem.base == X86_REG_RCX) &&
		    (writes(&x->operands[0], x->operands[0].mem.base, o->cfp_iseq) ||
		     writes(&x->operands[0], x->operands[0].mem.base, o->cfp_ep))) {
			ret = 1;
			break;
		}
	}
	cs_free(insn, count);
	cs_close(&cs);
	return ret;
}

#define PUSH_CODE_BYTES 160
#define PUSH_CACHE 512 /* pcs remembered (a power of two) */

struct ruby_yjit_cache {
	uint64_t pc[PUSH_CACHE]; /* 0: empty */
	bool pushing[PUSH_CACHE];
};

bool ruby__jit_pushing(const struct ruby *r, uint64_t pc)
{
	const struct ruby_layout *l = r->l;
	struct ruby_yjit_offs o = { l->ec.cfp, l->cfp.iseq, l->cfp.ep };
	struct ruby_yjit_cache *c = r->yjit_cache;
	uint8_t code[PUSH_CODE_BYTES];
	size_t slot = (pc ^ pc >> 9) & (PUSH_CACHE - 1);

	if (!c)
		return false;
	if (c->pc[slot] == pc)
		return c->pushing[slot];
	/* The region's unwritten end is fill: 160 bytes are there to read. */
	if (procmem__read(r->pid, pc, code, sizeof(code)))
		return false;
	c->pc[slot] = pc;
	c->pushing[slot] = ruby_yjit_pushing(code, sizeof(code), pc, &o) > 0;
	return c->pushing[slot];
}

struct ruby_yjit_cache *ruby_yjit_cache_new(const char *version)
{
	return strncmp(version, "3.1.", 4) ? NULL : calloc(1, sizeof(struct ruby_yjit_cache));
}
