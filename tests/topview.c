// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sfbpf-top's model (userspace/top/topview.c) against hand-counted input.
 *
 * synthetic: samples carrying real addresses of this process's functions
 *   (main, tv_a, tv_b, tv_c, tv_hot) and of a made-up kallsyms file go
 *   through an aggregator; Self, Total and Samples of every row, the
 *   groupings, filters, sort keys, caller/callee trees and counting modes
 *   must equal the values written down from the construction.
 * scale: 100k distinct stacks, then 1000 of them grow: every one and every
 *   sample counted (the refresh's time is printed; make bench's liveview
 *   measures it, no test times it).
 * evictions: 150k distinct stacks in a 4 MiB budget: every sample counted
 *   once in the totals and in its process, in every counting mode.
 * fixture (root, with a fixture path): one real stack main;a;b;hot of the
 *   chain fixture, sampled by the BPF profiler, is fed N times, and the same
 *   stack without its leaf (main;a;b) M times: hot self = N, b self = M,
 *   b and a total = N + M. Then the model of the whole run is compared with
 *   the folded output of the same aggregator, frame by frame.
 *
 *   topview [FIXTURE]
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile/snapshot.h"
#include "profile/aggregate.h"
#include "output/folded.h"
#include "interp/frame_names.h"
#include "symbols/ksyms.h"
#include "profile/session.h"
#include "symbols/symbolize.h"
#include "top/topview.h"

#define TEST_PREFIX "topview "
#include "testlib.h"
#include "util/clock.h"

__attribute__((noipa)) int tv_hot(int x)
{
	return x * 7 + 1;
}

__attribute__((noipa)) int tv_c(int x)
{
	return x * 5 + 2;
}

__attribute__((noipa)) int tv_b(int x)
{
	return tv_hot(x) * 3 + 2;
}

__attribute__((noipa)) int tv_a(int x)
{
	return tv_b(x) + tv_c(x) + 1;
}

int main(int argc, char **argv);

#define U(f) ((uint64_t)(uintptr_t)(f))
#define KBASE 0xffffffff81000000ULL

static struct sfbpf_sample *sample;

static void add(struct aggregator *a, uint32_t pid, const char *comm, int stop,
		const uint64_t *user, int nu, const uint64_t *kern, int nk, int times)
{
	int i;

	memset(sample, 0, sizeof(*sample));
	sample->pid = sample->tid = pid;
	sample->stop = stop;
	sample->weight = 1;
	sample->nr_user = nu;
	sample->nr_kernel = nk;
	memcpy(sample->comm, comm, strnlen(comm, sizeof(sample->comm) - 1));
	if (nu)
		memcpy(sample->ips, user, nu * sizeof(*user));
	if (nk)
		memcpy(sample->ips + nu, kern, nk * sizeof(*kern));
	for (i = 0; i < times; i++)
		aggregator__add(a, sample);
}

static const struct topview_row *find(const struct topview_row *const *rows, int n, uint32_t pid,
				      const char *comm, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (rows[i]->pid == pid && !strcmp(rows[i]->sym->name, name) &&
		    (!comm || !strcmp(rows[i]->comm, comm)))
			return rows[i];
	return NULL;
}

static bool near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

/* Row (pid, comm, name) has exactly these Self, Total and Samples. */
static void expect(const char *test, const struct topview_row *const *rows, int n, uint32_t pid,
		   const char *comm, const char *name, double self, double total, uint64_t samples)
{
	const struct topview_row *r = find(rows, n, pid, comm, name);
	char what[128];

	snprintf(what, sizeof(what), "%s %s/%u %s", test, comm ? comm : "", pid, name);
	if (!r) {
		report(false, what, "no such row");
		return;
	}
	report(near(r->self, self) && near(r->total, total) && r->samples == samples, what,
	       "self %g total %g samples %" PRIu64 ", want %g %g %" PRIu64, r->self, r->total,
	       r->samples, self, total, samples);
}

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	return pid;
}

/*
 * The construction (P1 = this process, P2 and P3 = forked copies, same
 * addresses; "tvtest" is P1's and P2's command, "other" P3's):
 *   P1  7 x main;tv_a;tv_b;tv_hot
 *   P1  3 x main;tv_a;tv_c
 *   P1  2 x main;tv_a;tv_b;tv_hot + kernel fake_entry;fake_syscall
 *   P1  4 x main;tv_a;tv_a;tv_c          (recursion: tv_a counts once)
 *   P1  1 x [truncated] tv_b;tv_hot      (lost its root)
 *   P2  5 x main;tv_a;tv_c
 *   P3  2 x main;tv_a;tv_c
 */
