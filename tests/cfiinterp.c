// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The CFA interpreter (userspace/tables/cfi_interp.c) on hand-made programs
 * (driven by tests/cfiref.test): the rows of a small prologue/epilogue with
 * remember/restore_state, and every refusal: a truncated operand, a register
 * above MAX_CFA_REGNUM, the remember stack too deep or popped empty, a CIE
 * that advances or restores, an advance past the FDE's end, DW_CFA_set_loc
 * going backwards, the instruction budget, an opcode it does not know,
 * DW_CFA_def_cfa_offset on an expression CFA, and AArch64's RA signing
 * (negate_ra_state, kept across remember/restore; refused on x86-64).
 * One PASS/FAIL line per case; exits 1 on a failure.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tables/cfi_interp.h"
#include "testlib.h"

#define LO 0x1000
#define HI 0x1010

static const uint8_t cie_x86[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1 };

struct exp_row {
	uint64_t lo;
	uint8_t bad;
	int64_t cfa_off;
	uint8_t fp_how; /* enum cfi_how */
	bool ra_signed;
};

/* The CIE (x86-64 unless arm), then the FDE [LO, HI): err, and rows if 0. */
static void check(const char *name, const uint8_t *cie, size_t cie_len, const uint8_t *fde,
		  size_t fde_len, bool arm, int want_err, const struct exp_row *rows, size_t nr)
{
	struct cfi_cie_prog c = { .insn = cie,
				  .insn_end = cie + cie_len,
				  .code_align = 1,
				  .data_align = -8,
				  .ra_reg = arm ? 30 : 16 };
	struct cfi_interp ip = { 0 };
	char why[160] = "";
	size_t i;
	int err;

	err = cfi_interp__cie(&ip, arm ? &cfi_aarch64 : &cfi_x86_64, &c, fde, 0, 1000);
	if (!err)
		err = cfi_interp__fde(&ip, LO, HI, fde, fde + fde_len, 1000);
	if (err != want_err)
		snprintf(why, sizeof(why), "error %d, want %d", err, want_err);
	else if (!err && ip.nr_rows != nr)
		snprintf(why, sizeof(why), "%zu rows, want %zu", ip.nr_rows, nr);
	for (i = 0; !why[0] && !err && i < nr; i++) {
		const struct cfi_row *r = &ip.rows[i];

		if (r->lo != rows[i].lo || r->bad != rows[i].bad ||
		    (!r->bad && (r->st.cfa_off != rows[i].cfa_off ||
				 r->st.reg[CFI_SLOT_FP].how != rows[i].fp_how ||
				 r->st.ra_signed != rows[i].ra_signed)))
			snprintf(why, sizeof(why),
				 "row %zu: at %#llx bad %u cfa+%lld fp how %u signed %d", i,
				 (unsigned long long)r->lo, r->bad, (long long)r->st.cfa_off,
				 r->st.reg[CFI_SLOT_FP].how, r->st.ra_signed);
	}
	if (why[0])
		test_fail("cfiinterp %s: %s", name, why);
	else
		test_pass("cfiinterp %s", name);
	cfi_interp__free(&ip);
}

#define CHECK(name, cie, fde, arm, err, ...)                                    \
	do {                                                                    \
		static const struct exp_row want[] = { __VA_ARGS__ };           \
		check(name, cie, sizeof(cie), fde, sizeof(fde), arm, err, want, \
		      sizeof(want) / sizeof(want[0]));                          \
	} while (0)

