// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The spool (see spool.h). The directory is scanned once when opened; after
 * that an array sorted oldest first mirrors it, so that adding, taking and
 * dropping never read the directory again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/atomicfile.h"
#include "output/spool.h"
#include "util/log.h"
#include "util/vec.h"

#define SUFFIX ".pb.gz"
#define MAX_SEQ 1000

struct spool {
	pthread_mutex_t lock;
	char *path;
	bool nofollow;
	int dirfd;
	struct spool_limits lim;
	struct spool_entry *ents; /* oldest first */
	size_t n, cap;
	char busy[sizeof(((struct spool_entry *)0)->name)]; /* in flight; "" if none */
	struct spool_stats st;
};

/* n decimal digits at s, exactly. */
static bool digits(const char *s, int n, int64_t *out)
{
	int64_t v = 0;
	int i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* FROM-UNTIL[.N].pb.gz with 12-digit times: anything else is not ours. */
static bool parse_name(const char *name, struct spool_entry *e)
{
	const char *p = name + 25;
	int64_t seq;
	int n;

	if (strlen(name) >= sizeof(e->name) || strlen(name) < 25 || name[12] != '-' ||
	    !digits(name, 12, &e->from) || !digits(name + 13, 12, &e->until))
		return false;
	if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
		n = strspn(p + 1, "0123456789");
		if (n > 3 || !digits(p + 1, n, &seq))
			return false;
		p += 1 + n;
	}
	if (strcmp(p, SUFFIX))
		return false;
	memcpy(e->name, name, strlen(name) + 1); /* length checked above */
	return true;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->until != y->until)
		return x->until < y->until ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int push_entry(struct spool *sp, const struct spool_entry *e)
{
	if (VEC_RESERVE(sp->ents, sp->cap, sp->n + 1, 64))
		return -ENOMEM;
	sp->ents[sp->n++] = *e;
	sp->st.files++;
	sp->st.bytes += e->size;
	return 0;
}

static void remove_at(struct spool *sp, size_t i)
{
	sp->st.files--;
	sp->st.bytes -= sp->ents[i].size;
	memmove(&sp->ents[i], &sp->ents[i + 1], (sp->n - i - 1) * sizeof(sp->ents[0]));
	sp->n--;
}

