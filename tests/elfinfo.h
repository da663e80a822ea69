/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The facts of one ELF file that tests/cfi.c names a PC by: its executable
 * sections and its .symtab functions, by address (sect_of(), sym_of()), so a
 * difference between two tables says where it is (".plt.got", "_start").
 * Read with libelf directly, not through the code under test. Included
 * once, by tests/cfi.c (every tests/NAME.c is a program of its own, so a
 * part moved out of one is a header).
 */
#ifndef SFBPF_TESTS_ELFINFO_H
#define SFBPF_TESTS_ELFINFO_H

#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sect {
	uint64_t lo, hi;
	char name[32];
};

struct sym {
	uint64_t lo, hi;
	char name[64];
};

struct elfinfo {
	struct sect sects[64];
	int nr_sects;
	struct sym *syms;
	size_t nr_syms;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void read_symtab(struct elfinfo *ei, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	const char *name;
	GElf_Sym s;

	ei->syms = calloc(n + 1, sizeof(*ei->syms));
	for (i = 0; d && ei->syms && i < n; i++) {
		if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    !s.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		ei->syms[ei->nr_syms].lo = s.st_value;
		ei->syms[ei->nr_syms].hi = s.st_value + (s.st_size ? s.st_size : 1);
		snprintf(ei->syms[ei->nr_syms].name, sizeof(ei->syms[0].name), "%s",
			 name ? name : "?");
		ei->nr_syms++;
	}
	if (ei->syms)
		qsort(ei->syms, ei->nr_syms, sizeof(*ei->syms), cmp_sym);
}

static int elfinfo__read(struct elfinfo *ei, const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;
	Elf *elf;

	memset(ei, 0, sizeof(*ei));
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		close(fd);
		return -1;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if ((sh.sh_flags & SHF_EXECINSTR) && ei->nr_sects < 64) {
			struct sect *s = &ei->sects[ei->nr_sects++];

			s->lo = sh.sh_addr;
			s->hi = sh.sh_addr + sh.sh_size;
			snprintf(s->name, sizeof(s->name), "%s", name ? name : "?");
		}
		if (sh.sh_type == SHT_SYMTAB && !ei->syms)
			read_symtab(ei, elf, scn, &sh);
	}
	elf_end(elf);
	close(fd);
	return 0;
}

static const char *sect_of(const struct elfinfo *ei, uint64_t pc)
{
	int i;

	for (i = 0; i < ei->nr_sects; i++)
		if (pc >= ei->sects[i].lo && pc < ei->sects[i].hi)
			return ei->sects[i].name;
	return "?";
}

static const char *sym_of(const struct elfinfo *ei, uint64_t pc)
{
	size_t lo = 0, hi = ei->nr_syms, mid;

	while (hi - lo > 0) {
		mid = lo + (hi - lo) / 2;
		if (ei->syms[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < ei->syms[lo - 1].hi ? ei->syms[lo - 1].name : NULL;
}

#endif /* SFBPF_TESTS_ELFINFO_H */
