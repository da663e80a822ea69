// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Ruby's global symbol table (ruby_int.h), where a C method's name is: its
 * definition holds only an ID. symbol.c keeps every ID's String in
 * ruby_global_symbols, which libruby does not export; rb_id2str(), its
 * public API, reads it. Its code gives the table's fields: the lookup it
 * jumps to (or holds itself) compares the serial with last_id, loads ids
 * (an Array of Arrays of 1 << shift [String, Symbol] pairs) and divides the
 * serial by that unit with a shift. The table is believed only if the IDs
 * of four operators, which Ruby registers first under their own character
 * codes, read back as "+", "-", "<" and ">". x86-64 only.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "interp/codeparts.h"
#include "interp/ruby_int.h"
#include "util/log.h"

#define ID2STR_BYTES 32 /* rb_id2str's own instructions: the serial, then the lookup's jump */
#define LOOKUP_BYTES 192 /* the lookup's first instructions, to the unit's shift */
#define ID_ENTRY_SIZE 2 /* symbol.c's id_entry_type: a String and a Symbol per ID */
#define UNIT_SHIFT_MIN 4
#define UNIT_SHIFT_MAX 16
#define SERIAL_MAX (1U << 28) /* more IDs than this: no table of Ruby's */

#if defined(__x86_64__)
/* A memory operand at a fixed distance from the instruction: its address, or 0. */
static uint64_t rip_operand(const cs_insn *in, const cs_x86_op *op, uint8_t size)
{
	if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP ||
	    op->mem.index != X86_REG_INVALID || op->size != size)
		return 0;
	return in->address + in->size + (uint64_t)op->mem.disp;
}

/*
 * In the code at [lo, hi) of elf: last_id's address (the first 4-byte
 * compare with a RIP-relative word), then ids' (the next 8-byte load from
 * one), then the unit's shift (the next right shift by a constant). A
 * direct jump or call before the compare is followed once (rb_id2str's
 * tail call; a build that calls the lookup). 0, or -ENOENT.
 */
static int scan(csh cs, Elf *elf, int fd, uint64_t lo, uint64_t hi, bool follow, uint64_t *last_id,
		uint64_t *ids, uint32_t *shift)
{
	uint8_t *code = codeparts__read(elf, fd, lo, hi);
	cs_insn *insn = NULL;
	uint64_t jump = 0;
	int err = -ENOENT;
	size_t count;

	if (!code)
		return -ENOENT;
	count = cs_disasm(cs, code, hi - lo, lo, 0, &insn);
	for (size_t i = 0; i < count; i++) {
		const cs_x86 *x = &insn[i].detail->x86;

		if (!*last_id && (insn[i].id == X86_INS_JMP || insn[i].id == X86_INS_CALL) &&
		    x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
			jump = (uint64_t)x->operands[0].imm;
			break;
		}
		if (!*last_id && insn[i].id == X86_INS_CMP && x->op_count == 2) {
			*last_id = rip_operand(&insn[i], &x->operands[0], 4);
			if (!*last_id)
				*last_id = rip_operand(&insn[i], &x->operands[1], 4);
		} else if (*last_id && !*ids && insn[i].id == X86_INS_MOV && x->op_count == 2 &&
			   x->operands[0].type == X86_OP_REG) {
			*ids = rip_operand(&insn[i], &x->operands[1], 8);
		} else if (*ids && insn[i].id == X86_INS_SHR && x->op_count == 2 &&
			   x->operands[1].type == X86_OP_IMM) {
			*shift = (uint32_t)x->operands[1].imm;
			err = 0;
			break;
		}
	}
	cs_free(insn, count);
	free(code);
	if (err && jump && follow && !*last_id)
		return scan(cs, elf, fd, jump, jump + LOOKUP_BYTES, false, last_id, ids, shift);
	return err;
}

/* Whether the IDs of "+", "-", "<" and ">" (their character codes) read back so. */
static bool operators_named(const struct ruby *r)
{
	static const char ops[] = "+-<>";
	char name[8];

	for (const char *c = ops; *c; c++)
		if (ruby_id_name(r, (uint64_t)*c, name, sizeof(name)) || name[0] != *c || name[1])
			return false;
	return true;
}

int ruby_ids_find(struct ruby *r, int fd, uint64_t fn, uint64_t size)
{
	uint64_t n = size && size < ID2STR_BYTES ? size : ID2STR_BYTES, last_id = 0, ids = 0;
	uint32_t shift = 0;
	int err;
	csh cs;
	Elf *elf;

	if (!fn || !r->l->method.original_id)
		return -ENOENT;
	elf_version(EV_CURRENT);
	if (!(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -ENOENT;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		elf_end(elf);
		return -ENOENT;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	err = scan(cs, elf, fd, fn, fn + n, true, &last_id, &ids, &shift);
	cs_close(&cs);
	elf_end(elf);
	if (err || shift < UNIT_SHIFT_MIN || shift > UNIT_SHIFT_MAX)
		return -ENOENT;
	r->last_id = last_id + r->bias;
	r->ids = ids + r->bias;
	r->id_unit_shift = shift;
	if (!operators_named(r)) {
		r->last_id = r->ids = 0;
		return -ENOENT;
	}
	return 0;
}
#else
int ruby_ids_find(struct ruby *r, int fd, uint64_t fn, uint64_t size)
{
	(void)r;
	(void)fd;
	(void)fn;
	(void)size;
	return -ENOENT;
}
#endif

/* Element idx of the Array at ary: 0, -ENOENT (past its end, or no Array), or an error. */
static int ary_entry(const struct ruby *r, uint64_t ary, uint64_t idx, uint64_t *out)
{
	const struct ruby_layout *l = r->l;
	uint64_t flags, len, ptr;
	int err = is_type(r, ary, l->ary.t_array, &flags);

	if (err)
		return err == -ESTALE ? -ENOENT : err;
	if (flags & l->ary.embed) {
		len = (flags & l->ary.embed_len_mask) >> l->ary.embed_len_shift;
		ptr = ary + l->ary.ary;
	} else if ((err = rd(r, ary + l->ary.len, &len)) || (err = rd(r, ary + l->ary.ptr, &ptr))) {
		return err;
	}
	if (idx >= len || !ptr)
		return -ENOENT;
	return rd(r, ptr + idx * 8, out);
}

int ruby_id_name(const struct ruby *r, uint64_t id, char *buf, size_t size)
{
	const struct ruby_layout *l = r->l;
	uint64_t serial = id > l->id.last_op ? id >> l->id.scope_shift : id, ids, unit, str;
	uint32_t last;
	int err;

	buf[0] = '\0';
	if (!r->ids)
		return -ENOENT;
	if ((err = rd32(r, r->last_id, &last)) || (err = rd(r, r->ids, &ids)))
		return err;
	if (!serial || serial > last || last >= SERIAL_MAX)
		return -ENOENT;
	if ((err = ary_entry(r, ids, serial >> r->id_unit_shift, &unit)) ||
	    (err = ary_entry(r, unit, (serial & ((1ULL << r->id_unit_shift) - 1)) * ID_ENTRY_SIZE,
			     &str)))
		return err;
	err = ruby_read_str(r, str, buf, size);
	return err == -ESTALE ? -ENOENT : err;
}
