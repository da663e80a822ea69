/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Function symbol table: (address, size, name) entries sorted for binary
 * search, with perf's rules. Used for ELF objects (.symtab/.dynsym, separate
 * debug files, synthesized PLT entries) and JIT maps.
 *
 * Build with symtab__add(), then symtab__finish() once: it sorts, keeps one
 * symbol per address, extends size-0 symbols to the next symbol (sizes are
 * clamped to 4 GiB), and keeps only what lookups need: 16 bytes a symbol plus
 * its name (adding after it fails with -EINVAL); a big ELF table's names stay
 * in its file, each read when first looked up. The one
 * kept is never an ELF symbol's non-default version ("cfree@GLIBC_2.2.5", or
 * hidden in .gnu.version) while another name is there, where perf shows
 * them; then perf's choose_best_symbol: sized over size 0, non-weak over
 * weak, global over local, fewer leading underscores, longer name, first
 * added. Default versions keep their "@@VER" in .symtab names, as perf shows. An address resolves
 * to the nearest preceding symbol that covers it.
 *
 * ELF symbol names are demangled (demangle.h) when first looked up; the
 * choice between symbols at one address is made on the raw names.
 */
#ifndef SFBPF_SYMTAB_H
#define SFBPF_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/*
 * Name of the symbol covering addr (NULL if none), and addr's offset in it.
 * Not const: it may demangle or read the name, and remember it. The name
 * lives as long as t.
 */
const char *symtab__find(struct symtab *t, uint64_t addr, uint64_t *offset);
size_t symtab__count(const struct symtab *t);

/*
 * Add an object's function symbols (STT_FUNC, STT_GNU_IFUNC, defined in an
 * executable section) from the first of these that has any: the .symtab of
 * debug (its separate debug file, may be NULL), elf's .symtab, elf's .dynsym.
 * Then, on x86-64, one "name@plt" symbol per PLT entry of elf (.plt,
 * .plt.sec, .plt.got), named like objdump does; "*ABS*+0xADDR@plt" for an
 * IRELATIVE slot. Symbol addresses are ELF virtual addresses.
 *
 * elf and debug must stay open until symtab__finish(): their names are not
 * copied while the table is built. fd and debug_fd: the files elf and debug
 * read, or -1. When the names kept
 * from one of them reach 512 KiB (symtab__set_file_names_min()), t keeps a
 * descriptor of it (at most 64 tables do) and reads each name from there when
 * its symbol is first looked up, instead of holding them all: MiBs for a big
 * C++ program, whose symbols are mostly never hit.
 */
int symtab__add_elf(struct symtab *t, struct Elf *elf, int fd, struct Elf *debug, int debug_fd);
/* Names from a file from this many bytes on (before symtab__finish(); 0: always). */
void symtab__set_file_names_min(struct symtab *t, size_t bytes);
/*
 * Add a perf JIT map's symbols: "START SIZE name" lines, hex. Bad lines are
 * skipped, as are lines longer than SYMTAB_PERF_MAP_MAX_LINE; reading stops
 * after SYMTAB_PERF_MAP_MAX_BYTES.
 */
#define SYMTAB_PERF_MAP_MAX_LINE 4096
#define SYMTAB_PERF_MAP_MAX_BYTES (64ull << 20)
int symtab__add_perf_map(struct symtab *t, FILE *f);
/* Does elf have a .symtab? If not, its separate debug file is worth finding. */
bool symtab__elf_has_symtab(struct Elf *elf);

#endif /* SFBPF_SYMTAB_H */
