/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A profiling session: the BPF program, the tables it unwinds with, the
 * processes it covers, and what userspace made of the samples so far
 * (aggregated stacks, symbols). Every front end — plain run, live view,
 * continuous mode — drives one session: open, poll until done, read, close.
 * A session is opaque: what a front end reads of it goes through the
 * functions below (session__snapshot() for the writers).
 *
 * Modes: CPU (default: the profile program, one count per sample), off-CPU
 * (the sched_switch program: every off-CPU period of a thread is one sample
 * weighted by its length) and on+off (both, CPU samples weighted by the
 * sampling period: a thread's on- and off-CPU time add up to wall time). In
 * the off-CPU modes the aggregator's weights are microseconds
 * (session__weighted()): write them with folded_opts.weight. See
 * docs/DESIGN-offcpu.md.
 */
#ifndef SFBPF_SESSION_H
#define SFBPF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include "profile/aggregate.h"
#include "procs/cgroups.h"
#include "symbols/ksyms.h"
#include "procs/lifecycle.h"
#include "profile/offcpu.h"
#include "profile/profile.h"
#include "procs/proctrack.h"
#include "interp/frame_names.h"
#include "profile/runtimes.h"
#include "symbols/symbolize.h"
#include "maps/tables.h"
#include "tables/tablecache.h"

#define SESSION_MAX_PIDS 1024
/*
 * Exited processes whose mappings the symbolizer keeps for the outputs
 * (aggregated stacks are symbolized at output time); past SESSION_KEEP_EXITED
 * the oldest quarter's stacks are named at once (kept for the outputs) and
 * those processes forgotten, once a poll round has read their samples: the
 * ring holds SESSION_MAX_EXITED while they wait. session__forget_exited()
 * forgets them all at once.
 */
#define SESSION_KEEP_EXITED 4096
#define SESSION_MAX_EXITED (2 * SESSION_KEEP_EXITED)

struct session_opts {
	int pids[SESSION_MAX_PIDS]; /* empty: the whole system */
	int nr_pids;
	unsigned long freq; /* samples per second per CPU */
	bool user_stacks, kernel_stacks;
	unsigned max_frames; /* 0: SFBPF_MAX_FRAMES */
	bool sframe_only; /* no tables synthesized from .eh_frame */
	/* Off-CPU analysis. */
	bool off_cpu; /* off-CPU periods, weighted by their length (µs) */
	bool on_off; /* with off_cpu: CPU samples too, weighted by the period (µs) */
	unsigned states; /* SFBPF_STATE_BIT() mask; 0: all but running (off_cpu), all (on_off) */
	uint64_t min_block_us; /* keep off-CPU periods of min_block_us ... */
	uint64_t max_block_us; /* ... to max_block_us (0: no upper bound) */
	const char *cgroup; /* only tasks in this cgroup v2 directory (or below) */
	/* Tables (docs/DESIGN-lifecycle.md). */
	uint64_t max_table_mem; /* BPF table map budget in bytes; 0: tables__default_budget() */
	uint64_t linger_ms; /* unreferenced tables kept this long; 0: 60 s */
	uint64_t min_residency_ms; /* loaded tables safe from eviction by hotter ones; 0: 30 s */
	/* While a table builds, no rows of its sampled code first (tables__want_pc). */
	bool no_partial_tables;
	int table_wait_ms; /* before sampling, wait for the first tables: < 0 all, 0: 10 s */
	/* Built tables kept across restarts (tables/tablecache.h). */
	bool no_table_cache;
	const char *table_cache; /* its directory; NULL: TABLECACHE_DEFAULT_DIR */
	uint64_t max_table_cache; /* bytes; 0: tablecache__default_budget() */
	/* Userspace memory budgets in bytes; 0: session__default_budgets(). */
	uint64_t max_stack_mem; /* aggregated stacks (aggregate.h) */
	uint64_t max_symbol_mem; /* objects no process maps any more, kept for reuse (symcache.h) */
	uint64_t max_jit_mem; /* every process's JIT map together (perfmap.h) */
	uint64_t max_python_mem; /* names of Python frames (interp/frame_names.h) */
	uint64_t max_dwarf_files; /* descriptors kept on DWARF (symcache.h); a count */
	uint64_t max_spill; /* disk for inflated DWARF (srcline.h) */
	bool progress; /* a progress line while the first tables load (stderr a tty) */
	/* Set by a signal handler: stop waiting for the first tables at once. */
	const volatile sig_atomic_t *stop;
	/* Called with every sample received (CPU and off-CPU), after it is counted. */
	void (*tap)(void *ctx, const struct sfbpf_sample *smp);
	void *tap_ctx;
};

/* Budgets that follow the machine (its RAM), as tables__default_budget() does. */
struct session_budgets {
	uint64_t stacks; /* RAM/64 within 32 MiB..1 GiB */
	uint64_t symbols; /* RAM/256 within 16 MiB..256 MiB */
	uint64_t jit_maps; /* RAM/256 within 16 MiB..256 MiB */
	uint64_t frame_names; /* RAM/256 within 16 MiB..256 MiB */
	uint64_t dwarf_files; /* a quarter of RLIMIT_NOFILE's soft limit, within 16..4096 */
	uint64_t spill; /* srcline__default_spill_budget() */
};
void session__default_budgets(struct session_budgets *out);

struct session;
struct snapshot;

/*
 * Load the BPF program, load tables for the target processes (or all), and
 * start sampling, into a new session *sp. Prints a one-line reason on stderr
 * and returns a negative errno on failure (-ESRCH: a target PID does not
 * exist); *sp is then NULL, or a session to session__close().
 */
int session__open(struct session **sp, const struct session_opts *opts);
/* Read samples for up to timeout_ms; returns samples handled or a negative errno. */
int session__poll(struct session *s, int timeout_ms);
/*
 * Stop sampling and read what is still in the ring buffer. Off-CPU: stop
 * tracing, then count the threads still off-CPU up to now.
 */
void session__stop(struct session *s);
/* Frees everything of s (NULL: nothing). */
void session__close(struct session *s);

/*
 * What the front ends read of a session, whose fields are its own: what it
 * aggregated so far as one symbolized snapshot for the writers (snapshot.h;
 * NULL + errno), and the parts the live view's model reads as it goes (the
 * aggregated stacks, the symbolizer naming their user frames, kallsyms or
 * NULL), the options it was opened with, when sampling started
 * (CLOCK_MONOTONIC seconds), whether it was stopped, whether it knows cgroup
 * paths (session__cgroup_path()).
 */
struct snapshot *session__snapshot(struct session *s);
struct aggregator *session__aggregator(struct session *s);
struct symbolizer *session__symbolizer(struct session *s);
const struct ksyms *session__ksyms(const struct session *s);
const struct session_opts *session__opts(const struct session *s);
/* The memory budgets in force: the options', else the defaults. */
const struct session_budgets *session__budgets(const struct session *s);
/* Whether its stacks weigh time (µs: off-CPU, on+off), not samples. */
bool session__weighted(const struct session *s);
double session__attach_time(const struct session *s);
bool session__stopped(const struct session *s);
bool session__has_cgroups(const struct session *s);

/*
 * Forget the mappings of the processes that exited so far (once the samples
 * taken before their exit were read): call after writing and resetting the
 * aggregated stacks, which no longer need them.
 */
void session__forget_exited(struct session *s);
/* The cgroup v2 path of a sample's cgroup_id ("/system.slice/x.service"), or NULL. */
const char *session__cgroup_path(struct session *s, uint64_t cgroup_id);

struct session_stats {
	__u64 bpf[SFBPF_STAT__COUNT]; /* both programs' unwinding counters, summed */
	__u64 offcpu[SFBPF_OFFCPU_STAT__COUNT];
	uint64_t state_ns[SFBPF_STATE__COUNT];
	uint64_t oncpu_ns;
	uint64_t oncpu_samples; /* the CPU samples it came from */
	uint64_t at_end;
	uint64_t window_ns; /* traced so far (or until session__stop) */
	uint64_t received;
	struct tables_stats tables;
	struct tablecache_stats table_cache;
	struct proctrack_stats procs;
	struct runtimes_stats runtimes;
	struct frame_names_stats frame_names;
	struct lifecycle_stats lifecycle;
	uint64_t forgotten;
	uint64_t kept; /* of those, processes whose stacks were named before (snapshot__keep()) */
	struct aggr_totals stacks;
	uint64_t stack_bytes;
	struct symbolizer_stats sym;
	uint64_t rss_bytes; /* this process's resident memory */
	uint64_t heap_in_use_bytes; /* malloc's blocks handed out (util/glibc.h) */
	uint64_t heap_free_bytes; /* free, kept in malloc's arenas */
	uint64_t map_bytes; /* memory of the BPF maps it holds (their fdinfo's memlock) */
};

void session__stats(struct session *s, struct session_stats *out);
/* "sfbpf: stat NAME VALUE" lines: the names scripts parse (see README). */
void session__print_stats(struct session *s, FILE *f);
/*
 * The same counters, one call each, to cb: the name as --stats prints it
 * ("samples", "stop.outermost"...), the value, and whether it is a level
 * (gauge: table rows, memory) rather than a count that only grows. The one
 * list of names: --stats and the metrics endpoint both come from here.
 */
typedef void (*session_stat_cb)(void *ctx, const char *name, uint64_t value, bool gauge);
void session__for_each_stat(struct session *s, session_stat_cb cb, void *ctx);
/* Off-CPU modes: time per thread state (and on-CPU), for people. */
void session__print_offcpu_summary(struct session *s, FILE *f);

#endif /* SFBPF_SESSION_H */
