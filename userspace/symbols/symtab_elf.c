// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An ELF object's function symbols into a symbol table (see symtab.h,
 * symtab__add_elf): its .symtab or .dynsym with their bindings and symbol
 * versions, and the x86-64 PLT entries named from their relocations. The
 * table itself, its choice between names and its lookups are in symtab.c.
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/symtab.h"
#include "symbols/symtab_int.h"
#include "util/vec.h"

#define VERSYM_HIDDEN 0x8000 /* .gnu.version: not the default version (binutils elf/common.h) */

static bool section_is_text(Elf *elf, size_t shndx, int8_t *cache, size_t shnum)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (shndx >= shnum)
		return false;
	if (cache[shndx] < 0) {
		scn = elf_getscn(elf, shndx);
		cache[shndx] = scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
	}
	return cache[shndx];
}

static enum symtab_bind bind_rank(unsigned bind)
{
	if (bind == STB_WEAK)
		return SYMTAB_BIND_WEAK;
	return bind == STB_LOCAL ? SYMTAB_BIND_LOCAL : SYMTAB_BIND_GLOBAL;
}

/*
 * The .gnu.version entries of a .dynsym (NULL if none): they mark the
 * non-default versions, which .dynsym names do not carry.
 */
static Elf_Data *dynsym_versions(Elf *elf, Elf_Scn *dynsym)
{
	size_t idx = elf_ndxscn(dynsym);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym && sh.sh_link == idx)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/*
 * Is symbol i a non-default version? In .symtab the version is part of the
 * name ("cfree@GLIBC_2.2.5"; the default has "@@"); in .dynsym it is the
 * hidden bit of its .gnu.version entry.
 */
static bool sym_is_compat(const char *name, Elf_Data *versions, size_t i)
{
	const char *at = strchr(name, '@');
	GElf_Versym v;

	if (at)
		return at[1] != '@';
	return versions && gelf_getversym(versions, (int)i, &v) && (v & VERSYM_HIDDEN);
}

/*
 * Where the string table section strndx of fd's ELF lies, if its names can
 * be read from fd later (uncompressed, offsets within NAME_OFFSET).
 */
static bool names_in(Elf *elf, int fd, size_t strndx, uint64_t *off, uint64_t *len)
{
	Elf_Scn *scn = elf_getscn(elf, strndx);
	GElf_Shdr sh;

	if (fd < 0 || !scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED) || sh.sh_size > NAME_OFFSET)
		return false;
	*off = sh.sh_offset;
	*len = sh.sh_size;
	return true;
}

/*
 * The entry point's code (e_entry) often has no function symbol, only a
 * label: ld.so's _start (glibc's RTLD_START, in its debug file's .symtab),
 * the first frame of every dynamically linked process, where perf shows
 * "_start" too. Noted while the symbols are read: the label at the entry
 * (index *label), the nearest symbol above it (*end: the label's extent),
 * and whether a function symbol covers the entry anyway (*covered).
 */
