// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * User-space symbolizer (see symbolize.h).
 *
 * Layers, bottom up: symtab.c (sorted function symbols, shared by ELF objects
 * and JIT maps), object (one ELF file or vdso image: PT_LOAD segments and a
 * symtab), proc (one process's mapping snapshot, pointing at objects).
 * Debug files (.gnu_debuglink, build-id) will slot into object__load_elf() as
 * a second symbol source; demangling into symtab__add().
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procmaps.h"
#include "symbolize.h"
#include "symtab.h"

#define REFRESH_NS 1000000000ULL /* re-read maps / JIT map at most once a second */
#define MAX_VDSO_SIZE (1 << 20)

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* ---- chained hash table of intrusive nodes --------------------------------- */

struct hnode {
	struct hnode *next;
	uint64_t key;
};

struct htab {
	struct hnode **b;
	size_t nb, n; /* nb: power of two */
};

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static struct hnode *htab__first(const struct htab *h, uint64_t key)
{
	struct hnode *n = h->nb ? h->b[hash64(key) & (h->nb - 1)] : NULL;

	while (n && n->key != key)
		n = n->next;
	return n;
}

static struct hnode *htab__next(struct hnode *n)
{
	uint64_t key = n->key;

	for (n = n->next; n && n->key != key; n = n->next)
		;
	return n;
}

static int htab__add(struct htab *h, struct hnode *node)
{
	size_t i;

	if (h->n >= h->nb) {
		size_t nb = h->nb ? h->nb * 2 : 64;
		struct hnode **b = calloc(nb, sizeof(*b)), *n, *next;

		if (!b)
			return -ENOMEM;
		for (i = 0; i < h->nb; i++) {
			for (n = h->b[i]; n; n = next) {
				next = n->next;
				n->next = b[hash64(n->key) & (nb - 1)];
				b[hash64(n->key) & (nb - 1)] = n;
			}
		}
		free(h->b);
		h->b = b;
		h->nb = nb;
	}
	i = hash64(node->key) & (h->nb - 1);
	node->next = h->b[i];
	h->b[i] = node;
	h->n++;
	return 0;
}

static void htab__del(struct htab *h, struct hnode *node)
{
	struct hnode **pp = &h->b[hash64(node->key) & (h->nb - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == node) {
			*pp = node->next;
			h->n--;
			return;
		}
	}
}

/* ---- objects: ELF files and vdso images ------------------------------------- */

struct segment {
	uint64_t offset, vaddr, filesz;
};

struct object {
	struct hnode node; /* key: hash of (dev, ino); unused for vdso images */
	struct object *next_vdso;
	uint64_t dev, ino;
	bool elf; /* parsed: addresses convert through segs */
	struct segment *segs;
	size_t nsegs;
	struct symtab *tab; /* NULL: no symbols */
	void *image; /* vdso bytes, to share the object by content */
	size_t image_len;
};

static int object__load_segments(struct object *obj, Elf *elf)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	obj->segs = calloc(n ? n : 1, sizeof(*obj->segs));
	if (!obj->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		obj->segs[obj->nsegs++] = (struct segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	return 0;
}

/* On failure the object stays, without symbols: not retried for every process. */
static int object__load_elf(struct object *obj, Elf *elf)
{
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	err = object__load_segments(obj, elf);
	if (err)
		return err;
	obj->elf = true;
	obj->tab = symtab__new();
	if (!obj->tab)
		return -ENOMEM;
	err = symtab__add_elf(obj->tab, elf);
	if (err) {
		symtab__free(obj->tab);
		obj->tab = NULL;
		return err;
	}
	symtab__finish(obj->tab, false);
	return 0;
}

static int object__load_fd(struct object *obj, int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int err = object__load_elf(obj, elf);

	elf_end(elf);
	return err;
}

static void object__free(struct object *obj)
{
	if (!obj)
		return;
	symtab__free(obj->tab);
	free(obj->segs);
	free(obj->image);
	free(obj);
}

/* File offset -> ELF virtual address through the PT_LOAD covering it. */
static uint64_t object__vaddr(const struct object *obj, uint64_t off)
{
	const struct segment *best = NULL;
	size_t i;

	for (i = 0; i < obj->nsegs; i++) {
		const struct segment *sg = &obj->segs[i];

		if (off >= sg->offset && off - sg->offset < sg->filesz)
			return off - sg->offset + sg->vaddr;
		if (off >= sg->offset && (!best || sg->offset > best->offset))
			best = sg;
	}
	return best ? off - best->offset + best->vaddr : off;
}

/* ---- per-process state ------------------------------------------------------ */

struct pmap {
	uint64_t start, end, offset;
	struct object *obj; /* NULL: anonymous, or no readable ELF behind it */
	const char *path; /* interned; NULL if anonymous */
	const char *module; /* interned */
	uint32_t perms, flags;
};

struct jitmap {
	struct symtab *tab; /* runtime addresses */
	bool loaded;
	off_t size;
	struct timespec mtime;
	uint64_t checked_ns;
};

struct proc {
	struct hnode node; /* key: pid */
	int pid, nspid;
	uid_t uid;
	bool gone; /* /proc/PID vanished */
	bool need_ns; /* has executable memory without ELF: nspid/uid wanted */
	struct pmap *maps;
	size_t count;
	uint64_t refreshed_ns;
	struct jitmap jit;
};

struct istr {
	struct hnode node;
	char s[];
};

struct symbolizer {
	struct htab procs;
	struct htab objs;
	struct htab strs;
	struct object *vdsos;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* Interned strings live until symbolizer__free. */
static const char *intern(struct symbolizer *s, const char *str)
{
	uint64_t key = str_hash(str);
	struct hnode *n;
	struct istr *is;

	for (n = htab__first(&s->strs, key); n; n = htab__next(n)) {
		is = container_of(n, struct istr, node);
		if (strcmp(is->s, str) == 0)
			return is->s;
	}
	is = malloc(sizeof(*is) + strlen(str) + 1);
	if (!is)
		return NULL;
	strcpy(is->s, str);
	is->node.key = key;
	if (htab__add(&s->strs, &is->node)) {
		free(is);
		return NULL;
	}
	return is->s;
}

static struct object *object__get_file(struct symbolizer *s, int pid, const struct procmap *m)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	uint64_t key = hash64(dev) ^ m->inode;
	struct object *obj;
	struct hnode *n;
	int fd;

	for (n = htab__first(&s->objs, key); n; n = htab__next(n)) {
		obj = container_of(n, struct object, node);
		if (obj->dev == dev && obj->ino == m->inode)
			return obj;
	}
	/* Not cached when unreachable: another process may still reach it. */
	fd = procmap__open(pid, m);
	if (fd < 0)
		return NULL;
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		close(fd);
		return NULL;
	}
	obj->dev = dev;
	obj->ino = m->inode;
	obj->node.key = key;
	object__load_fd(obj, fd);
	close(fd);
	if (htab__add(&s->objs, &obj->node)) {
		object__free(obj);
		return NULL;
	}
	return obj;
}

/* The vdso image is read from the process; identical images share an object. */
static struct object *object__get_vdso(struct symbolizer *s, int pid, const struct procmap *m)
{
	size_t len = m->end - m->start;
	struct object *obj;
	char path[64];
	Elf *elf;
	void *img;
	ssize_t r;
	int fd;

	if (len > MAX_VDSO_SIZE)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	img = malloc(len);
	r = img ? pread(fd, img, len, m->start) : -1;
	close(fd);
	if (r != (ssize_t)len) {
		free(img);
		return NULL;
	}
	for (obj = s->vdsos; obj; obj = obj->next_vdso) {
		if (obj->image_len == len && memcmp(obj->image, img, len) == 0) {
			free(img);
			return obj;
		}
	}
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		free(img);
		return NULL;
	}
	obj->image = img;
	obj->image_len = len;
	elf = elf_memory(img, len);
	object__load_elf(obj, elf);
	elf_end(elf);
	obj->next_vdso = s->vdsos;
	s->vdsos = obj;
	return obj;
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
	if (!(m->perms & PROCMAP_EXEC) || (m->obj && m->obj->elf))
		return false;
	if (m->flags & PROCMAP_F_PSEUDO) /* [vdso], [vsyscall]; [anon:name] is JIT-able */
		return strncmp(m->path, "[anon:", 6) == 0;
	return true;
}

