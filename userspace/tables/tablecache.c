// SPDX-License-Identifier: GPL-2.0-or-later
/* Built tables kept on disk across restarts (see tablecache.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tables/flatbuild.h"
#include "tables/tablecache.h"
#include "tables/tableident.h"
#include "util/clock.h"
#include "util/dirfiles.h"
#include "util/fullio.h"
#include "util/log.h"

/* Bump when the file layout or the meaning of a field changes. */
#define TABLECACHE_VERSION 2 /* 2: rules say where rbx was saved (xreg_off8) */
#define MAGIC "SFBPFTC\n"
/* Read back into memory at once: bounded before anything is allocated. */
#define MAX_PAYLOAD (256ull << 20)
#define ENDIAN_MARK 0x01020304u

#define META_FROM_CFI 1u
#define META_REJECTED 2u
/*
 * A dot file (.tmp.*: a store or an identity record being written, by this
 * process or another) is never evicted while it may be written to; one this
 * much older than its last write was left by a writer that died.
 */
#define TMP_STALE_NS (3600ll * 1000000000)
/*
 * An eviction frees a sixteenth of the budget more than the store needs: a
 * full cache is otherwise listed again (tables and ident/) at every store
 * and every new identity record.
 */
#define EVICT_SLACK_DIV 16

/* Where a listed file is: the tables' directory or the identity index's ident/. */
enum { IN_TABLES, IN_IDENT };

struct tablecache_hdr {
	char magic[8];
	uint32_t version, endian;
	uint32_t hdr_bytes, row_bytes, rule_bytes, flags;
	uint8_t key[SHA256_BYTES];
	uint32_t nr_rows, nr_rules, nr_pages, pc_min, page_shift;
	uint32_t nr_fdes, nr_fres, nr_skipped_fdes, nr_reserved_fdes, nr_unsupported_fres;
	uint64_t sframe_bytes;
	uint64_t payload_bytes;
	/* Last: covers every byte before it and the payload after the header. */
	uint8_t sha[SHA256_BYTES];
};
_Static_assert(sizeof(struct tablecache_hdr) == 152, "tablecache_hdr: no padding");

struct tablecache {
	int dir_fd; /* -1: off */
	char *dir; /* its path, for what is said about it */
	bool no_cfi;
	uint8_t builder[SHA256_BYTES];
	struct tableident *ident; /* NULL: none */
	pthread_mutex_t lock; /* stats, the total, eviction, temporary names, refs */
	uint32_t refs;
	struct tablecache_stats st;
	uint32_t tmp_seq;
};

/* ---- the directory ----------------------------------------------------------- */

uint64_t tablecache__default_budget(int dir_fd)
{
	struct statvfs vfs;
	uint64_t fs;

	if (fstatvfs(dir_fd, &vfs))
		return TABLECACHE_MAX_DEFAULT / 16;
	fs = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	return fs / 50 < TABLECACHE_MAX_DEFAULT ? fs / 50 : TABLECACHE_MAX_DEFAULT;
}

/* The default directory's parents, made as root's own when missing (FHS: /var/cache). */
static void make_dirs(const char *dir)
{
	char path[4096];
	size_t i;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
		return;
	for (i = 1; path[i]; i++) {
		if (path[i] != '/')
			continue;
		path[i] = '\0';
		mkdir(path, 0700);
		path[i] = '/';
	}
	mkdir(path, 0700);
}

/*
 * The directory, if only we may write into it: another user who could would
 * plant tables (a file's name is public: the key of a library anyone reads).
 */
