// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Aggregator + folded writer test: synthetic samples carrying real addresses
 * (functions of this very process, its read-only data and an anonymous
 * mapping; kernel functions read from /proc/kallsyms) go through the
 * aggregator and the folded writer, whose output must be exactly the expected
 * lines: order, merging, "[truncated]", "_[k]", sanitizing, counts.
 *
 *   folded OUTDIR     (writes OUTDIR/{folded,expected}*.txt for the log)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "profile/snapshot.h"
#include "profile/aggregate.h"
#include "output/folded.h"
#include "symbols/ksyms.h"
#include "symbols/symbolize.h"

#include "testlib.h"
#include "testsample.h"

/* Real functions of this process; noipa keeps their names and bodies intact. */
__attribute__((noipa)) int f_leaf(int x)
{
	return x * 7 + 1;
}

__attribute__((noipa)) static int f_mid(int x)
{
	return f_leaf(x) * 3 + 2;
}

__attribute__((noipa)) static int f_root(int x)
{
	return f_mid(x) * 5 + 3;
}

static const char rodata[64] = "read-only data of this executable";

#define U(f) ((uint64_t)(uintptr_t)(f))

/* Kernel text symbol from /proc/kallsyms, only if no alias shares its address. */
static uint64_t kallsyms_unique(const char *name)
{
	char line[512], sym[256], type;
	uint64_t addr, found = 0;
	int shared = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, sym) == 3 && !found &&
		    !strcmp(sym, name) && strchr("tT", type))
			found = addr;
	}
	if (f)
		rewind(f);
	while (found && f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c", &addr, &type) == 2 && addr == found &&
		    strchr("tTwW", type))
			shared++;
	}
	if (f)
		fclose(f);
	return shared == 1 ? found : 0;
}

static struct sfbpf_sample *sample;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n = f && buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;

	if (f)
		fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expected lines, sorted like the writer sorts them, written next to the output. */
static char *expected(const char *path, char **lines, int n)
{
	FILE *f = fopen(path, "w");
	int i;

	qsort(lines, n, sizeof(*lines), cmp_str);
	for (i = 0; f && i < n; i++)
		fprintf(f, "%s\n", lines[i]);
	if (f)
		fclose(f);
	return slurp(path);
}

static void compare(const char *name, const char *got_path, char *want)
{
	char *got = slurp(got_path);

	report(got && want && !strcmp(got, want), name, "output differs:\n%s--- want:\n%s",
	       got ? got : "", want ? want : "");
	free(got);
	free(want);
}

