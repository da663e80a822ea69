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

#include "tables/cfi_interp.h"
#include "tables/cfi_rule.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A value or location: base (register or the CFA) + off, maybe dereferenced. */
struct loc {
	enum { LOC_NONE, LOC_UNDEF, LOC_SAME, LOC_CFA, LOC_REGOFF, LOC_OTHER } kind;
	int reg; /* DWARF register, LOC_REGOFF */
	int64_t off;
	bool deref; /* the value is stored at base + off */
};

const struct cfi_machine cfi_x86_64 = { .sp = CFI_REG_SP, .fp = CFI_REG_FP, .xreg = CFI_REG_XREG };
/* x29 is the frame pointer, x30 (LR) the RA column, sp is 31. */
const struct cfi_machine cfi_aarch64 = { .sp = 31, .fp = 29, .xreg = -1, .link_reg = true };

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
	*p = (struct cfi_plt){ .base = (int32_t)base,
			       .mask = (uint32_t)mask,
			       .threshold = (uint32_t)thr,
			       .shift = (uint32_t)shift };
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

/*
 * A register's rule from its expression as libdw hands it over: offset(N)
 * comes as "CFA; plus_uconst N", DW_CFA_expression as "CFA; its ops" (DWARF
 * pushes the CFA first), and a trailing DW_OP_stack_value makes the
 * expression the value rather than where it is. n > 0.
 */
static void ops_loc(const Dwarf_Op *ops, size_t n, int regno, struct loc *l)
{
	memset(l, 0, sizeof(*l));
	l->kind = LOC_OTHER;
	l->deref = ops[n - 1].atom != DW_OP_stack_value;
	if (!l->deref)
		n--;
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
	if (n == 1 && ops[0].atom == DW_OP_regx && l->deref && ops[0].number == (uint64_t)regno)
		l->kind = LOC_SAME;
}

/* A register's rule, from dwarf_frame_register's expression. */
static void reg_loc(Dwarf_Frame *frame, int regno, struct loc *l)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 0;

	memset(l, 0, sizeof(*l));
	l->kind = LOC_OTHER;
	if (dwarf_frame_register(frame, regno, mem, &ops, &n) != 0)
		return;
	if (n == 0)
		l->kind = ops ? LOC_UNDEF : LOC_SAME;
	else
		ops_loc(ops, n, regno, l);
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

/* What one row says, each part as a struct loc, before it becomes a rule. */
struct row_locs {
	enum cfi_unsupported cfa_why; /* NONE: cfa (and plt_cfa) hold the CFA */
	struct loc cfa, ra, sp, fp, xreg;
	bool plt;
	struct cfi_plt plt_cfa;
};

/* The CFA from its expression (n > 0): bregR off [deref], or the PLT shape. */
static void cfa_from_ops(const Dwarf_Op *ops, size_t n, int ra_reg, const struct cfi_machine *m,
			 struct row_locs *in)
{
	if (m == &cfi_x86_64 && match_plt(ops, n, ra_reg, &in->plt_cfa)) {
		in->plt = true;
		in->cfa = (struct loc){ .kind = LOC_REGOFF,
					.reg = CFI_REG_SP,
					.off = in->plt_cfa.base };
	} else if (!cfa_loc(ops, n, &in->cfa)) {
		in->cfa_why = CFI_UNSUP_CFA_EXPR;
	}
}

/* CFA part of the rule. */
static enum cfi_unsupported map_cfa(const struct row_locs *in, const struct cfi_machine *m,
				    struct cfi_row_rule *out)
{
	const struct loc *cfa = &in->cfa;
	struct sfbpf_rule *r = &out->rule;

	if (in->cfa_why)
		return in->cfa_why;
	out->plt = in->plt;
	out->plt_cfa = in->plt_cfa;
	if (!fits32(cfa->off))
		return CFI_UNSUP_RANGE;
	r->cfa_off = (int32_t)cfa->off;
	r->cfa_reg = sfbpf_reg(m, cfa->reg);
	if (r->cfa_reg == SFBPF_REG_OTHER) {
		/*
		 * DRAP-like: a scratch register holds the CFA, valid in the
		 * topmost frame only; the tracked one is known in every frame.
		 */
		if (cfa->reg > UINT8_MAX)
			return CFI_UNSUP_CFA_EXPR;
		r->cfa_regnum = (uint8_t)cfa->reg;
		if (cfa->reg != m->xreg)
			r->flags |= SFBPF_RULE_TOPMOST_ONLY;
	}
	if (cfa->deref)
		r->flags |= SFBPF_RULE_CFA_DEREF;
	return CFI_UNSUP_NONE;
}

