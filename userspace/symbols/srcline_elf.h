/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * srcline's ELF-level steps (internal to symbols/srcline.c), before libdw
 * reads a file: sections a lookup never reads are hidden; compressed ones
 * are judged by the size their headers claim, before anything is inflated
 * (a compression bomb claims up to 1032 times its size); what is kept is
 * inflated once into an unlinked spill file, within a budget for all of
 * them. Refusals are counted (srcline__stats()). Not thread-safe.
 */
#ifndef SFBPF_SRCLINE_ELF_H
#define SFBPF_SRCLINE_ELF_H

#include <stdbool.h>
#include <stdint.h>

struct Elf;

/*
 * Hides elf's sections a lookup never reads (in libelf's copy of the
 * headers; the file is never written) and adds up what the kept compressed
 * ones claim to inflate to, read from fd. 0 (*inflated: bytes, 0: none), or
 * -EFBIG when one claims more than 100 times its size or all more than
 * 1 GiB. private_read: elf reads fd into memory (ELF_C_READ), where libdw
 * will inflate them: the claims are read from libelf's copy of each section,
 * and the kept sections with what they inflate to must fit the 64 MiB that
 * may be inflated in memory (-EFBIG, counted as refused_memory).
 */
int srcline_elf_prepare(int fd, struct Elf *elf, bool private_read, uint64_t *inflated);
/* 0 if inflated bytes may be inflated in memory (no spill file), else -EFBIG. */
int srcline_elf_fits_memory(uint64_t inflated);
/*
 * fd's copy (its first st_size bytes) in an unlinked file ($SFBPF_SPILL_DIR,
 * else /var/tmp) with its kept compressed .debug_* sections inflated
 * (inflated: what they claimed when prepared; the copy's own claims are
 * judged again, before anything is inflated, for fd may have been written
 * since): its descriptor (*bytes: its size), -EFBIG (the copy's sections
 * claim too much, counted as srcline_elf_prepare() counts), or -ENOSPC (no
 * room within the spill budget, or no such file, or the copy failed).
 * .zdebug_* sections are left compressed.
 */
int srcline_elf_spill(int fd, uint64_t inflated, uint64_t *bytes);
/* A copy was made of a file someone other than root may write (srcline.c). */
void srcline_elf_count_tenant_copy(void);
/* A spill file of bytes was closed. */
void srcline_elf_unspill(uint64_t bytes);

#endif /* SFBPF_SRCLINE_ELF_H */
