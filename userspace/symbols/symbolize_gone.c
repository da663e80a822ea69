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
 * holds for exactly that identity names it; else the file the loader
 * named for the table's slot, opened now if it still is exactly that
 * identity (symcache__kernel_file: a file the loader read but no process
 * read alive mapped, as a short-lived program's own binary); and the vDSO
 * is named from this process's own image (the kernel's walk takes no
 * other). A file gone with its mount, or reached by another name (a
 * container's), stays unnamed ([unknown]).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpf/abi.h"
#include "procs/procmaps.h"
#include "symbols/symbolize_int.h"
#include "symbols/symcache.h"

/* A [vdso] line's flags in a read of the maps (procmaps.c). */
#define VDSO_FLAGS (PROCMAP_F_ANON | PROCMAP_F_PSEUDO | PROCMAP_F_VDSO)
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

/*
 * Whether [start, end) meets one of maps, of those executable only if
 * exec_only: a read that saw data there (ld.so's mapping of ld.so.cache,
 * unmapped before a library was mapped in its place) is older than the
 * kernel's code mapping, which a PC was sampled in.
 */
static bool overlaps(const struct pmap *maps, size_t n, uint64_t start, uint64_t end,
		     bool exec_only)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (start < maps[i].end && maps[i].start < end &&
		    (!exec_only || (maps[i].perms & PROCMAP_EXEC)))
			return true;
	return false;
}

/*
 * The vDSO a gone process had: the kernel's one image for native processes
 * (bpf/vmafind.h takes no other), so this process's own, len bytes of it.
 */
static struct symobj *vdso_self(struct symbolizer *s, uint64_t len)
{
	struct procmap self = { .start = getauxval(AT_SYSINFO_EHDR) };

	if (!self.start)
		return NULL;
	self.end = self.start + len;
	return symcache__vdso(s->cache, getpid(), &self);
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
		    overlaps(g->maps, g->count, km[i].start, km[i].end, true) ||
		    overlaps(maps, k, km[i].start, km[i].end, false))
			continue;
		obj = km[i].vdso ? vdso_self(s, km[i].end - km[i].start) :
				   symcache__kernel_file(s->cache, km[i].path, km[i].st);
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
			.flags = km[i].vdso ? VDSO_FLAGS : 0,
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