static void feed(struct aggregator *a, uint32_t p1, uint32_t p2, uint32_t p3, int part)
{
	uint64_t hot[] = { U(tv_hot), U(tv_b) + 1, U(tv_a) + 1, U(main) + 1 };
	uint64_t c[] = { U(tv_c) + 2, U(tv_a) + 2, U(main) + 2 };
	uint64_t rec[] = { U(tv_c) + 3, U(tv_a) + 3, U(tv_a) + 4, U(main) + 3 };
	uint64_t trunc[] = { U(tv_hot) + 1, U(tv_b) + 2 };
	uint64_t k[] = { KBASE + 0x2010, KBASE + 0x1020 };

	if (part & 1) {
		add(a, p1, "tvtest", SFBPF_STOP_OUTERMOST, hot, 4, NULL, 0, 7);
		add(a, p1, "tvtest", SFBPF_STOP_OUTERMOST, c, 3, NULL, 0, 3);
		add(a, p1, "tvtest", SFBPF_STOP_OUTERMOST, hot, 4, k, 2, 2);
	}
	if (part & 2) {
		add(a, p1, "tvtest", SFBPF_STOP_OUTERMOST, rec, 4, NULL, 0, 4);
		add(a, p1, "tvtest", SFBPF_STOP_NO_ROW, trunc, 2, NULL, 0, 1);
		add(a, p2, "tvtest", SFBPF_STOP_OUTERMOST, c, 3, NULL, 0, 5);
		add(a, p3, "other", SFBPF_STOP_OUTERMOST, c, 3, NULL, 0, 2);
	}
}

static void test_counts(struct topview *tv, uint32_t p1, uint32_t p2, uint32_t p3)
{
	const struct topview_row *const *r;
	struct topview_totals t;
	int n;

	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	topview__totals(tv, &t);
	report(t.samples == 24 && t.weight == 24, "totals", "samples %" PRIu64 " weight %g",
	       t.samples, t.weight);
	expect("pid", r, n, p1, "tvtest", "tv_hot", 8, 10, 8);
	expect("pid", r, n, p1, "tvtest", "tv_b", 0, 10, 0);
	expect("pid", r, n, p1, "tvtest", "tv_a", 0, 16, 0);
	expect("pid", r, n, p1, "tvtest", "main", 0, 16, 0);
	expect("pid", r, n, p1, "tvtest", "tv_c", 7, 7, 7);
	expect("pid", r, n, p1, "tvtest", "fake_syscall", 2, 2, 2);
	expect("pid", r, n, p1, "tvtest", "fake_entry", 0, 2, 0);
	expect("pid", r, n, p2, "tvtest", "tv_c", 5, 5, 5);
	expect("pid", r, n, p2, "tvtest", "tv_a", 0, 5, 0);
	expect("pid", r, n, p3, "other", "tv_c", 2, 2, 2);
	report(n == 13, "pid rows", "%d rows, want 13", n);
	report(n > 0 && !strcmp(r[0]->sym->name, "tv_hot") && r[0]->pid == p1, "sort self",
	       "first row %s", n ? r[0]->sym->name : "none");
	{
		const struct topview_row *k = find(r, n, p1, NULL, "fake_syscall");
		const struct topview_row *u = find(r, n, p1, NULL, "tv_hot");

		report(k && k->sym->kernel && !strcmp(k->sym->module, "[kernel.kallsyms]") && u &&
			       !u->sym->kernel && strstr(u->sym->module, "topview"),
		       "kinds and modules", "%s %s", k ? k->sym->module : "-",
		       u ? u->sym->module : "-");
	}
	n = topview__select(tv, TOPVIEW_SORT_TOTAL, NULL, &r);
	/* main and tv_a tie at 16: the name breaks it. */
	report(n > 1 && r[0]->total == 16 && !strcmp(r[0]->sym->name, "main") &&
		       !strcmp(r[1]->sym->name, "tv_a"),
	       "sort total", "first %s %g", n ? r[0]->sym->name : "none", n ? r[0]->total : 0);
}

