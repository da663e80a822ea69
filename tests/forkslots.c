// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rules that keep a fork's copy, and a walk that found a table by a
 * file's identity, from ever reaching another file's table
 * (userspace/maps/tables.c, entries.c), on real BPF maps without the BPF
 * programs:
 *   1. Once forks copy entries (tables__fork_horizon), a table whose last
 *      reference went after the horizon keeps its slot: a new file finds no
 *      room rather than that slot.
 *   2. Once a later horizon passes the release, the slot serves the new file.
 *   3. A slot held by a fork's copy (tables__hold) is not reclaimed while
 *      held, whatever the horizon.
 *   4. A file's identity published for its slot (tables__publish_ident) is
 *      withdrawn from the idents map before the slot serves another file;
 *      another file's key is not published for a slot it does not hold.
 * Usage: forkslots FILE_A FILE_B FILE_C (ELF files of distinct identities and
 * bytes). Exit status: 0 when the checks ran (verdicts on stdout), 2 on bad
 * usage, 1 when maps or files could not be set up (reported as FAIL).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tablebudget.h"
#include "testlib.h"

static int idents_has(int fd, const struct file *f)
{
	struct sfbpf_ident_key k;
	struct sfbpf_ident v;

	return tables_ident_key(&f->key, &k) && !bpf_map_lookup_elem(fd, &k, &v) ? (int)v.obj : -1;
}

int main(int argc, char **argv)
{
	const uint32_t rows = 1 << 20, pages = 1 << 18, rules = 1 << 14, objects = 2;
	struct file f[3];
	struct maps m;
	struct tables *t;
	int64_t a, b, c = -1;
	int idents, i;

	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE_A FILE_B FILE_C\n", argv[0]);
		return 2;
	}
	for (i = 0; i < 3; i++)
		if (open_file(&f[i], argv[i + 1])) {
			printf("FAIL: forkslots: cannot open %s\n", argv[i + 1]);
			return 1;
		}
	idents = bpf_map_create(BPF_MAP_TYPE_HASH, "t_idents", sizeof(struct sfbpf_ident_key),
				sizeof(struct sfbpf_ident), objects, NULL);
	if (create_maps(&m, rows, pages, rules, objects) || idents < 0) {
		printf("FAIL: forkslots: cannot create the maps: %s\n", strerror(errno));
		return 1;
	}
	{
		struct tables_opts o = {
			.rows_fd = m.rows,
			.rules_fd = m.rules,
			.objects_fd = m.objects,
			.pages_fd = m.pages,
			.max_rows = rows,
			.max_rules = rules,
			.max_objects = objects,
			.max_pages = pages,
			.obj_hits_fd = m.hits,
			.idents_fd = idents,
			.linger_ns = MIN_RESIDENCY_NS,
		};

		t = tables__new(&o);
	}
	if (!t) {
		printf("FAIL: forkslots: tables__new failed\n");
		return 1;
	}
	/* Forks copy entries from now on; no round has read the ring since. */
	tables__fork_horizon(t, 1);
	a = tables__acquire_src(t, f[0].fd, &f[0].key, f[0].path, &f[0].src);
	b = tables__acquire_src(t, f[1].fd, &f[1].key, f[1].path, &f[1].src);
	settle(t);
	if (a < 0 || b < 0) {
		printf("FAIL: forkslots: A and B have no slots (%lld, %lld)\n", (long long)a,
		       (long long)b);
		return 1;
	}
	tables__publish_ident(t, (uint32_t)a, &f[0].key, 0, 0);
	tables__publish_ident(t, (uint32_t)a, &f[1].key, 0, 0); /* not A's slot's file */
	report(idents_has(idents, &f[0]) == a, "forkslots: A's identity names A's slot in idents",
	       "slots A %lld, B %lld, C %lld", (long long)a, (long long)b, (long long)c);
	report(idents_has(idents, &f[1]) < 0,
	       "forkslots: B's identity is not published for a slot B does not hold",
	       "slots A %lld, B %lld, C %lld", (long long)a, (long long)b, (long long)c);

	/* 1. A lingers after its last reference, but after the horizon. */
	tables__release(t, (uint32_t)a);
	c = tables__acquire_src(t, f[2].fd, &f[2].key, f[2].path, &f[2].src);
	settle(t);
	report(c < 0 && idents_has(idents, &f[0]) == a,
	       "forkslots: a table released after the fork horizon keeps its slot (C finds no room)",
	       "slots A %lld, B %lld, C %lld", (long long)a, (long long)b, (long long)c);

	/* 3. B held by a fork's copy, its own reference gone: held still. */
	report(!tables__hold(t, (uint32_t)b),
	       "forkslots: tables__hold takes a reference on B's slot",
	       "slots A %lld, B %lld, C %lld", (long long)a, (long long)b, (long long)c);
	tables__release(t, (uint32_t)b);
	/* 2. A round that read the ring began after both releases. */
	tables__fork_horizon(t, clock__mono_ns() + 1);
	c = tables__acquire_src(t, f[2].fd, &f[2].key, f[2].path, &f[2].src);
	settle(t);
	report(c == a, "forkslots: past a later horizon the released slot serves the new file",
	       "slots A %lld, B %lld, C %lld", (long long)a, (long long)b, (long long)c);
	report(c != b && b >= 0, "forkslots: a slot held by a fork's copy is not reclaimed",
	       "slots A %lld, B %lld, C %lld", (long long)a, (long long)b, (long long)c);
	/* 4. A's identity went with its slot, before C took it. */
	report(idents_has(idents, &f[0]) < 0,
	       "forkslots: A's identity was withdrawn before its slot served C",
	       "slots A %lld, B %lld, C %lld", (long long)a, (long long)b, (long long)c);
	tables__free(t);
	close_maps(&m);
	close(idents);
	return 0;
}
