// SPDX-License-Identifier: GPL-2.0-or-later
/* Files that appear whole or not at all (see atomicfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"

#define FILE_MODE 0640

static int open_named(struct atomicfile *af)
{
	static atomic_uint seq;
	int i;

	/* pid + counter make collisions rare; O_EXCL makes them harmless. */
	for (i = 0; i < 100; i++) {
		snprintf(af->tmpname, sizeof(af->tmpname), ".sfbpf-tmp.%d.%u", (int)getpid(),
			 atomic_fetch_add(&seq, 1));
		af->fd = openat(af->dirfd, af->tmpname,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
		if (af->fd >= 0) {
			af->named = true;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int atomicfile__open(struct atomicfile *af, int dirfd)
{
	af->dirfd = dirfd;
	af->named = false;
	af->tmpname[0] = '\0';
	af->fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, FILE_MODE);
	if (af->fd >= 0)
		return 0;
	/* Not every file system has unnamed files (EOPNOTSUPP; EISDIR before 3.11). */
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	return open_named(af);
}

/* The unnamed file gets its name through its /proc/self/fd link. */
static int link_unnamed(struct atomicfile *af, const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", af->fd);
	return linkat(AT_FDCWD, path, af->dirfd, name, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

static int link_named(struct atomicfile *af, const char *name)
{
	if (!renameat2(af->dirfd, af->tmpname, af->dirfd, name, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* No RENAME_NOREPLACE here: link(2) does not replace either. */
	if (linkat(af->dirfd, af->tmpname, af->dirfd, name, 0))
		return -errno;
	unlinkat(af->dirfd, af->tmpname, 0);
	return 0;
}

int atomicfile__commit(struct atomicfile *af, const char *name)
{
	int err;

	if (fdatasync(af->fd)) {
		err = -errno;
		atomicfile__abort(af);
		return err;
	}
	err = af->named ? link_named(af, name) : link_unnamed(af, name);
	if (err == -EEXIST)
		return err;
	if (err) {
		atomicfile__abort(af);
		return err;
	}
	af->named = false; /* it has its real name now */
	close(af->fd); /* the data is synced: close has nothing left to report */
	af->fd = -1;
	return 0;
}

void atomicfile__abort(struct atomicfile *af)
{
	if (af->named)
		unlinkat(af->dirfd, af->tmpname, 0);
	af->named = false;
	if (af->fd >= 0)
		close(af->fd);
	af->fd = -1;
}

/* mkdir -p: every missing component, parents first. */
static int make_dirs(const char *path)
{
	char *copy = strdup(path), *p, c;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (p = copy + 1; !err; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(copy, 0750) && errno != EEXIST)
			err = -errno;
		*p = c;
		if (!c)
			break;
	}
	free(copy);
	return err;
}

int atomicfile_dir_open(const char *path, bool nofollow)
{
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
	int fd, err;

	fd = open(path, flags);
	if (fd >= 0 || errno != ENOENT)
		return fd >= 0 ? fd : -errno;
	err = make_dirs(path);
	if (err)
		return err;
	fd = open(path, flags);
	return fd >= 0 ? fd : -errno;
}