static void pmap__init(struct symbolizer *s, int pid, struct pmap *pm, const struct procmap *m)
{
	pm->start = m->start;
	pm->end = m->end;
	pm->offset = m->offset;
	pm->perms = m->perms;
	pm->flags = m->flags;
	pm->module = module_name(s, m, &pm->path);
	pm->obj = NULL;
	if (!(m->perms & PROCMAP_EXEC))
		return;
	if (m->flags & PROCMAP_F_VDSO)
		pm->obj = object__get_vdso(s, pid, m);
	else if (!(m->flags & PROCMAP_F_ANON))
		pm->obj = object__get_file(s, pid, m);
}

static void proc__read_ns(struct proc *p)
{
	char path[64], line[256];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d", p->pid);
	if (stat(path, &st) == 0)
		p->uid = st.st_uid;
	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *last;

		if (strncmp(line, "NSpid:", 6))
			continue;
		line[strcspn(line, "\n")] = '\0';
		last = strrchr(line, '\t');
		p->nspid = atoi(last ? last + 1 : line + 6);
		break;
	}
	fclose(f);
}

static int cmp_pmap(const void *a, const void *b)
{
	const struct pmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static const struct pmap *find_pmap(const struct pmap *maps, size_t count, uint64_t addr)
{
	size_t lo = 0, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= maps[lo - 1].end)
		return NULL;
	return &maps[lo - 1];
}

