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

int dirfiles__list(int dir_fd, bool skip_dot, struct dir_file **files, size_t *nr)
{
	struct dir_file *f = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	int fd = dup(dir_fd), err = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	*files = NULL;
	*nr = 0;
	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	/* The descriptor is shared with dir_fd: start from the top whatever was read before. */
	rewinddir(d);
	while ((de = readdir(d))) {
		if ((skip_dot && de->d_name[0] == '.') ||
		    fstatat(dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (VEC_RESERVE(f, cap, n + 1, 64)) {
			err = -ENOMEM;
			break;
		}
		snprintf(f[n].name, sizeof(f[n].name), "%s", de->d_name);
		f[n].mtime_ns = clock__ts_ns(&st.st_mtim);
		f[n++].size = (uint64_t)st.st_size;
	}
	closedir(d);
	if (err) {
		free(f);
		return err;
	}
	*files = f;
	*nr = n;
	return 0;
}
