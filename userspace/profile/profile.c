// SPDX-License-Identifier: GPL-2.0-or-later
/* Lifecycle of the profiling BPF program: see profile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "procs/cgroups.h"
#include "profile/profile.h"
#include "profile.skel.h"

#define VERIFIER_LOG_SIZE (64u << 10)

#define DEFAULT_EVENT_RINGBUF (256u << 10)
/*
 * Samples (and exit events) wake the reader only once 1/WAKEUP_FRACTION of
 * their ring waits; below that mark, profile__poll() reads them after at most
 * POLL_LATENCY_MS. A wake-up per sample cost the reader a context switch per
 * sample.
 */
#define WAKEUP_FRACTION 16
#define POLL_LATENCY_MS 50

struct profile {
	struct profile_bpf *skel;
	struct ring_buffer *rb; /* samples and, with on_event, lifecycle events */
	struct bpf_link **links;
	int nr_links;
	int nr_cpus; /* possible CPUs: the size of per-CPU values and of links */
	profile_sample_fn on_sample;
	profile_event_fn on_event;
	void *ctx;
	char *log; /* verifier log (statistics only) when verbose >= 2 */
};

static const char *const stop_names[SFBPF_STOP__COUNT] = {
	[SFBPF_STOP_OUTERMOST] = "outermost",
	[SFBPF_STOP_NO_PROC] = "no-proc",
	[SFBPF_STOP_NO_MAPPING] = "no-mapping",
	[SFBPF_STOP_NO_ROW] = "no-row",
	[SFBPF_STOP_READ] = "read",
	[SFBPF_STOP_CFA_ORDER] = "cfa-order",
	[SFBPF_STOP_DEPTH] = "depth",
	[SFBPF_STOP_BAD_RULE] = "bad-rule",
	[SFBPF_STOP_FP_CHAIN] = "fp-chain",
	[SFBPF_STOP_KERNEL_ONLY] = "kernel-only",
	[SFBPF_STOP_UNSUPPORTED] = "unsupported",
};

static const char *const stat_names[SFBPF_STAT__COUNT] = {
	[SFBPF_STAT_SAMPLES] = "samples",
	[SFBPF_STAT_EMITTED] = "emitted",
	[SFBPF_STAT_RB_DROPS] = "ringbuf-drops",
	[SFBPF_STAT_FRAMES] = "frames",
	[SFBPF_STAT_FP_FRAMES] = "fp-frames",
	[SFBPF_STAT_STALE_PROC] = "stale-proc",
	[SFBPF_STAT_PENDING] = "table-pending",
	[SFBPF_STAT_NO_BUDGET] = "no-table-budget",
	[SFBPF_STAT_NOTIFY_SENT] = "notify-sent",
	[SFBPF_STAT_NOTIFY_LIMITED] = "notify-limited",
	[SFBPF_STAT_NOTIFY_DROPS] = "notify-drops",
	[SFBPF_STAT_EXECS] = "exec-events",
	[SFBPF_STAT_EXITS] = "exit-events",
	[SFBPF_STAT_EVENT_DROPS] = "event-drops",
};

const char *profile__stop_name(enum sfbpf_stop stop)
{
	return (unsigned int)stop < SFBPF_STOP__COUNT ? stop_names[stop] : "unknown";
}

const char *profile__stat_name(enum sfbpf_stat stat)
{
	static char buf[SFBPF_STOP__COUNT][32];
	unsigned int i = stat;

	if (i >= SFBPF_STAT__COUNT)
		return "unknown";
	if (i < SFBPF_STAT_STOP_BASE || i >= SFBPF_STAT_STOP_BASE + SFBPF_STOP__COUNT)
		return stat_names[i];
	i -= SFBPF_STAT_STOP_BASE;
	if (!buf[i][0])
		snprintf(buf[i], sizeof(buf[i]), "stop-%s", stop_names[i]);
	return buf[i];
}

static int check_opts(const struct profile_opts *o)
{
	if (o->max_frames > SFBPF_MAX_FRAMES) {
		fprintf(stderr, "sfbpf: at most %d user frames per stack\n", SFBPF_MAX_FRAMES);
		return -EINVAL;
	}
	if (!o->user_stacks && !o->kernel_stacks) {
		fprintf(stderr, "sfbpf: neither user nor kernel stacks requested\n");
		return -EINVAL;
	}
	if ((o->ringbuf_bytes &&
	     (o->ringbuf_bytes < 4096 || (o->ringbuf_bytes & (o->ringbuf_bytes - 1)))) ||
	    (o->event_ringbuf_bytes && (o->event_ringbuf_bytes < 4096 ||
					(o->event_ringbuf_bytes & (o->event_ringbuf_bytes - 1))))) {
		fprintf(stderr, "sfbpf: ring buffer size must be a power of two >= 4096\n");
		return -EINVAL;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "sfbpf: the kernel has no BTF (/sys/kernel/btf/vmlinux); "
				"it needs CONFIG_DEBUG_INFO_BTF=y\n");
		return -EOPNOTSUPP;
	}
	return 0;
}

