/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Completing an object's table: one table from its .sframe rows, its DWARF
 * CFI rows and what its ELF headers and symbols say, each source winning
 * where it is known to be right (docs/DESIGN-cfi.md, "Choosing between
 * sources"):
 *
 *   1. the functions of a known runtime that have no caller (Go's
 *      runtime.goexit: the "return address" above it is not one) get the
 *      outermost rule, whatever the unwind sections say about them; in a Go
 *      binary, the runtime's functions that move SP to another stack
 *      (runtime.systemstack, mcall, morestack, the vDSO and C calls on the
 *      system stack) get gap rows: Go's .debug_frame describes them as
 *      ordinary frames, wrong once SP is switched, and the unwinder's
 *      frame-pointer step in a gap follows rbp back to the first stack;
 *   2. in PLT sections (.plt, .plt.sec, .plt.got), which ld describes
 *      itself, CFI rows win over SFrame rows: ld 2.44-2.47 write a wrong
 *      SFrame FDE for .plt.got (CFA = SP + 16; its entries are jumps reached
 *      by a call, CFA = SP + 8). Where no CFI covers .plt.got, its entries
 *      get that CFA = SP + 8 rule;
 *   3. elsewhere SFrame rows win; its gaps (between functions, or an FDE
 *      without FREs) and rows it cannot express are filled from CFI. An
 *      unsupported row (see cfi_rule.h) stands only where neither source
 *      has a rule.
 *
 * Lifecycle: complete__read_fd() fills a struct complete_info (no
 * allocation); complete__merge() returns a new table the caller frees with
 * flat_table__free(). Errors are negative errnos; nothing is printed.
 */
#ifndef SFBPF_TABLES_COMPLETE_H
#define SFBPF_TABLES_COMPLETE_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/cfi.h"
#include "tables/flattable.h"

#define COMPLETE_MAX_PLT 4
#define COMPLETE_MAX_OUTERMOST 8
#define COMPLETE_MAX_STACK_SWITCH 32
/*
 * The entry code is a few instructions that call the C runtime's start
 * (glibc's _start: 48 bytes on x86-64, ld.so's 64 with _dl_start_user): at
 * most this many bytes of it get the outermost rule, so that where no
 * function symbol bounds it (.dynsym only, a stripped static program) no
 * more than that is taken.
 */
#define COMPLETE_ENTRY_MAX 256

struct complete_range {
	uint64_t start, end; /* ELF virtual addresses, [start, end) */
};

struct complete_info {
	struct complete_range plt[COMPLETE_MAX_PLT]; /* PLT sections */
	uint32_t nr_plt;
	struct complete_range plt_got; /* .plt.got; empty when absent */
	struct complete_range outermost[COMPLETE_MAX_OUTERMOST]; /* functions with no caller */
	uint32_t nr_outermost;
	/* Go's runtime functions that switch stacks: gap rows (frame-pointer steps). */
	struct complete_range stack_switch[COMPLETE_MAX_STACK_SWITCH];
	uint32_t nr_stack_switch;
	bool go; /* a Go binary: .go.buildinfo, .note.go.buildid or runtime.buildVersion */
	/*
	 * Go's own code, [runtime.text, runtime.etext): where CFI rows get Go's
	 * frame layout ("rbp at CFA - 16"). Empty when unknown (no symbols): then
	 * nowhere, as a cgo binary's C code from .eh_frame lies outside it and
	 * its frames keep rbp wherever gcc did.
	 */
	struct complete_range go_text;
	/*
	 * The code at the entry point (e_entry) of an object the kernel starts
	 * a process in (a program, or a dynamic loader: an ELF with PT_INTERP,
	 * ET_EXEC, or no DT_NEEDED), up to the end of its executable section,
	 * the next function symbol or the end of the one holding it, and
	 * COMPLETE_ENTRY_MAX bytes at most; empty for a library, whose e_entry
	 * is only the linker's default.
	 * The kernel enters it with no return address on the stack, so where
	 * no source has a rule at e_entry (ld.so's _start: glibc writes no CFI
	 * for it), complete__merge() gives the code from there to the next
	 * row with a rule the outermost rule: a walk that returns into it
	 * (_dl_start's caller) has reached the process's first frame.
	 */
	struct complete_range entry;
};

/*
 * Reads the PLT sections, the outermost functions, Go's stack-switching
 * functions (from .symtab, else .dynsym) and the entry point of the ELF
 * file open at fd. 0 (an object without section
 * headers or symbols just gets an empty info), or -EINVAL when it is not ELF.
 */
int complete__read_fd(int fd, struct complete_info *ci);

/*
 * The merged table. sframe and cfi may each be NULL (no such source); ci
 * may be NULL (no PLT preference, no outermost or stack-switching functions). 0, -ENOENT (no
 * source has a row), -ENOMEM or -E2BIG.
 */
int complete__merge(const struct flat_table *sframe, const struct flat_table *cfi,
		    const struct complete_info *ci, struct flat_table **out);
/*
 * The same with the CFI table in nr_cfi parts, one after the other, each
 * with its own rule ids and ending in a gap row (cfi_index__flatten_chunk()):
 * the table complete__merge() gives for them joined. The counts (nr_fdes and
 * the like) are sframe's, else the first part's.
 */
int complete__merge_parts(const struct flat_table *sframe, const struct flat_table *const *cfi,
			  uint32_t nr_cfi, const struct complete_info *ci, struct flat_table **out);

/*
 * The only PCs where complete__merge(sframe, cfi, ci) looks at cfi's rules:
 * where sframe has no usable rule (its gaps and unsupported rows, before its
 * first row and from its last on) and ci's PLT sections. A CFI table built
 * for just these ranges (cfi_index__flatten) merges into the same table
 * as the whole one. Sorted, disjoint; *out is malloc'd. 0 or -ENOMEM.
 */
int complete__cfi_ranges(const struct flat_table *sframe, const struct complete_info *ci,
			 struct cfi_range **out, uint32_t *nr);

#endif /* SFBPF_TABLES_COMPLETE_H */
