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

#include "profile/bpfprog.h"
#include "profile/pacmask.h"
#include "profile/profile.h"
#include "profile.skel.h"
#include "util/clock.h"
#include "util/log.h"

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
	struct bpf_program *prog; /* the sampling program loaded (bpfprog__sampler()) */
	struct ring_buffer *rb; /* samples and, with on_event, lifecycle events */
	struct bpf_link **links;
	int nr_links;
	int nr_cpus; /* possible CPUs: the size of per-CPU values and of links */
	profile_sample_fn on_sample;
	profile_event_fn on_event;
	profile_py_code_fn on_py_code;
	void *ctx;
	/* profile__poll_slice(): samples are read until slice_end_ns (0: from the first one) */
	uint64_t slice_ns, slice_end_ns;
	int nr_read; /* samples and events handled in this poll_slice */
	bool cut; /* a sample ended the slice: more may wait in the ring */
	bool ended, ended_last; /* profile__end_slice() cut this call's slice, the last one's */
	struct bpfprog_wake wake; /* profile__set_wake_fd(); epfd -1: none */
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
	[SFBPF_STOP_REPLACED] = "replaced",
	[SFBPF_STOP_EXECVE] = "execve",
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
	[SFBPF_STAT_GAP_FP_FRAMES] = "gap-fp-frames",
	[SFBPF_STAT_FP_SWITCHES] = "fp-stack-switches",
	[SFBPF_STAT_LEAF_FP_STEPS] = "unknown-leaf-fp-steps",
	[SFBPF_STAT_FILLED_PERIODS] = "filled-periods",
	[SFBPF_STAT_FORKS_INHERITED] = "forks-inherited",
	[SFBPF_STAT_FORK_DROPS] = "fork-drops",
	[SFBPF_STAT_VMA_WALKS] = "vma-walks",
	[SFBPF_STAT_VMA_FOUND] = "vma-found",
	[SFBPF_STAT_VMA_MISS_BASE + SFBPF_VMA_NO_VMA] = "vma-miss-no-vma",
	[SFBPF_STAT_VMA_MISS_BASE + SFBPF_VMA_NOT_FILE] = "vma-miss-not-file",
	[SFBPF_STAT_VMA_MISS_BASE + SFBPF_VMA_NO_IDENT] = "vma-miss-no-ident",
	[SFBPF_STAT_VMA_MISS_BASE + SFBPF_VMA_FULL] = "vma-miss-full",
	[SFBPF_STAT_VMA_MISS_BASE + SFBPF_VMA_LATER] = "vma-miss-later",
	[SFBPF_STAT_VMA_OVER_ENTRY] = "vma-over-entry",
	[SFBPF_STAT_HS_INTERPRETED] = "hs-interpreted",
	[SFBPF_STAT_HS_COMPILED] = "hs-compiled",
	[SFBPF_STAT_HS_FAILED] = "hs-failed",
	[SFBPF_STAT_HS_STOP_BASE + SFBPF_HS_STOP_READ - 1] = "hs-stop-read",
	[SFBPF_STAT_HS_STOP_BASE + SFBPF_HS_STOP_INTERP_LINK - 1] = "hs-stop-interp-link",
	[SFBPF_STAT_HS_STOP_BASE + SFBPF_HS_STOP_NO_BLOB - 1] = "hs-stop-no-blob",
	[SFBPF_STAT_HS_STOP_BASE + SFBPF_HS_STOP_BAD_BLOB - 1] = "hs-stop-bad-blob",
	[SFBPF_STAT_HS_STOP_BASE + SFBPF_HS_STOP_NO_CALLER - 1] = "hs-stop-no-caller",
	[SFBPF_STAT_HS_STOP_BASE + SFBPF_HS_STOP_NEVER_SAFE - 1] = "hs-stop-never-safe",
	[SFBPF_STAT_V8_INTERPRETED] = "v8-interpreted",
	[SFBPF_STAT_V8_BASELINE] = "v8-baseline",
	[SFBPF_STAT_V8_OPTIMIZED] = "v8-optimized",
	[SFBPF_STAT_V8_OTHER] = "v8-other",
	[SFBPF_STAT_V8_UNREAD] = "v8-unread",
	[SFBPF_STAT_V8_LATER_LOST] = "v8-later-lost",
	[SFBPF_STAT_RUNTIME_WAKEUPS] = "runtime-wakeups",
	[SFBPF_STAT_PY_SAMPLES] = "py-samples",
	[SFBPF_STAT_PY_FRAMES] = "py-frames",
	[SFBPF_STAT_PY_DESCRIBED] = "py-described",
	[SFBPF_STAT_PY_DESCRIBE_LATER] = "py-describe-later",
	[SFBPF_STAT_PY_DESCRIBE_FAILED] = "py-describe-failed",
	[SFBPF_STAT_PY_STOP_BASE + SFBPF_PY_STOP_DONE] = "py-done",
	[SFBPF_STAT_PY_STOP_BASE + SFBPF_PY_STOP_NO_THREAD] = "py-no-thread",
	[SFBPF_STAT_PY_STOP_BASE + SFBPF_PY_STOP_READ] = "py-read",
	[SFBPF_STAT_PY_STOP_BASE + SFBPF_PY_STOP_DEPTH] = "py-depth",
	[SFBPF_STAT_PHP_SAMPLES] = "php-samples",
	[SFBPF_STAT_PHP_FRAMES] = "php-frames",
	[SFBPF_STAT_PHP_STOP_BASE + SFBPF_PHP_STOP_DONE] = "php-done",
	[SFBPF_STAT_PHP_STOP_BASE + SFBPF_PHP_STOP_IDLE] = "php-idle",
	[SFBPF_STAT_PHP_STOP_BASE + SFBPF_PHP_STOP_READ] = "php-read",
	[SFBPF_STAT_PHP_STOP_BASE + SFBPF_PHP_STOP_DEPTH] = "php-depth",
	[SFBPF_STAT_RUBY_SAMPLES] = "ruby-samples",
	[SFBPF_STAT_RUBY_FRAMES] = "ruby-frames",
	[SFBPF_STAT_RUBY_STOP_BASE + SFBPF_RB_STOP_DONE] = "ruby-done",
	[SFBPF_STAT_RUBY_STOP_BASE + SFBPF_RB_STOP_NO_THREAD] = "ruby-no-thread",
	[SFBPF_STAT_RUBY_STOP_BASE + SFBPF_RB_STOP_READ] = "ruby-read",
	[SFBPF_STAT_RUBY_STOP_BASE + SFBPF_RB_STOP_DEPTH] = "ruby-depth",
	[SFBPF_STAT_PERL_SAMPLES] = "perl-samples",
	[SFBPF_STAT_PERL_FRAMES] = "perl-frames",
	[SFBPF_STAT_PERL_STOP_BASE + SFBPF_PL_STOP_DONE] = "perl-done",
	[SFBPF_STAT_PERL_STOP_BASE + SFBPF_PL_STOP_IDLE] = "perl-idle",
	[SFBPF_STAT_PERL_STOP_BASE + SFBPF_PL_STOP_READ] = "perl-read",
	[SFBPF_STAT_PERL_STOP_BASE + SFBPF_PL_STOP_DEPTH] = "perl-depth",
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
	int err;

	if (o->max_frames > SFBPF_MAX_FRAMES) {
		pr_warn("at most %d user frames per stack", SFBPF_MAX_FRAMES);
		return -EINVAL;
	}
	if (!o->user_stacks && !o->kernel_stacks) {
		pr_warn("neither user nor kernel stacks requested");
		return -EINVAL;
	}
	err = bpfprog__check_ring_bytes(o->ringbuf_bytes);
	if (!err)
		err = bpfprog__check_ring_bytes(o->event_ringbuf_bytes);
	return err ? err : bpfprog__check_kernel();
}

