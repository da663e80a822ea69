// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Profiling session (see session.h): wiring, and the poll loop's housekeeping
 * (lifecycle events, table loading, exited processes). The counters are in
 * session_stats.c.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profile/bpfprog.h"
#include "interp/frame_names.h"
#include "profile/pythons.h"
#include "profile/runtimes.h"
#include "profile/session_int.h"
#include "profile/snapshot.h"
#include "util/log.h"
#include "util/clock.h"

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define DEFAULT_LINGER_MS 60000
#define DEFAULT_TABLE_WAIT_MS 10000
/*
 * Tables read back at start for files used before a restart, at most (in
 * free room only, within half the table budget: tables__preload).
 */
#define SESSION_PRELOAD_MAX 256
/* Housekeeping per poll: at most this long for each of lifecycle work and table pushes. */
#define HOUSEKEEPING_NS (20 * NSEC_PER_MSEC)
/* Poll timeout cap while work is queued, so that it is done promptly. */
#define BUSY_POLL_MS 10
/*
 * ... and while partial tables are being built: samples are read by timeout
 * (the ring wakes us only when full enough), and each frame a stack gains
 * takes one more sample read and one more table (tables__want_pc).
 */
#define PARTIAL_POLL_MS 2
/*
 * Samples read per poll before the lifecycle's turn: a sample may cost tens
 * of ms (a new object's symbols; under load, 100-300 ms for a ring's worth),
 * and an exec'd process's entry must not wait for all of them.
 */
#define READ_SLICE_NS (5 * NSEC_PER_MSEC)
/*
 * A fork's copy and its event are made in one run of a BPF program (a few
 * microseconds, never preempted): an event not yet in the ring this long
 * after a slot was freed belongs to a copy made after it, which cannot name it.
 */
#define FORK_EVENT_MARGIN_NS (10 * NSEC_PER_MSEC)
#define PROGRESS_EVERY_NS (100 * NSEC_PER_MSEC)
#define TRIM_EVERY_NS (5 * NSEC_PER_SEC)
/* How long the pages of DWARF files read for source lines stay mapped in. */
#define DWARF_PAGES_NS (250 * NSEC_PER_MSEC)


/* Bookkeeping every sample needs before it is aggregated. */
static void note_sample(struct session *s, const struct sfbpf_sample *smp)
{
	/*
	 * Snapshot the mappings now (the process may be gone when we symbolize);
	 * cheap unless the frames fall outside them (exec, dlopen): then re-read.
	 * Tables for processes the unwinder does not know are the lifecycle
	 * channel's business (lifecycle.h).
	 */
	symbolizer__note_sample(s->sym, smp->pid, smp->time_ns, (const uint64_t *)smp->ips,
				smp->nr_user);
	if (!session_bit_test(s->sampled, smp->pid)) {
		session_bit_set(s->sampled, smp->pid, true);
		/*
		 * Read after its exit (taken in do_exit, or read in a later
		 * round than the exit event): nothing would forget it. Queued
		 * now, it goes after the next table or profile. (A new process
		 * that reused the PID is noted again at its next sample.)
		 */
		if (session_bit_test(s->gone, smp->pid)) {
			session_bit_set(s->gone, smp->pid, false);
			session_queue_exited(s, smp->pid);
		}
	}
	/*
	 * The cgroup's path now, while its task runs: a container's cgroup is
	 * removed when it stops, before the profile holding its last samples
	 * is written, and an id no longer opens then (cached: one lookup per
	 * new id).
	 */
	if (s->cgroups && smp->cgroup_id)
		cgroups__path(s->cgroups, smp->cgroup_id);
	/* A cut stack names the code whose rows a table being built gives first. */
	if (s->procs && aggr_stop_truncated(smp->stop))
		proctrack__note_truncated(s->procs, smp->pid, smp->tid, (const uint64_t *)smp->ips,
					  smp->nr_user);
}

/*
 * Aggregates smp as ns of time, in microseconds. The rounding error carries
 * over from sample to sample, so the weights add up to the total time
 * (rounded down) however short the periods: no per-sample truncation bias.
 */
static int add_weighted(struct session *s, const struct sfbpf_sample *smp, size_t size, uint64_t ns)
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
	return err == -ENOSPC ? 0 : err; /* over the stack budget: counted, reading goes on */
}

