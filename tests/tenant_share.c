// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sharing a table between files with one build-id (userspace/tables/
 * tableshare.c, tablebytes.c) against a tenant who forges or rewrites a copy.
 * Driven by tests/tenant_share.test, which builds the files.
 *
 * Usage:
 *   tenant_share sha256 FILE...        the digest of each, as sha256sum prints it
 *   tenant_share same-table MIN FILE... each file's table built from the file and
 *       from the private copy of the bytes its digest names: equal (MIN at least
 *       with a copy; a builder reading bytes the copy lacks makes them differ)
 *   tenant_share share DIR MNT         DIR holds honest.so, honest2.so, forged1-3.so
 *       (one build-id and size, three frame layouts), copies/0..66.so (honest
 *       copies, other inodes) and under/lib.so; MNT is under/ through bindfs
 *       --ctime-from-mtime, so a rewrite that restores the mtime keeps the
 *       identity the kernel shows (what a rewrite within one ctime tick does).
 * Exit status: 0 when the checks ran, 2 on bad usage, 1 on setup failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tables/tablebytes.h"
#include "tables/tableload.h"
#include "tablebudget.h"
#include "testlib.h"

#define ROWS (1u << 20)
#define PAGES (1u << 18)
#define RULES (1u << 14)
#define OBJECTS 128u
#define COPIES 67

static int sha256(int argc, char **argv)
{
	uint8_t d[SHA256_BYTES];
	struct sha256 s;
	char buf[4096];
	ssize_t n;
	int i, k, fd;

	for (i = 0; i < argc; i++) {
		fd = open(argv[i], O_RDONLY);
		if (fd < 0)
			return 1;
		sha256__init(&s);
		/* Odd-sized reads: blocks filled across calls. */
		while ((n = read(fd, buf, 1 + (size_t)i * 37 % sizeof(buf))) > 0)
			sha256__update(&s, buf, n);
		close(fd);
		sha256__final(&s, d);
		for (k = 0; k < SHA256_BYTES; k++)
			printf("%02x", d[k]);
		printf("  %s\n", argv[i]);
	}
	return 0;
}

/* One build of path's table: from the file, or from the private copy. */
static struct tableload_job *build(const char *path, bool from_copy)
{
	struct tableload_opts o = { .threaded = false };
	struct tableload *tl = tableload__new(&o);
	struct tableload_job *job = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (tl && fd >= 0 && (job = tableload_job__new(fd, path, NULL))) {
		job->want_digest = from_copy;
		tableload__submit(tl, job);
		job = tableload__take(tl);
	}
	if (fd >= 0)
		close(fd);
	tableload__free(tl);
	return job;
}

static bool same_rule(const struct sfbpf_rule *a, const struct sfbpf_rule *b)
{
	return a->cfa_off == b->cfa_off && a->ra_off == b->ra_off && a->fp_off == b->fp_off &&
	       a->cfa_reg == b->cfa_reg && a->ra_loc == b->ra_loc && a->fp_loc == b->fp_loc &&
	       a->ra_reg == b->ra_reg && a->fp_reg == b->fp_reg && a->cfa_regnum == b->cfa_regnum &&
	       a->flags == b->flags;
}

/* Why two builds differ, or NULL. */
static const char *differs(const struct tableload_job *a, const struct tableload_job *b)
{
	const struct flat_table *x = a->ft, *y = b->ft;
	uint32_t i;

	if (a->err != b->err || !x != !y)
		return "one built, the other not";
	if (!x)
		return NULL;
	if (x->nr_rows != y->nr_rows || x->nr_rules != y->nr_rules || x->nr_pages != y->nr_pages ||
	    x->pc_min != y->pc_min || x->page_shift != y->page_shift)
		return "sizes";
	for (i = 0; i < x->nr_rows; i++)
		if (x->rows[i].pc_off != y->rows[i].pc_off || x->rows[i].rule != y->rows[i].rule)
			return "rows";
	for (i = 0; i < x->nr_rules; i++)
		if (!same_rule(&x->rules[i], &y->rules[i]))
			return "rules";
	if (memcmp(x->pages, y->pages, x->nr_pages * sizeof(*x->pages)))
		return "pages";
	return NULL;
}

static int same_table(int min, int argc, char **argv)
{
	struct tableload_job *direct, *copy;
	int i, copied = 0, built = 0;
	const char *why;

	for (i = 0; i < argc; i++) {
		direct = build(argv[i], false);
		copy = build(argv[i], true);
		if (!direct || !copy)
			return 1;
		why = differs(direct, copy);
		if (why)
			report(false, "same-table", "%s: %s", argv[i], why);
		copied += copy->has_digest;
		built += copy->has_digest && copy->ft;
		tableload_job__free(direct);
		tableload_job__free(copy);
	}
	report(copied >= min && built >= min / 2, "same-table count",
	       "%d files built from a copy, %d with a table (want >= %d, %d)", copied, built, min,
	       min / 2);
	return 0;
}

