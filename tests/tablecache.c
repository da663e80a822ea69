// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The table cache (userspace/tables/tablecache.c) through the loader that
 * uses it (tableload.c), on real objects. Driven by tests/table_cache.test.
 *
 * Usage: tablecache DIR MIN FILE...   (DIR: a new, empty directory of root's)
 *   cold      every FILE with a table is built and stored (MIN at least);
 *   warm      a new cache on DIR gives every table back, equal to the build
 *             row for row, rule for rule, page for page (hits = stored, no miss);
 *   corrupt   one payload byte flipped: refused as corrupt, deleted, built again;
 *   truncated the last byte cut: refused as corrupt;
 *   version   another format version in the header: refused as version;
 *   foreign   another object's valid file under this one's name: refused as foreign;
 *   symlink   a symlink under the name: refused, its target neither read nor touched;
 *   budget    a budget of the two largest files: evictions counted, the
 *             directory under the budget, the newest tables kept;
 *   check     flat_table__check refuses rows out of order and a rule out of range;
 *   ident     the identity index (tableident.h): each FILE loaded with an identity
 *             (its status, as the map loader keys it) gets a record (MIN at least);
 *             a new cache then reads every recorded table back without reading
 *             the file (from_ident), equal to the build; a status other than the
 *             file's (ctime moved) is not taken for it; a record of a file whose
 *             ctime is within the margin of the hashing is not written, one past it
 *             is; a record with a byte flipped is refused and deleted, another
 *             boot's is deleted uncounted; the recent ones come newest first.
 * Usage: tablecache time DIR FILE
 *   one cold build of FILE's table (stored into DIR, which must not hold it),
 *   then one read back: "rows=N cold_us=N warm_us=N" (scripts/bench.sh).
 * Exit status: 0 when the checks ran, 2 on bad usage, 1 on setup failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tables/flatbuild.h"
#include "tables/tablebytes.h"
#include "tables/tablecache.h"
#include "tables/tableident.h"
#include "tables/tableload.h"
#include "testlib.h"

#define TEST_MAX_FILES 64

struct obj {
	const char *path;
	struct flat_table *ft; /* the cold build */
	char name[2 * SHA256_BYTES + 1]; /* its cache file */
	uint64_t size;
};

static struct obj objs[TEST_MAX_FILES];
static int nr_objs;
static const char *dir;

/* One load of path through a loader using cache: the job, or NULL. */
static struct tableload_job *load(struct tablecache *c, const char *path)
{
	struct tableload_opts o = { .cache = c };
	struct tableload *tl = tableload__new(&o);
	struct tableload_job *job = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (tl && fd >= 0 && (job = tableload_job__new(fd, path, NULL)) &&
	    !tableload__submit(tl, job))
		job = tableload__take(tl);
	if (fd >= 0)
		close(fd);
	tableload__free(tl);
	return job;
}

static bool same_table(const struct flat_table *a, const struct flat_table *b)
{
	return a && b && a->nr_rows == b->nr_rows && a->nr_rules == b->nr_rules &&
	       a->nr_pages == b->nr_pages && a->pc_min == b->pc_min &&
	       a->page_shift == b->page_shift && a->nr_fdes == b->nr_fdes &&
	       a->nr_fres == b->nr_fres &&
	       !memcmp(a->rows, b->rows, (size_t)a->nr_rows * sizeof(*a->rows)) &&
	       !memcmp(a->rules, b->rules, (size_t)a->nr_rules * sizeof(*a->rules)) &&
	       !memcmp(a->pages, b->pages, (size_t)a->nr_pages * sizeof(*a->pages));
}

static struct tablecache *open_cache(uint64_t max_bytes)
{
	struct tablecache_opts o = { .dir = dir, .max_bytes = max_bytes };

	return tablecache__new(&o);
}

static bool exists(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !access(path, F_OK);
}

/* The loads of obj o through a fresh cache, with its stats after. */
static struct tableload_job *reload(int o, struct tablecache_stats *st)
{
	struct tablecache *c = open_cache(0);
	struct tableload_job *job = load(c, objs[o].path);

	tablecache__stats(c, st);
	tablecache__free(c);
	return job;
}

/*
 * Damage obj o's file with cmd (a shell line, $F its path), load it again:
 * refused for reason (*counter of the stats is 1), deleted, the table built
 * anew and equal to the cold one, and stored again.
 */
static void refused(const char *what, int o, const char *cmd, size_t counter)
{
	struct tablecache_stats st;
	struct tableload_job *job;
	char sh[8192];
	uint64_t n;

	snprintf(sh, sizeof(sh), "F='%s/%s'; %s", dir, objs[o].name, cmd);
	if (system(sh)) {
		report(false, what, "could not damage the file: %s", sh);
		return;
	}
	job = reload(o, &st);
	n = *(uint64_t *)((char *)&st + counter);
	report(job && !job->from_cache && same_table(job->ft, objs[o].ft) && n == 1 &&
		       st.hits == 0 && st.stored == 1 && exists(objs[o].name),
	       what,
	       "%s: counted %llu (want 1), hits %llu, from cache %d, same table %d, stored %llu",
	       objs[o].path, (unsigned long long)n, (unsigned long long)st.hits,
	       job && job->from_cache, job && same_table(job->ft, objs[o].ft),
	       (unsigned long long)st.stored);
	tableload_job__free(job);
}

static void cold_and_warm(int min)
{
	struct tablecache_stats st;
	struct tableload_job *job;
	struct tablecache *c = open_cache(0);
	int i, warm = 0, equal = 0;

	for (i = 0; i < nr_objs; i++) {
		job = load(c, objs[i].path);
		if (job && !job->err && job->ft && !job->from_cache) {
			objs[i].ft = job->ft;
			job->ft = NULL;
		}
		tableload_job__free(job);
	}
	tablecache__stats(c, &st);
	tablecache__free(c);
	report(st.stored >= (uint64_t)min && st.misses == st.stored && !st.hits, "cold",
	       "%llu stored, %llu misses, %llu hits (want >= %d stored, all misses)",
	       (unsigned long long)st.stored, (unsigned long long)st.misses,
	       (unsigned long long)st.hits, min);

	c = open_cache(0);
	for (i = 0; i < nr_objs; i++) {
		if (!objs[i].ft)
			continue;
		job = load(c, objs[i].path);
		warm += job && job->from_cache;
		equal += job && job->from_cache && same_table(job->ft, objs[i].ft);
		tableload_job__free(job);
	}
	tablecache__stats(c, &st);
	tablecache__free(c);
	report(warm >= min && equal == warm && st.hits == (uint64_t)warm && !st.misses &&
		       !st.stored,
	       "warm", "%d from the cache, %d equal to the build, %llu hits, %llu misses", warm,
	       equal, (unsigned long long)st.hits, (unsigned long long)st.misses);
}

static void budget(void)
{
	struct tablecache_stats st;
	struct tableload_job *job;
	struct tablecache *c;
	uint64_t max = 0, second = 0;
	int i, last = -1, kept = 0;

	for (i = 0; i < nr_objs; i++) {
		if (!objs[i].ft)
			continue;
		if (objs[i].size > max) {
			second = max;
			max = objs[i].size;
		} else if (objs[i].size > second) {
			second = objs[i].size;
		}
	}
	/* Start empty: a budget of the two largest files holds at least the last one stored. */
	if (system("find \"$SFBPF_TC_DIR\" -mindepth 1 -delete")) {
		report(false, "budget", "could not empty %s", dir);
		return;
	}
	c = open_cache(max + second);
	for (i = 0; i < nr_objs; i++) {
		if (!objs[i].ft)
			continue;
		job = load(c, objs[i].path);
		tableload_job__free(job);
		last = i;
	}
	tablecache__stats(c, &st);
	tablecache__free(c);
	for (i = 0; i < nr_objs; i++)
		kept += objs[i].ft && exists(objs[i].name);
	report(st.evicted >= 1 && st.bytes <= max + second && last >= 0 &&
		       exists(objs[last].name) && kept >= 1,
	       "budget", "budget %llu: %llu evicted, %llu bytes, %d files kept, the last stored %s",
	       (unsigned long long)(max + second), (unsigned long long)st.evicted,
	       (unsigned long long)st.bytes, kept,
	       last >= 0 && exists(objs[last].name) ? "kept" : "gone");
}

static void symlink_name(int o)
{
	struct tablecache_stats st;
	struct tableload_job *job;
	char target[4096], link[4096];
	struct stat before, after;

	/* The object's own valid file, moved out: followed, the link would give a hit. */
	snprintf(target, sizeof(target), "%s.target", dir);
	snprintf(link, sizeof(link), "%s/%s", dir, objs[o].name);
	if (rename(link, target) || stat(target, &before) || symlink(target, link)) {
		report(false, "symlink", "setup failed");
		return;
	}
	job = reload(o, &st);
	stat(target, &after);
	report(job && !job->from_cache && same_table(job->ft, objs[o].ft) &&
		       st.refused_corrupt == 1 && !st.hits && after.st_size == before.st_size &&
		       after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
		       after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
	       "symlink", "refused %llu, hits %llu, target size %lld (was %lld)",
	       (unsigned long long)st.refused_corrupt, (unsigned long long)st.hits,
	       (long long)after.st_size, (long long)before.st_size);
	tableload_job__free(job);
	unlink(target);
}

static void check(int o)
{
	struct flat_table *t = objs[o].ft;
	struct flat_row r;
	uint32_t rule;
	bool ok = !flat_table__check(t);

	if (t->nr_rows < 2) {
		report(false, "check", "%s: %u rows", objs[o].path, t->nr_rows);
		return;
	}
	r = t->rows[0];
	t->rows[0] = t->rows[1];
	t->rows[1] = r;
	ok = ok && flat_table__check(t) == -EINVAL;
	t->rows[1] = t->rows[0];
	t->rows[0] = r;
	rule = t->rows[0].rule;
	t->rows[0].rule = t->nr_rules;
	ok = ok && flat_table__check(t) == -EINVAL;
	t->rows[0].rule = rule;
	report(ok && !flat_table__check(t), "check",
	       "%s: a broken table passed, or a good one failed", objs[o].path);
}

/* ---- the identity index ---------------------------------------------------------- */

/* path's identity as the tests key it: its name (any bytes do), and its status. */
static uint32_t test_ident(const char *path, uint8_t *ident, uint64_t stat5[5],
			   const struct stat *st)
{
	uint32_t n = (uint32_t)strlen(path);

	n = n < TABLEIDENT_MAX ? n : TABLEIDENT_MAX;
	memcpy(ident, path, n);
	stat5[0] = st->st_dev;
	stat5[1] = st->st_ino;
	stat5[2] = (uint64_t)st->st_size;
	stat5[3] = (uint64_t)st->st_mtim.tv_sec * 1000000000ull + st->st_mtim.tv_nsec;
	stat5[4] = (uint64_t)st->st_ctim.tv_sec * 1000000000ull + st->st_ctim.tv_nsec;
	return n;
}

/* One load of path with its identity (ctime_skew added to the status's ctime). */
static struct tableload_job *load_ident(struct tablecache *c, const char *path, uint64_t ctime_skew)
{
	struct tableload_opts o = { .cache = c };
	struct tableload *tl = tableload__new(&o);
	struct tableload_job *job = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t ident[TABLEIDENT_MAX];
	uint64_t stat5[5];
	struct stat st;
	uint32_t n;

	if (tl && fd >= 0 && !fstat(fd, &st) && (job = tableload_job__new(fd, path, NULL))) {
		n = test_ident(path, ident, stat5, &st);
		stat5[4] += ctime_skew;
		if (tableload_job__set_ident(job, ident, n, stat5) || tableload__submit(tl, job)) {
			tableload_job__free(job);
			job = NULL;
		} else {
			job = tableload__take(tl);
		}
	}
	if (fd >= 0)
		close(fd);
	tableload__free(tl);
	return job;
}

/* The record file of path's identity in DIR/ident (its name as tableident.c makes it). */
static void ident_file(const char *path, char *out, size_t size)
{
	uint8_t ident[TABLEIDENT_MAX], h[SHA256_BYTES];
	uint64_t stat5[5];
	struct sha256 sha;
	struct stat st = { 0 };
	uint32_t n = test_ident(path, ident, stat5, &st);
	int i, k;

	sha256__init(&sha);
	sha256__update(&sha, ident, n);
	sha256__final(&sha, h);
	k = snprintf(out, size, "%s/ident/", dir);
	for (i = 0; i < 16 && (size_t)k + 3 <= size; i++)
		k += snprintf(out + k, size - (size_t)k, "%02x", h[i]);
}

/*
 * The record layout tableident.c writes (408 bytes): the boot id at 16, the
 * SHA-256 of the 376 bytes before it at 376. Rewrites path's record with a
 * byte of its boot id changed and its digest made again: whole, another boot's.
 */
static bool other_boot(const char *path)
{
	uint8_t rec[408];
	struct sha256 sha;
	char file[4096];
	FILE *f;
	bool ok;

	ident_file(path, file, sizeof(file));
	f = fopen(file, "r+b");
	if (!f)
		return false;
	ok = fread(rec, 1, sizeof(rec), f) == sizeof(rec);
	rec[16] ^= 0x55;
	sha256__init(&sha);
	sha256__update(&sha, rec, 376);
	sha256__final(&sha, rec + 376);
	ok = ok && !fseek(f, 0, SEEK_SET) && fwrite(rec, 1, sizeof(rec), f) == sizeof(rec);
	return !fclose(f) && ok;
}

static void ident(int min)
{
	struct tablecache_stats st;
	struct tableload_job *job;
	struct tablecache *c = open_cache(0);
	struct tableident_rec *recs = NULL;
	uint8_t digest[SHA256_BYTES], want[SHA256_BYTES];
	char file[4096], sh[8400];
	int i, noted = 0, hit = 0, equal = 0, stale = 0, a = -1, b = -1;
	uint32_t nr = 0;
	struct stat fst;
	int64_t ct;
	int fd, r1, r2;

	/* Hashed as before (the cold run stored every table): recorded now. */
	for (i = 0; i < nr_objs; i++) {
		if (!objs[i].ft)
			continue;
		job = load_ident(c, objs[i].path, 0);
		noted += job && job->from_cache && !job->from_ident;
		tableload_job__free(job);
	}
	tablecache__stats(c, &st);
	tablecache__free(c);
	report(st.ident.noted >= (uint64_t)min && noted >= min && !st.ident.hits, "ident noted",
	       "%llu records written, %d hashed and read back, %llu hits (want >= %d, no hit)",
	       (unsigned long long)st.ident.noted, noted, (unsigned long long)st.ident.hits, min);
	/* Each file recorded (local filesystems, ctime old enough) is read back by identity. */
	noted = (int)st.ident.noted;

	/* A new cache (a restart): the recorded files' tables without reading them. */
	c = open_cache(0);
	for (i = 0; i < nr_objs; i++) {
		if (!objs[i].ft)
			continue;
		job = load_ident(c, objs[i].path, 0);
		hit += job && job->from_ident;
		equal += job && job->from_ident && same_table(job->ft, objs[i].ft);
		if (job && job->from_ident)
			a < 0 ? (a = i) : b < 0 ? (b = i) : 0;
		tableload_job__free(job);
		/* Another status than the file's: not the file the record names. */
		job = load_ident(c, objs[i].path, 1);
		stale += job && !job->from_ident && job->from_cache;
		tableload_job__free(job);
	}
	tablecache__stats(c, &st);
	report(hit >= min && hit == noted && equal == hit && st.ident.hits == (uint64_t)hit,
	       "ident hit",
	       "%d read back by identity (of %d recorded), %d equal to the build, %llu hits", hit,
	       noted, equal, (unsigned long long)st.ident.hits);
	report(stale == hit, "ident stale", "%d of %d loads with another ctime hashed the file",
	       stale, hit);

	/* The margin: a ctime within it of the hashing is no record; one past it is. */
	fd = open(objs[a < 0 ? 0 : a].path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !fstat(fd, &fst) && tablecache__ident(c)) {
		ct = (int64_t)fst.st_ctim.tv_sec * 1000000000ll + fst.st_ctim.tv_nsec;
		memset(want, 0x5a, sizeof(want));
		r1 = tableident__note(tablecache__ident(c), "margin", 6, want, "margin", fd, &fst,
				      ct + TABLEIDENT_CTIME_MARGIN_NS / 2);
		r2 = tableident__note(tablecache__ident(c), "margin", 6, want, "margin", fd, &fst,
				      ct + 2 * TABLEIDENT_CTIME_MARGIN_NS);
		report(r1 == 0 && r2 == 1 &&
			       !tableident__digest(tablecache__ident(c), "margin", 6, digest) &&
			       !memcmp(digest, want, SHA256_BYTES),
		       "ident margin", "within the margin: %d (want 0), past it: %d (want 1)", r1,
		       r2);
	} else {
		report(false, "ident margin", "no file or no index");
	}
	if (fd >= 0)
		close(fd);
	tablecache__free(c);
	if (a < 0 || b < 0) {
		report(false, "ident damaged", "fewer than two records");
		return;
	}

	/* One byte of the name flipped: refused, counted, deleted; the file hashed again. */
	ident_file(objs[a].path, file, sizeof(file));
	snprintf(sh, sizeof(sh),
		 "printf '\\001' | dd of='%s' bs=1 seek=300 conv=notrunc status=none", file);
	c = open_cache(0);
	job = system(sh) ? NULL : load_ident(c, objs[a].path, 0);
	tablecache__stats(c, &st);
	report(job && !job->from_ident && job->from_cache && st.ident.refused == 1, "ident corrupt",
	       "from identity %d, refused %llu (want 0 and 1)", job && job->from_ident,
	       (unsigned long long)st.ident.refused);
	tableload_job__free(job);
	/* Another boot's record: deleted, not counted as refused; hashed again. */
	job = other_boot(objs[b].path) ? load_ident(c, objs[b].path, 0) : NULL;
	tablecache__stats(c, &st);
	ident_file(objs[b].path, file, sizeof(file));
	report(job && !job->from_ident && job->from_cache && st.ident.refused == 1,
	       "ident other boot", "from identity %d, refused %llu (want 0, still 1)",
	       job && job->from_ident, (unsigned long long)st.ident.refused);
	tableload_job__free(job);

	/* Newest first: b's record made newest, a's oldest (their mtimes set). */
	ident_file(objs[b].path, file, sizeof(file));
	snprintf(sh, sizeof(sh), "touch -d '+1 hour' '%s'", file);
	i = system(sh);
	ident_file(objs[a].path, file, sizeof(file));
	snprintf(sh, sizeof(sh), "touch -d '-1 hour' '%s'", file);
	i |= system(sh);
	r1 = i ? -1 : tableident__recent(tablecache__ident(c), 64, &recs, &nr);
	report(!r1 && nr >= 2 && recs[0].len == strlen(objs[b].path) &&
		       !memcmp(recs[0].ident, objs[b].path, recs[0].len) &&
		       recs[nr - 1].len == strlen(objs[a].path) &&
		       !memcmp(recs[nr - 1].ident, objs[a].path, recs[nr - 1].len),
	       "ident recent", "%u records, newest %.*s (want %s), oldest %.*s (want %s)", nr,
	       nr ? (int)recs[0].len : 0, nr ? (const char *)recs[0].ident : "", objs[b].path,
	       nr ? (int)recs[nr - 1].len : 0, nr ? (const char *)recs[nr - 1].ident : "",
	       objs[a].path);
	free(recs);
	tablecache__free(c);
}

static int timing(const char *path)
{
	struct tableload_job *cold, *warm;
	struct tablecache *c = open_cache(0);
	int ret = 1;

	cold = load(c, path);
	warm = load(c, path);
	if (cold && warm && cold->ft && !cold->from_cache && warm->from_cache &&
	    same_table(cold->ft, warm->ft)) {
		printf("rows=%u cold_us=%llu warm_us=%llu\n", cold->ft->nr_rows,
		       (unsigned long long)cold->build_ns / 1000,
		       (unsigned long long)warm->build_ns / 1000);
		ret = 0;
	}
	tableload_job__free(cold);
	tableload_job__free(warm);
	tablecache__free(c);
	return ret;
}

int main(int argc, char **argv)
{
	uint8_t digest[SHA256_BYTES];
	struct tablecache *c;
	struct stat st;
	int i, min, fd, a = -1, b = -1;
	char sh[256];

	if (argc == 4 && !strcmp(argv[1], "time")) {
		dir = argv[2];
		return timing(argv[3]);
	}
	if (argc < 4 || argc - 3 > TEST_MAX_FILES)
		return 2;
	dir = argv[1];
	min = atoi(argv[2]);
	setenv("SFBPF_TC_DIR", dir, 1);
	c = open_cache(0);
	if (!tablecache__enabled(c))
		return 1;
	for (i = 3; i < argc; i++) {
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || tablebytes__read(fd, digest, NULL)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		close(fd);
		objs[nr_objs].path = argv[i];
		tablecache__name(c, digest, objs[nr_objs++].name);
	}
	tablecache__free(c);

	cold_and_warm(min);
	for (i = 0; i < nr_objs; i++) {
		if (!objs[i].ft)
			continue;
		snprintf(sh, sizeof(sh), "%s/%s", dir, objs[i].name);
		objs[i].size = stat(sh, &st) ? 0 : (uint64_t)st.st_size;
		if (a < 0)
			a = i;
		else if (b < 0)
			b = i;
	}
	if (a < 0 || b < 0) {
		report(false, "setup", "fewer than two objects with a table");
		return 0;
	}
	/*
	 * A byte of the gap rule's CFA offset (the header is 152 bytes, nr_rows
	 * at 64, rows 8 bytes each): a table still well formed, which only the
	 * digest tells from the stored one.
	 */
	refused("corrupt", a,
		"o=$((152 + $(od -An -tu4 -j64 -N4 \"$F\") * 8)); "
		"printf \"$(printf '\\\\%03o' $(( ($(od -An -tu1 -j$o -N1 \"$F\") + 1) % 256 )))\" | "
		"dd of=\"$F\" bs=1 seek=$o conv=notrunc status=none",
		offsetof(struct tablecache_stats, refused_corrupt));
	refused("truncated", a, "truncate -s -1 \"$F\"",
		offsetof(struct tablecache_stats, refused_corrupt));
	refused("version", a, "printf '\\377' | dd of=\"$F\" bs=1 seek=8 conv=notrunc status=none",
		offsetof(struct tablecache_stats, refused_version));
	snprintf(sh, sizeof(sh), "cp \"$SFBPF_TC_DIR/%s\" \"$F\"", objs[b].name);
	refused("foreign", a, sh, offsetof(struct tablecache_stats, refused_foreign));
	symlink_name(a);
	check(a);
	ident(min);
	budget();
	for (i = 0; i < nr_objs; i++)
		flat_table__free(objs[i].ft);
	return 0;
}
