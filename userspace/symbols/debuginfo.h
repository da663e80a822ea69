/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Separate debug files, found the way gdb and perf find them:
 *   1. by GNU build-id: DIR/.build-id/xx/yyyy.debug for each debug directory;
 *   2. by .gnu_debuglink (a file name and a CRC32): in the object's directory,
 *      in its .debug/ subdirectory, then in DIR/<object's directory>/.
 * A candidate is trusted only if it matches the object: equal build-ids when
 * both have one, else (debuglink only) a CRC32 of its contents equal to the
 * one the debuglink records. It must also be an ELF file of the object's
 * class and machine with a .symtab, or the search goes on.
 *
 * Mount namespaces: paths are looked up inside the root of the process that
 * maps the object, /proc/PID/root, when it has another mount namespace or
 * root (a container, a chroot), through procmap__open_in_root(): its
 * symlinks cannot lead out of its root. Debug directories are searched there
 * first, then in our own namespace: a host's debug file matching by build-id
 * (or by debuglink, in DIR/<object's directory>/) is as good.
 *
 * Error convention: negative errno.
 */
#ifndef SFBPF_DEBUGINFO_H
#define SFBPF_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>

struct Elf;

#define DEBUGINFO_DEFAULT_DIRS "/usr/lib/debug"
#define DEBUGINFO_ENV "SFBPF_DEBUG_ROOT"

/* Debug directories, ':'-separated: $SFBPF_DEBUG_ROOT if set, else the default. */
const char *debuginfo__default_dirs(void);

/*
 * Open the debug file of elf, an object a process maps from path. root_pid:
 * that process, if its paths resolve under /proc/PID/root; 0 if they are
 * ours. dirs: ':'-separated debug directories (NULL: the default). Returns a
 * read-only fd, or -ENOENT when no matching debug file exists. found (may be
 * NULL) receives the path opened (as the process sees it, if in its root).
 */
int debuginfo__open(struct Elf *elf, const char *path, int root_pid, const char *dirs,
		    char *found, size_t found_len);

/* CRC32 of a whole file, as .gnu_debuglink records it. */
int debuginfo__crc32(int fd, uint32_t *crc);

#endif /* SFBPF_DEBUGINFO_H */