/* The sample with its runtimes' frames named (runtimes.h), while the process lives. */
static const struct sfbpf_sample *splice_runtimes(struct session *s, const struct sfbpf_sample *smp,
						  size_t *size)
{
	return s->runtimes ? runtimes__splice(s->runtimes, smp, size) : smp;
}

static int on_sample(void *ctx, const struct sfbpf_sample *smp, size_t size)
{
	struct session *s = ctx;
	uint64_t period;

	s->received++;
	note_sample(s, smp);
	if (s->opts.tap)
		s->opts.tap(s->opts.tap_ctx, smp);
	smp = splice_runtimes(s, smp, &size);
	if (!s->opts.off_cpu) {
		int err = aggregator__add_raw(s->agg, smp, size);

		return err == -ENOSPC ? 0 : err; /* over the stack budget: counted */
	}
	/*
	 * on+off: a CPU sample stands for its thread's on-CPU time since its
	 * previous one, timed (SFBPF_SAMPLE_TIMED); else, for a thread running
	 * since before the start, for its weight in periods, more than one
	 * where the kernel skipped some (throttled) while it ran (profile.bpf.c).
	 */
	if (smp->flags & SFBPF_SAMPLE_TIMED)
		period = smp->weight;
	else
		period = NSEC_PER_SEC / s->opts.freq * (smp->weight ? smp->weight : 1);
	s->oncpu_ns += period;
	s->oncpu_samples++;
	return add_weighted(s, smp, size, period);
}

static int add_offcpu(struct session *s, const struct sfbpf_offcpu_sample *r, size_t size)
{
	uint64_t ns = r->end_ns - r->start_ns;
	const struct sfbpf_sample *smp = &r->s;

	note_sample(s, smp);
	if (r->state < SFBPF_STATE__COUNT)
		s->state_ns[r->state] += ns;
	size = size - SFBPF_OFFCPU_HDR_SIZE + SFBPF_SAMPLE_HDR_SIZE;
	smp = splice_runtimes(s, smp, &size);
	return add_weighted(s, smp, size, ns);
}

static int on_offcpu_sample(void *ctx, const struct sfbpf_offcpu_sample *r, size_t size)
{
	struct session *s = ctx;

	s->received++;
	if (s->opts.tap)
		s->opts.tap(s->opts.tap_ctx, &r->s);
	return add_offcpu(s, r, size);
}

static int on_blocked_at_end(void *ctx, const struct sfbpf_offcpu_sample *r, size_t size)
{
	struct session *s = ctx;

	s->at_end++;
	return add_offcpu(s, r, size);
}

/* A code object the Python walk described, before the samples holding it. */
static void on_py_code(void *ctx, const struct sfbpf_py_code *c, size_t size)
{
	struct session *s = ctx;

	if (s->runtimes)
		runtimes__describe(s->runtimes, &python_runtime, (int)c->pid, c, size);
}

static int on_event(void *ctx, const struct sfbpf_event *e)
{
	struct session *s = ctx;
	int err;

	if (!s->lc)
		return 0;
	err = lifecycle__event(s->lc, e);
	/* A sampled process to refresh (its first sample): the samples left wait for it. */
	if (lifecycle__urgent(s->lc))
		profile__end_slice(s->prof);
	return err;
}

const char *session__cgroup_path(struct session *s, uint64_t cgroup_id)
{
	return s->cgroups ? cgroups__path(s->cgroups, cgroup_id) : NULL;
}

/*
 * The sample ring: a second of samples of 1 KiB (a 120-frame stack) from
 * every CPU, as a power of two within [1, 8] MiB. The reader drains it every
 * 50 ms at most; the ring's pages are mapped into sfbpf-top (twice, by
 * libbpf) and count in its RSS once written, so a fixed 8 MiB cost 16 MB of
 * RSS on a machine sampled at 99 Hz that needs a few hundred KiB.
 */
static __u32 sample_ring_bytes(const struct session *s)
{
	int cpus = bpfprog__nr_cpus();
	uint64_t want = (uint64_t)(cpus > 0 ? cpus : 1) * (s->opts.freq ? s->opts.freq : 1) * 1024;
	__u32 bytes = 1u << 20;

	while (bytes < want && bytes < PROFILE_DEFAULT_RINGBUF)
		bytes <<= 1;
	return bytes;
}

