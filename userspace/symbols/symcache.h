/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The symbolizer's object cache: one symobj per ELF file or vdso image, with
 * its PT_LOAD segments and function symbols (symtab.h; a separate debug file's
 * when the file has no .symtab, debuginfo.h), shared by every process that
 * maps it, and the source lines of its DWARF (srcline.h): from the file, or
 * from its debug file (debuginfo.h), or, only when asked for, fetched by
 * build-id through debuginfod ($DEBUGINFOD_URLS; libdebuginfod's cache).
 *
 * Files are keyed by device and inode as fstat gives them (a btrfs
 * subvolume's own device), checked against size, mtime and ctime (a rebuilt
 * binary reusing the inode replaces the cached object, which stays alive for
 * the snapshots still pointing at it); nothing cached is used for a file
 * that cannot be opened and checked now. An identity its author chose (an
 * image, FUSE, overlayfs: util/fileident.h) names its object only while the
 * object holds the file open, which it does while referenced: such an
 * object is freed with its last reference, never kept cold. A vdso image is read from
 * the process's memory and shared by content. Files are opened through
 * procmap__open() (/proc/PID/map_files, else the path inside /proc/PID/root).
 *
 * Lifecycle: symcache__new(), symcache__file()/symcache__vdso() while the
 * processes live (objects are opened while their files are reachable; with
 * symcache__set_defer(), their symbols are read from that descriptor later),
 * lookups at any time after, symcache__free() frees every object. Each
 * getter's answer is a reference: symcache__put() it when the mapping that
 * holds it goes. An object no reference holds ("cold") stays cached for the
 * next process mapping its file, within a budget of memory: past it the
 * coldest go. An object replaced by a changed file is freed with its last
 * reference.
 * Errors: symcache__new() returns NULL + errno; the getters return NULL
 * when there is no readable object (not cached: another process may reach it).
 */
#ifndef SFBPF_SYMCACHE_H
#define SFBPF_SYMCACHE_H

#include <stdbool.h>
#include <stdint.h>

struct procmap;
struct srcline_frame;
struct symcache;
struct symobj;

/* Cold objects kept when no budget is set (the session sets one that follows the machine). */
#define SYMCACHE_DEFAULT_BUDGET (64ull << 20)
/* DWARF descriptors kept when no budget is set: a quarter of the usual limit of 1024. */
#define SYMCACHE_DEFAULT_DWARF_FILES 256

struct symcache_stats {
	uint64_t objects; /* cached files (gauge) */
	uint64_t cold; /* of those, referenced by no snapshot (gauge) */
	uint64_t cold_bytes; /* their estimated memory (gauge) */
	uint64_t budget; /* what cold objects may hold (gauge) */
	uint64_t retired; /* replaced by a changed file, still referenced (gauge) */
	uint64_t evicted; /* cold objects freed for the budget or a DWARF descriptor */
	uint64_t replaced; /* objects replaced by a changed file */
	uint64_t dwarf_fds; /* descriptors kept for DWARF (gauge) */
	uint64_t dwarf_budget; /* at most that many (gauge) */
	uint64_t dwarf_refused; /* objects left without lines: no descriptor to spare */
	uint64_t lines_bytes; /* source-line answers every object keeps (gauge, within budget) */
	uint64_t lines_forgotten; /* objects whose answers were forgotten for the budget */
	uint64_t pending; /* opened, their symbols not read yet (gauge) */
	uint64_t deferred; /* objects whose symbols were read after their snapshot */
	uint64_t changed_unread; /* of those, files changed meanwhile: left without symbols */
};

struct symcache *symcache__new(void);
void symcache__free(struct symcache *c);
/* ':'-separated debug directories (NULL: debuginfo__default_dirs()), for objects loaded later. */
int symcache__set_debug_dirs(struct symcache *c, const char *dirs);

/* Source lines for objects loaded from now on (default: on). */
void symcache__set_lines(struct symcache *c, bool on);
/*
 * Fetch missing debug files through debuginfod (off by default: a root
 * profiler must not reach the network unasked). 0, -ENOENT (libdebuginfod
 * cannot be loaded) or -ENOMEM.
 */
int symcache__set_debuginfod(struct symcache *c, bool on);

/*
 * The object behind file mapping m of pid. root_pid: the process whose root
 * its paths resolve under (debug files by path, debuginfo.h), 0 for ours.
 * tenant: pid's root is not the host's (a container, a chroot), whose root
 * may rewrite the file in place whatever its owner and mode say, if the file
 * is reachable in that root on a writable mount: its DWARF is then read from
 * a copy from then on, for every process that maps it, and for the file's
 * next bytes if it is rewritten in place.
 */
struct symobj *symcache__file(struct symcache *c, int pid, int root_pid, bool tenant,
			      const struct procmap *m);
/*
 * The object already known for the file st describes (device and inode as
 * fstat gives them, size, mtime and ctime in ns, as obj_key__stat() gives
 * them), with a reference, when its identity is the kernel's and still the
 * same: for a process gone before its mappings were read, whose files the
 * kernel identified for it (vmafind.h). NULL otherwise: nothing is opened.
 */
struct symobj *symcache__known(struct symcache *c, const uint64_t st[5]);
/*
 * symcache__known(), else the file at path (as the loader named it) opened
 * now, if it is still exactly st: a process gone before its samples were
 * read, whose files no process read alive mapped (a short-lived program's
 * own binary, a library only it loaded). A path that leads elsewhere (a
 * container's name, a file replaced since) names nothing. Its object is
 * taken for a tenant's (lines from a copy): whose root it was mapped under
 * went with the process.
 */
struct symobj *symcache__kernel_file(struct symcache *c, const char *path, const uint64_t st[5]);
/* The [vdso] mapping m of pid. */
struct symobj *symcache__vdso(struct symcache *c, int pid, const struct procmap *m);
/*
 * Read the symbols of files opened from now on after the getter returns
 * (default: off, read by the getter): at the object's first lookup, when it
 * goes cold, or in symcache__settle(). A file rewritten in place before its
 * symbols are read gets none (changed_unread), not the new bytes'.
 */
void symcache__set_defer(struct symcache *c, bool on);
/*
 * Read the symbols that wait: all, or only those waiting longer than the
 * cache lets them (symcache.c, SETTLE_NS).
 */
void symcache__settle(struct symcache *c, bool all);
/* o's symbols now, if they wait: before reading o's build-id or ELF state. */
void symcache__settle_obj(struct symcache *c, struct symobj *o);
/* Drop a reference a getter gave (NULL: nothing). */
void symcache__put(struct symcache *c, struct symobj *o);
/* One more reference on o, which the caller knows to be referenced already (NULL is fine). */
void symcache__hold(struct symobj *o);
/*
 * Bytes of cold objects kept (0: SYMCACHE_DEFAULT_BUDGET); the coldest past it
 * go now. The source-line answers of all objects, in use or not, are held to
 * the same figure on their own (symcache__lines()).
 */
void symcache__set_budget(struct symcache *c, uint64_t bytes);
/*
 * DWARF descriptors kept at most (0: SYMCACHE_DEFAULT_DWARF_FILES). A new
 * object past it takes an unreferenced object's (which goes), else has no
 * lines (dwarf_refused).
 */
void symcache__set_dwarf_files(struct symcache *c, uint64_t n);
void symcache__stats(const struct symcache *c, struct symcache_stats *out);

/*
 * Its GNU build-id in hex, "" if none (or for NULL); valid while o is: a
 * snapshot taken meanwhile may drop the last reference and evict it.
 */
const char *symobj__build_id(const struct symobj *o);
/* Was the object parsed as ELF (file offsets convert to ELF addresses)? false for NULL. */
bool symobj__is_elf(const struct symobj *o);
/*
 * The function at file offset off of an ELF object: *elf_addr receives off's
 * ELF virtual address, the return value the symbol's name (NULL if none;
 * valid while o is, see symobj__build_id), *offset the distance into it.
 */
const char *symobj__find(struct symobj *o, uint64_t off, uint64_t *elf_addr, uint64_t *offset);

/*
 * The source frames at ELF address elf_addr of o (srcline__find(), innermost
 * first): their number, 0 when o has no DWARF for it, or a negative errno.
 * The first call opens o's DWARF (and may ask debuginfod for it).
 */
int symcache__lines(struct symcache *c, struct symobj *o, uint64_t elf_addr,
		    const struct srcline_frame **frames);

/*
 * Close the DWARF of objects whose lines were not read since unused_since_ns
 * (CLOCK_MONOTONIC), keeping their answers; give back the file pages of the
 * others (srcline__release()).
 */
void symcache__release_lines(struct symcache *c, uint64_t unused_since_ns);

#endif /* SFBPF_SYMCACHE_H */
