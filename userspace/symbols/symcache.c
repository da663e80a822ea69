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
#include "symbols/symcache.h"
#include "tables/elfobj.h"
#include "symbols/symtab.h"
#include "util/clock.h"
#include "util/dynlib.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"

#define MAX_VDSO_SIZE (1 << 20)
/*
 * With symcache__set_defer(), a file's symbols are read after its snapshot,
 * not in it: reading them takes milliseconds to hundreds of milliseconds for
 * a big binary (cc1: 29k dynamic symbols), and a session takes the snapshot
 * on its sampling thread at the exec event, ahead of the refresh that gives
 * the new process its unwind entry. What needs the process's root (its debug
 * file) is opened at once; the object then holds its descriptors until its
 * first lookup, until it goes cold, or until symcache__settle() (the
 * session's housekeeping, after its lifecycle and table work, and within
 * SETTLE_NS while that work is busy). At most MAX_PENDING objects wait: past
 * it a file is read at once.
 */
#define MAX_PENDING 32
#define SETTLE_NS (100ull * 1000 * 1000)
/*
 * Objects whose DWARF stays reachable through an open descriptor: lines are
 * read at output time, when the file may be gone (deleted, its container
 * stopped). Past the budget (symcache__set_dwarf_files()), objects have
 * symbols but no lines: the process's descriptors are shared with perf
 * events and BPF maps.
 */

struct segment {
	uint64_t offset, vaddr, filesz;
};

/* A file's descriptors and what they hold, to read its symbols from (symobj__open_src()). */
struct symobj_src {
	int fd, dfd; /* the file, its debug file (-1: none) */
	bool is_elf, has_symtab, has_dwarf;
};

struct symobj {
	struct symobj *next; /* vdso images; objects replaced in the cache */
	/* Unreferenced objects kept for reuse, coldest first (symcache__put). */
	struct symobj *cold_prev, *cold_next;
	uint32_t refs; /* mappings of snapshots pointing at it */
	bool retired; /* replaced in objs by a newer file at its inode */
	uint64_t bytes; /* symobj__bytes() when it went cold */
	uint64_t dev, ino;
	off_t size; /* size and mtime: a different file reusing the inode */
	struct timespec mtime;
	bool elf; /* parsed: addresses convert through segs */
	struct segment *segs;
	size_t nsegs;
	struct symtab *tab; /* NULL: no symbols */
	void *image; /* vdso bytes, to share the object by content */
	size_t image_len;
	int dwarf_fd; /* the file holding its DWARF until first used; -1: none */
	struct stat dwarf_id; /* dwarf_fd's file when kept: srcline answers only while it holds */
	struct srcline *lines; /* opened at the first lookup */
	bool lines_tried;
	bool tenant; /* mapped by a process whose root is not the host's: lines from a copy */
	bool want_debug; /* no local debug file, and symbols or DWARF missing */
	bool debuginfod_tried;
	/* Opened, symbols not read yet (symobj__settle()); pend.fd -1 once read. */
	struct symobj *pend_prev, *pend_next;
	struct symobj_src pend;
	uint64_t pend_ns;
	uint8_t build_id[ELFOBJ_BUILD_ID_MAX];
	size_t build_id_len;
	char build_id_hex[ELFOBJ_BUILD_ID_HEX]; /* "" if none */
};

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

struct symcache {
	struct hashmap objs; /* struct symobj *, by (dev, ino) */
	struct symobj *vdsos;
	struct symobj *retired; /* replaced in objs, still referenced by older snapshots */
	struct symobj *cold_head, *cold_tail; /* unreferenced objects in objs, coldest first */
	struct symobj *pend_head, *pend_tail; /* opened, symbols not read yet, oldest first */
	uint64_t budget; /* bytes of cold objects kept; 0: SYMCACHE_DEFAULT_BUDGET */
	char *debug_dirs;
	bool no_lines; /* symcache__set_lines(false) */
	bool defer; /* symcache__set_defer() */
	size_t dwarf_fds; /* descriptors held by objects for their DWARF */
	size_t dwarf_budget; /* descriptors held at most (symcache__set_dwarf_files()) */
	debuginfod_client *dc; /* NULL unless asked for: never reach the network unasked */
	struct symcache_stats st;
};

static int symobj__load_segments(struct symobj *obj, Elf *elf)
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
static int symobj__load_elf(struct symobj *obj, Elf *elf, int fd, Elf *debug, int debug_fd)
{
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	err = symobj__load_segments(obj, elf);
	if (err)
		return err;
	obj->elf = true;
	obj->tab = symtab__new();
	if (!obj->tab)
		return -ENOMEM;
	err = symtab__add_elf(obj->tab, elf, fd, debug, debug_fd);
	if (err) {
		symtab__free(obj->tab);
		obj->tab = NULL;
		return err;
	}
	symtab__finish(obj->tab, false);
	return 0;
}