/* The array from the directory: our regular files only. */
static int scan(struct spool *sp)
{
	struct spool_entry e;
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int err = 0;

	dir = atomicfile_dir_list(sp->dirfd);
	if (!dir)
		return -errno;
	sp->n = 0;
	sp->st.files = 0;
	sp->st.bytes = 0;
	while (!err && (d = readdir(dir))) {
		if (!parse_name(d->d_name, &e))
			continue;
		if (fstatat(sp->dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		e.size = st.st_size;
		err = push_entry(sp, &e);
	}
	closedir(dir);
	if (sp->n)
		qsort(sp->ents, sp->n, sizeof(sp->ents[0]), entry_cmp);
	return err;
}

/* Oldest first, never the one in flight nor the one just added. */
static void enforce_limits(struct spool *sp, const char *keep)
{
	struct spool_entry *e;
	size_t i = 0;

	while ((sp->st.files > sp->lim.max_files || sp->st.bytes > sp->lim.max_bytes) &&
	       i < sp->n) {
		e = &sp->ents[i];
		if (!strcmp(e->name, sp->busy) || !strcmp(e->name, keep)) {
			i++;
			continue;
		}
		unlinkat(sp->dirfd, e->name, 0);
		sp->st.dropped++;
		sp->st.dropped_bytes += e->size;
		pr_warn("spool %s is full (%u profiles, %" PRIu64 " bytes; limits %u, "
			"%" PRIu64 "): dropped its oldest profile, %" PRId64 "..%" PRId64
			" (%" PRIu64 " dropped so far)",
			sp->path, sp->st.files, sp->st.bytes, sp->lim.max_files, sp->lim.max_bytes,
			e->from, e->until, sp->st.dropped);
		remove_at(sp, i);
	}
}

struct spool *spool__open(const char *dir, bool nofollow, const struct spool_limits *lim)
{
	struct spool *sp = calloc(1, sizeof(*sp));
	int err;

	if (!sp)
		return NULL;
	pthread_mutex_init(&sp->lock, NULL);
	sp->dirfd = -1;
	sp->nofollow = nofollow;
	sp->lim.max_files = lim && lim->max_files ? lim->max_files : SPOOL_DEFAULT_FILES;
	sp->lim.max_bytes = lim && lim->max_bytes ? lim->max_bytes : SPOOL_DEFAULT_BYTES;
	sp->path = strdup(dir);
	err = sp->path ? 0 : -ENOMEM;
	if (!err) {
		sp->dirfd = atomicfile_dir_open(dir, nofollow);
		err = sp->dirfd < 0 ? sp->dirfd : scan(sp);
	}
	if (!err)
		enforce_limits(sp, "");
	if (err) {
		spool__close(sp);
		errno = -err;
		return NULL;
	}
	return sp;
}

void spool__close(struct spool *sp)
{
	if (!sp)
		return;
	if (sp->dirfd >= 0)
		close(sp->dirfd);
	pthread_mutex_destroy(&sp->lock);
	free(sp->ents);
	free(sp->path);
	free(sp);
}

int spool__reopen(struct spool *sp)
{
	int fd, err;

	fd = atomicfile_dir_open(sp->path, sp->nofollow);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&sp->lock);
	close(sp->dirfd);
	sp->dirfd = fd;
	err = scan(sp);
	if (!err)
		enforce_limits(sp, "");
	pthread_mutex_unlock(&sp->lock);
	return err;
}

/* Across file systems: a copy, made whole before it gets its name. */
static int copy_in(struct spool *sp, int srcdirfd, const char *srcname, const char *name)
{
	struct atomicfile af;
	char buf[65536];
	ssize_t r = 0;
	int in, err;

	in = openat(srcdirfd, srcname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	err = atomicfile__open(&af, sp->dirfd);
	while (!err && (r = read(in, buf, sizeof(buf))) > 0)
		if (write(af.fd, buf, r) != r)
			err = -EIO;
	if (!err && r < 0)
		err = -errno;
	close(in);
	if (!err)
		err = atomicfile__commit(&af, name);
	if (err) /* -EEXIST leaves it open; abort is safe after any failure */
		atomicfile__abort(&af);
	return err;
}

/* FROM-UNTIL[.SEQ].pb.gz */
static void entry_name(struct spool_entry *e, int seq)
{
	if (seq)
		snprintf(e->name, sizeof(e->name), "%012" PRId64 "-%012" PRId64 ".%d" SUFFIX,
			 e->from, e->until, seq);
	else
		snprintf(e->name, sizeof(e->name), "%012" PRId64 "-%012" PRId64 SUFFIX, e->from,
			 e->until);
}

/* Link (or copy) the file in under a free name for [from, until). */
static int link_in(struct spool *sp, int srcdirfd, const char *srcname, struct spool_entry *e)
{
	int seq, err = -EEXIST;

	for (seq = 0; seq < MAX_SEQ && err == -EEXIST; seq++) {
		entry_name(e, seq);
		err = linkat(srcdirfd, srcname, sp->dirfd, e->name, 0) ? -errno : 0;
		if (err == -EXDEV || err == -EPERM || err == -EMLINK)
			err = copy_in(sp, srcdirfd, srcname, e->name);
	}
	return err;
}

/* Write data into a new file under a free name for [from, until). */
static int write_in(struct spool *sp, const void *data, size_t size, struct spool_entry *e)
{
	const char *p = data;
	struct atomicfile af;
	size_t done = 0;
	ssize_t r;
	int seq, err;

	err = atomicfile__open(&af, sp->dirfd);
	if (err)
		return err;
	for (; done < size; done += r) {
		r = write(af.fd, p + done, size - done);
		if (r <= 0) {
			atomicfile__abort(&af);
			return r < 0 ? -errno : -EIO;
		}
	}
	for (seq = 0, err = -EEXIST; seq < MAX_SEQ && err == -EEXIST; seq++) {
		entry_name(e, seq);
		err = atomicfile__commit(&af, e->name);
	}
	if (err == -EEXIST)
		atomicfile__abort(&af);
	return err;
}

/* The entry in, counted, and the limits kept; with the lock held. */
static int enter(struct spool *sp, struct spool_entry *e, int err)
{
	struct stat st;

	if (!err && fstatat(sp->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW))
		err = -errno;
	if (!err) {
		e->size = st.st_size;
		err = push_entry(sp, e);
		if (err)
			unlinkat(sp->dirfd, e->name, 0);
	}
	if (!err) {
		sp->st.added++;
		qsort(sp->ents, sp->n, sizeof(sp->ents[0]), entry_cmp);
		enforce_limits(sp, e->name);
	}
	return err;
}

int spool__add_data(struct spool *sp, const void *data, size_t size, int64_t from,
		    int64_t until)
{
	struct spool_entry e = { .from = from, .until = until };
	int err;

	pthread_mutex_lock(&sp->lock);
	err = enter(sp, &e, write_in(sp, data, size, &e));
	pthread_mutex_unlock(&sp->lock);
	return err;
}

int spool__add(struct spool *sp, int srcdirfd, const char *srcname, int64_t from, int64_t until)
{
	struct spool_entry e = { .from = from, .until = until };
	int err;

	pthread_mutex_lock(&sp->lock);
	err = enter(sp, &e, link_in(sp, srcdirfd, srcname, &e));
	pthread_mutex_unlock(&sp->lock);
	return err;
}

int spool__take(struct spool *sp, struct spool_entry *out)
{
	int err = -ENOENT;

	pthread_mutex_lock(&sp->lock);
	if (sp->n) {
		*out = sp->ents[0];
		snprintf(sp->busy, sizeof(sp->busy), "%s", out->name);
		err = 0;
	}
	pthread_mutex_unlock(&sp->lock);
	return err;
}

static int read_all(int fd, void **data, size_t *size)
{
	struct stat st;
	size_t done = 0;
	ssize_t r;
	char *buf;

	if (fstat(fd, &st))
		return -errno;
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf)
		return -ENOMEM;
	while (done < (size_t)st.st_size && (r = read(fd, buf + done, st.st_size - done)) > 0)
		done += r;
	if (done != (size_t)st.st_size) {
		free(buf);
		return -EIO;
	}
	*data = buf;
	*size = done;
	return 0;
}

int spool__read(struct spool *sp, const struct spool_entry *e, void **data, size_t *size)
{
	int fd, err;

	pthread_mutex_lock(&sp->lock);
	fd = openat(sp->dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	pthread_mutex_unlock(&sp->lock);
	if (fd < 0)
		return -errno;
	err = read_all(fd, data, size);
	close(fd);
	return err;
}

void spool__finish(struct spool *sp, const struct spool_entry *e, bool remove)
{
	size_t i;

	pthread_mutex_lock(&sp->lock);
	sp->busy[0] = '\0';
	for (i = 0; remove && i < sp->n; i++) {
		if (strcmp(sp->ents[i].name, e->name))
			continue;
		unlinkat(sp->dirfd, e->name, 0);
		sp->st.removed++;
		remove_at(sp, i);
		break;
	}
	pthread_mutex_unlock(&sp->lock);
}

void spool__stats(struct spool *sp, struct spool_stats *out)
{
	pthread_mutex_lock(&sp->lock);
	*out = sp->st;
	pthread_mutex_unlock(&sp->lock);
}

const char *spool__path(const struct spool *sp)
{
	return sp->path;
}
