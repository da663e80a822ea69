// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DW_CFA programs, executed once each (see cfi_interp.h). The semantics are
 * DWARF 5 §6.4.2 with the choices libdw (elfutils 0.188) makes where the
 * standard leaves room, because its rows are the reference this replaces:
 * def_cfa_register/def_cfa_offset on an expression CFA make it invalid,
 * DW_CFA_restore goes back to the rule after the ABI's defaults and the
 * CIE's program, a CIE may not advance or restore, and the remember stack
 * does not carry from a CIE into its FDEs.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tables/cfi_interp.h"
#include "util/vec.h"

#ifndef DW_CFA_AARCH64_negate_ra_state
#define DW_CFA_AARCH64_negate_ra_state 0x2d
#endif

/* The ABI's rule for a register before any CFI names it. */
static struct cfi_reg_rule abi_default(const struct cfi_machine *m, uint32_t regno)
{
	struct cfi_reg_rule r = { .how = CFI_HOW_UNDEF };

	if (regno == (uint32_t)m->sp) {
		r.how = CFI_HOW_VAL_OFFSET; /* the caller's SP is the CFA */
	} else if (m == &cfi_x86_64) {
		/* Callee-saved, and the RA column: what libdw's x86-64 backend says. */
		if (regno == 0 || regno == 6 || (regno >= 12 && regno <= 16))
			r.how = CFI_HOW_SAME;
	} else if ((regno >= 19 && regno <= 30) || (regno >= 72 && regno <= 79)) {
		r.how = CFI_HOW_SAME; /* AArch64: x19-x30, v8-v15 */
	}
	return r;
}

/* Sets every tracked slot that is register regno (RA may alias SP or FP). */
static inline void set_reg(const struct cfi_interp *ip, struct cfi_state *st, uint64_t regno,
			   struct cfi_reg_rule r)
{
	int i;

	for (i = 0; i < CFI_SLOTS; i++)
		if (ip->regno[i] == regno)
			st->reg[i] = r;
}

static inline bool reg_ok(uint64_t regno)
{
	return regno <= MAX_CFA_REGNUM;
}

/* One more row at lo, with st; rows never go backwards. */
static int push_row(struct cfi_interp *ip, uint64_t lo, const struct cfi_state *st, uint8_t bad)
{
	struct cfi_row *row;

	if (ip->nr_rows == ip->cap_rows && VEC_RESERVE(ip->rows, ip->cap_rows, ip->nr_rows + 1, 64))
		return -ENOMEM;
	row = &ip->rows[ip->nr_rows++];
	row->lo = lo;
	row->bad = bad;
	if (st)
		row->st = *st;
	return 0;
}

struct run {
	struct cfi_interp *ip;
	struct cfi_state st;
	uint32_t depth;
	bool cie; /* the CIE's initial instructions: no rows */
	bool done; /* rows complete (the FDE's end reached or broken) */
	uint64_t lo, hi; /* the row being built starts at lo; the FDE ends at hi */
};

/* The location moves to loc: the row before it is complete. */
static int advance(struct run *r, uint64_t loc)
{
	int err;

	if (r->cie)
		return -EINVAL; /* a CIE describes no location */
	if (r->done || loc == r->lo)
		return 0;
	if (loc < r->lo || loc > r->hi) {
		/* Backwards (set_loc, a wrapped advance) or past the end: no rule from here. */
		r->done = true;
		return push_row(r->ip, r->lo, NULL, CFI_UNSUP_INSN);
	}
	err = push_row(r->ip, r->lo, &r->st, 0);
	r->lo = loc;
	r->done = loc == r->hi;
	return err;
}

/* DW_CFA_restore: the register's rule as the CIE left it. */
static int restore_reg(struct run *r, uint64_t regno)
{
	int i;

	if (r->cie)
		return -EINVAL; /* nothing to restore to yet */
	for (i = 0; i < CFI_SLOTS; i++)
		if (r->ip->regno[i] == regno)
			r->st.reg[i] = r->ip->init.reg[i];
	return 0;
}

/* A DW_FORM_block operand: uleb length, then that many bytes. */
static inline int read_block(const uint8_t **p, const uint8_t *end, const uint8_t **blk,
			     uint32_t *len)
{
	uint64_t n;

	if (cfi_prog__read_uleb(p, end, &n) || n > (uint64_t)(end - *p) || n > UINT32_MAX)
		return -EINVAL;
	*blk = *p;
	*len = (uint32_t)n;
	*p += n;
	return 0;
}

