// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: function symbols of an arbitrary ELF file, as the
 * symbolizer loads them (libelf over the file, symtab__add_elf with its
 * .symtab/.dynsym and synthesized PLT symbols, then symtab__finish, the ELF
 * still open), with the names read back from the file when first looked up
 * (the input's last byte odd) or copied, and lookups (which demangle) at,
 * inside and around every ELF symbol. A name handed out must be a valid
 * string.
 */
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "fuzz.h"
#include "symbols/symtab.h"

#define MAX_LOOKUPS 2048

static void lookup(struct symtab *t, uint64_t addr)
{
	uint64_t off = ~0ull;
	const char *name = symtab__find(t, addr, &off);

	if (!name)
		return;
	FUZZ_CHECK(off <= addr, "offset %llu for address %#llx", (unsigned long long)off,
		   (unsigned long long)addr);
	/* ASan checks the name is a valid, terminated string. */
	FUZZ_CHECK(strlen(name) < (1u << 31), "absurd name length");
}

/* Addresses from the ELF's own symbols: hits, misses and the edges between. */
static void probe(Elf *elf, struct symtab *t)
{
	unsigned budget = MAX_LOOKUPS;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	lookup(t, 0);
	lookup(t, ~0ull);
	while (budget && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		n = data->d_size / sh.sh_entsize;
		for (i = 0; i < n && budget >= 3 && gelf_getsym(data, (int)i, &sym); i++) {
			lookup(t, sym.st_value);
			lookup(t, sym.st_value - 1);
			lookup(t, sym.st_value + sym.st_size);
			budget -= 3;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symtab *t;
	Elf *elf;
	int fd = fuzz_memfd(data, size);

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0;
	t = symtab__new();
	/* Every name read back from the file, as a big table's are, or copied. */
	if (t && size && (data[size - 1] & 1))
		symtab__set_file_names_min(t, 0);
	if (t && elf_kind(elf) == ELF_K_ELF && symtab__add_elf(t, elf, fd, NULL, -1) == 0) {
		symtab__finish(t, false);
		probe(elf, t);
	}
	symtab__free(t);
	elf_end(elf);
	return 0;
}
