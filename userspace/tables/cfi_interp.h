/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DW_CFA interpreter behind cfi.c: runs a CIE's initial instructions once
 * (the state its FDEs start from), then each FDE's instructions once from
 * start to end, and records one row per location the program reaches
 * (DWARF 5 §6.4), so an FDE costs O(instructions) and no allocation beyond
 * the caller's reusable row array.
 *
 * Only the registers a sfbpf rule can use are tracked: the CIE's return
 * address column, SP and FP (cfi_machine); every other register's
 * instructions are checked and skipped. The ABI's default rules come first,
 * as libdw applies them (x86-64: CFA undefined, SP = CFA, RA and rbp same
 * value; AArch64: CFA = x30, SP = CFA, x29/x30 same value).
 *
 * Malformed programs (an unknown opcode, an operand past the end, a register
 * above MAX_CFA_REGNUM, a remember stack deeper than MAX_CFA_DEPTH or popped
 * empty, an advance or restore in a CIE) are refused whole: -EINVAL, no row
 * kept. An advance past the FDE's end or a location going backwards ends the
 * rows with one marked bad (CFI_UNSUP_INSN) from the row it broke on.
 * Every read stays inside the program's bytes.
 */
#ifndef SFBPF_CFI_INTERP_H
#define SFBPF_CFI_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tables/cfi_prog.h"
#include "tables/cfi_rule.h"

/* How a register is recovered in one row (DWARF 5 §6.4.1). */
enum cfi_how {
	CFI_HOW_UNDEF = 0, /* undefined, or unspecified with no ABI default */
	CFI_HOW_SAME, /* same value */
	CFI_HOW_OFFSET, /* saved at CFA + off */
	CFI_HOW_VAL_OFFSET, /* is CFA + off */
	CFI_HOW_REGISTER, /* in register off */
	CFI_HOW_EXPR, /* saved at the address expr computes, the CFA pushed first */
	CFI_HOW_VAL_EXPR, /* is the value expr computes, the CFA pushed first */
};

enum cfi_cfa_how {
	CFI_CFA_UNDEF = 0, /* no CFA rule yet */
	CFI_CFA_REG, /* register reg + off */
	CFI_CFA_EXPR, /* a DWARF expression */
	CFI_CFA_INVALID, /* def_cfa_register/offset applied to an expression */
};

struct cfi_reg_rule {
	uint8_t how; /* enum cfi_how */
	uint32_t len; /* expression bytes */
	int64_t off; /* offset, or the register of CFI_HOW_REGISTER */
	const uint8_t *expr;
};

/* Indexes of the tracked registers in cfi_state.reg. */
enum { CFI_SLOT_RA, CFI_SLOT_SP, CFI_SLOT_FP, CFI_SLOT_XREG, CFI_SLOTS };

struct cfi_state {
	uint8_t cfa_how; /* enum cfi_cfa_how */
	bool ra_signed; /* AArch64: DW_CFA_AARCH64_negate_ra_state toggled an odd number of times */
	uint32_t cfa_reg, cfa_len;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	struct cfi_reg_rule reg[CFI_SLOTS];
};

/* One row: its state applies from lo to the next row's lo (or the FDE's end). */
struct cfi_row {
	uint64_t lo;
	uint8_t bad; /* enum cfi_unsupported: the program broke here, no state */
	struct cfi_state st;
};

/* A CIE as its FDEs need it. */
struct cfi_cie_prog {
	const uint8_t *insn, *insn_end; /* initial instructions */
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_reg; /* return address column */
	uint8_t fde_enc; /* DW_EH_PE_* of addresses (DW_CFA_set_loc) */
};

struct cfi_interp {
	const struct cfi_machine *m;
	struct cfi_cie_prog cie;
	uint32_t regno[CFI_SLOTS]; /* DWARF number of each tracked register */
	struct cfi_state init; /* after the ABI's defaults and the CIE's program */
	struct cfi_state stack[MAX_CFA_DEPTH]; /* DW_CFA_remember_state */
	uint64_t sec_addr; /* section address of sec_base (pc-relative DW_CFA_set_loc) */
	const uint8_t *sec_base;
	struct cfi_row *rows; /* reused from FDE to FDE */
	size_t nr_rows, cap_rows;
	uint64_t ops; /* instructions executed, all FDEs */
};

/*
 * The state the CIE's FDEs start from; sec_base/sec_addr: the section the
 * programs are in and its address. 0, or -EINVAL (malformed, or more than
 * max_ops instructions: -E2BIG).
 */
int cfi_interp__cie(struct cfi_interp *ip, const struct cfi_machine *m,
		    const struct cfi_cie_prog *cie, const uint8_t *sec_base, uint64_t sec_addr,
		    uint64_t max_ops);

/*
 * The rows of the FDE [lo, hi) whose instructions are [p, end), in ip->rows
 * (ip->nr_rows of them, the first at lo, increasing). 0; -EINVAL (malformed:
 * no row), -E2BIG (more than max_ops instructions), -ENOMEM.
 */
int cfi_interp__fde(struct cfi_interp *ip, uint64_t lo, uint64_t hi, const uint8_t *p,
		    const uint8_t *end, uint64_t max_ops);

void cfi_interp__free(struct cfi_interp *ip);

/*
 * Rows repeat a few states over and over (each push and pop of a prologue
 * and epilogue): what a state translated to, remembered by (CIE, state) so
 * that a repeated state costs a hash and a compare instead of a translation
 * and a rule lookup. Direct-mapped; cfi_memo__clear() when the rule ids it
 * holds are no longer valid (a new table).
 */
#define CFI_MEMO_SLOTS 512

struct cfi_memo_val {
	uint32_t rule_id;
	bool outermost, topmost; /* what rule_rows counts */
};

struct cfi_memo {
	struct {
		bool used;
		uint32_t cie;
		struct cfi_state st;
		struct cfi_memo_val val;
	} slot[CFI_MEMO_SLOTS];
};

void cfi_memo__clear(struct cfi_memo *m);
/* The value kept for (cie, st): true and *v, or false. */
bool cfi_memo__get(const struct cfi_memo *m, uint32_t cie, const struct cfi_state *st,
		   struct cfi_memo_val *v);
void cfi_memo__put(struct cfi_memo *m, uint32_t cie, const struct cfi_state *st,
		   const struct cfi_memo_val *v);

#endif /* SFBPF_CFI_INTERP_H */