/*
 * The lifecycle ring (40-byte exec, exit and fork events): 64 KiB a CPU,
 * as a power of two within [256 KiB, 4 MiB]. A fixed 256 KiB overflowed on
 * 16 CPUs of shells exec'ing /bin/true (13,000 events a second: 6,013 lost
 * in 10 s while the reader read the new processes); a lost fork copy or exec
 * costs walks, never a wrong one (DESIGN-lifecycle.md).
 */
static __u32 event_ring_bytes(void)
{
	int cpus = bpfprog__nr_cpus();
	uint64_t want = (uint64_t)(cpus > 0 ? cpus : 1) << 16;
	__u32 bytes = 256u << 10;

	while (bytes < want && bytes < (4u << 20))
		bytes <<= 1;
	return bytes;
}

/*
 * The profile program owns the table maps and follows processes, in every
 * mode; it samples the CPUs only in the CPU modes (attach()).
 */
static int open_profile(struct session *s, const struct tables_sizes *sz)
{
	struct profile_opts opts = {
		.max_frames = s->opts.max_frames,
		.user_stacks = s->opts.user_stacks,
		.kernel_stacks = s->opts.kernel_stacks,
		.filter_pids = s->opts.nr_pids > 0,
		.skip_idle = true,
		.timed_samples = s->opts.off_cpu && s->opts.on_off,
		.cgroup = s->cpu ? s->opts.cgroup : NULL,
		.max_rows = sz->rows,
		.max_rules = sz->rules,
		.max_objects = sz->objects,
		.max_pages = sz->pages,
		.seg_shift = sz->seg_shift,
		.ringbuf_bytes = sample_ring_bytes(s),
		.event_ringbuf_bytes = event_ring_bytes(),
		.on_sample = on_sample,
		.on_event = on_event,
		.on_py_code = on_py_code,
		.ctx = s,
	};

	s->prof = profile__new(&opts);
	if (!s->prof) {
		/* profile__new() said why; errno alone would call a refusal EACCES. */
		pr_warn("the profiling BPF program is not loaded: sfbpf-top cannot start");
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
			  s->opts.on_off ? SFBPF_STATES_ALL :
					   SFBPF_STATES_BLOCKED,
		.min_ns = s->opts.min_block_us * 1000,
		.max_ns = s->opts.max_block_us * 1000,
		/* on+off: a CPU sample due while the program runs is next's */
		.with_cpu_samples = s->opts.on_off,
		.seg_shift = s->seg_shift,
		.on_sample = on_offcpu_sample,
		.on_py_code = on_py_code,
		.ctx = s,
	};
	const struct ksym *sched = s->ksyms ? ksyms__get_by_name(s->ksyms, "__schedule") : NULL;

	if (sched) {
		opts.sched_start = sched->addr;
		opts.sched_end = sched->end;
	}
	{
		shared = (struct offcpu_shared_maps){
			.rows = profile__rows_fd(s->prof),
			.rules = profile__rules_fd(s->prof),
			.objects = profile__objects_fd(s->prof),
			.pages = profile__pages_fd(s->prof),
			.procs = profile__procs_fd(s->prof),
			.py_procs = profile__py_procs_fd(s->prof),
			.hs_procs = profile__hs_procs_fd(s->prof),
			.v8_procs = profile__v8_procs_fd(s->prof),
			.php_procs = profile__php_procs_fd(s->prof),
			.rb_procs = profile__rb_procs_fd(s->prof),
			.pl_procs = profile__pl_procs_fd(s->prof),
			.target_pids = profile__target_pids_fd(s->prof),
			.cpu_run = profile__cpu_run_fd(s->prof),
		};
		opts.shared = &shared;
	}
	s->off = offcpu__new(&opts);
	if (!s->off) {
		pr_warn("the off-CPU BPF program is not loaded: sfbpf-top cannot start");
		return -errno;
	}
	return 0;
}

static int open_bpf(struct session *s, const struct tables_sizes *sz)
{
	int err;

	if (s->opts.off_cpu) {
		s->weighted = malloc(sizeof(*s->weighted));
		if (!s->weighted)
			return -ENOMEM;
	}
	err = open_profile(s, sz);
	if (!err && s->opts.off_cpu)
		err = open_offcpu(s);
	return err;
}

