// SPDX-License-Identifier: GPL-2.0-or-later
/* A set of strings, each kept once (see strset.h). */
#include <string.h>

#include "util/hash.h"
#include "util/strset.h"

static bool str_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return strcmp(HASHMAP_TO_PTR(val), key) == 0;
}

const char *strset__intern(struct strset *set, const char *s)
{
	uint32_t h;
	int64_t v;
	size_t n;
	char *p;

	if (!s)
		return NULL;
	h = (uint32_t)hash__str(s);
	v = hashmap__find(&set->map, h, str_eq, NULL, s);
	if (v >= 0)
		return HASHMAP_TO_PTR(v);
	n = strlen(s) + 1;
	p = arena__alloc(&set->arena, n);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	if (hashmap__add(&set->map, h, HASHMAP_PTR(p)))
		return NULL;
	return p;
}

void strset__free(struct strset *set)
{
	arena__free(&set->arena);
	hashmap__free(&set->map);
}
