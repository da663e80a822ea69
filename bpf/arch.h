/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the unwinder needs to know of the CPU it runs on: where a task's user
 * registers are in its struct pt_regs, how DWARF numbers them, whether a link
 * register may hold the return address, and how a return address is cleaned
 * of a pointer-authentication code. Included by unwind_maps.h; include after
 * vmlinux.h and abi.h. See docs/DESIGN-unwinder.md, "AArch64".
 */
#ifndef SFBPF_ARCH_H
#define SFBPF_ARCH_H

#if defined(__TARGET_ARCH_x86)

/* x86-64 DWARF register number -> index of that register in struct pt_regs. */
/* clang-format off */ /* eight registers a row */
static const __u8 unwind_dwarf_to_ptregs[17] = {
	10, 12, 11, 5, 13, 14, 4, 19, /* rax rdx rcx rbx rsi rdi rbp rsp */
	9, 8, 7, 6, 3, 2, 1, 0, /* r8 .. r15 */
	16, /* return address column: ip */
};
/* clang-format on */

/* No link register: the return address is always on the stack. */
#define ARCH_HAS_LR 0
/* The callee-saved register tracked through frames (abi.h, SFBPF_XREG_*): rbx. */
#define ARCH_DWARF_XREG 3
/* A frame-pointer step finds the caller's SP exactly: rbp + 16 (call pushes RA, then rbp). */
#define ARCH_FP_STEP_EXACT_SP 1

/* The index in struct pt_regs of rule register reg (DWARF number regnum), or -1. */
static __always_inline int arch_ptregs_index(__u8 reg, __u8 regnum)
{
	if (reg != SFBPF_REG_OTHER || regnum >= sizeof(unwind_dwarf_to_ptregs))
		return -1;
	return unwind_dwarf_to_ptregs[regnum];
}

/* The sampled task's user pc, sp and frame pointer. */
static __always_inline void arch_user_regs(const struct pt_regs *regs, __u64 *pc, __u64 *sp,
					   __u64 *fp)
{
	*pc = regs->ip;
	*sp = regs->sp;
	*fp = regs->bp;
}

/* The same from a pt_regs the verifier knows nothing of; 0, or an error. */
static __always_inline long arch_read_user_regs(const struct pt_regs *regs, __u64 *pc, __u64 *sp,
						__u64 *fp)
{
	return bpf_core_read(pc, sizeof(*pc), &regs->ip) |
	       bpf_core_read(sp, sizeof(*sp), &regs->sp) |
	       bpf_core_read(fp, sizeof(*fp), &regs->bp);
}

/* Return addresses are used as they are. */
static __always_inline __u64 arch_strip_ra(__u64 ra)
{
	return ra;
}

#elif defined(__TARGET_ARCH_arm64)

/*
 * AArch64 DWARF numbers x0-x30 as 0-30 and sp as 31, which is also their
 * order in struct pt_regs (regs[31], sp): the number is the index. x29 is
 * the frame pointer, x30 the link register (LR).
 */
#define ARCH_DWARF_SP 31
#define ARCH_DWARF_LR 30
#define ARCH_HAS_LR 1
/* No CFI seen on AArch64 bases a CFA on a callee-saved register: none is tracked. */
#define ARCH_DWARF_XREG 0xff
/*
 * A frame record {x29, x30} sits anywhere in its frame (usually at its
 * bottom): x29 + 16 is only a lower bound of the caller's SP.
 */
#define ARCH_FP_STEP_EXACT_SP 0

/*
 * The bits a pointer-authentication code occupies in a user code address,
 * cleared before an address is looked up or emitted, as the kernel's
 * ptrauth_strip_user_insn_pac() does. Userspace sets the mask the kernel
 * reports (NT_ARM_PAC_MASK, userspace/profile/pacmask.c): 0 without
 * pointer authentication. The default, bits 54..48, is that mask for the
 * usual 48-bit address space; clearing it never changes a valid user
 * address (their bits above the address size are 0), so it is applied to
 * every return address, signed or not.
 */
const volatile __u64 user_pac_mask = 0x007f000000000000ULL;

static __always_inline int arch_ptregs_index(__u8 reg, __u8 regnum)
{
	if (reg == SFBPF_REG_RA)
		return ARCH_DWARF_LR;
	if (reg != SFBPF_REG_OTHER || regnum > ARCH_DWARF_SP)
		return -1;
	return regnum;
}

static __always_inline void arch_user_regs(const struct pt_regs *regs, __u64 *pc, __u64 *sp,
					   __u64 *fp)
{
	*pc = regs->pc;
	*sp = regs->sp;
	*fp = regs->regs[29];
}

static __always_inline long arch_read_user_regs(const struct pt_regs *regs, __u64 *pc, __u64 *sp,
						__u64 *fp)
{
	return bpf_core_read(pc, sizeof(*pc), &regs->pc) |
	       bpf_core_read(sp, sizeof(*sp), &regs->sp) |
	       bpf_core_read(fp, sizeof(*fp), &regs->regs[29]);
}

static __always_inline __u64 arch_strip_ra(__u64 ra)
{
	return ra & ~user_pac_mask;
}

#else
#error "the unwinder supports x86-64 and AArch64 only"
#endif

#endif /* SFBPF_ARCH_H */
