/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a user address lives, the way profile formats describe it: the
 * executable mapping covering it (range, file offset, path) and the GNU
 * build-id of the mapped object. Also the running kernel's build-id.
 *
 * A process's mappings are read from /proc/PID/maps on its first lookup and
 * kept for the life of the mapinfo; objects' build-ids are cached by file
 * identity (device + inode). A process that is gone has no mappings here
 * (callers fall back to what the symbolizer snapshotted).
 */
#ifndef SFBPF_MAPINFO_H
#define SFBPF_MAPINFO_H

#include <stddef.h>
#include <stdint.h>

#include "tables/elfobj.h"

/* Hex build-id: two digits per byte, NUL-terminated. */
#define MAPINFO_BUILD_ID_HEX (2 * ELFOBJ_BUILD_ID_MAX + 1)

struct map_entry {
	uint64_t start; /* [start, end) */
	uint64_t end;
	uint64_t offset; /* file offset of start */
	const char *path; /* as /proc/PID/maps shows it; "" if anonymous */
	const char *build_id; /* lowercase hex; "" if none or unreadable */
};

struct mapinfo;

struct mapinfo *mapinfo__new(void); /* NULL + errno */
void mapinfo__free(struct mapinfo *mi);

/*
 * The mapping of pid covering addr. Strings stay valid until mapinfo__free.
 * Returns 0, -ENOENT (no mapping covers addr), -ESRCH (process gone) or -ENOMEM.
 */
int mapinfo__find(struct mapinfo *mi, int pid, uint64_t addr, struct map_entry *out);

/* The running kernel's build-id (from /sys/kernel/notes) as hex; 0 or a negative errno. */
int mapinfo__kernel_build_id(char hex[MAPINFO_BUILD_ID_HEX]);

/* Hex-encode a build-id of len bytes (at most ELFOBJ_BUILD_ID_MAX). */
void mapinfo__hex(const uint8_t *id, size_t len, char hex[MAPINFO_BUILD_ID_HEX]);

#endif /* SFBPF_MAPINFO_H */
