// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Nothing grows without bound: the symbolizer's caches against real files,
 * driven by tests/growth.test.
 *
 *   growth dwarf DIR N [FILES]
 *                         N copies of a library with DWARF (DIR/libN.so, each
 *                         exporting growth_fn): dlopen'ed one after the other,
 *                         symbolized, closed. Each must get source lines (the
 *                         cache holds at most FILES DWARF descriptors, 256
 *                         by default), the
 *                         objects no snapshot uses must go within the budget,
 *                         and their paths once the process is forgotten.
 *   growth touch LIB N    LIB mapped, its mtime changed before each of N
 *                         refreshes: replaced objects must not pile up.
 *   growth aggr           200000 distinct stacks through a 4 MiB aggregator:
 *                         every sample and weight stays counted, hot stacks
 *                         keep their frames, the memory stays in the budget.
 *   growth view           the live view's model over 3000 refreshes of new
 *                         stacks: with idle stacks dropped it keeps a window
 *                         (stacks, addresses bounded, the hot function on
 *                         top); over a budgeted aggregator it counts each
 *                         sample once however stacks are folded.
 *   growth perfmap        our own /tmp/perf-PID.map: a map over the budget is
 *                         refused (counted), appended lines are read alone,
 *                         a line being written is read once whole; short
 *                         of room, the coldest map's tables go first.
 *   growth srcview LIB    the live view's source page of LIB's growth_fn:
 *                         its lines must outlive the symbolizer's objects
 *                         (a later lookup may evict the one they came from;
 *                         here the symbolizer is freed, and ASan reads).
 *   growth lines          source lines of every 16th byte of this program's
 *                         text (an object in use: never cold) under a 64 KiB
 *                         budget: the answers kept stay within it (unbudgeted
 *                         they grow past it eight times and more), and lines
 *                         asked again after a forgetting are the same.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/aggregate.h"
#include "top/srcview.h"
#include "top/topview.h"
#include "symbols/symbolize.h"
#include "util/clock.h"

#define TEST_PREFIX "growth-"
#include "testlib.h"

static int dwarf(const char *dir, int n, uint64_t files)
{
	struct symbolizer *s = symbolizer__new();
	struct symbolizer_stats st;
	int i, with_lines = 0, named = 0;
	uint64_t max_objects = 0, max_fds = 0;
	char path[4096];

	if (!s)
		return 1;
	/* Small enough that closed libraries go, big enough for a few. */
	symbolizer__set_budgets(s, 32 << 10, 0);
	if (files) {
		symbolizer__set_dwarf_files(s, files);
		test_tag = "budget-"; /* growth-budget-dwarf-*: the checks with FILES */
	} else {
		files = SYMCACHE_DEFAULT_DWARF_FILES;
	}
	for (i = 0; i < n; i++) {
		struct sym_info si;
		void *h, *fn;

		snprintf(path, sizeof(path), "%s/lib%d.so", dir, i);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		fn = h ? dlsym(h, "growth_fn") : NULL;
		if (!fn) {
			report(false, "dwarf-open", "%s: %s", path, dlerror());
			return 1;
		}
		symbolizer__refresh_pid(s, getpid());
		if (!symbolizer__user(s, getpid(), (uint64_t)(uintptr_t)fn, &si)) {
			named += si.name && !strcmp(si.name, "growth_fn");
			with_lines += si.nr_lines > 0 && si.lines[si.nr_lines - 1].function &&
				      !strcmp(si.lines[si.nr_lines - 1].function, "growth_fn");
		}
		dlclose(h);
		symbolizer__stats(s, &st);
		if (st.objs.objects > max_objects)
			max_objects = st.objs.objects;
		if (st.objs.dwarf_fds > max_fds)
			max_fds = st.objs.dwarf_fds;
	}
	symbolizer__refresh_pid(s, getpid());
	symbolizer__stats(s, &st);
	report(named == n, "dwarf-names", "%d of %d libraries named growth_fn", named, n);
	report((uint64_t)n > files && with_lines == n, "dwarf-lines",
	       "%d of %d libraries (over %" PRIu64 " needed) had source lines", with_lines, n,
	       files);
	report(max_fds <= files && st.objs.dwarf_budget == files && st.objs.dwarf_refused == 0,
	       "dwarf-fds",
	       "at most %" PRIu64 " DWARF descriptors held (budget %" PRIu64 ", %" PRIu64
	       " asked), %" PRIu64 " objects refused one",
	       max_fds, st.objs.dwarf_budget, files, st.objs.dwarf_refused);
	report(st.objs.evicted >= (uint64_t)n / 2 && max_objects < (uint64_t)n / 2, "dwarf-evicted",
	       "%" PRIu64 " objects evicted of %d closed; at most %" PRIu64 " cached at once",
	       st.objs.evicted, n, max_objects);
	report(st.objs.cold_bytes <= st.objs.budget, "dwarf-budget",
	       "%" PRIu64 " bytes of cold objects, budget %" PRIu64, st.objs.cold_bytes,
	       st.objs.budget);
	/* Forgotten, the process leaves no path interned (they are swept past 1024). */
	symbolizer__forget_pid(s, getpid());
	symbolizer__stats(s, &st);
	report(n > 1024 && st.strings_swept >= (uint64_t)n && st.strings == 0, "dwarf-paths",
	       "%" PRIu64 " paths swept of %d libraries, %" PRIu64 " still interned",
	       st.strings_swept, n, st.strings);
	symbolizer__free(s);
	return 0;
}

