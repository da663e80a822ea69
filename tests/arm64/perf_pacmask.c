// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LD_PRELOAD'ed into `perf script` in the arm64 guest (tests/arm64/unwind.test)
 * so that perf's DWARF unwinding (libdw) can step over return addresses signed
 * by pointer authentication (-mbranch-protection=pac-ret).
 *
 * Why: libdw strips a signed return address with the thread's PAC mask, which
 * a caller hands it as "register -2" of dwfl_thread_state_registers(); perf
 * never does (the kernel does not record the mask in perf.data: the 2022
 * "perf arm64: Send pointer auth masks to ring buffer" series was never
 * finished), so without this perf stops at the first signed return address
 * and is no reference for the pac-ret builds. This wrapper passes the mask
 * along with perf's initial registers; nothing else changes.
 *
 * The mask is the CPU's own: XPACLRI (a hint, a no-op without PAC) strips the
 * PAC field from x30, so stripping an all-ones user pointer (bit 55 clear)
 * shows which bits the field occupies, as the kernel's NT_ARM_PAC_MASK would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>

typedef uint64_t Dwarf_Word;
typedef struct Dwfl_Thread Dwfl_Thread;
typedef bool state_registers_fn(Dwfl_Thread *thread, int firstreg, unsigned nregs,
				const Dwarf_Word *regs);

static Dwarf_Word pac_insn_mask(void)
{
	register uint64_t lr __asm__("x30") = ~(1ULL << 55);
	uint64_t all = lr;

	__asm__("hint #7" : "+r"(lr)); /* XPACLRI */
	return all & ~lr;
}

bool dwfl_thread_state_registers(Dwfl_Thread *thread, int firstreg, unsigned nregs,
				 const Dwarf_Word *regs)
{
	static state_registers_fn *real;
	Dwarf_Word mask = pac_insn_mask();

	if (!real)
		real = (state_registers_fn *)dlsym(RTLD_NEXT, "dwfl_thread_state_registers");
	if (!real)
		return false;
	/* perf sets the initial registers from x0 on: hand the mask over first. */
	if (firstreg == 0 && mask)
		real(thread, -2, 1, &mask);
	return real(thread, firstreg, nregs, regs);
}