int main(void)
{
	/* push %rbp; mov %rsp,%rbp ...; remember; leave; ret; restore (a tail after ret). */
	static const uint8_t prologue[] = {
		DW_CFA_advance_loc | 1,
		DW_CFA_def_cfa_offset,
		16,
		DW_CFA_offset | 6,
		2,
		DW_CFA_advance_loc | 3,
		DW_CFA_remember_state,
		DW_CFA_def_cfa,
		7,
		8,
		DW_CFA_restore | 6,
		DW_CFA_advance_loc | 1,
		DW_CFA_restore_state,
		DW_CFA_nop,
	};
	static const uint8_t truncated[] = { DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 0x80 };
	static const uint8_t bigreg[] = { DW_CFA_offset_extended, 0x80, 0x01, 1 };
	static const uint8_t underflow[] = { DW_CFA_restore_state };
	static const uint8_t past_end[] = { DW_CFA_advance_loc | 4,
					    DW_CFA_def_cfa_offset,
					    16,
					    DW_CFA_advance_loc1,
					    0x20,
					    DW_CFA_def_cfa_offset,
					    8 };
	static const uint8_t backwards[] = {
		DW_CFA_advance_loc | 4, DW_CFA_set_loc, 0x00, 0x10, 0, 0, 0, 0, 0, 0
	};
	static const uint8_t unknown[] = { DW_CFA_advance_loc | 1, 0x3f };
	static const uint8_t expr_then_off[] = {
		DW_CFA_def_cfa_expression, 2, DW_OP_breg7, 8, DW_CFA_advance_loc | 2,
		DW_CFA_def_cfa_offset,	   16
	};
	static const uint8_t sign[] = {
		DW_CFA_AARCH64_negate_ra_state, DW_CFA_advance_loc | 1, DW_CFA_remember_state,
		DW_CFA_AARCH64_negate_ra_state, DW_CFA_advance_loc | 1, DW_CFA_restore_state
	};
	static const uint8_t cie_advance[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_advance_loc | 1 };
	static const uint8_t cie_restore[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_restore | 6 };
	static const uint8_t cie_arm[] = { DW_CFA_def_cfa, 31, 0 };
	static const uint8_t empty[] = { DW_CFA_nop };
	uint8_t deep[MAX_CFA_DEPTH + 1], loop[4000];

	CHECK("prologue", cie_x86, prologue, false, 0, { LO, 0, 8, CFI_HOW_SAME, false },
	      { LO + 1, 0, 16, CFI_HOW_OFFSET, false }, { LO + 4, 0, 8, CFI_HOW_SAME, false },
	      { LO + 5, 0, 16, CFI_HOW_OFFSET, false });
	CHECK("truncated-leb", cie_x86, truncated, false, -EINVAL, { 0 });
	CHECK("register-128", cie_x86, bigreg, false, -EINVAL, { 0 });
	CHECK("restore-state-empty", cie_x86, underflow, false, -EINVAL, { 0 });
	memset(deep, DW_CFA_remember_state, sizeof(deep));
	CHECK("remember-65-deep", cie_x86, deep, false, -EINVAL, { 0 });
	CHECK("advance-past-end", cie_x86, past_end, false, 0, { LO, 0, 8, CFI_HOW_SAME, false },
	      { LO + 4, CFI_UNSUP_INSN, 0, 0, false });
	CHECK("set-loc-backwards", cie_x86, backwards, false, 0, { LO, 0, 8, CFI_HOW_SAME, false },
	      { LO + 4, CFI_UNSUP_INSN, 0, 0, false });
	CHECK("unknown-opcode", cie_x86, unknown, false, -EINVAL, { 0 });
	CHECK("cie-advances", cie_advance, empty, false, -EINVAL, { 0 });
	CHECK("cie-restores", cie_restore, empty, false, -EINVAL, { 0 });
	CHECK("negate-ra-state-x86", cie_x86, sign, false, -EINVAL, { 0 });
	CHECK("negate-ra-state-arm64", cie_arm, sign, true, 0, { LO, 0, 0, CFI_HOW_SAME, true },
	      { LO + 1, 0, 0, CFI_HOW_SAME, false }, { LO + 2, 0, 0, CFI_HOW_SAME, true });
	memset(loop, DW_CFA_nop, sizeof(loop));
	CHECK("budget", cie_x86, loop, false, -E2BIG, { 0 });
	{
		/* def_cfa_offset on an expression CFA: invalid, a row the rules refuse. */
		struct cfi_cie_prog c = { .insn = cie_x86,
					  .insn_end = cie_x86 + sizeof(cie_x86),
					  .code_align = 1,
					  .data_align = -8,
					  .ra_reg = 16 };
		struct cfi_interp ip = { 0 };
		bool ok = !cfi_interp__cie(&ip, &cfi_x86_64, &c, expr_then_off, 0, 1000) &&
			  !cfi_interp__fde(&ip, LO, HI, expr_then_off,
					   expr_then_off + sizeof(expr_then_off), 1000) &&
			  ip.nr_rows == 2 && ip.rows[0].st.cfa_how == CFI_CFA_EXPR &&
			  ip.rows[1].st.cfa_how == CFI_CFA_INVALID;

		if (ok)
			test_pass("cfiinterp cfa-offset-on-expression");
		else
			test_fail("cfiinterp cfa-offset-on-expression: %zu rows", ip.nr_rows);
		cfi_interp__free(&ip);
	}
	return failures ? 1 : 0;
}