static bool evict_cold_dwarf(struct symcache *c);

/*
 * Keep fd (ours now) for the object's lines, if the cache may hold another
 * descriptor: at the limit, an unreferenced object holding one goes first
 * (nothing can look it up any more); else the object has no lines, counted.
 */
static void symobj__keep_dwarf(struct symcache *c, struct symobj *obj, int fd)
{
	if (fd < 0)
		return;
	/* Its identity now, with the symbols just read: lines from the same bytes or none. */
	if (fstat(fd, &obj->dwarf_id)) {
		close(fd);
		return;
	}
	while (c->dwarf_fds >= c->dwarf_budget && evict_cold_dwarf(c))
		;
	if (c->dwarf_fds < c->dwarf_budget) {
		obj->dwarf_fd = fd;
		c->dwarf_fds++;
		return;
	}
	c->st.dwarf_refused++;
	close(fd);
}

/*
 * What reading a file's symbols takes, found when it is opened: cheap (its
 * headers, notes and section names). A file without .symtab gets its debug
 * file's, looked up under root_pid's root, which goes with its last process:
 * so it is opened now; so is the debug file of a file without DWARF (for
 * lines), when lines are wanted. The symbols themselves are read by
 * symobj__read(), now or later (MAX_PENDING).
 */
static void symobj__open_src(struct symcache *c, struct symobj *obj, int fd, const char *path,
			     int root_pid, struct symobj_src *src)
{
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL), *debug;

	*src = (struct symobj_src){ .fd = fd, .dfd = -1 };
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return;
	}
	src->is_elf = true;
	src->has_symtab = symtab__elf_has_symtab(elf);
	src->has_dwarf = c->no_lines || srcline__elf_has_dwarf(elf);
	obj->build_id_len = elfobj__build_id(elf, obj->build_id, sizeof(obj->build_id));
	elfobj__hex(obj->build_id, obj->build_id_len, obj->build_id_hex);
	if (!src->has_symtab || !src->has_dwarf) {
		src->dfd = debuginfo__open(elf, path, root_pid, c->debug_dirs, NULL, 0);
		debug = src->dfd >= 0 ? elf_begin(src->dfd, ELF_C_READ, NULL) : NULL;
		obj->want_debug = !debug;
		if (!debug && src->dfd >= 0) {
			close(src->dfd);
			src->dfd = -1;
		}
		elf_end(debug);
	}
	elf_end(elf);
}

/* obj's segments, symbols and DWARF descriptor from src, whose descriptors it closes. */
static int symobj__read(struct symcache *c, struct symobj *obj, struct symobj_src *src)
{
	Elf *elf = elf_begin(src->fd, ELF_C_READ, NULL);
	Elf *debug = src->dfd >= 0 ? elf_begin(src->dfd, ELF_C_READ, NULL) : NULL;
	int err;

	/* The object's own .symtab, when it has one, as before lines were read. */
	err = symobj__load_elf(obj, elf, src->fd, src->has_symtab ? NULL : debug, src->dfd);
	if (!err && !c->no_lines) {
		if (src->has_dwarf)
			symobj__keep_dwarf(c, obj, fcntl(src->fd, F_DUPFD_CLOEXEC, 0));
		else if (debug && srcline__elf_has_dwarf(debug))
			symobj__keep_dwarf(c, obj, fcntl(src->dfd, F_DUPFD_CLOEXEC, 0));
	}
	elf_end(debug);
	elf_end(elf);
	if (src->dfd >= 0)
		close(src->dfd);
	close(src->fd);
	src->fd = src->dfd = -1;
	return err;
}

static void pend_unlink(struct symcache *c, struct symobj *o)
{
	if (o->pend_prev)
		o->pend_prev->pend_next = o->pend_next;
	else
		c->pend_head = o->pend_next;
	if (o->pend_next)
		o->pend_next->pend_prev = o->pend_prev;
	else
		c->pend_tail = o->pend_prev;
	o->pend_prev = o->pend_next = NULL;
	c->st.pending--;
}

/*
 * Read o's symbols now, if they wait. A file changed since it was opened
 * (rewritten in place: its size or mtime moved) no longer holds the bytes
 * its processes mapped: no symbols, rather than another program's.
 */