static int test_main(const char *dir, struct symbolizer *sym, struct ksyms *ks)
{
	uint64_t sched = kallsyms_unique("schedule"), sys = kallsyms_unique("do_syscall_64");
	uint32_t self = getpid();
	void *anon = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char out[512], exp[512], *lines[16], kline[256], pline1[64], pline2[64];
	struct folded_opts opts = { .pid = true };
	struct aggr_totals t;
	struct aggregator *a = aggregator__new();
	struct snapshot *snap;
	int n = 0;

	if (!sched || !sys) {
		printf("SKIP: folded: schedule or do_syscall_64 missing or aliased in kallsyms\n");
		return 0;
	}
	{
		/* User stacks leaf first; frames above the leaf hold return addresses. */
		uint64_t u1[] = { U(f_leaf), U(f_mid) + 1, U(f_root) + 1 };
		uint64_t u2[] = { U(f_leaf) + 1, U(f_mid) + 2, U(f_root) + 1 };
		uint64_t u3[] = { U(f_leaf), U(f_mid) + 1 };
		uint64_t u4[] = { 0x1000, U(f_root) + 1 };
		uint64_t u5[] = { U(anon) + 16, U(rodata) + 1 };
		uint64_t u6[] = { U(f_leaf), U(f_root) + 1 };
		uint64_t k1[] = { sched, sys + 1 };
		uint64_t k2[] = { sched + 2, sys + 1 };
		uint64_t k3[] = { 0x10, sched + 1 };
		uint64_t k4[] = { sched };

		test_sample_add(a, sample, self, "app", SFBPF_STOP_OUTERMOST, u1, 3, k1, 2, 1, 3);
		test_sample_add(a, sample, self, "app", SFBPF_STOP_OUTERMOST, u2, 3, k2, 2, 1, 2);
		lines[n++] = "app;f_root;f_mid;f_leaf;do_syscall_64_[k];schedule_[k] 5";
		test_sample_add(a, sample, self, "app", SFBPF_STOP_DEPTH, u3, 2, NULL, 0, 1, 1);
		lines[n++] = "app;[truncated];f_mid;f_leaf 1";
		test_sample_add(a, sample, 0, "swapper/0", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k1, 2,
				1, 4);
		test_sample_add(a, sample, 0, "swapper/1", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k1, 2,
				1, 1);
		lines[n++] = "swapper;do_syscall_64_[k];schedule_[k] 5";
		test_sample_add(a, sample, self, "app", SFBPF_STOP_NO_MAPPING, u4, 2, NULL, 0, 1,
				1);
		lines[n++] = "app;[truncated];f_root;[unknown] 1";
		test_sample_add(a, sample, self, "app", SFBPF_STOP_OUTERMOST, u5, 2, NULL, 0, 1, 1);
		lines[n++] = "app;[folded];[anon] 1";
		test_sample_add(a, sample, self, "a;b\nc", SFBPF_STOP_OUTERMOST, u6, 2, NULL, 0, 1,
				1);
		lines[n++] = "a:b_c;f_root;f_leaf 1";
		test_sample_add(a, sample, self, "app", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k3, 2, 1,
				1);
		lines[n++] = "app;schedule_[k];[unknown]_[k] 1";
		test_sample_add(a, sample, 1, "kw", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k4, 1, 1, 1);
		test_sample_add(a, sample, self, "kw", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k4, 1, 1,
				1);
		lines[n++] = "kw;schedule_[k] 2";
		test_sample_add(a, sample, self, "app", SFBPF_STOP_NO_PROC, NULL, 0, k4, 1, 1, 1);
		lines[n++] = "app;[truncated];schedule_[k] 1";
	}
	report(test_sample_add(a, sample, self, "bad", SFBPF_STOP_OUTERMOST, NULL,
			       SFBPF_MAX_FRAMES + 1, NULL, 0, 1, 1) == -EINVAL,
	       "reject-too-many-frames", "%s", "");
	report(aggregator__add_raw(a, sample, SFBPF_SAMPLE_HDR_SIZE - 1) == -EINVAL,
	       "reject-short-record", "%s", "");

	aggregator__totals(a, &t);
	report(t.samples == 18 && t.invalid == 2 && t.truncated == 3 && t.stacks == 12 &&
		       t.by_stop[SFBPF_STOP_OUTERMOST] == 7 &&
		       t.by_stop[SFBPF_STOP_KERNEL_ONLY] == 8 && t.by_stop[SFBPF_STOP_DEPTH] == 1 &&
		       t.by_stop[SFBPF_STOP_NO_PROC] == 1,
	       "totals",
	       "samples %" PRIu64 " invalid %" PRIu64 " truncated %" PRIu64 " stacks %" PRIu64,
	       t.samples, t.invalid, t.truncated, t.stacks);

	snprintf(out, sizeof(out), "%s/folded.txt", dir);
	snprintf(exp, sizeof(exp), "%s/expected.txt", dir);
	snap = snapshot__new(a, sym, ks);
	report(snap, "snapshot", "%s", strerror(errno));
	report(folded__write(snap, NULL, out) == 0, "write", "%s", "");
	compare("lines", out, expected(exp, lines, n));

	/* With pids: the kw lines split, swapper stays whole (both pid 0). */
	snprintf(kline, sizeof(kline), "swapper-0;do_syscall_64_[k];schedule_[k] 5");
	snprintf(pline1, sizeof(pline1), "kw-1;schedule_[k] 1");
	snprintf(pline2, sizeof(pline2), "kw-%u;schedule_[k] 1", self);
	snprintf(out, sizeof(out), "%s/folded-pid.txt", dir);
	snprintf(exp, sizeof(exp), "%s/expected-pid.txt", dir);
	report(folded__write(snap, &opts, out) == 0, "write-pid", "%s", "");
	{
		char *pl[] = { kline, pline1, pline2 };
		char *got = slurp(out);

		report(got && strstr(got, pl[0]) && strstr(got, pl[1]) && strstr(got, pl[2]),
		       "pid-in-comm", "%s", got ? got : "");
		free(got);
	}
	report(folded__write(snap, NULL, "/nonexistent/dir/x") == -ENOENT, "bad-path", "%s", "");
	snapshot__free(snap);

	/* Weights: summed per line. */
	aggregator__reset(a);
	aggregator__totals(a, &t);
	report(t.samples == 0 && t.stacks == 0, "reset", "%s", "");
	{
		uint64_t k[] = { sched };

		test_sample_add(a, sample, self, "w", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k, 1, 7, 1);
		test_sample_add(a, sample, self, "w", SFBPF_STOP_KERNEL_ONLY, NULL, 0, k, 1, 5, 1);
	}
	opts = (struct folded_opts){ .weight = true };
	snprintf(out, sizeof(out), "%s/folded-weight.txt", dir);
	snprintf(exp, sizeof(exp), "%s/expected-weight.txt", dir);
	snap = snapshot__new(a, sym, ks);
	folded__write(snap, &opts, out);
	snapshot__free(snap);
	lines[0] = "w;schedule_[k] 12";
	compare("weights", out, expected(exp, lines, 1));

	aggregator__free(a);
	munmap(anon, 4096);
	return 0;
}

