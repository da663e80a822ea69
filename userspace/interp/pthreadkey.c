// SPDX-License-Identifier: GPL-2.0-or-later
/* A thread-specific data key's slot in another process's threads (pthreadkey.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "interp/codeparts.h"
#include "interp/objfacts.h"
#include "interp/objsyms.h"
#include "interp/pthreadkey.h"
#include "procs/procmaps.h"
#include "util/log.h"

#define GETSPECIFIC_BYTES 64 /* the first-level path: its first instructions */
#define SELF_OFF 0x10 /* tcbhead_t's self, x86-64's ABI: where %fs:0x10 reads */

#if defined(__x86_64__)
static const char *const sym_names[] = { "pthread_getspecific" };

/* A machine's few libcs: their symbols read once (objfacts.h). */
static struct objfacts_kind facts_kind = {
	.names = sym_names,
	.nr = 1,
	.key = 0,
	.eval = -1,
};

/* The shape pthreadkey.h describes, in code at addr: 0 and its constants, or -ENOENT. */
static int decode(const uint8_t *code, size_t len, uint64_t addr, int64_t *base, uint32_t *shift,
		  int64_t *data, uint32_t *first)
{
	enum { CMP, INDEX, SELF, LOAD, DONE } at = CMP;
	x86_reg reg = X86_REG_INVALID;
	cs_insn *insn = NULL;
	size_t count;
	csh cs;

	*base = 0;
	*shift = 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOENT;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	count = cs_disasm(cs, code, len, addr, 0, &insn);
	for (size_t i = 0; i < count && at != DONE; i++) {
		const cs_x86 *x = &insn[i].detail->x86;
		const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];
		bool reg_imm = x->op_count == 2 && o0->type == X86_OP_REG && o1->type == X86_OP_IMM;

		if (at == CMP) {
			/* The key (edi) against the block's last. */
			if (insn[i].id == X86_INS_CMP && reg_imm && o0->reg == X86_REG_EDI &&
			    o1->imm > 0 && o1->imm < 1024) {
				*first = (uint32_t)o1->imm + 1;
				at = INDEX;
			}
		} else if (at == INDEX) {
			if (insn[i].id == X86_INS_MOV && x->op_count == 2 &&
			    o0->type == X86_OP_REG && o1->type == X86_OP_REG &&
			    o1->reg == X86_REG_EDI) {
				reg = o0->reg; /* the key copied: eax */
			} else if (insn[i].id == X86_INS_ADD && reg_imm && reg != X86_REG_INVALID &&
				   !*shift) {
				*base = o1->imm;
			} else if (insn[i].id == X86_INS_SHL && reg_imm && reg != X86_REG_INVALID &&
				   o1->imm > 0 && o1->imm < 8) {
				*shift = (uint32_t)o1->imm;
				reg = o0->reg; /* rax */
				at = SELF;
			} else if (insn[i].id != X86_INS_JA && insn[i].id != X86_INS_ADD) {
				break;
			}
		} else if (at == SELF) {
			/* add rax, qword ptr fs:[0x10]: the control block's address added. */
			if (insn[i].id != X86_INS_ADD || x->op_count != 2 ||
			    o0->type != X86_OP_REG || o0->reg != reg || o1->type != X86_OP_MEM ||
			    o1->mem.segment != X86_REG_FS || o1->mem.base != X86_REG_INVALID ||
			    o1->mem.index != X86_REG_INVALID || o1->mem.disp != SELF_OFF)
				break;
			at = LOAD;
		} else if (at == LOAD) {
			/* mov rdx, qword ptr [rax + DATA]: the value's word of the entry. */
			if (insn[i].id != X86_INS_MOV || x->op_count != 2 ||
			    o1->type != X86_OP_MEM || o1->size != 8 || o1->mem.base != reg ||
			    o1->mem.index != X86_REG_INVALID ||
			    o1->mem.segment != X86_REG_INVALID || o1->mem.disp < 0 ||
			    o1->mem.disp >= (1 << *shift))
				break;
			*data = o1->mem.disp;
			at = DONE;
		}
	}
	cs_free(insn, count);
	cs_close(&cs);
	return at == DONE ? 0 : -ENOENT;
}

/* libc.so.6 (or libpthread's older home), executable, among pid's mappings. */
static bool is_libc(const struct procmap *m)
{
	const char *b = procmap__basename(m->path);

	return !(m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)) && (m->perms & PROCMAP_EXEC) &&
	       (!strncmp(b, "libc.so.", 8) || !strncmp(b, "libc-2.", 7));
}

int pthreadkey__slot(int pid, uint32_t key, uint64_t *off)
{
	struct procmaps *pm = NULL;
	const struct procmap *m = NULL;
	struct objfacts f;
	uint8_t *code = NULL;
	int64_t base = 0, data = 0;
	uint32_t shift = 0, first = 0;
	uint64_t fn;
	int fd = -1, err;
	Elf *elf = NULL;

	if ((err = procmaps__read(pid, &pm)))
		return err;
	for (size_t i = 0; i < procmaps__count(pm) && !m; i++)
		if (is_libc(procmaps__get(pm, i)))
			m = procmaps__get(pm, i);
	err = -ENOENT;
	if (!m || (fd = procmap__open(pid, m)) < 0)
		goto out;
	if (objfacts__get(&facts_kind, fd, &f) || f.err || !(fn = f.vals[0]) ||
	    f.sizes[0] < GETSPECIFIC_BYTES / 4)
		goto out;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	code = elf ? codeparts__read(elf, fd, fn,
				     fn + (f.sizes[0] < GETSPECIFIC_BYTES ? f.sizes[0] :
									    GETSPECIFIC_BYTES)) :
		     NULL;
	if (!code || decode(code, f.sizes[0] < GETSPECIFIC_BYTES ? f.sizes[0] : GETSPECIFIC_BYTES,
			    fn, &base, &shift, &data, &first))
		goto out;
	if (key >= first) {
		pr_debug("pthreadkey: pid %d: key %u past %s's first %u", pid, key, m->path, first);
		goto out;
	}
	*off = (uint64_t)(((int64_t)key + base) << shift) + (uint64_t)data;
	err = *off > 0 && *off < 0x10000 ? 0 : -ENOENT;
out:
	free(code);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	procmaps__free(pm);
	return err;
}
#else
int pthreadkey__slot(int pid, uint32_t key, uint64_t *off)
{
	(void)pid;
	(void)key;
	(void)off;
	/* AArch64: the thread pointer is past the control block, by a size not known here. */
	return -ENOENT;
}
#endif
