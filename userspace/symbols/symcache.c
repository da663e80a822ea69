// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The symbolizer's object cache (see symcache.h): ELF files by device and
 * inode, vdso images by content, each parsed once into segments and a symtab.
 */
#include <errno.h>
#include <fcntl.h>
#include <elfutils/debuginfod.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "procs/procmaps.h"
#include "symbols/debuginfo.h"
#include "symbols/srcline.h"
#include "symbols/symcache_int.h"
#include "tables/elfobj.h"
#include "symbols/symtab.h"
#include "util/dynlib.h"
#include "util/fileident.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"

#define MAX_VDSO_SIZE (1 << 20)

/* libdebuginfod, loaded when asked for (util/dynlib.h: it brings a libcurl). */
static struct {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_end) *end;
} di;

static const struct dynlib_fn di_fns[] = {
	{ "debuginfod_begin", (void **)&di.begin },
	{ "debuginfod_find_debuginfo", (void **)&di.find_debuginfo },
	{ "debuginfod_end", (void **)&di.end },
};

/* Its descriptor for DWARF (kept, or owned by its srcline) goes back to the cache's count. */
static void symobj__free(struct symcache *c, struct symobj *obj)
{
	if (!obj)
		return;
	symobj__drop_pending(c, obj);
	if (obj->lines || obj->dwarf_fd >= 0)
		c->dwarf_fds--;
	c->st.lines_bytes -= srcline__answer_bytes(obj->lines);
	symtab__free(obj->tab);
	srcline__free(obj->lines);
	if (obj->dwarf_fd >= 0)
		close(obj->dwarf_fd);
	if (obj->pin_fd >= 0)
		close(obj->pin_fd);
	free(obj->segs);
	free(obj->image);
	free(obj);
}

static void symobj__free_list(struct symcache *c, struct symobj *obj)
{
	struct symobj *next;

	for (; obj; obj = next) {
		next = obj->next;
		symobj__free(c, obj);
	}
}

/*
 * What an object holds: its source lines' heap as srcline counts it, its
 * symbols estimated from their number (symtab keeps no byte total: 16 bytes a
 * symbol plus a name of ~32). Taken once, when it goes cold: nothing looks it
 * up then, so it does not change while it counts.
 */
static uint64_t symobj__bytes(const struct symobj *o)
{
	uint64_t b = sizeof(*o) + o->nsegs * sizeof(*o->segs) + o->image_len;

	if (o->tab)
		b += (uint64_t)symtab__count(o->tab) * 48;
	if (o->lines)
		b += srcline__bytes(o->lines);
	return b;
}

/* File offset -> ELF virtual address through the PT_LOAD covering it. */
static uint64_t symobj__vaddr(const struct symobj *obj, uint64_t off)
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

const char *symobj__build_id(const struct symobj *o)
{
	return o ? o->build_id_hex : "";
}

bool symobj__is_elf(const struct symobj *o)
{
	return o && o->elf;
}

const char *symobj__find(struct symobj *o, uint64_t off, uint64_t *elf_addr, uint64_t *offset)
{
	*elf_addr = symobj__vaddr(o, off);
	return o->tab ? symtab__find(o->tab, *elf_addr, offset) : NULL;
}

/*
 * o's debug file through debuginfod, once, when asked for and no local one
 * was found. The answer must carry o's build-id: a server's mistake must not
 * put another program's lines on this one.
 */
