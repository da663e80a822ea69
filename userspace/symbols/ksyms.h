/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel symbols from /proc/kallsyms: text symbols (t/T/w/W) of vmlinux,
 * modules and BPF programs, sorted for binary search.
 *
 * Like perf, a symbol extends to the next one; the last symbol of vmlinux or
 * of a module extends to the end of the following page only, so addresses in
 * the gaps between modules resolve to nothing. Of several symbols at one
 * address, the last listed is kept, as perf does (it sizes only that one).
 *
 * Constructors return NULL and set errno (EPERM when kallsyms hides
 * addresses, i.e. not root or kptr_restrict=2).
 */
#ifndef SFBPF_KSYMS_H
#define SFBPF_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "tables/elfobj.h"

struct ksym {
	uint64_t addr;
	uint64_t end; /* exclusive */
	const char *name;
	const char *module; /* "ext4", "bpf", ...; NULL for vmlinux */
};

struct ksyms;

struct ksyms *ksyms__new(void);
/* From a file in kallsyms format (tests, saved captures). */
struct ksyms *ksyms__new_from_file(const char *path);
void ksyms__free(struct ksyms *ks);

/*
 * The running kernel's GNU build-id (/sys/kernel/notes, its raw note
 * section) as hex, "" when unknown; 0 or a negative errno.
 */
int ksyms__kernel_build_id(char hex[ELFOBJ_BUILD_ID_HEX]);

/* The symbol covering addr, or NULL. */
const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr);
/* First symbol named name (linear: for tests and setup, not hot paths). */
const struct ksym *ksyms__get_by_name(const struct ksyms *ks, const char *name);
size_t ksyms__count(const struct ksyms *ks);

#endif /* SFBPF_KSYMS_H */
