// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel symbols from /proc/kallsyms (see ksyms.h). Names live in one string
 * pool; entries refer to it by offset while loading (the pool grows) and get
 * their pointers once it is final.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/ksyms.h"
#include "util/search.h"
#include "util/vec.h"

#define KSYM_PAGE 4096ULL

struct kentry {
	uint64_t addr;
	size_t name_off;
	size_t mod_off; /* SIZE_MAX: vmlinux */
	size_t seq; /* line number */
};

struct ksyms {
	struct ksym *syms;
	size_t count;
	char *pool;
};

struct loader {
	struct kentry *ents;
	size_t count, cap;
	char *pool;
	size_t pool_len, pool_cap;
	size_t last_mod; /* kallsyms lists a module's symbols together */
	size_t nonzero;
};

static int pool_add(struct loader *ld, const char *s, size_t len, size_t *off)
{
	if (VEC_RESERVE(ld->pool, ld->pool_cap, ld->pool_len + len + 1, 1 << 20))
		return -ENOMEM;
	memcpy(ld->pool + ld->pool_len, s, len);
	ld->pool[ld->pool_len + len] = '\0';
	*off = ld->pool_len;
	ld->pool_len += len + 1;
	return 0;
}

static int add_module(struct loader *ld, const char *mod, size_t len, size_t *off)
{
	if (ld->last_mod != SIZE_MAX && strlen(ld->pool + ld->last_mod) == len &&
	    memcmp(ld->pool + ld->last_mod, mod, len) == 0) {
		*off = ld->last_mod;
		return 0;
	}
	if (pool_add(ld, mod, len, off))
		return -ENOMEM;
	ld->last_mod = *off;
	return 0;
}

/* "ADDR TYPE NAME[\t[MODULE]]": keep text symbols only. Bad lines are skipped. */
static int parse_line(struct loader *ld, char *line)
{
	char *end, *name, *mod = NULL, *p;
	struct kentry *e;
	uint64_t addr;
	char type;

	addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return 0;
	type = end[1];
	if (!type || end[2] != ' ')
		return 0;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = end + 3;
	name[strcspn(name, "\n")] = '\0';
	p = strpbrk(name, " \t");
	if (p) {
		*p++ = '\0';
		p += strspn(p, " \t");
		if (*p == '[' && (end = strchr(p, ']'))) {
			*end = '\0';
			mod = p + 1;
		}
	}
	if (!*name)
		return 0;

	if (VEC_RESERVE(ld->ents, ld->cap, ld->count + 1, 65536))
		return -ENOMEM;
	e = &ld->ents[ld->count];
	e->addr = addr;
	e->mod_off = SIZE_MAX;
	e->seq = ld->count;
	if (pool_add(ld, name, strlen(name), &e->name_off))
		return -ENOMEM;
	if (mod && add_module(ld, mod, strlen(mod), &e->mod_off))
		return -ENOMEM;
	ld->count++;
	ld->nonzero += addr != 0;
	return 0;
}

/*
 * By address; at one address the last listed first. perf extends size-0
 * symbols to the next one before dropping duplicates, so of several kallsyms
 * symbols at one address only the last gets a size, and perf keeps it.
 */
static int cmp_kentry(const void *a, const void *b)
{
	const struct kentry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

static uint64_t page_end(uint64_t addr)
{
	return (addr + KSYM_PAGE) & ~(KSYM_PAGE - 1);
}

/* Dedupe, then set each symbol's end the way perf's symbols__fixup_end does. */
static int finish(struct loader *ld, struct ksyms *ks)
{
	size_t i, n = 0;
	struct ksym *fit;
	char *pool;

	/* The pool grew by doubling: the whole run keeps it, so exactly sized. */
	pool = ld->pool_len ? realloc(ld->pool, ld->pool_len) : NULL;
	if (pool)
		ld->pool = pool;
	qsort(ld->ents, ld->count, sizeof(*ld->ents), cmp_kentry);
	ks->syms = calloc(ld->count ? ld->count : 1, sizeof(*ks->syms));
	if (!ks->syms)
		return -ENOMEM;
	for (i = 0; i < ld->count; i++) {
		const struct kentry *e = &ld->ents[i];
		struct ksym *k = &ks->syms[n];

		if (n && k[-1].addr == e->addr)
			continue;
		k->addr = e->addr;
		k->name = ld->pool + e->name_off;
		k->module = e->mod_off == SIZE_MAX ? NULL : ld->pool + e->mod_off;
		n++;
	}
	for (i = 0; i < n; i++) {
		struct ksym *k = &ks->syms[i], *next = i + 1 < n ? k + 1 : NULL;
		bool same =
			next && (k->module == next->module ||
				 (k->module && next->module && !strcmp(k->module, next->module)));

		if (same)
			k->end = next->addr;
		else
			k->end = page_end(k->addr);
		if (next && k->end > next->addr)
			k->end = next->addr;
	}
	fit = n ? realloc(ks->syms, n * sizeof(*ks->syms)) : NULL;
	if (fit)
		ks->syms = fit;
	ks->count = n;
	ks->pool = ld->pool;
	ld->pool = NULL;
	return 0;
}

struct ksyms *ksyms__new_from_file(const char *path)
{
	struct loader ld = { .last_mod = SIZE_MAX };
	struct ksyms *ks = NULL;
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (!err && getline(&line, &cap, f) > 0)
		err = parse_line(&ld, line);
	if (!err && ferror(f))
		err = -EIO;
	if (!err && ld.count && !ld.nonzero)
		err = -EPERM; /* addresses hidden */
	if (err)
		goto cleanup;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = finish(&ld, ks);
cleanup:
	free(line);
	fclose(f);
	free(ld.ents);
	free(ld.pool);
	if (err) {
		ksyms__free(ks);
		errno = -err;
		return NULL;
	}
	return ks;
}

struct ksyms *ksyms__new(void)
{
	return ksyms__new_from_file("/proc/kallsyms");
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->pool);
	free(ks);
}

const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr)
{
	size_t lo;

	if (!ks)
		return NULL;
	lo = SEARCH_UPTO(ks->syms, ks->count, addr, addr);
	if (lo == 0 || addr >= ks->syms[lo - 1].end)
		return NULL;
	return &ks->syms[lo - 1];
}

const struct ksym *ksyms__get_by_name(const struct ksyms *ks, const char *name)
{
	size_t i;

	for (i = 0; ks && i < ks->count; i++) {
		if (strcmp(ks->syms[i].name, name) == 0)
			return &ks->syms[i];
	}
	return NULL;
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks ? ks->count : 0;
}

/* /sys/kernel/notes is the kernel's raw ELF note section. */
int ksyms__kernel_build_id(char hex[ELFOBJ_BUILD_ID_HEX])
{
	uint8_t buf[4096], id[ELFOBJ_BUILD_ID_MAX];
	ssize_t len;
	size_t n;
	int fd;

	hex[0] = '\0';
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len < 0)
		return -EIO;
	n = elfobj__notes_build_id(buf, (size_t)len, id, sizeof(id));
	if (!n)
		return -ENOENT;
	elfobj__hex(id, n, hex);
	return 0;
}
