// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /proc/PID/maps parser (see procmaps.h). The file is read in one go into a
 * buffer and parsed afterwards: the kernel builds each read() chunk under the
 * mmap lock, so reading fast keeps the snapshot close to consistent.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <pthread.h>

#include "procs/procmaps.h"
#include "util/fileident.h"
#include "util/clock.h"
#include "util/search.h"
#include "util/vec.h"

struct procmaps {
	struct procmap *maps;
	size_t count;
	char *strs; /* every path, NUL-terminated */
	int refs; /* atomic: the cache's and each holder's */
	int pid; /* snapshots from procmaps__snapshot(): whose, and when read */
	uint64_t read_ns;
	const struct procmap *exe; /* the main executable's mapping, or NULL */
};

/*
 * The latest snapshot of recently read processes, one slot per pid modulo
 * the size (a newer process or snapshot replaces the slot's): the tracker
 * reads a process's mappings when it appears or execs, the symbolizer
 * usually wants them a few milliseconds later.
 */
#define SNAP_SLOTS 256
static struct procmaps *snap_cache[SNAP_SLOTS];
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;

static const char deleted_suffix[] = " (deleted)";

static bool parse_hex(const char **p, const char *end, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;

	for (; s < end; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (v >> 60)
			return false;
		v = v << 4 | d;
	}
	if (s == *p)
		return false;
	*p = s;
	*val = v;
	return true;
}

static bool parse_dec(const char **p, const char *end, uint64_t *val)
{
	const char *s = *p;
	uint64_t v = 0;

	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	if (s == *p)
		return false;
	*p = s;
	*val = v;
	return true;
}

static bool expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static void skip_spaces(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

static bool parse_perms(const char **p, const char *end, uint32_t *perms)
{
	static const char want[4] = { 'r', 'w', 'x', 'p' };
	const char *s = *p;
	uint32_t v = 0;
	int i;

	if (end - s < 4)
		return false;
	for (i = 0; i < 4; i++) {
		if (s[i] == want[i])
			v |= i < 3 ? 1u << i : 0;
		else if (i == 3 && s[i] == 's')
			v |= PROCMAP_SHARED;
		else if (s[i] != '-')
			return false;
	}
	*p = s + 4;
	*perms = v;
	return true;
}

static void classify(struct procmap *m, char *path, size_t len)
{
	size_t sl = sizeof(deleted_suffix) - 1;

	if (len == 0) {
		m->flags |= PROCMAP_F_ANON;
		return;
	}
	if (path[0] == '[') {
		m->flags |= PROCMAP_F_ANON | PROCMAP_F_PSEUDO;
		if (strcmp(path, "[vdso]") == 0)
			m->flags |= PROCMAP_F_VDSO;
		return;
	}
	if (len > sl && memcmp(path + len - sl, deleted_suffix, sl) == 0) {
		m->flags |= PROCMAP_F_DELETED;
		path[len - sl] = '\0';
	}
}

/* One line [p, end) into m; the path is copied to *pool. */
static bool parse_line(const char *p, const char *end, struct procmap *m, char **pool)
{
	uint64_t maj, min;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (!parse_hex(&p, end, &m->start) || !expect(&p, end, '-') ||
	    !parse_hex(&p, end, &m->end) || !expect(&p, end, ' ') ||
	    !parse_perms(&p, end, &m->perms) || !expect(&p, end, ' ') ||
	    !parse_hex(&p, end, &m->offset) || !expect(&p, end, ' ') || !parse_hex(&p, end, &maj) ||
	    !expect(&p, end, ':') || !parse_hex(&p, end, &min) || !expect(&p, end, ' ') ||
	    !parse_dec(&p, end, &m->inode))
		return false;
	if (m->end <= m->start || maj > UINT32_MAX || min > UINT32_MAX)
		return false;
	if (p < end && *p != ' ')
		return false;
	m->dev_major = maj;
	m->dev_minor = min;
	skip_spaces(&p, end);

	len = end - p;
	memcpy(*pool, p, len);
	(*pool)[len] = '\0';
	m->path = *pool;
	classify(m, *pool, len);
	*pool += len + 1;
	return true;
}

static int cmp_start(const void *a, const void *b)
{
	const struct procmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* strict: fail on a bad line (text from a test); else skip it (live process). */
static int parse(const char *buf, size_t len, bool strict, struct procmaps **out)
{
	const char *p = buf, *end = buf + len;
	struct procmaps *pm;
	size_t lines = 0, i;
	bool sorted = true;
	char *pool;

	for (i = 0; i < len; i++)
		lines += buf[i] == '\n';
	lines += len && buf[len - 1] != '\n';

	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->refs = 1;
	/* A path plus its NUL is never longer than its line plus newline. */
	pm->strs = malloc(len + 1);
	pm->maps = calloc(lines ? lines : 1, sizeof(*pm->maps));
	if (!pm->strs || !pm->maps) {
		procmaps__free(pm);
		return -ENOMEM;
	}
	pool = pm->strs;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *eol = nl ? nl : end;
		struct procmap *m = &pm->maps[pm->count];

		if (eol > p && parse_line(p, eol, m, &pool)) {
			if (pm->count && m->start < m[-1].start)
				sorted = false;
			pm->count++;
		} else if (strict && eol > p) {
			procmaps__free(pm);
			return -EINVAL;
		}
		p = eol + 1;
	}
	if (!sorted)
		qsort(pm->maps, pm->count, sizeof(*pm->maps), cmp_start);
	*out = pm;
	return 0;
}

int procmaps__parse(const char *buf, size_t len, struct procmaps **out)
{
	return parse(buf, len, true, out);
}

/* Read all of fd; a process exiting mid-read gives ESRCH or a short file. */
static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 0, n = 0;
	char *b = NULL;
	ssize_t r;

	for (;;) {
		/* Room for at least 4 KiB more on each read. */
		if (VEC_RESERVE(b, cap, n + 4096, 16384)) {
			free(b);
			return -ENOMEM;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;

			free(b);
			return err == ESRCH || err == ENOENT ? -ESRCH : -err;
		}
		if (r == 0)
			break;
		n += r;
	}
	*buf = b;
	*len = n;
	return 0;
}