static void test_filters(struct topview *tv, uint32_t p1, uint32_t p2)
{
	const struct topview_row *const *r;
	int pids[] = { (int)p2 }, n;
	struct topview_filter f = { .pids = pids, .nr_pids = 1 };

	n = topview__select(tv, TOPVIEW_SORT_SELF, &f, &r);
	report(n == 3 && find(r, n, p2, NULL, "tv_c"), "filter pid", "%d rows, want 3", n);
	f = (struct topview_filter){ .search = "HOT" };
	n = topview__select(tv, TOPVIEW_SORT_SELF, &f, &r);
	report(n == 1 && r[0]->pid == p1 && !strcmp(r[0]->sym->name, "tv_hot"), "filter search",
	       "%d rows", n);
	f = (struct topview_filter){ .hide_kernel = true };
	n = topview__select(tv, TOPVIEW_SORT_SELF, &f, &r);
	report(n == 11 && !find(r, n, p1, NULL, "fake_syscall"), "hide kernel", "%d rows", n);
	f = (struct topview_filter){ .hide_user = true };
	n = topview__select(tv, TOPVIEW_SORT_SELF, &f, &r);
	report(n == 2 && r[0]->sym->kernel && r[1]->sym->kernel, "hide user", "%d rows", n);
}

static void test_groups(struct topview *tv, uint32_t p1, uint32_t p2)
{
	const struct topview_row *const *r;
	int n;

	topview__set_group(tv, TOPVIEW_GROUP_COMM);
	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	expect("comm", r, n, 0, "tvtest", "tv_c", 12, 12, 12);
	expect("comm", r, n, 0, "tvtest", "tv_a", 0, 21, 0);
	expect("comm", r, n, 0, "other", "tv_c", 2, 2, 2);
	topview__set_group(tv, TOPVIEW_GROUP_NONE);
	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	expect("none", r, n, 0, "-", "tv_c", 14, 14, 14);
	expect("none", r, n, 0, "-", "tv_a", 0, 23, 0);
	expect("none", r, n, 0, "-", "tv_hot", 8, 10, 8);
	report(n == 7, "none rows", "%d rows, want 7", n);
	topview__set_group(tv, TOPVIEW_GROUP_PID);
	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	expect("regrouped", r, n, p1, "tvtest", "tv_a", 0, 16, 0);
	expect("regrouped", r, n, p2, "tvtest", "tv_c", 5, 5, 5);
}

/* The tree as "depth:name:weight" items, for one comparison. */
static void tree_str(const struct topview_node *nodes, int n, char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%d:%s:%g", i ? " " : "", nodes[i].depth,
				nodes[i].sym->name, nodes[i].weight);
}

static void test_trees(struct topview *tv, uint32_t p1)
{
	const struct topview_row *const *r;
	const struct topview_node *nodes;
	struct topview_filter hk = { .hide_kernel = true };
	const struct topview_row *a, *hot;
	char got[1024];
	int n;

	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	a = find(r, n, p1, NULL, "tv_a");
	hot = find(r, n, p1, NULL, "tv_hot");
	if (!a || !hot) {
		report(false, "trees", "rows missing");
		return;
	}
	/*
	 * Callees of tv_a from its outermost frame:
	 * b(9) > hot(9) > entry(2) > syscall(2), a(4) > c(4), c(3).
	 */
	n = topview__tree(tv, a->id, TOPVIEW_CALLEES, NULL, 0, 0, &nodes);
	tree_str(nodes, n, got, sizeof(got));
	report(!strcmp(got, "1:tv_b:9 2:tv_hot:9 3:fake_entry:2 4:fake_syscall:2 1:tv_a:4 2:tv_c:4 "
			    "1:tv_c:3"),
	       "callees", "got %s", got);
	n = topview__tree(tv, a->id, TOPVIEW_CALLEES, &hk, 0, 0, &nodes);
	tree_str(nodes, n, got, sizeof(got));
	report(!strcmp(got, "1:tv_b:9 2:tv_hot:9 1:tv_a:4 2:tv_c:4 1:tv_c:3"), "callees -K",
	       "got %s", got);
	/* Pruned below 20% of tv_a's 16: only b(9)>hot(9) and a(4)>c(4) stay. */
	n = topview__tree(tv, a->id, TOPVIEW_CALLEES, &hk, 0.2, 0, &nodes);
	tree_str(nodes, n, got, sizeof(got));
	report(!strcmp(got, "1:tv_b:9 2:tv_hot:9 1:tv_a:4 2:tv_c:4"), "callees pruned", "got %s",
	       got);
	/* Callers of tv_hot: b(10) > a(9) > main(9), and b > [truncated](1). */
	n = topview__tree(tv, hot->id, TOPVIEW_CALLERS, NULL, 0, 0, &nodes);
	tree_str(nodes, n, got, sizeof(got));
	report(!strcmp(got, "1:tv_b:10 2:tv_a:9 3:main:9 2:[truncated]:1"), "callers", "got %s",
	       got);
	/* hot calls only kernel functions: hidden, nothing is left. */
	n = topview__tree(tv, hot->id, TOPVIEW_CALLEES, &hk, 0, 0, &nodes);
	report(n == 0, "empty tree", "%d nodes", n);
	n = topview__tree(tv, hot->id, TOPVIEW_CALLERS, NULL, 0, 2, &nodes);
	report(n == 2, "tree max nodes", "%d nodes", n);
	report(topview__tree(tv, 99999, TOPVIEW_CALLERS, NULL, 0, 0, &nodes) == -ENOENT,
	       "tree bad id", "%s", "");
}

