// SPDX-License-Identifier: GPL-2.0-or-later
/* A directory's regular files (see dirfiles.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/dirfiles.h"
#include "util/vec.h"

int dirfiles__append(int dir_fd, bool skip_dot, int tag, struct dir_file **files, size_t *nr,
		     size_t *cap)
{
	struct dirent *de;
	struct stat st;
	/*
	 * Not a dup of dir_fd: a dup shares its offset, and the cache's
	 * eviction and the identity index's listing may read ident/ at once.
	 */
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if ((skip_dot && de->d_name[0] == '.') ||
		    fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (VEC_RESERVE(*files, *cap, *nr + 1, 64)) {
			err = -ENOMEM;
			break;
		}
		snprintf((*files)[*nr].name, sizeof((*files)[*nr].name), "%s", de->d_name);
		(*files)[*nr].mtime_ns = clock__ts_ns(&st.st_mtim);
		(*files)[*nr].size = (uint64_t)st.st_size;
		(*files)[(*nr)++].tag = tag;
	}
	closedir(d);
	return err;
}

int dirfiles__list(int dir_fd, bool skip_dot, struct dir_file **files, size_t *nr)
{
	size_t cap = 0;
	int err;

	*files = NULL;
	*nr = 0;
	err = dirfiles__append(dir_fd, skip_dot, 0, files, nr, &cap);
	if (err) {
		free(*files);
		*files = NULL;
		*nr = 0;
	}
	return err;
}
