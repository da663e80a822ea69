/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ABI between the off-CPU program (offcpu.bpf.c) and userspace, on top of
 * profile.h (tables, struct sfbpf_sample, the unwinder's counters). Included by
 * BPF code (after vmlinux.h) and by userspace (after <stdint.h>).
 *
 * A thread that is switched out (and passes the filters) gets its user stack
 * (SFrame unwinder) and kernel stack recorded in the `blocked` hash, keyed by
 * tid. When it is switched back in, the time it spent off-CPU becomes the
 * record's weight and the record goes to the ring buffer, if that time is
 * within [min, max]. See docs/DESIGN-offcpu.md.
 */
#ifndef SFBPF_OFFCPU_ABI_H
#define SFBPF_OFFCPU_ABI_H

#include "abi.h"

/*
 * Why a thread left the CPU, from the task state the scheduler saw
 * (sched_switch's prev_state; preemption counts as running whatever the state).
 */
enum sfbpf_offcpu_state {
	SFBPF_STATE_RUNNING = 0, /* preempted, still runnable: waited for a CPU (R) */
	SFBPF_STATE_SLEEPING, /* TASK_INTERRUPTIBLE: sleep, poll, futex, pipe... (S) */
	SFBPF_STATE_DISK, /* TASK_UNINTERRUPTIBLE, not TASK_NOLOAD: I/O, D-state locks (D) */
	SFBPF_STATE_OTHER, /* idle kernel threads (I), stopped, traced, parked... */
	SFBPF_STATE__COUNT,
};

#define SFBPF_STATE_BIT(state) (1u << (state))
/* The default filter: every way of blocking, not preemption. */
#define SFBPF_STATES_BLOCKED \
	(SFBPF_STATE_BIT(SFBPF_STATE_SLEEPING) | SFBPF_STATE_BIT(SFBPF_STATE_DISK) | \
	 SFBPF_STATE_BIT(SFBPF_STATE_OTHER))
#define SFBPF_STATES_ALL ((1u << SFBPF_STATE__COUNT) - 1)

/* Off-CPU counters, after the unwinder's (struct sfbpf_stats) in one per-CPU value. */
enum sfbpf_offcpu_stat {
	SFBPF_OFFCPU_STAT_SWITCHES = 0, /* context switches seen */
	SFBPF_OFFCPU_STAT_BLOCKS, /* switch-outs that passed the filters: stacks recorded */
	SFBPF_OFFCPU_STAT_MAP_FULL, /* switch-outs not recorded: the blocked map is full */
	SFBPF_OFFCPU_STAT_WAKEUPS, /* recorded threads switched back in */
	SFBPF_OFFCPU_STAT_SHORT, /* of those, dropped: off-CPU for less than min */
	SFBPF_OFFCPU_STAT_LONG, /* of those, dropped: off-CPU for more than max */
	SFBPF_OFFCPU_STAT_EXITS, /* recorded threads that exited (entry removed) */
	SFBPF_OFFCPU_STAT_EXITING, /* switch-outs not recorded: the thread is exiting */
	/* Chained: no tail call left for the last link (no Python frames, the next
	 * thread's period lost); never while offcpu.bpf.c's static assert holds. */
	SFBPF_OFFCPU_STAT_NO_FINISH,
	/* Periods whose switch-in was never seen, ended at the thread's next
	 * switch-out from its run time since; UNSEEN_LOST: its end unknown, dropped. */
	SFBPF_OFFCPU_STAT_UNSEEN,
	SFBPF_OFFCPU_STAT_UNSEEN_LOST,
	SFBPF_OFFCPU_STAT__COUNT,
};

struct sfbpf_offcpu_stats {
	struct sfbpf_stats unwind; /* samples = blocks recorded; emitted, drops, stops: at switch-in */
	__u64 v[SFBPF_OFFCPU_STAT__COUNT];
};

/*
 * One off-CPU period: the `blocked` map's value (its first
 * SFBPF_OFFCPU_REC_SIZE bytes, below), and the ring buffer record (variable
 * length: only the used frames of s.ips are sent).
 * s.time_ns is the switch-in time, s.cpu the CPU the thread left, s.weight the
 * off-CPU time in microseconds (saturated; end_ns - start_ns is exact).
 */
struct sfbpf_offcpu_sample {
	__u64 start_ns; /* bpf_ktime_get_ns() at switch-out; 0 in the map: not blocked */
	__u64 end_ns; /* at switch-in, or the end of the run (userspace) */
	__u8 state; /* enum sfbpf_offcpu_state */
	__u8 pad[3];
	/* on+off: on-CPU ns after the thread's last CPU sample, for its next (abi.h, cpu_run) */
	__u32 owed_ns;
	struct sfbpf_sample s;
};

#define SFBPF_OFFCPU_HDR_SIZE \
	((unsigned long)__builtin_offsetof(struct sfbpf_offcpu_sample, s) + SFBPF_SAMPLE_HDR_SIZE)

/*
 * User frames an off-CPU record holds: fewer than a CPU sample's. The record
 * lives in the `blocked` map for as long as its thread exists, one per
 * thread that blocked (up to 16384 by default): at SFBPF_MAX_FRAMES it would
 * take 9.1 KiB per thread, 152 MB for a full map; at 128 it takes 2.1 KiB
 * (35 MB full), what it took when CPU samples stopped at 127 frames too.
 * Deeper off-CPU stacks end with SFBPF_STOP_DEPTH ([truncated] in the
 * outputs). A power of two (UNWIND_MAX_FRAMES in the off-CPU program).
 */
#define SFBPF_OFFCPU_MAX_FRAMES 128
/* Python frames of a blocked thread (abi.h, SFBPF_PY_*): a power of two. */
#define SFBPF_OFFCPU_PY_FRAMES 32

/*
 * The `blocked` map's value: the first SFBPF_OFFCPU_REC_SIZE bytes of struct
 * sfbpf_offcpu_sample, room for SFBPF_OFFCPU_MAX_FRAMES user frames and
 * SFBPF_MAX_KFRAMES kernel frames after them, then SFBPF_OFFCPU_PY_FRAMES
 * Python frames (two slots each) after those. Userspace reads it into a
 * whole struct sfbpf_offcpu_sample.
 */
#define SFBPF_OFFCPU_REC_SIZE                                                         \
	(SFBPF_OFFCPU_HDR_SIZE +                                                      \
	 (SFBPF_OFFCPU_MAX_FRAMES + SFBPF_MAX_KFRAMES + 2 * SFBPF_OFFCPU_PY_FRAMES) * \
		 sizeof(__u64))

_Static_assert(SFBPF_OFFCPU_MAX_FRAMES <= SFBPF_MAX_FRAMES &&
		       SFBPF_OFFCPU_REC_SIZE <= sizeof(struct sfbpf_offcpu_sample),
	       "an off-CPU record is a prefix of struct sfbpf_offcpu_sample");

#endif /* SFBPF_OFFCPU_ABI_H */
