// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * User-space symbolizer (see symbolize.h): processes and their mapping
 * snapshots, generations in time, and the public API.
 *
 * Layers, bottom up: symtab.c (sorted function symbols, shared by ELF objects
 * and JIT maps; demangling and PLT entries), debuginfo.c (separate debug
 * files), symcache.c (one object per ELF file or vdso image: PT_LOAD segments
 * and a symtab), perfmap.c (a process's JIT map), and here a process's
 * mapping snapshots, pointing at objects. Processes and interned strings are
 * found through util/hashmap.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procs/procmaps.h"
#include "symbols/perfmap.h"
#include "symbols/symbolize.h"
#include "symbols/symbolize_int.h"
#include "symbols/symcache.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/search.h"

static bool str_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return strcmp(HASHMAP_TO_PTR(val), key) == 0;
}

/* Interned strings live while a snapshot uses them (sweep_strings()). */
const char *intern(struct symbolizer *s, const char *str)
{
	uint32_t h = (uint32_t)hash__str(str);
	int64_t found = hashmap__find(&s->strs, h, str_eq, NULL, str);
	char *copy;

	if (found >= 0)
		return HASHMAP_TO_PTR(found);
	copy = strdup(str);
	if (!copy || hashmap__add(&s->strs, h, HASHMAP_PTR(copy))) {
		free(copy);
		return NULL;
	}
	return copy;
}

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
static bool pmap__maybe_jit(const struct pmap *m)
{
	if (!(m->perms & PROCMAP_EXEC) || symobj__is_elf(m->obj))
		return false;
	if (m->flags & PROCMAP_F_PSEUDO) /* [vdso], [vsyscall]; [anon:name] is JIT-able */
		return strncmp(m->path, "[anon:", 6) == 0;
	return true;
}

/*
 * Anonymous memory no longer executable when the maps were read, under a
 * sampled PC: a JIT's code unmapped or reprotected since it ran (a PC is
 * where the CPU was: it was code then). The JIT's perf map still names it.
 */