/* A register operand and a factored (uleb or sleb) offset. */
static inline int read_reg_off(const struct run *r, const uint8_t **p, const uint8_t *end,
			       bool sign, uint64_t *regno, int64_t *off)
{
	uint64_t v;

	if (cfi_prog__read_uleb(p, end, regno) || !reg_ok(*regno) ||
	    cfi_prog__read_leb(p, end, sign, &v))
		return -EINVAL;
	*off = (int64_t)(v * (uint64_t)r->ip->cie.data_align);
	return 0;
}

/* Instructions that name no register of the rows' and move no location. */
static int run_cfa(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	struct cfi_state *st = &r->st;
	uint64_t v = 0; /* gcc 10 (make release) cannot see each case sets it */
	int64_t s;

	switch (op) {
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		if (cfi_prog__read_uleb(p, end, &v) || !reg_ok(v))
			return -EINVAL;
		st->cfa_reg = (uint32_t)v;
		if (op == DW_CFA_def_cfa ? cfi_prog__read_uleb(p, end, &v) :
					   cfi_prog__read_sleb(p, end, &s))
			return -EINVAL;
		if (op == DW_CFA_def_cfa_sf)
			v = (uint64_t)s * (uint64_t)r->ip->cie.data_align;
		st->cfa_how = CFI_CFA_REG;
		st->cfa_off = (int64_t)v;
		return 0;
	case DW_CFA_def_cfa_register:
		if (cfi_prog__read_uleb(p, end, &v) || !reg_ok(v))
			return -EINVAL;
		st->cfa_reg = (uint32_t)v;
		if (st->cfa_how != CFI_CFA_REG)
			st->cfa_how = CFI_CFA_INVALID;
		return 0;
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
		if (op == DW_CFA_def_cfa_offset ? cfi_prog__read_uleb(p, end, &v) :
						  cfi_prog__read_sleb(p, end, &s))
			return -EINVAL;
		if (op == DW_CFA_def_cfa_offset_sf)
			v = (uint64_t)s * (uint64_t)r->ip->cie.data_align;
		st->cfa_off = (int64_t)v;
		if (st->cfa_how != CFI_CFA_REG)
			st->cfa_how = CFI_CFA_INVALID;
		return 0;
	case DW_CFA_def_cfa_expression:
		if (read_block(p, end, &st->cfa_expr, &st->cfa_len))
			return -EINVAL;
		st->cfa_how = CFI_CFA_EXPR;
		return 0;
	case DW_CFA_remember_state:
		if (r->depth >= MAX_CFA_DEPTH)
			return -EINVAL;
		r->ip->stack[r->depth++] = *st;
		return 0;
	case DW_CFA_restore_state:
		if (!r->depth)
			return -EINVAL;
		*st = r->ip->stack[--r->depth];
		return 0;
	case DW_CFA_GNU_args_size: /* only for landing pads */
		return cfi_prog__read_uleb(p, end, &v);
	case DW_CFA_AARCH64_negate_ra_state:
		if (r->ip->m != &cfi_aarch64)
			return -EINVAL; /* DW_CFA_GNU_window_save: SPARC's */
		st->ra_signed = !st->ra_signed;
		return 0;
	case DW_CFA_nop:
		return 0;
	}
	return -EINVAL; /* vendor extensions */
}

