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

void perfmap__init(struct perfmap *m, int pid)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
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
	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

static FILE *perfmap__open(const struct perfmap *m, bool alive, struct stat *st)
{
	char path[64];
	int fd = -1;
	FILE *f;

	if (alive && m->nspid > 0) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", m->nspid);
		fd = procmap__open_in_root(m->pid, path, false, st);
	}
	if (fd < 0)
		fd = open_host(m->pid, st);
	if (fd < 0)
		return NULL;
	/* Trust only the process's own user or root to name its code. */
	if (st->st_uid != 0 && st->st_uid != m->uid) {
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

static int perfmap__load(struct perfmap *m, bool alive)
{
	struct stat st;
	FILE *f;
	int err;

	m->checked_ns = clock__mono_ns();
	f = perfmap__open(m, alive, &st);
	if (!f)
		return -ENOENT;
	if (m->loaded && st.st_size == m->size && st.st_mtim.tv_sec == m->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == m->mtime.tv_nsec) {
		fclose(f);
		return 0;
	}
	symtab__free(m->tab);
	m->tab = symtab__new();
	if (!m->tab) {
		fclose(f);
		m->loaded = false;
		return -ENOMEM;
	}
	err = symtab__add_perf_map(m->tab, f);
	fclose(f);
	symtab__finish(m->tab, true);
	m->loaded = true;
	m->size = st.st_size;
	m->mtime = st.st_mtim;
	return err;
}

void perfmap__refresh(struct perfmap *m, bool alive)
{
	if (m->checked_ns && clock__mono_ns() - m->checked_ns < REREAD_NS)
		return;
	perfmap__load(m, alive);
}

const char *perfmap__find(struct perfmap *m, bool alive, uint64_t addr, uint64_t *offset)
{
	const char *name = m->loaded ? symtab__find(m->tab, addr, offset) : NULL;

	if (name)
		return name;
	/* A miss may be code emitted since the last read: re-read, rate limited. */
	perfmap__refresh(m, alive);
	return m->loaded ? symtab__find(m->tab, addr, offset) : NULL;
}

void perfmap__release(struct perfmap *m)
{
	symtab__free(m->tab);
	m->tab = NULL;
	m->loaded = false;
}
