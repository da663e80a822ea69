// SPDX-License-Identifier: GPL-2.0-or-later
/* Profiling session (see session.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session.h"

#define PID_BITMAP_BITS (1u << 22) /* pid_max upper bound */
#define NSEC_PER_SEC 1000000000ULL

double session_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool test_and_set(uint8_t *bitmap, uint32_t pid)
{
	uint32_t i = pid % PID_BITMAP_BITS;
	bool was = bitmap[i / 8] & (1u << (i % 8));

	bitmap[i / 8] |= 1u << (i % 8);
	return was;
}

/* Bookkeeping every sample needs before it is aggregated. */
static void note_sample(struct session *s, const struct sfbpf_sample *smp)
{
	/*
	 * Snapshot the mappings now (the process may be gone when we symbolize);
	 * cheap unless the frames fall outside them (exec, dlopen): then re-read.
	 */
	symbolizer__note_sample(s->sym, smp->pid, smp->time_ns, (const uint64_t *)smp->ips,
				smp->nr_user);
	/* System-wide: a process that started after us gets its tables once. */
	if (smp->stop == SFBPF_STOP_NO_PROC && !s->opts.nr_pids && !test_and_set(s->tried, smp->pid))
		proctrack__refresh(s->procs, smp->pid);
}

/*
 * Aggregates smp as ns of time, in microseconds. The rounding error carries
 * over from sample to sample, so the weights add up to the total time
 * (rounded down) however short the periods: no per-sample truncation bias.
 */
static int add_weighted(struct session *s, const struct sfbpf_sample *smp, size_t size,
			uint64_t ns)
{
	uint64_t us;
	uint32_t part;
	int err;

	if (size > sizeof(*s->weighted) ||
	    size < SFBPF_SAMPLE_HDR_SIZE + ((size_t)smp->nr_user + smp->nr_kernel) * sizeof(__u64))
		return aggregator__add_raw(s->agg, smp, size); /* counts it as invalid */
	memcpy(s->weighted, smp, size);
	s->weight_ns += ns;
	us = s->weight_ns / 1000 - s->weight_us;
	s->weight_us += us;
	/* A sample weighs at most 2^32 - 1 µs (71 minutes): longer ones are split. */
	do {
		part = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
		s->weighted->weight = part;
		err = aggregator__add(s->agg, s->weighted);
		us -= part;
	} while (us && !err);
	return err;
}

static int on_sample(void *ctx, const struct sfbpf_sample *smp, size_t size)
{
	struct session *s = ctx;
	uint64_t period;

	s->received++;
	note_sample(s, smp);
	if (!s->opts.off_cpu)
		return aggregator__add_raw(s->agg, smp, size);
	/* on+off: a CPU sample stands for one period of CPU time (cpu-clock: exact). */
	period = NSEC_PER_SEC / s->opts.freq;
	s->oncpu_ns += period;
	return add_weighted(s, smp, size, period);
}

static int add_offcpu(struct session *s, const struct sfbpf_offcpu_sample *r, size_t size)
{
	uint64_t ns = r->end_ns - r->start_ns;

	note_sample(s, &r->s);
	if (r->state < SFBPF_STATE__COUNT)
		s->state_ns[r->state] += ns;
	return add_weighted(s, &r->s, size - SFBPF_OFFCPU_HDR_SIZE + SFBPF_SAMPLE_HDR_SIZE, ns);
}

static int on_offcpu_sample(void *ctx, const struct sfbpf_offcpu_sample *r, size_t size)
{
	struct session *s = ctx;

	s->received++;
	return add_offcpu(s, r, size);
}

static int on_blocked_at_end(void *ctx, const struct sfbpf_offcpu_sample *r, size_t size)
{
	struct session *s = ctx;

	s->at_end++;
	return add_offcpu(s, r, size);
}

