// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output writers' test driver: writes the folded, pprof and SVG outputs of
 * one aggregator, so that tests/pprof.test and tests/svg.test can check them
 * against each other with independent readers (Go's pprof, Chromium).
 *
 *   outputs live OUTDIR SECONDS HZ PID[,PID...]
 *       profiles the processes with a real session (BPF, root) and writes
 *       OUTDIR/{folded.txt,profile.pb.gz,flame.svg,meta.txt}
 *   outputs synthetic OUTDIR
 *       synthetic samples with real addresses (this program's functions, a
 *       JIT region named by a perf map with hostile names, kernel symbols):
 *       OUTDIR/{folded.txt,profile.pb.gz,flame.svg,icicle.svg,
 *       folded-weight.txt,offcpu.pb.gz,meta.txt}, and in-process checks of the
 *       writers' error handling (PASS/FAIL lines)
 *   outputs stress OUTDIR
 *       200k distinct stacks through both writers: time and size (PASS/FAIL)
 *
 * meta.txt: "key value" lines (freq, period, duration_ns, time_ns, samples).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profile/snapshot.h"
#include "profile/aggregate.h"
#include "output/flamegraph.h"
#include "output/folded.h"
#include "symbols/ksyms.h"
#include "output/pprof.h"
#include "profile/session.h"
#include "symbols/symbolize.h"

#define TEST_PREFIX "outputs-"
#include "testlib.h"
#include "testsample.h"
#include "util/clock.h"

static char *path_in(const char *dir, const char *name)
{
	static char buf[8][4096];
	static int i;
	char *p = buf[i++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

/* The three writers over one aggregator; reports each. */
static void write_all(const char *dir, const struct aggregator *a, struct symbolizer *sym,
		      const struct ksyms *ks, const struct pprof_opts *po,
		      const struct flamegraph_opts *fo)
{
	struct snapshot *snap = snapshot__new(a, sym, ks);
	int err = snap ? 0 : -errno;

	report(snap, "snapshot", "%s", strerror(-err));
	if (!snap)
		return;
	err = folded__write(snap, NULL, path_in(dir, "folded.txt"));
	report(!err, "write-folded", "%s", strerror(-err));
	err = pprof__write(snap, po, path_in(dir, "profile.pb.gz"));
	report(!err, "write-pprof", "%s", strerror(-err));
	err = flamegraph__write_svg(snap, fo, path_in(dir, "flame.svg"));
	report(!err, "write-svg", "%s", strerror(-err));
	snapshot__free(snap);
}

static void write_meta(const char *dir, const struct pprof_opts *po, uint64_t samples)
{
	FILE *f = fopen(path_in(dir, "meta.txt"), "w");

	if (!f)
		return;
	fprintf(f,
		"freq %lu\nperiod %" PRId64 "\nduration_ns %" PRId64 "\ntime_ns %" PRId64
		"\nsamples %" PRIu64 "\n",
		po->freq, po->period ? po->period : (int64_t)(1000000000 / po->freq),
		po->duration_nanos, po->time_nanos, samples);
	fclose(f);
}

/* ---- live ------------------------------------------------------------------------- */

static int parse_pids(char *arg, struct session_opts *o)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(arg, ",", &save); tok && o->nr_pids < SESSION_MAX_PIDS;
	     tok = strtok_r(NULL, ",", &save))
		o->pids[o->nr_pids++] = atoi(tok);
	return o->nr_pids ? 0 : -EINVAL;
}

static int run_live(const char *dir, double secs, unsigned long hz, char *pids)
{
	struct session *s = NULL;
	struct session_opts so = { .freq = hz, .user_stacks = true, .kernel_stacks = true };
	struct flamegraph_opts fo = { .title = "CPU Flame Graph" };
	char subtitle[256];
	struct pprof_opts po = { .freq = hz, .comment = "sfbpf outputs test" };
	struct pprof_label labels[] = { { "service", "outputs-test" } };
	struct aggr_totals t;
	double end;
	int err;

	snprintf(subtitle, sizeof(subtitle), "sfbpf, %lu Hz, %.0f s, PIDs %s", hz, secs, pids);
	fo.subtitle = subtitle;
	if (parse_pids(pids, &so))
		return 2;
	po.time_nanos = clock__wall_ns();
	err = session__open(&s, &so);
	if (err) {
		report(false, "session", "session__open: %s", strerror(-err));
		session__close(s);
		return 1;
	}
	for (end = clock__mono_s() + secs; clock__mono_s() < end;)
		session__poll(s, 100);
	session__stop(s);
	po.duration_nanos = (int64_t)((clock__mono_s() - session__attach_time(s)) * 1e9);
	po.labels = labels;
	po.nr_labels = 1;
	aggregator__totals(session__aggregator(s), &t);
	report(t.samples > 0, "live-samples", "no samples");
	write_all(dir, session__aggregator(s), session__symbolizer(s), session__ksyms(s), &po, &fo);
	write_meta(dir, &po, t.samples);
	session__close(s);
	return failures != 0;
}

/* ---- synthetic -------------------------------------------------------------------- */

__attribute__((noipa)) int g_leaf(int x)
{
	return x * 7 + 1;
}

__attribute__((noipa)) static int g_mid(int x)
{
	return g_leaf(x) * 3 + 2;
}

__attribute__((noipa)) static int g_root(int x)
{
	return g_mid(x) * 5 + 3;
}

#define U(f) ((uint64_t)(uintptr_t)(f))

static struct sfbpf_sample *sample;

/* JIT code named by a perf map: names no format may choke on. */
static const char *const jit_names[] = {
	"jit<T>::run&go \"quoted\" 'single'",
	"semi;colon]]>cdata",
	"utf8 caf\xc3\xa9 \xe2\x86\x92 bad\xff\xfe byte",
	"tab\there",
};
#define NR_JIT (sizeof(jit_names) / sizeof(jit_names[0]))

static char perf_map[64];

static void *make_jit(void)
{
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FILE *f;
	size_t i;

	if (jit == MAP_FAILED)
		return NULL;
	snprintf(perf_map, sizeof(perf_map), "/tmp/perf-%d.map", getpid());
	f = fopen(perf_map, "w");
	for (i = 0; f && i < NR_JIT; i++)
		fprintf(f, "%" PRIx64 " 40 %s\n", U(jit) + i * 0x40, jit_names[i]);
	if (f)
		fclose(f);
	return jit;
}

static void synthetic_samples(struct aggregator *a, void *jit, uint64_t sched, uint64_t sys)
{
	uint32_t self = getpid();
	uint64_t u1[] = { U(g_leaf), U(g_mid) + 1, U(g_root) + 1 };
	uint64_t u2[] = { U(g_leaf), U(g_mid) + 1 };
	uint64_t u3[] = { 0x1000, U(g_root) + 1 };
	uint64_t u4[] = { U(jit) + 4, U(jit) + 0x41, U(jit) + 0x81, U(jit) + 0xc1, U(g_root) + 1 };
	uint64_t k1[] = { sched, sys + 1 };
	uint64_t k2[] = { 0x10, sched + 1 };

	test_sample_add(a, sample, self, "app", SFBPF_STOP_OUTERMOST, u1, 3, NULL, 0, 1, 40);
	test_sample_add(a, sample, self, "app", SFBPF_STOP_OUTERMOST, u1, 3, k1, 2, 1, 10);
	test_sample_add(a, sample, self, "app", SFBPF_STOP_DEPTH, u2, 2, NULL, 0, 1, 5);
	test_sample_add(a, sample, self, "app", SFBPF_STOP_NO_MAPPING, u3, 2, NULL, 0, 1, 3);
	test_sample_add(a, sample, self, "app", SFBPF_STOP_OUTERMOST, u4, 5, NULL, 0, 1, 7);
	test_sample_add(a, sample, self, "we<ird>&\"c", SFBPF_STOP_OUTERMOST, u1, 3, NULL, 0, 1, 2);
	test_sample_add(a, sample, 0, "swapper/1", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k1, 2, 1, 20);
	test_sample_add(a, sample, self, "app", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k2, 2, 1, 1);
	test_sample_add(a, sample, 1, "init", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k1, 2, 1, 12);
}

static uint64_t kernel_addr(const struct ksyms *ks, const char *name)
{
	const struct ksym *k = ks ? ksyms__get_by_name(ks, name) : NULL;

	return k ? k->addr : 0;
}

/* Error handling the tests cannot see from outside. */
static void check_errors(const struct snapshot *snap)
{
	struct pprof_opts no_period = { 0 };
	int err;

	err = pprof__write(snap, &no_period, "/dev/null");
	report(err == -EINVAL, "pprof-needs-period", "got %d", err);
	err = pprof__write(snap, &(struct pprof_opts){ .freq = 99 }, "/nonexistent/x");
	report(err == -ENOENT, "pprof-bad-path", "got %d", err);
	err = flamegraph__write_svg(snap, NULL, "/nonexistent/x");
	report(err == -ENOENT, "svg-bad-path", "got %d", err);
	err = pprof__write(snap, &(struct pprof_opts){ .freq = 99 }, "/dev/full");
	report(err == -ENOSPC, "pprof-disk-full", "got %d", err);
	err = flamegraph__write_svg(snap, NULL, "/dev/full");
	report(err == -ENOSPC, "svg-disk-full", "got %d", err);
}

/* Off-CPU: weighted samples, values from weights, type off_cpu. */
static void write_offcpu(const char *dir, struct symbolizer *sym, const struct ksyms *ks,
			 uint64_t sched)
{
	struct aggregator *a = aggregator__new();
	uint64_t u1[] = { U(g_leaf), U(g_mid) + 1, U(g_root) + 1 };
	uint64_t k[] = { sched };
	struct pprof_opts po = { .type = "off_cpu",
				 .value_from_weight = true,
				 .duration_nanos = 1000000000 };
	struct folded_opts fo = { .weight = true };
	struct snapshot *snap;
	int err;

	test_sample_add(a, sample, getpid(), "app", SFBPF_STOP_OUTERMOST, u1, 3, k, 1, 1500000, 3);
	test_sample_add(a, sample, getpid(), "app", SFBPF_STOP_OUTERMOST, u1, 3, k, 1, 250000, 2);
	test_sample_add(a, sample, getpid(), "app", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k, 1, 7000, 1);
	snap = snapshot__new(a, sym, ks);
	err = snap ? pprof__write(snap, &po, path_in(dir, "offcpu.pb.gz")) : -errno;
	report(!err, "write-offcpu", "%s", strerror(-err));
	err = snap ? folded__write(snap, &fo, path_in(dir, "folded-weight.txt")) : -errno;
	report(!err, "write-folded-weight", "%s", strerror(-err));
	snapshot__free(snap);
	aggregator__free(a);
}

static int run_synthetic(const char *dir)
{
	struct symbolizer *sym = symbolizer__new();
	struct ksyms *ks = ksyms__new();
	struct aggregator *a = aggregator__new();
	struct pprof_label labels[] = { { "hostname", "test-host" }, { "service", "svc<1>" } };
	struct pprof_opts po = { .freq = 99,
				 .duration_nanos = 2000000000,
				 .labels = labels,
				 .nr_labels = 2,
				 .comment = "synthetic" };
	struct flamegraph_opts fo = { .title = "Synthetic <flame> & graph", .subtitle = "x\"y" };
	struct aggr_totals t;
	uint64_t sched = kernel_addr(ks, "schedule"), sys = kernel_addr(ks, "do_syscall_64");
	void *jit = make_jit();
	struct snapshot *snap;
	int err;

	if (!sym || !ks || !a || !jit || !sched || !sys) {
		report(false, "synthetic-setup", "symbolizer, kallsyms (root?) or mmap failed");
		return 1;
	}
	g_root(1);
	po.time_nanos = clock__wall_ns() - po.duration_nanos;
	synthetic_samples(a, jit, sched, sys);
	aggregator__totals(a, &t);
	write_all(dir, a, sym, ks, &po, &fo);
	write_meta(dir, &po, t.samples);
	fo.inverted = true;
	snap = snapshot__new(a, sym, ks);
	err = snap ? flamegraph__write_svg(snap, &fo, path_in(dir, "icicle.svg")) : -errno;
	report(!err, "write-icicle", "%s", strerror(-err));
	if (snap)
		check_errors(snap);
	snapshot__free(snap);
	write_offcpu(dir, sym, ks, sched);
	aggregator__free(a);
	symbolizer__free(sym);
	ksyms__free(ks);
	unlink(perf_map);
	munmap(jit, 4096);
	return failures != 0;
}

/* ---- stress ----------------------------------------------------------------------- */

static double cpu_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

/*
 * 200k distinct stacks of 24 frames over a few thousand addresses of this
 * program (and unmapped ones): the writers must stay fast and their output
 * bounded (the SVG drops sub-pixel frames).
 */
static int run_stress(const char *dir)
{
	struct symbolizer *sym = symbolizer__new();
	struct aggregator *a = aggregator__new();
	uint64_t user[24], x = 0x9e3779b97f4a7c15ULL, base = U(g_leaf) & ~0xfffULL;
	struct pprof_opts po = { .freq = 99 };
	struct snapshot *snap = NULL;
	double t0, t1, t2, tf, ts;
	int i, j, err;

	for (i = 0; i < 200000; i++) {
		for (j = 0; j < 24; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			user[j] = (j % 3 ? base : 0x100000) + (x & 0x3fff);
		}
		test_sample_add(a, sample, getpid(), "stress", SFBPF_STOP_OUTERMOST, user, 24, NULL,
				0, 1, 1);
	}
	ts = cpu_secs();
	snap = snapshot__new(a, sym, NULL);
	err = snap ? 0 : -errno;
	tf = cpu_secs();
	err = err ? err : folded__write(snap, NULL, path_in(dir, "stress.folded"));
	t0 = cpu_secs();
	err = err ? err : pprof__write(snap, &po, path_in(dir, "stress.pb.gz"));
	t1 = cpu_secs();
	err = err ? err : flamegraph__write_svg(snap, NULL, path_in(dir, "stress.svg"));
	t2 = cpu_secs();
	snapshot__free(snap);
	printf("# stress: snapshot %.2fs, folded %.2fs, pprof %.2fs %ld bytes, svg %.2fs %ld "
	       "bytes\n",
	       tf - ts, t0 - tf, t1 - t0, file_size(path_in(dir, "stress.pb.gz")), t2 - t1,
	       file_size(path_in(dir, "stress.svg")));
	report(!err, "stress-write", "%s", strerror(-err));
	report(t1 - t0 < 20 && t2 - t1 < 20, "stress-time", "pprof %.1fs, svg %.1fs", t1 - t0,
	       t2 - t1);
	report(file_size(path_in(dir, "stress.svg")) < 20 << 20, "stress-svg-size", "%ld bytes",
	       file_size(path_in(dir, "stress.svg")));
	aggregator__free(a);
	symbolizer__free(sym);
	return failures != 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	sample = calloc(1, sizeof(*sample));
	if (!sample)
		return 1;
	if (argc == 6 && !strcmp(argv[1], "live"))
		ret = run_live(argv[2], atof(argv[3]), strtoul(argv[4], NULL, 10), argv[5]);
	else if (argc == 3 && !strcmp(argv[1], "synthetic"))
		ret = run_synthetic(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "stress"))
		ret = run_stress(argv[2]);
	else
		fprintf(stderr, "usage: outputs live DIR SECONDS HZ PID[,PID...] | synthetic DIR | "
				"stress DIR\n");
	free(sample);
	return ret;
}
