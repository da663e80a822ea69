/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bytes a table is built from, named by a digest (see tableshare.c): two
 * files whose digests are equal give the same table, whatever else differs.
 *
 * Which bytes: the ELF header, the program and section header tables, the
 * section names, and the contents of what the builders (sframe_elf, cfi,
 * complete) read: .sframe (or the SHT_GNU_SFRAME section), .eh_frame,
 * .eh_frame_hdr, .debug_frame, the symbol tables with their strings (complete
 * looks for runtimes' entry functions), .dynamic (complete's DT_NEEDED: a
 * loader's entry code is outermost), the PT_GNU_SFRAME and PT_GNU_EH_FRAME
 * segments, an ET_REL file's relocations of those, and a compressed
 * .debug_info beside a .debug_frame (libdw may give up on a file whose
 * .debug_info does not inflate, and with it on the .debug_frame). No
 * instruction bytes: no builder reads code, only section headers of it
 * (where the PLTs are).
 *
 * The copy is a private file (memfd) holding exactly those bytes at their
 * offsets and zeros elsewhere, of the file's size: a build from it reads
 * nothing the digest does not cover, whatever the file's owner does to the
 * file meanwhile. The digest covers the size and every (offset, length,
 * bytes) in the order read, so equal digests mean equal copies.
 *
 * Error rule: a negative errno. -ENOTSUP: not a 64-bit little-endian ELF
 * file, or a layout not handled (extended section numbering); -EFBIG: more
 * than TABLEBYTES_MAX bytes to read; -EIO: the file shrank under us.
 */
#ifndef SFBPF_TABLEBYTES_H
#define SFBPF_TABLEBYTES_H

#include <stdint.h>

#include "tables/sha256.h"

/* Read (and hashed) on the sampling thread when a file may share a table: bounded. */
#define TABLEBYTES_MAX (64ull << 20)

/*
 * The digest of the bytes a build of the file open at fd reads; with copy,
 * *copy is a new memfd holding them (the caller closes it).
 */
int tablebytes__read(int fd, uint8_t digest[SHA256_BYTES], int *copy);

#endif /* SFBPF_TABLEBYTES_H */
