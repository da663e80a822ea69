// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The names of a process gone before its /proc/PID/maps could be read: one
 * living a few milliseconds (a build's cat, rm, as, a shell's commands), its
 * frames unwound in the kernel with the mappings it found for it
 * (bpf/vmafind.h), which outlive the process in the vma_cache map. The
 * session reads them for the image the exec event named (the process's
 * start and the image's exec id: a table made for another image, an earlier
 * or later exec of the same PID, is not taken), each file as the kernel
 * identified it; an object the cache already
 * holds for exactly that identity names it (symcache__known: nothing is
 * opened, the file may be gone with its mount). A file seen for the first
 * time by this process alone stays unnamed ([unknown]), as before.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "bpf/abi.h"
#include "procs/procmaps.h"
#include "symbols/symbolize_int.h"
#include "symbols/symcache.h"

/* Candidates asked for: every kept mapping (bpf/abi.h), two files sharing a table each. */
#define KMAPS_MAX (2 * SFBPF_VMA_MAX_MAPS)

void symbolizer__set_kernel_maps(struct symbolizer *s, symbolizer_kmaps_fn fn, void *ctx)
{
	s->kmaps = fn;
	s->kmaps_ctx = ctx;
}

static int cmp_start(const void *a, const void *b)
{
	const struct pmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Whether [start, end) meets one of maps. */
static bool overlaps(const struct pmap *maps, size_t n, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (start < maps[i].end && maps[i].start < end)
			return true;
	return false;
}

bool proc__from_kernel(struct symbolizer *s, struct proc *p)
{
	struct symbolizer_kmap km[KMAPS_MAX];
	struct symobj *obj;
	struct pmap *maps;
	const char *path;
	struct gen *g;
	size_t n, i, k = 0;

	if (!s->kmaps || !p->ngens || !p->gens[p->ngens - 1].image.exec_id)
		return false;
	g = &p->gens[p->ngens - 1];
	n = s->kmaps(s->kmaps_ctx, p->pid, &g->image, km, KMAPS_MAX);
	if (n > KMAPS_MAX)
		n = KMAPS_MAX;
	maps = calloc(n + 1, sizeof(*maps));
	if (!maps)
		return false;
	for (i = 0; i < n; i++) {
		/*
		 * What a read saw stays (one at ld.so's start has the program and
		 * ld.so, the kernel's the libraries too); of two files sharing a
		 * table, the first known.
		 */
		if (km[i].start >= km[i].end ||
		    overlaps(g->maps, g->count, km[i].start, km[i].end) ||
		    overlaps(maps, k, km[i].start, km[i].end))
			continue;
		obj = symcache__known(s->cache, km[i].st);
		if (!obj)
			continue;
		path = km[i].path ? intern(s, km[i].path) : NULL;
		maps[k++] = (struct pmap){
			.start = km[i].start,
			.end = km[i].end,
			.offset = km[i].offset,
			.dev = (uint64_t)major(km[i].st[0]) << 32 | minor(km[i].st[0]),
			.ino = km[i].st[1],
			.obj = obj,
			.path = path,
			.module = path ? procmap__basename(path) : "[unknown]",
			.perms = PROCMAP_READ | PROCMAP_EXEC,
		};
	}
	if (!k) {
		free(maps);
		return false;
	}
	qsort(maps, k, sizeof(*maps), cmp_start);
	if (gen__merge(s, g, maps, k)) /* maps freed, references dropped */
		return false;
	s->kmaps_named++;
	return true;
}
