// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * User-space symbolizer (see symbolize.h).
 *
 * Layers, bottom up: symtab.c (sorted function symbols, shared by ELF objects
 * and JIT maps; demangling and PLT entries), debuginfo.c (separate debug
 * files), object (one ELF file or vdso image: PT_LOAD segments and a symtab),
 * proc (one process's mapping snapshots, generations in time, pointing at
 * objects).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>

#include "symbols/debuginfo.h"
#include "procs/procmaps.h"
#include "symbols/symbolize.h"
#include "symbols/symtab.h"

#define REFRESH_NS 1000000000ULL /* re-read maps / JIT map at most once a second */
#define LEAF_REFRESH_NS 10000000ULL /* ... but 10 ms when a sample's own PC missed */
#define MAX_VDSO_SIZE (1 << 20)
#define MAX_GENS 8 /* snapshots kept per process (exec chains) */

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
	struct object *next; /* vdso images; objects replaced in the cache */
	uint64_t dev, ino;
	off_t size; /* size and mtime: a different file reusing the inode */
	struct timespec mtime;
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

/*
 * Symbols from debug (the separate debug file, may be NULL) or elf. On failure
 * the object stays, without symbols: not retried for every process.
 */
static int object__load_elf(struct object *obj, Elf *elf, Elf *debug)
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
	err = symtab__add_elf(obj->tab, elf, debug);
	if (err) {
		symtab__free(obj->tab);
		obj->tab = NULL;
		return err;
	}
	symtab__finish(obj->tab, false);
	return 0;
}

/* A file without .symtab gets its debug file's, looked up under root (debuginfo.h). */
static int object__load_fd(struct object *obj, int fd, const char *path, const char *root,
			   const char *debug_dirs)
{
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL), *debug = NULL;
	int err, dfd = -1;

	if (elf && elf_kind(elf) == ELF_K_ELF && !symtab__elf_has_symtab(elf)) {
		dfd = debuginfo__open(elf, path, root, debug_dirs, NULL, 0);
		debug = dfd >= 0 ? elf_begin(dfd, ELF_C_READ, NULL) : NULL;
	}
	err = object__load_elf(obj, elf, debug);
	elf_end(debug);
	if (dfd >= 0)
		close(dfd);
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
	uint64_t dev, ino;
	struct object *obj; /* NULL: anonymous, or no readable ELF behind it */
	const char *path; /* interned; NULL if anonymous */
	const char *module; /* interned */
	uint32_t perms, flags;
};

/* The mappings serving samples from since_ns until the next generation's. */
struct gen {
	uint64_t since_ns;
	struct pmap *maps;
	size_t count;
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
	bool root_read;
	char root[32]; /* "" or "/proc/PID/root": where its paths are (debuginfo.h) */
	struct gen gens[MAX_GENS]; /* oldest first */
	unsigned ngens;
	uint64_t refreshed_ns;
	uint64_t leaf_miss_ns; /* earliest sample whose leaf missed, since the last read */
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
	struct object *retired; /* replaced in objs; old generations may still use them */
	char *debug_dirs;
	struct proc *last; /* the last process looked up: samples come in runs of one */
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

/* The file behind a mapping, without opening it; -errno if unreachable. */
static int map_stat(int pid, const struct procmap *m, struct stat *st)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	if (stat(path, st) == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, m->path);
	if (stat(path, st) == 0 && st->st_ino == m->inode)
		return 0;
	return -ENOENT;
}

