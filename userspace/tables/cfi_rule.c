// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DWARF CFI row → sfbpf rule (see cfi_rule.h). libdw hands every rule over as
 * a small DWARF expression (dwarf_frame_cfa, dwarf_frame_register); the shapes
 * recognised here are the ones the BPF unwinder can evaluate — a register plus
 * an offset, optionally dereferenced — and the PLT CFA expression. Anything
 * else is reported unsupported rather than approximated.
 */
#include <dwarf.h>
#include <string.h>

#include "tables/cfi_rule.h"

/* A value or location: base (register or the CFA) + off, maybe dereferenced. */
struct loc {
	enum { LOC_NONE, LOC_UNDEF, LOC_SAME, LOC_CFA, LOC_REGOFF, LOC_OTHER } kind;
	int reg; /* DWARF register, LOC_REGOFF */
	int64_t off;
	bool deref; /* the value is stored at base + off */
};

const struct cfi_machine cfi_x86_64 = { .sp = CFI_REG_SP, .fp = CFI_REG_FP };
/* x29 is the frame pointer, x30 (LR) the RA column, sp is 31. */
const struct cfi_machine cfi_aarch64 = { .sp = 31, .fp = 29, .link_reg = true };

static const char *const unsup_names[CFI_UNSUP__COUNT] = {
	[CFI_UNSUP_NONE] = "none",
	[CFI_UNSUP_CFA_EXPR] = "cfa-expression",
	[CFI_UNSUP_CFA_UNDEF] = "cfa-undefined",
	[CFI_UNSUP_RA] = "ra-rule",
	[CFI_UNSUP_FP] = "fp-rule",
	[CFI_UNSUP_SP] = "sp-rule",
	[CFI_UNSUP_RANGE] = "offset-range",
	[CFI_UNSUP_OVERLAP] = "fde-overlap",
	[CFI_UNSUP_LIBDW] = "libdw-error",
	[CFI_UNSUP_INSN] = "cfa-program",
	[CFI_UNSUP_BUDGET] = "work-budget",
};

const char *cfi_unsupported__name(enum cfi_unsupported why)
{
	return why < CFI_UNSUP__COUNT ? unsup_names[why] : "?";
}

void cfi_rule__unsupported(struct sfbpf_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->flags = SFBPF_RULE_GAP | SFBPF_RULE_UNSUPPORTED;
}

/* Register and offset of a DW_OP_bregN / DW_OP_bregx operation; false if neither. */
static bool op_breg(const Dwarf_Op *op, int *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = op->number > 0xffff ? -1 : (int)op->number;
		*off = (int64_t)op->number2;
		return *reg >= 0;
	}
	return false;
}

/* A constant pushed by DW_OP_litN / DW_OP_constNu; false otherwise. */
static bool op_const(const Dwarf_Op *op, uint64_t *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*v = op->atom - DW_OP_lit0;
		return true;
	}
	switch (op->atom) {
	case DW_OP_const1u:
	case DW_OP_const2u:
	case DW_OP_const4u:
	case DW_OP_const8u:
	case DW_OP_constu:
		*v = op->number;
		return true;
	}
	return false;
}

/*
 * The lazy PLT entry shape: breg(SP) base; breg(RA column) 0; MASK; and;
 * THRESHOLD; ge; SHIFT; shl; plus. MASK + 1 must be a power of two no larger
 * than a page, so that a PC's low bits are the same at run time and in the
 * ELF file (mappings are page-aligned).
 */
static bool match_plt(const Dwarf_Op *ops, size_t n, int ra_reg, struct cfi_plt *p)
{
	uint64_t mask, thr, shift;
	int64_t base, zero;
	int reg, reg2;

	if (n != 9 || !op_breg(&ops[0], &reg, &base) || reg != CFI_REG_SP ||
	    !op_breg(&ops[1], &reg2, &zero) || reg2 != ra_reg || zero != 0 ||
	    !op_const(&ops[2], &mask) || ops[3].atom != DW_OP_and || !op_const(&ops[4], &thr) ||
	    ops[5].atom != DW_OP_ge || !op_const(&ops[6], &shift) || ops[7].atom != DW_OP_shl ||
	    ops[8].atom != DW_OP_plus)
		return false;
	if (mask == 0 || mask >= 4096 || (mask & (mask + 1)) || thr > mask || shift > 16 ||
	    base < 0 || base + (1ll << shift) > INT32_MAX)
		return false;
	*p = (struct cfi_plt){ .base = (int32_t)base, .mask = (uint32_t)mask,
			       .threshold = (uint32_t)thr, .shift = (uint32_t)shift };
	return true;
}