static char *label(char *buf, enum topview_counts c, const char *what)
{
	snprintf(buf, 64, "mode %s %s", topview_counts_name(c), what);
	return buf;
}

/* Decaying, interval and cumulative counts over two updates, and zeroing. */
static void test_modes(struct symbolizer *sym, struct ksyms *ks, uint32_t p1, uint32_t p2,
		       uint32_t p3)
{
	static const struct {
		enum topview_counts counts;
		double hot_self, hot_total; /* after part 1 then part 2 */
		uint64_t samples;
	} cases[] = {
		/* part 1: hot self 7, total 9; part 2 adds self 1, total 1. */
		{ TOPVIEW_CUMULATIVE, 8, 10, 8 },
		{ TOPVIEW_INTERVAL, 1, 1, 1 },
		{ TOPVIEW_DECAY, 7 * 0.875 + 1, 9 * 0.875 + 1, 8 },
	};
	const struct topview_row *const *r;
	struct topview_totals t;
	size_t i;
	int n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct topview_opts o = { .counts = cases[i].counts };
		struct aggregator *a = aggregator__new();
		struct topview *tv = topview__new(&o, sym, ks);
		char name[64];

		snprintf(name, sizeof(name), "mode %s", topview_counts_name(cases[i].counts));
		feed(a, p1, p2, p3, 1);
		topview__update(tv, a);
		feed(a, p1, p2, p3, 2);
		topview__update(tv, a);
		n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
		expect(name, r, n, p1, "tvtest", "tv_hot", cases[i].hot_self, cases[i].hot_total,
		       cases[i].samples);
		topview__zero(tv);
		topview__totals(tv, &t);
		n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
		report(n == 0 && t.samples == 0 && t.weight == 0,
		       label(name, cases[i].counts, "zero"), "after zeroing: %d rows", n);
		/* Nothing new: the same stacks are not counted twice. */
		topview__set_counts(tv, TOPVIEW_CUMULATIVE);
		topview__update(tv, a);
		topview__totals(tv, &t);
		report(t.samples == 0 && t.stacks == 7, label(name, cases[i].counts, "no recount"),
		       "recounted %" PRIu64 " samples", t.samples);
		/* A reset aggregator starts over. */
		aggregator__reset(a);
		feed(a, p1, p2, p3, 1);
		topview__update(tv, a);
		topview__totals(tv, &t);
		report(t.samples == 12 && t.stacks == 3, label(name, cases[i].counts, "reset"),
		       "after reset: %" PRIu64 " samples", t.samples);
		topview__free(tv);
		aggregator__free(a);
	}
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 100k distinct 20-frame stacks; then a refresh after 1000 of them grew. */
static void test_scale(struct symbolizer *sym, uint32_t p1)
{
	const uint64_t fns[] = { U(tv_a), U(tv_b), U(tv_c), U(tv_hot), U(main) };
	struct aggregator *a = aggregator__new();
	struct topview *tv = topview__new(NULL, sym, NULL);
	const struct topview_row *const *r;
	uint64_t ips[20], x = 0x9e3779b97f4a7c15ULL, seed;
	struct topview_totals t;
	double t0, t1, t2;
	int i, j, n;

	for (i = 0; i < 100000; i++) {
		for (j = 0; j < 20; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			ips[j] = fns[x % 5] + 1 + (x >> 8) % 4;
		}
		if (i == 999)
			seed = x;
		add(a, p1, "scale", SFBPF_STOP_OUTERMOST, ips, 20, NULL, 0, 1);
	}
	t0 = cpu_now();
	topview__update(tv, a);
	t1 = cpu_now();
	/* The first 1000 stacks again. */
	x = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < 1000; i++) {
		for (j = 0; j < 20; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			ips[j] = fns[x % 5] + 1 + (x >> 8) % 4;
		}
		add(a, p1, "scale", SFBPF_STOP_OUTERMOST, ips, 20, NULL, 0, 1);
	}
	(void)seed;
	t2 = cpu_now();
	topview__update(tv, a);
	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	t2 = cpu_now() - t2;
	topview__totals(tv, &t);
	printf("# 100k stacks: first update %.3fs CPU, refresh after 1000 grew %.4fs (%d rows)\n",
	       t1 - t0, t2, n);
	/* The times are shown, not judged: what a refresh costs is make bench's (liveview). */
	report(t.stacks == 100000 && t.samples == 101000 && n > 0, "scale counts",
	       "stacks %" PRIu64 " samples %" PRIu64 " rows %d", t.stacks, t.samples, n);
	topview__free(tv);
	aggregator__free(a);
}

