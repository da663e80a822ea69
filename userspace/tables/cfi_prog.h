/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading DWARF CFI bytes for cfi.c: LEB128 numbers, encoded pointers
 * (DW_EH_PE_*), and the check of a DW_CFA program before libdw runs it.
 * x86-64 and AArch64 (little-endian). Every read stays inside [*p, end).
 */
#ifndef SFBPF_CFI_PROG_H
#define SFBPF_CFI_PROG_H

#include <stdbool.h>
#include <stdint.h>

/*
 * libdw sizes a frame state by the highest register a program names and
 * copies it for every DW_CFA_remember_state: programs beyond these limits
 * are not handed to it (x86-64 DWARF registers end at 125, k7).
 */
#define MAX_CFA_REGNUM 127
#define MAX_CFA_DEPTH 64

/* An unsigned LEB128 at *p: 0, or -EINVAL (past end, more than 64 bits). */
int cfi_prog__read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v);

/*
 * An encoded pointer at *p (vaddr: its address, for pcrel; apply: add the
 * base its application names). Only the applications FDE ranges use in
 * linked x86-64 objects (absolute, pcrel). 0 or -EINVAL.
 */
int cfi_prog__read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t vaddr,
			   bool apply, uint64_t *v);

struct cfi_prog_scan {
	uint64_t ops;
	uint32_t depth; /* DW_CFA_remember_state nesting */
	bool aarch64; /* DW_CFA_AARCH64_negate_ra_state is known */
	/*
	 * With track: the RA signing state (negate_ra_state toggles it,
	 * remember/restore_state save it) from loc on, up to the row at pc;
	 * the scan stops once past it (reached).
	 */
	bool track, ra_signed, reached;
	uint64_t loc, pc, code_align, saved; /* saved: a bit per remembered state */
};

/*
 * Check a DW_CFA program before libdw runs it: every opcode known, every
 * operand inside [p, end), every register at most MAX_CFA_REGNUM, and the
 * remember_state nesting bounded. Counts the instructions in s->ops.
 */
bool cfi_prog__scan(const uint8_t *p, const uint8_t *end, uint8_t fde_enc, struct cfi_prog_scan *s);

#endif /* SFBPF_CFI_PROG_H */
