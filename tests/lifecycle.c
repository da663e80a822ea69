// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Drives a system-wide (or -p) CPU session through the session API, as
 * sfbpf-top would, for tests/lifecycle.test:
 *   - touches READY once sampling started (the tables of the processes found
 *     at start loaded), then runs for SECS seconds or until SIGINT/SIGTERM;
 *   - every STATS_EVERY seconds (-i), prints the counters to stderr;
 *   - at the end prints the counters ("sfbpf: stat NAME VALUE") on stdout,
 *     writes the folded stacks (-f) and the tracked PIDs (-P: "PID alive|gone"
 *     per line, whether a process has the PID when it is written);
 *   - with -c COMM (repeatable), keeps every sample of those commands and
 *     writes them to the trace file (-t), one per line, symbolized at the end:
 *       T TIME_NS PID COMM STOP NR_USER CGROUP CHAIN
 *     CHAIN is the user stack outermost first, ';'-separated (frames without
 *     a symbol as [module] or [unknown]), CGROUP the sample's cgroup path
 *     ("-" if unknown);
 *   - with -k DIR, touches DIR/PID-START once a traced process has had
 *     MARK_AFTER complete samples (stopped at the outermost frame), START
 *     being its start time (/proc/PID/stat, field 22): a test runs a process
 *     until it was seen unwound, however busy the machine (a PID may be
 *     reused, a process's start time with it is not);
 *   - after the last read, prints unhandled_execs and unhandled_exits: the
 *     exec and exit events the BPF side had sent by then that the lifecycle
 *     had not received (every one sent must have been read: 0).
 *
 * Usage: lifecycle [-d SECS] [-F HZ] [-m TABLE_MEM_BYTES] [-l LINGER_MS]
 *                  [-R MIN_RESIDENCY_MS] [-w TABLE_WAIT_MS] [-g CGROUP_DIR]
 *                  [-p PID] [-r READY] [-i STATS_EVERY] [-f FOLDED]
 *                  [-P PIDS_FILE] [-c COMM]... [-t TRACE] [-k MARK_DIR] [-N] [-v]
 * -N: no partial tables (the sampled code's rows first) while a table builds.
 * SFBPF_TABLE_CACHE (a directory, or off) as sfbpf-top reads it: tests/run.sh
 * sets off, so that no test reads back a table another one built.
 * The first tables are all waited for unless -w says otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/snapshot.h"
#include "output/folded.h"
#include "profile/profile.h"
#include "profile/session_int.h" /* white-box: its symbolizer, tracker, programs */
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

#define MAX_COMMS 8
#define MAX_TRACED 200000
#define TRACE_FRAMES 32
#define MARK_AFTER 30 /* complete samples before a process's mark: what a check judges */

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

/* Complete samples per process (-k), a process being its PID and start time. */
struct marked {
	uint32_t pid, complete;
	uint64_t start;
};

static struct {
	const char *dir;
	struct marked *v;
	size_t nr, cap;
	struct hashmap map;
} marks;

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: lifecycle [-d SECS] [-F HZ] [-m TABLE_MEM] [-l LINGER_MS] "
		"[-R MIN_RESIDENCY_MS] [-w TABLE_WAIT_MS] [-g CGROUP] [-p PID] [-r READY] "
		"[-i STATS_EVERY] [-f FOLDED] [-P PIDS] [-c COMM]... [-t TRACE] [-k MARK_DIR] "
		"[-v]\n");
	return 2;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

/* A process's start time in clock ticks after boot (/proc/PID/stat field 22); 0: gone. */
static uint64_t start_ticks(uint32_t pid, const char *comm)
{
	char path[64], buf[1024], *p, *c;
	unsigned long long start = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* The command may hold spaces and parentheses: fields go on after the last ')'. */
	p = strrchr(buf, ')');
	c = strchr(buf, '(');
	/*
	 * Another program under this PID now (pid_reuse forks the next one
	 * with it at once): a late sample of the old one is not the new one's.
	 */
	if (comm && p && c &&
	    (p - c - 1 != (ssize_t)strnlen(comm, SFBPF_TASK_COMM_LEN) ||
	     strncmp(c + 1, comm, p - c - 1)))
		return 0;
	if (!p || sscanf(p + 2,
			 "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %*s %*s %llu",
			 &start) != 1)
		return 0;
	return start;
}

static bool marked_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct marked *k = key, *m = &marks.v[val];

	(void)ctx;
	return m->pid == k->pid && m->start == k->start;
}

/*
 * One more complete sample of pid: the MARK_AFTER-th is marked. The start
 * time is read when the sample is: a sample read after its process exited
 * finds none (and counts for nothing), and a PID reused within a sample's
 * read latency (50 ms) would need a whole round of the PID space, or the same
 * program again: a process of another comm under the PID (pid_reuse's next
 * fork) is not the sample's, and the sample counts for nothing.
 */