/*
 * Frames of two runtimes with the same qualname, file and lines
 * (frame_names.h): two ids, two rows, each in its runtime's module; a Java
 * frame never shows as Python's.
 */
static void test_runtimes(struct symbolizer *sym, uint32_t p1)
{
	uint64_t py = frame_names__intern("python", "Work.run", "Work.java", 3, 7),
		 jv = frame_names__intern("java", "Work.run", "Work.java", 3, 7);
	uint64_t s1[] = { frame_names__ip(py), U(main) + 1 },
		 s2[] = { frame_names__ip(jv), U(main) + 1 };
	struct aggregator *a = aggregator__new();
	struct topview *tv = topview__new(NULL, sym, NULL);
	const struct topview_row *const *r;
	int i, n, seen = 0;

	add(a, p1, "rt", SFBPF_STOP_OUTERMOST, s1, 2, NULL, 0, 3);
	add(a, p1, "rt", SFBPF_STOP_OUTERMOST, s2, 2, NULL, 0, 5);
	topview__update(tv, a);
	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	for (i = 0; i < n; i++) {
		if (strcmp(r[i]->sym->name, "Work.run (Work.java:7)"))
			continue;
		if (!strcmp(r[i]->sym->module, "python") && r[i]->samples == 3)
			seen |= 1;
		else if (!strcmp(r[i]->sym->module, "java") && r[i]->samples == 5)
			seen |= 2;
		else
			seen |= 4;
	}
	report(py && jv && py != jv && seen == 3, "runtime modules",
	       "ids %" PRIu64 " and %" PRIu64 ", rows seen %d (1: python's, 2: java's, 4: other)",
	       py, jv, seen);
	topview__free(tv);
	aggregator__free(a);
}

/* Samples per pid in the rows (each sample is one row's: its leaf's). */
static uint64_t pid_samples(struct topview *tv, uint32_t pid)
{
	const struct topview_row *const *r;
	uint64_t sum = 0;
	int i, n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);

	for (i = 0; i < n; i++)
		if (r[i]->pid == pid)
			sum += r[i]->samples;
	return sum;
}

/*
 * A 4 MiB stack budget (the least) and 150k distinct stacks of two processes:
 * evicted stacks leave their samples to their process's [truncated] row.
 * Every sample counts once, in the totals and in its process, in every mode
 * (interval: summed over the updates).
 */
