/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bits of a user code address that hold an AArch64 pointer-authentication
 * code: the unwinder clears them from return addresses (bpf/arch.h,
 * user_pac_mask), as the kernel's ptrauth_strip_user_insn_pac() does.
 */
#ifndef SFBPF_PROFILE_PACMASK_H
#define SFBPF_PROFILE_PACMASK_H

#include <stdint.h>

/*
 * The mask this kernel uses for user instruction addresses: asked of a traced
 * child through the NT_ARM_PAC_MASK register set (0 when the CPU has no
 * address authentication). Without ptrace (seccomp, Yama), from the CPU's
 * hwcaps and the usual 48-bit address space. Computed once. Returns 0, or
 * -ENOTSUP on other architectures.
 */
int pacmask__user(uint64_t *mask);

#endif /* SFBPF_PROFILE_PACMASK_H */
