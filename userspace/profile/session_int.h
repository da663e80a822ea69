/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside a session: its fields, which session.c (wiring, polling,
 * housekeeping), session_stats.c (counters), session_read.c (what front
 * ends read) and session_budgets.c (the budgets in force) share. Not for
 * other modules, which use session.h; white-box tests may look in.
 */
#ifndef SFBPF_SESSION_INT_H
#define SFBPF_SESSION_INT_H

#include "procs/proctrack.h"
#include "profile/session.h"

struct session_exited {
	int pid;
	uint64_t drain; /* the poll round in which its exit was seen */
};

struct session {
	struct session_opts opts;
	struct profile *prof; /* owns the table maps and the lifecycle programs */
	bool cpu; /* CPU samples (the profile program attached to the CPUs) */
	struct tables *tables;
	struct tablecache *table_cache; /* NULL: --no-table-cache */
	struct proctrack *procs;
	struct runtimes *runtimes; /* CPython's and HotSpot's processes and frames */
	struct proctrack_listener rt_listener; /* the runtimes' (session_on_maps() calls it) */
	struct lifecycle *lc;
	struct cgroups *cgroups; /* NULL: no cgroup2 mount */
	struct aggregator *agg; /* everything received since open (or the last reset) */
	struct symbolizer *sym;
	struct ksyms *ksyms;
	uint8_t *sampled; /* pids with samples: the symbolizer knows them */
	uint8_t *gone; /* pids whose exit was seen (until an exec, or a sample queues it) */
	struct session_exited *exited; /* SESSION_MAX_EXITED, a ring */
	uint32_t exited_head, exited_tail;
	/*
	 * Exits of forked children named with their parent's mappings but not
	 * sampled: forgotten once a round has read the samples before them (a
	 * ring of SESSION_MAX_EXITED too; a sampled one moves to exited).
	 */
	struct session_exited *unsampled;
	uint32_t unsampled_head, unsampled_tail;
	uint64_t drains; /* poll rounds that read the sample ring to its end */
	bool cut; /* the last poll left samples in the ring (profile__poll_slice) */
	uint64_t round_ns; /* when the last poll round began (tables__fork_horizon) */
	bool loading; /* tables were pending at the last poll round */
	uint64_t trimmed_ns; /* free memory last given back (malloc_trim) */
	uint64_t dwarf_pages_ns; /* DWARF files' pages last given back */
	uint64_t forgotten; /* exited processes the symbolizer was told to forget */
	/*
	 * Names of the aggregated stacks of exited processes forgotten past
	 * max_exited (snapshot.h, snapshot__keep()): the outputs written later
	 * name them as they were. kept_processes: how many such processes.
	 */
	struct snapshot *kept;
	uint64_t kept_processes;
	uint32_t max_exited; /* SESSION_KEEP_EXITED, or less (SFBPF_MAX_EXITED, for tests) */
	uint64_t table_budget;
	struct session_budgets budgets; /* in force: the options, else the defaults */
	uint64_t names_next_ns, names_wait_ns; /* Python names collections: the next, the pace */
	uint32_t seg_shift; /* the table maps' segments (tables_sizes), which off-CPU shares */
	uint64_t received;
	double start_time, attach_time; /* CLOCK_MONOTONIC seconds */
	/* Off-CPU modes. */
	struct offcpu *off;
	struct sfbpf_sample *weighted; /* a sample copy carrying its weight in µs */
	uint64_t weight_ns, weight_us; /* time given to the aggregator so far */
	uint64_t state_ns[SFBPF_STATE__COUNT]; /* off-CPU time per thread state */
	uint64_t oncpu_ns; /* on_off: the CPU samples' weights (on_sample) */
	uint64_t oncpu_samples;
	uint64_t at_end; /* off-CPU periods still open at the end, counted up to it */
	uint64_t attach_ns, end_ns; /* the traced window (CLOCK_MONOTONIC ns) */
	bool stopped;
};

/* pids' bits (sampled, gone), modulo SESSION_PID_BITS: pid_max's upper bound. */
#define SESSION_PID_BITS (1u << 22)

static inline bool session_bit_test(const uint8_t *bitmap, uint32_t pid)
{
	uint32_t i = pid % SESSION_PID_BITS;

	return bitmap[i / 8] & (1u << (i % 8));
}

static inline void session_bit_set(uint8_t *bitmap, uint32_t pid, bool on)
{
	uint32_t i = pid % SESSION_PID_BITS;

	if (on)
		bitmap[i / 8] |= 1u << (i % 8);
	else
		bitmap[i / 8] &= ~(1u << (i % 8));
}

/* The lifecycle's callbacks, and the forgetting of exited processes (session_procs.c). */
void session_on_exec(void *ctx, int pid, uint64_t time_ns, uint64_t start_ticks, uint64_t exec_id);
size_t session_kernel_maps(void *ctx, int pid, const struct symbolizer_image *image,
			   struct symbolizer_kmap *out, size_t max);
/* struct runtime_host's jit_name: the name pid's perf map gives the anonymous code at addr. */
const char *session_jit_name(void *ctx, int pid, uint64_t addr);
struct jitcode_region;
int session_set_jit(void *ctx, int pid, uint64_t start_ticks, const struct jitcode_region *r);
void session_on_fork(void *ctx, int pid, int parent, uint64_t time_ns, uint64_t start_ticks);
/* struct proctrack_listener's: the tracker read pid's mappings (the runtimes', the symbolizer's).
 */
void session_on_maps(void *ctx, int pid, uint64_t start_ticks, const struct procmaps *pm);
void session_on_removed(void *ctx, int pid);
void session_on_exit(void *ctx, int pid, uint64_t time_ns);
void session_on_young(void *ctx, int pid, uint64_t time_ns);
/* pid's exit, to be forgotten once the samples before it are read and written. */
void session_queue_exited(struct session *s, int pid);
/* The ring of exited processes full: its oldest quarter's stacks named now, then forgotten. */
void session_forget_overflow(struct session *s);
void session_forget_oldest(struct session *s);
/* Forked children never sampled whose exit a finished round read (all: every one). */
void session_forget_unsampled(struct session *s, bool all);

/* The budgets in force (session_budgets.c): the options', else the machine's defaults. */
void session__set_budgets(struct session *s);

#endif /* SFBPF_SESSION_INT_H */