/* CFA: breg R off, optionally followed by deref. */
static bool cfa_loc(const Dwarf_Op *ops, size_t n, struct loc *l)
{
	memset(l, 0, sizeof(*l));
	if (n < 1 || n > 2 || !op_breg(&ops[0], &l->reg, &l->off))
		return false;
	if (n == 2 && ops[1].atom != DW_OP_deref)
		return false;
	l->kind = LOC_REGOFF;
	l->deref = n == 2;
	return true;
}

/* A register's rule, from dwarf_frame_register's expression. */
static void reg_loc(Dwarf_Frame *frame, int regno, struct loc *l)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;
	uint64_t k;

	memset(l, 0, sizeof(*l));
	l->kind = LOC_OTHER;
	if (dwarf_frame_register(frame, regno, mem, &ops, &n) != 0)
		return;
	if (n == 0) {
		l->kind = ops ? LOC_UNDEF : LOC_SAME;
		return;
	}
	/* Trailing DW_OP_stack_value: the expression is the value, not where it is. */
	l->deref = ops[n - 1].atom != DW_OP_stack_value;
	if (!l->deref)
		n--;
	/*
	 * offset(N) comes as "CFA; plus_uconst N". DW_CFA_expression rules come
	 * with the CFA pushed first, as DWARF says: "CFA; breg R off" is R + off.
	 */
	if (n >= 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		if (n == 1 || (n == 2 && ops[1].atom == DW_OP_plus_uconst)) {
			l->kind = LOC_CFA;
			l->off = n == 2 ? (int64_t)ops[1].number : 0;
			return;
		}
		ops++;
		n--;
	}
	if (n == 1 && op_breg(&ops[0], &l->reg, &l->off)) {
		l->kind = LOC_REGOFF;
		return;
	}
	/* DW_OP_regx R: the value is in register R. Only "R itself" is meaningful here. */
	if (n == 1 && ops[0].atom == DW_OP_regx && l->deref) {
		k = ops[0].number;
		if (k == (uint64_t)regno)
			l->kind = LOC_SAME;
	}
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static uint8_t sfbpf_reg(const struct cfi_machine *m, int dwarf_reg)
{
	return dwarf_reg == m->sp ? SFBPF_REG_SP :
	       dwarf_reg == m->fp ? SFBPF_REG_FP :
				    SFBPF_REG_OTHER;
}

/*
 * RA or FP location → rule fields. Register-based locations must be SP or FP:
 * the rule has no register number for them.
 */
static enum cfi_unsupported map_loc(const struct cfi_machine *m, const struct loc *l,
				    uint8_t deref_flag, uint8_t *loc, uint8_t *reg, int32_t *off,
				    struct sfbpf_rule *r)
{
	enum cfi_unsupported bad = deref_flag == SFBPF_RULE_RA_DEREF ? CFI_UNSUP_RA : CFI_UNSUP_FP;

	switch (l->kind) {
	case LOC_SAME:
		*loc = SFBPF_LOC_SAME;
		return CFI_UNSUP_NONE;
	case LOC_CFA:
		*loc = SFBPF_LOC_CFA;
		break;
	case LOC_REGOFF:
		if (sfbpf_reg(m, l->reg) == SFBPF_REG_OTHER)
			return bad;
		*loc = SFBPF_LOC_REG;
		*reg = sfbpf_reg(m, l->reg);
		break;
	default:
		return bad;
	}
	if (!fits32(l->off))
		return CFI_UNSUP_RANGE;
	*off = (int32_t)l->off;
	if (l->deref)
		r->flags |= deref_flag;
	return CFI_UNSUP_NONE;
}

/* The caller's SP must be the CFA: the unwinder sets it so. */
static bool sp_is_cfa(const struct loc *sp, const struct loc *cfa)
{
	switch (sp->kind) {
	case LOC_CFA:
		return !sp->deref && sp->off == 0; /* val_offset(0): the ABIs' default */
	case LOC_REGOFF:
		/* Saved SP read from where a dereferenced CFA comes from (signal frames). */
		return sp->deref && cfa->deref && sp->reg == cfa->reg && sp->off == cfa->off;
	default:
		return false;
	}
}

