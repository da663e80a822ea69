// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Drives an off-CPU session (the session API, as sfbpf-top would) against one
 * process or the whole system, for tests/offcpu.test:
 *   - runs until the process exits (or DURATION seconds elapse), after
 *     sending it SIGUSR1 once tracing started (-k: the fixture waits for it);
 *   - writes the folded stacks, weighted in microseconds (-f FILE);
 *   - prints the session's counters ("sfbpf: stat NAME VALUE", including
 *     offcpu_ns.STATE and window_ns) on stdout, then the end of the traced
 *     window (CLOCK_MONOTONIC), "end_ns N", and with -b the off-CPU
 *     program's run time from BPF statistics:
 *       bpf_run_cnt N
 *       bpf_run_time_ns N
 *
 * Usage: offcpu [-d SECS] [-m MIN_US] [-M MAX_US] [-s STATES] [-o] [-F HZ] [-k]
 *               [-f FOLDED] [-b] [-U|-K] [-v] [PID]
 *   -o  on+off: CPU samples too (at -F HZ, default 199), weighted by the period
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "profile/snapshot.h"
#include "output/folded.h"
#include "profile/session_int.h" /* white-box: its off-CPU program, the traced window */
#include "util/clock.h"
#include "util/log.h"

static int usage(void)
{
	fprintf(stderr, "usage: offcpu [-d SECS] [-m MIN_US] [-M MAX_US] [-s STATES] [-o] "
			"[-F HZ] [-k] [-f FOLDED] [-b] [-U|-K] [-v] [PID]\n");
	return 2;
}

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

/* True once the process is gone (a zombie counts: pidfds say so). */
static bool exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

static int print_run_stats(struct session *s)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(offcpu__prog_fd(s->off), &info, &len))
		return -errno;
	printf("bpf_run_cnt %llu\n", (unsigned long long)info.run_cnt);
	printf("bpf_run_time_ns %llu\n", (unsigned long long)info.run_time_ns);
	return 0;
}

int main(int argc, char **argv)
{
	struct session *sess = NULL;
	struct session_opts o = { .user_stacks = true, .kernel_stacks = true, .freq = 199 };
	struct folded_opts fopts = { .weight = true };
	const char *folded = NULL;
	double secs = 0, end;
	bool kick = false, bench = false;
	int c, err, pid = 0, pidfd = -1, stats_fd = -1;
	__u32 states;

	o.off_cpu = true;
	while ((c = getopt(argc, argv, "d:m:M:s:oF:kf:bUKv")) != -1) {
		switch (c) {
		case 'd':
			secs = strtod(optarg, NULL);
			break;
		case 'm':
			o.min_block_us = strtoull(optarg, NULL, 10);
			break;
		case 'M':
			o.max_block_us = strtoull(optarg, NULL, 10);
			break;
		case 's':
			if (offcpu__parse_states(optarg, &states))
				return usage();
			o.states = states;
			break;
		case 'o':
			o.on_off = true;
			break;
		case 'F':
			o.freq = strtoul(optarg, NULL, 10);
			break;
		case 'k':
			kick = true;
			break;
		case 'f':
			folded = optarg;
			break;
		case 'b':
			bench = true;
			break;
		case 'U':
			o.kernel_stacks = false;
			break;
		case 'K':
			o.user_stacks = false;
			break;
		case 'v':
			log__init(log__level() + 1);
			break;
		default:
			return usage();
		}
	}
	if (optind < argc) {
		pid = atoi(argv[optind]);
		if (pid <= 0)
			return usage();
		o.pids[0] = pid;
		o.nr_pids = 1;
		pidfd = syscall(SYS_pidfd_open, pid, 0);
		if (pidfd < 0) {
			fprintf(stderr, "offcpu: pidfd_open %d: %s\n", pid, strerror(errno));
			return 1;
		}
	}
	if (!pid && !secs)
		return usage();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (bench) {
		/* Run time and count per program, while this fd is open. */
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0)
			fprintf(stderr, "offcpu: BPF statistics: %s\n", strerror(errno));
	}

	err = session__open(&sess, &o);
	if (err)
		goto cleanup;
	fprintf(stderr, "offcpu: tracing\n");
	if (kick && kill(pid, SIGUSR1)) {
		err = -errno;
		fprintf(stderr, "offcpu: kill %d: %s\n", pid, strerror(errno));
		goto cleanup;
	}
	end = secs > 0 ? clock__mono_s() + secs : 0;
	while (!exiting && !exited(pidfd) && (!end || clock__mono_s() < end)) {
		err = session__poll(sess, 50);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "offcpu: reading samples: %s\n", strerror(-err));
			goto cleanup;
		}
	}
	err = 0;
	session__stop(sess);
	session__print_stats(sess, stdout);
	printf("end_ns %llu\n", (unsigned long long)sess->end_ns);
	session__print_offcpu_summary(sess, stderr);
	if (bench)
		print_run_stats(sess);
	if (folded) {
		struct snapshot *snap = session__snapshot(sess);

		err = snap ? folded__write(snap, &fopts, folded) : -errno;
		snapshot__free(snap);
	}
	if (err)
		fprintf(stderr, "offcpu: writing %s: %s\n", folded, strerror(-err));
cleanup:
	session__close(sess);
	if (pidfd >= 0)
		close(pidfd);
	if (stats_fd >= 0)
		close(stats_fd);
	return err ? 1 : 0;
}
