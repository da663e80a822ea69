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
 *   temps     a budget of one table: the store that must evict passes over the
 *             temporary files being written (.tmp.*, fresh mtimes) in the
 *             directory and in ident/, and deletes those an hour old (a writer
 *             that died) and the older table;
 *   week      a week of a new identity a minute (10080 records, their mtimes a
 *             minute apart) noted into a cache of two tables and 2000 records'
 *             budget: the directory's files (tables, ident/) within it all
 *             along the way, the oldest table and records evicted first, the
 *             newest 1000 records and the table used last kept;
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
#include <time.h>
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

/* The record file of identity bytes ident[0 .. n) in DIR/ident (named as tableident.c does). */
static void rec_file(const void *ident, uint32_t n, char *out, size_t size)
{
	uint8_t h[SHA256_BYTES];
	struct sha256 sha;
	int i, k;

	sha256__init(&sha);
	sha256__update(&sha, ident, n);
	sha256__final(&sha, h);
	k = snprintf(out, size, "%s/ident/", dir);
	for (i = 0; i < 16 && (size_t)k + 3 <= size; i++)
		k += snprintf(out + k, size - (size_t)k, "%02x", h[i]);
}

/* The record file of path's identity. */
static void ident_file(const char *path, char *out, size_t size)
{
	uint8_t ident[TABLEIDENT_MAX];
	uint64_t stat5[5];
	struct stat st = { 0 };

	rec_file(ident, test_ident(path, ident, stat5, &st), out, size);
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

/* ---- what the budget holds ------------------------------------------------------ */

/* The bytes of the regular files in DIR and DIR/ident (find's count): what the budget holds. */
static uint64_t dir_bytes(void)
{
	FILE *p = popen("find \"$SFBPF_TC_DIR\" -maxdepth 2 -type f -printf '%s\\n'", "r");
	unsigned long long size, total = 0;

	while (p && fscanf(p, "%llu", &size) == 1)
		total += size;
	if (p)
		pclose(p);
	return total;
}

/* Sets path's mtime (and atime) to ns since the epoch, or back by -ns from now when ns < 0. */
static bool set_mtime(const char *path, int64_t ns)
{
	struct timespec ts[2];

	if (ns < 0) {
		clock_gettime(CLOCK_REALTIME, &ts[0]);
		ns += (int64_t)ts[0].tv_sec * 1000000000ll + ts[0].tv_nsec;
	}
	ts[0].tv_sec = ns / 1000000000ll;
	ts[0].tv_nsec = ns % 1000000000ll;
	ts[1] = ts[0];
	return !utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

static bool empty_dir(const char *what)
{
	if (!system("find \"$SFBPF_TC_DIR\" -mindepth 1 -delete"))
		return true;
	report(false, what, "could not empty %s", dir);
	return false;
}

/* A file of 4 KiB at DIR/sub, its mtime ago_ns back. */
static bool write_tmp(const char *sub, int64_t ago_ns)
{
	static const char page[4096];
	char path[4096];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	f = fopen(path, "wb");
	if (!f)
		return false;
	ok = fwrite(page, 1, sizeof(page), f) == sizeof(page);
	ok = !fclose(f) && ok;
	return ok && (!ago_ns || set_mtime(path, -ago_ns));
}

#define HOUR_NS (3600ll * 1000000000)

/*
 * Another writer's temporary files (a store, an identity record) are being
 * written while this cache must evict: they stay; those left an hour ago go.
 * a: an older table that must go for b, the budget b's size alone.
 */
static void temps(int a, int b)
{
	static const char *const fresh[] = { ".tmp.1.1", "ident/.tmp.1.3" };
	static const char *const stale[] = { ".tmp.1.2", "ident/.tmp.1.4" };
	struct tablecache_stats st;
	struct tablecache *c;
	char path[4096];
	int i, kept = 0, gone = 0;
	bool ok;

	if (!empty_dir("temps"))
		return;
	c = open_cache(0);
	tableload_job__free(load(c, objs[a].path));
	tablecache__free(c);
	snprintf(path, sizeof(path), "%s/%s", dir, objs[a].name);
	ok = set_mtime(path, -600 * 1000000000ll);
	for (i = 0; i < 2; i++)
		ok = ok && write_tmp(fresh[i], 0) && write_tmp(stale[i], 2 * HOUR_NS);
	if (!ok) {
		report(false, "temps", "setup failed");
		return;
	}
	c = open_cache(objs[b].size);
	tableload_job__free(load(c, objs[b].path));
	tablecache__stats(c, &st);
	tablecache__free(c);
	for (i = 0; i < 2; i++) {
		kept += exists(fresh[i]);
		gone += !exists(stale[i]);
	}
	ok = kept == 2 && gone == 2 && !exists(objs[a].name) && exists(objs[b].name) &&
	     st.evicted >= 1;
	/* The counts said either way: they are what a reader of the log compares. */
	(ok ? test_pass : test_fail)(
		"temps: budget %llu: %d of 2 temporary files being written kept, %d of 2 "
		"an hour old deleted, older table %s, new table %s, %llu evicted",
		(unsigned long long)objs[b].size, kept, gone,
		exists(objs[a].name) ? "kept" : "gone", exists(objs[b].name) ? "stored" : "missing",
		(unsigned long long)st.evicted);
}

#define WEEK_RECORDS (7 * 24 * 60) /* one new identity a minute */
#define WEEK_ROOM 2000 /* records the budget holds beside the two tables */
#define WEEK_CHECKED 1000 /* the newest kept, the oldest gone */

/*
 * A week of a CI host or a Kubernetes node: a new file hashed a minute, each
 * an identity record, noted into a cache of two tables (a, the oldest; b,
 * used last). The records count in the budget and are evicted with the
 * tables, least recently used first (their mtimes: set a minute apart).
 */
static void week(int a, int b)
{
	uint64_t budget = objs[a].size + objs[b].size + WEEK_ROOM * 408ull, peak = 0, bytes;
	int64_t t0 = 0, ct;
	uint8_t digest[SHA256_BYTES];
	struct tablecache_stats st;
	struct tableident *x;
	struct tablecache *c;
	struct stat fst;
	char id[32], path[4096];
	int i, noted = 0, newest = 0, oldest = 0, fd;
	uint32_t n;
	bool ok;

	if (!empty_dir("week"))
		return;
	c = open_cache(0);
	tableload_job__free(load(c, objs[a].path));
	tableload_job__free(load(c, objs[b].path));
	tablecache__free(c);
	/* Minutes of a week that ended an hour ago: a the oldest of all, b newer than all. */
	t0 = (int64_t)time(NULL) * 1000000000ll - HOUR_NS - WEEK_RECORDS * 60000000000ll;
	snprintf(path, sizeof(path), "%s/%s", dir, objs[a].name);
	fd = open(objs[a].path, O_RDONLY | O_CLOEXEC);
	c = open_cache(budget);
	x = tablecache__ident(c);
	if (!set_mtime(path, t0 - 60000000000ll) || fd < 0 || fstat(fd, &fst) || !x) {
		report(false, "week", "setup failed");
		goto out;
	}
	/* Hashed well after its ctime: every note is recorded (see "ident margin"). */
	ct = (int64_t)fst.st_ctim.tv_sec * 1000000000ll + fst.st_ctim.tv_nsec;
	for (i = 0; i < WEEK_RECORDS; i++) {
		n = (uint32_t)snprintf(id, sizeof(id), "week %d", i);
		memset(digest, i & 0xff, sizeof(digest));
		noted += tableident__note(x, id, n, digest, id, fd, &fst,
					  ct + 2 * TABLEIDENT_CTIME_MARGIN_NS) == 1;
		rec_file(id, n, path, sizeof(path));
		set_mtime(path, t0 + i * 60000000000ll);
		/* Measured all along the week, not only at its end. */
		if (i % 500 == 0 && (bytes = dir_bytes()) > peak)
			peak = bytes;
	}
	bytes = dir_bytes();
	peak = bytes > peak ? bytes : peak;
	for (i = 0; i < WEEK_CHECKED; i++) {
		n = (uint32_t)snprintf(id, sizeof(id), "week %d", i);
		rec_file(id, n, path, sizeof(path));
		oldest += access(path, F_OK) != 0;
		n = (uint32_t)snprintf(id, sizeof(id), "week %d", WEEK_RECORDS - 1 - i);
		newest += !tableident__digest(x, id, n, digest) &&
			  digest[0] == ((WEEK_RECORDS - 1 - i) & 0xff);
	}
	tablecache__stats(c, &st);
	ok = noted == WEEK_RECORDS && peak <= budget && st.bytes <= budget &&
	     oldest == WEEK_CHECKED && newest == WEEK_CHECKED && !exists(objs[a].name) &&
	     exists(objs[b].name);
	(ok ? test_pass : test_fail)(
		"week: budget %llu: %d of %d identities noted, the directory at most %llu "
		"bytes (%llu at the end, %llu counted), %d of the oldest %d records gone, %d "
		"of the newest kept, the oldest table %s, the one used last %s, %llu evicted",
		(unsigned long long)budget, noted, WEEK_RECORDS, (unsigned long long)peak,
		(unsigned long long)bytes, (unsigned long long)st.bytes, oldest, WEEK_CHECKED,
		newest, exists(objs[a].name) ? "kept" : "gone",
		exists(objs[b].name) ? "kept" : "gone", (unsigned long long)st.evicted);
out:
	if (fd >= 0)
		close(fd);
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
	/* The two smallest tables: the budgets below are a few of them and some records. */
	for (i = 0, a = b = -1; i < nr_objs; i++) {
		if (!objs[i].ft)
			continue;
		if (a < 0 || objs[i].size < objs[a].size) {
			b = a;
			a = i;
		} else if (b < 0 || objs[i].size < objs[b].size) {
			b = i;
		}
	}
	temps(a, b);
	week(a, b);
	for (i = 0; i < nr_objs; i++)
		flat_table__free(objs[i].ft);
	return 0;
}
