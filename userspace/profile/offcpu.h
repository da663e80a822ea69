/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Lifecycle of the off-CPU BPF program (bpf/offcpu.bpf.c): open and load with
 * the settings below (sharing the profile program's table maps, or owning
 * them), attach to sched_switch, poll the off-CPU periods, detach, collect the
 * threads still off-CPU at the end, read the counters, tear down. Functions
 * return 0 (or a count) or a negative errno, and say what went wrong through the log.
 */
#ifndef SFBPF_USERSPACE_OFFCPU_H
#define SFBPF_USERSPACE_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/offcpu_abi.h"

struct offcpu;

/*
 * Called for every off-CPU period; r is valid during the call only, and size
 * covers exactly its header and its nr_user + nr_kernel frames. A non-zero
 * return stops the poll (or the walk), which returns it.
 */
typedef int (*offcpu_sample_fn)(void *ctx, const struct sfbpf_offcpu_sample *r, size_t size);

/* Maps of an already loaded program to use instead of creating new ones (fds). */
struct offcpu_shared_maps {
	int rows, rules, objects, pages, procs; /* the unwinder's tables */
	int py_procs; /* the Python walk's settings (bpf/python.h) */
	int hs_procs; /* the HotSpot step's (bpf/hotspot.h) */
	int v8_procs; /* the V8 step's (bpf/v8.h) */
	int php_procs; /* the PHP walk's (bpf/php.h) */
	int rb_procs; /* the Ruby walk's (bpf/ruby.h) */
	int pl_procs; /* the Perl walk's (bpf/perl.h) */
	int target_pids;
	int cpu_run; /* the CPU profiler's: each CPU's thread, timed in on+off runs (abi.h) */
};

struct offcpu_opts {
	/* User frames per stack, 1..SFBPF_MAX_FRAMES; 0 = max; kept to SFBPF_OFFCPU_MAX_FRAMES. */
	__u32 max_frames;
	bool user_stacks; /* at least one of user_stacks and kernel_stacks */
	bool kernel_stacks;
	bool filter_pids; /* record only tgids present in target_pids */
	const char *cgroup; /* cgroup v2 directory: only tasks in it or below; NULL: all */
	__u32 states; /* SFBPF_STATE_BIT() mask; 0 = SFBPF_STATES_BLOCKED */
	__u64 min_ns; /* emit periods of min_ns <= off-CPU time <= max_ns */
	__u64 max_ns; /* 0: no upper bound */
	/* __schedule's [start, end): kernel stacks start there. 0: untrimmed. */
	__u64 sched_start, sched_end;
	const struct offcpu_shared_maps *shared; /* NULL: own table and pid maps */
	/*
	 * CPU samples are taken beside (on+off): a period then starts when the
	 * program starts, not once it recorded the stacks (docs/DESIGN-offcpu.md).
	 */
	bool with_cpu_samples;
	/* Map sizes (entries); 0 = the profile's defaults (profile.h) and these. */
	__u32 max_rows, max_rules, max_objects, max_pages, max_procs, max_pids;
	__u32 seg_shift; /* the profile's (profile.h); 0: the most */
	__u32 max_threads; /* threads tracked at once (the blocked map) */
	__u32 ringbuf_bytes; /* a power of two, at least one page */
	offcpu_sample_fn on_sample;
	/* Code objects the Python walk describes, before their samples (profile.h). */
	void (*on_py_code)(void *ctx, const struct sfbpf_py_code *c, size_t size);
	void *ctx;
};

#define OFFCPU_DEFAULT_THREADS 16384u
#define OFFCPU_DEFAULT_RINGBUF (8u << 20)

/* Opens and loads the programs. NULL on failure with errno set (positive). */
struct offcpu *offcpu__new(const struct offcpu_opts *opts);

/* Starts tracing context switches (and thread exits). */
int offcpu__attach(struct offcpu *o);
/* Stops tracing; what is in the ring buffer and the blocked map stays. */
void offcpu__detach(struct offcpu *o);

/*
 * Waits up to timeout_ms (< 0: 1 s) for records, then reads every record
 * waiting (the program wakes the reader only past a fill level). Returns how
 * many were handled.
 */
int offcpu__poll(struct offcpu *o, int timeout_ms);
/* As profile__set_wake_fd(): polls end when fd (an eventfd) is written. */
int offcpu__set_wake_fd(struct offcpu *o, int fd);

/*
 * After offcpu__detach(): the threads still off-CPU, each as a period ending
 * at end_ns (CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns()), passed
 * through the same [min, max] filter. Returns how many were passed to fn.
 */
int offcpu__for_each_blocked(struct offcpu *o, __u64 end_ns, offcpu_sample_fn fn, void *ctx);

/* Sums the per-CPU counters. */
int offcpu__stats(struct offcpu *o, struct sfbpf_offcpu_stats *out);

/* Its table and pid maps (its own, or the shared ones), for a loader of its own. */
void offcpu__maps(const struct offcpu *o, struct offcpu_shared_maps *out);
int offcpu__prog_fd(const struct offcpu *o); /* the sched_switch program */

/* Detaches and frees everything; NULL is fine. */
void offcpu__free(struct offcpu *o);

/* "running", "sleeping", "disk", "other". */
const char *offcpu__state_name(enum sfbpf_offcpu_state state);
/* "switches", "blocks", "map-full", ... */
const char *offcpu__stat_name(enum sfbpf_offcpu_stat stat);
/* "sleeping,disk" (or "all") -> a SFBPF_STATE_BIT() mask. -EINVAL if a name is unknown. */
int offcpu__parse_states(const char *list, __u32 *mask);

#endif /* SFBPF_USERSPACE_OFFCPU_H */
