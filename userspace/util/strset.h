/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A set of strings, each kept once: strset__intern() gives the set's copy of
 * a string, the same pointer for equal strings, so that interned strings
 * compare by pointer. Copies stay put until strset__free(). A zeroed struct
 * strset is an empty set. Not thread-safe.
 */
#ifndef SFBPF_UTIL_STRSET_H
#define SFBPF_UTIL_STRSET_H

#include "util/arena.h"
#include "util/hashmap.h"

struct strset {
	struct arena arena; /* the copies */
	struct hashmap map; /* by hash, to the copies */
};

/* The set's copy of s, added if new; NULL for NULL, or without memory. */
const char *strset__intern(struct strset *set, const char *s);
void strset__free(struct strset *set);

#endif /* SFBPF_UTIL_STRSET_H */