static void test_evictions(struct symbolizer *sym, uint32_t p1, uint32_t p2)
{
	static const enum topview_counts modes[] = { TOPVIEW_CUMULATIVE, TOPVIEW_INTERVAL,
						     TOPVIEW_DECAY };
	const uint64_t fns[] = { U(tv_a), U(tv_b), U(tv_c), U(tv_hot), U(main) };
	uint64_t ips[20], x, fed[2], got[2], total;
	struct topview_totals t;
	struct aggr_totals at;
	char name[64];
	size_t m;
	int i, j;

	for (m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct topview_opts o = { .counts = modes[m], .group = TOPVIEW_GROUP_PID };
		struct aggregator *a = aggregator__new();
		struct topview *tv = topview__new(&o, sym, NULL);
		bool interval = modes[m] == TOPVIEW_INTERVAL;

		aggregator__set_budget(a, 4ull << 20);
		x = 0x9e3779b97f4a7c15ULL;
		fed[0] = fed[1] = got[0] = got[1] = total = 0;
		for (i = 0; i < 150000; i++) {
			for (j = 0; j < 20; j++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				ips[j] = fns[x % 5] + 1 + (x >> 8) % 4;
			}
			/* 1 to 3 samples, of either process. */
			add(a, i % 2 ? p2 : p1, "evict", SFBPF_STOP_OUTERMOST, ips, 20, NULL, 0,
			    1 + i % 3);
			fed[i % 2] += 1 + i % 3;
			if (i % 5000 != 4999)
				continue;
			topview__update(tv, a);
			if (interval) {
				topview__totals(tv, &t);
				total += t.samples;
				got[0] += pid_samples(tv, p1);
				got[1] += pid_samples(tv, p2);
			}
		}
		if (!interval) {
			topview__totals(tv, &t);
			total = t.samples;
			got[0] = pid_samples(tv, p1);
			got[1] = pid_samples(tv, p2);
		}
		aggregator__totals(a, &at);
		snprintf(name, sizeof(name), "evictions %s", topview_counts_name(modes[m]));
		report(at.evicted >= 10000 && !at.refused && at.samples == fed[0] + fed[1], name,
		       "%" PRIu64 " stacks evicted (want >= 10000), %" PRIu64 " refused, %" PRIu64
		       " samples of %" PRIu64,
		       at.evicted, at.refused, at.samples, fed[0] + fed[1]);
		report(total == fed[0] + fed[1] && got[0] == fed[0] && got[1] == fed[1],
		       label(name, modes[m], "counted once"),
		       "totals %" PRIu64 ", processes %" PRIu64 " %" PRIu64 ", want %" PRIu64
		       " %" PRIu64 " %" PRIu64,
		       total, got[0], got[1], fed[0] + fed[1], fed[0], fed[1]);
		topview__free(tv);
		aggregator__free(a);
	}
}

static int run_synthetic(const char *kallsyms)
{
	struct symbolizer *sym = symbolizer__new();
	struct ksyms *ks = ksyms__new_from_file(kallsyms);
	struct aggregator *a = aggregator__new();
	struct topview *tv =
		topview__new(&(struct topview_opts){ .counts = TOPVIEW_CUMULATIVE }, sym, ks);
	uint32_t p1 = getpid();
	pid_t p2 = spawn_sleeper(), p3 = spawn_sleeper();

	if (!sym || !ks || !a || !tv || p2 < 0 || p3 < 0) {
		report(false, "setup", "%s", strerror(errno));
		return 1;
	}
	tv_a(1);
	/* In two parts: the second update only adds. */
	feed(a, p1, p2, p3, 1);
	topview__update(tv, a);
	feed(a, p1, p2, p3, 2);
	topview__update(tv, a);
	test_counts(tv, p1, p2, p3);
	test_filters(tv, p1, p2);
	test_groups(tv, p1, p2);
	test_trees(tv, p1);
	test_modes(sym, ks, p1, p2, p3);
	test_scale(sym, p1);
	test_runtimes(sym, p1);
	test_evictions(sym, p1, p2);
	kill(p2, SIGKILL);
	kill(p3, SIGKILL);
	waitpid(p2, NULL, 0);
	waitpid(p3, NULL, 0);
	topview__free(tv);
	aggregator__free(a);
	ksyms__free(ks);
	symbolizer__free(sym);
	return 0;
}

/* ---- a real fixture (root) ---- */

static bool frame_is(struct symbolizer *sym, uint32_t pid, uint64_t addr, const char *name)
{
	struct sym_info si = {};

	return !symbolizer__user(sym, pid, addr, &si) && si.name && !strcmp(si.name, name);
}