static int open_dir(const char *dir)
{
	struct stat st;
	int fd;

	make_dirs(dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		pr_warn("table cache %s: %s: the cache is off", dir, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		pr_warn("table cache %s: not owned by uid %u or writable by others: the cache is off",
			dir, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	return fd;
}

/* The running executable's digest: which builder made a table. */
static void builder_digest(uint8_t out[SHA256_BYTES])
{
	static const char seed[] = "sfbpf table builder";
	struct sha256 sha;
	char buf[64 << 10];
	ssize_t n;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	sha256__init(&sha);
	sha256__update(&sha, seed, sizeof(seed));
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		sha256__update(&sha, buf, (size_t)n);
	if (fd >= 0)
		close(fd);
	sha256__final(&sha, out);
}

static int by_mtime(const void *a, const void *b)
{
	const struct dir_file *x = a, *y = b;

	return x->mtime_ns < y->mtime_ns ? -1 : x->mtime_ns > y->mtime_ns;
}

/*
 * The regular files the budget counts (*files, *nr), tagged IN_TABLES or
 * IN_IDENT: the tables, the identity records, and the temporary files of
 * both (they take room while written); their total. 0 or -errno.
 */
static int scan(struct tablecache *c, struct dir_file **files, size_t *nr, uint64_t *total)
{
	size_t cap = 0, i;
	int err;

	*files = NULL;
	*nr = 0;
	*total = 0;
	err = dirfiles__append(c->dir_fd, false, IN_TABLES, files, nr, &cap);
	if (!err && c->ident)
		err = dirfiles__append(tableident__dir_fd(c->ident), false, IN_IDENT, files, nr,
				       &cap);
	if (err) {
		free(*files);
		return err;
	}
	for (i = 0; i < *nr; i++)
		*total += (*files)[i].size;
	return 0;
}

/*
 * When need more bytes would pass the budget, deletes the least recently
 * used tables and identity records (their mtimes: a hit touches a table, a
 * use a record) until need fits with a sixteenth of the budget to spare.
 * Another writer's temporary file is passed over; one left long ago goes
 * whatever the budget. The total is taken from the directories again: other
 * sfbpf processes may have written into them since the last count. Under
 * c->lock.
 */
static void evict_locked(struct tablecache *c, uint64_t need)
{
	int64_t stale = clock__wall_ns() - TMP_STALE_NS;
	struct dir_file *f;
	uint64_t total, low;
	size_t n, i;
	bool tmp;
	int fd;

	if (scan(c, &f, &n, &total))
		return;
	if (n)
		qsort(f, n, sizeof(*f), by_mtime);
	low = total + need > c->st.max_bytes ? c->st.max_bytes - c->st.max_bytes / EVICT_SLACK_DIV :
					       UINT64_MAX;
	/* Oldest first: once need fits, only stale temporary files are left to delete. */
	for (i = 0; i < n && (total + need > low || f[i].mtime_ns < stale); i++) {
		tmp = f[i].name[0] == '.';
		if (tmp ? f[i].mtime_ns >= stale : total + need <= low)
			continue;
		fd = f[i].tag == IN_IDENT ? tableident__dir_fd(c->ident) : c->dir_fd;
		if (unlinkat(fd, f[i].name, 0))
			continue;
		total -= f[i].size;
		c->st.evicted += !tmp;
	}
	c->st.bytes = total;
	free(f);
}

/* An identity record's bytes (tableident.h): charged to the budget as a table's are. */
static void charge_ident(void *ctx, int64_t bytes)
{
	struct tablecache *c = ctx;
	uint64_t b = bytes < 0 ? (uint64_t)-bytes : (uint64_t)bytes;

	pthread_mutex_lock(&c->lock);
	if (bytes > 0 && c->st.bytes + b > c->st.max_bytes)
		evict_locked(c, b);
	if (bytes > 0)
		c->st.bytes += b;
	else
		c->st.bytes -= b < c->st.bytes ? b : c->st.bytes;
	pthread_mutex_unlock(&c->lock);
}

/*
 * From now on nothing is stored: the directory cannot be written (err), which
 * every later store would say again. Lookups go on.
 */
static void set_read_only(struct tablecache *c, int err)
{
	if (c->st.read_only)
		return;
	c->st.read_only = 1;
	pr_warn("table cache: %s: %s: tables are read from it, none is stored",
		c->dir ? c->dir : "its directory", strerror(err));
}

struct tablecache *tablecache__new(const struct tablecache_opts *opts)
{
	struct tablecache *c = calloc(1, sizeof(*c));
	struct statvfs vfs;

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->refs = 1;
	c->no_cfi = opts->no_cfi;
	c->dir_fd = open_dir(opts->dir ? opts->dir : TABLECACHE_DEFAULT_DIR);
	if (c->dir_fd < 0) {
		c->st.refused_dir = 1;
		return c;
	}
	builder_digest(c->builder);
	c->dir = strdup(opts->dir ? opts->dir : TABLECACHE_DEFAULT_DIR);
	/*
	 * A cache shipped read-only (a container's image, a mount made ro) is
	 * still worth reading: said once here, not once per table not stored.
	 */
	if (!fstatvfs(c->dir_fd, &vfs) && (vfs.f_flag & ST_RDONLY))
		set_read_only(c, EROFS);
	c->ident = tableident__open(c->dir_fd);
	if (!c->ident && !c->st.read_only)
		pr_warn("table cache: no identity index (ident/): each file's sections are read again after a restart");
	else if (c->ident)
		tableident__set_charge(c->ident, charge_ident, c);
	c->st.max_bytes = opts->max_bytes ? opts->max_bytes : tablecache__default_budget(c->dir_fd);
	/*
	 * The total counted; a smaller budget than last time fits at once, not
	 * only at the next store; temporary files a crash left are swept.
	 */
	evict_locked(c, 0);
	return c;
}

struct tablecache *tablecache__ref(struct tablecache *c)
{
	if (c) {
		pthread_mutex_lock(&c->lock);
		c->refs++;
		pthread_mutex_unlock(&c->lock);
	}
	return c;
}

void tablecache__free(struct tablecache *c)
{
	bool last;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->lock);
	if (!last)
		return;
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	tableident__free(c->ident);
	pthread_mutex_destroy(&c->lock);
	free(c->dir);
	free(c);
}

bool tablecache__enabled(const struct tablecache *c)
{
	return c && c->dir_fd >= 0;
}

void tablecache__stats(struct tablecache *c, struct tablecache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	pthread_mutex_unlock(&c->lock);
	if (c->ident)
		tableident__stats(c->ident, &out->ident);
}

struct tableident *tablecache__ident(struct tablecache *c)
{
	return c ? c->ident : NULL;
}

/* ---- keys and files ---------------------------------------------------------- */

static void make_key(const struct tablecache *c, const uint8_t digest[SHA256_BYTES],
		     uint8_t key[SHA256_BYTES])
{
	uint32_t version = TABLECACHE_VERSION;
	uint8_t no_cfi = c->no_cfi;
	struct sha256 sha;

	sha256__init(&sha);
	sha256__update(&sha, &version, sizeof(version));
	sha256__update(&sha, c->builder, SHA256_BYTES);
	sha256__update(&sha, &no_cfi, sizeof(no_cfi));
	sha256__update(&sha, digest, SHA256_BYTES);
	sha256__final(&sha, key);
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

void tablecache__name(const struct tablecache *c, const uint8_t digest[SHA256_BYTES],
		      char name[2 * SHA256_BYTES + 1])
{
	uint8_t key[SHA256_BYTES];

	make_key(c, digest, key);
	hex(key, SHA256_BYTES, name);
}

bool tablecache__holds(struct tablecache *c, const uint8_t digest[SHA256_BYTES], uint64_t *bytes)
{
	char name[2 * SHA256_BYTES + 1];
	struct stat st;

	if (c->dir_fd < 0)
		return false;
	tablecache__name(c, digest, name);
	if (fstatat(c->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
		return false;
	*bytes = (uint64_t)st.st_size;
	return true;
}

static void count(struct tablecache *c, uint64_t *counter)
{
	pthread_mutex_lock(&c->lock);
	(*counter)++;
	pthread_mutex_unlock(&c->lock);
}

/* The payload's three arrays, in file order. */
static void arrays(const struct flat_table *t, const void *p[3], size_t n[3])
{
	p[0] = t->rows;
	n[0] = (size_t)t->nr_rows * sizeof(*t->rows);
	p[1] = t->rules;
	n[1] = (size_t)t->nr_rules * sizeof(*t->rules);
	p[2] = t->pages;
	n[2] = (size_t)t->nr_pages * sizeof(*t->pages);
}

static void file_digest(const struct tablecache_hdr *h, const struct flat_table *t,
			uint8_t out[SHA256_BYTES])
{
	struct sha256 sha;
	const void *p[3];
	size_t n[3];
	int i;

	arrays(t, p, n);
	sha256__init(&sha);
	sha256__update(&sha, h, offsetof(struct tablecache_hdr, sha));
	for (i = 0; i < 3; i++)
		sha256__update(&sha, p[i], n[i]);
	sha256__final(&sha, out);
}

enum refusal { REFUSE_CORRUPT = 1, REFUSE_VERSION, REFUSE_FOREIGN };

/*
 * The table of the file open at fd (size bytes) whose key should be key:
 * 0, or why it is refused. Read into memory, then judged: what is judged is
 * what is used, whoever writes the file meanwhile.
 */
static int read_table(int fd, uint64_t size, const uint8_t key[SHA256_BYTES],
		      struct flat_table **out, struct tablecache_meta *meta)
{
	struct tablecache_hdr h;
	struct flat_table *t;
	uint8_t sha[SHA256_BYTES];
	uint64_t payload, off;
	void *p[3];
	size_t n[3];
	int i;

	if (size < sizeof(h) || fullio__pread(fd, &h, sizeof(h), 0) || memcmp(h.magic, MAGIC, 8))
		return REFUSE_CORRUPT;
	if (h.version != TABLECACHE_VERSION || h.endian != ENDIAN_MARK ||
	    h.hdr_bytes != sizeof(h) || h.row_bytes != sizeof(struct flat_row) ||
	    h.rule_bytes != sizeof(struct sfbpf_rule))
		return REFUSE_VERSION;
	if (memcmp(h.key, key, SHA256_BYTES))
		return REFUSE_FOREIGN;
	payload = (uint64_t)h.nr_rows * sizeof(struct flat_row) +
		  (uint64_t)h.nr_rules * sizeof(struct sfbpf_rule) + (uint64_t)h.nr_pages * 4;
	if (payload != h.payload_bytes || payload > MAX_PAYLOAD || size != sizeof(h) + payload ||
	    h.page_shift)
		return REFUSE_CORRUPT;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->nr_rows = h.nr_rows;
	t->nr_rules = h.nr_rules;
	t->nr_pages = h.nr_pages;
	t->rows = malloc(h.nr_rows ? (size_t)h.nr_rows * sizeof(*t->rows) : 1);
	t->rules = malloc(h.nr_rules ? (size_t)h.nr_rules * sizeof(*t->rules) : 1);
	t->pages = malloc(h.nr_pages ? (size_t)h.nr_pages * sizeof(*t->pages) : 1);
	if (!t->rows || !t->rules || !t->pages) {
		flat_table__free(t);
		return -ENOMEM;
	}
	t->pc_min = h.pc_min;
	t->nr_fdes = h.nr_fdes;
	t->nr_fres = h.nr_fres;
	t->nr_skipped_fdes = h.nr_skipped_fdes;
	t->nr_reserved_fdes = h.nr_reserved_fdes;
	t->nr_unsupported_fres = h.nr_unsupported_fres;
	arrays(t, (const void **)p, n);
	for (i = 0, off = sizeof(h); i < 3; off += n[i++])
		if (fullio__pread(fd, p[i], n[i], off))
			goto corrupt;
	file_digest(&h, t, sha);
	if (memcmp(sha, h.sha, SHA256_BYTES) || flat_table__check(t))
		goto corrupt;
	meta->from_cfi = h.flags & META_FROM_CFI;
	meta->rejected = h.flags & META_REJECTED;
	meta->sframe_bytes = h.sframe_bytes;
	*out = t;
	return 0;
corrupt:
	flat_table__free(t);
	return REFUSE_CORRUPT;
}

int tablecache__lookup(struct tablecache *c, const uint8_t digest[SHA256_BYTES],
		       struct flat_table **ft, struct tablecache_meta *meta)
{
	static const char *const why[] = { [REFUSE_CORRUPT] = "corrupt",
					   [REFUSE_VERSION] = "another version",
					   [REFUSE_FOREIGN] = "another object's" };
	char name[2 * SHA256_BYTES + 1];
	uint8_t key[SHA256_BYTES];
	struct stat st;
	int fd, ret;

	*ft = NULL;
	if (c->dir_fd < 0)
		return -ENODEV;
	make_key(c, digest, key);
	hex(key, SHA256_BYTES, name);
	fd = openat(c->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno != ELOOP) {
		/* No file; or no descriptor left now (EMFILE): not the file's fault either way. */
		ret = errno;
		count(c, &c->st.misses);
		return -ret;
	}
	/* Not a regular file of ours (a FIFO, a symlink: ELOOP) is as corrupt as bad bytes. */
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		ret = REFUSE_CORRUPT;
	else
		ret = read_table(fd, (uint64_t)st.st_size, key, ft, meta);
	if (!ret) {
		futimens(fd, NULL); /* recently used: evicted last */
		count(c, &c->st.hits);
	}
	if (fd >= 0)
		close(fd);
	if (ret <= 0)
		return ret;
	pr_warn("table cache: %s refused (%s): built again", name, why[ret]);
	pthread_mutex_lock(&c->lock);
	if (!fstatat(c->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) && !unlinkat(c->dir_fd, name, 0))
		c->st.bytes -=
			(uint64_t)st.st_size < c->st.bytes ? (uint64_t)st.st_size : c->st.bytes;
	c->st.refused_corrupt += ret == REFUSE_CORRUPT;
	c->st.refused_version += ret == REFUSE_VERSION;
	c->st.refused_foreign += ret == REFUSE_FOREIGN;
	pthread_mutex_unlock(&c->lock);
	return -EBADMSG;
}

static int write_table(int fd, const struct tablecache_hdr *h, const struct flat_table *t)
{
	const void *p[3];
	size_t n[3];
	int i, err = fullio__write(fd, h, sizeof(*h));

	arrays(t, p, n);
	for (i = 0; !err && i < 3; i++)
		err = fullio__write(fd, p[i], n[i]);
	return err;
}

int tablecache__store(struct tablecache *c, const uint8_t digest[SHA256_BYTES],
		      const struct flat_table *ft, const struct tablecache_meta *meta)
{
	struct tablecache_hdr h = { .version = TABLECACHE_VERSION,
				    .endian = ENDIAN_MARK,
				    .hdr_bytes = sizeof(h),
				    .row_bytes = sizeof(struct flat_row),
				    .rule_bytes = sizeof(struct sfbpf_rule) };
	char name[2 * SHA256_BYTES + 1], tmp[64];
	uint64_t size, old = 0;
	struct stat st;
	int fd, err;

	if (c->dir_fd < 0)
		return -ENODEV;
	if (c->st.read_only)
		return -EROFS;
	/* Only what a build hands over is stored: a reader refuses anything else. */
	if (flat_table__check(ft))
		return -EINVAL;
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	make_key(c, digest, h.key);
	hex(h.key, SHA256_BYTES, name);
	h.flags = (meta->from_cfi ? META_FROM_CFI : 0) | (meta->rejected ? META_REJECTED : 0);
	h.nr_rows = ft->nr_rows;
	h.nr_rules = ft->nr_rules;
	h.nr_pages = ft->nr_pages;
	h.pc_min = ft->pc_min;
	h.page_shift = ft->page_shift;
	h.nr_fdes = ft->nr_fdes;
	h.nr_fres = ft->nr_fres;
	h.nr_skipped_fdes = ft->nr_skipped_fdes;
	h.nr_reserved_fdes = ft->nr_reserved_fdes;
	h.nr_unsupported_fres = ft->nr_unsupported_fres;
	h.sframe_bytes = meta->sframe_bytes;
	h.payload_bytes = (uint64_t)ft->nr_rows * sizeof(struct flat_row) +
			  (uint64_t)ft->nr_rules * sizeof(struct sfbpf_rule) +
			  (uint64_t)ft->nr_pages * 4;
	file_digest(&h, ft, h.sha);
	size = sizeof(h) + h.payload_bytes;

	pthread_mutex_lock(&c->lock);
	if (size > c->st.max_bytes || h.payload_bytes > MAX_PAYLOAD) {
		c->st.store_failed++;
		pthread_mutex_unlock(&c->lock);
		return -EFBIG;
	}
	if (c->st.bytes + size > c->st.max_bytes)
		evict_locked(c, size);
	snprintf(tmp, sizeof(tmp), ".tmp.%d.%u", (int)getpid(), ++c->tmp_seq);
	/* Counted now: the other loader thread's store sees the room this one takes. */
	c->st.bytes += size;
	pthread_mutex_unlock(&c->lock);

	fd = openat(c->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = fd < 0 ? -errno : write_table(fd, &h, ft);
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err && !fstatat(c->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		old = (uint64_t)st.st_size; /* stored meanwhile by another sfbpf */
	if (!err && renameat(c->dir_fd, tmp, c->dir_fd, name))
		err = -errno;
	if (err && fd >= 0)
		unlinkat(c->dir_fd, tmp, 0);

	pthread_mutex_lock(&c->lock);
	/* Clamped: an eviction meanwhile counted the directory afresh. */
	old = err ? size : old;
	c->st.bytes -= old < c->st.bytes ? old : c->st.bytes;
	if (err)
		c->st.store_failed++;
	else
		c->st.stored++;
	pthread_mutex_unlock(&c->lock);
	/* The directory itself cannot be written: once, not per table. */
	if (err == -EROFS || err == -EACCES || err == -EPERM) {
		pthread_mutex_lock(&c->lock);
		set_read_only(c, -err);
		pthread_mutex_unlock(&c->lock);
	} else if (err) {
		pr_warn("table cache: storing %s: %s", name, strerror(-err));
	}
	return err;
}