static void symobj__settle(struct symcache *c, struct symobj *o)
{
	struct stat st;

	if (!o || o->pend.fd < 0)
		return;
	pend_unlink(c, o);
	o->elf = false; /* set again by the read, if libelf reads it */
	c->st.deferred++;
	if (fstat(o->pend.fd, &st) || st.st_size != o->size ||
	    st.st_mtim.tv_sec != o->mtime.tv_sec || st.st_mtim.tv_nsec != o->mtime.tv_nsec) {
		c->st.changed_unread++;
		if (o->pend.dfd >= 0)
			close(o->pend.dfd);
		close(o->pend.fd);
		o->pend.fd = o->pend.dfd = -1;
		return;
	}
	symobj__read(c, o, &o->pend);
}

/* Its descriptor for DWARF (kept, or owned by its srcline) goes back to the cache's count. */
static void symobj__free(struct symcache *c, struct symobj *obj)
{
	if (!obj)
		return;
	if (obj->pend.fd >= 0) {
		pend_unlink(c, obj);
		close(obj->pend.fd);
		if (obj->pend.dfd >= 0)
			close(obj->pend.dfd);
	}
	if (obj->lines || obj->dwarf_fd >= 0)
		c->dwarf_fds--;
	c->st.lines_bytes -= srcline__answer_bytes(obj->lines);
	symtab__free(obj->tab);
	srcline__free(obj->lines);
	if (obj->dwarf_fd >= 0)
		close(obj->dwarf_fd);
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

/* The coldest unreferenced object holding a DWARF descriptor goes; false: there is none. */
static bool evict_cold_dwarf(struct symcache *c)
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
	while (c->dwarf_fds > c->dwarf_budget && evict_cold_dwarf(c))
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
 * The file behind a mapping, without reading it: its map_files link, else
 * its path inside the process's root (safely, as it will be opened).
 */
static int map_stat(int pid, const struct procmap *m, struct stat *st)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	if (stat(path, st) == 0)
		return 0;
	fd = procmap__open_in_root(pid, m->path, false, st);
	if (fd < 0)
		return fd;
	close(fd);
	return st->st_ino == m->inode ? 0 : -ENOENT;
}

static bool symobj__same_file(const struct symobj *obj, const struct stat *st)
{
	return obj->size == st->st_size && obj->mtime.tv_sec == st->st_mtim.tv_sec &&
	       obj->mtime.tv_nsec == st->st_mtim.tv_nsec;
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
 * obj's symbols from fd (ours), now, or later if the cache defers them and
 * has room for the descriptors (MAX_PENDING).
 */
static void symobj__load_fd(struct symcache *c, struct symobj *obj, int fd, const char *path,
			    int root_pid)
{
	struct symobj_src src;

	symobj__open_src(c, obj, fd, path, root_pid, &src);
	if (!c->defer || !src.is_elf || c->st.pending >= MAX_PENDING) {
		symobj__read(c, obj, &src);
		return;
	}
	obj->pend = src;
	obj->pend_ns = clock__mono_ns();
	obj->elf = true; /* libelf took it for ELF: the snapshot tells it from JIT code */
	obj->pend_prev = c->pend_tail;
	if (c->pend_tail)
		c->pend_tail->pend_next = obj;
	else
		c->pend_head = obj;
	c->pend_tail = obj;
	c->st.pending++;
}

void symcache__settle(struct symcache *c, bool all)
{
	uint64_t now = clock__mono_ns();

	while (c->pend_head && (all || now - c->pend_head->pend_ns >= SETTLE_NS))
		symobj__settle(c, c->pend_head);
}

void symcache__settle_obj(struct symcache *c, struct symobj *o)
{
	symobj__settle(c, o);
}

struct symobj *symcache__file(struct symcache *c, int pid, int root_pid, bool tenant,
			      const struct procmap *m)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	uint32_t h = file_hash(dev, m->inode);
	const struct file_key key = { dev, m->inode };
	struct symobj *obj;
	struct stat st;
	int64_t found;
	bool known, was_tenant = false;
	int fd;

	known = map_stat(pid, m, &st) == 0;
	found = hashmap__find(&c->objs, h, file_eq, NULL, &key);
	if (found >= 0) {
		obj = HASHMAP_TO_PTR(found);
		if (!known || symobj__same_file(obj, &st)) {
			if (!obj->refs++)
				cold_unlink(c, obj);
			if (tenant && !obj->tenant && tenant_may_write(pid, m))
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
	fd = procmap__open(pid, m);
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
	obj->dwarf_fd = -1;
	obj->pend.fd = obj->pend.dfd = -1;
	obj->tenant = was_tenant || (tenant && tenant_may_write(pid, m));
	symobj__load_fd(c, obj, fd, m->path, root_pid); /* fd is its now */
	if (hashmap__add(&c->objs, h, HASHMAP_PTR(obj))) {
		symobj__free(c, obj);
		return NULL;
	}
	obj->refs = 1;
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

void symcache__set_defer(struct symcache *c, bool on)
{
	c->defer = on;
	if (!on)
		symcache__settle(c, true);
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