/*
 * Where the frame saved the tracked register (bpf/abi.h, SFBPF_XREG_*). Not
 * named, or undefined, is "same value": callee-saved registers keep theirs
 * unless the CFI says where they went (libgcc's REG_UNSAVED; libdw's x86-64
 * defaults leave rbx undefined where they mean same value).
 */
static int8_t xreg_off8(const struct cfi_machine *m, const struct loc *l)
{
	if (m->xreg < 0 || l->kind == LOC_SAME || l->kind == LOC_UNDEF || l->kind == LOC_NONE)
		return SFBPF_XREG_SAME;
	if (l->kind != LOC_CFA || !l->deref || l->off % 8 || l->off >= 0 ||
	    l->off < SFBPF_XREG_MIN_OFF)
		return SFBPF_XREG_LOST;
	return (int8_t)(l->off / 8);
}

static enum cfi_unsupported translate(const struct row_locs *in, bool signal,
				      const struct cfi_machine *m, struct cfi_row_rule *out)
{
	struct sfbpf_rule *r = &out->rule;
	enum cfi_unsupported why;

	if (signal)
		r->flags |= SFBPF_RULE_SIGNAL;
	if (in->ra.kind == LOC_UNDEF) {
		/* The outermost frame (_start, thread start): nothing else matters. */
		r->ra_loc = SFBPF_LOC_UNDEFINED;
		return CFI_UNSUP_NONE;
	}
	why = map_cfa(in, m, out);
	if (why)
		return why;
	if (!sp_is_cfa(&in->sp, &in->cfa))
		return CFI_UNSUP_SP;
	why = map_loc(m, &in->ra, SFBPF_RULE_RA_DEREF, &r->ra_loc, &r->ra_reg, &r->ra_off, r);
	if (why)
		return why;
	/*
	 * RA comes from memory, or on AArch64 may still be in LR (the unwinder
	 * takes it there in the topmost frame). x86-64 has no link register.
	 * AArch64's signing state is the interpreter's (libdw does not track it).
	 */
	if (!(r->ra_loc == SFBPF_LOC_SAME && m->link_reg) && !(r->flags & SFBPF_RULE_RA_DEREF))
		return CFI_UNSUP_RA;
	r->xreg_off8 = xreg_off8(m, &in->xreg);
	return map_loc(m, &in->fp, SFBPF_RULE_FP_DEREF, &r->fp_loc, &r->fp_reg, &r->fp_off, r);
}

static void finish(const struct row_locs *in, bool signal, const struct cfi_machine *m,
		   struct cfi_row_rule *out)
{
	memset(out, 0, sizeof(*out));
	out->why = translate(in, signal, m, out);
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

void cfi_rule__from_frame(Dwarf_Frame *frame, bool signal, int ra_reg, const struct cfi_machine *m,
			  struct cfi_row_rule *out)
{
	struct row_locs in = { 0 };
	Dwarf_Op *ops = NULL;
	size_t n = 0;

