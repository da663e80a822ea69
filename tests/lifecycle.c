// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Drives a system-wide (or -p) CPU session through the session API, as
 * sfbpf-top would, for tests/lifecycle.test:
 *   - touches READY once sampling started (the tables of the processes found
 *     at start loaded), then runs for SECS seconds or until SIGINT/SIGTERM;
 *   - every STATS_EVERY seconds (-i), prints the counters to stderr;
 *   - at the end prints the counters ("sfbpf: stat NAME VALUE") on stdout,
 *     writes the folded stacks (-f) and the tracked PIDs (-P: one per line);
 *   - with -c COMM (repeatable), keeps every sample of those commands and
 *     writes them to the trace file (-t), one per line, symbolized at the end:
 *       T TIME_NS PID COMM STOP NR_USER CGROUP CHAIN
 *     CHAIN is the user stack outermost first, ';'-separated (frames without
 *     a symbol as [module] or [unknown]), CGROUP the sample's cgroup path
 *     ("-" if unknown).
 *
 * Usage: lifecycle [-d SECS] [-F HZ] [-m TABLE_MEM_BYTES] [-l LINGER_MS]
 *                  [-R MIN_RESIDENCY_MS] [-w TABLE_WAIT_MS] [-g CGROUP_DIR]
 *                  [-p PID] [-r READY] [-i STATS_EVERY] [-f FOLDED]
 *                  [-P PIDS_FILE] [-c COMM]... [-t TRACE] [-v]
 * The first tables are all waited for unless -w says otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/folded.h"
#include "profile/session.h"
#include "util/clock.h"
#include "util/log.h"

#define MAX_COMMS 8
#define MAX_TRACED 200000
#define TRACE_FRAMES 32

struct traced {
	uint64_t time_ns, cgroup_id;
	uint32_t pid;
	uint16_t nr_user;
	uint8_t stop, nr;
	char comm[SFBPF_TASK_COMM_LEN];
	uint64_t ips[TRACE_FRAMES];
};

static struct {
	const char *comms[MAX_COMMS];
	int nr_comms;
	struct traced *samples;
	uint32_t nr, dropped;
} trace;

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: lifecycle [-d SECS] [-F HZ] [-m TABLE_MEM] [-l LINGER_MS] "
			"[-R MIN_RESIDENCY_MS] [-w TABLE_WAIT_MS] [-g CGROUP] [-p PID] [-r READY] "
			"[-i STATS_EVERY] [-f FOLDED] [-P PIDS] [-c COMM]... [-t TRACE] [-v]\n");
	return 2;
}