static int open_tables(struct session *s, const struct tables_sizes *sz)
{
	int wfd, werr;
	struct tables_opts topts = {
		.rows_fd = profile__rows_fd(s->prof),
		.rules_fd = profile__rules_fd(s->prof),
		.objects_fd = profile__objects_fd(s->prof),
		.pages_fd = profile__pages_fd(s->prof),
		.max_rows = sz->rows,
		.max_rules = sz->rules,
		.max_objects = sz->objects,
		.max_pages = sz->pages,
		.seg_shift = sz->seg_shift,
		.budget_bytes = s->table_budget,
		.no_cfi = s->opts.sframe_only,
		.no_partial = s->opts.no_partial_tables,
		.obj_hits_fd = profile__obj_hits_fd(s->prof),
		.idents_fd = profile__idents_fd(s->prof),
		.async = true,
		.linger_ns =
			(s->opts.linger_ms ? s->opts.linger_ms : DEFAULT_LINGER_MS) * NSEC_PER_MSEC,
		.min_residency_ns = s->opts.min_residency_ms * NSEC_PER_MSEC,
	};
	struct lifecycle_opts lopts = {
		.notify_fd = profile__notify_fd(s->prof),
		.follow_execs = true,
		.on_exec = session_on_exec,
		.on_exit = session_on_exit,
		.on_fork = session_on_fork,
		.on_young = session_on_young,
		.ctx = s,
	};
	struct tablecache_opts copts = {
		.dir = s->opts.table_cache,
		.max_bytes = s->opts.max_table_cache,
		.no_cfi = s->opts.sframe_only,
	};

	if (!s->opts.no_table_cache) {
		s->table_cache = tablecache__new(&copts);
		if (!s->table_cache)
			return -ENOMEM;
		topts.cache = tablecache__enabled(s->table_cache) ? s->table_cache : NULL;
	}
	s->tables = tables__new(&topts);
	/* SFBPF_NO_KERNEL_NAMES=1: not at all (tests/execs.test, to show what they name). */
	if (s->tables && profile__finds_vmas(s->prof) && !getenv("SFBPF_NO_KERNEL_NAMES"))
		symbolizer__set_kernel_maps(s->sym, session_kernel_maps, s);
	s->procs = s->tables ? proctrack__new(s->tables, profile__procs_fd(s->prof)) : NULL;
	if (s->procs) {
		struct runtime_host host = { .prof = s->prof,
					     .jit_name = session_jit_name,
					     .set_jit = session_set_jit,
					     .ctx = s };

		s->runtimes = runtimes__new(&host);
	}
	if (s->procs && !s->runtimes)
		return -ENOMEM;
	if (s->runtimes) {
		struct proctrack_listener pl = { .updated = session_on_maps,
						 .removed = session_on_removed,
						 .ctx = s };

		s->rt_listener = runtimes__listener(s->runtimes);
		proctrack__set_listener(s->procs, &pl);
	}
	lopts.procs = s->procs;
	/*
	 * Tests hold the exec's refresh back to show what does not wait for
	 * it (tests/plprofile.test, "young": a runtime attached from the
	 * process's first samples).
	 */
	if (getenv("SFBPF_EXEC_DELAY_MS"))
		lopts.exec_delay_ns =
			strtoull(getenv("SFBPF_EXEC_DELAY_MS"), NULL, 10) * NSEC_PER_MSEC;
	s->lc = s->procs ? lifecycle__new(&lopts) : NULL;
	/*
	 * A finished build is published at once, not at the next fill mark of
	 * the sample ring (up to BUSY_POLL_MS): a new program's first complete
	 * stack waits for it. Without the eventfd, polls end as before.
	 */
	/* Off-CPU, the session waits on that stream; the CPU samples are then read without waiting.
	 */
	wfd = s->lc ? tables__wake_fd(s->tables) : -1;
	werr = wfd < 0 ? 0 :
	       s->off  ? offcpu__set_wake_fd(s->off, wfd) :
			 profile__set_wake_fd(s->prof, wfd);
	if (werr)
		pr_debug("table builds do not wake the sampling thread: %s", strerror(-werr));
	return s->lc ? 0 : -ENOMEM;
}

/*
 * Building a table takes tens of MiB for a big binary, on the loader threads,
 * whose malloc arenas keep the pages once freed (no arena is trimmed while
 * chunks stay in use at its top); so does the heap after symbol tables are
 * compacted, stacks symbolized and outputs written, and libdw with the DWARF
 * sections of every object an output wanted lines of. Give free pages back once
 * no table is pending (after a burst of loads), and every TRIM_EVERY_NS.
 */
