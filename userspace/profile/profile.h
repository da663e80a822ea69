/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Lifecycle of the profiling BPF program (bpf/profile.bpf.c): open and load
 * with the settings below, attach to a cpu-clock event on every online CPU,
 * poll the samples, read the counters, tear down. The table loader fills the
 * maps through the fd accessors. Functions return 0 (or a count) or a negative
 * errno, and say what went wrong through the log (util/log.h). The steps every
 * program shares are in bpfprog.h.
 */
#ifndef SFBPF_USERSPACE_PROFILE_H
#define SFBPF_USERSPACE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"

struct profile;

/*
 * Called for every sample; s is valid during the call only, and size covers
 * exactly its header and nr_user + nr_kernel frames. A non-zero return stops
 * profile__poll(), which returns it.
 */
typedef int (*profile_sample_fn)(void *ctx, const struct sfbpf_sample *s, size_t size);

/* Called for every lifecycle event (exec, exit, unknown process or mapping). */
typedef int (*profile_event_fn)(void *ctx, const struct sfbpf_event *e);

/*
 * Called for every code object the Python walk describes (bpf/python.h),
 * before the samples that hold it; size covers its header and table bytes.
 */
typedef void (*profile_py_code_fn)(void *ctx, const struct sfbpf_py_code *c, size_t size);

struct profile_opts {
	__u32 max_frames; /* user frames per stack, 1..SFBPF_MAX_FRAMES; 0 = max */
	bool user_stacks; /* at least one of user_stacks and kernel_stacks */
	bool kernel_stacks;
	bool filter_pids; /* sample only tgids present in target_pids */
	bool skip_idle; /* drop samples of the idle task */
	/* on+off: samples weigh their thread's on-CPU time, timed by the off-CPU program */
	bool timed_samples;
	const char *cgroup; /* cgroup v2 directory: only tasks in it or below; NULL: all */
	__u64 notify_interval_ns; /* unknown process/mapping reports per PID; 0: 200 ms */
	/* Map sizes (entries); 0 = the defaults below. */
	__u32 max_rows;
	__u32 max_rules;
	__u32 max_objects;
	__u32 max_pages;
	__u32 seg_shift; /* table segments of 1 << seg_shift entries (abi.h); 0: the most */
	__u32 max_procs;
	__u32 max_pids;
	__u32 ringbuf_bytes; /* a power of two, at least one page */
	__u32 event_ringbuf_bytes; /* lifecycle events, as above; 0: 256 KiB (session.c sizes it) */
	profile_sample_fn on_sample;
	profile_event_fn on_event; /* NULL: lifecycle events are not read */
	profile_py_code_fn on_py_code; /* NULL: ignored */
	void *ctx;
};

#define PROFILE_DEFAULT_ROWS (2u << 20)
#define PROFILE_DEFAULT_RULES (64u << 10)
#define PROFILE_DEFAULT_OBJECTS 4096u
#define PROFILE_DEFAULT_PAGES (1u << 20)
#define PROFILE_DEFAULT_PROCS 4096u
#define PROFILE_DEFAULT_PIDS 1024u
#define PROFILE_DEFAULT_RINGBUF (8u << 20)

/* Opens and loads the program. NULL on failure with errno set (positive). */
struct profile *profile__new(const struct profile_opts *opts);

/* Starts sampling every online CPU at freq_hz. */
int profile__attach(struct profile *p, __u64 freq_hz);
/*
 * Stops sampling: once it returns no sample is being taken on any CPU, so the
 * counters (profile__stats()) and the ring buffer hold every sample there is.
 */
void profile__detach(struct profile *p);
/*
 * Starts following processes: exec and exit drop their entries and send
 * events. Independent of sampling (the off-CPU mode shares the tables).
 */
int profile__attach_lifecycle(struct profile *p);

/*
 * Waits up to timeout_ms (< 0: no limit) for samples and events; returns how
 * many were handled. Samples wake the reader only in bulk: one may wait up to
 * 50 ms in the ring before a poll sees it.
 */
int profile__poll(struct profile *p, int timeout_ms);
/*
 * Polls end at once, too, when fd (an eventfd: tables__wake_fd()) is
 * written, and drain it; fd -1: no more. 0, or a negative errno.
 */
int profile__set_wake_fd(struct profile *p, int fd);
/*
 * The same, but the lifecycle events first, and samples only for slice_ns of
 * their callbacks' time: then *cut is set and the rest waits in the ring for
 * the next call (which does not wait). A sample's handling may take tens of
 * milliseconds (a new object's symbols); the events read between slices
 * (exec, unknown process) get their work done without waiting for a whole
 * ring of samples to be handled.
 */
int profile__poll_slice(struct profile *p, int timeout_ms, uint64_t slice_ns, bool *cut);
/*
 * From an event callback: profile__poll_slice() ends after the sample being
 * read, if any (not in two calls in a row: samples get a full slice between).
 */
void profile__end_slice(struct profile *p);
/* Handles what is waiting, without waiting. */
int profile__consume(struct profile *p);

/* Sums the per-CPU counters into out (indexed by enum sfbpf_stat). */
int profile__stats(struct profile *p, __u64 out[SFBPF_STAT__COUNT]);

/* Map and program fds for the table loader and the tests. */
int profile__rows_fd(const struct profile *p);
int profile__rules_fd(const struct profile *p);
int profile__objects_fd(const struct profile *p);
int profile__pages_fd(const struct profile *p);
int profile__procs_fd(const struct profile *p);
/* The Python settings map (tgid -> struct sfbpf_py_proc, bpf/abi.h). */
int profile__py_procs_fd(const struct profile *p);
/* The HotSpot step's settings (bpf/hotspot.h): tgid -> struct sfbpf_hs_proc. */
int profile__hs_procs_fd(const struct profile *p);
int profile__v8_procs_fd(const struct profile *p);
int profile__php_procs_fd(const struct profile *p);
int profile__rb_procs_fd(const struct profile *p);
int profile__pl_procs_fd(const struct profile *p);
int profile__target_pids_fd(const struct profile *p);
int profile__cpu_run_fd(const struct profile *p); /* on+off: the off-CPU program times CPUs */
int profile__obj_hits_fd(const struct profile *p);
/* Identity -> object slot, for processes the loader has not read (bpf/vmafind.h). */
int profile__idents_fd(const struct profile *p);
int profile__notify_fd(const struct profile *p); /* notify_next: tgid -> next report time */
/* Whether the CPU profiler walks processes without an entry with VMAs it finds (vmafind.h). */
bool profile__finds_vmas(const struct profile *p);
/* vma_cache: tgid -> the mappings found in the kernel (struct sfbpf_vma_kept). */
int profile__vma_cache_fd(const struct profile *p);
int profile__lifecycle_fd(const struct profile *p); /* the lifecycle event ring */
int profile__prog_fd(const struct profile *p);

/* Detaches and frees everything; NULL is fine. */
void profile__free(struct profile *p);

/* Stable short names for reports and tests. */
const char *profile__stop_name(enum sfbpf_stop stop);
const char *profile__stat_name(enum sfbpf_stat stat);

#endif /* SFBPF_USERSPACE_PROFILE_H */
