/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Function symbol table: (address, size, name) entries sorted for binary
 * search, with perf's rules. Used for ELF objects (.symtab/.dynsym, and later
 * debug files) and JIT maps.
 *
 * Build with symtab__add(), then symtab__finish() once: it sorts, keeps one
 * symbol per address (perf's choose_best_symbol: sized over size 0, non-weak
 * over weak, global over local, fewer leading underscores, longer name), and
 * extends size-0 symbols to the next symbol. An address resolves to the nearest
 * preceding symbol that covers it.
 */
#ifndef SFBPF_SYMTAB_H
#define SFBPF_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct Elf;
struct symtab;

/* Binding, ranked as perf prefers it. */
enum symtab_bind {
	SYMTAB_BIND_WEAK = 0,
	SYMTAB_BIND_LOCAL = 1,
	SYMTAB_BIND_GLOBAL = 2,
};

struct symtab *symtab__new(void);
void symtab__free(struct symtab *t);

int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name,
		enum symtab_bind bind);
/* latest_wins: at one address the last added symbol wins (JIT code replaced). */
void symtab__finish(struct symtab *t, bool latest_wins);

/* Name of the symbol covering addr (NULL if none), and addr's offset in it. */
const char *symtab__find(const struct symtab *t, uint64_t addr, uint64_t *offset);
size_t symtab__count(const struct symtab *t);

/*
 * Add an ELF file's function symbols (STT_FUNC, STT_GNU_IFUNC, defined in an
 * executable section): from .symtab, or .dynsym if .symtab has none.
 */
int symtab__add_elf(struct symtab *t, struct Elf *elf);

#endif /* SFBPF_SYMTAB_H */