static __u32 or_default(__u32 v, __u32 def)
{
	return v ? v : def;
}

static __u32 seg_shift(const struct profile_opts *o)
{
	return bpfprog__seg_shift(o->seg_shift);
}

/*
 * The kept tables of mappings found in the kernel (vmafind.h), left past
 * their process's exit for its names (symbolize_gone.c) until the LRU
 * reuses them: the LRU's free lists take up to 128 entries a CPU, so room
 * for those and a thousand processes more (560 bytes each, preallocated:
 * 1.7 MiB on 16 CPUs; counted for 64 CPUs at most, 5 MiB, however many a
 * host says it may hot-plug). One a CPU where no walk finds VMAs.
 */
static __u32 vma_cache_entries(const struct profile_bpf *skel)
{
	int cpus = libbpf_num_possible_cpus();
	__u32 n = cpus > 0 ? (__u32)cpus : 1;

	if (!skel->rodata->have_find_vma)
		return n;
	return 1024 + (n < 64 ? n : 64) * 128;
}

/* Sizes every map, loads, sets the cgroup filter. */
static int load(struct profile *p, const struct profile_opts *o)
{
	struct profile_bpf *skel = p->skel;
	/* The table spaces: arrays of segments (bpf/abi.h). */
	__u32 row_segs = SFBPF_SEGS(or_default(o->max_rows, PROFILE_DEFAULT_ROWS), seg_shift(o));
	__u32 page_segs = SFBPF_SEGS(or_default(o->max_pages, PROFILE_DEFAULT_PAGES), seg_shift(o));
	const struct bpfprog_map maps[] = {
		{ skel->maps.rows, row_segs, -1 },
		{ skel->maps.rules, or_default(o->max_rules, PROFILE_DEFAULT_RULES), -1 },
		{ skel->maps.objects, or_default(o->max_objects, PROFILE_DEFAULT_OBJECTS), -1 },
		{ skel->maps.pages, page_segs, -1 },
		{ skel->maps.procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS), -1 },
		{ skel->maps.target_pids, or_default(o->max_pids, PROFILE_DEFAULT_PIDS), -1 },
		{ skel->maps.events, or_default(o->ringbuf_bytes, PROFILE_DEFAULT_RINGBUF), -1 },
		{ skel->maps.obj_hits, or_default(o->max_objects, PROFILE_DEFAULT_OBJECTS), -1 },
		/* An identity per object slot (vmafind.h). */
		{ skel->maps.idents, or_default(o->max_objects, PROFILE_DEFAULT_OBJECTS), -1 },
		{ skel->maps.lifecycle, or_default(o->event_ringbuf_bytes, DEFAULT_EVENT_RINGBUF),
		  -1 },
		/* One rate-limit entry per process that may report at once. */
		{ skel->maps.notify_next, or_default(o->max_procs, PROFILE_DEFAULT_PROCS), -1 },
		/* Python settings: a process each at most (interp/python.h). */
		{ skel->maps.py_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS), -1 },
		/* HotSpot settings: likewise (interp/hotspot.h). */
		{ skel->maps.hs_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS), -1 },
		/* V8 settings: likewise (interp/v8.h). */
		{ skel->maps.v8_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS), -1 },
		/* PHP settings: likewise (interp/php.h). */
		{ skel->maps.php_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS), -1 },
		/* Ruby settings: likewise (interp/ruby.h). */
		{ skel->maps.rb_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS), -1 },
		/* Perl settings: likewise (interp/perl.h). */
		{ skel->maps.pl_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS), -1 },
		{ skel->maps.vma_cache, vma_cache_entries(skel), -1 },
	};

	const struct bpfprog_load lo = {
		.what = "profiling",
		.prog = skel->progs.sfbpf_profile,
		.chained = skel->progs.sfbpf_profile_chained,
		.chain_link = skel->progs.sfbpf_profile_walk,
		.chain_finish = { skel->progs.sfbpf_profile_finish,
				  skel->progs.sfbpf_profile_finish_php,
				  skel->progs.sfbpf_profile_finish_ruby,
				  skel->progs.sfbpf_profile_finish_perl },
		.walk_chain = skel->maps.walk_chain,
		.maps = maps,
		.nr_maps = sizeof(maps) / sizeof(maps[0]),
		.cgroup_map = skel->maps.target_cgroup,
		.cgroup = o->cgroup,
		.seg_rows = skel->maps.rows,
		.seg_pages = skel->maps.pages,
		.seg_shift = seg_shift(o),
	};

	int err = bpfprog__load(skel->skeleton, &lo);

	p->prog = bpfprog__sampler(&lo);
	return err;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct profile *p = ctx;
	const struct sfbpf_sample *s = data;
	uint64_t now;
	int err;

	if (size >= SFBPF_PY_CODE_HDR_SIZE && *(const __u64 *)data == SFBPF_PY_CODE_MAGIC) {
		if (p->on_py_code)
			p->on_py_code(p->ctx, data, size);
		return 0;
	}
	if (size < SFBPF_SAMPLE_HDR_SIZE ||
	    SFBPF_SAMPLE_HDR_SIZE + ((size_t)s->nr_user + s->nr_kernel) * sizeof(__u64) > size)
		return 0; /* cannot happen with a matching BPF object: ignore */
	err = p->on_sample ? p->on_sample(p->ctx, s, size) : 0;
	if (err || !p->slice_ns)
		return err;
	p->nr_read++;
	now = clock__mono_ns();
	if (!p->slice_end_ns) {
		p->slice_end_ns = now + p->slice_ns;
	} else if (now >= p->slice_end_ns) {
		/* This sample is consumed: libbpf stops after it, the rest stays. */
		p->cut = true;
		return -ECANCELED;
	}
	return 0;
}

