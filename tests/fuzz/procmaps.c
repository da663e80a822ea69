// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the /proc/PID/maps parser on arbitrary text. Paths in
 * maps are chosen by whoever names a file, so any bytes can follow the
 * inode column. An accepted snapshot must be sorted, every mapping non-empty,
 * and procmaps__find() must return the mapping holding an address (the last
 * one starting at or before it, when mappings overlap as test text may).
 */
#include <string.h>

#include "fuzz.h"
#include "procs/procmaps.h"

static void check_find(const struct procmaps *pm, uint64_t addr)
{
	const struct procmap *m = procmaps__find(pm, addr);

	if (m)
		FUZZ_CHECK(m->start <= addr && addr < m->end, "find(%#llx) = [%#llx,%#llx)",
			   (unsigned long long)addr, (unsigned long long)m->start,
			   (unsigned long long)m->end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps *pm = NULL;
	size_t i, n;

	if (procmaps__parse((const char *)data, size, &pm))
		return 0;
	n = procmaps__count(pm);
	FUZZ_CHECK(procmaps__get(pm, n) == NULL, "get(count) is not NULL");
	for (i = 0; i < n; i++) {
		const struct procmap *m = procmaps__get(pm, i);
		const char *base;

		FUZZ_CHECK(m->start < m->end, "mapping %zu is empty", i);
		FUZZ_CHECK(!i || procmaps__get(pm, i - 1)->start <= m->start, "not sorted at %zu", i);
		FUZZ_CHECK(m->path && strlen(m->path) <= size, "mapping %zu: path", i);
		FUZZ_CHECK(!(m->flags & PROCMAP_F_VDSO) || (m->flags & PROCMAP_F_ANON),
			   "vdso not anonymous");
		base = procmap__basename(m->path);
		FUZZ_CHECK(base && strlen(base) <= strlen(m->path), "basename of %zu", i);
		check_find(pm, m->start);
		check_find(pm, m->end - 1);
		check_find(pm, m->end);
		check_find(pm, m->start - 1);
	}
	procmaps__free(pm);
	return 0;
}
