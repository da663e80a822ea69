/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Between the object cache (symcache.c: keys, references, the budgets,
 * lines) and the reading of an object's symbols (symcache_read.c: now, or
 * after its snapshot). Not for other modules: they use symcache.h.
 */
#ifndef SFBPF_SYMCACHE_INT_H
#define SFBPF_SYMCACHE_INT_H

#include <elfutils/debuginfod.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "symbols/symcache.h"
#include "tables/elfobj.h"
#include "util/hashmap.h"

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
	uint64_t dev, ino; /* as fstat gives them: a btrfs subvolume's own device */
	off_t size; /* size, mtime and ctime: the file changed, or another reusing the inode */
	struct timespec mtime, ctime;
	/*
	 * Whose word its identity is (util/fileident.h): the kernel's, or its
	 * author's (an image, FUSE, overlayfs), which names the file only within
	 * the mount it was opened through (mount: the kernel's unique number for
	 * it, 6.8 and later) or, where the kernel numbers no mount so, while
	 * pin_fd holds the file open: while referenced. Unreferenced, such an
	 * object without a mount number is freed, never kept cold (a pin then
	 * would keep the image from being unmounted).
	 */
	bool kept;
	uint64_t mount;
	int pin_fd;
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

struct symcache {
	struct hashmap objs; /* struct symobj *, by (dev, ino) as fstat gives them */
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

/*
 * Symbols from debug (the separate debug file, may be NULL) or elf. On failure
 * the object stays, without symbols: not retried for every process.
 */
int symobj__load_elf(struct symobj *obj, Elf *elf, int fd, Elf *debug, int debug_fd);
/* Keep fd (ours now) for obj's lines, within the descriptors' budget (symcache.c). */
void symobj__keep_dwarf(struct symcache *c, struct symobj *obj, int fd);
/* obj's symbols from fd (ours), now or after its snapshot (symcache__set_defer()). */
void symobj__load_fd(struct symcache *c, struct symobj *obj, int fd, const char *path,
		     int root_pid);
/* o's symbols now, if they wait; NULL: nothing. */
void symobj__settle(struct symcache *c, struct symobj *o);
/* o's descriptors, if its symbols wait: closed, o off the list (symobj__free()). */
void symobj__drop_pending(struct symcache *c, struct symobj *o);
/* The coldest unreferenced object holding a DWARF descriptor goes; false: there is none. */
bool symcache__evict_cold_dwarf(struct symcache *c);

#endif /* SFBPF_SYMCACHE_INT_H */
