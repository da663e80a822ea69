/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * User-space symbolizer: runtime address in a process -> function symbol and
 * module, the way perf reports them.
 *
 * A process's mappings are snapshotted when it is first noted (it may have
 * exited by output time), and the ELF objects they map are loaded then, while
 * /proc/PID/map_files still reaches them. Objects are cached by file identity
 * (device + inode, checked against size and mtime) and shared by every
 * process mapping them; the [vdso] image is read from the process and shared
 * by content (symcache.h). Anonymous executable memory is resolved through
 * the perf JIT convention, /tmp/perf-PID.map; in a container, the map its
 * PID namespace names, inside its root (perfmap.h), read while it lives.
 *
 * Symbols: the separate debug file's .symtab (build-id or .gnu_debuglink, see
 * debuginfo.h) when the object has no .symtab, else its .symtab, else its
 * .dynsym; STT_FUNC/STT_GNU_IFUNC in executable sections; plus "name@plt" for
 * x86-64 PLT entries. C++/Rust names are demangled as perf shows them (no
 * parameters). An address resolves to the nearest preceding symbol if the
 * symbol's size covers it; a size-0 symbol extends to the next one (perf).
 *
 * Source lines: where the object has DWARF (in itself or its debug file, or
 * fetched through debuginfod when asked for), each answer also carries the
 * inline chain and file:line of the address (srcline.h), read at the first
 * lookup of the object and cached per address.
 *
 * Exec and dlopen: a process's snapshots form generations in time. Re-reading
 * its maps either adds to the current generation (new code mapped: dlopen,
 * JIT) or, when mapped code was dropped or replaced (exec, dlclose), starts a
 * new generation while the old one keeps serving samples taken before. Times
 * are CLOCK_MONOTONIC nanoseconds, the clock of bpf_ktime_get_ns().
 *
 * Error convention: negative errno; symbolizer__new() returns NULL + errno.
 */
#ifndef SFBPF_SYMBOLIZE_H
#define SFBPF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/perfmap.h"
#include "symbols/srcline.h"
#include "symbols/symcache.h"

struct procmaps;

struct symbolizer;

/*
 * Result of a lookup. The strings belong to the symbolizer: copy what you keep;
 * they are valid until the next call on the symbolizer.
 */
struct sym_info {
	const char *name; /* function symbol, or NULL */
	uint64_t offset; /* addr - symbol start, when name is set */
	uint64_t elf_addr; /* address in the object's ELF address space (0 if no object) */
	const char *module; /* "libc.so.6", "[vdso]", "[anon]", "[heap]"...; NULL if unmapped */
	const char *path; /* mapped path as /proc/PID/maps shows it; NULL if anonymous */
	bool mapped; /* a mapping covered addr */
	/* That mapping, as profile formats describe it (when mapped). */
	uint64_t map_start, map_end; /* [start, end) */
	uint64_t map_offset; /* file offset of map_start */
	const char *build_id; /* its object's GNU build-id in hex; "" if none or unknown */
	/*
	 * From the object's DWARF, innermost first: the inlined functions whose
	 * code addr is, then the function they were inlined into (the last,
	 * usually the symbol's); with inlines off, that last one only. NULL
	 * (nr_lines 0) without DWARF for addr.
	 */
	const struct srcline_frame *lines;
	size_t nr_lines;
};

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *s);

/*
 * Snapshot pid's mappings and load the objects they map, if pid was not noted
 * yet (cheap otherwise; see symbolizer__set_defer()). Returns 0 or a negative errno (-ESRCH: the
 * process is gone); a pid that failed is remembered as having no mappings.
 */
int symbolizer__note_pid(struct symbolizer *s, int pid);
/*
 * At sample time: note pid, and if the sample's user frames (ips[0] the leaf)
 * fall outside its current mappings, re-read them (at most every 10 ms when
 * the leaf missed, every second otherwise). Cheap when nothing missed: call it
 * for every sample, while the process still exists. An ip with either of the
 * top two bits set is a runtime's identity (bpf/abi.h), not a pc: skipped.
 */
int symbolizer__note_sample(struct symbolizer *s, int pid, uint64_t time_ns, const uint64_t *ips,
			    size_t n);
/*
 * pid was forked by parent at time_ns: its mappings are parent's latest
 * (noted first if need be), copied now, as the child may be gone before its
 * first sample is read; a generation from time_ns on if the PID was known
 * (an earlier process's). Its next read, or exec, starts a new generation.
 * 0 or a negative errno (parent gone).
 */
int symbolizer__note_fork(struct symbolizer *s, int pid, int parent, uint64_t time_ns);
bool symbolizer__has(struct symbolizer *s, int pid);
/*
 * Which image of which process an exec made (struct sfbpf_event's EXEC): the
 * process's start (start_ticks) and the image's exec id (0: unknown).
 */
struct symbolizer_image {
	uint64_t start_ticks, exec_id;
};

/*
 * pid exec'd at time_ns (sched_process_exec): a new generation from then on,
 * read now (now), or empty until its first sample reads it (a child known
 * only by its fork's copy: read at the exec, ld.so has mapped nothing yet).
 * image: which image, as the exec event says (NULL: unknown), which the
 * kernel's mappings of it are checked against (symbolizer_kmaps_fn).
 */
int symbolizer__note_exec(struct symbolizer *s, int pid, uint64_t time_ns,
			  const struct symbolizer_image *image, bool now);