struct bench {
	struct maps m;
	struct tables *t;
};

static int bench_new(struct bench *b, bool async)
{
	struct tables_opts o = {
		.max_rows = ROWS,
		.max_rules = RULES,
		.max_objects = OBJECTS,
		.max_pages = PAGES,
		.linger_ns = MIN_RESIDENCY_NS,
		.min_residency_ns = MIN_RESIDENCY_NS,
		.async = async,
	};

	if (create_maps(&b->m, ROWS, PAGES, RULES, OBJECTS))
		return -1;
	o.rows_fd = b->m.rows, o.rules_fd = b->m.rules, o.objects_fd = b->m.objects;
	o.pages_fd = b->m.pages, o.obj_hits_fd = b->m.hits;
	b->t = tables__new(&o);
	return b->t ? 0 : -1;
}

static void bench_free(struct bench *b)
{
	tables__free(b->t);
	close_maps(&b->m);
}

static int64_t acquire(struct bench *b, struct file *f)
{
	return tables__acquire_src(b->t, f->fd, &f->key, f->path, &f->src);
}

/* Whether slot has rows published (no flag saying it has none). */
static bool has_rows(const struct bench *b, int64_t slot)
{
	uint32_t flags;

	return slot >= 0 && published(&b->m, slot, &flags) > 0 && !(flags & SFBPF_OBJ_F_NO_ROWS);
}

static int copy_bytes(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY);
	ssize_t n;
	off_t off = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0) {
		if (pwrite(out, buf, n, off) != n)
			break;
		off += n;
	}
	n = in >= 0 && out >= 0 && !fsync(out) ? 0 : -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return (int)n;
}

/*
 * The forged copy's table is built, then its bytes become the honest ones
 * with its identity unchanged: the honest library must not get the table
 * built from the forged bytes.
 */
static int rewritten(const char *dir, const char *mnt)
{
	char under[4096], forged[4096], honest[4096], view[4096];
	struct file fv = { 0 }, fh = { 0 };
	struct obj_key before;
	struct timespec times[2];
	struct stat st;
	struct bench b;
	int64_t sv, sh;

	snprintf(under, sizeof(under), "%s/under/lib.so", dir);
	snprintf(forged, sizeof(forged), "%s/forged1.so", dir);
	snprintf(honest, sizeof(honest), "%s/honest.so", dir);
	snprintf(view, sizeof(view), "%s/lib.so", mnt);
	if (copy_bytes(forged, under) || stat(under, &st) || open_file(&fv, view) ||
	    open_file(&fh, honest) || bench_new(&b, false))
		return 1;
	sv = acquire(&b, &fv);
	before = fv.key;
	/* The honest bytes, and the mtime (the ctime through the mount) put back. */
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	if (copy_bytes(honest, under) || utimensat(AT_FDCWD, under, times, 0))
		return 1;
	if (open_file(&fv, view) || before.len != fv.key.len ||
	    memcmp(before.bytes, fv.key.bytes, before.len)) {
		report(false, "rewritten setup", "the rewrite changed the identity through %s",
		       mnt);
		return 0;
	}
	sh = acquire(&b, &fh);
	report(has_rows(&b, sv) && has_rows(&b, sh) && sh != sv, "rewritten",
	       "forged copy in slot %lld, the honest one in %lld (rows: %d, %d)", (long long)sv,
	       (long long)sh, has_rows(&b, sv), has_rows(&b, sh));
	bench_free(&b);
	return 0;
}

/*
 * Three forged copies tracked before the honest library: more than the
 * compare budget. The honest one gets its own table, never a forged one's,
 * and the next honest copy shares it.
 */
static int forged_first(const char *dir)
{
	struct file f[5] = { { 0 } };
	const char *names[5] = { "forged1", "forged2", "forged3", "honest", "honest2" };
	char path[5][4096];
	struct tables_stats st;
	struct bench b;
	int64_t s[5];
	int i;

	if (bench_new(&b, false))
		return 1;
	for (i = 0; i < 5; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s.so", dir, names[i]);
		if (open_file(&f[i], path[i]))
			return 1;
		s[i] = acquire(&b, &f[i]);
	}
	tables__stats(b.t, &st);
	report(s[0] != s[1] && s[1] != s[2] && s[0] != s[2], "forged-first: forged apart",
	       "slots %lld %lld %lld", (long long)s[0], (long long)s[1], (long long)s[2]);
	report(has_rows(&b, s[3]) && s[3] != s[0] && s[3] != s[1] && s[3] != s[2],
	       "forged-first: honest table",
	       "honest in slot %lld (rows %d), forged in %lld %lld %lld", (long long)s[3],
	       has_rows(&b, s[3]), (long long)s[0], (long long)s[1], (long long)s[2]);
	report(st.same_id_unverified >= 1, "forged-first: budget reached",
	       "%llu unverified (the honest one should reach the budget)",
	       (unsigned long long)st.same_id_unverified);
	report(s[4] == s[3] && st.shared_same_bytes == 1, "forged-first: honest copy shares",
	       "honest2 in slot %lld, honest in %lld, %llu shared", (long long)s[4],
	       (long long)s[3], (unsigned long long)st.shared_same_bytes);
	bench_free(&b);
	return 0;
}