static void count_complete(uint32_t pid, const char *comm)
{
	struct marked key = { .pid = pid, .start = start_ticks(pid, comm) };
	uint32_t h = (uint32_t)hash__mix64(((uint64_t)pid << 40) ^ key.start);
	char path[PATH_MAX];
	int64_t id;

	if (!key.start)
		return;
	id = hashmap__find(&marks.map, h, marked_eq, NULL, &key);
	if (id < 0) {
		if (VEC_RESERVE(marks.v, marks.cap, marks.nr + 1, 64) ||
		    hashmap__add(&marks.map, h, marks.nr))
			return;
		id = (int64_t)marks.nr++;
		marks.v[id] = key;
	}
	if (++marks.v[id].complete != MARK_AFTER)
		return;
	snprintf(path, sizeof(path), "%s/%u-%llu", marks.dir, pid, (unsigned long long)key.start);
	touch(path);
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
	if (marks.dir && smp->stop == SFBPF_STOP_OUTERMOST)
		count_complete(smp->pid, smp->comm);
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
		fprintf(f, "T %llu %u %s %s %u %s ", (unsigned long long)t->time_ns, t->pid,
			t->comm, profile__stop_name(t->stop), t->nr_user, cg ? cg : "-");
		for (i = t->nr - 1; i >= 0; i--) {
			frame_name(s, t, i, name, sizeof(name));
			fprintf(f, "%s%s", name, i ? ";" : "");
		}
		fputc('\n', f);
	}
	fprintf(f, "dropped %u\n", trace.dropped);
	return fclose(f) ? -errno : 0;
}

/*
 * "PID alive" or "PID gone": a tracked PID may have been reused by a live
 * process since (the machine runs other work), which is rightly tracked; one
 * with no process, or a zombie, is a process whose exit was missed.
 */
static int print_pid(void *ctx, int pid)
{
	char path[64], buf[512], *p;
	bool alive = false;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = 0;
		p = strrchr(buf, ')');
		alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	}
	fprintf(ctx, "%d %s\n", pid, alive ? "alive" : "gone");
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

struct args {
	double secs, stats_every;
	const char *ready, *folded, *pids, *trace;
};

static int parse(int argc, char **argv, struct session_opts *o, struct args *a)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:F:m:l:R:w:g:p:r:i:f:P:c:t:k:Nv")) != -1) {
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
		case 'k':
			marks.dir = optarg;
			break;
		case 'N':
			o->no_partial_tables = true;
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

/*
 * Every exec and exit event the BPF side sent before a moment is received by
 * the lifecycle once the ring is read after it: the counters of sent events
 * are taken first, then the ring is read, then the received ones. (The
 * lifecycle programs stay attached after session__stop: events sent after
 * the first reading only add to the received side.)
 */
static void print_unhandled(struct session *s)
{
	struct session_stats before, after;
	uint64_t execs, exits;

	session__stats(s, &before);
	if (s->prof)
		profile__consume(s->prof);
	session__stats(s, &after);
	execs = before.bpf[SFBPF_STAT_EXECS];
	exits = before.bpf[SFBPF_STAT_EXITS];
	printf("sfbpf: stat unhandled_execs %llu\n",
	       (unsigned long long)(execs > after.lifecycle.exec_events ?
					    execs - after.lifecycle.exec_events :
					    0));
	printf("sfbpf: stat unhandled_exits %llu\n",
	       (unsigned long long)(exits > after.lifecycle.exit_events ?
					    exits - after.lifecycle.exit_events :
					    0));
}

int main(int argc, char **argv)
{
	struct session *sess = NULL;
	struct session_opts o = { .user_stacks = true,
				  .kernel_stacks = true,
				  .freq = 199,
				  .progress = true,
				  .table_wait_ms = -1,
				  .tap = tap };
	struct args a = { 0 };
	const char *cache;
	int err;

	err = parse(argc, argv, &o, &a);
	if (err)
		return err;
	cache = getenv("SFBPF_TABLE_CACHE");
	if (cache && !strcmp(cache, "off"))
		o.no_table_cache = true;
	else if (cache && *cache)
		o.table_cache = cache;
	trace.samples = calloc(MAX_TRACED, sizeof(*trace.samples));
	if (!trace.samples)
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	err = session__open(&sess, &o);
	if (err) {
		fprintf(stderr, "lifecycle: session__open: %s\n", strerror(-err));
		session__close(sess);
		free(trace.samples);
		return 1;
	}
	if (a.ready)
		touch(a.ready);
	err = run(sess, &a);
	session__stop(sess);
	session__print_stats(sess, stdout);
	print_unhandled(sess);
	if (!err && a.folded) {
		struct snapshot *snap = session__snapshot(sess);

		err = snap ? folded__write(snap, NULL, a.folded) : -errno;
		snapshot__free(snap);
	}
	if (!err && a.pids)
		err = write_pids(sess, a.pids);
	if (!err && a.trace)
		err = write_trace(sess, a.trace);
	if (err)
		fprintf(stderr, "lifecycle: writing the results: %s\n", strerror(-err));
	session__close(sess);
	free(trace.samples);
	hashmap__free(&marks.map);
	free(marks.v);
	return err ? 1 : 0;
}
