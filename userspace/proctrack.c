// SPDX-License-Identifier: GPL-2.0-or-later
/* Process tracker (see proctrack.h). */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../bpf/profile.h"
#include "elfobj.h"
#include "procmaps.h"
#include "proctrack.h"

#define PID_BUCKETS 1024

struct proc_entry {
	int pid;
	uint32_t nr_objs;
	uint32_t objs[SFBPF_MAX_MAPPINGS]; /* object references held */
	uint32_t nr_maps, nr_with_table;
	struct proc_entry *next;
};

struct proctrack {
	struct tables *tables;
	int procs_fd;
	struct proc_entry *buckets[PID_BUCKETS];
	struct proctrack_stats stats;
	struct sfbpf_proc scratch; /* the map value being built (8 KiB+) */
};

struct proctrack *proctrack__new(struct tables *tables, int procs_fd)
{
	struct proctrack *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->tables = tables;
	pt->procs_fd = procs_fd;
	return pt;
}

static struct proc_entry **find(struct proctrack *pt, int pid)
{
	struct proc_entry **pp = &pt->buckets[(unsigned)pid % PID_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static void release_objs(struct proctrack *pt, struct proc_entry *e)
{
	uint32_t i;

	for (i = 0; i < e->nr_objs; i++)
		tables__release(pt->tables, e->objs[i]);
	pt->stats.mappings -= e->nr_maps;
	pt->stats.mappings_with_table -= e->nr_with_table;
	e->nr_objs = e->nr_maps = e->nr_with_table = 0;
}

void proctrack__remove(struct proctrack *pt, int pid)
{
	struct proc_entry **pp = find(pt, pid), *e = *pp;
	__u32 key = pid;

	if (!e)
		return;
	bpf_map_delete_elem(pt->procs_fd, &key);
	release_objs(pt, e);
	*pp = e->next;
	free(e);
	pt->stats.procs--;
}

void proctrack__free(struct proctrack *pt)
{
	struct proc_entry *e, *next;
	uint32_t i;

	if (!pt)
		return;
	for (i = 0; i < PID_BUCKETS; i++)
		for (e = pt->buckets[i]; e; e = next) {
			next = e->next;
			release_objs(pt, e);
			free(e);
		}
	free(pt);
}

/* Object table and load bias of one file-backed executable mapping. */
static void resolve_mapping(struct proctrack *pt, int pid, const struct procmap *m,
			    struct sfbpf_mapping *out, struct proc_entry *e)
{
	struct elfobj_info info;
	struct obj_key key;
	struct stat st;
	uint64_t vaddr;
	int64_t obj;
	int fd;

	fd = procmap__open(pid, m);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || elfobj__read(fd, &info) ||
	    elfobj__offset_to_vaddr(&info, m->offset, &vaddr))
		goto cleanup;
	out->bias = m->start - vaddr;
	obj_key__from(&key, &info, &st);
	obj = tables__acquire(pt->tables, fd, &key, m->path);
	if (obj < 0)
		goto cleanup;
	out->obj = (uint32_t)obj;
	e->objs[e->nr_objs++] = (uint32_t)obj;
	e->nr_with_table++;
cleanup:
	close(fd);
}

static void build(struct proctrack *pt, int pid, const struct procmaps *pm, struct proc_entry *e)
{
	struct sfbpf_proc *p = &pt->scratch;
	size_t i, n = procmaps__count(pm);

	p->count = 0;
	for (i = 0; i < n; i++) {
		const struct procmap *m = procmaps__get(pm, i);
		struct sfbpf_mapping *out;

		if (!(m->perms & PROCMAP_EXEC))
			continue;
		if (p->count == SFBPF_MAX_MAPPINGS) {
			pt->stats.mappings_dropped++;
			continue;
		}
		out = &p->maps[p->count++];
		*out = (struct sfbpf_mapping){ .start = m->start, .end = m->end,
					       .obj = SFBPF_OBJ_NONE };
		/* Anonymous code (JIT) and the vDSO: frame-pointer fallback. */
		if (!(m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO | PROCMAP_F_VDSO)))
			resolve_mapping(pt, pid, m, out, e);
	}
	e->nr_maps = p->count;
}

int proctrack__refresh(struct proctrack *pt, int pid)
{
	struct proc_entry **pp = find(pt, pid), *e = *pp;
	struct procmaps *pm = NULL;
	__u32 key = pid;
	int err;

	err = procmaps__read(pid, &pm);
	if (err) {
		proctrack__remove(pt, pid);
		return err;
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			procmaps__free(pm);
			return -ENOMEM;
		}
		e->pid = pid;
		*pp = e;
		pt->stats.procs++;
	}
	/* Acquire the new objects before releasing the old ones: shared ones stay loaded. */
	{
		struct proc_entry old = *e;

		e->nr_objs = e->nr_maps = e->nr_with_table = 0;
		build(pt, pid, pm, e);
		pt->stats.mappings += e->nr_maps;
		pt->stats.mappings_with_table += e->nr_with_table;
		pt->scratch.generation++;
		err = bpf_map_update_elem(pt->procs_fd, &key, &pt->scratch, BPF_ANY);
		release_objs(pt, &old);
	}
	procmaps__free(pm);
	return err;
}

int proctrack__scan(struct proctrack *pt)
{
	struct dirent *de;
	DIR *dir = opendir("/proc");
	int pid, n = 0;

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid = atoi(de->d_name);
		if (pid > 0 && pid != getpid() && !proctrack__refresh(pt, pid))
			n++;
	}
	closedir(dir);
	return n;
}

void proctrack__stats(const struct proctrack *pt, struct proctrack_stats *out)
{
	*out = pt->stats;
}