static __u32 or_default(__u32 v, __u32 def)
{
	return v ? v : def;
}

static int set_sizes(struct profile_bpf *skel, const struct profile_opts *o)
{
	struct {
		struct bpf_map *map;
		__u32 n;
	} sizes[] = {
		{ skel->maps.rows, or_default(o->max_rows, PROFILE_DEFAULT_ROWS) },
		{ skel->maps.rules, or_default(o->max_rules, PROFILE_DEFAULT_RULES) },
		{ skel->maps.objects, or_default(o->max_objects, PROFILE_DEFAULT_OBJECTS) },
		{ skel->maps.pages, or_default(o->max_pages, PROFILE_DEFAULT_PAGES) },
		{ skel->maps.procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS) },
		{ skel->maps.target_pids, or_default(o->max_pids, PROFILE_DEFAULT_PIDS) },
		{ skel->maps.events, or_default(o->ringbuf_bytes, PROFILE_DEFAULT_RINGBUF) },
		{ skel->maps.obj_hits, or_default(o->max_objects, PROFILE_DEFAULT_OBJECTS) },
		{ skel->maps.lifecycle, or_default(o->event_ringbuf_bytes, DEFAULT_EVENT_RINGBUF) },
		/* One rate-limit entry per process that may report at once. */
		{ skel->maps.notify_next, or_default(o->max_procs, PROFILE_DEFAULT_PROCS) },
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		err = bpf_map__set_max_entries(sizes[i].map, sizes[i].n);
		if (err) {
			fprintf(stderr, "sfbpf: sizing map %s: %s\n", bpf_map__name(sizes[i].map),
				strerror(-err));
			return err;
		}
	}
	return 0;
}

static void explain_load_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		fprintf(stderr, "sfbpf: loading the BPF program: %s; run as root "
				"(or with CAP_BPF and CAP_PERFMON)\n", strerror(-err));
	else
		fprintf(stderr, "sfbpf: loading the BPF program: %s\n", strerror(-err));
}

/* Prints the verifier's statistics lines ("processed N insns ..."). */
static void print_verifier_stats(const char *log)
{
	const char *line = log, *end;

	while (line && *line) {
		end = strchr(line, '\n');
		if (!strncmp(line, "processed ", 10) || !strncmp(line, "verification time", 17))
			fprintf(stderr, "sfbpf: verifier: %.*s\n",
				end ? (int)(end - line) : (int)strlen(line), line);
		line = end ? end + 1 : NULL;
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct profile *p = ctx;
	const struct sfbpf_sample *s = data;

	if (size < SFBPF_SAMPLE_HDR_SIZE ||
	    SFBPF_SAMPLE_HDR_SIZE + ((size_t)s->nr_user + s->nr_kernel) * sizeof(__u64) > size)
		return 0; /* cannot happen with a matching BPF object: ignore */
	return p->on_sample ? p->on_sample(p->ctx, s, size) : 0;
}

static int on_lifecycle(void *ctx, void *data, size_t size)
{
	struct profile *p = ctx;

	if (size < sizeof(struct sfbpf_event))
		return 0;
	return p->on_event(p->ctx, data);
}

static void set_rodata(struct profile_bpf *skel, const struct profile_opts *opts)
{
	long tck = sysconf(_SC_CLK_TCK);

	skel->rodata->max_user_frames = opts->max_frames ? opts->max_frames : SFBPF_MAX_FRAMES;
	skel->rodata->filter_pids = opts->filter_pids;
	skel->rodata->user_stacks = opts->user_stacks;
	skel->rodata->kernel_stacks = opts->kernel_stacks;
	skel->rodata->skip_idle = opts->skip_idle;
	skel->rodata->filter_cgroup = opts->cgroup != NULL;
	skel->rodata->wakeup_bytes =
		or_default(opts->ringbuf_bytes, PROFILE_DEFAULT_RINGBUF) / WAKEUP_FRACTION;
	skel->rodata->exit_wakeup_bytes =
		or_default(opts->event_ringbuf_bytes, DEFAULT_EVENT_RINGBUF) / WAKEUP_FRACTION;
	if (opts->notify_interval_ns)
		skel->rodata->notify_interval_ns = opts->notify_interval_ns;
	/* /proc/PID/stat counts in USER_HZ ticks: the procs entries' start times. */
	skel->rodata->clock_tick_ns = tck > 0 ? 1000000000ULL / tck : 0;
}

/* Samples, and the lifecycle events when someone listens. */
static int open_rings(struct profile *p)
{
	int err;

	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.events), on_event, p, NULL);
	if (!p->rb) {
		err = -errno;
		fprintf(stderr, "sfbpf: creating the ring buffer: %s\n", strerror(-err));
		return err;
	}
	if (!p->on_event)
		return 0;
	err = ring_buffer__add(p->rb, bpf_map__fd(p->skel->maps.lifecycle), on_lifecycle, p);
	if (err)
		fprintf(stderr, "sfbpf: creating the event ring buffer: %s\n", strerror(-err));
	return err;
}