/*
 * The mapping of pid's executable (/proc/PID/exe), read after the maps: if
 * the process exec'd in between, no mapping is its file and there is none.
 * By inode (the device too where it matches: /proc/PID/maps shows an
 * overlayfs file's lower device on some kernels, stat() the overlay's).
 */
static void find_exe(int pid, struct procmaps *pm)
{
	const struct procmap *m;
	char path[64];
	struct stat st;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return;
	for (i = 0; i < pm->count; i++) {
		m = &pm->maps[i];
		if ((m->flags & PROCMAP_F_ANON) || m->inode != st.st_ino)
			continue;
		if (major(st.st_dev) == m->dev_major && minor(st.st_dev) == m->dev_minor) {
			pm->exe = m;
			return;
		}
		if (!pm->exe)
			pm->exe = m;
	}
}

int procmaps__read(int pid, struct procmaps **out)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = read_all(fd, &buf, &len);
	close(fd);
	if (err)
		return err;
	err = parse(buf, len, false, out);
	free(buf);
	if (!err)
		find_exe(pid, *out);
	return err;
}

int procmaps__snapshot(int pid, uint64_t max_age_ns, struct procmaps **out)
{
	struct procmaps **slot = &snap_cache[(unsigned)pid % SNAP_SLOTS], *pm, *old;
	int err;

	pthread_mutex_lock(&snap_lock);
	pm = *slot;
	if (pm && pm->pid == pid && clock__mono_ns() - pm->read_ns <= max_age_ns) {
		__atomic_add_fetch(&pm->refs, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&snap_lock);
		*out = pm;
		return 0;
	}
	pthread_mutex_unlock(&snap_lock);
	err = procmaps__read(pid, &pm);
	if (err)
		return err;
	pm->pid = pid;
	pm->read_ns = clock__mono_ns();
	__atomic_add_fetch(&pm->refs, 1, __ATOMIC_RELAXED); /* the cache's */
	pthread_mutex_lock(&snap_lock);
	old = *slot;
	*slot = pm;
	pthread_mutex_unlock(&snap_lock);
	procmaps__free(old);
	*out = pm;
	return 0;
}

