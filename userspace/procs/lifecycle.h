/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Process lifecycle: what the BPF side reports (bpf/profile.h, struct
 * sfbpf_event) becomes work for the process tracker.
 *
 *   exec        the old image's entry is gone (BPF dropped it): release its
 *               tables now, and refresh the process exec_delay_ns later,
 *               once ld.so has mapped its libraries (best effort: a queue
 *               that drops when full; the sample channel below catches up);
 *   fork        the child's entry (and its parent's runtimes' settings)
 *               copied by BPF: adopt its tables, refresh it later, as an
 *               exec; a child given runtimes is offered to them at once
 *               (on_young);
 *   exit        release the process's entry and tables;
 *   no-proc     a sample found no entry (new process, fork, stale entry):
 *               refresh now; one the kernel walked by its mappings is read
 *               as an exec'd process is, and offered at once to the
 *               runtimes (on_young), which need no tables to attach;
 *   no-mapping  a sample's PC or return address is in no known mapping
 *               (dlopen, late libraries, JIT): refresh if the executable
 *               mappings changed; if not, the process may report again only
 *               after a growing delay (written to the notify_next map).
 *
 * Events are only queued when they arrive (from the ring buffer callback);
 * lifecycle__process() does the work within a time budget, sampled
 * processes first. A periodic sweep removes entries of processes that are
 * gone without an exit event (lost when the event ring was full).
 */
#ifndef SFBPF_LIFECYCLE_H
#define SFBPF_LIFECYCLE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "procs/proctrack.h"

/* pid's process exited (its entry is gone already); time_ns: the event's. */
typedef void (*lifecycle_fn)(void *ctx, int pid, uint64_t time_ns);
/*
 * pid's process exec'd: its start (start_ticks) and the new image's exec id
 * (struct sfbpf_event's addr) say which image this is.
 */
typedef void (*lifecycle_exec_fn)(void *ctx, int pid, uint64_t time_ns, uint64_t start_ticks,
				  uint64_t exec_id);
/*
 * pid (started at start_ticks) was forked by parent and unwinds with the
 * copy of its entry it was given.
 */
typedef void (*lifecycle_fork_fn)(void *ctx, int pid, int parent, uint64_t time_ns,
				  uint64_t start_ticks);

struct lifecycle_opts {
	struct proctrack *procs;
	int notify_fd; /* the notify_next map (backoff); < 0: none */
	bool follow_execs; /* refresh processes after exec (else only when sampled) */
	uint64_t exec_delay_ns; /* 0: 20 ms */
	uint64_t notify_interval_ns; /* the BPF side's report interval; 0: 200 ms */
	uint64_t sweep_every_ns; /* 0: 10 s */
	lifecycle_exec_fn on_exec; /* may be NULL */
	lifecycle_fn on_exit; /* may be NULL */
	lifecycle_fork_fn on_fork; /* may be NULL */
	/*
	 * pid was sampled before its entry exists, walked by the kernel's
	 * mappings, or forked with its parent's runtimes: its runtime may
	 * attach now rather than at the later refresh (may be NULL; time_ns:
	 * when it was offered).
	 */
	lifecycle_fn on_young;
	void *ctx;
};

struct lifecycle_stats {
	uint64_t exec_events, exit_events, no_proc_events, no_mapping_events;
	uint64_t fork_events; /* entries copied at a fork, adopted */
	uint64_t fork_gone; /* copies gone before their event was read (exec, exit) */
	uint64_t refreshes; /* entries (re)built */
	uint64_t unchanged; /* no-mapping reports that found the same mappings */
	uint64_t gone; /* processes gone before their refresh */
	uint64_t failed; /* refreshes that failed otherwise */
	uint64_t incomplete; /* refreshes the loader was too busy to finish (retried) */
	uint64_t young; /* processes offered to on_young before their entry or at their fork */
	uint64_t queue_drops; /* exec refreshes dropped: queue full */
	uint64_t swept; /* entries of vanished processes removed by the sweep */
	uint32_t queued; /* work waiting now */
};

struct lifecycle;

struct lifecycle *lifecycle__new(const struct lifecycle_opts *opts); /* NULL + errno */
void lifecycle__free(struct lifecycle *lc);

/* Queues the work for one event. Cheap: call it from the ring buffer callback. */
int lifecycle__event(struct lifecycle *lc, const struct sfbpf_event *e);
/* Does queued work for about budget_ns at most. Returns the work still queued. */
uint32_t lifecycle__process(struct lifecycle *lc, uint64_t budget_ns);
void lifecycle__stats(const struct lifecycle *lc, struct lifecycle_stats *out);
/* Is a sampled process waiting for its refresh? Reading more samples can wait. */
bool lifecycle__urgent(const struct lifecycle *lc);

#endif /* SFBPF_LIFECYCLE_H */
