/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/PID/maps parser: one snapshot of a process's mappings as an array
 * sorted by start address, with a binary-search lookup, plus a helper that
 * opens a mapping's file the way the kernel sees it.
 *
 * Error convention: negative errno.
 *   -ESRCH   the process does not exist (or vanished while being read)
 *   -EINVAL  a line could not be parsed (procmaps__parse only; reading a live
 *            process skips bad lines instead, the kernel never writes them)
 *   -ENOMEM
 */
#ifndef SFBPF_PROCMAPS_H
#define SFBPF_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Permissions (the "rwxp" column). */
#define PROCMAP_READ 0x1
#define PROCMAP_WRITE 0x2
#define PROCMAP_EXEC 0x4
#define PROCMAP_SHARED 0x8 /* 's' instead of 'p' */

/* What backs the mapping. */
#define PROCMAP_F_ANON 0x1 /* no file: no path, or a [pseudo] name */
#define PROCMAP_F_DELETED 0x2 /* file unlinked; " (deleted)" stripped from path */
#define PROCMAP_F_VDSO 0x4 /* [vdso] */
#define PROCMAP_F_PSEUDO 0x8 /* path is a kernel name: [heap], [stack], [vvar], [anon:x]... */

struct procmap {
	uint64_t start; /* [start, end) */
	uint64_t end;
	uint64_t offset; /* file offset of start */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t perms; /* PROCMAP_READ... */
	uint32_t flags; /* PROCMAP_F_* */
	const char *path; /* "" when anonymous; owned by the procmaps */
};

struct procmaps;

/* Snapshot /proc/PID/maps. A process without mappings (kernel thread) gives 0 entries. */
int procmaps__read(int pid, struct procmaps **out);
/* Parse maps text (len bytes, need not be NUL-terminated). */
int procmaps__parse(const char *buf, size_t len, struct procmaps **out);
/* Drops a reference: the snapshot is freed with its last one. NULL is fine. */
void procmaps__free(struct procmaps *pm);
/*
 * The one process image: pid's mappings as last read by anyone (the tracker,
 * the symbolizer) if that was at most max_age_ns ago, else read now and kept
 * for the next caller. A reference: procmaps__free() it. Thread-safe.
 * 0 or what procmaps__read() returns.
 */
int procmaps__snapshot(int pid, uint64_t max_age_ns, struct procmaps **out);
/* Forgets pid's kept snapshot (it exited): a new process with its PID reads anew. */
void procmaps__forget(int pid);

size_t procmaps__count(const struct procmaps *pm);
const struct procmap *procmaps__get(const struct procmaps *pm, size_t i);
/*
 * The main executable's first mapping (its file is /proc/PID/exe when the
 * maps were read), or NULL: unknown, or parsed from text.
 */
const struct procmap *procmaps__exe(const struct procmaps *pm);
/* The mapping containing addr, or NULL. */
const struct procmap *procmaps__find(const struct procmaps *pm, uint64_t addr);

/*
 * Open a file-backed mapping read-only: /proc/PID/map_files/START-END first (any
 * mount namespace, deleted files), else PATH resolved inside /proc/PID/root
 * (openat2 RESOLVE_IN_ROOT, no final symlink, no blocking open) if it is a
 * regular file whose device and inode still match. Returns an fd or a negative
 * errno (-ENOENT for anonymous mappings, -ESTALE for a different file).
 */
int procmap__open(int pid, const struct procmap *m);

struct stat;
/*
 * Open PATH (absolute, as pid sees it) read-only inside /proc/PID/root the
 * same safe way: openat2 RESOLVE_IN_ROOT and no magic links; a final
 * symlink is followed (inside the root) only if follow. Found with O_PATH
 * and opened only if it is a regular file (-EINVAL otherwise): a FIFO or a
 * device node there is never opened. *st receives its status. Returns an
 * fd or a negative errno.
 */
int procmap__open_in_root(int pid, const char *path, bool follow, struct stat *st);

/* Last path component ("libc.so.6"); the path itself for [pseudo] names. */
const char *procmap__basename(const char *path);

#endif /* SFBPF_PROCMAPS_H */
