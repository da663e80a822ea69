// SPDX-License-Identifier: GPL-2.0-or-later
/* The table cache's identity index (see tableident.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tables/tableident.h"
#include "util/clock.h"
#include "util/dirfiles.h"
#include "util/fileident.h"
#include "util/fullio.h"
#include "util/log.h"

#define TABLEIDENT_VERSION 1
#define MAGIC "SFBPFID\n"
#define BOOT_ID_BYTES 40

struct ident_rec {
	char magic[8];
	uint32_t version, len;
	char boot_id[BOOT_ID_BYTES];
	uint8_t ident[TABLEIDENT_MAX];
	uint8_t digest[SHA256_BYTES];
	char name[TABLEIDENT_NAME_MAX];
	/* Last: covers every byte before it. */
	uint8_t sha[SHA256_BYTES];
};
_Static_assert(sizeof(struct ident_rec) == 408, "ident_rec: no padding");

struct tableident {
	int dir_fd;
	char boot_id[BOOT_ID_BYTES];
	pthread_mutex_t lock; /* stats, temporary names */
	struct tableident_stats st;
	uint32_t tmp_seq;
	tableident_charge_fn charge; /* the cache's budget; NULL: none */
	void *charge_ctx;
};

/* The boot this record is for: its identities' devices and clock hold only there. */
static void read_boot_id(char out[BOOT_ID_BYTES])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, BOOT_ID_BYTES) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		memset(out, 0, BOOT_ID_BYTES);
	else if (n < BOOT_ID_BYTES)
		memset(out + n, 0, BOOT_ID_BYTES - (size_t)n);
}

struct tableident *tableident__open(int dir_fd)
{
	struct tableident *x;
	struct stat st;
	int fd;

