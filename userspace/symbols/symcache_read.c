// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading an object of the symbolizer's cache (symcache_int.h): its segments,
 * symbols and DWARF descriptor, when it is opened or, deferred, after the
 * snapshot that opened it.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/debuginfo.h"
#include "symbols/srcline.h"
#include "symbols/symcache_int.h"
#include "symbols/symtab.h"
#include "util/clock.h"

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

static int load_segments(struct symobj *obj, Elf *elf)
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

int symobj__load_elf(struct symobj *obj, Elf *elf, int fd, Elf *debug, int debug_fd)
{
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -EINVAL;
	err = load_segments(obj, elf);
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

/*
 * Keep fd (ours now) for the object's lines, if the cache may hold another
 * descriptor: at the limit, an unreferenced object holding one goes first
 * (nothing can look it up any more); else the object has no lines, counted.
 */
void symobj__keep_dwarf(struct symcache *c, struct symobj *obj, int fd)
{
	if (fd < 0)
		return;
	/* Its identity now, with the symbols just read: lines from the same bytes or none. */
	if (fstat(fd, &obj->dwarf_id)) {
		close(fd);
		return;
	}
	while (c->dwarf_fds >= c->dwarf_budget && symcache__evict_cold_dwarf(c))
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
void symobj__settle(struct symcache *c, struct symobj *o)
{
	struct stat st;

	if (!o || o->pend.fd < 0)
		return;
	o->elf = false; /* set again by the read, if libelf reads it */
	c->st.deferred++;
	/* ctime too: mtime can be put back (touch -r) after a rewrite, ctime cannot. */
	if (fstat(o->pend.fd, &st) || st.st_size != o->size ||
	    st.st_mtim.tv_sec != o->mtime.tv_sec || st.st_mtim.tv_nsec != o->mtime.tv_nsec ||
	    st.st_ctim.tv_sec != o->ctime.tv_sec || st.st_ctim.tv_nsec != o->ctime.tv_nsec) {
		c->st.changed_unread++;
		symobj__drop_pending(c, o);
		return;
	}
	pend_unlink(c, o);
	symobj__read(c, o, &o->pend);
}

/*
 * obj's symbols from fd (ours), now, or later if the cache defers them and
 * has room for the descriptors (MAX_PENDING).
 */
void symobj__load_fd(struct symcache *c, struct symobj *obj, int fd, const char *path, int root_pid)
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

void symobj__drop_pending(struct symcache *c, struct symobj *o)
{
	if (o->pend.fd < 0)
		return;
	pend_unlink(c, o);
	close(o->pend.fd);
	if (o->pend.dfd >= 0)
		close(o->pend.dfd);
	o->pend.fd = o->pend.dfd = -1;
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

void symcache__set_defer(struct symcache *c, bool on)
{
	c->defer = on;
	if (!on)
		symcache__settle(c, true);
}
