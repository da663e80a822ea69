// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * String table (see strtab.h). The hash map indexes the table itself, over
 * the cleaned strings: a name is cleaned before it is looked up only when it
 * needs cleaning, which almost none do.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output/strtab.h"
#include "util/hash.h"
#include "util/utf8.h"
#include "util/vec.h"

/* A byte the table never stores: the first of no UTF-8 sequence, or a control character. */
static bool bad_at(const unsigned char *p, size_t *len)
{
	size_t n = utf8__seq_len(p);

	*len = n ? n : 1;
	return !n || (n == 1 && (*p < 0x20 || *p == 0x7f));
}

/* Whether s is stored as it is. */
static bool is_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;

	for (; *p; p += len) {
		if (bad_at(p, &len))
			return false;
	}
	return true;
}

char *strtab_clean_dup(const char *s)
{
	char *d = strdup(s);
	unsigned char *p = (unsigned char *)d;
	size_t len;

	for (; p && *p; p += len) {
		if (bad_at(p, &len))
			*p = *p < 0x80 ? '_' : '?'; /* a control character, else broken UTF-8 */
	}
	return d;
}

static bool str_eq(const void *ctx, uint64_t idx, const void *key)
{
	const struct strtab *t = ctx;

	return !strcmp(t->strs[idx], key);
}

int strtab__init(struct strtab *t)
{
	if (VEC_RESERVE(t->strs, t->cap, 1, 256))
		return -ENOMEM;
	t->strs[0] = strdup("");
	if (!t->strs[0])
		return -ENOMEM;
	t->n = 1; /* not in the map: strtab__id() answers 0 for "" itself */
	return 0;
}

int64_t strtab__id(struct strtab *t, const char *s)
{
	char *copy = NULL;
	uint32_t h;
	int64_t id;

	if (!s || !*s)
		return 0;
	if (!is_clean(s)) {
		copy = strtab_clean_dup(s);
		if (!copy)
			return -ENOMEM;
		s = copy;
	}
	h = (uint32_t)hash__str(s);
	id = hashmap__find(&t->ix, h, str_eq, t, s);
	if (id >= 0) {
		free(copy);
		return id;
	}
	if (!copy)
		copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	if (t->n >= INT32_MAX || VEC_RESERVE(t->strs, t->cap, t->n + 1, 256) ||
	    hashmap__add(&t->ix, h, t->n)) {
		free(copy);
		return t->n >= INT32_MAX ? -E2BIG : -ENOMEM;
	}
	t->strs[t->n] = copy;
	return (int64_t)t->n++;
}

void strtab__free(struct strtab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	hashmap__free(&t->ix);
	memset(t, 0, sizeof(*t));
}
