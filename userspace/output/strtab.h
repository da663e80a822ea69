/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * String table of the protobuf profile formats (pprof's Profile.string_table,
 * OTLP's ProfilesDictionary.string_table): every distinct string once, in
 * the order first asked for, referred to by index, entry 0 being "" as both
 * schemas require.
 *
 * Protobuf strings must be UTF-8, and names are bytes: a stored string is
 * its argument with every byte that does not start a well-formed UTF-8
 * sequence replaced by '?', and control characters by '_' (as the folded
 * output writes them; profile readers print names in line-oriented
 * reports). Strings equal once cleaned share one entry.
 *
 * Lifecycle: strtab__init() on a zeroed struct, strtab__id() as often as
 * needed, strtab__free() (also after a failed init). t->strs[0 .. t->n) is
 * the table, ready to be written as it is (e.g. pprof's string_table).
 * Errors: negative errno (-ENOMEM; -E2BIG past INT32_MAX entries, the
 * largest index the formats have). Not thread-safe.
 */
#ifndef SFBPF_STRTAB_H
#define SFBPF_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

struct strtab {
	char **strs; /* strs[0] is "" */
	size_t n, cap;
	struct hashmap ix;
};

/* Entry 0, "". 0 or -ENOMEM. */
int strtab__init(struct strtab *t);
/* Index of s (cleaned), added if new; 0 for NULL and "". Negative errno. */
int64_t strtab__id(struct strtab *t, const char *s);
void strtab__free(struct strtab *t);

/* A malloc'ed copy of s cleaned as the table stores strings, or NULL (no memory). */
char *strtab_clean_dup(const char *s);

#endif /* SFBPF_STRTAB_H */