static int on_lifecycle(void *ctx, void *data, size_t size)
{
	struct profile *p = ctx;

	if (size < sizeof(struct sfbpf_event))
		return 0;
	p->nr_read++;
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
	skel->rodata->timed_samples = opts->timed_samples;
	skel->rodata->filter_cgroup = opts->cgroup != NULL;
	skel->rodata->wakeup_bytes =
		or_default(opts->ringbuf_bytes, PROFILE_DEFAULT_RINGBUF) / WAKEUP_FRACTION;
	skel->rodata->exit_wakeup_bytes =
		or_default(opts->event_ringbuf_bytes, DEFAULT_EVENT_RINGBUF) / WAKEUP_FRACTION;
	if (opts->notify_interval_ns)
		skel->rodata->notify_interval_ns = opts->notify_interval_ns;
	/* /proc/PID/stat counts in USER_HZ ticks: the procs entries' start times. */
	skel->rodata->clock_tick_ns = tck > 0 ? 1000000000ULL / tck : 0;
	skel->rodata->seg_shift = seg_shift(opts);
	bpfprog__set_kernel_rodata(skel->rodata);
	/* The CPU profiler samples current: the VMAs of a process without an entry (vmafind.h). */
	skel->rodata->have_find_vma = bpfprog__kernel()->find_vma && opts->user_stacks;
	/* Their programs name bpf_find_vma()'s callback: not loadable before 5.13. */
	bpf_program__set_autoload(skel->progs.sfbpf_exec_vmas, skel->rodata->have_find_vma);
	bpf_program__set_autoload(skel->progs.sfbpf_mmap, skel->rodata->have_find_vma);
	skel->rodata->page_shift = (__u32)__builtin_ctzl((unsigned long)sysconf(_SC_PAGESIZE));
#ifdef __aarch64__
	{ /* the PAC bits the unwinder strips from return addresses (bpf/arch.h) */
		uint64_t pac;

		if (!pacmask__user(&pac))
			skel->rodata->user_pac_mask = pac;
	}
#endif
}

