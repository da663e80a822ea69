// SPDX-License-Identifier: GPL-2.0-or-later
/* Separate debug files (see debuginfo.h). */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "procs/procmaps.h"
#include "symbols/debuginfo.h"
#include "symbols/symtab.h"
#include "tables/elfobj.h"

#define BUILD_ID_MAX 64
#define DEBUGLINK_MAX 256

/* What the object says about its debug file. */
struct search {
	unsigned char class;
	uint16_t machine;
	uint8_t id[BUILD_ID_MAX];
	size_t id_len;
	char link[DEBUGLINK_MAX]; /* "" if no .gnu_debuglink */
	uint32_t crc;
	int root_pid; /* its paths resolve under /proc/PID/root; 0: under ours */
	char *found;
	size_t found_len;
};

const char *debuginfo__default_dirs(void)
{
	const char *env = getenv(DEBUGINFO_ENV);

	return env && *env ? env : DEBUGINFO_DEFAULT_DIRS;
}

int debuginfo__crc32(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t r;

	while ((r = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, r);
		off += r;
	}
	if (r < 0)
		return -errno;
	*crc = c;
	return 0;
}

/* .gnu_debuglink, through libdw: the debug file's name and its CRC32. */
static void read_debuglink(Elf *elf, struct search *s)
{
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(elf, &crc);
	size_t n = name ? strlen(name) : 0;

	/* A bare file name: no directories to climb out of the search path. */
	if (!n || n >= sizeof(s->link) || memchr(name, '/', n))
		return;
	memcpy(s->link, name, n + 1);
	s->crc = crc;
}

static bool same_kind(Elf *elf, const struct search *s)
{
	GElf_Ehdr eh;

	return gelf_getehdr(elf, &eh) && eh.e_ident[EI_CLASS] == s->class &&
	       eh.e_machine == s->machine;
}

/*
 * Does the file at p (inside the process's root if in_root) match the
 * object? Then its fd, else -ENOENT.
 */
static int try_file(const struct search *s, const char *p, bool via_link, bool in_root)
{
	uint8_t id[BUILD_ID_MAX];
	bool ok = false;
	struct stat st;
	uint32_t crc;
	size_t id_len;
	Elf *elf;
	int fd;

	if (in_root) { /* its symlinks must not lead out of its root */
		fd = procmap__open_in_root(s->root_pid, p, true, &st);
		if (fd < 0)
			return -ENOENT;
	} else {
		/* O_NONBLOCK: a FIFO planted on the search path must not hang us. */
		fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return -ENOENT;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			return -ENOENT;
		}
	}
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && same_kind(elf, s) && symtab__elf_has_symtab(elf)) {
		id_len = elfobj__build_id(elf, id, sizeof(id));
		if (s->id_len && id_len)
			ok = id_len == s->id_len && !memcmp(id, s->id, id_len);
		else if (via_link)
			ok = !debuginfo__crc32(fd, &crc) && crc == s->crc;
	}
	elf_end(elf);
	if (!ok) {
		close(fd);
		return -ENOENT;
	}
	if (s->found)
		snprintf(s->found, s->found_len, "%s", p);
	return fd;
}

/*
 * Try the path made from fmt inside the process's root, then (host_too, or
 * when it shares ours) in our namespace.
 */
static int try_both(const struct search *s, bool via_link, bool host_too, const char *fmt, ...)
{
	char p[PATH_MAX];
	va_list ap;
	int n, fd = -ENOENT;

	va_start(ap, fmt);
	n = vsnprintf(p, sizeof(p), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(p))
		return -ENOENT;
	if (s->root_pid)
		fd = try_file(s, p, via_link, true);
	if (fd < 0 && (host_too || !s->root_pid))
		fd = try_file(s, p, via_link, false);
	return fd;
}

static int by_build_id(const struct search *s, const char *dir)
{
	char hex[2 * BUILD_ID_MAX + 1];
	size_t i;

	for (i = 0; i < s->id_len; i++)
		sprintf(hex + 2 * i, "%02x", s->id[i]);
	return try_both(s, false, true, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
}

static int by_debuglink_dir(const struct search *s, const char *dir, const char *objdir)
{
	return try_both(s, true, true, "%s%s/%s", dir, objdir, s->link);
}

/* Next ':'-separated entry of *list into buf; false at the end. */
static bool next_dir(const char **list, char *buf, size_t len)
{
	const char *p = *list, *end;
	size_t n;

	while (*p == ':')
		p++;
	if (!*p)
		return false;
	end = strchrnul(p, ':');
	n = end - p;
	*list = end;
	if (n >= len)
		return next_dir(list, buf, len);
	memcpy(buf, p, n);
	buf[n] = '\0';
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	return true;
}

static int search_debuglink(const struct search *s, const char *path, const char *dirs)
{
	char objdir[PATH_MAX], dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (path[0] != '/' || !slash || (size_t)(slash - path) >= sizeof(objdir))
		return -ENOENT;
	memcpy(objdir, path, slash - path);
	objdir[slash - path] = '\0';
	fd = try_both(s, true, false, "%s/%s", objdir, s->link);
	if (fd < 0)
		fd = try_both(s, true, false, "%s/.debug/%s", objdir, s->link);
	while (fd < 0 && next_dir(&dirs, dir, sizeof(dir)))
		fd = by_debuglink_dir(s, dir, objdir);
	return fd;
}

int debuginfo__open(Elf *elf, const char *path, int root_pid, const char *dirs, char *found,
		    size_t found_len)
{
	struct search s = { .root_pid = root_pid, .found = found, .found_len = found_len };
	const char *list;
	char dir[PATH_MAX];
	GElf_Ehdr eh;
	int fd = -ENOENT;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -EINVAL;
	s.class = eh.e_ident[EI_CLASS];
	s.machine = eh.e_machine;
	s.id_len = elfobj__build_id(elf, s.id, sizeof(s.id));
	read_debuglink(elf, &s);
	if (!dirs)
		dirs = debuginfo__default_dirs();
	for (list = dirs; s.id_len && fd < 0 && next_dir(&list, dir, sizeof(dir));)
		fd = by_build_id(&s, dir);
	if (fd < 0 && s.link[0] && path)
		fd = search_debuglink(&s, path, dirs);
	return fd;
}