static int touch(const char *lib, int n)
{
	struct symbolizer *s = symbolizer__new();
	struct symbolizer_stats st;
	struct timespec ts[2];
	struct sym_info si;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL), *fn = h ? dlsym(h, "growth_fn") : NULL;
	int i, named = 0;

	if (!s || !fn) {
		report(false, "touch-open", "%s: %s", lib, dlerror());
		return 1;
	}
	symbolizer__note_pid(s, getpid());
	for (i = 0; i < n; i++) {
		/* A new mtime: the cache must take the file for another one. */
		ts[0].tv_sec = ts[1].tv_sec = 1000000 + i;
		ts[0].tv_nsec = ts[1].tv_nsec = 0;
		if (utimensat(AT_FDCWD, lib, ts, 0)) {
			report(false, "touch-utime", "%s: %s", lib, strerror(errno));
			return 1;
		}
		symbolizer__refresh_pid(s, getpid());
		named += !symbolizer__user(s, getpid(), (uint64_t)(uintptr_t)fn, &si) && si.name &&
			 !strcmp(si.name, "growth_fn");
	}
	symbolizer__stats(s, &st);
	report(named == n, "touch-names", "%d of %d lookups named growth_fn", named, n);
	report(st.objs.replaced >= (uint64_t)n, "touch-replaced",
	       "%" PRIu64 " objects replaced for %d touches", st.objs.replaced, n);
	/* One generation may hold the previous object until the next refresh. */
	report(st.objs.retired <= 1, "touch-retired",
	       "%" PRIu64 " replaced objects still kept after %d touches", st.objs.retired, n);
	dlclose(h);
	symbolizer__free(s);
	return 0;
}

static int write_lines(int fd, uint64_t base, int from, int to, const char *tag)
{
	char line[128];
	int i, len;

	for (i = from; i < to; i++) {
		len = snprintf(line, sizeof(line), "%" PRIx64 " 10 %s_%d\n",
			       base + (uint64_t)i * 16, tag, i);
		if (write(fd, line, len) != len)
			return -1;
	}
	return 0;
}

/* Looks up addr until it is named name or the deadline passes (re-reads are once a second). */
static bool wait_name(struct symbolizer *s, uint64_t addr, const char *name)
{
	uint64_t end = clock__mono_ns() + 20000000000ull;
	struct sym_info si;

	do {
		if (!symbolizer__user(s, getpid(), addr, &si) && si.name && !strcmp(si.name, name))
			return true;
		usleep(50000);
	} while (clock__mono_ns() < end);
	return false;
}