static int open_profile(struct session *s)
{
	struct profile_opts opts = {
		.max_frames = s->opts.max_frames,
		.user_stacks = s->opts.user_stacks,
		.kernel_stacks = s->opts.kernel_stacks,
		.filter_pids = s->opts.nr_pids > 0,
		.skip_idle = true,
		.verbose = s->opts.verbose > 1 ? s->opts.verbose - 1 : 0,
		.on_sample = on_sample,
		.ctx = s,
	};

	s->prof = profile__new(&opts);
	if (!s->prof) {
		fprintf(stderr, "sfbpf: cannot load the BPF program: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

/* The off-CPU program; with the profile loaded, it shares its tables. */
static int open_offcpu(struct session *s)
{
	struct offcpu_shared_maps shared;
	struct offcpu_opts opts = {
		.max_frames = s->opts.max_frames,
		.user_stacks = s->opts.user_stacks,
		.kernel_stacks = s->opts.kernel_stacks,
		.filter_pids = s->opts.nr_pids > 0,
		.cgroup = s->opts.cgroup,
		.states = s->opts.states ? s->opts.states :
			  s->opts.on_off ? SFBPF_STATES_ALL : SFBPF_STATES_BLOCKED,
		.min_ns = s->opts.min_block_us * 1000,
		.max_ns = s->opts.max_block_us * 1000,
		.verbose = s->opts.verbose > 1 ? s->opts.verbose - 1 : 0,
		.on_sample = on_offcpu_sample,
		.ctx = s,
	};
	const struct ksym *sched = s->ksyms ? ksyms__get_by_name(s->ksyms, "__schedule") : NULL;

	if (sched) {
		opts.sched_start = sched->addr;
		opts.sched_end = sched->end;
	}
	if (s->prof) {
		shared = (struct offcpu_shared_maps){
			.rows = profile__rows_fd(s->prof),
			.rules = profile__rules_fd(s->prof),
			.objects = profile__objects_fd(s->prof),
			.pages = profile__pages_fd(s->prof),
			.procs = profile__procs_fd(s->prof),
			.target_pids = profile__target_pids_fd(s->prof),
		};
		opts.shared = &shared;
	}
	s->off = offcpu__new(&opts);
	if (!s->off) {
		fprintf(stderr, "sfbpf: cannot load the off-CPU BPF program: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static int open_bpf(struct session *s)
{
	int err = 0;

	if (s->opts.off_cpu) {
		s->weighted = malloc(sizeof(*s->weighted));
		if (!s->weighted)
			return -ENOMEM;
	}
	if (!s->opts.off_cpu || s->opts.on_off)
		err = open_profile(s);
	if (!err && s->opts.off_cpu)
		err = open_offcpu(s);
	return err;
}

static int open_tables(struct session *s)
{
	struct tables_opts topts = {
		.rows_fd = s->prof ? profile__rows_fd(s->prof) : offcpu__rows_fd(s->off),
		.rules_fd = s->prof ? profile__rules_fd(s->prof) : offcpu__rules_fd(s->off),
		.objects_fd = s->prof ? profile__objects_fd(s->prof) : offcpu__objects_fd(s->off),
		.pages_fd = s->prof ? profile__pages_fd(s->prof) : offcpu__pages_fd(s->off),
		.max_rows = PROFILE_DEFAULT_ROWS,
		.max_rules = PROFILE_DEFAULT_RULES,
		.max_objects = PROFILE_DEFAULT_OBJECTS,
		.max_pages = PROFILE_DEFAULT_PAGES,
		.verbose = s->opts.verbose,
		.no_cfi = s->opts.sframe_only,
	};
	int procs_fd = s->prof ? profile__procs_fd(s->prof) : offcpu__procs_fd(s->off);

	s->tables = tables__new(&topts);
	s->procs = s->tables ? proctrack__new(s->tables, procs_fd) : NULL;
	return s->procs ? 0 : -ENOMEM;
}

/* Tables for the targets, before sampling starts, so the first samples unwind. */
static int load_targets(struct session *s)
{
	int i, err, fd = s->prof ? profile__target_pids_fd(s->prof) : offcpu__target_pids_fd(s->off);
	__u8 one = 1;

	if (!s->opts.user_stacks)
		goto filter;
	if (!s->opts.nr_pids) {
		err = proctrack__scan(s->procs);
		if (s->opts.verbose)
			fprintf(stderr, "sfbpf: loaded tables for %d processes\n", err);
	}
	for (i = 0; i < s->opts.nr_pids; i++) {
		err = proctrack__refresh(s->procs, s->opts.pids[i]);
		if (err == -ESRCH || err == -ENOENT) {
			fprintf(stderr, "sfbpf: no process with PID %d\n", s->opts.pids[i]);
			return -ESRCH;
		}
	}
filter:
	for (i = 0; i < s->opts.nr_pids; i++) {
		__u32 pid = s->opts.pids[i];

		err = bpf_map_update_elem(fd, &pid, &one, BPF_ANY);
		if (err) {
			fprintf(stderr, "sfbpf: cannot filter PID %u: %s\n", pid, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int attach(struct session *s)
{
	int err;

	if (s->opts.off_cpu && s->opts.on_off && !s->opts.freq) {
		fprintf(stderr, "sfbpf: on+off needs a sampling frequency\n");
		return -EINVAL;
	}
	if (s->prof) {
		err = profile__attach(s->prof, s->opts.freq);
		if (err) {
			fprintf(stderr, "sfbpf: cannot attach to the CPUs: %s\n", strerror(-err));
			return err;
		}
	}
	if (s->off) {
		/* Before attaching: every period recorded starts inside the window. */
		s->attach_ns = offcpu__now_ns();
		err = offcpu__attach(s->off);
		if (err) {
			fprintf(stderr, "sfbpf: cannot trace context switches: %s\n", strerror(-err));
			return err;
		}
	}
	return 0;
}

int session__open(struct session *s, const struct session_opts *opts)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->opts = *opts;
	s->start_time = session_now();
	s->agg = aggregator__new();
	s->sym = symbolizer__new();
	s->ksyms = ksyms__new(); /* NULL is fine: kernel frames stay addresses */
	s->tried = calloc(PID_BITMAP_BITS / 8, 1);
	if (!s->agg || !s->sym || !s->tried) {
		fprintf(stderr, "sfbpf: out of memory\n");
		return -ENOMEM;
	}
	err = open_bpf(s);
	if (!err)
		err = open_tables(s);
	if (!err)
		err = load_targets(s);
	if (!err)
		err = attach(s);
	s->attach_time = session_now();
	return err;
}

int session__poll(struct session *s, int timeout_ms)
{
	int n, m;

	if (!s->off)
		return profile__poll(s->prof, timeout_ms);
	/* The off-CPU stream is the busy one: wait on it, then read the CPU samples. */
	n = offcpu__poll(s->off, timeout_ms);
	if (n < 0 || !s->prof)
		return n;
	m = profile__poll(s->prof, 0);
	return m < 0 ? m : n + m;
}

void session__stop(struct session *s)
{
	if (s->off && !s->stopped) {
		/* Detached first: whatever is left in the map was off-CPU at the end. */
		offcpu__detach(s->off);
		s->end_ns = offcpu__now_ns();
		offcpu__poll(s->off, 0);
		offcpu__for_each_blocked(s->off, s->end_ns, on_blocked_at_end, s);
	}
	s->stopped = true;
	if (s->prof)
		profile__poll(s->prof, 0);
}

void session__close(struct session *s)
{
	proctrack__free(s->procs);
	tables__free(s->tables);
	offcpu__free(s->off);
	profile__free(s->prof);
	aggregator__free(s->agg);
	symbolizer__free(s->sym);
	ksyms__free(s->ksyms);
	free(s->tried);
	free(s->weighted);
	memset(s, 0, sizeof(*s));
}

void session__stats(struct session *s, struct session_stats *out)
{
	struct sfbpf_offcpu_stats off;
	int i;

	memset(out, 0, sizeof(*out));
	if (s->prof)
		profile__stats(s->prof, out->bpf);
	if (s->off && !offcpu__stats(s->off, &off)) {
		for (i = 0; i < SFBPF_STAT__COUNT; i++)
			out->bpf[i] += off.unwind.v[i];
		memcpy(out->offcpu, off.v, sizeof(out->offcpu));
	}
	memcpy(out->state_ns, s->state_ns, sizeof(out->state_ns));
	out->oncpu_ns = s->oncpu_ns;
	out->at_end = s->at_end;
	if (s->attach_ns)
		out->window_ns = (s->end_ns ? s->end_ns : offcpu__now_ns()) - s->attach_ns;
	out->received = s->received;
	if (s->tables)
		tables__stats(s->tables, &out->tables);
	if (s->procs)
		proctrack__stats(s->procs, &out->procs);
}

static void print_counter(FILE *f, const char *prefix, const char *name, unsigned long long v)
{
	char buf[64];
	size_t i;

	snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '-')
			buf[i] = '_';
	fprintf(f, "sfbpf: stat %s %llu\n", buf, v);
}

void session__print_stats(struct session *s, FILE *f)
{
	static const char *const names[SFBPF_STAT_STOP_BASE] = {
		[SFBPF_STAT_SAMPLES] = "samples", [SFBPF_STAT_EMITTED] = "emitted",
		[SFBPF_STAT_RB_DROPS] = "drops",   [SFBPF_STAT_FRAMES] = "frames",
		[SFBPF_STAT_FP_FRAMES] = "fp_frames",
	};
	struct session_stats st;
	const struct tables_stats *ts = &st.tables;
	int i;

	session__stats(s, &st);
	for (i = 0; i < SFBPF_STAT_STOP_BASE; i++)
		print_counter(f, "", names[i], st.bpf[i]);
	for (i = 0; i < SFBPF_STOP__COUNT; i++)
		print_counter(f, "stop.", profile__stop_name(i), st.bpf[SFBPF_STAT_STOP_BASE + i]);
	print_counter(f, "", "received", st.received);
	print_counter(f, "", "processes", st.procs.procs);
	print_counter(f, "", "objects", ts->objects);
	print_counter(f, "", "objects_without_table", ts->objects_without_table);
	print_counter(f, "", "objects_rejected", ts->objects_rejected);
	print_counter(f, "", "rows", ts->rows_used);
	print_counter(f, "", "table_bytes",
		      ts->rows_used * sizeof(struct sfbpf_row) +
			      ts->rules_used * sizeof(struct sfbpf_rule) +
			      ts->pages_used * sizeof(__u32));
	print_counter(f, "", "sframe_bytes", ts->sframe_bytes);
	print_counter(f, "", "objects_sframe", ts->objects_sframe);
	print_counter(f, "", "rows_sframe", ts->rows_sframe);
	print_counter(f, "", "objects_eh_frame", ts->objects_eh_frame);
	print_counter(f, "", "rows_eh_frame", ts->rows_eh_frame);
	print_counter(f, "", "load_us", ts->load_ns / 1000);
	if (!s->off)
		return;
	for (i = 0; i < SFBPF_OFFCPU_STAT__COUNT; i++)
		print_counter(f, "offcpu.", offcpu__stat_name(i), st.offcpu[i]);
	print_counter(f, "offcpu.", "at_end", st.at_end);
	for (i = 0; i < SFBPF_STATE__COUNT; i++)
		print_counter(f, "offcpu_ns.", offcpu__state_name(i), st.state_ns[i]);
	if (s->prof)
		print_counter(f, "", "oncpu_ns", st.oncpu_ns);
	print_counter(f, "", "window_ns", st.window_ns);
}

void session__print_offcpu_summary(struct session *s, FILE *f)
{
	struct session_stats st;
	uint64_t total;
	int i;

	if (!s->off)
		return;
	session__stats(s, &st);
	total = st.oncpu_ns;
	for (i = 0; i < SFBPF_STATE__COUNT; i++)
		total += st.state_ns[i];
	fprintf(f, "sfbpf: %s time over %.3f s, by thread state:\n",
		s->prof ? "on- and off-CPU" : "off-CPU", st.window_ns / 1e9);
	if (s->prof)
		fprintf(f, "  %-9s %12.3f s %5.1f%%\n", "on-CPU", st.oncpu_ns / 1e9,
			total ? 100.0 * st.oncpu_ns / total : 0.0);
	for (i = 0; i < SFBPF_STATE__COUNT; i++)
		fprintf(f, "  %-9s %12.3f s %5.1f%%\n", offcpu__state_name(i), st.state_ns[i] / 1e9,
			total ? 100.0 * st.state_ns[i] / total : 0.0);
	if (st.offcpu[SFBPF_OFFCPU_STAT_MAP_FULL])
		fprintf(f, "sfbpf: %llu off-CPU periods lost: too many threads blocked at once\n",
			(unsigned long long)st.offcpu[SFBPF_OFFCPU_STAT_MAP_FULL]);
	if (st.bpf[SFBPF_STAT_RB_DROPS])
		fprintf(f, "sfbpf: %llu samples lost: the ring buffer was full (a busy system: "
			   "narrow with -p, -m or --state)\n",
			(unsigned long long)st.bpf[SFBPF_STAT_RB_DROPS]);
}