static void symobj__fetch_debug(struct symcache *c, struct symobj *o)
{
	uint8_t id[ELFOBJ_BUILD_ID_MAX];
	const char *hex = o->build_id_hex;
	char *path = NULL;
	Elf *elf;
	int fd;
	bool ok;

	if (!c->dc || !o->want_debug || o->debuginfod_tried || !o->build_id_len ||
	    o->dwarf_fd >= 0 || o->lines)
		return;
	o->debuginfod_tried = true;
	fd = di.find_debuginfo(c->dc, o->build_id, (int)o->build_id_len, &path);
	if (fd < 0) {
		pr_info("debuginfod: no debug file for build-id %s: %s\n", hex, strerror(-fd));
		return;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ok = elf && elfobj__build_id(elf, id, sizeof(id)) == o->build_id_len &&
	     !memcmp(id, o->build_id, o->build_id_len) && srcline__elf_has_dwarf(elf);
	elf_end(elf);
	if (!ok) {
		pr_warn("debuginfod: %s is not the debug file of build-id %s: ignored\n",
			path ? path : "(answer)", hex);
		close(fd);
	} else {
		pr_info("debuginfod: build-id %s: %s\n", hex, path ? path : "(answer)");
		symobj__keep_dwarf(c, o, fd);
	}
	free(path);
}

/* The object keeping the most source-line answers, or NULL when none keeps any. */
static struct symobj *lines_biggest(struct symcache *c)
{
	struct symobj *o, *big = NULL;
	uint64_t v, most = 0;
	size_t it = 0;

	while (hashmap__next(&c->objs, &it, &v)) {
		o = HASHMAP_TO_PTR(v);
		if (srcline__answer_bytes(o->lines) > most)
			most = srcline__answer_bytes(o->lines), big = o;
	}
	for (o = c->retired; o; o = o->next)
		if (srcline__answer_bytes(o->lines) > most)
			most = srcline__answer_bytes(o->lines), big = o;
	return big;
}

/*
 * The answers of objects in use are kept as long as they are, one per address
 * ever asked: over the budget, the biggest caches forget theirs (their next
 * lookups read the DWARF again) until a quarter of the budget is free, so
 * that a trim is rare and a scan of the objects each time is cheap.
 */
static void lines_trim(struct symcache *c)
{
	struct symobj *big;

	while (c->st.lines_bytes > c->budget / 4 * 3 && (big = lines_biggest(c))) {
		c->st.lines_bytes -= srcline__answer_bytes(big->lines);
		srcline__forget_answers(big->lines);
		c->st.lines_forgotten++;
	}
}

int symcache__lines(struct symcache *c, struct symobj *o, uint64_t elf_addr,
		    const struct srcline_frame **frames)
{
	uint64_t before;
	int n;

	*frames = NULL;
	symobj__settle(c, o);
	if (!o || !o->elf || c->no_lines)
		return 0;
	if (!o->lines && !o->lines_tried) {
		symobj__fetch_debug(c, o);
		o->lines_tried = true;
		if (o->dwarf_fd >= 0) {
			/* srcline owns (and counts) the descriptor now, even on failure. */
			o->lines = srcline__new(o->dwarf_fd, &o->dwarf_id, o->tenant);
			o->dwarf_fd = -1;
			if (!o->lines)
				c->dwarf_fds--;
		}
	}
	if (!o->lines)
		return 0;
	/* Before the lookup: the frames it hands out must outlive a forgetting. */
	if (c->st.lines_bytes > c->budget)
		lines_trim(c);
	before = srcline__answer_bytes(o->lines);
	n = srcline__find(o->lines, elf_addr, frames);
	c->st.lines_bytes += srcline__answer_bytes(o->lines) - before;
	return n;
}

void symcache__release_lines(struct symcache *c, uint64_t unused_since_ns)
{
	size_t it = 0;
	uint64_t v;
	struct symobj *o;

	while (hashmap__next(&c->objs, &it, &v))
		srcline__release(((struct symobj *)HASHMAP_TO_PTR(v))->lines, unused_since_ns);
	for (o = c->retired; o; o = o->next)
		srcline__release(o->lines, unused_since_ns);
}

/* ---- references and the budget of cold objects ---- */

static uint32_t file_hash(uint64_t dev, uint64_t ino)
{
	return (uint32_t)hash__mix64(hash__mix64(dev) ^ ino);
}

static void cold_unlink(struct symcache *c, struct symobj *o)
{
	if (o->cold_prev)
		o->cold_prev->cold_next = o->cold_next;
	else
		c->cold_head = o->cold_next;
	if (o->cold_next)
		o->cold_next->cold_prev = o->cold_prev;
	else
		c->cold_tail = o->cold_prev;
	o->cold_prev = o->cold_next = NULL;
	c->st.cold--;
	c->st.cold_bytes -= o->bytes;
}

static void cold_push(struct symcache *c, struct symobj *o)
{
	o->bytes = symobj__bytes(o);
	o->cold_prev = c->cold_tail;
	o->cold_next = NULL;
	if (c->cold_tail)
		c->cold_tail->cold_next = o;
	else
		c->cold_head = o;
	c->cold_tail = o;
	c->st.cold++;
	c->st.cold_bytes += o->bytes;
}

static bool obj_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return HASHMAP_TO_PTR(val) == key;
}

/* A cold object out of the cache: nothing refers to it. */
static void evict(struct symcache *c, struct symobj *o)
{
	cold_unlink(c, o);
	hashmap__del(&c->objs, file_hash(o->dev, o->ino), obj_eq, NULL, o);
	c->st.evicted++;
	symobj__free(c, o);
}