static void trim(struct session *s)
{
	bool loading = tables__pending(s->tables) > 0;
	uint64_t now = clock__mono_ns();

	/*
	 * DWARF an output read (source lines): closed once unused, else its
	 * file's pages given back (they stay in the page cache) so that only
	 * what the last lookups touched counts in our RSS.
	 */
	if (s->sym && now - s->dwarf_pages_ns >= DWARF_PAGES_NS) {
		symbolizer__release_lines(s->sym, now - TRIM_EVERY_NS);
		s->dwarf_pages_ns = now;
	}
	if ((s->loading && !loading) || now - s->trimmed_ns >= TRIM_EVERY_NS) {
		malloc_trim(0);
		s->trimmed_ns = now;
	}
	s->loading = loading;
}

/* Lifecycle work and finished tables, each within its time budget. */
static int mark_python(const struct aggr_stack *st, void *ctx)
{
	(void)ctx;
	for (uint32_t i = 0; i < st->nr_user; i++)
		frame_names__mark(st->ips[i]);
	return 0;
}

/*
 * The Python names no aggregated stack holds, freed when the table nears its
 * budget (frame_names.h). A collection walks every stack: at most once a
 * second, and while they free less than an eighth of the budget (every name
 * held: a long profile that keeps its stacks) twice as seldom each time, up
 * to once a minute; refusals are counted meanwhile.
 */
static void collect_frame_names(struct session *s)
{
	uint64_t now;

	if (!s->runtimes || !frame_names__want_collect())
		return;
	now = clock__mono_ns();
	if (now < s->names_next_ns)
		return;
	runtimes__mark_names(s->runtimes);
	aggregator__for_each(s->agg, mark_python, NULL);
	if (frame_names__sweep() >= s->budgets.frame_names / 8)
		s->names_wait_ns = NSEC_PER_SEC;
	else
		s->names_wait_ns = s->names_wait_ns ? s->names_wait_ns * 2 : NSEC_PER_SEC;
	if (s->names_wait_ns > 64 * NSEC_PER_SEC)
		s->names_wait_ns = 64 * NSEC_PER_SEC;
	s->names_next_ns = now + s->names_wait_ns;
}

static bool busy(struct session *s)
{
	struct lifecycle_stats ls;

	if (s->tables && tables__pending(s->tables))
		return true;
	if (!s->lc)
		return false;
	lifecycle__stats(s->lc, &ls);
	return ls.queued > 0;
}

static void housekeeping(struct session *s)
{
	collect_frame_names(s);
	if (s->lc)
		lifecycle__process(s->lc, HOUSEKEEPING_NS);
	if (s->tables) {
		tables__process(s->tables, HOUSEKEEPING_NS);
		trim(s);
	}
	/*
	 * New files' symbols after the entries and tables above: reading a big
	 * binary's (tens of milliseconds) in its exec's snapshot delayed its
	 * process's entry, and so its first unwound stack, by as much.
	 */
	symbolizer__settle(s->sym, !busy(s));
	/* Samples before an exit read so far are all read only once a round was not cut. */
	if (!s->cut) {
		s->drains++;
		session_forget_unsampled(s, false);
		/* Every fork's event written before this round began was read in it. */
		if (s->tables && s->round_ns > FORK_EVENT_MARGIN_NS)
			tables__fork_horizon(s->tables, s->round_ns - FORK_EVENT_MARGIN_NS);
		if (s->runtimes)
			runtimes__drained(s->runtimes);
	}
	if (s->exited && s->exited_tail - s->exited_head >= s->max_exited)
		session_forget_overflow(s);
}

static void progress(struct session *s, bool done)
{
	struct tables_stats ts;

	if (!s->opts.progress)
		return;
	tables__stats(s->tables, &ts);
	fprintf(stderr, "\rsfbpf: loading unwind tables: %u loaded, %u to go, %.1f M rows%s",
		ts.objects, ts.objects_pending, ts.rows_used / 1e6, done ? "\n" : "   ");
}

/*
 * The tables found by the scan, loaded before sampling starts so the first
 * samples unwind; the events of processes starting meanwhile are handled too.
 * System-wide, huge binaries may take long: sampling starts after
 * table_wait_ms anyway (their frames use the frame-pointer chain meanwhile,
 * counted as table_pending); the targets of -p are always waited for.
 */