/* Re-read pid's mappings now (after dlopen or exec; see the generations above). */
int symbolizer__refresh_pid(struct symbolizer *s, int pid);
/*
 * The process tracker read pid's mappings (pm, kept by procmaps__snapshot()):
 * code there that pid's current generation lacks (libraries ld.so mapped
 * after the exec's read, a dlopen) is read into it now, while pid lives. Its
 * samples may first reach that code in its last milliseconds, and be read
 * after its exit: then nothing could name them. A read of another image (an
 * exec the symbolizer has not seen yet) is left to the exec's note.
 */
int symbolizer__note_maps(struct symbolizer *s, int pid, const struct procmaps *pm);
/* Drop pid's snapshot (process exited: its pid may be reused). */
void symbolizer__forget_pid(struct symbolizer *s, int pid);

/*
 * Symbolize addr of a sample pid took at time_ns (noting pid first if
 * needed), in the generation of mappings serving that time; an address none
 * of its mappings covers is looked up in the other generations, newest first.
 * Returns 0 when a mapping covers addr (out->name may still be NULL), -ENOENT
 * when none does. An address in no known mapping triggers a re-read of the
 * mappings, at most once a second per process.
 */
int symbolizer__user_at(struct symbolizer *s, int pid, uint64_t time_ns, uint64_t addr,
			struct sym_info *out);
/* The same for the latest mappings (time_ns = UINT64_MAX). */
int symbolizer__user(struct symbolizer *s, int pid, uint64_t addr, struct sym_info *out);

/*
 * The path of pid's executable (as /proc/PID/maps shows it) in its latest
 * snapshot, taken while it ran, or NULL (not noted, or unknown). Unlike
 * /proc/PID/exe at output time, never another program's after the PID is
 * reused. Valid until s next forgets a process (symbolizer__forget_pid()
 * sweeps its strings): copy it to keep it.
 */
const char *symbolizer__exe(struct symbolizer *s, int pid);

/*
 * Where to look for separate debug files: ':'-separated directories holding
 * .build-id/ and path-mirroring trees (NULL: $SFBPF_DEBUG_ROOT, else
 * /usr/lib/debug). Applies to objects loaded afterwards.
 */
int symbolizer__set_debug_dirs(struct symbolizer *s, const char *dirs);

/*
 * Source lines in answers (default: on), and inlined functions among them
 * (default: on; off folds them into the function they were inlined into).
 * Lines apply to objects loaded afterwards, inlines at once.
 */
void symbolizer__set_lines(struct symbolizer *s, bool lines, bool inlines);
/*
 * Fetch missing debug files through debuginfod, from $DEBUGINFOD_URLS, into
 * libdebuginfod's cache (default: off; never by default, a root profiler must
 * not reach the network unasked). 0, -ENOENT (libdebuginfod cannot be loaded)
 * or -ENOMEM.
 */
int symbolizer__set_debuginfod(struct symbolizer *s, bool on);
/*
 * Give back the memory of the DWARF not read since unused_since_ns
 * (CLOCK_MONOTONIC): the lines found so far stay, the rest reopens it. Of
 * the DWARF read since, the file pages the lookups mapped in.
 */
void symbolizer__release_lines(struct symbolizer *s, uint64_t unused_since_ns);
/*
 * Snapshots open new files and read their symbols later (default: at once),
 * so that a session's sampling thread reads them after more urgent work:
 * symbolizer__settle() reads all of them, or (all false, while that work
 * waits) only those waiting too long; a lookup reads a file's own first.
 */
void symbolizer__set_defer(struct symbolizer *s, bool on);
void symbolizer__settle(struct symbolizer *s, bool all);

/*
 * Budgets in bytes (0: the module's default): of the objects no snapshot
 * refers to any more, kept for the next process mapping them (symcache.h),
 * and of every process's JIT maps together (perfmap.h).
 */
void symbolizer__set_budgets(struct symbolizer *s, uint64_t objects, uint64_t jit_maps);
/* DWARF descriptors objects keep at most (0: the default; symcache__set_dwarf_files()). */
void symbolizer__set_dwarf_files(struct symbolizer *s, uint64_t n);

/*
 * A process's file mapping as the kernel found it (bpf/vmafind.h): where it
 * lies, the file offset of its start, and its file as the kernel identified
 * it (device and inode as fstat gives them, size, mtime and ctime in ns:
 * symcache__known()) and the loader named it (path: valid during the call). The vDSO
 * has no file: vdso set, st unused, the image this process's own.
 */
struct symbolizer_kmap {
	uint64_t start, end, offset;
	uint64_t st[5];
	const char *path;
	bool vdso;
};
/*
 * A source of those: the mappings of pid's image (symbolizer__note_exec's)
 * into out, at most max; how many (0: none known, or not that image's).
 */
typedef size_t (*symbolizer_kmaps_fn)(void *ctx, int pid, const struct symbolizer_image *image,
				      struct symbolizer_kmap *out, size_t max);
/*
 * A process gone before its /proc/PID/maps could be read (it lived a few
 * milliseconds) is named from fn's mappings: files whose objects the cache
 * holds, as the kernel identified them, or found at their path still the
 * same file (symcache__kernel_file()).
 */
void symbolizer__set_kernel_maps(struct symbolizer *s, symbolizer_kmaps_fn fn, void *ctx);

struct symbolizer_stats {
	struct symcache_stats objs;
	struct perfmap_pool jit; /* its budget filled in */
	uint64_t procs; /* processes with snapshots (gauge) */
	uint64_t strings; /* interned paths (gauge) */
	uint64_t strings_swept; /* paths freed once no snapshot used them */
	uint64_t kernel_named; /* processes gone before read, named from the kernel's mappings */
};
void symbolizer__stats(const struct symbolizer *s, struct symbolizer_stats *out);

#endif /* SFBPF_SYMBOLIZE_H */