/* Instructions that set one register's rule. */
static int run_reg(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	struct cfi_reg_rule rule = { .how = CFI_HOW_OFFSET };
	uint64_t regno, v;

	switch (op) {
	case DW_CFA_offset_extended:
	case DW_CFA_val_offset:
		rule.how = op == DW_CFA_offset_extended ? CFI_HOW_OFFSET : CFI_HOW_VAL_OFFSET;
		if (read_reg_off(r, p, end, false, &regno, &rule.off))
			return -EINVAL;
		break;
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset_sf:
		rule.how = op == DW_CFA_offset_extended_sf ? CFI_HOW_OFFSET : CFI_HOW_VAL_OFFSET;
		if (read_reg_off(r, p, end, true, &regno, &rule.off))
			return -EINVAL;
		break;
	case DW_CFA_GNU_negative_offset_extended:
		if (read_reg_off(r, p, end, false, &regno, &rule.off))
			return -EINVAL;
		rule.off = (int64_t)(0 - (uint64_t)rule.off);
		break;
	case DW_CFA_restore_extended:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_register:
		if (cfi_prog__read_uleb(p, end, &regno) || !reg_ok(regno))
			return -EINVAL;
		if (op == DW_CFA_restore_extended) {
			return restore_reg(r, regno);
		}
		rule.how = op == DW_CFA_undefined  ? CFI_HOW_UNDEF :
			   op == DW_CFA_same_value ? CFI_HOW_SAME :
						     CFI_HOW_REGISTER;
		if (op == DW_CFA_register) {
			if (cfi_prog__read_uleb(p, end, &v) || !reg_ok(v))
				return -EINVAL;
			rule.off = (int64_t)v;
		}
		break;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (cfi_prog__read_uleb(p, end, &regno) || !reg_ok(regno) ||
		    read_block(p, end, &rule.expr, &rule.len))
			return -EINVAL;
		rule.how = op == DW_CFA_expression ? CFI_HOW_EXPR : CFI_HOW_VAL_EXPR;
		break;
	default:
		return run_cfa(r, op, p, end);
	}
	set_reg(r->ip, &r->st, regno, rule);
	return 0;
}

/* Runs [p, end) on r->st. 0, -EINVAL, -E2BIG (max_ops), -ENOMEM. */
static int run(struct run *r, const uint8_t *p, const uint8_t *end, uint64_t max_ops)
{
	struct cfi_interp *ip = r->ip;
	uint64_t caf = ip->cie.code_align, v, start = ip->ops;
	uint8_t op;
	int err;

	while (p < end) {
		op = *p++;
		if (++ip->ops - start > max_ops)
			return -E2BIG;
		switch (op >> 6) {
		case DW_CFA_advance_loc >> 6:
			err = advance(r, r->lo + (op & 0x3f) * caf);
			break;
		case DW_CFA_offset >> 6:
			if (cfi_prog__read_uleb(&p, end, &v))
				return -EINVAL;
			set_reg(ip, &r->st, op & 0x3f,
				(struct cfi_reg_rule){
					.how = CFI_HOW_OFFSET,
					.off = (int64_t)(v * (uint64_t)ip->cie.data_align) });
			continue;
		case DW_CFA_restore >> 6:
			if (restore_reg(r, op & 0x3f))
				return -EINVAL;
			continue;
		default:
			switch (op) {
			case DW_CFA_advance_loc1:
			case DW_CFA_advance_loc2:
			case DW_CFA_advance_loc4:
				if (cfi_prog__read_fixed(&p, end, 1u << (op - DW_CFA_advance_loc1),
							 &v))
					return -EINVAL;
				err = advance(r, r->lo + v * caf);
				break;
			case DW_CFA_set_loc:
				if (r->cie)
					return -EINVAL;
				if (cfi_prog__read_encoded(
					    &p, end, ip->cie.fde_enc,
					    ip->sec_addr + (uint64_t)(p - ip->sec_base), true, &v))
					return -EINVAL;
				err = advance(r, v);
				break;
			default:
				err = run_reg(r, op, &p, end);
				break;
			}
		}
		if (err)
			return err;
	}
	return 0;
}

int cfi_interp__cie(struct cfi_interp *ip, const struct cfi_machine *m,
		    const struct cfi_cie_prog *cie, const uint8_t *sec_base, uint64_t sec_addr,
		    uint64_t max_ops)
{
	struct run r = { .ip = ip, .cie = true };
	int i;

	ip->m = m;
	ip->cie = *cie;
	ip->sec_base = sec_base;
	ip->sec_addr = sec_addr;
	ip->regno[CFI_SLOT_RA] = cie->ra_reg;
	ip->regno[CFI_SLOT_SP] = (uint32_t)m->sp;
	ip->regno[CFI_SLOT_FP] = (uint32_t)m->fp;
	/* No tracked register: a number no CFI names (MAX_CFA_REGNUM bounds them). */
	ip->regno[CFI_SLOT_XREG] = m->xreg >= 0 ? (uint32_t)m->xreg : UINT32_MAX;
	memset(&r.st, 0, sizeof(r.st));
	for (i = 0; i < CFI_SLOTS; i++)
		r.st.reg[i] = abi_default(m, ip->regno[i]);
	if (m == &cfi_aarch64) {
		/* libdw's AArch64 default: CFA = x30 + 0, until the CIE says otherwise. */
		r.st.cfa_how = CFI_CFA_REG;
		r.st.cfa_reg = 30;
	}
	ip->init = r.st; /* (a CIE may not restore: nothing reads it before the end) */
	if (cie->insn > cie->insn_end)
		return -EINVAL;
	i = run(&r, cie->insn, cie->insn_end, max_ops);
	if (i)
		return i;
	ip->init = r.st;
	return 0;
}