/* Peak resident memory so far (VmHWM), in bytes. */
static uint64_t peak_rss(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long long kb = 0;
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb << 10;
}

/* A 64 MiB map (1.6 M symbols) under the default budget: refused before any parsing. */
static int perfmap_huge(int fd, uint64_t base)
{
	struct symbolizer *s = symbolizer__new();
	struct symbolizer_stats st;
	static char buf[1 << 20];
	uint64_t before, i = 0;
	size_t len = 0;
	int n;

	if (!s || ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		return 1;
	for (;;) {
		n = snprintf(buf + len, sizeof(buf) - len,
			     "%" PRIx64 " 10 huge_symbol_%" PRIu64 "\n", base + i * 16, i);
		if ((size_t)n >= sizeof(buf) - len) {
			if (write(fd, buf, len) != (ssize_t)len)
				return 1;
			len = 0;
			if (lseek(fd, 0, SEEK_CUR) >= 64 << 20)
				break;
			continue;
		}
		len += n;
		i++;
	}
	before = peak_rss();
	symbolizer__note_pid(s, getpid());
	symbolizer__stats(s, &st);
	report(st.jit.refused >= 1 && st.jit.reads == 0 && st.jit.bytes == 0, "perfmap-huge",
	       "64 MiB map: refused %" PRIu64 ", reads %" PRIu64 ", bytes %" PRIu64, st.jit.refused,
	       st.jit.reads, st.jit.bytes);
	/* Parsed, it took 402 MB at its peak; refused, nothing near. */
	report(peak_rss() - before < (32 << 20), "perfmap-huge-rss",
	       "peak RSS grew %" PRIu64 " MiB reading a 64 MiB map", (peak_rss() - before) >> 20);
	symbolizer__free(s);
	return 0;
}

/*
 * Three maps in one pool whose budget holds two tables beside a read (each
 * map our own file, read whole): the third read evicts the map found in
 * least recently, not the one found in since.
 */
static int perfmap_evict(int fd, uint64_t base)
{
	struct perfmap_pool pool = { 0 };
	struct perfmap m[3];
	uint64_t off, text;
	char *name[3];
	struct stat st;
	int i;

	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) || write_lines(fd, base, 0, 1000, "evict") ||
	    fstat(fd, &st))
		return 1;
	text = (uint64_t)st.st_size;
	/* Two kept tables (2 x text each) and a read's peak (7 x text): 11; one less. */
	pool.budget = 10 * text;
	for (i = 0; i < 3; i++) {
		perfmap__init(&m[i], getpid(), &pool);
		perfmap__identify(&m[i]);
	}
	/* Names live until their map's next read or eviction: kept as copies. */
	name[0] = strdup(perfmap__find(&m[0], true, base + 16, &off) ?: "-");
	name[1] = strdup(perfmap__find(&m[1], true, base + 32, &off) ?: "-");
	free(name[0]); /* the first is the hotter now */
	name[0] = strdup(perfmap__find(&m[0], true, base + 48, &off) ?: "-");
	name[2] = strdup(perfmap__find(&m[2], true, base + 64, &off) ?: "-");
	if (!name[0] || !name[1] || !name[2])
		return 1;
	report(!strcmp(name[0], "evict_3") && !strcmp(name[1], "evict_2") &&
		       !strcmp(name[2], "evict_4") && pool.evicted == 1 && !m[1].nparts &&
		       m[0].nparts && m[2].nparts && pool.refused == 0 && pool.bytes <= pool.budget,
	       "perfmap-evict-coldest",
	       "names %s %s %s; evicted %" PRIu64 ", refused %" PRIu64 ", tables %u %u %u, %" PRIu64
	       " of %" PRIu64 " bytes",
	       name[0], name[1], name[2], pool.evicted, pool.refused, m[0].nparts, m[1].nparts,
	       m[2].nparts, pool.bytes, pool.budget);
	for (i = 0; i < 3; i++)
		free(name[i]);
	for (i = 0; i < 3; i++)
		perfmap__release(&m[i]);
	report(pool.bytes == 0 && !pool.coldest && !pool.hottest, "perfmap-evict-released",
	       "%" PRIu64 " bytes still charged after every map was released", pool.bytes);
	return 0;
}

