/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One user-stack sample, the same for every program: the task's saved user
 * registers, its process's mapping table (procs), the walk (unwind.h) into
 * the sample's ips, the unwinding counters and, for the CPU profiler, the
 * reports of what the loader lacks. Include after vmlinux.h, bpf_helpers.h
 * and abi.h. Per-sample only: nothing is kept between calls but the row cache.
 */
#ifndef SFBPF_USTACK_H
#define SFBPF_USTACK_H

#include "unwind.h"

#define USTACK_PF_KTHREAD 0x00200000 /* include/linux/sched.h */

/* Settings of every program that samples user stacks (set between open and load). */
const volatile __u32 max_user_frames = UNWIND_MAX_FRAMES;
const volatile bool user_stacks = true;

_Static_assert(SFBPF_STAT_NOTIFY_LIMITED == SFBPF_STAT_NOTIFY_SENT + 1 &&
		       SFBPF_STAT_NOTIFY_DROPS == SFBPF_STAT_NOTIFY_SENT + 2 &&
		       SFBPF_STAT_NOTIFY_SENT + 3 < SFBPF_STAT__COUNT,
	       "unwind_report's return values index the counters");

/* The group leader's start time in clock ticks: /proc/PID/stat's starttime. */
static __always_inline __u64 unwind_start_ticks(struct task_struct *task)
{
	__u64 tick = clock_tick_ns;

	return tick ? task->group_leader->start_boottime / tick : 0;
}

/*
 * The procs entry of task's process, or NULL. An entry whose start time is
 * not the task's belongs to an earlier process with the same PID (its exit
 * not handled yet): its mappings must not be applied, *stale is set.
 */
static __always_inline const struct sfbpf_proc *unwind_proc(struct task_struct *task, __u32 tgid,
							    bool *stale)
{
	const struct sfbpf_proc *proc = bpf_map_lookup_elem(&procs, &tgid);

	*stale = false;
	if (proc && proc->start_ticks && proc->start_ticks != unwind_start_ticks(task)) {
		*stale = true;
		return NULL;
	}
	return proc;
}

/*
 * Tells the loader that tgid needs a (new) table: no entry, or addr in no
 * known mapping. At most one report per process every notify_interval_ns
 * (the loader may push the next one further back). A global function: the
 * verifier checks it once, on its own, instead of at every call with every
 * state the caller may be in. Returns 0 (sent), 1 (rate-limited) or 2 (ring
 * full): the caller counts it at SFBPF_STAT_NOTIFY_SENT + that.
 */
__noinline int unwind_report(__u32 tgid, __u32 type, __u64 addr, __u64 start_ticks)
{
	__u64 now = bpf_ktime_get_ns(), next = now + notify_interval_ns, *at;
	struct sfbpf_event ev = {};

	at = bpf_map_lookup_elem(&notify_next, &tgid);
	if (at && now < *at)
		return 1;
	if (at)
		*at = next;
	else
		bpf_map_update_elem(&notify_next, &tgid, &next, BPF_ANY);
	ev.time_ns = now;
	ev.addr = addr;
	ev.start_ticks = start_ticks;
	ev.type = type;
	ev.pid = tgid;
	return bpf_ringbuf_output(&lifecycle, &ev, sizeof(ev), 0) ? 2 : 0;
}

/*
 * After unwind_user() (or a sample without a valid entry): reports what the
 * loader lacks, a process or a mapping, and counts the report's fate.
 */
static __always_inline void unwind_account(struct task_struct *task, __u32 tgid,
					   const struct sfbpf_unwind_state *st, __u8 stop,
					   struct sfbpf_stats *cnt)
{
	__u32 type = 0;
	__u64 addr = 0;
	int ret;

	if (stop == SFBPF_STOP_NO_PROC) {
		type = SFBPF_EVENT_NO_PROC;
	} else if (stop == SFBPF_STOP_NO_MAPPING && st->miss_addr) {
		type = SFBPF_EVENT_NO_MAPPING;
		addr = st->miss_addr;
	}
	if (!type)
		return;
	ret = unwind_report(tgid, type, addr, unwind_start_ticks(task));
	cnt->v[SFBPF_STAT_NOTIFY_SENT + (ret & 3)]++;
}

/*
 * Unwinds task's user stack into s->ips and sets s->stop; returns the number
 * of user frames (none with user_stacks off), at most UNWIND_MAX_FRAMES as the
 * verifier knows. Counts frames, frame-pointer steps, stale entries and
 * table-less objects met in cnt; the stop reason is the caller's to count
 * (the off-CPU program counts it when the period is kept). With report, an
 * unknown process or mapping is reported to the loader (rate-limited): only
 * a program whose lifecycle ring the loader reads may ask for that.
 */
static __always_inline __u32 ustack_sample(struct sfbpf_unwind_state *st, struct sfbpf_sample *s,
					   struct sfbpf_stats *cnt, struct task_struct *task,
					   __u32 tgid, bool report)
{
	const struct sfbpf_proc *proc;
	struct pt_regs *regs;
	bool stale;

	st->obj_flags = 0;
	st->miss_addr = 0;
	if (!user_stacks || !tgid || !task->mm || (task->flags & USTACK_PF_KTHREAD)) {
		s->stop = SFBPF_STOP_KERNEL_ONLY;
		return 0;
	}
	/*
	 * The user registers saved at kernel entry. For a sample in user mode
	 * they are the sample's own registers (x86-64 and AArch64 save interrupted
	 * user state there too), so one source serves both cases; a thread off the
	 * CPU cannot change them.
	 */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs) {
		s->stop = SFBPF_STOP_READ;
		return 0;
	}
	arch_user_regs(regs, &st->pc, &st->sp, &st->fp);
	st->regs = (__u64)regs;
	st->max = max_user_frames;

	if (!st->pc) { /* no user context (e.g. an io_uring worker) */
		s->stop = SFBPF_STOP_NO_MAPPING;
		return 0;
	}
	proc = unwind_proc(task, tgid, &stale);
	if (!proc) {
		/* No table yet: the leaf still tells where the time went. */
		s->ips[0] = st->pc;
		s->stop = SFBPF_STOP_NO_PROC;
		cnt->v[SFBPF_STAT_STALE_PROC] += stale;
		cnt->v[SFBPF_STAT_FRAMES]++;
		if (report)
			unwind_account(task, tgid, st, s->stop, cnt);
		return 1;
	}
	unwind_user(st, s->ips, proc);
	s->stop = st->stop;
	cnt->v[SFBPF_STAT_FRAMES] += st->n;
	cnt->v[SFBPF_STAT_FP_FRAMES] += st->fp_frames;
	cnt->v[SFBPF_STAT_GAP_FP_FRAMES] += st->gap_frames;
	cnt->v[SFBPF_STAT_FP_SWITCHES] += st->switches;
	cnt->v[SFBPF_STAT_PENDING] += (st->obj_flags & SFBPF_OBJ_F_PENDING) != 0;
	cnt->v[SFBPF_STAT_NO_BUDGET] += (st->obj_flags & SFBPF_OBJ_F_NO_BUDGET) != 0;
	if (report)
		unwind_account(task, tgid, st, s->stop, cnt);
	return unwind_nr_frames(st->n);
}

#endif /* SFBPF_USTACK_H */
