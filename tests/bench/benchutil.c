// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Small measuring tools for scripts/bench.sh, where the shell is too coarse:
 *
 *   benchutil run CMD [ARG...]
 *       Runs CMD (stdout to /dev/null) and prints "wall_s=W cpu_s=C": wall
 *       time and the CPU time of CMD and its children (user + system, which
 *       the kernel derives from its nanosecond runtime accounting).
 *   benchutil wait-attached PID N TIMEOUT_S
 *       Waits until process PID holds at least N perf_event fds (a profiler
 *       that opened its events on every CPU has started sampling) and prints
 *       "ready_us=T", T being CLOCK_REALTIME in microseconds (comparable with
 *       bash's $EPOCHREALTIME). Exits 1 if PID died or TIMEOUT_S passed.
 *   benchutil hold-stats
 *       Turns on the kernel's BPF run-time statistics (BPF_ENABLE_STATS) for as
 *       long as it runs (until killed), and says "stats on". Unlike the
 *       kernel.bpf_stats_enabled sysctl this cannot be left on by accident.
 *   benchutil corpus BYTES
 *       Writes BYTES of deterministic, compressible text to stdout: words from
 *       a fixed vocabulary with a skewed distribution, so compressors do
 *       representative work.
 */
#include <dirent.h>
#include <linux/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmd_run(char **argv)
{
	struct rusage ru;
	double t0, t1;
	int status, fd;
	pid_t pid;

	t0 = clock_s(CLOCK_MONOTONIC);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDOUT_FILENO);
		execvp(argv[0], argv);
		fprintf(stderr, "benchutil: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return 1;
	t1 = clock_s(CLOCK_MONOTONIC);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "benchutil: %s failed (status %d)\n", argv[0], status);
		return 1;
	}
	printf("wall_s=%.6f cpu_s=%.6f\n", t1 - t0,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		       ru.ru_stime.tv_usec / 1e6);
	return 0;
}

/* Counts PID's fds that are perf events; -1 if PID is gone. */
static int perf_fds(pid_t pid)
{
	char dir[64], path[320], target[64];
	struct dirent *de;
	int n = 0;
	ssize_t len;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (!strcmp(target, "anon_inode:[perf_event]"))
			n++;
	}
	closedir(d);
	return n;
}

static int cmd_wait_attached(pid_t pid, int want, double timeout)
{
	double end = clock_s(CLOCK_MONOTONIC) + timeout;
	int n;

	while (clock_s(CLOCK_MONOTONIC) < end) {
		n = perf_fds(pid);
		if (n < 0 || kill(pid, 0))
			break;
		if (n >= want) {
			printf("ready_us=%.0f\n", clock_s(CLOCK_REALTIME) * 1e6);
			return 0;
		}
		usleep(1000);
	}
	fprintf(stderr, "benchutil: process %d did not attach %d perf events\n", pid, want);
	return 1;
}

static int cmd_hold_stats(void)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	fd = syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr));
	if (fd < 0) {
		fprintf(stderr, "benchutil: BPF_ENABLE_STATS: %s\n", strerror(errno));
		return 1;
	}
	printf("stats on\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int cmd_corpus(unsigned long long bytes)
{
	static const char *const words[] = {
		"the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was",
		"with", "be", "by", "on", "not", "he", "this", "are", "or", "his", "from",
		"at", "which", "but", "have", "an", "had", "they", "you", "were", "their",
		"one", "all", "we", "can", "her", "has", "there", "been", "if", "more",
		"when", "will", "would", "who", "so", "no", "profile", "stack", "frame",
		"kernel", "sample", "unwind", "table", "section", "address", "function",
		"register", "pointer", "return", "call", "process", "thread", "memory",
		"interrupt", "counter", "buffer", "ring",
	};
	const uint64_t nw = sizeof(words) / sizeof(words[0]);
	uint64_t s = 0x243f6a8885a308d3ull, u;
	static char buf[1 << 16];
	size_t len = 0, wl, out;
	unsigned col = 0;
	const char *w;

	while (bytes) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		/* Squaring a uniform draw favours the first (common) words. */
		u = s & 0xffff;
		w = words[(u * u * nw) >> 32];
		wl = strlen(w);
		memcpy(buf + len, w, wl);
		len += wl;
		col += wl + 1;
		buf[len++] = col > 72 ? '\n' : ' ';
		if (col > 72)
			col = 0;
		if (len + 64 > sizeof(buf) || len >= bytes) {
			out = len < bytes ? len : bytes;
			if (fwrite(buf, 1, out, stdout) != out)
				return 1;
			bytes -= out;
			len = 0;
		}
	}
	return fflush(stdout) ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: benchutil run CMD [ARG...]\n"
			"       benchutil wait-attached PID N TIMEOUT_S\n"
			"       benchutil hold-stats\n"
			"       benchutil corpus BYTES\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "run"))
		return cmd_run(argv + 2);
	if (argc == 5 && !strcmp(argv[1], "wait-attached"))
		return cmd_wait_attached(atoi(argv[2]), atoi(argv[3]), atof(argv[4]));
	if (argc == 2 && !strcmp(argv[1], "hold-stats"))
		return cmd_hold_stats();
	if (argc == 3 && !strcmp(argv[1], "corpus"))
		return cmd_corpus(strtoull(argv[2], NULL, 10));
	return usage();
}
