// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Loader cost per object: the table loader (userspace/maps/tables.h) turns each
 * FILE's unwind data into rows pushed into the BPF maps of a loaded unwinder,
 * from a fresh loader every time so each object is measured alone (its rules
 * and page index included). Prints one line per repetition and file:
 *   ldcost rep=R file=PATH source=sframe|eh_frame|none rows=N rules=N \
 *          pages=N table_bytes=N sframe_bytes=N load_ns=N push_ns=N total_ns=N \
 *          cfi_rows=interpreter|libdw
 * (table_bytes: rows, rules and page index entries as stored in the maps, 4
 * bytes a row or page entry and 24 a rule;
 * sframe_bytes: the .sframe section the table came from, 0 for .eh_frame;
 * load_ns: building the table alone (reading the ELF file, decoding,
 * flattening, merging the sources: tables_stats.load_ns); push_ns: writing
 * it to the maps; total_ns: the whole tables__acquire() call, both and the
 * bookkeeping around them; cfi_rows: how rows from CFI were built,
 * SFBPF_CFI_ROWS=libdw in the environment selecting the row walk the
 * interpreter replaced).
 *
 * Usage: ldcost [-r REPS] FILE...
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tables/cfi.h"
#include "tables/elfobj.h"
#include "profile/profile.h"
#include "maps/tables.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int load_one(struct profile *p, int rep, const char *path)
{
	struct tables_opts topts = {
		.rows_fd = profile__rows_fd(p),
		.rules_fd = profile__rules_fd(p),
		.objects_fd = profile__objects_fd(p),
		.pages_fd = profile__pages_fd(p),
		.max_rows = PROFILE_DEFAULT_ROWS,
		.max_rules = PROFILE_DEFAULT_RULES,
		.max_objects = PROFILE_DEFAULT_OBJECTS,
		.max_pages = PROFILE_DEFAULT_PAGES,
	};
	struct elfobj_info info;
	struct tables_stats st;
	struct obj_key key;
	struct tables *t;
	struct stat sb;
	const char *source;
	uint64_t start;
	int64_t obj;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) || elfobj__read(fd, &info)) {
		fprintf(stderr, "ldcost: %s: not a readable ELF file\n", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	obj_key__from(&key, &info, &sb, fd);
	t = tables__new(&topts);
	if (!t) {
		close(fd);
		return -1;
	}
	start = now_ns();
	obj = tables__acquire(t, fd, &key, path);
	start = now_ns() - start;
	tables__stats(t, &st);
	source = obj < 0 ? "none" : st.objects_sframe ? "sframe" : "eh_frame";
	printf("ldcost rep=%d file=%s source=%s rows=%llu rules=%llu pages=%llu table_bytes=%llu "
	       "sframe_bytes=%llu load_ns=%llu push_ns=%llu total_ns=%llu cfi_rows=%s\n",
	       rep, path, source, (unsigned long long)st.rows_used,
	       (unsigned long long)st.rules_used, (unsigned long long)st.pages_used,
	       (unsigned long long)st.table_bytes,
	       (unsigned long long)st.sframe_bytes, (unsigned long long)st.load_ns,
	       (unsigned long long)st.push_ns, (unsigned long long)start,
	       cfi__libdw_rows() ? "libdw" : "interpreter");
	fflush(stdout);
	if (obj >= 0)
		tables__release(t, (uint32_t)obj);
	tables__free(t);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct profile_opts popts = { .user_stacks = true, .kernel_stacks = true };
	struct profile *p;
	int opt, reps = 5, rep, i, err = 0;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt != 'r') {
			fprintf(stderr, "usage: ldcost [-r REPS] FILE...\n");
			return 2;
		}
		reps = atoi(optarg);
	}
	if (optind >= argc || reps <= 0) {
		fprintf(stderr, "usage: ldcost [-r REPS] FILE...\n");
		return 2;
	}
	/* The unwinder's maps, which the loader fills; it is never attached. */
	p = profile__new(&popts);
	if (!p) {
		fprintf(stderr, "ldcost: cannot load the unwinder: %s\n", strerror(errno));
		return 1;
	}
	for (rep = 0; rep < reps && !err; rep++)
		for (i = optind; i < argc && !err; i++)
			if (load_one(p, rep, argv[i]))
				err = 1;
	profile__free(p);
	return err;
}
