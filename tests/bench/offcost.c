// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Cost per context switch of the off-CPU program (bpf/offcpu.bpf.c, through
 * userspace/profile/offcpu.h), two ways at once:
 *   - the program's own run time per run (BPF_ENABLE_STATS: run_time_ns /
 *     run_cnt of the sched_switch program, which runs at every switch of the
 *     machine whether or not it records one);
 *   - what a context switch costs a program: two processes pinned to one CPU
 *     bounce a byte over a pair of pipes (every round is two switches), timed
 *     with the program detached and attached, alternately.
 * The pair's tables are loaded (this driver is built with SFrame), so each
 * switch-out unwinds a real user stack, and every period is emitted (no
 * minimum), the most expensive setting.
 *
 * Prints one line per repetition and setting:
 *   offcost rep=R attached=0|1 switches=N ns_per_switch=X runs=N run_ns=N \
 *           blocks=N emitted=N drops=N user_frames=N
 *
 * Usage: offcost [-r REPS] [-n ROUNDS]
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "profile/offcpu.h"
#include "profile/profile.h"
#include "procs/proctrack.h"
#include "maps/tables.h"

static int reps = 5;
static unsigned long rounds = 200000;
static unsigned long long received;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int on_record(void *ctx, const struct sfbpf_offcpu_sample *r, size_t size)
{
	(void)ctx;
	(void)r;
	(void)size;
	received++;
	return 0;
}

/* noinline: a few real frames for the unwinder above the blocking read. */
__attribute__((noinline)) static int bounce(int in, int out, unsigned long n, int first)
{
	unsigned long i;
	char c = 0;

	for (i = 0; i < n; i++) {
		if (first && write(out, &c, 1) != 1)
			return -1;
		if (read(in, &c, 1) != 1)
			return -1;
		if (!first && write(out, &c, 1) != 1)
			return -1;
	}
	return 0;
}

/* A child that waits for the go byte, bounces, and reports its time. */
static pid_t player(int cpu, int go, int in, int out, int first, int result)
{
	double t0, dt;
	pid_t pid;
	char c;

	pid = fork();
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (cpu >= 0)
		pin(cpu);
	if (read(go, &c, 1) != 1)
		_exit(1);
	t0 = now();
	if (bounce(in, out, rounds, first))
		_exit(1);
	dt = now() - t0;
	if (first && write(result, &dt, sizeof(dt)) != sizeof(dt))
		_exit(1);
	_exit(0);
}

struct snap {
	__u64 run_ns, runs;
	struct sfbpf_offcpu_stats st;
};

static int take(struct offcpu *o, struct snap *s)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(offcpu__prog_fd(o), &info, &len))
		return -errno;
	s->run_ns = info.run_time_ns;
	s->runs = info.run_cnt;
	return offcpu__stats(o, &s->st);
}

