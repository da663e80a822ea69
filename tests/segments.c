// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table maps' segments (userspace/maps/segments.h) on real BPF maps:
 * tables loaded through the loader (tables.h) are read back from the
 * kernel's maps — object entry, page index, 4-byte rows (bpf/abi.h) — and
 * must be the table the loader builds, packed (rowpack.h); the segments
 * exist only while tables lie in them, and the memory the loader reports
 * for them is what the kernel charges (memlock in /proc/self/fdinfo).
 *
 * Usage: segments ELF...   (distinct files with tables: libc, sfbpf-top).
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "maps/rowpack.h"
#include "maps/segments.h"
#include "tables/tableload.h"
#include "maps/tables.h"
#include "testlib.h"
#include "testload.h"

#define CAP_ROWS (256u << 10)
#define CAP_PAGES (64u << 10)
#define MAX_FILES 4

struct maps {
	int rows, pages, rules, objects, hits;
};

/* Segments this process holds (arrays of one element of seg_bytes), and their memlock. */
static uint32_t kernel_segments(uint64_t seg_bytes, uint64_t *memlock)
{
	char path[300], line[128];
	unsigned long long v, mem = 0, vsize = 0, entries = 0;
	uint32_t n = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fdinfo");
	FILE *f;

	*memlock = 0;
	while (dir && (d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", d->d_name);
		f = d->d_name[0] != '.' ? fopen(path, "r") : NULL;
		if (!f)
			continue;
		mem = vsize = entries = 0;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "value_size: %llu", &v) == 1)
				vsize = v;
			else if (sscanf(line, "max_entries: %llu", &v) == 1)
				entries = v;
			else if (sscanf(line, "memlock: %llu", &v) == 1)
				mem = v;
		}
		fclose(f);
		if (vsize == seg_bytes && entries == 1) {
			n++;
			*memlock += mem;
		}
	}
	if (dir)
		closedir(dir);
	return n;
}

/* Entry i of a space of 1 << shift-entry segments, read from the kernel: segment by id. */
static int read_entry(int outer, uint32_t shift, uint32_t i, uint32_t *out)
{
	static uint32_t buf[1u << SFBPF_SEG_SHIFT_MAX], cached_id;
	static int cached_outer = -1;
	uint32_t seg = i >> shift, id, zero = 0;
	int fd;

	if (bpf_map_lookup_elem(outer, &seg, &id))
		return -errno;
	if (outer != cached_outer || id != cached_id) {
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			return -errno;
		if (bpf_map_lookup_elem(fd, &zero, buf)) {
			close(fd);
			return -errno;
		}
		close(fd);
		cached_outer = outer;
		cached_id = id;
	}
	*out = buf[i & ((1u << shift) - 1)];
	return 0;
}

/* The table of path as the loader builds it, with its page index coarsened as pushed. */
static struct flat_table *build(const char *path)
{
	struct flat_table *ft;

	if (testload_path(NULL, path, &ft))
		return NULL;
	flat_table__coarsen_pages(ft);
	return ft;
}

/* The kernel's copy of slot's table against ft (rules compared through the rules map). */
static void compare(const struct maps *m, uint32_t shift, int64_t slot, const struct flat_table *ft,
		    const char *path)
{
	struct sfbpf_object obj;
	struct sfbpf_rule rule;
	struct sfbpf_row want, got;
	uint32_t key = slot, i, w, bad = 0;

	if (bpf_map_lookup_elem(m->objects, &key, &obj)) {
		report(false, "segments: contents", "%s: no object entry", path);
		return;
	}
	if (obj.row_count != ft->nr_rows || obj.page_count != ft->nr_pages ||
	    obj.pc_min != ft->pc_min ||
	    SFBPF_OBJ_PAGE_SHIFT(obj.flags) != flat_table__page_shift(ft) || !obj.gen) {
		report(false, "segments: contents", "%s: object %u rows %u pages, built %u / %u",
		       path, obj.row_count, obj.page_count, ft->nr_rows, ft->nr_pages);
		return;
	}
	for (i = 0; i < ft->nr_pages && !bad; i++)
		if (read_entry(m->pages, shift, obj.page_start + i, &w) || w != ft->pages[i])
			bad = 1;
	for (i = 0; i < ft->nr_rows && !bad; i++) {
		want = rowpack__row(ft, i);
		if (read_entry(m->rows, shift, obj.row_start + i, &w)) {
			bad = 2;
			break;
		}
		memcpy(&got, &w, sizeof(got));
		key = got.rule;
		/* The global rule must be the row's local rule, field for field. */
		if (got.pc_lo != want.pc_lo || bpf_map_lookup_elem(m->rules, &key, &rule) ||
		    memcmp(&rule, &ft->rules[ft->rows[i].rule], sizeof(rule)))
			bad = 3;
	}
	report(!bad, "segments: contents",
	       "%s (%u-entry segments): %s %u differs from the built table", path, 1u << shift,
	       bad == 1 ? "page entry" : "row", i);
}

