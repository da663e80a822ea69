// SPDX-License-Identifier: GPL-2.0-or-later
/* Output files the user named (see outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/outfile.h"

#define OUT_MODE 0666 /* before the umask, as fopen() */

enum kind {
	KIND_REPLACE, /* nothing, a regular file or a symlink: a new file replaces it */
	KIND_OWN_FD, /* one of our file descriptors: write into a duplicate */
	KIND_NODE, /* a FIFO or device named directly: write into it */
};

struct target {
	enum kind kind;
	int fd_nr; /* KIND_OWN_FD */
	mode_t old_mode; /* KIND_REPLACE over a regular file */
};

/* The directory part of path, opened; of->name is the last component. */
static int open_dir(struct outfile *of, const char *path)
{
	const char *dir = ".";
	char *slash;
	int fd;

	if (!*path)
		return -ENOENT;
	of->dir = strdup(path);
	if (!of->dir)
		return -ENOMEM;
	of->name = of->dir;
	slash = strrchr(of->dir, '/');
	if (slash) {
		*slash = '\0';
		of->name = slash + 1;
		dir = slash == of->dir ? "/" : of->dir;
	}
	if (!*of->name || !strcmp(of->name, ".") || !strcmp(of->name, ".."))
		return -EISDIR;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* N of "N" (digits only), or -1. */
static int fd_number(const char *s)
{
	char *end;
	long n;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	return errno || *end || n > INT_MAX ? -1 : (int)n;
}

static bool is_own_fd_dir(int dirfd)
{
	struct stat a, b;

	return !fstat(dirfd, &a) && !stat("/proc/self/fd", &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* A symlink to one of our descriptors, as /dev/stdout: its number, or -1. */
static int own_fd_link(const struct outfile *of)
{
	static const char *const prefixes[] = { "/proc/self/fd/", "/proc/thread-self/fd/",
						"/dev/fd/" };
	char link[64];
	ssize_t n;
	size_t i;

	n = readlinkat(of->dirfd, of->name, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(link, prefixes[i], strlen(prefixes[i])))
			return fd_number(link + strlen(prefixes[i]));
	return -1;
}

/*
 * As fs.protected_fifos=1 does for O_CREAT: in a sticky world-writable
 * directory, only FIFOs of ours or of the directory's owner.
 */
static bool fifo_trusted(int dirfd, const struct stat *st)
{
	struct stat d;

	if (fstat(dirfd, &d))
		return false;
	if (!(d.st_mode & S_ISVTX) || !(d.st_mode & S_IWOTH))
		return true;
	return st->st_uid == geteuid() || st->st_uid == d.st_uid;
}

/* What of->name is, and so how it is written (see outfile.h). */
static int classify(const struct outfile *of, struct target *t)
{
	struct stat st;

	memset(t, 0, sizeof(*t));
	if (is_own_fd_dir(of->dirfd)) {
		t->kind = KIND_OWN_FD;
		t->fd_nr = fd_number(of->name);
		return t->fd_nr >= 0 ? 0 : -ENOENT;
	}
	if (fstatat(of->dirfd, of->name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (S_ISLNK(st.st_mode)) {
		t->fd_nr = own_fd_link(of);
		t->kind = t->fd_nr >= 0 ? KIND_OWN_FD : KIND_REPLACE;
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		t->old_mode = st.st_mode;
		return 0;
	}
	if (S_ISFIFO(st.st_mode) && !fifo_trusted(of->dirfd, &st))
		return -EACCES;
	t->kind = KIND_NODE;
	return 0;
}

/* A new file in the directory, no looser than the regular file it replaces. */
static int start_replace(struct outfile *of, mode_t old_mode)
{
	struct stat st;
	int err;

	err = atomicfile__open_mode(&of->af, of->dirfd, OUT_MODE);
	if (err)
		return err;
	if (old_mode && !fstat(of->af.fd, &st) && (st.st_mode & ~old_mode & 0777))
		(void)fchmod(of->af.fd, st.st_mode & old_mode & 0777); /* vfat cannot: fine */
	return of->af.fd;
}

static int open_target(struct outfile *of, const struct target *t)
{
	int fd;

	switch (t->kind) {
	case KIND_REPLACE:
		return start_replace(of, t->old_mode);
	case KIND_OWN_FD:
		fd = fcntl(t->fd_nr, F_DUPFD_CLOEXEC, 0);
		break;
	default:
		/* Blocks on a FIFO until it has a reader, as a shell redirection does. */
		fd = openat(of->dirfd, of->name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		break;
	}
	return fd >= 0 ? fd : -errno;
}

/* stdio writes through here, so that a failed write's errno is not lost. */
static ssize_t cookie_write(void *cookie, const char *buf, size_t n)
{
	struct outfile *of = cookie;
	size_t done = 0;
	ssize_t w;

	while (!of->werr && done < n) {
		w = write(of->fd, buf + done, n - done);
		if (w > 0)
			done += w;
		else if (w == 0 || errno != EINTR)
			of->werr = w ? -errno : -EIO;
	}
	return done; /* short: stdio sets its error flag */
}

static void release(struct outfile *of)
{
	if (of->af.fd >= 0)
		atomicfile__abort(&of->af);
	else if (of->fd >= 0)
		close(of->fd);
	if (of->dirfd >= 0)
		close(of->dirfd);
	free(of->dir);
	of->fd = of->dirfd = of->af.fd = -1;
	of->dir = NULL;
}

static void outfile__init(struct outfile *of)
{
	memset(of, 0, sizeof(*of));
	of->fd = of->dirfd = of->af.fd = -1;
}

int outfile__open(struct outfile *of, const char *path)
{
	static const cookie_io_functions_t io = { .write = cookie_write };
	struct target t;
	int err;

	outfile__init(of);
	if (!strcmp(path, "-")) {
		of->f = stdout;
		return 0;
	}
	err = open_dir(of, path);
	if (err >= 0) {
		of->dirfd = err;
		err = classify(of, &t);
	}
	if (!err) {
		err = open_target(of, &t);
		of->fd = err;
	}
	if (err >= 0) {
		of->f = fopencookie(of, "w", io);
		err = of->f ? 0 : -errno;
	}
	if (err)
		release(of);
	return err;
}

int outfile__close(struct outfile *of, int err)
{
	if (of->f == stdout) {
		if (fflush(stdout) && !err)
			err = -EIO;
		return err;
	}
	if (fclose(of->f) && !err)
		err = -EIO;
	if (of->werr && (!err || err == -EIO))
		err = of->werr;
	if (!err && of->af.fd >= 0) {
		err = atomicfile__replace(&of->af, of->name); /* closes it in any case */
		of->fd = -1;
	} else if (of->af.fd < 0 && of->fd >= 0) {
		if (close(of->fd) && !err)
			err = -errno; /* a stream's last chance to report a write error */
		of->fd = -1;
	}
	release(of);
	return err;
}

int outfile__probe(const char *path)
{
	struct outfile of;
	struct target t;
	int err;

	outfile__init(&of);
	if (!strcmp(path, "-"))
		return 0;
	err = open_dir(&of, path);
	if (err >= 0) {
		of.dirfd = err;
		err = classify(&of, &t);
	}
	/* Opening a FIFO would wait for its reader: only files are tried. */
	if (!err && t.kind == KIND_REPLACE) {
		err = start_replace(&of, 0);
		err = err < 0 ? err : 0;
	} else if (!err && t.kind == KIND_OWN_FD && fcntl(t.fd_nr, F_GETFD) < 0) {
		err = -EBADF;
	}
	release(&of);
	return err;
}
