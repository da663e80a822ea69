/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the drivers of the table loader on real BPF maps share
 * (tests/tablebudget.c, tests/tenant_share.c): a file opened and mapped as a
 * process would map it (so the loader can reopen it through map_files), the
 * five maps, a loader over them, and what a slot publishes.
 */
#ifndef SFBPF_TESTS_TABLEBUDGET_H
#define SFBPF_TESTS_TABLEBUDGET_H

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf/abi.h"
#include "tables/elfobj.h"
#include "maps/segments.h"
#include "maps/tablebudget.h"
#include "util/clock.h"

#define MIN_RESIDENCY_NS (600 * 1000000000ULL)

struct file {
	const char *path;
	int fd;
	void *map;
	size_t len;
	struct obj_key key;
	struct tables_src src;
};

struct maps {
	int rows, pages, rules, objects, hits;
};

static inline int open_file(struct file *f, const char *path)
{
	struct elfobj_info info;
	struct stat st;

	f->path = path;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0 || fstat(f->fd, &st) || elfobj__read(f->fd, &info))
		return -1;
	obj_key__from(&f->key, &info, &st, f->fd);
	/* Mapped here, so that the loader can reopen it through our map_files. */
	f->len = st.st_size;
	f->map = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, f->fd, 0);
	if (f->map == MAP_FAILED)
		return -1;
	f->src.pid = getpid();
	f->src.start = (uintptr_t)f->map;
	f->src.end = f->src.start + ((f->len + 4095) & ~4095UL);
	return 0;
}

static inline int create_maps(struct maps *m, uint32_t rows, uint32_t pages, uint32_t rules,
			      uint32_t objects)
{
	m->rows = segspace__new_map("t_rows", rows, 0);
	m->pages = segspace__new_map("t_pages", pages, 0);
	m->rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rules", 4, sizeof(struct sfbpf_rule),
				  rules, NULL);
	m->objects = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_objects", 4, sizeof(struct sfbpf_object),
				    objects, NULL);
	m->hits = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_hits", 4, 8, objects, NULL);
	if (m->rows < 0 || m->pages < 0 || m->rules < 0 || m->objects < 0 || m->hits < 0)
		return -1;
	return 0;
}

static inline void close_maps(struct maps *m)
{
	close(m->rows);
	close(m->pages);
	close(m->rules);
	close(m->objects);
	close(m->hits);
}

static inline struct tables *new_tables(const struct maps *m, uint32_t rows, uint32_t pages,
					uint32_t rules, uint32_t objects, uint64_t min_residency_ns)
{
	struct tables_opts o = {
		.rows_fd = m->rows,
		.rules_fd = m->rules,
		.objects_fd = m->objects,
		.pages_fd = m->pages,
		.max_rows = rows,
		.max_rules = rules,
		.max_objects = objects,
		.max_pages = pages,
		.obj_hits_fd = m->hits,
		.linger_ns = MIN_RESIDENCY_NS,
		.min_residency_ns = min_residency_ns,
	};

	return tables__new(&o);
}

/* Every finished table published (freed slices are quiet after 2 ms). */
static inline void settle(struct tables *t)
{
	struct timespec nap = { 0, 1000000 };
	int i;

	for (i = 0; i < 1000 && tables__process(t, 0); i++)
		nanosleep(&nap, NULL);
}

/* Rows of the table published in slot (0: none), and its flags. */
static inline uint32_t published(const struct maps *m, int64_t slot, uint32_t *flags)
{
	struct sfbpf_object obj = { 0 };
	uint32_t key = slot;

	bpf_map_lookup_elem(m->objects, &key, &obj);
	*flags = obj.flags;
	return obj.flags & SFBPF_OBJ_F_NO_ROWS ? 0 : obj.row_count;
}

#endif /* SFBPF_TESTS_TABLEBUDGET_H */