static int perfmap(void)
{
	struct symbolizer *s = symbolizer__new();
	struct symbolizer_stats st;
	char path[64], name[64];
	void *jit = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)(uintptr_t)jit;
	struct sym_info si;
	bool found;
	int fd;

	if (!s || jit == MAP_FAILED)
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	/* 20000 lines, ~500 KiB: times the peak factor, over a 1 MiB budget. */
	if (fd < 0 || write_lines(fd, base, 0, 20000, "big")) {
		report(false, "perfmap-write", "%s: %s", path, strerror(errno));
		return 1;
	}
	symbolizer__set_budgets(s, 0, 1 << 20);
	symbolizer__note_pid(s, getpid());
	found = !symbolizer__user(s, getpid(), base + 16, &si) && si.name;
	symbolizer__stats(s, &st);
	report(!found && st.jit.refused >= 1 && st.jit.reads == 0 && st.jit.bytes == 0,
	       "perfmap-refused",
	       "found %d, refused %" PRIu64 ", reads %" PRIu64 ", bytes %" PRIu64, found,
	       st.jit.refused, st.jit.reads, st.jit.bytes);
	symbolizer__free(s);

	/* Within the budget: 1000 lines, then 1000 appended, then half a line. */
	s = symbolizer__new();
	if (!s || ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) ||
	    write_lines(fd, base, 0, 1000, "first"))
		return 1;
	symbolizer__set_budgets(s, 0, 16 << 20);
	symbolizer__note_pid(s, getpid());
	report(wait_name(s, base + 999 * 16, "first_999"), "perfmap-first", "first_999 not found");
	if (write_lines(fd, base, 1000, 2000, "next"))
		return 1;
	found = wait_name(s, base + 1999 * 16, "next_1999");
	symbolizer__stats(s, &st);
	report(found && st.jit.reads == 1 && st.jit.tail_reads == 1, "perfmap-append",
	       "found %d, whole reads %" PRIu64 ", tail reads %" PRIu64, found, st.jit.reads,
	       st.jit.tail_reads);
	report(wait_name(s, base + 5 * 16, "first_5"), "perfmap-append-old",
	       "first_5 lost after the append");
	/* A line written in two parts: not taken until whole. */
	snprintf(name, sizeof(name), "%" PRIx64 " 10 par", base + (uint64_t)2000 * 16);
	if (write(fd, name, strlen(name)) != (ssize_t)strlen(name) || write(fd, "tial\n", 5) != 5)
		return 1;
	found = wait_name(s, base + 2000 * 16, "partial");
	report(found, "perfmap-partial", "a line completed later was not read whole");
	symbolizer__stats(s, &st);
	report(st.jit.bytes > 0 && st.jit.bytes <= st.jit.budget, "perfmap-budget",
	       "%" PRIu64 " bytes charged, budget %" PRIu64, st.jit.bytes, st.jit.budget);
	symbolizer__free(s);
	if (perfmap_huge(fd, base) || perfmap_evict(fd, base))
		return 1;
	close(fd);
	unlink(path);
	return 0;
}

struct sums {
	uint64_t samples, weight, hot, hot_stacks;
};

static int sum_one(const struct aggr_stack *st, void *ctx)
{
	struct sums *m = ctx;

	m->samples += st->count;
	m->weight += st->weight;
	if (st->nr_user == 32 && st->ips[1] == 0xdead) {
		m->hot += st->count;
		m->hot_stacks++;
	}
	return 0;
}