/*
 * Samples, and the lifecycle events when someone listens: their ring first,
 * since ring_buffer__consume() reads the rings in the order they were added
 * (profile__poll_slice() relies on it).
 */
static int open_rings(struct profile *p)
{
	int err;

	if (!p->on_event) {
		p->rb = bpfprog__ring_new(bpf_map__fd(p->skel->maps.events), on_event, p, "sample");
		return p->rb ? 0 : -errno;
	}
	p->rb = bpfprog__ring_new(bpf_map__fd(p->skel->maps.lifecycle), on_lifecycle, p, "event");
	if (!p->rb)
		return -errno;
	err = ring_buffer__add(p->rb, bpf_map__fd(p->skel->maps.events), on_event, p);
	if (err)
		pr_warn("creating the sample ring buffer: %s", strerror(-err));
	return err;
}

struct profile *profile__new(const struct profile_opts *opts)
{
	struct profile *p;
	int err;

	err = check_opts(opts);
	p = err ? NULL : calloc(1, sizeof(*p));
	if (!p) {
		errno = err ? -err : ENOMEM;
		return NULL;
	}
	p->wake.epfd = p->wake.fd = -1;
	p->on_sample = opts->on_sample;
	p->on_event = opts->on_event;
	p->on_py_code = opts->on_py_code;
	p->ctx = opts->ctx;
	/* Per-CPU values are sized by the possible CPUs: count them first. */
	p->nr_cpus = bpfprog__nr_cpus();
	p->skel = p->nr_cpus > 0 ? profile_bpf__open() : NULL;
	err = bpfprog__opened(p->skel, p->nr_cpus, "profiling");
	if (err)
		goto cleanup;
	set_rodata(p->skel, opts);
	err = load(p, opts);
	/* A verifier that gave up on the walk's size: the same walk, smaller. */
	while (err == -E2BIG && bpfprog__fall_back()) {
		profile_bpf__destroy(p->skel);
		p->skel = profile_bpf__open();
		err = bpfprog__opened(p->skel, p->nr_cpus, "profiling");
		if (err)
			break;
		set_rodata(p->skel, opts);
		err = load(p, opts);
	}
	if (err)
		goto cleanup;
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
		pr_warn("sampling frequency must be > 0");
		return -EINVAL;
	}
	if (p->nr_links) {
		pr_warn("already attached");
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
				pr_warn("perf_event_open: %s; run as root (or with "
					"CAP_PERFMON)",
					strerror(-err));
			else if (err == -EINVAL)
				pr_warn("perf_event_open (cpu %d, %llu Hz): %s; is the "
					"frequency above kernel.perf_event_max_sample_rate?",
					cpu, (unsigned long long)freq_hz, strerror(-err));
			else
				pr_warn("perf_event_open (cpu %d): %s", cpu, strerror(-err));
			goto cleanup;
		}
		p->links[p->nr_links] = bpf_program__attach_perf_event(p->prog, fd);
		if (!p->links[p->nr_links]) {
			err = -errno;
			close(fd);
			pr_warn("attaching to cpu %d: %s", cpu, strerror(-err));
			goto cleanup;
		}
		p->nr_links++;
	}
	if (!p->nr_links) {
		pr_warn("no online CPU to attach to");
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

void profile__detach(struct profile *p)
{
	/*
	 * Closing an event removes it on its CPU by IPI, which cannot run while
	 * that CPU is inside the event's handler (and so the program).
	 */
	while (p && p->nr_links > 0)
		bpf_link__destroy(p->links[--p->nr_links]);
}

int profile__attach_lifecycle(struct profile *p)
{
	struct profile_bpf *skel = p->skel;
	int err;

	if (skel->links.sfbpf_exit)
		return -EBUSY;
	/* Exits first: an entry must never outlive its process once execs are seen. */
	err = bpfprog__attach_raw_tp(skel->progs.sfbpf_exit, "sched_process_exit",
				     &skel->links.sfbpf_exit);
	if (err)
		return err;
	err = bpfprog__attach_raw_tp(skel->progs.sfbpf_exec, "sched_process_exec",
				     &skel->links.sfbpf_exec);
	if (err) {
		bpf_link__destroy(skel->links.sfbpf_exit);
		skel->links.sfbpf_exit = NULL;
		return err;
	}
	/*
	 * Forks last: a copy's event must find the exits and execs heard
	 * already. SFBPF_NO_FORK_COPY=1: not at all (tests/forks.test, to show
	 * what the copies change).
	 */
	if (!getenv("SFBPF_NO_FORK_COPY") &&
	    bpfprog__attach_raw_tp(skel->progs.sfbpf_fork, "sched_process_fork",
				   &skel->links.sfbpf_fork))
		pr_warn("forked processes wait for their own tables (no sched_process_fork)");
	/* After sfbpf_exec, which drops the old image's: an exec'd process's first mappings. */
	if (skel->rodata->have_find_vma) {
		if (bpfprog__attach_raw_tp(skel->progs.sfbpf_exec_vmas, "sched_process_exec",
					   &skel->links.sfbpf_exec_vmas))
			pr_warn("exec'd processes' first mappings found at their samples only");
		if (bpfprog__attach_tracepoint(skel->progs.sfbpf_mmap, "syscalls", "sys_exit_mmap",
					       &skel->links.sfbpf_mmap))
			pr_warn("exec'd processes' libraries found at their samples only");
	}
	return 0;
}

int profile__poll(struct profile *p, int timeout_ms)
{
	return bpfprog__poll_wake(p->rb, &p->wake, timeout_ms, POLL_LATENCY_MS);
}

int profile__set_wake_fd(struct profile *p, int fd)
{
	bpfprog__wake_fini(&p->wake);
	return fd >= 0 ? bpfprog__wake_init(&p->wake, p->rb, fd) : 0;
}

int profile__poll_slice(struct profile *p, int timeout_ms, uint64_t slice_ns, bool *cut)
{
	int n;

	p->slice_ns = slice_ns;
	p->slice_end_ns = 0;
	p->nr_read = 0;
	p->cut = false;
	p->ended = false;
	n = bpfprog__poll_wake(p->rb, &p->wake, timeout_ms, POLL_LATENCY_MS);
	if (p->cut) {
		/*
		 * ring_buffer__poll() may have read the sample ring before the
		 * event ring: read the events now (their ring comes first in
		 * ring_buffer__consume()), and one sample with the slice spent.
		 */
		p->slice_end_ns = 1;
		ring_buffer__consume(p->rb);
		n = p->nr_read;
	}
	p->slice_ns = 0;
	p->ended_last = p->ended && p->cut;
	*cut = p->cut;
	return n;
}

void profile__end_slice(struct profile *p)
{
	/*
	 * Not twice in a row: during an exec storm every poll would read one
	 * sample, and the ring would overflow while its reader refreshes.
	 */
	if (!p->slice_ns || p->ended_last)
		return;
	p->slice_end_ns = 1; /* spent: the next sample read is the last */
	p->ended = true;
}

int profile__consume(struct profile *p)
{
	return ring_buffer__consume(p->rb);
}

int profile__stats(struct profile *p, __u64 out[SFBPF_STAT__COUNT])
{
	return bpfprog__sum_percpu(bpf_map__fd(p->skel->maps.stats), p->nr_cpus, out,
				   SFBPF_STAT__COUNT, "unwinder");
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

int profile__py_procs_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.py_procs);
}

int profile__hs_procs_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.hs_procs);
}

int profile__v8_procs_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.v8_procs);
}

int profile__php_procs_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.php_procs);
}

int profile__rb_procs_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.rb_procs);
}

int profile__pl_procs_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.pl_procs);
}

int profile__target_pids_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.target_pids);
}

int profile__cpu_run_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.cpu_run);
}

int profile__idents_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.idents);
}

bool profile__finds_vmas(const struct profile *p)
{
	return p->skel->rodata->have_find_vma;
}

int profile__vma_cache_fd(const struct profile *p)
{
	return bpf_map__fd(p->skel->maps.vma_cache);
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
	return bpf_program__fd(p->prog);
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	profile__detach(p);
	free(p->links);
	bpfprog__wake_fini(&p->wake);
	ring_buffer__free(p->rb);
	profile_bpf__destroy(p->skel); /* detaches the lifecycle programs */
	free(p);
}
