/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Between the symbol table (symtab.c) and its ELF reader (symtab_elf.c): a
 * symbol added with what the ELF file says of it, and the one file of names
 * a table may read them back from. Not for other modules: they use symtab.h.
 */
#ifndef SFBPF_SYMTAB_INT_H
#define SFBPF_SYMTAB_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/symtab.h"

#define NAME_OFFSET 0x3fffffffu /* the largest offset a kept name may have in its file */
#define NO_FILE_NAME UINT32_MAX /* a name made here (PLT entries, JIT maps), in no file */

/*
 * Adds a symbol before symtab__finish(). name is kept as it is (an ELF string
 * table's, valid until symtab__finish()) or, with copy, copied. file_name:
 * its offset in the table's file of names (symtab__claim_names()), or
 * NO_FILE_NAME. mangled: demangled on first lookup; compat: a non-default
 * symbol version. 0, -EINVAL once finished, -E2BIG, -ENOMEM.
 */
int symtab__add_sym(struct symtab *t, uint64_t addr, uint64_t size, const char *name, bool copy,
		    uint32_t file_name, enum symtab_bind bind, bool mangled, bool compat);
/*
 * Whether t's names may be read back from the string table of len bytes at
 * off in fd: the first one claimed is the table's, the others are not.
 */
bool symtab__claim_names(struct symtab *t, int fd, uint64_t off, uint64_t len);

#endif /* SFBPF_SYMTAB_INT_H */