static int run_once(struct offcpu *o, struct proctrack *pt, int rep, bool attach, int cpu)
{
	int go[2], ab[2], ba[2], res[2], status = 0, err = -1;
	struct snap s0 = { 0 }, s1 = { 0 };
	pid_t a, b, w, a_pid;
	double dt = 0;
	char c[2] = { 1, 1 };

	if (pipe(go) || pipe(ab) || pipe(ba) || pipe(res))
		return -1;
	a = player(cpu, go[0], ba[0], ab[1], 1, res[1]);
	b = player(cpu, go[0], ab[0], ba[1], 0, res[1]);
	a_pid = a;
	if (a < 0 || b < 0)
		goto out;
	/* Both are blocked on the go pipe: their mappings are final. */
	usleep(20 * 1000);
	proctrack__refresh(pt, a);
	proctrack__refresh(pt, b);
	if (attach && offcpu__attach(o))
		goto out;
	if (take(o, &s0))
		goto out;
	if (write(go[1], c, 2) != 2)
		goto out;
	/* Read the records as they come: a full ring buffer would drop. */
	for (;;) {
		w = waitpid(a, &status, WNOHANG);
		if (w == a)
			break;
		if (w < 0)
			goto out;
		offcpu__poll(o, 10);
	}
	a = 0; /* reaped: its pid may be reused, never signal it */
	if (take(o, &s1))
		goto out;
	if (attach)
		offcpu__detach(o);
	offcpu__poll(o, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) ||
	    read(res[0], &dt, sizeof(dt)) != sizeof(dt))
		goto out;
	printf("offcost rep=%d attached=%d switches=%lu ns_per_switch=%.1f runs=%llu run_ns=%llu "
	       "blocks=%llu emitted=%llu drops=%llu user_frames=%llu\n",
	       rep, attach, 2 * rounds, dt * 1e9 / (2.0 * rounds),
	       (unsigned long long)(s1.runs - s0.runs), (unsigned long long)(s1.run_ns - s0.run_ns),
	       (unsigned long long)(s1.st.v[SFBPF_OFFCPU_STAT_BLOCKS] -
				    s0.st.v[SFBPF_OFFCPU_STAT_BLOCKS]),
	       (unsigned long long)(s1.st.unwind.v[SFBPF_STAT_EMITTED] -
				    s0.st.unwind.v[SFBPF_STAT_EMITTED]),
	       (unsigned long long)(s1.st.unwind.v[SFBPF_STAT_RB_DROPS] -
				    s0.st.unwind.v[SFBPF_STAT_RB_DROPS]),
	       (unsigned long long)(s1.st.unwind.v[SFBPF_STAT_FRAMES] -
				    s0.st.unwind.v[SFBPF_STAT_FRAMES]));
	fflush(stdout);
	err = 0;
out:
	if (attach)
		offcpu__detach(o);
	if (a > 0) {
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
	}
	if (a_pid > 0)
		proctrack__remove(pt, a_pid);
	if (b > 0) {
		kill(b, SIGKILL);
		waitpid(b, NULL, 0);
		proctrack__remove(pt, b);
	}
	close(go[0]), close(go[1]), close(ab[0]), close(ab[1]);
	close(ba[0]), close(ba[1]), close(res[0]), close(res[1]);
	return err;
}

int main(int argc, char **argv)
{
	struct offcpu_opts oopts = {
		.user_stacks = true,
		.kernel_stacks = true,
		.on_sample = on_record,
	};
	struct offcpu_shared_maps maps;
	struct tables_opts topts = {
		.max_rows = PROFILE_DEFAULT_ROWS,
		.max_rules = PROFILE_DEFAULT_RULES,
		.max_objects = PROFILE_DEFAULT_OBJECTS,
		.max_pages = PROFILE_DEFAULT_PAGES,
	};
	struct proctrack *pt = NULL;
	struct tables *t = NULL;
	struct offcpu *o = NULL;
	int opt, rep, k, ncpu, cpu, stats_fd, err = 0;

	while ((opt = getopt(argc, argv, "r:n:")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 'n':
			rounds = strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: offcost [-r REPS] [-n ROUNDS]\n");
			return 2;
		}
	}
	if (reps <= 0 || !rounds) {
		fprintf(stderr, "offcost: REPS and ROUNDS must be positive\n");
		return 2;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "offcost: BPF_ENABLE_STATS: %s (needs root)\n",
			strerror(-stats_fd));
		return 1;
	}
	o = offcpu__new(&oopts);
	if (!o) {
		fprintf(stderr, "offcost: cannot load the off-CPU program: %s\n", strerror(errno));
		err = 1;
		goto out;
	}
	offcpu__maps(o, &maps);
	topts.rows_fd = maps.rows;
	topts.rules_fd = maps.rules;
	topts.objects_fd = maps.objects;
	topts.pages_fd = maps.pages;
	t = tables__new(&topts);
	pt = t ? proctrack__new(t, maps.procs) : NULL;
	if (!pt) {
		err = 1;
		goto out;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (rep = 0; rep < reps && !err; rep++) {
		/* The pair on one CPU, this driver on another; alternate the order. */
		cpu = ncpu > 1 ? rep % ncpu : -1;
		if (cpu >= 0)
			pin((cpu + 1) % ncpu);
		for (k = 0; k < 2 && !err; k++)
			if (run_once(o, pt, rep, (k + rep) % 2, cpu))
				err = 1;
	}
out:
	proctrack__free(pt);
	tables__free(t);
	offcpu__free(o);
	close(stats_fd);
	return err;
}