struct find_ctx {
	struct symbolizer *sym;
	const struct aggr_stack *found;
};

/* A stack of the chain fixture: main;a;b;hot with no kernel frames. */
static int find_chain(const struct aggr_stack *st, void *arg)
{
	struct find_ctx *c = arg;

	if (st->nr_kernel || st->nr_user < 4 || !frame_is(c->sym, st->pid, st->ips[0], "hot") ||
	    !frame_is(c->sym, st->pid, st->ips[1] - 1, "b") ||
	    !frame_is(c->sym, st->pid, st->ips[2] - 1, "a") ||
	    !frame_is(c->sym, st->pid, st->ips[3] - 1, "main"))
		return 0;
	c->found = st;
	return 1;
}

/* N x the real main;a;b;hot, M x the same without its leaf (main;a;b). */
static void test_real_stack(struct session *s)
{
	struct find_ctx c = { session__symbolizer(s), NULL };
	const int N = 11, M = 5;
	struct aggregator *a;
	struct topview *tv;
	const struct topview_row *const *r;
	const struct aggr_stack *st;
	uint32_t pid;
	int n;

	aggregator__for_each(session__aggregator(s), find_chain, &c);
	st = c.found;
	if (!st) {
		report(false, "fixture stack", "no main;a;b;hot stack in the samples");
		return;
	}
	pid = st->pid;
	if (!frame_is(session__symbolizer(s), pid, st->ips[1], "b")) {
		printf("SKIP: topview fixture stack: b's return address is not in b\n");
		return;
	}
	a = aggregator__new();
	tv = topview__new(&(struct topview_opts){ .counts = TOPVIEW_CUMULATIVE },
			  session__symbolizer(s), session__ksyms(s));
	add(a, pid, st->comm, st->truncated ? SFBPF_STOP_FP_CHAIN : SFBPF_STOP_OUTERMOST, st->ips,
	    st->nr_user, NULL, 0, N);
	add(a, pid, st->comm, st->truncated ? SFBPF_STOP_FP_CHAIN : SFBPF_STOP_OUTERMOST,
	    st->ips + 1, st->nr_user - 1, NULL, 0, M);
	topview__update(tv, a);
	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	expect("fixture", r, n, pid, NULL, "hot", N, N, N);
	expect("fixture", r, n, pid, NULL, "b", M, N + M, M);
	expect("fixture", r, n, pid, NULL, "a", 0, N + M, 0);
	expect("fixture", r, n, pid, NULL, "main", 0, N + M, 0);
	topview__free(tv);
	aggregator__free(a);
}

#define MAX_KEYS 512
#define MAX_FRAMES (SFBPF_MAX_FRAMES + SFBPF_MAX_KFRAMES + 2)

struct fkey {
	char comm[32], name[256];
	bool kernel;
	double self, total;
};

static struct fkey *fkey_get(struct fkey *keys, int *n, const char *comm, const char *frame)
{
	size_t len = strlen(frame);
	bool kernel = len > 4 && !strcmp(frame + len - 4, "_[k]");
	struct fkey k = { .kernel = kernel };
	int i;

	snprintf(k.comm, sizeof(k.comm), "%s", comm);
	snprintf(k.name, sizeof(k.name), "%.*s", (int)(kernel ? len - 4 : len), frame);
	for (i = 0; i < *n; i++)
		if (!strcmp(keys[i].comm, k.comm) && !strcmp(keys[i].name, k.name) &&
		    keys[i].kernel == k.kernel)
			return &keys[i];
	if (*n == MAX_KEYS)
		return NULL;
	keys[*n] = k;
	return &keys[(*n)++];
}

/* Self and Total per (comm, frame) counted from folded lines. */
static int count_folded(char *text, struct fkey *keys)
{
	char *line, *save = NULL, *frames[MAX_FRAMES];
	int n = 0, nf, i, j;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *tok, *s2 = NULL;
		double count;

		if (!sp)
			continue;
		*sp = '\0';
		count = strtod(sp + 1, NULL);
		nf = 0;
		for (tok = strtok_r(line, ";", &s2); tok && nf < MAX_FRAMES;
		     tok = strtok_r(NULL, ";", &s2))
			if (strcmp(tok, "[truncated]") || nf == 0)
				frames[nf++] = tok;
		if (nf < 2)
			continue;
		fkey_get(keys, &n, frames[0], frames[nf - 1])->self += count;
		for (i = 1; i < nf; i++) {
			for (j = 1; j < i && strcmp(frames[j], frames[i]); j++)
				;
			if (j == i)
				fkey_get(keys, &n, frames[0], frames[i])->total += count;
		}
	}
	return n;
}

