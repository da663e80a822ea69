// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Continuous mode's state directory (see continuous.h): the out-dir of a
 * service started without --out-dir. It holds the spools of undelivered
 * profiles, which the pusher sends with our credentials, and the profiles
 * kept, which name every tenant's functions: a directory someone else owns,
 * can write or read, or a symlink to one, is refused rather than used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/continuous.h"
#include "util/log.h"

int continuous_state_dir(char *buf, size_t size)
{
	const char *env = getenv("STATE_DIRECTORY");
	size_t n;

	/* systemd's StateDirectory=: absolute paths separated by ':', ours first. */
	if (env && env[0] == '/') {
		n = strcspn(env, ":");
		if (n >= size)
			return -ENAMETOOLONG;
		memcpy(buf, env, n);
		buf[n] = '\0';
		return 0;
	}
	if (strlen(CONTINUOUS_STATE_DIR) >= size)
		return -ENAMETOOLONG;
	strcpy(buf, CONTINUOUS_STATE_DIR);
	return 0;
}

int continuous_state_dir_open(const char *path)
{
	struct stat st;
	int fd, err;

	/* Only the last component: its parent (/var/lib) is the system's to make. */
	if (mkdir(path, 0700) && errno != EEXIST) {
		err = -errno;
		pr_warn("cannot create the state directory %s: %s", path, strerror(-err));
		return err;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("cannot open the state directory %s: %s", path,
			err == -ELOOP || err == -ENOTDIR ? "a symlink or not a directory, refused" :
							   strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (st.st_uid != geteuid()) {
		pr_warn("refusing the state directory %s: owned by uid %u, not by uid %u", path,
			(unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	if (st.st_mode & 077) {
		pr_warn("refusing the state directory %s: mode %03o, open to others (chmod 700)",
			path, (unsigned)(st.st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	return fd;
}
