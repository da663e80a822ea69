// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * User-space symbolizer (see symbolize.h): processes, the lookups of an
 * address in their mapping snapshots (read into generations in time by
 * symbolize_gens.c), and the public API.
 *
 * Layers, bottom up: symtab.c (sorted function symbols, shared by ELF objects
 * and JIT maps; demangling and PLT entries), debuginfo.c (separate debug
 * files), symcache.c (one object per ELF file or vdso image: PT_LOAD segments
 * and a symtab), perfmap.c (a process's JIT map), and here a process's
 * mapping snapshots, pointing at objects. Processes and interned strings are
 * found through util/hashmap.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int symbolizer__note_maps(struct symbolizer *s, int pid, const struct procmaps *pm)
{
	struct proc *p = proc__find(s, pid);
	const struct gen *g;
	unsigned reads;
	int err;

	if (!p || p->gone || !p->ngens || !pm)
		return 0;
	g = &p->gens[p->ngens - 1];
	/* Empty: an exec's generation its first sample reads (symbolizer__note_exec). */
	if (!g->count || gen__replaced(g, pm) || !gen__lacks(g, pm))
		return 0;
	/* The tracker's read (just kept): not one of a young process's own, which stay at once. */
	reads = p->reads;
	err = proc__snapshot(s, p, clock__mono_ns(), false, REFRESH_NS);
	p->reads = reads;
	return err;
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