/* 67 identical copies: the first entry takes 64 aliases, the 66th its own table, the 67th shares
 * that. */
static int alias_cap(const char *dir)
{
	static struct file f[COPIES];
	char path[4096];
	struct tables_stats st;
	struct bench b;
	int64_t s[COPIES];
	int i, with_first = 0;

	if (bench_new(&b, false))
		return 1;
	for (i = 0; i < COPIES; i++) {
		snprintf(path, sizeof(path), "%s/copies/%d.so", dir, i);
		f[i].path = strdup(path);
		if (open_file(&f[i], f[i].path))
			return 1;
		s[i] = acquire(&b, &f[i]);
		with_first += s[i] == s[0];
	}
	tables__stats(b.t, &st);
	report(with_first == 1 + TABLES_MAX_ALIASES && s[65] != s[0] && s[66] == s[65] &&
		       has_rows(&b, s[0]) && has_rows(&b, s[65]) && st.same_id_alias_cap >= 1,
	       "alias cap",
	       "%d in the first slot (want %d), 66th in %lld, 67th in %lld, cap hit %llu",
	       with_first, 1 + TABLES_MAX_ALIASES, (long long)s[65], (long long)s[66],
	       (unsigned long long)st.same_id_alias_cap);
	bench_free(&b);
	return 0;
}

/*
 * An entry still being built (async, before tables__process) is compared
 * through its file now; its build must come out of those bytes: when it does
 * not (the claimed digest changed here, as a rewrite between the comparison
 * and the build would), neither the entry nor its alias gets the table.
 */
static int pending(const char *dir, bool tamper)
{
	struct file f[2] = { { 0 } };
	char path[2][4096];
	struct tables_stats st;
	struct bench b;
	int64_t s[2];
	int i;

	if (bench_new(&b, true))
		return 1;
	for (i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s.so", dir, i ? "honest2" : "honest");
		if (open_file(&f[i], path[i]))
			return 1;
		s[i] = acquire(&b, &f[i]);
	}
	if (s[0] >= 0 && tamper)
		b.t->slots[s[0]]->digest[0] ^= 1;
	settle(b.t);
	tables__stats(b.t, &st);
	if (!tamper)
		report(s[1] == s[0] && has_rows(&b, s[0]) && st.shared_same_bytes == 1,
		       "pending: shared", "slots %lld %lld, rows %d, shared %llu", (long long)s[0],
		       (long long)s[1], has_rows(&b, s[0]),
		       (unsigned long long)st.shared_same_bytes);
	else
		report(s[1] == s[0] && s[0] >= 0 && !has_rows(&b, s[0]) &&
			       st.objects_without_table >= 1,
		       "pending: built from other bytes", "slots %lld %lld, rows %d",
		       (long long)s[0], (long long)s[1], has_rows(&b, s[0]));
	bench_free(&b);
	return 0;
}

/*
 * The filesystem's type is part of a file's identity: the status a FUSE
 * server reports for its file (inode, size, times) could be another file's,
 * on a device number an unmount freed. The same status taken with a file of
 * another type (a memfd: tmpfs) or none names another object.
 */
static int fs_type(const char *dir)
{
	struct obj_key on_disk, other, none;
	char path[4096];
	struct stat st;
	int fd, mfd;

	snprintf(path, sizeof(path), "%s/honest.so", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	mfd = memfd_create("tenant-share", MFD_CLOEXEC);
	if (fd < 0 || mfd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		if (mfd >= 0)
			close(mfd);
		return -1;
	}
	obj_key__from(&on_disk, NULL, &st, fd);
	obj_key__from(&other, NULL, &st, mfd);
	obj_key__from(&none, NULL, &st, -1);
	report(on_disk.len == other.len && memcmp(on_disk.bytes, other.bytes, on_disk.len) &&
		       memcmp(on_disk.bytes, none.bytes, on_disk.len),
	       "fs type", "one status on two filesystem types gave one identity");
	close(fd);
	close(mfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "sha256"))
		return sha256(argc - 2, argv + 2);
	if (argc >= 3 && !strcmp(argv[1], "same-table"))
		return same_table(atoi(argv[2]), argc - 3, argv + 3);
	if (argc != 4 || strcmp(argv[1], "share")) {
		fprintf(stderr, "usage: %s sha256|same-table|share ...\n", argv[0]);
		return 2;
	}
	if (fs_type(argv[2]) || rewritten(argv[2], argv[3]) || forged_first(argv[2]) ||
	    alias_cap(argv[2]) || pending(argv[2], false) || pending(argv[2], true)) {
		report(false, "setup", "%s", strerror(errno));
		return 1;
	}
	return 0;
}
