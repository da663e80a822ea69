// SPDX-License-Identifier: GPL-2.0-or-later
/* What a runtime's object file tells, kept by the file's identity (objfacts.h). */
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "interp/objfacts.h"
#include "interp/objsyms.h"
#include "util/fileident.h"

#define CACHE_SIZE 16

static struct {
	pthread_mutex_t lock;
	struct objfacts e[CACHE_SIZE];
	size_t n;
	uint64_t clock;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The first string of elf's read-only data kind's note test accepts, into buf ("" if none). */
static void find_note(Elf *elf, const struct objfacts_kind *kind, char *buf, size_t size)
{
	size_t plen = strlen(kind->note_prefix);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	buf[0] = '\0';
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		const char *s, *end;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & (SHF_EXECINSTR | SHF_WRITE)))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		s = d->d_buf;
		end = s + d->d_size;
		while ((s = memmem(s, (size_t)(end - s), kind->note_prefix, plen))) {
			/* At a string's start only: the same bytes inside another string are not
			 * it. */
			if ((s == d->d_buf || s[-1] == '\0') &&
			    kind->note_is(s, (size_t)(end - s))) {
				snprintf(buf, size, "%s", s);
				return;
			}
			s += plen;
		}
	}
}

int objfacts__get(struct objfacts_kind *kind, int fd, struct objfacts *out)
{
	struct objfacts *slot;
	struct stat st;
	uint64_t scope;
	Elf *elf;
	size_t i;

	if (kind->nr > OBJFACTS_SYMS)
		return -EINVAL;
	if (fstat(fd, &st))
		return -errno;
	/* An author's identity holds within its mount, or nowhere (util/fileident.h). */
	scope = fileident__scope(fd, &st);
	pthread_mutex_lock(&cache.lock);
	for (i = 0; scope && i < cache.n; i++)
		if (cache.e[i].kind == kind && cache.e[i].scope == scope &&
		    same_file(&cache.e[i].id, &st)) {
			cache.e[i].used = ++cache.clock;
			kind->hits++;
			*out = cache.e[i];
			pthread_mutex_unlock(&cache.lock);
			return 0;
		}
	pthread_mutex_unlock(&cache.lock);

	memset(out, 0, sizeof(*out));
	out->id = st;
	out->scope = scope;
	out->kind = kind;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL; /* not kept: a file we could not read now may read later */
	out->err = elfobj__read(fd, &out->info);
	if (!out->err)
		objsyms__find(elf, kind->names, kind->nr, out->vals, out->sizes, false);
	/* The eval loop's code: its symbol's, and the parts split from it (codeparts.h). */
	if (!out->err && kind->eval >= 0 && out->vals[kind->key] && out->vals[kind->eval])
		out->nr_eval = codeparts__find(elf, fd, out->vals[kind->eval],
					       out->sizes[kind->eval], out->eval, OBJFACTS_PARTS);
	if (!out->err && kind->note_prefix && out->vals[kind->key])
		find_note(elf, kind, out->note, sizeof(out->note));
	if (!out->err && kind->code && out->vals[kind->key])
		kind->code(elf, fd, out);
	elf_end(elf);

	pthread_mutex_lock(&cache.lock);
	kind->reads++;
	if (!scope) {
		pthread_mutex_unlock(&cache.lock);
		return 0;
	}
	if (cache.n < CACHE_SIZE) {
		slot = &cache.e[cache.n++];
	} else {
		slot = &cache.e[0];
		for (i = 1; i < cache.n; i++)
			if (cache.e[i].used < slot->used)
				slot = &cache.e[i];
	}
	*slot = *out;
	slot->used = ++cache.clock;
	pthread_mutex_unlock(&cache.lock);
	return 0;
}

void objfacts__stats(const struct objfacts_kind *kind, uint64_t *reads, uint64_t *hits)
{
	pthread_mutex_lock(&cache.lock);
	*reads = kind->reads;
	*hits = kind->hits;
	pthread_mutex_unlock(&cache.lock);
}
