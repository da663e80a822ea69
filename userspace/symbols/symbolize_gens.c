// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A process's mapping snapshots (symbolize_int.h): /proc/PID/maps read into
 * mappings that point at objects (symcache.c), where its paths resolve and
 * whose files they are, and the generations in time they make: a read that
 * shows code replaced (an exec, a dlclose) starts a new generation for the
 * samples after it; any other is merged into the current one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procs/procmaps.h"
#include "symbols/perfmap.h"
#include "symbols/symbolize_int.h"
#include "symbols/symcache.h"
#include "util/clock.h"

static bool same_inode(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/*
 * Where pid's paths resolve: through /proc/PID/root when it has another
 * mount namespace (a container: its own files at the same paths) or another
 * root (chroot); our own paths otherwise. A root other than the host's (init's:
 * sfbpf may run in a container of its own that sees the host's processes)
 * makes it a tenant (tenant_root): a rootful container's root is root on the
 * host, and may write the host's files bound into it (volumes), which
 * symcache__file() then takes as the tenant's. Another mount namespace with
 * the host's root is a host service's sandbox (systemd's PrivateTmp,
 * ProtectSystem): the host's root set its mounts. A root we may not read is
 * a tenant's.
 */
static int proc__root_pid(struct proc *p)
{
	char root[32], ns[32];

	if (p->root_read)
		return p->root_pid;
	p->root_read = true;
	p->root_pid = 0;
	p->tenant_root = false;
	snprintf(root, sizeof(root), "/proc/%d/root", p->pid);
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", p->pid);
	if (access(root, F_OK)) {
		p->tenant_root = errno != ENOENT && errno != ESRCH;
		return 0;
	}
	p->tenant_root = !same_inode(root, access("/proc/1/root", F_OK) ? "/" : "/proc/1/root");
	if (!same_inode(root, "/") || !same_inode(ns, "/proc/self/ns/mnt"))
		p->root_pid = p->pid;
	return p->root_pid;
}

static const char *module_name(struct symbolizer *s, const struct procmap *m, const char **path)
{
	*path = m->path[0] ? intern(s, m->path) : NULL;
	if (!*path)
		return "[anon]";
	return procmap__basename(*path);
}

/* Executable memory without an ELF object: JIT code, named by a perf map. */
bool pmap__maybe_jit(const struct pmap *m)
{
	if (!(m->perms & PROCMAP_EXEC) || symobj__is_elf(m->obj))
		return false;
	if (m->flags & PROCMAP_F_PSEUDO) /* [vdso], [vsyscall]; [anon:name] is JIT-able */
		return strncmp(m->path, "[anon:", 6) == 0;
	return true;
}

static void pmap__init(struct symbolizer *s, struct proc *p, struct pmap *pm,
		       const struct procmap *m)
{
	pm->start = m->start;
	pm->end = m->end;
	pm->offset = m->offset;
	pm->dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	pm->ino = m->inode;
	pm->perms = m->perms;
	pm->flags = m->flags;
	pm->module = module_name(s, m, &pm->path);
	pm->obj = NULL;
	if (!(m->perms & PROCMAP_EXEC))
		return;
	if (m->flags & PROCMAP_F_VDSO)
		pm->obj = symcache__vdso(s->cache, p->pid, m);
	else if (!(m->flags & PROCMAP_F_ANON)) {
		int root_pid = proc__root_pid(p); /* reads p->tenant_root too */

		pm->obj = symcache__file(s->cache, p->pid, root_pid, p->tenant_root, m);
	}
}

/* The objects maps point at are no longer theirs. */
void maps__put(struct symbolizer *s, struct pmap *maps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		symcache__put(s->cache, maps[i].obj);
}

static int cmp_pmap(const void *a, const void *b)
{
	const struct pmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool overlaps_any(const struct pmap *maps, size_t count, const struct pmap *o)
{
	/* Mappings do not overlap: the last one starting before o ends ends last. */
	size_t n = o->end > o->start ? maps_upto(maps, count, o->end - 1) : 0;

	return n && maps[n - 1].end > o->start;
}

/*
 * Did the process drop or replace code it had mapped? An exec replaces
 * everything; dlclose drops a library. File-backed executable mappings and
 * the vdso count; anonymous executable memory (JIT code) comes and goes.
 */
bool gen__replaced(const struct gen *g, const struct procmaps *fresh)
{
	const struct procmap *f;
	const struct pmap *m;
	size_t i;

	for (i = 0; i < g->count; i++) {
		m = &g->maps[i];
		if (!(m->perms & PROCMAP_EXEC) ||
		    ((m->flags & PROCMAP_F_ANON) && !(m->flags & PROCMAP_F_VDSO)))
			continue;
		f = procmaps__find(fresh, m->start);
		if (!f || f->start != m->start || f->end != m->end || f->offset != m->offset ||
		    ((uint64_t)f->dev_major << 32 | f->dev_minor) != m->dev || f->inode != m->ino)
			return true;
	}
	return false;
}

bool gen__lacks(const struct gen *g, const struct procmaps *fresh)
{
	const struct procmap *f;
	const struct pmap *m;
	size_t i;

	for (i = 0; i < procmaps__count(fresh); i++) {
		f = procmaps__get(fresh, i);
		if (!(f->perms & PROCMAP_EXEC))
			continue;
		m = find_pmap(g->maps, g->count, f->start);
		if (!m || m->start != f->start || m->end != f->end || m->ino != f->inode)
			return true;
	}
	return false;
}

/* Fold fresh into g: mappings g had that fresh does not overlap stay known. */
int gen__merge(struct symbolizer *s, struct gen *g, struct pmap *fresh, size_t n)
{
	struct pmap *maps = realloc(fresh, (n + g->count + 1) * sizeof(*maps));
	size_t i, total = n;

	if (!maps) {
		maps__put(s, fresh, n);
		free(fresh);
		return -ENOMEM;
	}
	for (i = 0; i < g->count; i++) {
		if (!overlaps_any(maps, n, &g->maps[i]))
			maps[total++] = g->maps[i];
		else
			symcache__put(s->cache, g->maps[i].obj); /* replaced by fresh */
	}
	if (total > n)
		qsort(maps, total, sizeof(*maps), cmp_pmap);
	free(g->maps);
	g->maps = maps;
	g->count = total;
	return 0;
}

/* Start a generation serving samples from since_ns on; the oldest may go. */
void proc__push_gen(struct symbolizer *s, struct proc *p, uint64_t since_ns, struct pmap *maps,
		    size_t n, const char *exe)
{
	if (p->ngens == MAX_GENS) {
		maps__put(s, p->gens[0].maps, p->gens[0].count);
		free(p->gens[0].maps);
		memmove(&p->gens[0], &p->gens[1], (MAX_GENS - 1) * sizeof(p->gens[0]));
		p->ngens--;
	}
	if (!p->ngens)
		since_ns = 0; /* the first serves everything before it too */
	else if (since_ns <= p->gens[p->ngens - 1].since_ns)
		since_ns = p->gens[p->ngens - 1].since_ns + 1;
	p->gens[p->ngens++] = (struct gen){ since_ns, maps, n, exe, { 0, 0 } };
}

/*
 * Reads p's mappings (a snapshot the process tracker took at most max_age_ns
 * ago will do: procmaps__snapshot()). If code was replaced (exec) or
 * force_new, they become a new generation for samples from since_ns on, and
 * the old one keeps serving the samples taken before; else they are merged
 * into the current generation.
 */
int proc__snapshot(struct symbolizer *s, struct proc *p, uint64_t since_ns, bool force_new,
		   uint64_t max_age_ns)
{
	const struct procmap *exe_map;
	const char *exe = NULL;
	struct procmaps *pm;
	struct pmap *maps;
	struct gen *cur;
	bool replaced;
	size_t i, n;
	int err;

	p->refreshed_ns = clock__mono_ns();
	p->leaf_miss_ns = 0;
	p->reads++;
	err = procmaps__snapshot(p->pid, max_age_ns, &pm);
	/*
	 * No mapping at all: its memory is released (exiting, a zombie), the
	 * process as gone as one whose directory is. Read as an image of its
	 * own, it would hide the one it ran (a new, empty generation) and spend
	 * a young process's reads; gone, the kernel's mappings name it.
	 */
	if (!err && !procmaps__count(pm)) {
		procmaps__free(pm);
		err = -ESRCH;
	}
	if (err) {
		p->gone = err == -ESRCH;
		return err;
	}
	n = procmaps__count(pm);
	maps = calloc(n + 1, sizeof(*maps));
	if (!maps) {
		procmaps__free(pm);
		return -ENOMEM;
	}
	exe_map = procmaps__exe(pm);
	cur = p->ngens ? &p->gens[p->ngens - 1] : NULL;
	/*
	 * A new image (an exec) may run in another root: a container's runtime
	 * enters its namespaces and root (pivot_root, chroot), then execs the
	 * entrypoint in the same process. Where its paths resolve, and whose
	 * files they are, is read again for it.
	 */
	replaced = !cur || force_new || gen__replaced(cur, pm);
	if (replaced)
		p->root_read = false;
	for (i = 0; i < n; i++) {
		pmap__init(s, p, &maps[i], procmaps__get(pm, i));
		p->need_ns |= pmap__maybe_jit(&maps[i]);
		/* Named now, while it runs: at output time its PID may be another's. */
		if (exe_map == procmaps__get(pm, i))
			exe = maps[i].path;
	}
	procmaps__free(pm);
	if (replaced) {
		proc__push_gen(s, p, since_ns, maps, n, exe);
	} else {
		if (exe) /* the executable as this snapshot shows it */
			cur->exe = exe;
		if ((err = gen__merge(s, cur, maps, n)))
			return err;
	}
	if (p->need_ns && !p->jit.nspid)
		perfmap__identify(&p->jit);
	/*
	 * Read the JIT map while the process lives: in a container it is
	 * reached only through its root, which goes with its last process.
	 */
	if (p->need_ns)
		perfmap__refresh(&p->jit, !p->gone);
	return 0;
}
