// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Symbol names left in the file (symbols/symtab.h), for tests/symnames.test.
 *
 *   symnames same FILE [DEBUGFILE]
 *     Builds FILE's table twice, names copied and names left in the file
 *     (read when first looked up), and looks up every function symbol's
 *     address, the next byte and its last byte in both, twice in the second
 *     (read, then remembered): the names and offsets must be the same.
 *     Prints "same ADDRESSES NAMED DIFFER KEPT" (KEPT: descriptors the
 *     second table holds, 1: its names are in the file).
 *   symnames truncate FILE
 *     FILE's table with names in the file, then FILE truncated to 4 KiB:
 *     names read before stay, names not read yet cannot be (no crash, never
 *     another symbol's name). Prints "truncate READ_BEFORE KEPT NAMED NONE
 *     WRONG" (after the truncation, every address).
 *   symnames at FILE DEBUGFILE|- ADDR...
 *     Prints "NAME+OFFSET" (hex) or "(none)" for each ADDR (hex), a line each.
 *   symnames fds FILE N
 *     N tables of FILE with names in the file at once, twice: at most 64
 *     keep a descriptor, the others copy; all answer the same; freed, they
 *     give them back. Prints "fds N OPENED1 OPENED2 DIFFER" (descriptors
 *     the tables kept, each time).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symtab.h"

struct table {
	struct symtab *t;
	int fd, dfd;
	Elf *elf, *debug;
	int kept; /* descriptors the table kept (names left in the file: 1) */
};

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* FILE's (and DEBUGFILE's) table; in_file: every name left in the file. */
static int open_table(struct table *tb, const char *path, const char *dpath, bool in_file)
{
	int base = open_fds();

	memset(tb, 0, sizeof(*tb));
	tb->dfd = -1;
	tb->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (tb->fd < 0 || !(tb->elf = elf_begin(tb->fd, ELF_C_READ, NULL))) {
		fprintf(stderr, "%s: cannot read\n", path);
		return -1;
	}
	if (dpath) {
		tb->dfd = open(dpath, O_RDONLY | O_CLOEXEC);
		if (tb->dfd < 0 || !(tb->debug = elf_begin(tb->dfd, ELF_C_READ, NULL))) {
			fprintf(stderr, "%s: cannot read\n", dpath);
			return -1;
		}
	}
	tb->t = symtab__new();
	if (!tb->t)
		return -1;
	if (in_file)
		symtab__set_file_names_min(tb->t, 0);
	if (symtab__add_elf(tb->t, tb->elf, in_file ? tb->fd : -1, tb->debug,
			    in_file ? tb->dfd : -1))
		return -1;
	symtab__finish(tb->t, false);
	/* The table keeps its own descriptor: ours and libelf's go now. */
	elf_end(tb->elf);
	elf_end(tb->debug);
	close(tb->fd);
	if (tb->dfd >= 0)
		close(tb->dfd);
	tb->kept = open_fds() - base;
	tb->elf = tb->debug = NULL;
	return 0;
}

/* Every STT_FUNC address of path's symbol tables, three addresses each. */
static uint64_t *probe_addrs(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	uint64_t *v = NULL, *grown;
	size_t cap = 0, i, count;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Sym sym;

	*n = 0;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		count = data->d_size / sh.sh_entsize;
		for (i = 0; i < count && gelf_getsym(data, (int)i, &sym); i++) {
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			if (*n + 3 > cap) {
				cap = cap ? cap * 2 : 4096;
				grown = realloc(v, cap * sizeof(*v));
				if (!grown)
					exit(1);
				v = grown;
			}
			v[(*n)++] = sym.st_value;
			v[(*n)++] = sym.st_value + 1;
			v[(*n)++] = sym.st_value + (sym.st_size ? sym.st_size - 1 : 0);
		}
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return v;
}

static bool same_answer(const char *a, uint64_t ao, const char *b, uint64_t bo)
{
	if (!a || !b)
		return !a && !b;
	return !strcmp(a, b) && ao == bo;
}

