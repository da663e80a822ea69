// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A mapping replaced between the read of a process's maps and the open of
 * its file (userspace/procs/proctrack.c resolve_mapping): the file opened
 * through map_files is then another one than the maps line names, and its
 * table must not be used with the line's offset (mappings_replaced).
 *
 * The race is made certain, not waited for: this program is linked with
 * -Wl,--wrap=procmap__open (Makefile), so the loader's open of the child's
 * mapping comes here first, and the child maps the other file over the same
 * range (MAP_FIXED) before the real open runs.
 *
 * Usage: proctrack_race FILE_A FILE_B   two copies of one shared library
 * (other inodes). Driven by tests/proctrack_race.test.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define TEST_PREFIX "proctrack-race-"
#include "testlib.h"
#include "tablebudget.h"
#include "maps/tables.h"
#include "procs/procmaps.h"
#include "procs/proctrack.h"

/* The child's range that the next open replaces (0: none), and its command pipes. */
static uint64_t race_start;
static int to_child = -1, from_child = -1;
static int races;

int __real_procmap__open(int pid, const struct procmap *m);
int __wrap_procmap__open(int pid, const struct procmap *m);

int __wrap_procmap__open(int pid, const struct procmap *m)
{
	char c = 'r';

	if (race_start && m->start == race_start) {
		race_start = 0;
		/* The child maps B over A's range, then answers: the line just read is stale. */
		if (write(to_child, &c, 1) == 1 && read(from_child, &c, 1) == 1 && c == 'k')
			races++;
	}
	return __real_procmap__open(pid, m);
}

/* The executable segment of the ELF file at fd: its page-aligned file offset and length. */
static int text_segment(int fd, off_t *off, size_t *len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) !=
		    sizeof(ph))
			return -1;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			*off = ph.p_offset & ~4095UL;
			*len = ph.p_filesz + (ph.p_offset - *off);
			return 0;
		}
	}
	return -1;
}

/*
 * The child: A's text mapped executable where it reports, then on 'r' B's
 * text over the same range. It waits on its pipe until killed.
 */
static void child(const char *a, const char *b, int in, int out)
{
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
	size_t len, lenb;
	off_t off, offb;
	void *p;
	char c;

	if (fa < 0 || fb < 0 || text_segment(fa, &off, &len) || text_segment(fb, &offb, &lenb) ||
	    off != offb || len != lenb)
		_exit(3);
	p = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fa, off);
	if (p == MAP_FAILED || write(out, &p, sizeof(p)) != sizeof(p))
		_exit(4);
	while (read(in, &c, 1) == 1) {
		c = mmap(p, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fb, off) == p ?
			    'k' :
			    'f';
		if (write(out, &c, 1) != 1)
			_exit(5);
	}
	_exit(0);
}

/* The object the procs map gives the child's mapping at start (SFBPF_OBJ_NONE: no table). */
static int mapping_obj(int procs_fd, int pid, uint64_t start, uint32_t *obj)
{
	static struct sfbpf_proc p;
	uint32_t key = pid, i;

	if (bpf_map_lookup_elem(procs_fd, &key, &p))
		return -1;
	for (i = 0; i < p.count && i < SFBPF_MAX_MAPPINGS; i++)
		if (p.maps[i].start == start) {
			*obj = p.maps[i].obj;
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	int down[2], up[2], procs_fd, pid, status;
	struct proctrack_stats st;
	struct proctrack *pt;
	struct tables *t;
	uint32_t obj = 0;
	struct maps m;
	void *where;

	if (argc != 3) {
		fprintf(stderr, "usage: proctrack_race FILE_A FILE_B\n");
		return 2;
	}
	if (create_maps(&m, 1u << 20, 1u << 16, 1u << 14, 256) < 0 ||
	    (procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_procs", 4, sizeof(struct sfbpf_proc),
				       16, NULL)) < 0) {
		fprintf(stderr, "proctrack_race: BPF maps: %s\n", strerror(errno));
		return 1;
	}
	struct tables_opts o = { .rows_fd = m.rows,
				 .pages_fd = m.pages,
				 .rules_fd = m.rules,
				 .objects_fd = m.objects,
				 .obj_hits_fd = m.hits,
				 .max_rows = 1u << 20,
				 .max_pages = 1u << 16,
				 .max_rules = 1u << 14,
				 .max_objects = 256 };
	t = tables__new(&o);
	pt = t ? proctrack__new(t, procs_fd) : NULL;
	if (!pt || pipe(down) || pipe(up)) {
		fprintf(stderr, "proctrack_race: setup failed\n");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		child(argv[1], argv[2], down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	to_child = down[1], from_child = up[0];
	if (pid < 0 || read(from_child, &where, sizeof(where)) != sizeof(where)) {
		fprintf(stderr, "proctrack_race: the child did not start\n");
		return 1;
	}

	/* The control: nothing replaced, A's range gets A's table. */
	proctrack__refresh(pt, pid);
	proctrack__stats(pt, &st);
	report(st.mappings_replaced == 0 && !mapping_obj(procs_fd, pid, (uintptr_t)where, &obj) &&
		       obj != SFBPF_OBJ_NONE,
	       "control", "replaced %" PRIu64 ", A's range object %u", st.mappings_replaced, obj);

	/* The race: B mapped over A's range between the maps read and the open. */
	proctrack__remove(pt, pid);
	race_start = (uintptr_t)where;
	proctrack__refresh(pt, pid);
	proctrack__stats(pt, &st);
	obj = 0;
	report(races == 1 && st.mappings_replaced == 1 &&
		       !mapping_obj(procs_fd, pid, (uintptr_t)where, &obj) && obj == SFBPF_OBJ_NONE,
	       "counted", "races %d, replaced %" PRIu64 ", the stale line's object %u (want none)",
	       races, st.mappings_replaced, obj);

	/* The next refresh reads the maps again: B's line, B's table. */
	proctrack__refresh(pt, pid);
	proctrack__stats(pt, &st);
	obj = SFBPF_OBJ_NONE;
	report(st.mappings_replaced == 1 && !mapping_obj(procs_fd, pid, (uintptr_t)where, &obj) &&
		       obj != SFBPF_OBJ_NONE,
	       "next-refresh", "replaced %" PRIu64 ", B's object %u", st.mappings_replaced, obj);

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	proctrack__free(pt);
	tables__free(t);
	close_maps(&m);
	close(procs_fd);
	return failures ? 1 : 0;
}
