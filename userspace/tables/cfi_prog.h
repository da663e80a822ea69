/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading DWARF CFI bytes for cfi.c: LEB128 numbers, encoded pointers
 * (DW_EH_PE_*), and the check of a DW_CFA program before libdw runs it.
 * x86-64 and AArch64 (little-endian). Every read stays inside [*p, end).
 */
#ifndef SFBPF_CFI_PROG_H
#define SFBPF_CFI_PROG_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * libdw sizes a frame state by the highest register a program names and
 * copies it for every DW_CFA_remember_state: programs beyond these limits
 * are not handed to it (x86-64 DWARF registers end at 125, k7).
 */
#define MAX_CFA_REGNUM 127
#define MAX_CFA_DEPTH 64

/*
 * LEB128: 7 bits a byte, low first; a signed one extends its last byte's
 * bit 6. 0, or -EINVAL (past end, more than 64 bits). Inline: the CFA
 * interpreter reads one or two per instruction, nearly always one byte long.
 */
static inline int cfi_prog__read_leb(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *v)
{
	unsigned shift = 0;
	uint8_t byte;

	if (*p < end && !(**p & 0x80)) {
		byte = *(*p)++;
		*v = sign && (byte & 0x40) ? (uint64_t)byte | ~0x7full : byte;
		return 0;
	}
	*v = 0;
	do {
		if (*p >= end || shift > 63)
			return -EINVAL;
		byte = *(*p)++;
		*v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	if (sign && shift < 64 && (byte & 0x40))
		*v |= ~0ull << shift;
	return 0;
}

/* An unsigned LEB128 at *p: 0, or -EINVAL (past end, more than 64 bits). */
static inline int cfi_prog__read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	return cfi_prog__read_leb(p, end, false, v);
}

/* A signed one. */
static inline int cfi_prog__read_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t u;
	int err = cfi_prog__read_leb(p, end, true, &u);

	*v = (int64_t)u;
	return err;
}

/* A little-endian unsigned number of size bytes (1, 2, 4 or 8): 0 or -EINVAL. */
int cfi_prog__read_fixed(const uint8_t **p, const uint8_t *end, unsigned size, uint64_t *v);

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
