/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The regular files of a directory open at a descriptor, with their sizes
 * and mtimes: what the table cache's budget and its identity index age by.
 * Symlinks and anything not a regular file are passed over (lstat), as are
 * names starting with a dot (temporary files being written) when asked.
 * Each listing reads the directory through a descriptor of its own: two
 * threads may list one directory at once.
 *
 * Error rule: 0, or a negative errno; *files is the caller's to free.
 */
#ifndef SFBPF_UTIL_DIRFILES_H
#define SFBPF_UTIL_DIRFILES_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dir_file {
	char name[NAME_MAX + 1];
	int64_t mtime_ns;
	uint64_t size;
	int tag; /* the caller's, dirfiles__append()'s: which directory it is in */
};

/* dir_fd's regular files (no dot files when skip_dot), in directory order. */
int dirfiles__list(int dir_fd, bool skip_dot, struct dir_file **files, size_t *nr);
/*
 * The same appended to *files (*nr of them, room for *cap), each tagged tag:
 * several directories in one list. On an error, what came before it stays.
 */
int dirfiles__append(int dir_fd, bool skip_dot, int tag, struct dir_file **files, size_t *nr,
		     size_t *cap);

#endif /* SFBPF_UTIL_DIRFILES_H */