void procmaps__forget(int pid)
{
	struct procmaps **slot = &snap_cache[(unsigned)pid % SNAP_SLOTS], *old = NULL;

	pthread_mutex_lock(&snap_lock);
	if (*slot && (*slot)->pid == pid) {
		old = *slot;
		*slot = NULL;
	}
	pthread_mutex_unlock(&snap_lock);
	procmaps__free(old);
}

void procmaps__free(struct procmaps *pm)
{
	if (!pm || __atomic_sub_fetch(&pm->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free(pm->maps);
	free(pm->strs);
	free(pm);
}

size_t procmaps__count(const struct procmaps *pm)
{
	return pm ? pm->count : 0;
}

const struct procmap *procmaps__get(const struct procmaps *pm, size_t i)
{
	return pm && i < pm->count ? &pm->maps[i] : NULL;
}

const struct procmap *procmaps__find(const struct procmaps *pm, uint64_t addr)
{
	size_t lo;

	if (!pm)
		return NULL;
	lo = SEARCH_UPTO(pm->maps, pm->count, start, addr);
	if (lo == 0 || addr >= pm->maps[lo - 1].end)
		return NULL;
	return &pm->maps[lo - 1];
}

int procmap__open_in_root(int pid, const char *path, bool follow, struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int pfd, root, ret;
	char rootpath[32];

	if (path[0] != '/')
		return -ENOENT;
	snprintf(rootpath, sizeof(rootpath), "/proc/%d/root", pid);
	root = open(rootpath, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	/*
	 * The path is the process's to choose: resolve it inside its root (an
	 * absolute symlink or ".." must not reach our files), follow a final
	 * symlink only if asked. Found first without opening (O_PATH): a
	 * tenant's root may hold a FIFO (whose open blocks) or a device node
	 * (a container keeps CAP_MKNOD by default), whose open alone acts (a
	 * watchdog's arms it, a tape's rewinds it). Opened only once it is a
	 * regular file.
	 */
	pfd = (int)syscall(__NR_openat2, root, path + 1, &how, sizeof(how));
	ret = -errno;
	close(root);
	return pfd < 0 ? ret : fileident__regular(pfd, st);
}

int procmap__open(int pid, const struct procmap *m)
{
	char path[96];
	struct stat st;
	int fd;

	if ((m->flags & PROCMAP_F_ANON) || !m->path[0])
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start,
		 m->end);
	/* A mapped device (a process may map one) is not opened either. */
	fd = fileident__open_regular(path, &st);
	if (fd >= 0 || fd == -EINVAL)
		return fd == -EINVAL ? -ESTALE : fd;
	/* map_files needs CAP_SYS_ADMIN; the root path works for files still linked. */
	if (m->flags & PROCMAP_F_DELETED)
		return -ENOENT;
	fd = procmap__open_in_root(pid, m->path, false, &st);
	if (fd < 0)
		return fd == -EINVAL ? -ESTALE : fd;
	/* A file replaced since it was mapped is not the mapped object. */
	if (st.st_ino != m->inode ||
	    ((m->dev_major || m->dev_minor) &&
	     (major(st.st_dev) != m->dev_major || minor(st.st_dev) != m->dev_minor))) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

const struct procmap *procmaps__exe(const struct procmaps *pm)
{
	return pm->exe;
}

const char *procmap__basename(const char *path)
{
	const char *slash;

	if (!path || path[0] == '[')
		return path;
	slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}