	if (mkdirat(dir_fd, "ident", 0700) && errno != EEXIST)
		return NULL;
	fd = openat(dir_fd, "ident", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* As the cache directory: nobody else may plant records. */
	if (fd < 0 || fstat(fd, &st) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		close(fd);
		return NULL;
	}
	x->dir_fd = fd;
	read_boot_id(x->boot_id);
	pthread_mutex_init(&x->lock, NULL);
	return x;
}

void tableident__free(struct tableident *x)
{
	if (!x)
		return;
	close(x->dir_fd);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

void tableident__set_charge(struct tableident *x, tableident_charge_fn fn, void *ctx)
{
	x->charge = fn;
	x->charge_ctx = ctx;
}

int tableident__dir_fd(const struct tableident *x)
{
	return x->dir_fd;
}

static void charge(struct tableident *x, int64_t bytes)
{
	if (x->charge)
		x->charge(x->charge_ctx, bytes);
}

/* Deletes file name (size bytes), given back to the budget. */
static void unlink_file(struct tableident *x, const char *name, uint64_t size)
{
	if (!unlinkat(x->dir_fd, name, 0))
		charge(x, -(int64_t)size);
}

void tableident__stats(struct tableident *x, struct tableident_stats *out)
{
	pthread_mutex_lock(&x->lock);
	*out = x->st;
	pthread_mutex_unlock(&x->lock);
}

static void count(struct tableident *x, uint64_t *counter)
{
	pthread_mutex_lock(&x->lock);
	(*counter)++;
	pthread_mutex_unlock(&x->lock);
}

static void file_name(const void *ident, uint32_t len, char name[33])
{
	static const char digits[] = "0123456789abcdef";
	uint8_t h[SHA256_BYTES];
	struct sha256 sha;
	int i;

	sha256__init(&sha);
	sha256__update(&sha, ident, len);
	sha256__final(&sha, h);
	for (i = 0; i < 16; i++) {
		name[2 * i] = digits[h[i] >> 4];
		name[2 * i + 1] = digits[h[i] & 15];
	}
	name[32] = '\0';
}

static void rec_sha(const struct ident_rec *r, uint8_t out[SHA256_BYTES])
{
	struct sha256 sha;

	sha256__init(&sha);
	sha256__update(&sha, r, offsetof(struct ident_rec, sha));
	sha256__final(&sha, out);
}

/*
 * The record in file name, if it is whole, ours and of this boot: 0, -ENOENT,
 * -ESTALE (another boot's), or -EBADMSG.
 */
static int read_rec(struct tableident *x, const char *name, struct ident_rec *r)
{
	uint8_t sha[SHA256_BYTES];
	struct stat st;
	int fd = openat(x->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int err;

	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : -ENOENT;
	err = fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
			      st.st_size != sizeof(*r) || fullio__pread(fd, r, sizeof(*r), 0) ?
		      -EBADMSG :
		      0;
	close(fd);
	if (err)
		return err;
	rec_sha(r, sha);
	if (memcmp(r->magic, MAGIC, 8) || r->version != TABLEIDENT_VERSION ||
	    r->len > TABLEIDENT_MAX || memcmp(sha, r->sha, SHA256_BYTES))
		return -EBADMSG;
	if (memcmp(r->boot_id, x->boot_id, BOOT_ID_BYTES))
		return -ESTALE;
	r->name[TABLEIDENT_NAME_MAX - 1] = '\0';
	return 0;
}

/* A record that may not be used: deleted, and counted unless it is only another boot's. */
static void drop(struct tableident *x, const char *name, int err)
{
	struct stat st;

	if (!fstatat(x->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		unlink_file(x, name, S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0);
	if (err == -EBADMSG)
		count(x, &x->st.refused);
}

static bool same_status(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       clock__ts_ns(&a->st_mtim) == clock__ts_ns(&b->st_mtim) &&
	       clock__ts_ns(&a->st_ctim) == clock__ts_ns(&b->st_ctim);
}

int tableident__note(struct tableident *x, const void *ident, uint32_t len,
		     const uint8_t digest[SHA256_BYTES], const char *name, int fd,
		     const struct stat *st, int64_t hash_start_ns)
{
	struct ident_rec r = { .version = TABLEIDENT_VERSION, .len = len }, old;
	char file[33], tmp[64];
	struct stat now;
	int out, err, had;

	if (len > TABLEIDENT_MAX)
		return -EINVAL;
	/* The file as hashed is the file as keyed, unwritten since well before. */
	if (fstat(fd, &now) || !same_status(st, &now) ||
	    clock__ts_ns(&st->st_ctim) > hash_start_ns - TABLEIDENT_CTIME_MARGIN_NS ||
	    !fileident__kernel_kept(fd, st)) {
		count(x, &x->st.not_noted);
		return 0;
	}
	memcpy(r.magic, MAGIC, sizeof(r.magic));
	memcpy(r.boot_id, x->boot_id, BOOT_ID_BYTES);
	memcpy(r.ident, ident, len);
	memcpy(r.digest, digest, SHA256_BYTES);
	snprintf(r.name, sizeof(r.name), "%s", name ? name : "?");
	rec_sha(&r, r.sha);
	file_name(ident, len, file);
	had = read_rec(x, file, &old);
	if (!had && !memcmp(&old, &r, sizeof(r))) {
		/* Known: its use is what ages it. */
		utimensat(x->dir_fd, file, NULL, AT_SYMLINK_NOFOLLOW);
		return 1;
	}
	/* A new file takes room (the oldest files go for it); one replaced took it already. */
	had = had != -ENOENT;
	if (!had)
		charge(x, sizeof(r));
	pthread_mutex_lock(&x->lock);
	snprintf(tmp, sizeof(tmp), ".tmp.%d.%u", (int)getpid(), ++x->tmp_seq);
	pthread_mutex_unlock(&x->lock);
	out = openat(x->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = out < 0 ? -errno : fullio__write(out, &r, sizeof(r));
	if (out >= 0 && close(out) && !err)
		err = -errno;
	if (!err && renameat(x->dir_fd, tmp, x->dir_fd, file))
		err = -errno;
	if (err) {
		if (out >= 0)
			unlinkat(x->dir_fd, tmp, 0);
		if (!had)
			charge(x, -(int64_t)sizeof(r));
		return err;
	}
	count(x, &x->st.noted);
	return 1;
}

int tableident__digest(struct tableident *x, const void *ident, uint32_t len,
		       uint8_t digest[SHA256_BYTES])
{
	struct ident_rec r;
	char file[33];
	int err;

	if (len > TABLEIDENT_MAX)
		return -ENOENT;
	file_name(ident, len, file);
	err = read_rec(x, file, &r);
	if (err == -EBADMSG || err == -ESTALE)
		drop(x, file, err);
	if (err)
		return -ENOENT;
	/* Two identities of one name (16 bytes of SHA-256 alike): not ours. */
	if (r.len != len || memcmp(r.ident, ident, len))
		return -ENOENT;
	memcpy(digest, r.digest, SHA256_BYTES);
	utimensat(x->dir_fd, file, NULL, AT_SYMLINK_NOFOLLOW);
	count(x, &x->st.hits);
	return 0;
}

static int newest_first(const void *a, const void *b)
{
	const struct dir_file *p = a, *q = b;

	return p->mtime_ns > q->mtime_ns ? -1 : p->mtime_ns < q->mtime_ns;
}

int tableident__recent(struct tableident *x, uint32_t max, struct tableident_rec **out,
		       uint32_t *nr)
{
	struct tableident_rec *recs = NULL;
	struct dir_file *f = NULL;
	struct ident_rec r;
	size_t n = 0, i;
	uint32_t got = 0;
	/* Temporary files (.tmp.*) are passed over: one may be being written. */
	int err = dirfiles__list(x->dir_fd, true, &f, &n);

	*out = NULL;
	*nr = 0;
	if (err)
		return err;
	qsort(f, n, sizeof(*f), newest_first);
	if (max && !(recs = calloc(max, sizeof(*recs)))) {
		free(f);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		/*
		 * The oldest past the cap go: the cache's budget bounds their
		 * bytes, this how many a start lists and reads.
		 */
		if (i >= TABLEIDENT_MAX_FILES) {
			unlink_file(x, f[i].name, f[i].size);
			continue;
		}
		if (got == max)
			continue;
		err = read_rec(x, f[i].name, &r);
		if (err == -EBADMSG || err == -ESTALE)
			drop(x, f[i].name, err);
		if (err)
			continue;
		memcpy(recs[got].ident, r.ident, r.len);
		recs[got].len = r.len;
		memcpy(recs[got].digest, r.digest, SHA256_BYTES);
		memcpy(recs[got].name, r.name, TABLEIDENT_NAME_MAX);
		got++;
	}
	free(f);
	*out = recs;
	*nr = got;
	return 0;
}