static bool object__same_file(const struct object *obj, const struct stat *st)
{
	return obj->size == st->st_size && obj->mtime.tv_sec == st->st_mtim.tv_sec &&
	       obj->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static bool same_inode(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/*
 * Where pid's paths resolve: through /proc/PID/root when it has another
 * mount namespace (a container: its own files at the same paths) or another
 * root (chroot); our own paths otherwise.
 */
static const char *proc__root(struct proc *p)
{
	char root[32], ns[32];

	if (p->root_read)
		return p->root;
	p->root_read = true;
	snprintf(root, sizeof(root), "/proc/%d/root", p->pid);
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", p->pid);
	if (access(root, F_OK) == 0 &&
	    (!same_inode(ns, "/proc/self/ns/mnt") || !same_inode(root, "/")))
		snprintf(p->root, sizeof(p->root), "%s", root);
	return p->root;
}

/*
 * Objects are shared by every process mapping the file, keyed by device and
 * inode; size and mtime catch an inode reused by another file (a rebuilt
 * binary). The replaced object stays alive for snapshots that point at it.
 */
static struct object *object__get_file(struct symbolizer *s, struct proc *p,
				       const struct procmap *m)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	uint64_t key = hash64(dev) ^ m->inode;
	struct object *obj;
	struct stat st;
	struct hnode *n;
	bool known;
	int fd;

	known = map_stat(p->pid, m, &st) == 0;
	for (n = htab__first(&s->objs, key); n; n = htab__next(n)) {
		obj = container_of(n, struct object, node);
		if (obj->dev != dev || obj->ino != m->inode)
			continue;
		if (!known || object__same_file(obj, &st))
			return obj;
		htab__del(&s->objs, &obj->node);
		obj->next = s->retired;
		s->retired = obj;
		break;
	}
	/* Not cached when unreachable: another process may still reach it. */
	fd = procmap__open(p->pid, m);
	if (fd < 0)
		return NULL;
	obj = calloc(1, sizeof(*obj));
	if (!obj || fstat(fd, &st)) {
		free(obj);
		close(fd);
		return NULL;
	}
	obj->dev = dev;
	obj->ino = m->inode;
	obj->size = st.st_size;
	obj->mtime = st.st_mtim;
	obj->node.key = key;
	object__load_fd(obj, fd, m->path, proc__root(p), s->debug_dirs);
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
	for (obj = s->vdsos; obj; obj = obj->next) {
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
	object__load_elf(obj, elf, NULL);
	elf_end(elf);
	obj->next = s->vdsos;
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
		pm->obj = object__get_vdso(s, p->pid, m);
	else if (!(m->flags & PROCMAP_F_ANON))
		pm->obj = object__get_file(s, p, m);
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

/*
 * Did the process drop or replace code it had mapped? An exec replaces
 * everything; dlclose drops a library. File-backed executable mappings and
 * the vdso count; anonymous executable memory (JIT code) comes and goes.
 */
static bool gen__replaced(const struct gen *g, const struct pmap *fresh, size_t n)
{
	const struct pmap *m, *f;
	size_t i;

	for (i = 0; i < g->count; i++) {
		m = &g->maps[i];
		if (!(m->perms & PROCMAP_EXEC) ||
		    ((m->flags & PROCMAP_F_ANON) && !(m->flags & PROCMAP_F_VDSO)))
			continue;
		f = find_pmap(fresh, n, m->start);
		if (!f || f->start != m->start || f->end != m->end || f->offset != m->offset ||
		    f->dev != m->dev || f->ino != m->ino)
			return true;
	}
	return false;
}

/* Fold fresh into g: mappings g had that fresh does not overlap stay known. */
static int gen__merge(struct gen *g, struct pmap *fresh, size_t n)
{
	struct pmap *maps = realloc(fresh, (n + g->count + 1) * sizeof(*maps));
	size_t i, total = n;

	if (!maps) {
		free(fresh);
		return -ENOMEM;
	}
	for (i = 0; i < g->count; i++) {
		if (!overlaps_any(maps, n, &g->maps[i]))
			maps[total++] = g->maps[i];
	}
	if (total > n)
		qsort(maps, total, sizeof(*maps), cmp_pmap);
	free(g->maps);
	g->maps = maps;
	g->count = total;
	return 0;
}

/* Start a generation serving samples from since_ns on; the oldest may go. */
static void proc__push_gen(struct proc *p, uint64_t since_ns, struct pmap *maps, size_t n)
{
	if (p->ngens == MAX_GENS) {
		free(p->gens[0].maps);
		memmove(&p->gens[0], &p->gens[1], (MAX_GENS - 1) * sizeof(p->gens[0]));
		p->ngens--;
	}
	if (!p->ngens)
		since_ns = 0; /* the first serves everything before it too */
	else if (since_ns <= p->gens[p->ngens - 1].since_ns)
		since_ns = p->gens[p->ngens - 1].since_ns + 1;
	p->gens[p->ngens++] = (struct gen){ since_ns, maps, n };
}

/*
 * Read the maps. If code was replaced (exec) or force_new, they become a new
 * generation for samples from since_ns on, and the old one keeps serving the
 * samples taken before; else they are merged into the current generation.
 */
static int proc__snapshot(struct symbolizer *s, struct proc *p, uint64_t since_ns,
			  bool force_new)
{
	struct procmaps *pm;
	struct pmap *maps;
	struct gen *cur;
	size_t i, n;
	int err;

	p->refreshed_ns = now_ns();
	p->leaf_miss_ns = 0;
	err = procmaps__read(p->pid, &pm);
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
	for (i = 0; i < n; i++) {
		pmap__init(s, p, &maps[i], procmaps__get(pm, i));
		p->need_ns |= pmap__maybe_jit(&maps[i]);
	}
	procmaps__free(pm);
	cur = p->ngens ? &p->gens[p->ngens - 1] : NULL;
	if (!cur || force_new || gen__replaced(cur, maps, n))
		proc__push_gen(p, since_ns, maps, n);
	else if ((err = gen__merge(cur, maps, n)))
		return err;
	if (p->need_ns && !p->nspid)
		proc__read_ns(p);
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

static struct proc *proc__find(struct symbolizer *s, int pid)
{
	struct hnode *n;

	if (s->last && s->last->pid == pid)
		return s->last;
	n = htab__first(&s->procs, (uint32_t)pid);
	if (n)
		s->last = container_of(n, struct proc, node);
	return n ? s->last : NULL;
}

static void proc__free(struct proc *p)
{
	unsigned i;

	for (i = 0; i < p->ngens; i++)
		free(p->gens[i].maps);
	symtab__free(p->jit.tab);
	free(p);
}

/* ---- JIT maps: /tmp/perf-PID.map, "START SIZE name" in hex ------------------ */

/*
 * Open path under dirfd without following a symlink in its last component,
 * resolving ".." and absolute symlinks as if dirfd were "/" (a process's
 * /proc/PID/root), and never blocking on a FIFO. Regular files only.
 */
static int jit__openat(int dirfd, const char *path, unsigned long long resolve,
		       struct stat *st)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
		.resolve = resolve,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static FILE *jit__open(const struct proc *p, struct stat *st)
{
	char path[64];
	int fd = -1, root;
	FILE *f;

	if (!p->gone && p->nspid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/root", p->pid);
		root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root >= 0) {
			snprintf(path, sizeof(path), "tmp/perf-%d.map", p->nspid);
			fd = jit__openat(root, path, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, st);
			close(root);
		}
	}
	if (fd < 0) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", p->pid);
		fd = jit__openat(AT_FDCWD, path, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, st);
	}
	if (fd < 0)
		return NULL;
	/* Trust only the process's own user or root to name its code. */
	if (st->st_uid != 0 && st->st_uid != p->uid) {
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

static int jit__load(struct proc *p)
{
	struct jitmap *j = &p->jit;
	struct stat st;
	FILE *f;
	int err;

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
	err = symtab__add_perf_map(j->tab, f);
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
	if (s)
		s->debug_dirs = strdup(debuginfo__default_dirs());
	if (!s || !s->debug_dirs) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

int symbolizer__set_debug_dirs(struct symbolizer *s, const char *dirs)
{
	char *d = strdup(dirs ? dirs : debuginfo__default_dirs());

	if (!d)
		return -ENOMEM;
	free(s->debug_dirs);
	s->debug_dirs = d;
	return 0;
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

static void free_object_list(struct object *obj)
{
	struct object *next;

	for (; obj; obj = next) {
		next = obj->next;
		object__free(obj);
	}
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	htab__free_all(&s->procs, offsetof(struct proc, node), free_proc);
	htab__free_all(&s->objs, offsetof(struct object, node), free_object);
	htab__free_all(&s->strs, offsetof(struct istr, node), free);
	free_object_list(s->vdsos);
	free_object_list(s->retired);
	free(s->debug_dirs);
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
	return proc__snapshot(s, p, 0, false);
}

int symbolizer__note_pid(struct symbolizer *s, int pid)
{
	struct proc *p;

	return note(s, pid, &p);
}

/* Is addr in one of g's mappings? *hint: the last one found (frames cluster). */
static bool covered(const struct gen *g, uint64_t addr, const struct pmap **hint)
{
	const struct pmap *m = *hint;

	if (m && addr >= m->start && addr < m->end)
		return true;
	m = find_pmap(g->maps, g->count, addr);
	if (m)
		*hint = m;
	return m;
}

int symbolizer__note_sample(struct symbolizer *s, int pid, uint64_t time_ns,
			    const uint64_t *ips, size_t n)
{
	const struct pmap *hint = NULL;
	bool leaf_miss, miss;
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
	if (now_ns() - p->refreshed_ns < (leaf_miss ? LEAF_REFRESH_NS : REFRESH_NS))
		return 0;
	/* Samples since the first leaf miss were the new code's. */
	return proc__snapshot(s, p, p->leaf_miss_ns ? p->leaf_miss_ns : time_ns + 1, false);
}

int symbolizer__note_exec(struct symbolizer *s, int pid, uint64_t time_ns)
{
	struct proc *p = proc__find(s, pid);

	if (!p)
		return note(s, pid, &p);
	return proc__snapshot(s, p, time_ns, true);
}

int symbolizer__refresh_pid(struct symbolizer *s, int pid)
{
	struct proc *p = proc__find(s, pid);

	if (!p)
		return note(s, pid, &p);
	return proc__snapshot(s, p, now_ns(), false);
}

void symbolizer__forget_pid(struct symbolizer *s, int pid)
{
	struct proc *p = proc__find(s, pid);

	if (!p)
		return;
	if (s->last == p)
		s->last = NULL;
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

/* addr's mapping in the generation serving time_ns, else in the others, newest first. */
static const struct pmap *proc__find_map(struct proc *p, uint64_t time_ns, uint64_t addr)
{
	struct gen *g = proc__gen_at(p, time_ns);
	const struct pmap *m;
	unsigned i;

	m = g ? find_pmap(g->maps, g->count, addr) : NULL;
	for (i = p->ngens; !m && i > 0; i--) {
		if (&p->gens[i - 1] != g)
			m = find_pmap(p->gens[i - 1].maps, p->gens[i - 1].count, addr);
	}
	return m;
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
	if (!m && !p->gone && now_ns() - p->refreshed_ns >= REFRESH_NS) {
		proc__snapshot(s, p, now_ns(), false);
		m = proc__find_map(p, time_ns, addr);
	}
	if (!m)
		return -ENOENT;
	out->mapped = true;
	out->module = m->module;
	out->path = m->path;
	resolve(p, m, addr, out);
	return 0;
}

int symbolizer__user(struct symbolizer *s, int pid, uint64_t addr, struct sym_info *out)
{
	return symbolizer__user_at(s, pid, UINT64_MAX, addr, out);
}
