/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Source lines and inline chains from an object's DWARF (libdw): for an
 * address in the object's ELF address space, the functions whose code is
 * there, innermost first, each with a file and line, the way `addr2line -f
 * -i` prints them:
 *
 *   frames[0]      the innermost inlined function, at the line the line
 *                  table gives for the address;
 *   frames[k]      the function frames[k-1] was inlined into, at the call
 *                  site (DW_AT_call_file/DW_AT_call_line of frames[k-1]);
 *   frames[n-1]    the out-of-line function (DW_TAG_subprogram).
 *
 * Each frame also carries its function's declaration (file, first line):
 * pprof's Function.filename and start_line. Names are demangled as perf
 * shows them (no parameters, demangle.h), from DW_AT_linkage_name, else
 * DW_AT_name, following DW_AT_abstract_origin and DW_AT_specification.
 *
 * Where the address is in no function the DWARF describes but its line table
 * covers it (assembly sources), the answer is one frame with a line and no
 * function name.
 *
 * Cost: opening parses nothing. The first lookup indexes the address ranges
 * of every compilation unit and of every function at a unit's top level
 * (one pass over the top-level DIEs); each lookup then finds the function by
 * binary search, descends only into the DIEs that contain the address, and
 * reads the unit's line table once (libdw keeps it). Answers are cached per
 * address: every later lookup of the address is a hash lookup.
 *
 * Lifecycle: srcline__new() takes a file descriptor of an ELF file with
 * .debug_info (the object itself or its separate debug file) and keeps it;
 * srcline__free() closes it. Errors: srcline__new() returns NULL + errno
 * (ENODATA: no DWARF); srcline__find() returns a count or a negative errno.
 * Not thread-safe.
 */
#ifndef SFBPF_SRCLINE_H
#define SFBPF_SRCLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct Elf;
struct srcline;

/* Deepest inline chain kept; deeper ones keep their innermost frames. */
#define SRCLINE_MAX_DEPTH 32

struct srcline_frame {
	const char *function; /* NULL if the DWARF names no function here */
	const char *file; /* source file of line; NULL if unknown */
	uint32_t line; /* 0 if unknown */
	const char *decl_file; /* where the function is declared; NULL if unknown */
	uint32_t decl_line; /* its first line; 0 if unknown */
};

/* Does elf carry DWARF worth opening (a .debug_info section)? */
int srcline__elf_has_dwarf(struct Elf *elf);

/*
 * fd: an ELF file with DWARF, owned by the srcline from now on (closed on
 * failure too). id: fd's fstat() when the caller took the descriptor (the
 * bytes its symbols came from), or NULL for now: a file written since
 * answers nothing. tenant: a process whose root is not the host's (a
 * container, a chroot) maps it, so its root may rewrite it in place whatever
 * its owner and mode say: read from a copy (see srcline__set_tenant()).
 */
struct stat;
struct srcline *srcline__new(int fd, const struct stat *id, bool tenant);

/*
 * A process whose root is not the host's maps the file too (a host directory
 * bound into a container, a volume, is root's on the host and its root's in
 * the container): from now on it is read from a copy, never in place. What
 * is open in place is closed; the answers given are kept.
 */
void srcline__set_tenant(struct srcline *sl);
void srcline__free(struct srcline *sl);

/*
 * The frames at ELF address addr, innermost first (see above): their number
 * (0: the DWARF does not cover addr), or a negative errno. *frames points
 * into the srcline: valid until the next call; the strings live as long as sl.
 */
int srcline__find(struct srcline *sl, uint64_t addr, const struct srcline_frame **frames);

/*
 * If the DWARF was not read since unused_since_ns (CLOCK_MONOTONIC), close
 * libdw's view of it (the file's mapping, libdw's units and line tables, and
 * compressed sections inflated into memory: MiBs for a big library), keeping
 * the descriptor, the index and the answers: the next lookup of an address
 * not answered yet reopens it; so it does, where nothing is inflated in
 * memory, once open for a minute. Else give back the pages of the file mapped
 * in since the last call (they stay in the page cache): cheap enough to call
 * a few times a second, it keeps what lookups touch out of our RSS without
 * the cost of a reopen (libdw reads every unit header up to the one it
 * needs: MiBs of pages for libc). A file that shrank while mapped
 * (util/fileview.h), or was written at all since its identity was taken (its size,
 * mtime or ctime moved: cp over it), answers nothing new from then on; an
 * answer libdw read while the file changed is dropped, not kept.
 */
void srcline__release(struct srcline *sl, uint64_t unused_since_ns);

/* Addresses answered so far (cached), and DWARF functions indexed. */
size_t srcline__cached(const struct srcline *sl);
size_t srcline__functions(const struct srcline *sl);
/*
 * The heap it holds of its own between lookups (indexes, answers, names):
 * libdw's state while open aside, which srcline__release() gives back.
 */
uint64_t srcline__bytes(const struct srcline *sl);
/*
 * Of those, the answers kept (srcline__find()): one per address asked, for
 * as long as the object is kept, so an object in use for weeks (libc) keeps
 * an answer for every address ever sampled in it unless its cache forgets
 * them (symcache.c's budget). Forgotten, lookups read the DWARF again; the
 * names stay (sl's strings), and frames handed out before are invalid.
 */
uint64_t srcline__answer_bytes(const struct srcline *sl);
void srcline__forget_answers(struct srcline *sl);
/*
 * Bytes of the file's copy with its compressed sections inflated (0: none):
 * libdw reads that copy, an unlinked file in /var/tmp, so that the inflated
 * sections are page cache, not our memory.
 */
uint64_t srcline__spilled(const struct srcline *sl);

/*
 * Of all srclines so far: DWARF refused because its compressed sections
 * claim, in their headers (read before anything is inflated), more than 100
 * times their size (refused_ratio: a compression bomb) or more than 1 GiB
 * in all (refused_size), or more than 64 MiB that libdw would
 * inflate in memory (no spill file to inflate them into, or .zdebug_*
 * sections, which the spill leaves compressed: refused_memory; with no spill
 * file the DWARF is read into memory, not mapped, so what is read counts
 * too, and the claims are those of the bytes read); the same claims are
 * judged again in the spill file's copy, which the file's owner cannot
 * change; copies not made because the spill files would pass the budget
 * (spill_full: that DWARF is then inflated in memory, within 64 MiB); files
 * someone other than root may write (not root's, writable by group or
 * others, in a container's overlayfs or FUSE layers, or mapped by a process
 * whose root is not the host's, srcline__set_tenant(): a tenant's), copied
 * into a spill file before libelf and libdw parse
 * anything of them (tenant_copies; with no room, read into memory); the
 * spill files' bytes now, and the budget.
 */
struct srcline_stats {
	uint64_t refused_ratio, refused_size, refused_memory, spill_full;
	uint64_t tenant_copies;
	uint64_t spilled_bytes, spill_budget;
};
void srcline__stats(struct srcline_stats *out);

/*
 * Disk for the spill files (unlinked, in $SFBPF_SPILL_DIR or /var/tmp), all
 * of them at once; 0: SRCLINE_SPILL_DEFAULT. The default follows the
 * machine: an eighth of what the spill directory's file system has free,
 * within 16 MiB..SRCLINE_SPILL_DEFAULT.
 */
#define SRCLINE_SPILL_DEFAULT (1ULL << 30)
void srcline__set_spill_budget(uint64_t bytes);
uint64_t srcline__default_spill_budget(void);

#endif /* SFBPF_SRCLINE_H */