static int same(const char *path, const char *dpath)
{
	struct table copy, file;
	size_t n, i, named = 0, differ = 0, pass;
	uint64_t *addrs = probe_addrs(dpath ? dpath : path, &n), ao, bo;
	const char *a, *b;

	if (!n || open_table(&copy, path, dpath, false) || open_table(&file, path, dpath, true))
		return 1;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			ao = bo = 0;
			a = symtab__find(copy.t, addrs[i], &ao);
			b = symtab__find(file.t, addrs[i], &bo);
			named += !pass && a;
			if (!same_answer(a, ao, b, bo)) {
				if (differ++ < 5)
					fprintf(stderr,
						"%#" PRIx64 ": copied %s+%#" PRIx64
						", from the file %s+%#" PRIx64 "\n",
						addrs[i], a ? a : "(none)", ao, b ? b : "(none)",
						bo);
			}
		}
	}
	printf("same %zu %zu %zu %d\n", n, named, differ, file.kept);
	symtab__free(copy.t);
	symtab__free(file.t);
	free(addrs);
	return 0;
}

static int truncated(const char *path)
{
	size_t n, i, before = 0, kept = 0, named = 0, none = 0, wrong = 0;
	uint64_t *addrs = probe_addrs(path, &n), ao, bo;
	struct table copy, file;
	const char *a, *b;
	char **first;

	if (!n || open_table(&copy, path, NULL, false) || open_table(&file, path, NULL, true))
		return 1;
	first = calloc(n, sizeof(*first));
	if (!first)
		return 1;
	/* A sixth of the symbols read before the file shrinks. */
	for (i = 0; i < n; i += 6) {
		b = symtab__find(file.t, addrs[i], &bo);
		if (b) {
			first[i] = strdup(b);
			before++;
		}
	}
	if (truncate(path, 4096)) {
		perror(path);
		return 1;
	}
	for (i = 0; i < n; i++) {
		a = symtab__find(copy.t, addrs[i], &ao);
		b = symtab__find(file.t, addrs[i], &bo);
		if (first[i])
			kept += b && !strcmp(b, first[i]);
		if (b)
			named++;
		else
			none++;
		/* Another symbol's name, or bytes that were never a name here. */
		if (b && (!a || strcmp(a, b)) && wrong++ < 5)
			fprintf(stderr, "%#" PRIx64 ": %s, not %s\n", addrs[i], b,
				a ? a : "(none)");
		free(first[i]);
	}
	printf("truncate %zu %zu %zu %zu %zu\n", before, kept, named, none, wrong);
	free(first);
	symtab__free(copy.t);
	symtab__free(file.t);
	free(addrs);
	return 0;
}

/*
 * count tables at once, twice: descriptors kept the first time, given back
 * when the tables go, and kept again the second time.
 */
static int fds(const char *path, int count)
{
	struct table *tabs = calloc(count, sizeof(*tabs)), copy;
	int opened[2] = { 0, 0 }, round, k;
	size_t n, i, differ = 0;
	uint64_t *addrs = probe_addrs(path, &n), ao, bo;
	const char *a, *b;

	if (!tabs || !n || open_table(&copy, path, NULL, false))
		return 1;
	for (round = 0; round < 2; round++) {
		for (k = 0; k < count; k++) {
			if (open_table(&tabs[k], path, NULL, true))
				return 1;
			opened[round] += tabs[k].kept;
		}
		for (k = 0; k < count; k++) {
			for (i = 0; i < n; i += 7) {
				a = symtab__find(copy.t, addrs[i], &ao);
				b = symtab__find(tabs[k].t, addrs[i], &bo);
				differ += !same_answer(a, ao, b, bo);
			}
			symtab__free(tabs[k].t);
		}
	}
	printf("fds %d %d %d %zu\n", count, opened[0], opened[1], differ);
	symtab__free(copy.t);
	free(tabs);
	free(addrs);
	return 0;
}

static int at(const char *path, const char *dpath, char **addrs, int n)
{
	struct table tb;
	uint64_t off;
	const char *name;
	int i;

	if (open_table(&tb, path, strcmp(dpath, "-") ? dpath : NULL, false))
		return 1;
	for (i = 0; i < n; i++) {
		off = 0;
		name = symtab__find(tb.t, strtoull(addrs[i], NULL, 16), &off);
		if (name)
			printf("%s+%#" PRIx64 "\n", name, off);
		else
			printf("(none)\n");
	}
	symtab__free(tb.t);
	return 0;
}

int main(int argc, char **argv)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "same"))
		return same(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc >= 5 && !strcmp(argv[1], "at"))
		return at(argv[2], argv[3], argv + 4, argc - 4);
	if (argc == 3 && !strcmp(argv[1], "truncate"))
		return truncated(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "fds"))
		return fds(argv[2], atoi(argv[3]));
	fprintf(stderr,
		"usage: symnames same FILE [DEBUGFILE] | at FILE DEBUGFILE|- ADDR... | truncate "
		"FILE | fds FILE N\n");
	return 2;
}
