// SPDX-License-Identifier: GPL-2.0-or-later
/* JIT maps, /tmp/perf-PID.map, found inside a process's root (see perfmap.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "procs/procmaps.h"
#include "symbols/perfmap.h"
#include "util/clock.h"
#include "symbols/symtab.h"

#define REREAD_NS 1000000000ULL /* re-read a map at most once a second */

void perfmap__init(struct perfmap *m, int pid, struct perfmap_pool *pool)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->pool = pool;
	m->uid = (uid_t)-1;
}

void perfmap__identify(struct perfmap *m)
{
	char path[64], line[256];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d", m->pid);
	if (stat(path, &st) == 0)
		m->uid = st.st_uid;
	snprintf(path, sizeof(path), "/proc/%d/status", m->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *last;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* One PID per nested namespace, ours first, its own last. */
		line[strcspn(line, "\n")] = '\0';
		last = strrchr(line, '\t');
		m->nspid = atoi(last ? last + 1 : line + 6);
		break;
	}
	fclose(f);
}

/* /tmp/perf-PID.map in our namespace: no symlink anywhere, no FIFO. */
static int open_host(int pid, struct stat *st)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	fd = (int)syscall(__NR_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static int perfmap__open(const struct perfmap *m, bool alive, struct stat *st)
{
	char path[64];
	int fd = -1;

	if (alive && m->nspid > 0) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", m->nspid);
		fd = procmap__open_in_root(m->pid, path, false, st);
	}
	if (fd < 0)
		fd = open_host(m->pid, st);
	if (fd < 0)
		return fd;
	/* Trust only the process's own user or root to name its code. */
	if (st->st_uid != 0 && st->st_uid != m->uid) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* [pos, end) of a file, as a stream for symtab__add_perf_map(): nothing past end is read. */
struct range {
	int fd;
	off_t pos, end;
};

static ssize_t range_read(void *cookie, char *buf, size_t n)
{
	struct range *r = cookie;
	ssize_t got;

	if ((off_t)n > r->end - r->pos)
		n = (size_t)(r->end - r->pos);
	if (!n)
		return 0;
	got = pread(r->fd, buf, n, r->pos);
	if (got > 0)
		r->pos += got;
	return got < 0 ? -1 : got;
}

/*
 * Where the last whole line of [from, size) ends: a JIT may be writing the
 * next one. A last line longer than the parser takes is taken whole (it is
 * skipped anyway).
 */
static off_t whole_lines_end(int fd, off_t from, off_t size)
{
	char buf[SYMTAB_PERF_MAP_MAX_LINE];
	off_t at = size - from > (off_t)sizeof(buf) ? size - (off_t)sizeof(buf) : from;
	ssize_t n = pread(fd, buf, (size_t)(size - at), at);

	if (n != size - at)
		return from;
	while (n > 0 && buf[n - 1] != '\n')
		n--;
	if (n > 0)
		return at + n;
	return at > from ? size : from;
}

/* Did the JIT only append since the last read? The bytes before its end are still there. */
static bool appended(const struct perfmap *m, int fd, const struct stat *st)
{
	char buf[sizeof(m->tail)];

	return m->loaded && m->nparts < PERFMAP_MAX_PARTS && st->st_size > m->parsed &&
	       m->tail_len && pread(fd, buf, m->tail_len, m->parsed - m->tail_len) == m->tail_len &&
	       !memcmp(buf, m->tail, m->tail_len);
}

/* ---- the pool's maps by use: the coldest give their tables up first ------------- */

static bool listed(const struct perfmap *m)
{
	return m->pool && (m->pool->hottest == m || m->colder || m->hotter);
}

static void unlist(struct perfmap *m)
{
	struct perfmap_pool *pool = m->pool;

	if (!listed(m))
		return;
	*(m->colder ? &m->colder->hotter : &pool->coldest) = m->hotter;
	*(m->hotter ? &m->hotter->colder : &pool->hottest) = m->colder;
	m->hotter = m->colder = NULL;
}

/* m was used (read or found in): the hottest now. */
static void used(struct perfmap *m)
{
	struct perfmap_pool *pool = m->pool;

	if (!pool || !m->nparts || pool->hottest == m)
		return;
	unlist(m);
	m->colder = pool->hottest;
	if (pool->hottest)
		pool->hottest->hotter = m;
	else
		pool->coldest = m;
	pool->hottest = m;
}

static void perfmap__drop(struct perfmap *m)
{
	unsigned i;

	for (i = 0; i < m->nparts; i++)
		symtab__free(m->parts[i]);
	m->nparts = 0;
	if (m->pool)
		m->pool->bytes -= m->charged;
	m->charged = 0;
	unlist(m);
}

/* Its tables go; the next lookup that misses reads the file whole again. */
static void evict(struct perfmap *m)
{
	perfmap__drop(m);
	m->loaded = false;
	m->size = 0;
	m->mtime = (struct timespec){ 0 };
	m->pool->evicted++;
}

static uint64_t pool_budget(const struct perfmap_pool *p)
{
	return p->budget ? p->budget : PERFMAP_DEFAULT_BUDGET;
}

/* Would a read of text bytes fit beside held bytes of kept tables? */
static bool fits(const struct perfmap_pool *pool, uint64_t text, uint64_t held)
{
	return text <= SYMTAB_PERF_MAP_MAX_BYTES && held <= pool_budget(pool) &&
	       text * PERFMAP_PEAK_PER_BYTE <= pool_budget(pool) - held;
}

/* The lines of [from, end) into a table of their own. */
static int perfmap__parse(int fd, off_t from, off_t end, struct symtab **out)
{
	static const cookie_io_functions_t io = { .read = range_read };
	struct range r = { fd, from, end };
	struct symtab *t = symtab__new();
	FILE *f = t ? fopencookie(&r, "r", io) : NULL;
	int err;

	if (!f) {
		symtab__free(t);
		return -ENOMEM;
	}
	err = symtab__add_perf_map(t, f);
	fclose(f);
	symtab__finish(t, true);
	*out = t;
	return err;
}

static int perfmap__read(struct perfmap *m, int fd, const struct stat *st)
{
	struct perfmap_pool *pool = m->pool;
	bool tail = appended(m, fd, st);
	off_t from = tail ? m->parsed : 0, end = whole_lines_end(fd, from, st->st_size);
	uint64_t text = (uint64_t)(end - from), held = pool->bytes - (tail ? 0 : m->charged);
	struct symtab *t = NULL;
	ssize_t n;
	int err;

	if (end == from)
		return 0; /* no whole line yet: read when it is */
	/*
	 * Checked before the work: what the parser would build at its peak, in
	 * what the budget has left once the other maps' tables went if need be
	 * (those not found in for longest first); none goes for a read that
	 * would not fit without any.
	 */
	if (fits(pool, text, tail ? m->charged : 0)) {
		while (!fits(pool, text, held)) {
			struct perfmap *cold = pool->coldest == m ? m->hotter : pool->coldest;

			if (!cold)
				break;
			evict(cold);
			held = pool->bytes - (tail ? 0 : m->charged);
		}
	}
	if (!fits(pool, text, held)) {
		pool->refused++;
		/* Not again until the file changes: a refused map costs a stat a second. */
		m->size = st->st_size;
		m->mtime = st->st_mtim;
		return -ENOSPC;
	}
	err = perfmap__parse(fd, from, end, &t);
	if (!t)
		return err;
	if (!tail)
		perfmap__drop(m);
	m->parts[m->nparts++] = t;
	m->charged += text * PERFMAP_KEPT_PER_BYTE;
	pool->bytes += text * PERFMAP_KEPT_PER_BYTE;
	*(tail ? &pool->tail_reads : &pool->reads) += 1;
	m->parsed = end;
	m->tail_len = end < (off_t)sizeof(m->tail) ? (unsigned)end : sizeof(m->tail);
	n = pread(fd, m->tail, m->tail_len, end - m->tail_len);
	if (n != m->tail_len)
		m->tail_len = 0; /* next change: read whole */
	m->loaded = true;
	m->size = st->st_size;
	m->mtime = st->st_mtim;
	used(m);
	return err;
}

static int perfmap__load(struct perfmap *m, bool alive)
{
	struct stat st;
	int fd, err;

	m->checked_ns = clock__mono_ns();
	fd = perfmap__open(m, alive, &st);
	if (fd < 0)
		return -ENOENT;
	if (st.st_size == m->size && st.st_mtim.tv_sec == m->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == m->mtime.tv_nsec && (m->loaded || m->size)) {
		close(fd);
		return 0;
	}
	err = perfmap__read(m, fd, &st);
	close(fd);
	return err;
}

void perfmap__refresh(struct perfmap *m, bool alive)
{
	if (m->checked_ns && clock__mono_ns() - m->checked_ns < REREAD_NS)
		return;
	perfmap__load(m, alive);
}

/* Newest lines first: code replaced at an address has its latest name. */
static const char *perfmap__lookup(struct perfmap *m, uint64_t addr, uint64_t *offset)
{
	const char *name;
	unsigned i;

	for (i = m->nparts; i > 0; i--) {
		name = symtab__find(m->parts[i - 1], addr, offset);
		if (name)
			return name;
	}
	return NULL;
}

const char *perfmap__find(struct perfmap *m, bool alive, uint64_t addr, uint64_t *offset)
{
	const char *name = perfmap__lookup(m, addr, offset);

	if (!name) {
		/* A miss may be code emitted since the last read: re-read, rate limited. */
		perfmap__refresh(m, alive);
		name = perfmap__lookup(m, addr, offset);
	}
	if (name)
		used(m);
	return name;
}

void perfmap__release(struct perfmap *m)
{
	perfmap__drop(m);
	m->loaded = false;
}
