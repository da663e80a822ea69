// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Function symbol table (see symtab.h): one array of fixed-size entries plus
 * one string pool, so a table of 500k symbols is two allocations.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "symtab.h"

#define NESTED_LOOKBACK 8 /* symbols searched back for one enclosing addr */

struct sym {
	uint64_t addr;
	uint64_t end; /* addr + size while building; exclusive end once finished */
	uint32_t name; /* offset in strs */
	uint32_t seq; /* insertion order, the last tie-break */
	uint8_t rank; /* binding as perf prefers it: 2 global, 1 local, 0 weak */
};

struct symtab {
	struct sym *syms;
	size_t count, cap;
	char *strs;
	size_t strs_len, strs_cap;
};

struct symtab *symtab__new(void)
{
	return calloc(1, sizeof(struct symtab));
}

void symtab__free(struct symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->strs);
	free(t);
}

int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name,
		enum symtab_bind bind)
{
	size_t len = strlen(name);
	struct sym *sym;

	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct sym *n = realloc(t->syms, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->syms = n;
		t->cap = cap;
	}
	if (t->strs_len + len + 1 > t->strs_cap) {
		size_t cap = t->strs_cap ? t->strs_cap * 2 : 4096;
		char *n;

		while (cap < t->strs_len + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -E2BIG;
		n = realloc(t->strs, cap);
		if (!n)
			return -ENOMEM;
		t->strs = n;
		t->strs_cap = cap;
	}
	memcpy(t->strs + t->strs_len, name, len + 1);
	sym = &t->syms[t->count];
	sym->addr = addr;
	sym->end = addr + size < addr ? UINT64_MAX : addr + size;
	sym->name = t->strs_len;
	sym->seq = t->count;
	sym->rank = bind;
	t->strs_len += len + 1;
	t->count++;
	return 0;
}

struct sym_order {
	const char *strs;
	bool latest_wins;
};

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* By address; at one address, perf's choose_best_symbol() order first. */
static int cmp_sym(const void *a, const void *b, void *ctx)
{
	const struct sym *x = a, *y = b;
	const struct sym_order *o = ctx;
	const char *xn = o->strs + x->name, *yn = o->strs + y->name;
	bool xs = x->end > x->addr, ys = y->end > y->addr;
	size_t xl, yl;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (o->latest_wins && x->seq != y->seq) /* a JIT re-emitted code here */
		return x->seq > y->seq ? -1 : 1;
	if (xs != ys)
		return xs ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (underscores(xn) != underscores(yn))
		return underscores(xn) < underscores(yn) ? -1 : 1;
	xl = strlen(xn);
	yl = strlen(yn);
	if (xl != yl)
		return xl > yl ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sort, keep the best symbol per address, extend size-0 symbols to the next. */
void symtab__finish(struct symtab *t, bool latest_wins)
{
	struct sym_order o = { t->strs, latest_wins };
	size_t i, n = 0;

	if (!t->count)
		return;
	qsort_r(t->syms, t->count, sizeof(*t->syms), cmp_sym, &o);
	for (i = 0; i < t->count; i++) {
		if (n && t->syms[n - 1].addr == t->syms[i].addr)
			continue;
		t->syms[n++] = t->syms[i];
	}
	t->count = n;
	for (i = 0; i < n; i++) {
		struct sym *sym = &t->syms[i];

		if (sym->end != sym->addr)
			continue;
		sym->end = i + 1 < n ? sym[1].addr : ((sym->addr + 4095) & ~4095ULL) + 4096;
	}
}

const char *symtab__find(const struct symtab *t, uint64_t addr, uint64_t *offset)
{
	const struct sym *sym;
	size_t lo = 0, hi, i;

	if (!t)
		return NULL;
	hi = t->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The nearest preceding symbol, or one enclosing it (nested symbols). */
	for (i = lo; i > 0 && lo - i < NESTED_LOOKBACK; i--) {
		sym = &t->syms[i - 1];
		if (addr < sym->end) {
			*offset = addr - sym->addr;
			return t->strs + sym->name;
		}
	}
	return NULL;
}

size_t symtab__count(const struct symtab *t)
{
	return t ? t->count : 0;
}

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

/* Add the function symbols of one SHT_SYMTAB/SHT_DYNSYM section. */
static int load_symtab_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct symtab *t)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t shnum, i, nsyms;
	int8_t *text;
	int err = 0;

	if (!data || !sh->sh_entsize || elf_getshdrnum(elf, &shnum))
		return 0;
	text = malloc(shnum ? shnum : 1);
	if (!text)
		return -ENOMEM;
	memset(text, -1, shnum);
	nsyms = data->d_size / sh->sh_entsize;
	for (i = 1; i < nsyms && !err; i++) {
		unsigned type;
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !section_is_text(elf, sym.st_shndx, text, shnum))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		err = symtab__add(t, sym.st_value, sym.st_size, name,
				  bind_rank(GELF_ST_BIND(sym.st_info)));
	}
	free(text);
	return err;
}

/* .symtab if it has functions, else .dynsym (stripped objects). */
int symtab__add_elf(struct symtab *t, Elf *elf)
{
	static const unsigned types[] = { SHT_SYMTAB, SHT_DYNSYM };
	size_t before = t->count;
	unsigned i;
	int err;

	for (i = 0; i < 2 && t->count == before; i++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(elf, scn))) {
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[i])
				continue;
			err = load_symtab_section(elf, scn, &sh, t);
			if (err)
				return err;
		}
	}
	return 0;
}

