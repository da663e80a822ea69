// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * LD_PRELOAD'ed into `perf script` in the arm64 guest (tests/arm64/unwind.test)
 * so that perf's DWARF unwinding can step over return addresses signed by
 * pointer authentication (-mbranch-protection=pac-ret).
 *
 * Why: perf unwinds a sample's copy of the user stack "remotely", and a
 * remote unwinder can strip the signature from a return address only when its
 * caller hands it the PAC mask: libunwind (>= 1.7) through the accessor
 * ptrauth_insn_mask, libdw as "register -2" of dwfl_thread_state_registers().
 * perf does neither (the kernel does not record the mask in perf.data: the
 * 2022 "perf arm64: Send pointer auth masks to ring buffer" series was never
 * finished), so it stops at the first signed return address and would be no
 * reference for the pac-ret builds. These wrappers pass the mask along;
 * nothing else changes.
 *
 * The mask is the CPU's own: XPACLRI (a hint, a no-op without PAC) strips the
 * PAC field from x30, so stripping an all-ones user pointer (bit 55 clear)
 * shows which bits the field occupies, as the kernel's NT_ARM_PAC_MASK would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t pac_insn_mask(void)
{
	register uint64_t lr __asm__("x30") = ~(1ULL << 55);
	uint64_t all = lr;

	__asm__("hint #7" : "+r"(lr)); /* XPACLRI */
	return all & ~lr;
}

/* libunwind >= 1.7's unw_accessors_t (libunwind-common.h), by layout. */
struct unw_accessors {
	void *find_proc_info, *put_unwind_info, *get_dyn_info_list_addr, *access_mem;
	void *access_reg, *access_fpreg, *resume, *get_proc_name, *get_elf_filename;
	void *get_proc_ip_range;
	uint64_t (*ptrauth_insn_mask)(void *as, void *arg);
};
typedef void *create_addr_space_fn(struct unw_accessors *a, int byte_order);

static uint64_t unw_ptrauth_insn_mask(void *as, void *arg)
{
	(void)as;
	(void)arg;
	return pac_insn_mask();
}

/* perf's unw_create_addr_space(&accessors, 0): the same accessors plus the mask. */
void *_Uaarch64_create_addr_space(struct unw_accessors *a, int byte_order)
{
	static create_addr_space_fn *real;
	struct unw_accessors *copy;

	if (!real)
		real = (create_addr_space_fn *)dlsym(RTLD_NEXT, "_Uaarch64_create_addr_space");
	if (!real)
		abort();
	/* libunwind keeps its own copy of *a: this one may go once it returns. */
	copy = malloc(sizeof(*copy));
	if (!copy)
		return real(a, byte_order);
	*copy = *a;
	if (!copy->ptrauth_insn_mask)
		copy->ptrauth_insn_mask = unw_ptrauth_insn_mask;
	void *as = real(copy, byte_order);

	free(copy);
	return as;
}

typedef uint64_t Dwarf_Word;
typedef struct Dwfl_Thread Dwfl_Thread;
typedef bool state_registers_fn(Dwfl_Thread *thread, int firstreg, unsigned nregs,
				const Dwarf_Word *regs);

/* A perf built to unwind with libdw sets the initial registers from x0 on. */
bool dwfl_thread_state_registers(Dwfl_Thread *thread, int firstreg, unsigned nregs,
				 const Dwarf_Word *regs)
{
	static state_registers_fn *real;
	Dwarf_Word mask = pac_insn_mask();

	if (!real)
		real = (state_registers_fn *)dlsym(RTLD_NEXT, "dwfl_thread_state_registers");
	if (!real)
		abort();
	if (firstreg == 0 && mask)
		real(thread, -2, 1, &mask);
	return real(thread, firstreg, nregs, regs);
}