	reg_loc(frame, ra_reg, &in.ra);
	if (dwarf_frame_cfa(frame, &ops, &n) != 0)
		in.cfa_why = CFI_UNSUP_LIBDW;
	else if (n == 0)
		in.cfa_why = CFI_UNSUP_CFA_UNDEF;
	else
		cfa_from_ops(ops, n, ra_reg, m, &in);
	reg_loc(frame, m->sp, &in.sp);
	reg_loc(frame, m->fp, &in.fp);
	if (m->xreg >= 0)
		reg_loc(frame, m->xreg, &in.xreg);
	finish(&in, signal, m, out);
}

/*
 * A DWARF expression's operations, in libdw's form, as far as the shapes
 * above need: any other operation, an operand past the end or more than max
 * operations, and no shape can match (false).
 */
static bool decode_expr(const uint8_t *p, uint32_t len, Dwarf_Op *ops, size_t max, size_t *n)
{
	const uint8_t *end = p + len;
	uint64_t v;
	int64_t s;

	while (p < end) {
		Dwarf_Op *op;

		if (*n == max)
			return false;
		op = &ops[*n];
		memset(op, 0, sizeof(*op));
		op->atom = *p++;
		if ((op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) ||
		    op->atom == DW_OP_deref || op->atom == DW_OP_and || op->atom == DW_OP_ge ||
		    op->atom == DW_OP_shl || op->atom == DW_OP_plus ||
		    op->atom == DW_OP_stack_value || op->atom == DW_OP_call_frame_cfa) {
			/* no operand */
		} else if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
			if (cfi_prog__read_sleb(&p, end, &s))
				return false;
			op->number = (uint64_t)s;
		} else if (op->atom == DW_OP_bregx) {
			if (cfi_prog__read_uleb(&p, end, &op->number) ||
			    cfi_prog__read_sleb(&p, end, &s))
				return false;
			op->number2 = (uint64_t)s;
		} else if (op->atom == DW_OP_regx || op->atom == DW_OP_constu ||
			   op->atom == DW_OP_plus_uconst) {
			if (cfi_prog__read_uleb(&p, end, &op->number))
				return false;
		} else if (op->atom == DW_OP_const1u || op->atom == DW_OP_const2u ||
			   op->atom == DW_OP_const4u || op->atom == DW_OP_const8u) {
			if (cfi_prog__read_fixed(&p, end, 1u << (op->atom - DW_OP_const1u) / 2, &v))
				return false;
			op->number = v;
		} else {
			return false;
		}
		(*n)++;
	}
	return true;
}

/* A tracked register's rule in the interpreter's state (regno: its number). */
static void state_loc(const struct cfi_reg_rule *rr, uint32_t regno, struct loc *l)
{
	Dwarf_Op ops[12];
	size_t n = 1;

	memset(l, 0, sizeof(*l));
	switch (rr->how) {
	case CFI_HOW_UNDEF:
		l->kind = LOC_UNDEF;
		return;
	case CFI_HOW_SAME:
		l->kind = LOC_SAME;
		return;
	case CFI_HOW_OFFSET:
	case CFI_HOW_VAL_OFFSET:
		l->kind = LOC_CFA;
		l->off = rr->off;
		l->deref = rr->how == CFI_HOW_OFFSET;
		return;
	case CFI_HOW_REGISTER:
		l->kind = rr->off == regno ? LOC_SAME : LOC_OTHER;
		l->deref = true;
		return;
	}
	/* Expressions: as libdw gives them, so that the same shapes are recognized. */
	memset(&ops[0], 0, sizeof(ops[0]));
	ops[0].atom = DW_OP_call_frame_cfa;
	if (!decode_expr(rr->expr, rr->len, ops, ARRAY_SIZE(ops) - 1, &n)) {
		l->kind = LOC_OTHER;
		return;
	}
	if (rr->how == CFI_HOW_VAL_EXPR) {
		memset(&ops[n], 0, sizeof(ops[n]));
		ops[n++].atom = DW_OP_stack_value;
	}
	ops_loc(ops, n, (int)regno, l);
}

void cfi_rule__from_state(const struct cfi_state *st, bool signal, uint32_t ra_reg,
			  const struct cfi_machine *m, struct cfi_row_rule *out)
{
	struct row_locs in = { 0 };
	Dwarf_Op ops[10];
	size_t n = 0;

	state_loc(&st->reg[CFI_SLOT_RA], ra_reg, &in.ra);
	switch (st->cfa_how) {
	case CFI_CFA_UNDEF:
		in.cfa_why = CFI_UNSUP_CFA_UNDEF;
		break;
	case CFI_CFA_INVALID:
		in.cfa_why = CFI_UNSUP_INSN;
		break;
	case CFI_CFA_REG:
		in.cfa = (struct loc){ .kind = LOC_REGOFF,
				       .reg = (int)st->cfa_reg,
				       .off = st->cfa_off };
		break;
	default:
		if (!decode_expr(st->cfa_expr, st->cfa_len, ops, ARRAY_SIZE(ops), &n) || !n)
			in.cfa_why = CFI_UNSUP_CFA_EXPR;
		else
			cfa_from_ops(ops, n, (int)ra_reg, m, &in);
		break;
	}
	state_loc(&st->reg[CFI_SLOT_SP], (uint32_t)m->sp, &in.sp);
	state_loc(&st->reg[CFI_SLOT_FP], (uint32_t)m->fp, &in.fp);
	if (m->xreg >= 0)
		state_loc(&st->reg[CFI_SLOT_XREG], (uint32_t)m->xreg, &in.xreg);
	finish(&in, signal, m, out);
}