static void wait_tables(struct session *s, uint64_t mark)
{
	uint64_t next = 0, now, end = 0;
	int wait_ms = s->opts.table_wait_ms ? s->opts.table_wait_ms : DEFAULT_TABLE_WAIT_MS;

	if (wait_ms > 0 && !s->opts.nr_pids)
		end = clock__mono_ns() + wait_ms * NSEC_PER_MSEC;
	s->opts.progress = s->opts.progress && isatty(STDERR_FILENO);
	/*
	 * Only the builds the scan started: on a machine that keeps starting
	 * processes, the exec refreshes would otherwise keep us here until the cap.
	 */
	while (tables__pending_at(s->tables, mark) && (!end || clock__mono_ns() < end) &&
	       !(s->opts.stop && *s->opts.stop)) {
		s->round_ns = clock__mono_ns();
		profile__poll_slice(s->prof, BUSY_POLL_MS, READ_SLICE_NS, &s->cut);
		housekeeping(s);
		now = clock__mono_ns();
		if (now >= next) {
			progress(s, false);
			next = now + PROGRESS_EVERY_NS;
		}
	}
	progress(s, true);
}

/*
 * With --cgroup, only the processes in it need tables (the BPF side samples
 * and reports no others); a directory we cannot place keeps them all.
 */
static bool scan_wanted(void *ctx, int pid)
{
	struct session *s = ctx;

	if (!s->cpu || !s->opts.cgroup || !s->cgroups)
		return true;
	return cgroups__pid_under(s->cgroups, pid, s->opts.cgroup) != 0;
}

/* Tables for the targets, before sampling starts, so the first samples unwind. */
static int load_targets(struct session *s)
{
	int i, err, fd = profile__target_pids_fd(s->prof);
	double start = clock__mono_s();
	__u8 one = 1;

	/* The filter first: the lifecycle programs only report the targets. */
	for (i = 0; i < s->opts.nr_pids; i++) {
		__u32 pid = s->opts.pids[i];

		err = bpf_map_update_elem(fd, &pid, &one, BPF_ANY);
		if (err) {
			pr_warn("cannot filter PID %u: %s", pid, strerror(-err));
			return err;
		}
	}
	if (!s->opts.user_stacks)
		return 0;
	/* Before the scan: a process starting during it is not missed. */
	err = profile__attach_lifecycle(s->prof);
	if (err)
		return err;
	if (!s->opts.nr_pids) {
		err = proctrack__scan_filtered(s->procs, scan_wanted, s);
		pr_info("found %d processes", err);
	}
	for (i = 0; i < s->opts.nr_pids; i++) {
		err = proctrack__refresh(s->procs, s->opts.pids[i]);
		if (err == -ESRCH || err == -ENOENT) {
			pr_warn("no process with PID %d", s->opts.pids[i]);
			return -ESRCH;
		}
	}
	wait_tables(s, tables__mark(s->tables));
	pr_info("tables loaded in %.2f s", clock__mono_s() - start);
	/*
	 * Then, system-wide, the tables of the files used before a restart
	 * (the table cache's identity index), in the background: a process
	 * started from now on finds its tables loaded, as it would have
	 * before the restart. The running processes' come first.
	 */
	if (!s->opts.nr_pids)
		tables__preload(s->tables, SESSION_PRELOAD_MAX);
	return 0;
}