static int aggr(void)
{
	static struct sfbpf_sample smp;
	struct aggregator *a = aggregator__new();
	const uint64_t budget = 4 << 20, n = 200000;
	unsigned budget_i, judged;
	uint64_t i, weight = 0, max_bytes = 0, hot = 0;
	struct aggr_totals t;
	struct sums m = { 0 };
	unsigned f;
	int err = 0;

	if (!a)
		return 1;
	aggregator__set_budget(a, budget);
	smp.nr_user = 32;
	smp.stop = SFBPF_STOP_OUTERMOST;
	for (i = 0; i < n && !err; i++) {
		/* Every 10th sample one of 8 hot stacks (of 7 processes: 56); the rest all
		 * distinct. */
		bool is_hot = i % 10 == 0;

		smp.pid = 100 + (uint32_t)(i % 7);
		snprintf(smp.comm, sizeof(smp.comm), "p%u", smp.pid);
		smp.weight = 1 + (uint32_t)(i % 3);
		for (f = 0; f < 32; f++)
			smp.ips[f] = is_hot ? 0x1000 + (i / 10 % 8) * 64 + f : i * 64 + f + 1;
		if (is_hot) {
			smp.ips[1] = 0xdead;
			hot++;
		}
		err = aggregator__add(a, &smp);
		weight += smp.weight;
		if (aggregator__bytes(a) > max_bytes)
			max_bytes = aggregator__bytes(a);
	}
	aggregator__totals(a, &t);
	aggregator__for_each(a, sum_one, &m);
	report(!err && t.refused == 0, "aggr-add",
	       "error %d at sample %" PRIu64 ", %" PRIu64 " refused", err, i, t.refused);
	report(m.samples == n && t.samples == n && m.weight == weight, "aggr-all-counted",
	       "stacks hold %" PRIu64 " samples, weight %" PRIu64 "; %" PRIu64
	       " sent, weight %" PRIu64,
	       m.samples, m.weight, n, weight);
	report(max_bytes <= budget, "aggr-budget", "%" PRIu64 " bytes at most, budget %" PRIu64,
	       max_bytes, budget);
	report(t.evicted > n / 4 && t.folded >= t.evicted && t.compactions > 0, "aggr-evicted",
	       "%" PRIu64 " stacks evicted, %" PRIu64 " samples folded, %" PRIu64 " compactions",
	       t.evicted, t.folded, t.compactions);
	/* Hot stacks are counted recently at every compaction: never folded. */
	report(m.hot_stacks == 56 && m.hot == hot, "aggr-hot-kept",
	       "%" PRIu64 " hot stacks with %" PRIu64 " samples; %" PRIu64 " sent", m.hot_stacks,
	       m.hot, hot);
	aggregator__free(a);
	/*
	 * Small stacks, many per chunk: past 64 K stacks the slot array's doubling
	 * (2 MiB) is more than a chunk, and is what crosses the budget. Budgets
	 * 256 KiB apart put that doubling near the limit of some.
	 */
	for (budget_i = 0, judged = 0; budget_i < 24; budget_i++) {
		uint64_t b = (8ull << 20) + budget_i * (256 << 10);

		a = aggregator__new();
		if (!a)
			return 1;
		aggregator__set_budget(a, b);
		smp.nr_user = 1;
		max_bytes = 0;
		for (i = 0; i < 100000; i++) {
			smp.ips[0] = i + 1;
			aggregator__add(a, &smp);
			if (aggregator__bytes(a) > max_bytes)
				max_bytes = aggregator__bytes(a);
		}
		aggregator__totals(a, &t);
		judged += t.evicted > 0;
		report(max_bytes <= b, "aggr-budget-slots",
		       "%" PRIu64 " bytes at most, budget %" PRIu64, max_bytes, b);
		aggregator__free(a);
	}
	report(judged >= 12, "aggr-budget-slots-judged", "%u of 24 budgets filled", judged);
	return 0;
}