/* CFA part of the rule, or the PLT shape. */
static enum cfi_unsupported map_cfa(Dwarf_Frame *frame, int ra_reg, const struct cfi_machine *m,
				    struct cfi_row_rule *out, struct loc *cfa)
{
	struct sfbpf_rule *r = &out->rule;
	Dwarf_Op *ops = NULL;
	size_t n = 0;

	if (dwarf_frame_cfa(frame, &ops, &n) != 0)
		return CFI_UNSUP_LIBDW;
	if (n == 0)
		return CFI_UNSUP_CFA_UNDEF;
	if (m == &cfi_x86_64 && match_plt(ops, n, ra_reg, &out->plt_cfa)) {
		out->plt = true;
		*cfa = (struct loc){ .kind = LOC_REGOFF, .reg = CFI_REG_SP, .off = out->plt_cfa.base };
	} else if (!cfa_loc(ops, n, cfa)) {
		return CFI_UNSUP_CFA_EXPR;
	}
	if (!fits32(cfa->off))
		return CFI_UNSUP_RANGE;
	r->cfa_off = (int32_t)cfa->off;
	r->cfa_reg = sfbpf_reg(m, cfa->reg);
	if (r->cfa_reg == SFBPF_REG_OTHER) {
		/* DRAP-like: a scratch register holds the CFA, valid in the topmost frame only. */
		if (cfa->reg > UINT8_MAX)
			return CFI_UNSUP_CFA_EXPR;
		r->cfa_regnum = (uint8_t)cfa->reg;
		r->flags |= SFBPF_RULE_TOPMOST_ONLY;
	}
	if (cfa->deref)
		r->flags |= SFBPF_RULE_CFA_DEREF;
	return CFI_UNSUP_NONE;
}

static enum cfi_unsupported translate(Dwarf_Frame *frame, bool signal, int ra_reg,
				      const struct cfi_machine *m, struct cfi_row_rule *out)
{
	struct sfbpf_rule *r = &out->rule;
	struct loc cfa, ra, fp, sp;
	enum cfi_unsupported why;

	if (signal)
		r->flags |= SFBPF_RULE_SIGNAL;
	reg_loc(frame, ra_reg, &ra);
	if (ra.kind == LOC_UNDEF) {
		/* The outermost frame (_start, thread start): nothing else matters. */
		r->ra_loc = SFBPF_LOC_UNDEFINED;
		return CFI_UNSUP_NONE;
	}
	why = map_cfa(frame, ra_reg, m, out, &cfa);
	if (why)
		return why;
	reg_loc(frame, m->sp, &sp);
	if (!sp_is_cfa(&sp, &cfa))
		return CFI_UNSUP_SP;
	why = map_loc(m, &ra, SFBPF_RULE_RA_DEREF, &r->ra_loc, &r->ra_reg, &r->ra_off, r);
	if (why)
		return why;
	/*
	 * RA comes from memory, or on AArch64 may still be in LR (the unwinder
	 * takes it there in the topmost frame). x86-64 has no link register.
	 * AArch64's signing state is cfi.c's (libdw does not track it).
	 */
	if (!(r->ra_loc == SFBPF_LOC_SAME && m->link_reg) && !(r->flags & SFBPF_RULE_RA_DEREF))
		return CFI_UNSUP_RA;
	reg_loc(frame, m->fp, &fp);
	return map_loc(m, &fp, SFBPF_RULE_FP_DEREF, &r->fp_loc, &r->fp_reg, &r->fp_off, r);
}

void cfi_rule__from_frame(Dwarf_Frame *frame, bool signal, int ra_reg,
			  const struct cfi_machine *m, struct cfi_row_rule *out)
{
	memset(out, 0, sizeof(*out));
	out->why = translate(frame, signal, ra_reg, m, out);
	if (out->why) {
		out->plt = false;
		cfi_rule__unsupported(&out->rule);
		return;
	}
	if (out->plt) {
		out->rule_hi = out->rule;
		out->rule_hi.cfa_off += 1 << out->plt_cfa.shift;
	}
}