static void note_entry(Elf *elf, size_t strndx, const GElf_Sym *sym, uint64_t entry, size_t *label,
		       size_t i, uint64_t *end, bool *covered)
{
	unsigned type = GELF_ST_TYPE(sym->st_info);
	const char *name;

	/* Not a mapping symbol ($x, $d: AArch64's), which marks code, not names it. */
	if (sym->st_value == entry && !sym->st_size && (type == STT_NOTYPE || type == STT_FUNC) &&
	    (name = elf_strptr(elf, strndx, sym->st_name)) && *name && *name != '$')
		*label = i;
	if (sym->st_value > entry && sym->st_value < *end)
		*end = sym->st_value;
	if ((type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_size &&
	    entry - sym->st_value < sym->st_size)
		*covered = true;
}

/* The entry's label (note_entry), up to the next symbol or its section's end. */
static int add_entry_label(Elf *elf, Elf_Data *data, const GElf_Shdr *sh, size_t i, uint64_t end,
			   int8_t *text, size_t shnum, struct symtab *t)
{
	Elf_Scn *scn;
	GElf_Shdr ts;
	GElf_Sym sym;
	const char *name;

	if (!gelf_getsym(data, (int)i, &sym) || !section_is_text(elf, sym.st_shndx, text, shnum) ||
	    !(scn = elf_getscn(elf, sym.st_shndx)) || !gelf_getshdr(scn, &ts))
		return 0;
	if (ts.sh_addr + ts.sh_size < end)
		end = ts.sh_addr + ts.sh_size;
	name = elf_strptr(elf, sh->sh_link, sym.st_name);
	if (!name || !*name || end <= sym.st_value)
		return 0;
	return symtab__add_sym(t, sym.st_value, end - sym.st_value, name, true, NO_FILE_NAME,
			       bind_rank(GELF_ST_BIND(sym.st_info)), false, false);
}

/*
 * Add the function symbols of one SHT_SYMTAB/SHT_DYNSYM section of fd's ELF
 * (fd -1: names are copied). In a debug file .text is SHT_NOBITS but keeps
 * its flags and address, so the text test holds there too.
 */
static int load_symtab_section(Elf *elf, int fd, Elf_Scn *scn, const GElf_Shdr *sh,
			       struct symtab *t)
{
	Elf_Data *data = elf_getdata(scn, NULL), *versions = NULL;
	size_t shnum, i, nsyms, entry_sym = 0;
	uint64_t names_off = 0, names_len = 0, entry = 0, entry_end = UINT64_MAX;
	bool in_file, entry_covered = false;
	int8_t *text;
	int err = 0;
	GElf_Ehdr eh;

	if (!data || !sh->sh_entsize || elf_getshdrnum(elf, &shnum))
		return 0;
	in_file = names_in(elf, fd, sh->sh_link, &names_off, &names_len);
	text = malloc(shnum ? shnum : 1);
	if (!text)
		return -ENOMEM;
	memset(text, -1, shnum);
	if (sh->sh_type == SHT_DYNSYM)
		versions = dynsym_versions(elf, scn);
	nsyms = data->d_size / sh->sh_entsize;
	if (gelf_getehdr(elf, &eh))
		entry = eh.e_entry;
	for (i = 1; i < nsyms && !err; i++) {
		unsigned type;
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (entry && sym.st_shndx != SHN_UNDEF)
			note_entry(elf, sh->sh_link, &sym, entry, &entry_sym, i, &entry_end,
				   &entry_covered);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !section_is_text(elf, sym.st_shndx, text, shnum))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		err = symtab__add_sym(t, sym.st_value, sym.st_size, name, false,
				      in_file && symtab__claim_names(t, fd, names_off, names_len) ?
					      (uint32_t)sym.st_name :
					      NO_FILE_NAME,
				      bind_rank(GELF_ST_BIND(sym.st_info)), demangle__maybe(name),
				      sym_is_compat(name, versions, i));
	}
	/* .symtab only: .dynsym lacks the local functions the label would run over. */
	if (!err && entry_sym && !entry_covered && sh->sh_type == SHT_SYMTAB)
		err = add_entry_label(elf, data, sh, entry_sym, entry_end, text, shnum, t);
	free(text);
	return err;
}

static int load_symbols(struct symtab *t, Elf *elf, int fd, unsigned type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		err = load_symtab_section(elf, fd, scn, &sh, t);
		if (err)
			return err;
	}
	return 0;
}

bool symtab__elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB && sh.sh_entsize &&
		    sh.sh_size / sh.sh_entsize > 1)
			return true;
	}
	return false;
}

/* ---- PLT entries ------------------------------------------------------------- */

#define PLT_MAX_ENTRIES 65536

/* One GOT slot a PLT entry jumps through, and what the dynamic linker puts there. */
struct plt_slot {
	uint64_t got;
	int64_t addend; /* IRELATIVE: the IFUNC resolver's address */
	uint32_t sym; /* index in symtab; 0: none (IRELATIVE) */
	uint32_t symtab; /* section index of that symbol table */
};

struct plt_slots {
	struct plt_slot *v;
	size_t n, cap;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct plt_slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* JUMP_SLOT (.plt), GLOB_DAT (.plt.got) and IRELATIVE relocations of one section. */
static int collect_slots(Elf_Scn *scn, const GElf_Shdr *sh, struct plt_slots *s)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;
	GElf_Rela r;

	if (!data || !sh->sh_entsize)
		return 0;
	n = data->d_size / sh->sh_entsize;
	for (i = 0; i < n && gelf_getrela(data, i, &r); i++) {
		unsigned type = GELF_R_TYPE(r.r_info);

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
		    type != R_X86_64_IRELATIVE)
			continue;
		if (VEC_RESERVE(s->v, s->cap, s->n + 1, 64))
			return -ENOMEM;
		s->v[s->n++] = (struct plt_slot){ r.r_offset, r.r_addend, GELF_R_SYM(r.r_info),
						  sh->sh_link };
	}
	return 0;
}

static const struct plt_slot *find_slot(const struct plt_slots *s, uint64_t got)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].got == got ? &s->v[lo] : NULL;
}

