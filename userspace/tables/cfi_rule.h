/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One DWARF CFI row (the interpreter's state, or a libdw Dwarf_Frame for the
 * reference walk) → the sfbpf rule that says the same thing, or the reason no
 * rule can, for x86-64 or AArch64. Used by cfi.c; see docs/DESIGN-cfi.md for
 * which DWARF rules map to what.
 */
#ifndef SFBPF_CFI_RULE_H
#define SFBPF_CFI_RULE_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi.h"

/*
 * "Cannot unwind here": the BPF side must stop (GAP makes unaware unwinders
 * stop with no-row). Belongs in bpf/profile.h; see docs/DESIGN-cfi.md.
 */

/* Why a CFI row has no sfbpf rule. Stable names: cfi_unsupported__name(). */
enum cfi_unsupported {
	CFI_UNSUP_NONE = 0,
	CFI_UNSUP_CFA_EXPR, /* CFA computed by a DWARF expression of no known shape */
	CFI_UNSUP_CFA_UNDEF, /* no CFA rule at all */
	CFI_UNSUP_RA, /* RA in a register, same value, or an expression */
	CFI_UNSUP_FP, /* FP undefined, in another register, or an expression */
	CFI_UNSUP_SP, /* caller's SP is not the CFA */
	CFI_UNSUP_RANGE, /* an offset beyond 32 bits */
	CFI_UNSUP_OVERLAP, /* PC covered by two FDEs of the same section */
	CFI_UNSUP_LIBDW, /* libdw could not evaluate the FDE here (the reference walk) */
	CFI_UNSUP_INSN, /* unknown CFA opcode or register, malformed program, CFA invalid */
	CFI_UNSUP_BUDGET, /* the FDE's or object's evaluation budget ran out */
	CFI_UNSUP__COUNT,
};

/* x86-64 DWARF register numbers. */
#define CFI_REG_FP 6
#define CFI_REG_SP 7
#define CFI_REG_RA 16
#define CFI_REG_XREG 3 /* rbx: the CFA of glibc's lazy-binding trampolines */

/* A machine's DWARF registers, as the rules need them. */
struct cfi_machine {
	int sp, fp;
	int xreg; /* the callee-saved register rules track (bpf/abi.h, SFBPF_XREG_*), or -1 */
	bool link_reg; /* RA may stay in its register (AArch64's LR, x30) */
};

extern const struct cfi_machine cfi_x86_64, cfi_aarch64;

/*
 * A PLT-shaped CFA: SP + base + (((pc & mask) >= threshold) << shift), which
 * lazy-binding PLT entries describe with an expression. Expressed as two rules
 * alternating every mask + 1 bytes.
 */
struct cfi_plt {
	int32_t base;
	uint32_t mask, threshold, shift;
};

struct cfi_row_rule {
	struct sfbpf_rule rule; /* for PLT: the rule where (pc & mask) < threshold */
	struct sfbpf_rule rule_hi; /* for PLT: where (pc & mask) >= threshold */
	bool plt;
	struct cfi_plt plt_cfa;
	enum cfi_unsupported why; /* NONE: rule is valid */
};

/*
 * The rule of frame (signal: CIE augmentation 'S'; ra_reg: the CIE's RA
 * column) on machine m.
 */
void cfi_rule__from_frame(Dwarf_Frame *frame, bool signal, int ra_reg, const struct cfi_machine *m,
			  struct cfi_row_rule *out);

/*
 * The same from the interpreter's state of one row (cfi_interp.h): the same
 * rule cfi_rule__from_frame() gives for libdw's frame of that row.
 */
struct cfi_state;
void cfi_rule__from_state(const struct cfi_state *st, bool signal, uint32_t ra_reg,
			  const struct cfi_machine *m, struct cfi_row_rule *out);

/* The rule every unsupported row carries. */
void cfi_rule__unsupported(struct sfbpf_rule *r);

const char *cfi_unsupported__name(enum cfi_unsupported why);

#endif /* SFBPF_CFI_RULE_H */