bool symcache__evict_cold_dwarf(struct symcache *c)
{
	struct symobj *o;

	for (o = c->cold_head; o; o = o->cold_next) {
		if (o->lines || o->dwarf_fd >= 0) {
			evict(c, o);
			return true;
		}
	}
	return false;
}

void symcache__hold(struct symobj *o)
{
	if (o && o->refs)
		o->refs++;
}

void symcache__put(struct symcache *c, struct symobj *o)
{
	struct symobj **pp;

	if (!o || !o->refs || --o->refs)
		return;
	if (o->image) /* vdso images: one per kernel, kept */
		return;
	if (o->retired) {
		for (pp = &c->retired; *pp && *pp != o; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = o->next;
		symobj__free(c, o);
		return;
	}
	/* An author's identity, unpinned and of no mount number, names nothing: not kept. */
	if (!o->kept && !o->mount) {
		hashmap__del(&c->objs, file_hash(o->dev, o->ino), obj_eq, NULL, o);
		symobj__free(c, o);
		return;
	}
	symobj__settle(c, o); /* a cold object is counted, and holds no waiting descriptor */
	cold_push(c, o);
	while (c->cold_head && c->st.cold_bytes > c->budget)
		evict(c, c->cold_head);
}

void symcache__set_budget(struct symcache *c, uint64_t bytes)
{
	c->budget = bytes ? bytes : SYMCACHE_DEFAULT_BUDGET;
	while (c->cold_head && c->st.cold_bytes > c->budget)
		evict(c, c->cold_head);
}

void symcache__set_dwarf_files(struct symcache *c, uint64_t n)
{
	c->dwarf_budget = n ? n : SYMCACHE_DEFAULT_DWARF_FILES;
	/* Objects in use keep theirs: past a lowered budget, new objects get none until they go. */
	while (c->dwarf_fds > c->dwarf_budget && symcache__evict_cold_dwarf(c))
		;
}

void symcache__stats(const struct symcache *c, struct symcache_stats *out)
{
	const struct symobj *o;

	*out = c->st;
	out->objects = hashmap__size(&c->objs);
	out->retired = 0;
	for (o = c->retired; o; o = o->next)
		out->retired++;
	out->dwarf_fds = c->dwarf_fds;
	out->dwarf_budget = c->dwarf_budget;
	out->budget = c->budget;
}

/*
 * The file behind mapping m of pid, opened (its map_files link, else its
 * path inside the process's root), if it is the inode the maps line names;
 * st: what fstat says of it.
 */
static int open_mapped(int pid, const struct procmap *m, struct stat *st)
{
	int fd = procmap__open(pid, m);

	if (fd < 0)
		return fd;
	if (fstat(fd, st) || st->st_ino != m->inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * Whether obj is the file st (kept: its identity is the kernel's; mount: the
 * one it was opened through) describes: the same size, mtime and ctime (a
 * rewrite in place moves ctime even when mtime is put back), its identity
 * the kernel's, or its author's within the same mount or while obj still
 * holds the file open.
 */
static bool symobj__same_file(const struct symobj *obj, const struct stat *st, bool kept,
			      uint64_t mount)
{
	return obj->kept == kept && (kept || (mount && obj->mount == mount) || obj->pin_fd >= 0) &&
	       obj->size == st->st_size && obj->mtime.tv_sec == st->st_mtim.tv_sec &&
	       obj->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       obj->ctime.tv_sec == st->st_ctim.tv_sec && obj->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

/* A mapped file's identity, the cache's key. */
struct file_key {
	uint64_t dev, ino;
};

static bool file_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct symobj *obj = HASHMAP_TO_PTR(val);
	const struct file_key *k = key;

	(void)ctx;
	return obj->dev == k->dev && obj->ino == k->ino;
}

/* A tenant may rewrite obj's file: lines from a copy, now and for every process mapping it. */
static void symobj__tenant(struct symobj *obj)
{
	obj->tenant = true;
	srcline__set_tenant(obj->lines);
}

/*
 * Whether the tenant whose root pid is in may write m's file: the file is
 * reachable there by its name (the inode the maps line names) on a mount that
 * is not read-only (a volume bound writable, a writable image layer), or it
 * is deleted (no name to judge by). A host file a daemon mapped before it
 * chrooted (privilege separation), or one bound read-only, is not its to
 * write. Judged once an object is known to be the tenant's: never again.
 * The maps line names the file from the root of pid's mount namespace: under
 * a chroot, the part below the root (readlink of /proc/PID/root, as seen
 * from that namespace) is its name inside it; after a pivot_root the root is
 * the namespace's ("/").
 */
static bool tenant_may_write(int pid, const struct procmap *m)
{
	char link[32], root[PATH_MAX];
	const char *name = m->path;
	struct statvfs vfs;
	struct stat st;
	bool writable;
	ssize_t n;
	int fd;

	if (m->flags & PROCMAP_F_DELETED)
		return true;
	snprintf(link, sizeof(link), "/proc/%d/root", pid);
	n = readlink(link, root, sizeof(root) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(root) - 1)
		return true; /* no root to judge by */
	root[n] = '\0';
	if (strcmp(root, "/")) {
		if (strncmp(name, root, n) || name[n] != '/')
			return false; /* outside its root: mapped before it chrooted */
		name += n;
	}
	fd = procmap__open_in_root(pid, name, true, &st);
	if (fd < 0)
		return false;
	writable = st.st_ino == m->inode && !fstatvfs(fd, &vfs) && !(vfs.f_flag & ST_RDONLY);
	close(fd);
	return writable;
}

/*
 * The object for fd, open on the file st describes (taken: closed, or kept
 * by the object), found or made. may_write: a tenant may rewrite the file
 * in place (lines from a copy); asked only of an object not yet the
 * tenant's, with m's pid and line, or always when m is NULL.
 */
static struct symobj *symcache__fd(struct symcache *c, int fd, const struct stat *st,
				   const char *path, int root_pid, bool tenant, int pid,
				   const struct procmap *m)
{
	struct file_key key = { (uint64_t)st->st_dev, (uint64_t)st->st_ino };
	uint32_t h = file_hash(key.dev, key.ino);
	bool kept = fileident__kernel_kept(fd, st), was_tenant = false;
	uint64_t mount = kept ? 0 : fileident__mount(fd);
	struct symobj *obj;
	int64_t found;

	found = hashmap__find(&c->objs, h, file_eq, NULL, &key);
	if (found >= 0) {
		obj = HASHMAP_TO_PTR(found);
		if (symobj__same_file(obj, st, kept, mount)) {
			close(fd);
			if (!obj->refs++)
				cold_unlink(c, obj);
			if (tenant && !obj->tenant && (!m || tenant_may_write(pid, m)))
				symobj__tenant(obj);
			return obj;
		}
		/* Snapshots still pointing at it keep it until they let go. */
		was_tenant = obj->tenant; /* rewritten in place: still a tenant's file */
		hashmap__del(&c->objs, h, file_eq, NULL, &key);
		c->st.replaced++;
		if (!obj->refs) {
			cold_unlink(c, obj);
			symobj__free(c, obj);
		} else {
			obj->retired = true;
			obj->next = c->retired;
			c->retired = obj;
		}
	}
	obj = calloc(1, sizeof(*obj));
	if (!obj) {
		close(fd);
		return NULL;
	}
	obj->dev = key.dev;
	obj->ino = key.ino;
	obj->size = st->st_size;
	obj->mtime = st->st_mtim;
	obj->ctime = st->st_ctim;
	obj->kept = kept;
	obj->mount = mount;
	obj->pin_fd = kept || mount ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
	obj->dwarf_fd = -1;
	obj->pend.fd = obj->pend.dfd = -1;
	obj->tenant = was_tenant || (tenant && (!m || tenant_may_write(pid, m)));
	symobj__load_fd(c, obj, fd, path, root_pid); /* fd is its now */
	if ((!kept && !mount && obj->pin_fd < 0) || hashmap__add(&c->objs, h, HASHMAP_PTR(obj))) {
		symobj__free(c, obj);
		return NULL;
	}
	obj->refs = 1;
	return obj;
}

struct symobj *symcache__file(struct symcache *c, int pid, int root_pid, bool tenant,
			      const struct procmap *m)
{
	struct stat st;
	int fd;

	/*
	 * Keyed by what fstat says, not the maps line: on btrfs the line has
	 * the filesystem's device, shared by every subvolume, each of which
	 * numbers its inodes from 256. A file that cannot be checked now (its
	 * process gone) gets nothing cached: its maps line alone could be
	 * another subvolume's file.
	 */
	fd = open_mapped(pid, m, &st);
	if (fd < 0)
		return NULL;
	return symcache__fd(c, fd, &st, m->path, root_pid, tenant, pid, m);
}

/* Whether st is the file the kernel's identity st5 (symcache__known()) describes. */
static bool same_identity(const struct stat *st, const uint64_t st5[5])
{
	return (uint64_t)st->st_dev == st5[0] && (uint64_t)st->st_ino == st5[1] &&
	       (uint64_t)st->st_size == st5[2] &&
	       (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec ==
		       st5[3] &&
	       (uint64_t)st->st_ctim.tv_sec * 1000000000ull + (uint64_t)st->st_ctim.tv_nsec ==
		       st5[4];
}

struct symobj *symcache__kernel_file(struct symcache *c, const char *path, const uint64_t st5[5])
{
	struct symobj *obj = symcache__known(c, st5);
	struct stat st;
	int fd;

	if (obj || !path || path[0] != '/')
		return obj;
	/*
	 * The name is another namespace's, maybe a tenant's: here it may be a
	 * device, whose open alone acts (a watchdog's arms it): opened only if
	 * a regular file.
	 */
	fd = fileident__open_regular(path, &st);
	if (fd < 0)
		return NULL;
	if (!same_identity(&st, st5) || !fileident__kernel_kept(fd, &st)) {
		close(fd);
		return NULL;
	}
	/* Whose root and mounts it was mapped under is gone with its process: a tenant's, maybe. */
	return symcache__fd(c, fd, &st, path, 0, true, 0, NULL);
}

struct symobj *symcache__known(struct symcache *c, const uint64_t st[5])
{
	struct file_key key = { st[0], st[1] };
	struct symobj *obj;
	int64_t found;

	found = hashmap__find(&c->objs, file_hash(key.dev, key.ino), file_eq, NULL, &key);
	if (found < 0)
		return NULL;
	obj = HASHMAP_TO_PTR(found);
	if (!obj->kept || obj->retired || (uint64_t)obj->size != st[2] ||
	    (uint64_t)obj->mtime.tv_sec * 1000000000ull + (uint64_t)obj->mtime.tv_nsec != st[3] ||
	    (uint64_t)obj->ctime.tv_sec * 1000000000ull + (uint64_t)obj->ctime.tv_nsec != st[4])
		return NULL;
	if (!obj->refs++)
		cold_unlink(c, obj);
	return obj;
}

struct symobj *symcache__vdso(struct symcache *c, int pid, const struct procmap *m)
{
	size_t len = m->end - m->start;
	struct symobj *obj;
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
	for (obj = c->vdsos; obj; obj = obj->next) {
		if (obj->image_len == len && memcmp(obj->image, img, len) == 0) {
			free(img);
			obj->refs++;
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
	obj->dwarf_fd = -1;
	obj->pin_fd = -1;
	obj->pend.fd = obj->pend.dfd = -1;
	obj->refs = 1;
	elf = elf_memory(img, len);
	if (elf) {
		obj->build_id_len = elfobj__build_id(elf, obj->build_id, sizeof(obj->build_id));
		elfobj__hex(obj->build_id, obj->build_id_len, obj->build_id_hex);
	}
	symobj__load_elf(obj, elf, -1, NULL, -1);
	elf_end(elf);
	obj->next = c->vdsos;
	c->vdsos = obj;
	return obj;
}

struct symcache *symcache__new(void)
{
	struct symcache *c;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c) {
		c->budget = SYMCACHE_DEFAULT_BUDGET;
		c->dwarf_budget = SYMCACHE_DEFAULT_DWARF_FILES;
		c->debug_dirs = strdup(debuginfo__default_dirs());
	}
	if (!c || !c->debug_dirs) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

int symcache__set_debug_dirs(struct symcache *c, const char *dirs)
{
	char *d = strdup(dirs ? dirs : debuginfo__default_dirs());

	if (!d)
		return -ENOMEM;
	free(c->debug_dirs);
	c->debug_dirs = d;
	return 0;
}

void symcache__set_lines(struct symcache *c, bool on)
{
	c->no_lines = !on;
}

int symcache__set_debuginfod(struct symcache *c, bool on)
{
	if (!on || c->dc) {
		if (!on && c->dc) {
			di.end(c->dc);
			c->dc = NULL;
		}
		return 0;
	}
	if (dynlib__load("libdebuginfod.so.1", di_fns, sizeof(di_fns) / sizeof(di_fns[0])))
		return -ENOENT;
	c->dc = di.begin();
	return c->dc ? 0 : -ENOMEM;
}

void symcache__free(struct symcache *c)
{
	if (!c)
		return;
	size_t it = 0;
	uint64_t v;

	while (hashmap__next(&c->objs, &it, &v))
		symobj__free(c, HASHMAP_TO_PTR(v));
	hashmap__free(&c->objs);
	symobj__free_list(c, c->vdsos);
	symobj__free_list(c, c->retired);
	free(c->debug_dirs);
	if (c->dc)
		di.end(c->dc);
	free(c);
}