static bool overlaps_any(const struct pmap *maps, size_t count, const struct pmap *o)
{
	size_t lo = 0, hi = count;

	/* The last map starting before o ends has the greatest end of those. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].start < o->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && maps[lo - 1].end > o->start;
}

/* Read the maps; keep earlier mappings the new snapshot does not overlap. */
static int proc__snapshot(struct symbolizer *s, struct proc *p)
{
	struct procmaps *pm;
	struct pmap *maps;
	size_t i, n, fresh;
	int err;

	p->refreshed_ns = now_ns();
	err = procmaps__read(p->pid, &pm);
	if (err) {
		p->gone = err == -ESRCH;
		return err;
	}
	fresh = procmaps__count(pm);
	maps = calloc(fresh + p->count + 1, sizeof(*maps));
	if (!maps) {
		procmaps__free(pm);
		return -ENOMEM;
	}
	for (i = 0; i < fresh; i++) {
		const struct procmap *m = procmaps__get(pm, i);

		pmap__init(s, p->pid, &maps[i], m);
		p->need_ns |= pmap__maybe_jit(&maps[i]);
	}
	procmaps__free(pm);
	for (n = fresh, i = 0; i < p->count; i++) {
		if (!overlaps_any(maps, fresh, &p->maps[i]))
			maps[n++] = p->maps[i];
	}
	if (n > fresh)
		qsort(maps, n, sizeof(*maps), cmp_pmap);
	free(p->maps);
	p->maps = maps;
	p->count = n;
	if (p->need_ns && !p->nspid)
		proc__read_ns(p);
	return 0;
}

static struct proc *proc__find(struct symbolizer *s, int pid)
{
	struct hnode *n = htab__first(&s->procs, (uint32_t)pid);

	return n ? container_of(n, struct proc, node) : NULL;
}

static void proc__free(struct proc *p)
{
	symtab__free(p->jit.tab);
	free(p->maps);
	free(p);
}

/* ---- JIT maps: /tmp/perf-PID.map, "START SIZE name" in hex ------------------ */

static FILE *jit__open(const struct proc *p, struct stat *st)
{
	char path[2][96];
	int i, n = 0;
	FILE *f;

	if (!p->gone && p->nspid > 0)
		snprintf(path[n++], sizeof(path[0]), "/proc/%d/root/tmp/perf-%d.map", p->pid,
			 p->nspid);
	snprintf(path[n++], sizeof(path[0]), "/tmp/perf-%d.map", p->pid);
	for (i = 0; i < n; i++) {
		f = fopen(path[i], "re");
		if (!f)
			continue;
		/* Trust only the process's own user or root to name its code. */
		if (fstat(fileno(f), st) == 0 && (st->st_uid == 0 || st->st_uid == p->uid))
			return f;
		fclose(f);
	}
	return NULL;
}

static int jit__load(struct proc *p)
{
	struct jitmap *j = &p->jit;
	char *line = NULL;
	size_t cap = 0;
	struct stat st;
	int err = 0;
	FILE *f;

	j->checked_ns = now_ns();
	f = jit__open(p, &st);
	if (!f)
		return -ENOENT;
	if (j->loaded && st.st_size == j->size && st.st_mtim.tv_sec == j->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == j->mtime.tv_nsec) {
		fclose(f);
		return 0;
	}
	symtab__free(j->tab);
	j->tab = symtab__new();
	if (!j->tab) {
		fclose(f);
		j->loaded = false;
		return -ENOMEM;
	}
	while (!err && getline(&line, &cap, f) > 0) {
		char *end, *name;
		uint64_t start, size;

		start = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		size = strtoull(end + 1, &name, 16);
		if (name == end + 1 || *name != ' ')
			continue;
		name++;
		name[strcspn(name, "\r\n")] = '\0';
		if (*name)
			err = symtab__add(j->tab, start, size, name, SYMTAB_BIND_GLOBAL);
	}
	free(line);
	fclose(f);
	symtab__finish(j->tab, true);
	j->loaded = true;
	j->size = st.st_size;
	j->mtime = st.st_mtim;
	return err;
}

static const char *jit__find(struct proc *p, uint64_t addr, uint64_t *offset)
{
	const char *name = p->jit.loaded ? symtab__find(p->jit.tab, addr, offset) : NULL;

	if (name)
		return name;
	/* A miss may be code emitted since the last read: re-read, rate limited. */
	if (p->jit.checked_ns && now_ns() - p->jit.checked_ns < REFRESH_NS)
		return NULL;
	if (jit__load(p))
		return NULL;
	return symtab__find(p->jit.tab, addr, offset);
}

/* ---- public API -------------------------------------------------------------- */

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		errno = ENOMEM;
	return s;
}

