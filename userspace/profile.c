// SPDX-License-Identifier: GPL-2.0-or-later
/* Lifecycle of the profiling BPF program: see profile.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "profile.h"
#include "profile.skel.h"

#define VERIFIER_LOG_SIZE (64u << 10)

struct profile {
	struct profile_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int nr_links;
	int nr_cpus; /* possible CPUs: the size of per-CPU values and of links */
	profile_sample_fn on_sample;
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

static const char *const stat_names[SFBPF_STAT_STOP_BASE] = {
	[SFBPF_STAT_SAMPLES] = "samples",
	[SFBPF_STAT_EMITTED] = "emitted",
	[SFBPF_STAT_RB_DROPS] = "ringbuf-drops",
	[SFBPF_STAT_FRAMES] = "frames",
	[SFBPF_STAT_FP_FRAMES] = "fp-frames",
};

const char *profile__stop_name(enum sfbpf_stop stop)
{
	return (unsigned int)stop < SFBPF_STOP__COUNT ? stop_names[stop] : "unknown";
}

const char *profile__stat_name(enum sfbpf_stat stat)
{
	static char buf[SFBPF_STOP__COUNT][32];
	unsigned int i = stat;

	if (i < SFBPF_STAT_STOP_BASE)
		return stat_names[i];
	if (i >= SFBPF_STAT__COUNT)
		return "unknown";
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
	if (o->ringbuf_bytes &&
	    (o->ringbuf_bytes < 4096 || (o->ringbuf_bytes & (o->ringbuf_bytes - 1)))) {
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
	p->skel->rodata->max_user_frames = opts->max_frames ? opts->max_frames : SFBPF_MAX_FRAMES;
	p->skel->rodata->filter_pids = opts->filter_pids;
	p->skel->rodata->user_stacks = opts->user_stacks;
	p->skel->rodata->kernel_stacks = opts->kernel_stacks;
	p->skel->rodata->skip_idle = opts->skip_idle;
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

	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.events), on_event, p, NULL);
	if (!p->rb) {
		err = -errno;
		fprintf(stderr, "sfbpf: creating the ring buffer: %s\n", strerror(-err));
		goto cleanup;
	}
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

int profile__poll(struct profile *p, int timeout_ms)
{
	return ring_buffer__poll(p->rb, timeout_ms);
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
	profile_bpf__destroy(p->skel);
	free(p->log);
	free(p);
}