struct profile *profile__new(const struct profile_opts *opts)
{
	struct profile *p;
	int err;

	err = check_opts(opts);
	if (err) {
		errno = -err;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->on_sample = opts->on_sample;
	p->on_event = opts->on_event;
	p->ctx = opts->ctx;
	p->nr_cpus = libbpf_num_possible_cpus();
	if (p->nr_cpus <= 0) {
		err = p->nr_cpus ? p->nr_cpus : -EINVAL;
		fprintf(stderr, "sfbpf: cannot count CPUs: %s\n", strerror(-err));
		goto cleanup;
	}

	p->skel = profile_bpf__open();
	if (!p->skel) {
		err = -errno;
		fprintf(stderr, "sfbpf: opening the BPF object: %s\n", strerror(-err));
		goto cleanup;
	}
	set_rodata(p->skel, opts);
	err = set_sizes(p->skel, opts);
	if (err)
		goto cleanup;
	if (opts->verbose >= 2) {
		p->log = calloc(1, VERIFIER_LOG_SIZE);
		if (!p->log) {
			err = -ENOMEM;
			goto cleanup;
		}
		bpf_program__set_log_buf(p->skel->progs.sfbpf_profile, p->log, VERIFIER_LOG_SIZE);
		bpf_program__set_log_level(p->skel->progs.sfbpf_profile, 4 /* BPF_LOG_STATS */);
	}

	err = profile_bpf__load(p->skel);
	if (err) {
		explain_load_error(err);
		goto cleanup;
	}
	if (p->log)
		print_verifier_stats(p->log);
	if (opts->cgroup) {
		err = cgroups__set_target(bpf_map__fd(p->skel->maps.target_cgroup), opts->cgroup);
		if (err)
			goto cleanup;
	}
	err = open_rings(p);
	if (err)
		goto cleanup;
	p->links = calloc(p->nr_cpus, sizeof(*p->links));
	if (!p->links) {
		err = -ENOMEM;
		goto cleanup;
	}
	return p;

cleanup:
	profile__free(p);
	errno = -err;
	return NULL;
}

/* Reads /sys/devices/system/cpu/online ("0-3,5") into online[0 .. n). */
static int online_cpus(bool *online, int n)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int a, b, c, i;

	if (!f) {
		/* Old or odd system: try every possible CPU. */
		for (i = 0; i < n; i++)
			online[i] = true;
		return 0;
	}
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		c = fgetc(f);
		if (c == '-') {
			if (fscanf(f, "%d", &b) != 1)
				break;
			c = fgetc(f);
		}
		for (i = a; i <= b && i < n; i++)
			if (i >= 0)
				online[i] = true;
		if (c != ',')
			break;
	}
	fclose(f);
	return 0;
}

static int open_cpu_clock(int cpu, __u64 freq_hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = freq_hz,
		.freq = 1,
	};
	int fd;

	fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int profile__attach(struct profile *p, __u64 freq_hz)
{
	bool *online;
	int cpu, fd, err = 0;

	if (!freq_hz) {
		fprintf(stderr, "sfbpf: sampling frequency must be > 0\n");
		return -EINVAL;
	}
	if (p->nr_links) {
		fprintf(stderr, "sfbpf: already attached\n");
		return -EBUSY;
	}
	online = calloc(p->nr_cpus, sizeof(*online));
	if (!online)
		return -ENOMEM;
	online_cpus(online, p->nr_cpus);

	for (cpu = 0; cpu < p->nr_cpus; cpu++) {
		if (!online[cpu])
			continue;
		fd = open_cpu_clock(cpu, freq_hz);
		if (fd == -ENODEV)
			continue; /* went offline meanwhile */
		if (fd < 0) {
			err = fd;
			if (err == -EACCES || err == -EPERM)
				fprintf(stderr, "sfbpf: perf_event_open: %s; run as root (or with "
						"CAP_PERFMON)\n", strerror(-err));
			else if (err == -EINVAL)
				fprintf(stderr, "sfbpf: perf_event_open (cpu %d, %llu Hz): %s; is the "
						"frequency above kernel.perf_event_max_sample_rate?\n",
					cpu, (unsigned long long)freq_hz, strerror(-err));
			else
				fprintf(stderr, "sfbpf: perf_event_open (cpu %d): %s\n", cpu,
					strerror(-err));
			goto cleanup;
		}
		p->links[p->nr_links] = bpf_program__attach_perf_event(p->skel->progs.sfbpf_profile,
								      fd);
		if (!p->links[p->nr_links]) {
			err = -errno;
			close(fd);
			fprintf(stderr, "sfbpf: attaching to cpu %d: %s\n", cpu, strerror(-err));
			goto cleanup;
		}
		p->nr_links++;
	}
	if (!p->nr_links) {
		fprintf(stderr, "sfbpf: no online CPU to attach to\n");
		err = -ENODEV;
	}
cleanup:
	free(online);
	if (err) {
		while (p->nr_links > 0)
			bpf_link__destroy(p->links[--p->nr_links]); /* closes the event fd */
	}
	return err;
}