/*
 * GOT slot an x86-64 PLT entry jumps through: [endbr64] [bnd] jmp *disp(%rip).
 * Lazy-binding stubs (push; jmp .plt0) and the .plt header do not match.
 */
static bool plt_entry_got(const uint8_t *p, size_t len, uint64_t addr, uint64_t *got)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t off = 0;
	int32_t disp;

	if (len >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		off = sizeof(endbr64);
	if (off < len && p[off] == 0xf2)
		off++;
	if (off + 6 > len || p[off] != 0xff || p[off + 1] != 0x25)
		return false;
	memcpy(&disp, p + off + 2, sizeof(disp));
	*got = addr + off + 6 + (int64_t)disp;
	return true;
}

/* "name@plt" as objdump labels the entry (perf likewise), demangled as perf does. */
static int add_plt_entry(struct symtab *t, Elf *elf, const struct plt_slot *slot, uint64_t addr,
			 uint64_t size)
{
	Elf_Scn *symscn = elf_getscn(elf, slot->symtab);
	const char *name;
	char buf[512], *d;
	Elf_Data *data;
	GElf_Shdr ssh;
	GElf_Sym sym;

	if (!slot->sym) {
		snprintf(buf, sizeof(buf), "*ABS*+%#" PRIx64 "@plt", (uint64_t)slot->addend);
		return symtab__add_sym(t, addr, size, buf, true, NO_FILE_NAME, SYMTAB_BIND_GLOBAL,
				       false, false);
	}
	if (!symscn || !gelf_getshdr(symscn, &ssh) || !(data = elf_getdata(symscn, NULL)) ||
	    !gelf_getsym(data, slot->sym, &sym))
		return 0;
	name = elf_strptr(elf, ssh.sh_link, sym.st_name);
	if (!name || !*name)
		return 0;
	d = demangle(name);
	snprintf(buf, sizeof(buf), "%s@plt", d ? d : name);
	free(d);
	return symtab__add_sym(t, addr, size, buf, true, NO_FILE_NAME, SYMTAB_BIND_GLOBAL, false,
			       false);
}

static int add_plt_section(struct symtab *t, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			   const struct plt_slots *slots)
{
	uint64_t step = sh->sh_entsize >= 8 && sh->sh_entsize <= 64 ? sh->sh_entsize : 16;
	Elf_Data *data = elf_getdata(scn, NULL);
	const struct plt_slot *slot;
	uint64_t off, got;
	int err;

	if (!data || !data->d_buf || sh->sh_type != SHT_PROGBITS)
		return 0;
	for (off = 0; off + step <= data->d_size && off / step < PLT_MAX_ENTRIES; off += step) {
		if (!plt_entry_got((uint8_t *)data->d_buf + off, step, sh->sh_addr + off, &got))
			continue;
		slot = find_slot(slots, got);
		if (!slot)
			continue;
		err = add_plt_entry(t, elf, slot, sh->sh_addr + off, step);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Synthesize symbols for x86-64 PLT entries (.plt, .plt.sec, .plt.got): each
 * entry's jmp names its GOT slot, and the relocation of that slot names the
 * function. Matching by GOT slot rather than by entry index stays right when
 * .rela.plt is not in PLT order (IRELATIVE entries in libc).
 */
static int add_plt(struct symtab *t, Elf *elf)
{
	struct plt_slots slots = {};
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t shstrndx;
	int err = 0;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && (sh.sh_flags & SHF_ALLOC))
			err = collect_slots(scn, &sh, &slots);
	}
	if (!err && slots.n)
		qsort(slots.v, slots.n, sizeof(*slots.v), cmp_slot);
	scn = NULL;
	while (!err && slots.n && (scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			     !strcmp(name, ".plt.got")))
			err = add_plt_section(t, elf, scn, &sh, &slots);
	}
	free(slots.v);
	return err;
}

/* ---- whole objects -------------------------------------------------------------- */

int symtab__add_elf(struct symtab *t, Elf *elf, int fd, Elf *debug, int debug_fd)
{
	size_t before = symtab__count(t);
	int err = 0;

	if (debug)
		err = load_symbols(t, debug, debug_fd, SHT_SYMTAB);
	if (!err && symtab__count(t) == before)
		err = load_symbols(t, elf, fd, SHT_SYMTAB);
	if (!err && symtab__count(t) == before)
		err = load_symbols(t, elf, fd, SHT_DYNSYM);
	if (!err)
		err = add_plt(t, elf);
	return err;
}
