// SPDX-License-Identifier: GPL-2.0-or-later
/* The parts of a function the compiler split apart (see codeparts.h). */
#include <capstone/capstone.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/codeparts.h"
#include "tables/cfi.h"

#define PART_MAX_BYTES (4u << 20) /* a part larger than this is not one function's */

/* Whether addr lies in one of the n parts found so far. */
static bool known(const struct code_part *parts, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= parts[i].lo && addr < parts[i].hi)
			return true;
	return false;
}

uint8_t *codeparts__read(Elf *elf, int fd, uint64_t lo, uint64_t hi)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint8_t *buf;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || lo < sh.sh_addr ||
		    hi > sh.sh_addr + sh.sh_size)
			continue;
		buf = malloc(hi - lo);
		if (buf && pread(fd, buf, hi - lo, (off_t)(sh.sh_offset + (lo - sh.sh_addr))) ==
				   (ssize_t)(hi - lo))
			return buf;
		free(buf);
		return NULL;
	}
	return NULL;
}

/* The target of a direct jump (not a call), or 0. */
static uint64_t jump_target(csh cs, const cs_insn *insn, bool arm64)
{
	const cs_detail *d = insn->detail;

	if (!d || !cs_insn_group(cs, insn, CS_GRP_JUMP) || cs_insn_group(cs, insn, CS_GRP_CALL))
		return 0;
	if (arm64) {
		/* b, b.cond, cbz/cbnz, tbz/tbnz: the target is the last operand. */
		const cs_arm64 *a = &d->arm64;

		return a->op_count && a->operands[a->op_count - 1].type == ARM64_OP_IMM ?
			       (uint64_t)a->operands[a->op_count - 1].imm :
			       0;
	}
	return d->x86.op_count == 1 && d->x86.operands[0].type == X86_OP_IMM ?
		       (uint64_t)d->x86.operands[0].imm :
		       0;
}

/* The FDE's range that holds addr, if addr is not where it starts. */
static bool entered_midway(const struct cfi_index *ix, uint64_t addr, struct code_part *out)
{
	uint64_t lo, hi;

	if (!cfi_index__fde_at(ix, addr, &lo, &hi) || lo == addr || hi - lo > PART_MAX_BYTES)
		return false;
	*out = (struct code_part){ lo, hi };
	return true;
}

size_t codeparts__find(Elf *elf, int fd, uint64_t start, uint64_t size, struct code_part *parts,
		       size_t max)
{
	struct cfi_index *ix;
	GElf_Ehdr eh;
	size_t n = 0, done = 0;
	bool arm64;
	csh cs;

	if (!max || !size || size > PART_MAX_BYTES || !gelf_getehdr(elf, &eh))
		return 0;
	parts[n++] = (struct code_part){ start, start + size };
	arm64 = eh.e_machine == EM_AARCH64;
	if ((eh.e_machine != EM_X86_64 && !arm64) || cfi_index__open(fd, &ix))
		return n;
	if (cs_open(arm64 ? CS_ARCH_ARM64 : CS_ARCH_X86, arm64 ? CS_MODE_ARM : CS_MODE_64, &cs)) {
		cfi_index__free(ix);
		return n;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	/* Breadth first: each part found is read for branches into further parts. */
	while (done < n && n < max) {
		struct code_part p = parts[done++];
		uint8_t *code = codeparts__read(elf, fd, p.lo, p.hi);
		cs_insn *insn = code ? cs_malloc(cs) : NULL;
		const uint8_t *at = code;
		size_t left = p.hi - p.lo;
		uint64_t pc = p.lo, t;

		while (insn && n < max && cs_disasm_iter(cs, &at, &left, &pc, insn)) {
			struct code_part found;

			t = jump_target(cs, insn, arm64);
			if (t && !known(parts, n, t) && entered_midway(ix, t, &found))
				parts[n++] = found;
		}
		if (insn)
			cs_free(insn, 1);
		free(code);
	}
	cs_close(&cs);
	cfi_index__free(ix);
	return n;
}