static void tap(void *ctx, const struct sfbpf_sample *smp)
{
	struct traced *t;
	int i;

	(void)ctx;
	for (i = 0; i < trace.nr_comms; i++)
		if (!strncmp(smp->comm, trace.comms[i], SFBPF_TASK_COMM_LEN))
			break;
	if (i == trace.nr_comms)
		return;
	if (trace.nr >= MAX_TRACED) {
		trace.dropped++;
		return;
	}
	t = &trace.samples[trace.nr++];
	t->time_ns = smp->time_ns;
	t->cgroup_id = smp->cgroup_id;
	t->pid = smp->pid;
	t->nr_user = smp->nr_user;
	t->stop = smp->stop;
	t->nr = smp->nr_user < TRACE_FRAMES ? smp->nr_user : TRACE_FRAMES;
	memcpy(t->comm, smp->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = 0;
	memcpy(t->ips, smp->ips, t->nr * sizeof(t->ips[0]));
}

/* One frame as the folded writer names it: symbol, [module] or [unknown]. */
static void frame_name(struct session *s, const struct traced *t, int i, char *buf, size_t len)
{
	struct sym_info si;
	uint64_t addr = i ? t->ips[i] - 1 : t->ips[i];

	if (symbolizer__user_at(s->sym, t->pid, t->time_ns, addr, &si) || !si.mapped)
		snprintf(buf, len, "[unknown]");
	else if (si.name)
		snprintf(buf, len, "%s", si.name);
	else
		snprintf(buf, len, "[%s]", si.module ? si.module : "unknown");
}

static int write_trace(struct session *s, const char *path)
{
	FILE *f = fopen(path, "w");
	const char *cg;
	char name[256];
	uint32_t k;
	int i;

	if (!f)
		return -errno;
	for (k = 0; k < trace.nr; k++) {
		const struct traced *t = &trace.samples[k];

		cg = session__cgroup_path(s, t->cgroup_id);
		fprintf(f, "T %llu %u %s %s %u %s ", (unsigned long long)t->time_ns, t->pid, t->comm,
			profile__stop_name(t->stop), t->nr_user, cg ? cg : "-");
		for (i = t->nr - 1; i >= 0; i--) {
			frame_name(s, t, i, name, sizeof(name));
			fprintf(f, "%s%s", name, i ? ";" : "");
		}
		fputc('\n', f);
	}
	fprintf(f, "dropped %u\n", trace.dropped);
	return fclose(f) ? -errno : 0;
}

static int print_pid(void *ctx, int pid)
{
	fprintf(ctx, "%d\n", pid);
	return 0;
}

static int write_pids(struct session *s, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	proctrack__for_each(s->procs, print_pid, f);
	return fclose(f) ? -errno : 0;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

struct args {
	double secs, stats_every;
	const char *ready, *folded, *pids, *trace;
};

static int parse(int argc, char **argv, struct session_opts *o, struct args *a)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:F:m:l:R:w:g:p:r:i:f:P:c:t:v")) != -1) {
		switch (opt) {
		case 'd':
			a->secs = atof(optarg);
			break;
		case 'F':
			o->freq = strtoul(optarg, NULL, 10);
			break;
		case 'm':
			o->max_table_mem = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			o->linger_ms = strtoull(optarg, NULL, 0);
			break;
		case 'R':
			o->min_residency_ms = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			o->table_wait_ms = atoi(optarg);
			break;
		case 'g':
			o->cgroup = optarg;
			break;
		case 'p':
			if (o->nr_pids < SESSION_MAX_PIDS)
				o->pids[o->nr_pids++] = atoi(optarg);
			break;
		case 'r':
			a->ready = optarg;
			break;
		case 'i':
			a->stats_every = atof(optarg);
			break;
		case 'f':
			a->folded = optarg;
			break;
		case 'P':
			a->pids = optarg;
			break;
		case 'c':
			if (trace.nr_comms < MAX_COMMS)
				trace.comms[trace.nr_comms++] = optarg;
			break;
		case 't':
			a->trace = optarg;
			break;
		case 'v':
			log__init(log__level() + 1);
			break;
		default:
			return usage();
		}
	}
	return optind == argc ? 0 : usage();
}

static int run(struct session *s, const struct args *a)
{
	double end = a->secs > 0 ? clock__mono_s() + a->secs : 0, next_stats = 0, now;
	int err;

	while (!exiting && (!end || (now = clock__mono_s()) < end)) {
		err = session__poll(s, 50);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "lifecycle: poll: %s\n", strerror(-err));
			return err;
		}
		now = clock__mono_s();
		if (a->stats_every > 0 && now >= next_stats) {
			if (next_stats)
				session__print_stats(s, stderr);
			next_stats = now + a->stats_every;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct session sess;
	struct session_opts o = { .user_stacks = true, .kernel_stacks = true, .freq = 199,
				  .progress = true, .table_wait_ms = -1, .tap = tap };
	struct args a = { 0 };
	int err;

	err = parse(argc, argv, &o, &a);
	if (err)
		return err;
	trace.samples = calloc(MAX_TRACED, sizeof(*trace.samples));
	if (!trace.samples)
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	err = session__open(&sess, &o);
	if (err) {
		fprintf(stderr, "lifecycle: session__open: %s\n", strerror(-err));
		session__close(&sess);
		free(trace.samples);
		return 1;
	}
	if (a.ready)
		touch(a.ready);
	err = run(&sess, &a);
	session__stop(&sess);
	session__print_stats(&sess, stdout);
	if (!err && a.folded)
		err = folded__write(sess.agg, sess.sym, sess.ksyms, NULL, a.folded);
	if (!err && a.pids)
		err = write_pids(&sess, a.pids);
	if (!err && a.trace)
		err = write_trace(&sess, a.trace);
	if (err)
		fprintf(stderr, "lifecycle: writing the results: %s\n", strerror(-err));
	session__close(&sess);
	free(trace.samples);
	return err ? 1 : 0;
}