struct stress_ctx {
	uint64_t stacks, samples, bad;
};

static int stress_cb(const struct aggr_stack *st, void *ctx)
{
	struct stress_ctx *c = ctx;

	c->stacks++;
	c->samples += st->count;
	c->bad += st->count != 2 || st->nr_user != 24;
	return 0;
}

/* Hundreds of thousands of distinct stacks: all kept apart, each counted right. */
static void test_stress(void)
{
	struct aggregator *a = aggregator__new();
	uint64_t user[24], x = 0x9e3779b97f4a7c15ULL;
	struct stress_ctx c = {};
	struct aggr_totals t;
	struct timespec t0, t1;
	int i, j, round;
	double secs;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (round = 0; round < 2; round++) {
		x = 0x9e3779b97f4a7c15ULL;
		for (i = 0; i < 300000; i++) {
			for (j = 0; j < 24; j++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				user[j] = 0x7f0000000000ULL + (x & 0xffffff);
			}
			test_sample_add(a, sample, 1000 + i % 7, "stress", SFBPF_STOP_OUTERMOST,
					user, 24, NULL, 0, 1, 1);
		}
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	aggregator__totals(a, &t);
	aggregator__for_each(a, stress_cb, &c);
	printf("# 600000 samples, 300000 distinct stacks: %.2fs CPU\n", secs);
	report(t.stacks == 300000 && c.stacks == 300000 && c.samples == 600000 && !c.bad,
	       "stress-300k-stacks",
	       "stacks %" PRIu64 "/%" PRIu64 " samples %" PRIu64 " bad %" PRIu64, t.stacks,
	       c.stacks, c.samples, c.bad);
	aggregator__free(a);
}

int main(int argc, char **argv)
{
	struct symbolizer *sym = symbolizer__new();
	struct ksyms *ks = ksyms__new();

	if (argc != 2)
		return 2;
	sample = calloc(1, sizeof(*sample));
	if (!sym || !ks || !sample) {
		report(false, "setup", "symbolizer %p ksyms %p: %s", (void *)sym, (void *)ks,
		       strerror(errno));
		return 1;
	}
	f_root(1);
	test_main(argv[1], sym, ks);
	test_stress();
	symbolizer__free(sym);
	ksyms__free(ks);
	free(sample);
	return failures != 0;
}
