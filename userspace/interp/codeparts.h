/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The parts of one function the compiler laid out apart: GCC's hot/cold
 * partitioning and link-time optimization move blocks of a big function
 * into ranges of their own, each with an FDE, no symbol. Debian unstable's
 * CPython (GCC 16, PGO and LTO) has a _PyEval_EvalFrameDefault symbol of
 * 1184 bytes whose loop runs in an unnamed 84 KiB part: every native frame
 * of the eval loop falls there.
 *
 * A part is found as a range the function's own direct jumps (not calls)
 * enter mid-way: an FDE (tables/cfi.h's index of .eh_frame) that holds a jump's
 * target past its first byte. No function's code jumps into the middle of
 * another's, so such a range is the same function's; a jump to an FDE's
 * first byte may be a tail call and proves nothing. Each part found is
 * read in turn for its own jumps. Instructions are decoded with capstone
 * (x86-64 and AArch64), from the symbol's or the FDE's first byte.
 */
#ifndef SFBPF_INTERP_CODEPARTS_H
#define SFBPF_INTERP_CODEPARTS_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

struct code_part {
	uint64_t lo, hi; /* [lo, hi), ELF virtual addresses */
};

/*
 * Up to max parts of the function at [start, start + size) of elf (read
 * from fd), the first being that range itself; the rest in no order.
 * Returns how many (0 if size is 0 or max is).
 */
size_t codeparts__find(Elf *elf, int fd, uint64_t start, uint64_t size, struct code_part *parts,
		       size_t max);

/* The bytes of [lo, hi) from the executable section holding them, read from fd (malloc'd); NULL if
 * none. */
uint8_t *codeparts__read(Elf *elf, int fd, uint64_t lo, uint64_t hi);

#endif /* SFBPF_INTERP_CODEPARTS_H */