static int attach(struct session *s)
{
	int err;

	if (s->opts.off_cpu && s->opts.on_off && !s->opts.freq) {
		pr_warn("on+off needs a sampling frequency");
		return -EINVAL;
	}
	if (s->cpu) {
		err = profile__attach(s->prof, s->opts.freq);
		if (err) {
			pr_warn("cannot attach to the CPUs: %s", strerror(-err));
			return err;
		}
		/* From here every sample is taken (tests wait for this line before they act). */
		pr_info("sampling at %lu Hz", (unsigned long)s->opts.freq);
	}
	if (s->off) {
		/* Before attaching: every period recorded starts inside the window. */
		s->attach_ns = clock__mono_ns();
		err = offcpu__attach(s->off);
		if (err) {
			pr_warn("cannot trace context switches: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

int session__open(struct session **sp, const struct session_opts *opts)
{
	struct session *s = *sp = calloc(1, sizeof(*s));
	struct tables_sizes sz;
	int err;

	if (!s) {
		pr_warn("out of memory");
		return -ENOMEM;
	}
	s->opts = *opts;
	s->cpu = !opts->off_cpu || opts->on_off;
	s->start_time = clock__mono_s();
	s->agg = aggregator__new();
	s->sym = symbolizer__new();
	s->ksyms = ksyms__new(); /* NULL is fine: kernel frames stay addresses */
	s->cgroups = cgroups__new(); /* NULL is fine: cgroups stay ids */
	s->sampled = calloc(SESSION_PID_BITS / 8, 1);
	s->gone = calloc(SESSION_PID_BITS / 8, 1);
	s->exited = calloc(SESSION_MAX_EXITED, sizeof(*s->exited));
	s->max_exited = SESSION_KEEP_EXITED;
	/* Tests reach the limit with fewer processes (tests/execs.test, "kept"). */
	if (getenv("SFBPF_MAX_EXITED")) {
		long v = strtol(getenv("SFBPF_MAX_EXITED"), NULL, 10);

		if (v >= 4 && v < SESSION_KEEP_EXITED)
			s->max_exited = (uint32_t)v;
	}
	s->unsampled = calloc(SESSION_MAX_EXITED, sizeof(*s->unsampled));
	if (!s->agg || !s->sym || !s->sampled || !s->gone || !s->exited) {
		pr_warn("out of memory");
		return -ENOMEM;
	}
	/* New files' symbols after the work that unwinds their processes (housekeeping). */
	symbolizer__set_defer(s->sym, true);
	session__set_budgets(s);
	if (opts->cgroup) {
		err = cgroups__check_dir(s->cgroups, opts->cgroup);
		if (err)
			return err;
	}
	s->table_budget = opts->max_table_mem ? opts->max_table_mem : tables__default_budget();
	tables__size_budget(s->table_budget, &sz);
	s->seg_shift = sz.seg_shift;
	err = open_bpf(s, &sz);
	if (!err)
		err = open_tables(s, &sz);
	if (!err)
		err = load_targets(s);
	if (!err)
		err = attach(s);
	s->attach_time = clock__mono_s();
	return err;
}

static int poll_samples(struct session *s, int timeout_ms)
{
	int n, m;

	s->round_ns = clock__mono_ns();
	if (!s->off)
		return profile__poll_slice(s->prof, timeout_ms, READ_SLICE_NS, &s->cut);
	/* The off-CPU stream is the busy one: wait on it, then read the CPU samples (and events).
	 */
	n = offcpu__poll(s->off, timeout_ms);
	if (n < 0)
		return n;
	m = profile__poll_slice(s->prof, 0, READ_SLICE_NS, &s->cut);
	return m < 0 ? m : n + m;
}

int session__poll(struct session *s, int timeout_ms)
{
	int n;

	if (timeout_ms > BUSY_POLL_MS && busy(s))
		timeout_ms = BUSY_POLL_MS;
	if (timeout_ms > PARTIAL_POLL_MS && s->tables && tables__partial_active(s->tables))
		timeout_ms = PARTIAL_POLL_MS;
	n = poll_samples(s, timeout_ms);
	if (n >= 0 || n == -EINTR)
		housekeeping(s);
	return n;
}

void session__stop(struct session *s)
{
	if (s->off && !s->stopped) {
		/* Detached first: whatever is left in the map was off-CPU at the end. */
		offcpu__detach(s->off);
		s->end_ns = clock__mono_ns();
		offcpu__poll(s->off, 0);
		offcpu__for_each_blocked(s->off, s->end_ns, on_blocked_at_end, s);
	}
	s->stopped = true;
	if (s->prof) {
		/*
		 * Sampling stops before the last read: a sample half taken on
		 * another CPU would count among the stops but not yet among
		 * the emitted, and one emitted after it would never be read.
		 */
		profile__detach(s->prof);
		profile__poll(s->prof, 0);
	}
}

void session__close(struct session *s)
{
	if (!s)
		return;
	lifecycle__free(s->lc);
	proctrack__free(s->procs);
	runtimes__free(s->runtimes);
	tables__free(s->tables);
	tablecache__free(s->table_cache);
	offcpu__free(s->off);
	profile__free(s->prof);
	aggregator__free(s->agg);
	symbolizer__free(s->sym);
	ksyms__free(s->ksyms);
	cgroups__free(s->cgroups);
	free(s->sampled);
	free(s->gone);
	free(s->exited);
	snapshot__free(s->kept);
	free(s->unsampled);
	free(s->weighted);
	free(s);
}