/* n samples of one stack per call: frames from seed, in pid. */
static int feed(struct aggregator *a, uint32_t pid, uint64_t seed, unsigned n)
{
	static struct sfbpf_sample smp;
	unsigned f;
	int err = 0;

	smp.pid = pid;
	smp.nr_user = 8;
	smp.weight = 1;
	smp.stop = SFBPF_STOP_OUTERMOST;
	snprintf(smp.comm, sizeof(smp.comm), "v%u", pid);
	for (f = 0; f < 8; f++)
		smp.ips[f] = 0x400000 + seed * 64 + f * 8;
	while (n-- && !err)
		err = aggregator__add(a, &smp);
	return err;
}

static int own_sum(const struct aggr_stack *st, void *ctx)
{
	*(uint64_t *)ctx += st->count - st->folded;
	return 0;
}

#define VIEW_ROUNDS 3000
#define VIEW_WINDOW 5

static int view(void)
{
	struct topview_opts o = { .counts = TOPVIEW_DECAY };
	struct aggregator *a = aggregator__new();
	struct topview *tv = topview__new(&o, NULL, NULL);
	const struct topview_row *const *rows;
	uint64_t marks[VIEW_WINDOW] = { 0 }, max_stacks = 0, max_addrs = 0, own = 0;
	struct topview_totals tt;
	struct aggr_totals t;
	unsigned r, i;
	int err = 0, n;

	if (!a || !tv)
		return 1;
	for (r = 0; r < VIEW_ROUNDS && !err; r++) {
		/* 20 stacks never seen again, each in a process of its own; one hot stack. */
		for (i = 0; i < 20 && !err; i++)
			err = feed(a, 1000 + r * 20 + i, 1 + r * 20 + i, 1);
		err = err ?: feed(a, 7, 0, 10);
		err = err ?: topview__update(tv, a);
		aggregator__totals(a, &t);
		/* As the live view does: what was not counted in the last refreshes goes. */
		err = err ?: aggregator__drop_idle(a, marks[r % VIEW_WINDOW]);
		marks[r % VIEW_WINDOW] = t.samples;
		topview__totals(tv, &tt);
		if (tt.stacks > max_stacks)
			max_stacks = tt.stacks;
		if (tt.addrs > max_addrs)
			max_addrs = tt.addrs;
	}
	topview__totals(tv, &tt);
	aggregator__totals(a, &t);
	report(!err, "view-run", "error %d at refresh %u", err, r);
	/* A window of 5 refreshes of 21 stacks, plus what waits for a rebuild. */
	report(max_stacks <= 2 * (VIEW_WINDOW + 1) * 21 + 1024 &&
		       t.dropped >= 20 * (VIEW_ROUNDS - 10),
	       "view-window", "at most %" PRIu64 " stacks in the model, %" PRIu64 " dropped",
	       max_stacks, t.dropped);
	report(tt.rebuilds > 0 && max_addrs <= 8 * (2 * (VIEW_WINDOW + 1) * 21 + 2048),
	       "view-addrs", "%" PRIu64 " rebuilds, at most %" PRIu64 " addresses remembered",
	       tt.rebuilds, max_addrs);
	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &rows);
	/* The hot stack: 10 a refresh decaying by 7/8 settles near 80, the rest near 8 each. */
	report(n > 0 && rows[0]->pid == 7 && rows[0]->self > 40, "view-hot",
	       "%d rows, the first of pid %u self %.1f", n, n > 0 ? rows[0]->pid : 0,
	       n > 0 ? rows[0]->self : 0.0);
	topview__free(tv);
	aggregator__free(a);

	/* Budgeted (outputs at exit want every sample). */
	o.counts = TOPVIEW_CUMULATIVE;
	a = aggregator__new();
	tv = topview__new(&o, NULL, NULL);
	if (!a || !tv)
		return 1;
	aggregator__set_budget(a, 4 << 20);
	for (r = 0; r < 400 && !err; r++) {
		for (i = 0; i < 200 && !err; i++)
			err = feed(a, 1000 + i % 50, 1 + r * 200 + i, 1);
		err = err ?: topview__update(tv, a);
	}
	aggregator__totals(a, &t);
	aggregator__for_each(a, own_sum, &own);
	topview__totals(tv, &tt);
	/*
	 * Every sample fed counts once in the view: those of evicted stacks
	 * through the per-process stack they were folded into (never twice:
	 * what an evicted stack had counted leaves with it), none lost.
	 */
	report(!err && t.evicted > 0 && own < 400 * 200 && tt.samples == 400 * 200 &&
		       tt.stacks == t.stacks,
	       "view-budget",
	       "error %d, %" PRIu64 " evicted; view %" PRIu64 " samples (of %u fed) in %" PRIu64
	       " stacks, aggregator %" PRIu64 " own samples in %" PRIu64 " stacks",
	       err, t.evicted, tt.samples, 400 * 200, tt.stacks, own, t.stacks);
	topview__free(tv);
	aggregator__free(a);
	return 0;
}