int cfi_interp__fde(struct cfi_interp *ip, uint64_t lo, uint64_t hi, const uint8_t *p,
		    const uint8_t *end, uint64_t max_ops)
{
	struct run r = { .ip = ip, .st = ip->init, .lo = lo, .hi = hi };
	int err;

	ip->nr_rows = 0;
	if (p > end || lo >= hi)
		return -EINVAL;
	err = run(&r, p, end, max_ops);
	if (!err && !r.done)
		err = push_row(ip, r.lo, &r.st, 0);
	if (err)
		ip->nr_rows = 0;
	return err;
}

void cfi_interp__free(struct cfi_interp *ip)
{
	free(ip->rows);
	ip->rows = NULL;
	ip->nr_rows = ip->cap_rows = 0;
}

/* ---------------------------------------------------------------- memo */

/* Equal rules: only the fields a rule's kind uses (others may be stale). */
static bool reg_eq(const struct cfi_reg_rule *a, const struct cfi_reg_rule *b)
{
	if (a->how != b->how)
		return false;
	switch (a->how) {
	case CFI_HOW_UNDEF:
	case CFI_HOW_SAME:
		return true;
	case CFI_HOW_EXPR:
	case CFI_HOW_VAL_EXPR:
		return a->expr == b->expr && a->len == b->len;
	default:
		return a->off == b->off;
	}
}

static bool state_eq(const struct cfi_state *a, const struct cfi_state *b)
{
	int i;

	if (a->cfa_how != b->cfa_how || a->ra_signed != b->ra_signed)
		return false;
	if (a->cfa_how == CFI_CFA_REG && (a->cfa_reg != b->cfa_reg || a->cfa_off != b->cfa_off))
		return false;
	if (a->cfa_how == CFI_CFA_EXPR && (a->cfa_expr != b->cfa_expr || a->cfa_len != b->cfa_len))
		return false;
	for (i = 0; i < CFI_SLOTS; i++)
		if (!reg_eq(&a->reg[i], &b->reg[i]))
			return false;
	return true;
}

/* A hash of what state_eq compares (enough of it to spread the usual states). */
static uint32_t state_hash(uint32_t cie, const struct cfi_state *st)
{
	uint64_t h = cie * 0x9e3779b97f4a7c15ull;
	int i;

	h ^= (uint64_t)st->cfa_how << 8 | st->ra_signed;
	if (st->cfa_how == CFI_CFA_REG)
		h = (h ^ ((uint64_t)st->cfa_reg << 32 ^ (uint64_t)st->cfa_off)) *
		    0xff51afd7ed558ccdull;
	for (i = 0; i < CFI_SLOTS; i++)
		h = (h ^ ((uint64_t)st->reg[i].how << 56 ^ (uint64_t)st->reg[i].off)) *
		    0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h >> 40) % CFI_MEMO_SLOTS;
}

void cfi_memo__clear(struct cfi_memo *m)
{
	int i;

	for (i = 0; i < CFI_MEMO_SLOTS; i++)
		m->slot[i].used = false;
}

bool cfi_memo__get(const struct cfi_memo *m, uint32_t cie, const struct cfi_state *st,
		   struct cfi_memo_val *v)
{
	uint32_t h = state_hash(cie, st);

	if (!m->slot[h].used || m->slot[h].cie != cie || !state_eq(&m->slot[h].st, st))
		return false;
	*v = m->slot[h].val;
	return true;
}

void cfi_memo__put(struct cfi_memo *m, uint32_t cie, const struct cfi_state *st,
		   const struct cfi_memo_val *v)
{
	uint32_t h = state_hash(cie, st);

	m->slot[h].used = true;
	m->slot[h].cie = cie;
	m->slot[h].st = *st;
	m->slot[h].val = *v;
}