static void htab__free_all(struct htab *h, size_t node_off, void (*fn)(void *))
{
	struct hnode *n, *next;
	size_t i;

	for (i = 0; i < h->nb; i++) {
		for (n = h->b[i]; n; n = next) {
			next = n->next;
			fn((char *)n - node_off);
		}
	}
	free(h->b);
}

static void free_proc(void *p)
{
	proc__free(p);
}

static void free_object(void *o)
{
	object__free(o);
}

void symbolizer__free(struct symbolizer *s)
{
	struct object *v, *next;

	if (!s)
		return;
	htab__free_all(&s->procs, offsetof(struct proc, node), free_proc);
	htab__free_all(&s->objs, offsetof(struct object, node), free_object);
	htab__free_all(&s->strs, offsetof(struct istr, node), free);
	for (v = s->vdsos; v; v = next) {
		next = v->next_vdso;
		object__free(v);
	}
	free(s);
}

static int note(struct symbolizer *s, int pid, struct proc **out)
{
	struct proc *p = proc__find(s, pid);

	*out = p;
	if (p)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->uid = (uid_t)-1;
	p->node.key = (uint32_t)pid;
	if (htab__add(&s->procs, &p->node)) {
		free(p);
		return -ENOMEM;
	}
	*out = p;
	return proc__snapshot(s, p);
}

int symbolizer__note_pid(struct symbolizer *s, int pid)
{
	struct proc *p;

	return note(s, pid, &p);
}

int symbolizer__refresh_pid(struct symbolizer *s, int pid)
{
	struct proc *p = proc__find(s, pid);

	if (!p)
		return note(s, pid, &p);
	return proc__snapshot(s, p);
}

void symbolizer__forget_pid(struct symbolizer *s, int pid)
{
	struct proc *p = proc__find(s, pid);

	if (!p)
		return;
	htab__del(&s->procs, &p->node);
	proc__free(p);
}

static void resolve(struct proc *p, const struct pmap *m, uint64_t addr, struct sym_info *out)
{
	if (m->obj && m->obj->elf) {
		out->elf_addr = object__vaddr(m->obj, addr - m->start + m->offset);
		if (m->obj->tab)
			out->name = symtab__find(m->obj->tab, out->elf_addr, &out->offset);
	} else if (pmap__maybe_jit(m)) {
		out->name = jit__find(p, addr, &out->offset);
	}
}

int symbolizer__user(struct symbolizer *s, int pid, uint64_t addr, struct sym_info *out)
{
	const struct pmap *m;
	struct proc *p;
	int err;

	memset(out, 0, sizeof(*out));
	err = note(s, pid, &p);
	if (!p)
		return err;
	m = find_pmap(p->maps, p->count, addr);
	if (!m && !p->gone && now_ns() - p->refreshed_ns >= REFRESH_NS) {
		proc__snapshot(s, p);
		m = find_pmap(p->maps, p->count, addr);
	}
	if (!m)
		return -ENOENT;
	out->mapped = true;
	out->module = m->module;
	out->path = m->path;
	resolve(p, m, addr, out);
	return 0;
}