/* Our mappings of BPF maps of seg_bytes (/proc/self/maps): segments still mapped. */
static uint32_t mapped_segments(uint64_t seg_bytes)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long lo, hi;
	char line[512];
	uint32_t n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "anon_inode:bpf-map") &&
		    sscanf(line, "%llx-%llx", &lo, &hi) == 2 && hi - lo == seg_bytes)
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* The checks with segments of 1 << shift entries; fresh maps and loader. */
static void run(uint32_t shift, char **files, uint32_t nfiles)
{
	struct flat_table *ft[MAX_FILES] = { 0 };
	uint64_t memlock, base, seg_bytes = 4ull << shift;
	int64_t slot[MAX_FILES];
	struct tables_stats st;
	struct tables *t = NULL;
	char name[64];
	struct maps m;
	uint32_t n, i;

	m.rows = segspace__new_map("t_rows", CAP_ROWS, shift);
	m.pages = segspace__new_map("t_pages", CAP_PAGES, shift);
	m.rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_rules", 4, sizeof(struct sfbpf_rule), 4096,
				 NULL);
	m.objects = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_objects", 4, sizeof(struct sfbpf_object),
				   64, NULL);
	m.hits = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_hits", 4, 8, 64, NULL);
	if (m.rows < 0 || m.pages < 0 || m.rules < 0 || m.objects < 0 || m.hits < 0) {
		report(false, "segments-setup", "BPF maps: %s", strerror(errno));
		return;
	}
	struct tables_opts o = { .rows_fd = m.rows,
				 .pages_fd = m.pages,
				 .rules_fd = m.rules,
				 .objects_fd = m.objects,
				 .obj_hits_fd = m.hits,
				 .max_rows = CAP_ROWS,
				 .max_pages = CAP_PAGES,
				 .max_rules = 4096,
				 .max_objects = 64,
				 .seg_shift = shift };
	t = tables__new(&o);
	if (!t) {
		report(false, "segments-setup", "tables__new failed");
		return;
	}
	tables__stats(t, &st);
	base = st.map_bytes;
	n = kernel_segments(seg_bytes, &memlock);
	snprintf(name, sizeof(name), "segments-%u: none before", 1u << shift);
	report(n == 0, name, "%u segments before any table", n);
	for (i = 0; i < nfiles; i++) {
		struct elfobj_info info = { 0 };
		struct obj_key key;
		struct stat sb;
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);

		ft[i] = build(files[i]);
		slot[i] = -1;
		if (fd < 0 || fstat(fd, &sb) || !ft[i]) {
			report(false, "segments-setup", "%s: no table", files[i]);
			goto out;
		}
		elfobj__read(fd, &info);
		obj_key__from(&key, &info, &sb, fd);
		slot[i] = tables__acquire(t, fd, &key, files[i]);
		close(fd);
		if (slot[i] < 0) {
			report(false, "segments-setup", "%s: not loaded (%lld)", files[i],
			       (long long)slot[i]);
			goto out;
		}
	}
	for (i = 0; i < nfiles; i++)
		compare(&m, shift, slot[i], ft[i], files[i]);
	/* Pushed: the loader's mappings of the segments would only count in its RSS. */
	snprintf(name, sizeof(name), "segments-%u: unmapped once pushed", 1u << shift);
	n = mapped_segments(seg_bytes);
	report(n == 0, name, "%u segments still mapped", n);
	tables__stats(t, &st);
	n = kernel_segments(seg_bytes, &memlock);
	snprintf(name, sizeof(name), "segments-%u: memory", 1u << shift);
	report(n > 0 && st.map_bytes - base == memlock, name,
	       "%u segments, the kernel charges %llu bytes, the loader reports %llu", n,
	       (unsigned long long)memlock, (unsigned long long)(st.map_bytes - base));
	/* Within the slices' span: no segment without a table in it. */
	snprintf(name, sizeof(name), "segments-%u: follow the load", 1u << shift);
	report(n <= SFBPF_SEGS(st.rows_used, shift) + SFBPF_SEGS(st.pages_used, shift) + 4, name,
	       "%u segments for %llu rows and %llu page entries", n,
	       (unsigned long long)st.rows_used, (unsigned long long)st.pages_used);
	for (i = 0; i < nfiles; i++)
		tables__release(t, (uint32_t)slot[i]);
	tables__process(t, 0);
	tables__stats(t, &st);
	n = kernel_segments(seg_bytes, &memlock);
	snprintf(name, sizeof(name), "segments-%u: freed", 1u << shift);
	report(n == 0 && st.map_bytes == base, name,
	       "%u segments (%llu bytes) left after every table went; loader reports %llu over "
	       "the base",
	       n, (unsigned long long)memlock, (unsigned long long)(st.map_bytes - base));
out:
	tables__free(t);
	for (i = 0; i < nfiles; i++)
		flat_table__free(ft[i]);
	close(m.rows);
	close(m.pages);
	close(m.rules);
	close(m.objects);
	close(m.hits);
}

int main(int argc, char **argv)
{
	uint32_t nfiles = argc - 1;

	if (nfiles < 1 || nfiles > MAX_FILES) {
		fprintf(stderr, "usage: segments ELF...\n");
		return 2;
	}
	/* The usual segments, and the smallest (tiny budgets): tables across many. */
	run(SFBPF_SEG_SHIFT_MAX, argv + 1, nfiles);
	run(SFBPF_SEG_SHIFT_MIN, argv + 1, nfiles);
	return failures ? 1 : 0;
}