static bool pmap__was_jit(const struct pmap *m)
{
	if ((m->perms & PROCMAP_EXEC) || symobj__is_elf(m->obj))
		return false;
	if (m->flags & PROCMAP_F_PSEUDO)
		return strncmp(m->path, "[anon:", 6) == 0;
	return (m->flags & PROCMAP_F_ANON) != 0;
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
static void maps__put(struct symbolizer *s, struct pmap *maps, size_t n)
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

/* How many of maps (sorted by start) start at or below addr. */
static size_t maps_upto(const struct pmap *maps, size_t count, uint64_t addr)
{
	return SEARCH_UPTO(maps, count, start, addr);
}

static const struct pmap *find_pmap(const struct pmap *maps, size_t count, uint64_t addr)
{
	size_t n = maps_upto(maps, count, addr);

	return n && addr < maps[n - 1].end ? &maps[n - 1] : NULL;
}

static bool is_code(const struct pmap *m)
{
	return m && (m->perms & PROCMAP_EXEC);
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
static bool gen__replaced(const struct gen *g, const struct procmaps *fresh)
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
static void proc__push_gen(struct symbolizer *s, struct proc *p, uint64_t since_ns,
			   struct pmap *maps, size_t n, const char *exe)
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
 * Read the maps. If code was replaced (exec) or force_new, they become a new
 * generation for samples from since_ns on, and the old one keeps serving the
 * samples taken before; else they are merged into the current generation.
 */
/*
 * Reads p's mappings (a snapshot the process tracker took at most max_age_ns
 * ago will do: procmaps__snapshot()) into a new or the current generation.
 */
static int proc__snapshot(struct symbolizer *s, struct proc *p, uint64_t since_ns, bool force_new,
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

/* The generation serving a sample taken at time_ns. */
static struct gen *proc__gen_at(struct proc *p, uint64_t time_ns)
{
	unsigned i = p->ngens;

	while (i > 1 && p->gens[i - 1].since_ns > time_ns)
		i--;
	return i ? &p->gens[i - 1] : NULL;
}

static bool proc_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return ((const struct proc *)HASHMAP_TO_PTR(val))->pid == *(const int *)key;
}

static uint32_t pid_hash(int pid)
{
	return (uint32_t)hash__mix64((uint64_t)pid);
}

static struct proc *proc__find(struct symbolizer *s, int pid)
{
	int64_t found;

	if (s->last && s->last->pid == pid)
		return s->last;
	found = hashmap__find(&s->procs, pid_hash(pid), proc_eq, NULL, &pid);
	if (found >= 0)
		s->last = HASHMAP_TO_PTR(found);
	return found >= 0 ? s->last : NULL;
}

/* A process not known yet, with no generation: NULL without memory. */
static struct proc *proc__new(struct symbolizer *s, int pid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	perfmap__init(&p->jit, pid, &s->jit_pool);
	if (hashmap__add(&s->procs, pid_hash(pid), HASHMAP_PTR(p))) {
		free(p);
		return NULL;
	}
	return p;
}

static void proc__free(struct symbolizer *s, struct proc *p)
{
	unsigned i;

	for (i = 0; i < p->ngens; i++) {
		maps__put(s, p->gens[i].maps, p->gens[i].count);
		free(p->gens[i].maps);
	}
	perfmap__release(&p->jit);
	free(p);
}

/* ---- public API -------------------------------------------------------------- */

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->cache = symcache__new();
	if (!s->cache) {
		err = errno;
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

int symbolizer__set_debug_dirs(struct symbolizer *s, const char *dirs)
{
	return symcache__set_debug_dirs(s->cache, dirs);
}

void symbolizer__set_lines(struct symbolizer *s, bool lines, bool inlines)
{
	symcache__set_lines(s->cache, lines);
	s->no_inline = !inlines;
}

int symbolizer__set_debuginfod(struct symbolizer *s, bool on)
{
	return symcache__set_debuginfod(s->cache, on);
}

void symbolizer__set_defer(struct symbolizer *s, bool on)
{
	symcache__set_defer(s->cache, on);
}

void symbolizer__settle(struct symbolizer *s, bool all)
{
	symcache__settle(s->cache, all);
}

void symbolizer__release_lines(struct symbolizer *s, uint64_t unused_since_ns)
{
	symcache__release_lines(s->cache, unused_since_ns);
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	size_t it = 0;
	uint64_t v;

	while (hashmap__next(&s->procs, &it, &v))
		proc__free(s, HASHMAP_TO_PTR(v));
	for (it = 0; hashmap__next(&s->strs, &it, &v);)
		free(HASHMAP_TO_PTR(v));
	hashmap__free(&s->procs);
	hashmap__free(&s->strs);
	symcache__free(s->cache);
	free(s);
}

static int note(struct symbolizer *s, int pid, struct proc **out)
{
	struct proc *p = proc__find(s, pid);

	*out = p;
	if (p)
		return 0;
	p = proc__new(s, pid);
	if (!p)
		return -ENOMEM;
	*out = p;
	/* First sight: usually just after the tracker read it for its tables. */
	return proc__snapshot(s, p, 0, false, REFRESH_NS);
}

int symbolizer__note_pid(struct symbolizer *s, int pid)
{
	struct proc *p;

	return note(s, pid, &p);
}

/*
 * Is addr in one of g's code mappings? *hint: the last one found (frames
 * cluster). A data mapping does not count: the range may hold code now (ld.so
 * maps ld.so.cache and unmaps it, and a later dlopen puts a library there).
 */
static bool covered(const struct gen *g, uint64_t addr, const struct pmap **hint)
{
	const struct pmap *m = *hint;

	/*
	 * Either of the top two bits: a runtime's identity in place of a pc
	 * (bpf/abi.h: HotSpot's interpreted and compiled frames), named by the
	 * runtime, not an address any mapping holds (user addresses are below
	 * 1 << 57 on every architecture sfbpf runs on).
	 */
	if (addr >> 62)
		return true;
	if (m && addr >= m->start && addr < m->end)
		return true;
	m = find_pmap(g->maps, g->count, addr);
	if (!is_code(m))
		return false;
	*hint = m;
	return true;
}

int symbolizer__note_sample(struct symbolizer *s, int pid, uint64_t time_ns, const uint64_t *ips,
			    size_t n)
{
	const struct pmap *hint = NULL;
	bool leaf_miss, miss;
	uint64_t wait_ns;
	struct proc *p;
	struct gen *g;
	size_t i;
	int err;

	err = note(s, pid, &p);
	if (!p || p->gone || !n || !p->ngens)
		return err;
	g = &p->gens[p->ngens - 1];
	if (time_ns < g->since_ns) /* older than what we know */
		return 0;
	/* The leaf is the interrupted PC itself; callers may be unwinding garbage. */
	leaf_miss = !covered(g, ips[0], &hint);
	for (miss = leaf_miss, i = 1; !miss && i < n; i++)
		miss = !covered(g, ips[i], &hint);
	if (!miss)
		return 0;
	if (leaf_miss && (!p->leaf_miss_ns || time_ns < p->leaf_miss_ns))
		p->leaf_miss_ns = time_ns;
	/*
	 * The first reads of a new process or image may come before the
	 * dynamic loader mapped its libraries (the tracker reads at the exec):
	 * a caller in libc then misses, and a process living less than
	 * REFRESH_NS (a build's, a shell's) would keep no name for it: its
	 * first YOUNG_READS reads are made at once (one living 5 ms, unwound
	 * from its first sample in the kernel, is gone 10 ms later). Past
	 * those, a leaf that misses is read again after LEAF_REFRESH_NS, and
	 * callers that miss, more often garbage, once a second.
	 */
	wait_ns = p->reads < YOUNG_READS ? 0 : leaf_miss ? LEAF_REFRESH_NS : REFRESH_NS;
	if (clock__mono_ns() - p->refreshed_ns < wait_ns)
		return 0;
	/* Samples since the first leaf miss were the new code's. */
	err = proc__snapshot(s, p, p->leaf_miss_ns ? p->leaf_miss_ns : time_ns + 1, false, 0);
	/* Gone already (a process living a few milliseconds): the kernel's mappings name it. */
	if (err == -ESRCH)
		proc__from_kernel(s, p);
	return err;
}

int symbolizer__note_fork(struct symbolizer *s, int pid, int parent, uint64_t time_ns)
{
	struct proc *pp, *p = proc__find(s, pid);
	struct pmap *maps;
	struct gen *g;
	size_t i;
	int err;

	err = note(s, parent, &pp);
	if (!pp || pp->gone || !pp->ngens || pp == p)
		return err ? err : -ESRCH;
	/* Read while ld.so was still mapping (a young image), or long ago: again first. */
	if (clock__mono_ns() - pp->refreshed_ns >=
	    (pp->reads < YOUNG_READS ? LEAF_REFRESH_NS : REFRESH_NS))
		proc__snapshot(s, pp, time_ns, false, 0);
	if (pp->gone || !pp->ngens)
		return -ESRCH;
	g = &pp->gens[pp->ngens - 1];
	maps = calloc(g->count + 1, sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	if (!p) {
		p = proc__new(s, pid);
		if (!p) {
			free(maps);
			return -ENOMEM;
		}
		time_ns = 0;
	}
	memcpy(maps, g->maps, g->count * sizeof(*maps));
	for (i = 0; i < g->count; i++)
		symcache__hold(maps[i].obj);
	/* Its objects are its parent's; its root is read for itself if it reads more. */
	p->root_read = false;
	p->gone = false;
	p->refreshed_ns = clock__mono_ns();
	p->reads = 1;
	/* A PID known from an earlier process: this one's from its birth on. */
	proc__push_gen(s, p, time_ns, maps, g->count, g->exe);
	return 0;
}

bool symbolizer__has(struct symbolizer *s, int pid)
{
	return proc__find(s, pid) != NULL;
}

int symbolizer__note_exec(struct symbolizer *s, int pid, uint64_t time_ns,
			  const struct symbolizer_image *image, bool now)
{
	struct proc *p = proc__find(s, pid);
	int err;

	procmaps__forget(pid); /* the image before the exec must not serve */
	if (!p && !now) {
		/* Unknown: only the kernel's mappings could name it, if it is gone when sampled. */
		if (!s->kmaps || !image || !image->exec_id || !(p = proc__new(s, pid)))
			return 0;
		/* Before the exec: another image, unread (a first generation serves all before). */
		proc__push_gen(s, p, 0, calloc(1, sizeof(struct pmap)), 0, NULL);
	}
	if (p && !now) {
		/* Nothing of the new image yet: its first sample reads it, ld.so further on. */
		proc__push_gen(s, p, time_ns, calloc(1, sizeof(struct pmap)), 0, NULL);
		p->gens[p->ngens - 1].image = image ? *image : (struct symbolizer_image){ 0, 0 };
		p->refreshed_ns = 0;
		p->reads = 0;
		return 0;
	}
	if (!p)
		err = note(s, pid, &p);
	else
		err = proc__snapshot(s, p, time_ns, true, 0);
	/* Gone already: the old image names nothing after the exec; the kernel's mappings may. */
	if (err && p && p->ngens && p->gens[p->ngens - 1].since_ns < time_ns) {
		proc__push_gen(s, p, time_ns, calloc(1, sizeof(struct pmap)), 0, NULL);
		p->gens[p->ngens - 1].image = image ? *image : (struct symbolizer_image){ 0, 0 };
		if (err == -ESRCH)
			proc__from_kernel(s, p);
	} else if (!err && p && p->ngens) {
		p->gens[p->ngens - 1].image = image ? *image : (struct symbolizer_image){ 0, 0 };
	}
	if (p)
		p->reads = 0;
	return err;
}

int symbolizer__refresh_pid(struct symbolizer *s, int pid)
{
	struct proc *p = proc__find(s, pid);

	if (!p)
		return note(s, pid, &p);
	return proc__snapshot(s, p, clock__mono_ns(), false, 0);
}

/*
 * Free the interned paths no snapshot uses any more (processes gone, code
 * unmapped), once they are as many again as those used at the last sweep:
 * each sweep walks every snapshot, so its cost is paid by as many new paths.
 * Only when a process is forgotten: callers hold sym_info strings from the
 * lookups before, never across this.
 */
/* str (interned, or NULL) into live; -1: no memory. */
static int mark_live(struct hashmap *live, const char *str)
{
	uint32_t h;

	if (!str)
		return 0;
	h = (uint32_t)hash__str(str);
	if (hashmap__find(live, h, str_eq, NULL, str) >= 0)
		return 0;
	return hashmap__add(live, h, HASHMAP_PTR(str)) ? -1 : 0;
}

static void sweep_strings(struct symbolizer *s)
{
	struct hashmap live = { 0 };
	size_t it = 0, i;
	unsigned g;
	uint64_t v;
	char *str;

	if (hashmap__size(&s->strs) <= 2 * s->strs_live + 1024)
		return;
	while (hashmap__next(&s->procs, &it, &v)) {
		const struct proc *p = HASHMAP_TO_PTR(v);

		for (g = 0; g < p->ngens; g++) {
			/*
			 * A generation's executable may be a path none of its
			 * mappings has any more (merged with a snapshot in
			 * which the binary was replaced): it is live too.
			 */
			if (mark_live(&live, p->gens[g].exe))
				goto no_memory;
			for (i = 0; i < p->gens[g].count; i++)
				if (mark_live(&live, p->gens[g].maps[i].path))
					goto no_memory;
		}
	}
	for (it = 0; hashmap__next(&s->strs, &it, &v);) {
		str = HASHMAP_TO_PTR(v);
		if (hashmap__find(&live, (uint32_t)hash__str(str), str_eq, NULL, str) < 0) {
			free(str);
			s->strs_swept++;
		}
	}
	hashmap__free(&s->strs);
	s->strs = live;
	s->strs_live = hashmap__size(&live);
	return;
no_memory:
	hashmap__free(&live); /* sweep another time */
}

void symbolizer__forget_pid(struct symbolizer *s, int pid)
{
	struct proc *p = proc__find(s, pid);

	procmaps__forget(pid);
	if (!p)
		return;
	if (s->last == p)
		s->last = NULL;
	hashmap__del(&s->procs, pid_hash(pid), proc_eq, NULL, &pid);
	proc__free(s, p);
	sweep_strings(s);
}

void symbolizer__set_budgets(struct symbolizer *s, uint64_t objects, uint64_t jit_maps)
{
	symcache__set_budget(s->cache, objects);
	s->jit_pool.budget = jit_maps;
}

void symbolizer__set_dwarf_files(struct symbolizer *s, uint64_t n)
{
	symcache__set_dwarf_files(s->cache, n);
}

void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->kernel_named = s->kmaps_named;
	symcache__stats(s->cache, &out->objs);
	out->jit = s->jit_pool;
	if (!out->jit.budget)
		out->jit.budget = PERFMAP_DEFAULT_BUDGET;
	out->procs = hashmap__size(&s->procs);
	out->strings = hashmap__size(&s->strs);
	out->strings_swept = s->strs_swept;
}

static void resolve(struct symbolizer *s, struct proc *p, const struct pmap *m, uint64_t addr,
		    struct sym_info *out)
{
	const struct srcline_frame *f;
	int n;

	if (symobj__is_elf(m->obj)) {
		out->name = symobj__find(m->obj, addr - m->start + m->offset, &out->elf_addr,
					 &out->offset);
		n = symcache__lines(s->cache, m->obj, out->elf_addr, &f);
		if (n > 0) {
			out->lines = s->no_inline ? f + n - 1 : f;
			out->nr_lines = s->no_inline ? 1 : (size_t)n;
		}
	} else if (pmap__maybe_jit(m) || pmap__was_jit(m))
		out->name = perfmap__find(&p->jit, !p->gone, addr, &out->offset);
}

/*
 * addr's mapping in the generation serving time_ns, else in the others,
 * newest first; code before data wherever it is (the address is a PC).
 */
static const struct pmap *proc__find_map(struct proc *p, uint64_t time_ns, uint64_t addr)
{
	struct gen *g = proc__gen_at(p, time_ns);
	const struct pmap *m, *data;
	unsigned i;

	m = g ? find_pmap(g->maps, g->count, addr) : NULL;
	data = m;
	for (i = p->ngens; !is_code(m) && i > 0; i--) {
		if (&p->gens[i - 1] == g)
			continue;
		m = find_pmap(p->gens[i - 1].maps, p->gens[i - 1].count, addr);
		data = data ? data : m;
	}
	return is_code(m) ? m : data;
}

int symbolizer__user_at(struct symbolizer *s, int pid, uint64_t time_ns, uint64_t addr,
			struct sym_info *out)
{
	const struct pmap *m;
	struct proc *p;
	int err;

	memset(out, 0, sizeof(*out));
	err = note(s, pid, &p);
	if (!p)
		return err;
	m = proc__find_map(p, time_ns, addr);
	/* Data where code is asked for: maybe a stale read (covered()), maybe a bad frame. */
	if (!is_code(m) && !p->gone && clock__mono_ns() - p->refreshed_ns >= REFRESH_NS) {
		proc__snapshot(s, p, clock__mono_ns(), false, 0);
		m = proc__find_map(p, time_ns, addr);
	}
	if (!m)
		return -ENOENT;
	out->mapped = true;
	out->module = m->module;
	out->path = m->path;
	out->map_start = m->start;
	out->map_end = m->end;
	out->map_offset = m->offset;
	symcache__settle_obj(s->cache, m->obj); /* its symbols, if they wait */
	out->build_id = symobj__build_id(m->obj);
	resolve(s, p, m, addr, out);
	return 0;
}

const char *symbolizer__exe(struct symbolizer *s, int pid)
{
	struct proc *p = proc__find(s, pid);

	return p && p->ngens ? p->gens[p->ngens - 1].exe : NULL;
}

int symbolizer__user(struct symbolizer *s, int pid, uint64_t addr, struct sym_info *out)
{
	return symbolizer__user_at(s, pid, UINT64_MAX, addr, out);
}