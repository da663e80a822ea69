/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * User-space symbolizer: runtime address in a process -> function symbol and
 * module, the way perf reports them.
 *
 * A process's mappings are snapshotted when it is first noted (it may have
 * exited by output time), and the ELF objects they map are loaded then, while
 * /proc/PID/map_files still reaches them. Objects are cached by file identity
 * (device + inode) and shared by every process mapping them; the [vdso] image
 * is read from the process and shared by content. Anonymous executable memory
 * is resolved through the perf JIT convention, /tmp/perf-PID.map.
 *
 * Symbols: .symtab, else .dynsym; STT_FUNC/STT_GNU_IFUNC in executable
 * sections. An address resolves to the nearest preceding symbol if the
 * symbol's size covers it; a size-0 symbol extends to the next one (perf).
 *
 * Error convention: negative errno; symbolizer__new() returns NULL + errno.
 */
#ifndef SFBPF_SYMBOLIZE_H
#define SFBPF_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

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
};

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *s);

/*
 * Snapshot pid's mappings and load the objects they map, if pid was not noted
 * yet (cheap otherwise). Returns 0 or a negative errno (-ESRCH: the process is
 * gone); a pid that failed is remembered as having no mappings.
 */
int symbolizer__note_pid(struct symbolizer *s, int pid);
/* Re-read pid's mappings (after dlopen); old mappings not overlapped stay known. */
int symbolizer__refresh_pid(struct symbolizer *s, int pid);
/* Drop pid's snapshot (process exited: its pid may be reused). */
void symbolizer__forget_pid(struct symbolizer *s, int pid);

/*
 * Symbolize addr in pid (noting pid first if needed). Returns 0 when a mapping
 * covers addr (out->name may still be NULL), -ENOENT when none does.
 * An address in no known mapping triggers a re-read of the mappings, at most
 * once a second per process, to catch libraries loaded after the snapshot.
 */
int symbolizer__user(struct symbolizer *s, int pid, uint64_t addr, struct sym_info *out);

#endif /* SFBPF_SYMBOLIZE_H */