/* The model of the whole run against the folded writer's lines. */
static void test_against_folded(struct session *s)
{
	struct topview *tv = topview__new(
		&(struct topview_opts){ .counts = TOPVIEW_CUMULATIVE, .group = TOPVIEW_GROUP_COMM },
		session__symbolizer(s), session__ksyms(s));
	static struct fkey keys[MAX_KEYS];
	const struct topview_row *const *r;
	const struct topview_row *row;
	struct topview_totals t;
	struct snapshot *snap;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int nk, n, i, bad = 0;

	snap = session__snapshot(s);
	if (snap)
		folded__write_file(snap, NULL, f);
	snapshot__free(snap);
	fclose(f);
	nk = count_folded(text, keys);
	topview__update(tv, session__aggregator(s));
	topview__totals(tv, &t);
	n = topview__select(tv, TOPVIEW_SORT_SELF, NULL, &r);
	for (i = 0; i < nk; i++) {
		int j;

		for (j = 0, row = NULL; j < n && !row; j++)
			if (!strcmp(r[j]->comm, keys[i].comm) &&
			    !strcmp(r[j]->sym->name, keys[i].name) &&
			    r[j]->sym->kernel == keys[i].kernel)
				row = r[j];
		if (!row || row->self != keys[i].self || row->total != keys[i].total) {
			if (!bad++)
				printf("# %s %s%s: folded self %g total %g, model %g %g\n",
				       keys[i].comm, keys[i].name, keys[i].kernel ? " [k]" : "",
				       keys[i].self, keys[i].total, row ? row->self : -1,
				       row ? row->total : -1);
		}
	}
	report(!bad && n == nk && nk > 0, "fixture vs folded", "%d of %d frames differ, %d rows",
	       bad, nk, n);
	row = n ? r[0] : NULL;
	report(row && !strcmp(row->sym->name, "hot") && row->self > 0.5 * t.weight,
	       "fixture hot on top", "top row %s %.0f of %.0f", row ? row->sym->name : "none",
	       row ? row->self : 0, t.weight);
	printf("# fixture: %" PRIu64 " samples, %" PRIu64 " stacks, %d rows\n", t.samples, t.stacks,
	       n);
	free(text);
	topview__free(tv);
}

static void run_fixture(const char *path)
{
	struct session *s = NULL;
	struct session_opts o = {
		.nr_pids = 1, .freq = 499, .user_stacks = true, .kernel_stacks = true
	};
	pid_t pid;
	double end;

	if (geteuid() != 0) {
		printf("SKIP: topview fixture: needs root to load the BPF program\n");
		return;
	}
	pid = fork();
	if (pid == 0) {
		execl(path, path, "10", (char *)NULL);
		_exit(127);
	}
	usleep(300000);
	o.pids[0] = pid;
	if (session__open(&s, &o)) {
		report(false, "fixture session", "cannot profile %s", path);
		goto out;
	}
	for (end = clock__mono_s() + 1.5; clock__mono_s() < end;)
		session__poll(s, 100);
	session__stop(s);
	test_real_stack(s);
	test_against_folded(s);
out:
	session__close(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(int argc, char **argv)
{
	char kallsyms[] = "/tmp/topview-kallsyms.XXXXXX";
	int fd = mkstemp(kallsyms);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	sample = calloc(1, sizeof(*sample));
	if (!f || !sample) {
		report(false, "setup", "%s", strerror(errno));
		return 1;
	}
	fprintf(f, "%llx T _stext\n%llx T fake_entry\n%llx T fake_syscall\n%llx T fake_end\n",
		KBASE, KBASE + 0x1000, KBASE + 0x2000, KBASE + 0x3000);
	fclose(f);
	run_synthetic(kallsyms);
	unlink(kallsyms);
	if (argc > 1)
		run_fixture(argv[1]);
	free(sample);
	return failures ? 1 : 0;
}
