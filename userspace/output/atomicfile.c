// SPDX-License-Identifier: GPL-2.0-or-later
/* Files that appear whole or not at all (see atomicfile.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/atomicfile.h"

#define FILE_MODE 0640

/* A fresh hidden name in af->tmpname: pid + counter make collisions rare. */
static void next_tmpname(struct atomicfile *af)
{
	static atomic_uint seq;

	snprintf(af->tmpname, sizeof(af->tmpname), ".sfbpf-tmp.%d.%u", (int)getpid(),
		 atomic_fetch_add(&seq, 1));
}

static int open_named(struct atomicfile *af, mode_t mode)
{
	int i;

	/* O_EXCL makes a collision (or a name planted there) harmless: try the next. */
	for (i = 0; i < 100; i++) {
		next_tmpname(af);
		af->fd = openat(af->dirfd, af->tmpname,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (af->fd >= 0) {
			af->named = true;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int atomicfile__open_mode(struct atomicfile *af, int dirfd, mode_t mode)
{
	af->dirfd = dirfd;
	af->named = false;
	af->tmpname[0] = '\0';
	af->fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
	if (af->fd >= 0)
		return 0;
	/* Not every file system has unnamed files (EOPNOTSUPP; EISDIR before 3.11). */
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	return open_named(af, mode);
}

int atomicfile__open(struct atomicfile *af, int dirfd)
{
	return atomicfile__open_mode(af, dirfd, FILE_MODE);
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

/*
 * The unnamed file under a hidden name of its own, for rename(2): link(2)
 * never replaces, so a name planted meanwhile only costs a retry.
 */
static int link_hidden(struct atomicfile *af)
{
	int i, err;

	for (i = 0; i < 100; i++) {
		next_tmpname(af);
		err = link_unnamed(af, af->tmpname);
		if (!err)
			af->named = true;
		if (err != -EEXIST)
			return err;
	}
	return -EEXIST;
}

int atomicfile__replace(struct atomicfile *af, const char *name)
{
	int err = fdatasync(af->fd) ? -errno : 0;

	if (!err && !af->named)
		err = link_hidden(af);
	/* rename(2) replaces name itself: a symlink there is not followed. */
	if (!err && renameat(af->dirfd, af->tmpname, af->dirfd, name))
		err = -errno;
	if (err) {
		atomicfile__abort(af);
		return err;
	}
	af->named = false;
	close(af->fd);
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

DIR *atomicfile_dir_list(int dirfd)
{
	int fd = dup(dirfd), err;
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dir) {
		err = errno;
		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	/* The duplicate shares dirfd's position: start from the first entry. */
	rewinddir(dir);
	return dir;
}