static int srcview(const char *lib)
{
	static struct sfbpf_sample smp;
	struct symbolizer *s = symbolizer__new();
	struct aggregator *a = aggregator__new();
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL), *fn = h ? dlsym(h, "growth_fn") : NULL;
	struct srcview v = { 0 };
	struct srcview_query q;
	struct sym_info si;
	char *module = NULL, *file = NULL;
	uint32_t line = 0;
	int i, err;

	if (!s || !a || !fn) {
		report(false, "srcview-open", "%s: %s", lib, fn ? "no memory" : dlerror());
		return 1;
	}
	symbolizer__refresh_pid(s, getpid());
	/* What the symbolizer says of the address, kept: the page must say the same. */
	if (!symbolizer__user(s, getpid(), (uint64_t)(uintptr_t)fn, &si) && si.module &&
	    si.nr_lines && si.lines[0].file) {
		module = strdup(si.module);
		file = strdup(si.lines[0].file);
		line = si.lines[0].line;
	}
	if (!module || !file) {
		report(false, "srcview-lines", "%s: growth_fn has no source line here", lib);
		return 1;
	}
	smp.pid = smp.tid = getpid();
	snprintf(smp.comm, sizeof(smp.comm), "growth");
	smp.stop = SFBPF_STOP_OUTERMOST;
	smp.weight = 1;
	smp.nr_user = 1;
	smp.ips[0] = (uint64_t)(uintptr_t)fn;
	for (i = 0; i < 5; i++)
		aggregator__add(a, &smp);
	q = (struct srcview_query){ .name = "growth_fn",
				    .module = module,
				    .pid = (uint32_t)getpid() };
	err = srcview__collect(&v, a, s, &q);
	/* Every object goes, and its strings with it: the page keeps its own. */
	dlclose(h);
	symbolizer__free(s);
	report(!err && v.samples == 5 && v.nr_lines == 1 && v.lines[0].samples == 5 &&
		       v.lines[0].file && !strcmp(v.lines[0].file, file) &&
		       v.lines[0].line == line && v.lines[0].function &&
		       !strcmp(v.lines[0].function, "growth_fn"),
	       "srcview-own-strings",
	       "collect %d: %zu lines, %" PRIu64 " samples; first %s:%u (%s), symbolizer: %s:%u",
	       err, v.nr_lines, v.samples, v.nr_lines && v.lines[0].file ? v.lines[0].file : "-",
	       v.nr_lines ? v.lines[0].line : 0,
	       v.nr_lines && v.lines[0].function ? v.lines[0].function : "-", file, line);
	srcview__free(&v);
	aggregator__free(a);
	free(module);
	free(file);
	return 0;
}

/*
 * Source lines of every 16th byte of this program's own text (an object in
 * use, never cold) under an objects budget of budget bytes: the largest size
 * its answers reached, and the lines of the first 200 addresses, asked
 * first and again at the end, must match (*same).
 */
