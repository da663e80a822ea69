// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Mapping and build-id lookups (see mapinfo.h). Processes and objects are kept
 * in arrays of pointers sorted by key: a profile touches a few hundred of
 * each, looked up once per distinct frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procs/mapinfo.h"
#include "procs/procmaps.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

struct obj_id {
	uint64_t dev, ino;
	char hex[MAPINFO_BUILD_ID_HEX];
};

struct proc_maps {
	int pid;
	struct procmaps *pm; /* NULL: the process was gone */
	const char **build_ids; /* per mapping, NULL until looked up */
};

struct mapinfo {
	struct proc_maps **procs; /* sorted by pid */
	size_t nprocs;
	struct obj_id **objs; /* sorted by (dev, ino) */
	size_t nobjs;
};

struct mapinfo *mapinfo__new(void)
{
	struct mapinfo *mi = calloc(1, sizeof(*mi));

	if (!mi)
		errno = ENOMEM;
	return mi;
}

void mapinfo__free(struct mapinfo *mi)
{
	size_t i;

	if (!mi)
		return;
	for (i = 0; i < mi->nprocs; i++) {
		procmaps__free(mi->procs[i]->pm);
		free(mi->procs[i]->build_ids);
		free(mi->procs[i]);
	}
	for (i = 0; i < mi->nobjs; i++)
		free(mi->objs[i]);
	free(mi->procs);
	free(mi->objs);
	free(mi);
}

void mapinfo__hex(const uint8_t *id, size_t len, char hex[MAPINFO_BUILD_ID_HEX])
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (len > ELFOBJ_BUILD_ID_MAX)
		len = ELFOBJ_BUILD_ID_MAX;
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 15];
	}
	hex[2 * len] = '\0';
}

/* Insert p at position pos of a pointer array of n elements. */
static int insert_at(void ***arr, size_t *n, size_t pos, void *p)
{
	void **a = realloc(*arr, (*n + 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	memmove(a + pos + 1, a + pos, (*n - pos) * sizeof(*a));
	a[pos] = p;
	*arr = a;
	(*n)++;
	return 0;
}

static int cmp_obj(const struct obj_id *o, uint64_t dev, uint64_t ino)
{
	if (o->dev != dev)
		return o->dev < dev ? -1 : 1;
	return o->ino < ino ? -1 : o->ino > ino;
}

/* The build-id of the object behind m (cached by file identity). */
static const char *object_build_id(struct mapinfo *mi, int pid, const struct procmap *m)
{
	uint64_t dev = (uint64_t)m->dev_major << 32 | m->dev_minor;
	size_t lo = 0, hi = mi->nobjs;
	struct elfobj_info info;
	struct obj_id *o;
	int fd, c;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		c = cmp_obj(mi->objs[mid], dev, m->inode);
		if (!c)
			return mi->objs[mid]->hex;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	fd = procmap__open(pid, m);
	if (fd < 0)
		return ""; /* not cached: another process may still reach the file */
	o = calloc(1, sizeof(*o));
	if (o && elfobj__read(fd, &info) == 0)
		mapinfo__hex(info.build_id, info.build_id_len, o->hex);
	close(fd);
	if (!o)
		return "";
	o->dev = dev;
	o->ino = m->inode;
	if (insert_at((void ***)&mi->objs, &mi->nobjs, lo, o)) {
		free(o);
		return "";
	}
	return o->hex;
}

static int get_proc(struct mapinfo *mi, int pid, struct proc_maps **out)
{
	size_t lo = 0, hi = mi->nprocs;
	struct proc_maps *p;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mi->procs[mid]->pid == pid) {
			*out = mi->procs[mid];
			return 0;
		}
		if (mi->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	/* A process that is gone stays remembered without mappings. */
	if (procmaps__read(pid, &p->pm) == 0) {
		p->build_ids = calloc(procmaps__count(p->pm) + 1, sizeof(*p->build_ids));
		if (!p->build_ids) {
			procmaps__free(p->pm);
			free(p);
			return -ENOMEM;
		}
	} else {
		p->pm = NULL;
	}
	if (insert_at((void ***)&mi->procs, &mi->nprocs, lo, p)) {
		procmaps__free(p->pm);
		free(p->build_ids);
		free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

int mapinfo__find(struct mapinfo *mi, int pid, uint64_t addr, struct map_entry *out)
{
	const struct procmap *m;
	struct proc_maps *p;
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	err = get_proc(mi, pid, &p);
	if (err)
		return err;
	if (!p->pm)
		return -ESRCH;
	m = procmaps__find(p->pm, addr);
	if (!m)
		return -ENOENT;
	i = m - procmaps__get(p->pm, 0);
	if (!p->build_ids[i])
		p->build_ids[i] = (m->flags & PROCMAP_F_ANON) ? "" : object_build_id(mi, pid, m);
	*out = (struct map_entry){
		.start = m->start,
		.end = m->end,
		.offset = m->offset,
		.path = m->path,
		.build_id = p->build_ids[i],
	};
	return 0;
}

/* /sys/kernel/notes is the kernel's raw ELF note section. */
int mapinfo__kernel_build_id(char hex[MAPINFO_BUILD_ID_HEX])
{
	uint8_t buf[4096];
	size_t off = 0;
	ssize_t len;
	int fd;

	hex[0] = '\0';
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len < 0)
		return -EIO;
	while (off + 12 <= (size_t)len) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (namesz > (size_t)len || descsz > (size_t)len || desc_off + descsz > (size_t)len)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
			mapinfo__hex(buf + desc_off, descsz, hex);
			return 0;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return -ENOENT;
}