int profile__attach_lifecycle(struct profile *p)
{
	struct profile_bpf *skel = p->skel;
	int err;

	if (skel->links.sfbpf_exit)
		return -EBUSY;
	/* Exits first: an entry must never outlive its process once execs are seen. */
	skel->links.sfbpf_exit = bpf_program__attach_raw_tracepoint(skel->progs.sfbpf_exit,
								   "sched_process_exit");
	if (!skel->links.sfbpf_exit) {
		err = -errno;
		fprintf(stderr, "sfbpf: attaching to sched_process_exit: %s\n", strerror(-err));
		return err;
	}
	skel->links.sfbpf_exec = bpf_program__attach_raw_tracepoint(skel->progs.sfbpf_exec,
								   "sched_process_exec");
	if (!skel->links.sfbpf_exec) {
		err = -errno;
		fprintf(stderr, "sfbpf: attaching to sched_process_exec: %s\n", strerror(-err));
		bpf_link__destroy(skel->links.sfbpf_exit);
		skel->links.sfbpf_exit = NULL;
		return err;
	}
	return 0;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Samples below the wake-up mark raise no event: wait at most POLL_LATENCY_MS
 * at a time, then read whatever is there, until something was read or the
 * caller's timeout is over.
 */
int profile__poll(struct profile *p, int timeout_ms)
{
	long long end = timeout_ms > 0 ? mono_ms() + timeout_ms : 0, left;
	int n, m, wait = timeout_ms;

	for (;;) {
		if (wait < 0 || wait > POLL_LATENCY_MS)
			wait = POLL_LATENCY_MS;
		n = ring_buffer__poll(p->rb, wait);
		if (n < 0)
			return n;
		m = ring_buffer__consume(p->rb);
		if (m < 0)
			return m;
		if (n + m || !timeout_ms)
			return n + m;
		if (timeout_ms > 0) {
			left = end - mono_ms();
			if (left <= 0)
				return 0;
			wait = (int)left;
		} else {
			wait = -1;
		}
	}
}

int profile__consume(struct profile *p)
{
	return ring_buffer__consume(p->rb);
}

int profile__stats(struct profile *p, __u64 out[SFBPF_STAT__COUNT])
{
	struct sfbpf_stats *percpu;
	__u32 zero = 0;
	int cpu, i, err;

	memset(out, 0, sizeof(__u64) * SFBPF_STAT__COUNT);
	percpu = calloc(p->nr_cpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.stats), &zero, percpu);
	if (err) {
		err = -errno;
		fprintf(stderr, "sfbpf: reading counters: %s\n", strerror(-err));
		goto cleanup;
	}
	for (cpu = 0; cpu < p->nr_cpus; cpu++)
		for (i = 0; i < SFBPF_STAT__COUNT; i++)
			out[i] += percpu[cpu].v[i];
cleanup:
	free(percpu);
	return err;
}

int profile__rows_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.rows);
}

int profile__rules_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.rules);
}

int profile__objects_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.objects);
}

int profile__pages_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.pages);
}

int profile__procs_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.procs);
}

int profile__target_pids_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.target_pids);
}

int profile__obj_hits_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.obj_hits);
}

int profile__notify_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.notify_next);
}

int profile__lifecycle_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.lifecycle);
}

int profile__prog_fd(const struct profile *p)
{
	return bpf_program__fd(p->skel->progs.sfbpf_profile);
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	while (p->nr_links > 0)
		bpf_link__destroy(p->links[--p->nr_links]);
	free(p->links);
	ring_buffer__free(p->rb);
	profile_bpf__destroy(p->skel); /* detaches the lifecycle programs */
	free(p->log);
	free(p);
}