static uint64_t lines_walk(uint64_t budget, uint64_t *forgotten, int *asked, bool *same)
{
	struct symbolizer *s = symbolizer__new();
	uint64_t addr, start, end, most = 0;
	struct symbolizer_stats st;
	struct sym_info si;
	char *first[200] = { 0 };
	int i = 0, k;

	*asked = 0;
	*same = true;
	if (!s)
		return 0;
	symbolizer__set_budgets(s, budget, 0);
	symbolizer__refresh_pid(s, getpid());
	if (symbolizer__user(s, getpid(), (uint64_t)(uintptr_t)lines_walk, &si) || !si.mapped) {
		symbolizer__free(s);
		return 0;
	}
	start = si.map_start;
	end = si.map_end;
	for (addr = start; addr < end; addr += 16, i++) {
		if (symbolizer__user(s, getpid(), addr, &si))
			continue;
		*asked += si.nr_lines > 0;
		if (i < 200 && si.nr_lines && si.lines[0].file)
			asprintf(&first[i], "%s:%u", si.lines[0].file, si.lines[0].line);
		symbolizer__stats(s, &st);
		if (st.objs.lines_bytes > most)
			most = st.objs.lines_bytes;
	}
	for (k = 0, addr = start; k < 200 && addr < end; k++, addr += 16) {
		char *again = NULL;

		if (!symbolizer__user(s, getpid(), addr, &si) && si.nr_lines && si.lines[0].file)
			asprintf(&again, "%s:%u", si.lines[0].file, si.lines[0].line);
		*same &= (!first[k] && !again) || (first[k] && again && !strcmp(first[k], again));
		free(first[k]);
		free(again);
	}
	symbolizer__stats(s, &st);
	*forgotten = st.objs.lines_forgotten;
	symbolizer__free(s);
	return most;
}

/* An object in use for weeks keeps the source lines of every address asked, within budget. */
static int lines(void)
{
	const uint64_t budget = 64 << 10;
	uint64_t most, free_most, forgotten, free_forgotten;
	int asked, free_asked;
	bool same, free_same;

	free_most = lines_walk(1ull << 30, &free_forgotten, &free_asked, &free_same);
	most = lines_walk(budget, &forgotten, &asked, &same);
	/* The check has teeth: unbounded, the answers outgrow the budget many times over. */
	report(free_asked > 1000 && free_most > 8 * budget && !free_forgotten, "lines-unbudgeted",
	       "%d addresses with lines: %" PRIu64 " bytes of answers, none forgotten (%" PRIu64
	       ")",
	       free_asked, free_most, free_forgotten);
	/* A trim comes before a lookup: one lookup's growth (a doubling) past it at most. */
	report(asked == free_asked && most <= 2 * budget && forgotten > 0, "lines-budget",
	       "%d addresses with lines: answers %" PRIu64 " bytes at most (budget %" PRIu64
	       "), forgotten %" PRIu64 " times",
	       asked, most, budget, forgotten);
	report(same && free_same, "lines-same",
	       "the first 200 addresses' lines, asked again after their answers were forgotten: %s",
	       same ? "the same" : "different");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "view"))
		return view() || failures;
	if (argc == 2 && !strcmp(argv[1], "aggr"))
		return aggr() || failures;
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "dwarf"))
		return dwarf(argv[2], atoi(argv[3]), argc == 5 ? strtoull(argv[4], NULL, 10) : 0) ||
		       failures;
	if (argc == 4 && !strcmp(argv[1], "touch"))
		return touch(argv[2], atoi(argv[3])) || failures;
	if (argc == 2 && !strcmp(argv[1], "perfmap"))
		return perfmap() || failures;
	if (argc == 3 && !strcmp(argv[1], "srcview"))
		return srcview(argv[2]) || failures;
	if (argc == 2 && !strcmp(argv[1], "lines"))
		return lines() || failures;
	fprintf(stderr, "usage: growth dwarf DIR N [FILES] | touch LIB N | perfmap | aggr | view | "
			"srcview LIB | lines\n");
	return 2;
}
