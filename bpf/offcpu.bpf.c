// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Off-CPU analysis: a raw tracepoint on sched_switch. At switch-out, a thread
 * that passes the filters (process, cgroup, task state) gets its user stack
 * (SFrame unwinder, ustack.h, from its saved user registers: its user stack
 * cannot change while it is off the CPU) and its kernel stack recorded in the
 * `blocked` hash, keyed by tid. At switch-in, the time it was off the CPU is
 * checked against [min, max] and the record goes to the ring buffer.
 *
 * Periods are timed from the end of the recording (see stamp_at_entry).
 *
 * The record is built in place in the map value, which is kept (marked
 * consumed) after switch-in and reused at the thread's next switch-out: a
 * blocked period costs no allocation and no copy of the 2 KiB record (user
 * stacks stop at SFBPF_OFFCPU_MAX_FRAMES, see offcpu_abi.h). Entries
 * are removed when their thread exits (sched_process_exit), and an exiting
 * thread gets none: its exit hook may have run already (see switch_out).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "offcpu_abi.h"
#include "target.h"
/* The walk writes into the per-thread records: their capacity (offcpu_abi.h). */
#define UNWIND_MAX_FRAMES SFBPF_OFFCPU_MAX_FRAMES
#include "ustack.h"
#define PY_PROG_FRAMES SFBPF_OFFCPU_PY_FRAMES
#include "python.h"
#include "php.h"
#include "ruby.h"
#include "perl.h"
#include "afterwalk.h"

#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_DEAD 0x0080
#define TASK_NOLOAD 0x0400
#define PF_EXITING 0x00000004 /* task->flags: do_exit() has begun (include/linux/sched.h) */
#define KSTACK_SEARCH 8 /* frames searched for __schedule (tracing frames above it) */

/* Settings, filled by userspace between open and load. */
const volatile bool kernel_stacks = true;
const volatile __u32 state_mask = SFBPF_STATES_BLOCKED;
const volatile __u64 min_ns = 0;
const volatile __u64 max_ns = ~0ULL;
/* sched_switch passes prev_state (kernels >= 5.18): race-free, unlike prev->__state. */
const volatile bool have_prev_state = true;
/* Wake the reader only once this much is waiting: it polls with a timeout anyway. */
const volatile __u64 wakeup_bytes = 0;
/*
 * Where prev's period starts and next's ends. Default: once prev's stacks are
 * recorded (microseconds of kernel stack walk): this program's time is then
 * prev's time on the CPU, as the scheduler and perf's task-clock count it, not
 * time prev spent blocked. With CPU samples beside (on+off): at the program's
 * start, since a sample falling due while it runs (interrupts off) is taken in
 * next, so prev's on+off total keeps that time only as off-CPU time.
 */
const volatile bool stamp_at_entry = false;
/* __schedule's text: kernel stacks start there, without the tracing frames above. */
const volatile __u64 sched_lo = 0, sched_hi = 0;

/* Tracing frames above __schedule, learned from the first stack (same for all). */
__u32 kstack_skip = 0;

/*
 * tid -> the thread's current (start_ns != 0) or last off-CPU period: the
 * first SFBPF_OFFCPU_REC_SIZE bytes of a struct sfbpf_offcpu_sample.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, SFBPF_OFFCPU_REC_SIZE);
} blocked SEC(".maps");

TARGET_PERCPU_VALUE(stats, struct sfbpf_offcpu_stats);
/* The CPU profiler's (shared): this CPU's thread, timed with CPU samples beside (abi.h). */
TARGET_PERCPU_VALUE(cpu_run, struct sfbpf_cpu_run);

/*
 * The unwinder's state (per CPU: kept out of the BPF stack), and a record to
 * insert a thread's first entry from (its content does not matter: every
 * field read later is written at switch-out).
 */
struct scratch {
	struct sfbpf_unwind_state st;
	struct sfbpf_offcpu_sample init;
	__u64 entry_ns; /* a chained walk's program start (stamp_at_entry) */
	struct rt_walks rt;
};

TARGET_PERCPU_VALUE(scratch, struct scratch);

/* Kernels before 5.14 named the field `state`. */
struct task_struct___pre514 {
	long state;
};

static __always_inline __u32 prev_task_state(__u64 *ctx, struct task_struct *prev)
{
	if (have_prev_state)
		return (__u32)ctx[3];
	if (bpf_core_field_exists(prev->__state))
		return BPF_CORE_READ(prev, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)prev, state);
}

static __always_inline int state_class(bool preempt, __u32 state)
{
	if (preempt || !state)
		return SFBPF_STATE_RUNNING;
	if (state & TASK_INTERRUPTIBLE)
		return SFBPF_STATE_SLEEPING;
	if ((state & TASK_UNINTERRUPTIBLE) && !(state & TASK_NOLOAD))
		return SFBPF_STATE_DISK;
	return SFBPF_STATE_OTHER;
}

static __always_inline bool in_sched(__u64 ip)
{
	return ip >= sched_lo && ip < sched_hi;
}

/*
 * Kernel stack of the current task at ips[0..], starting at __schedule: the
 * frames above it (this program, the tracepoint glue) say nothing. Their
 * number is learned from the first stack and then skipped by
 * bpf_get_stack() itself; a stack that does not start at __schedule with it
 * (not every stack has as many above it: seen on a busy machine, one in
 * six came one frame short) is taken again from the top and searched.
 */
static __always_inline __u32 record_kernel(void *ctx, __u64 *ips)
{
	__u32 skip = kstack_skip, n, i;
	long ret;

	ret = bpf_get_stack(ctx, ips, SFBPF_MAX_KFRAMES * sizeof(__u64),
			    skip & BPF_F_SKIP_FIELD_MASK);
	if (ret <= 0)
		return 0;
	n = (ret / sizeof(__u64)) & UNWIND_KFRAME_MASK;
	if (!sched_hi || !n || in_sched(ips[0]))
		return n;
	if (skip) {
		ret = bpf_get_stack(ctx, ips, SFBPF_MAX_KFRAMES * sizeof(__u64), 0);
		if (ret <= 0)
			return 0;
		n = (ret / sizeof(__u64)) & UNWIND_KFRAME_MASK;
		if (!n || in_sched(ips[0]))
			return n;
	}
	/* Find __schedule, then drop what is above it. */
	for (i = 1; i < KSTACK_SEARCH && i < n; i++) {
		if (in_sched(ips[i & UNWIND_KFRAME_MASK]))
			break;
	}
	if (i >= KSTACK_SEARCH || i >= n)
		return n;
	if (!skip)
		kstack_skip = i;
	ret = bpf_get_stack(ctx, ips, SFBPF_MAX_KFRAMES * sizeof(__u64), i & BPF_F_SKIP_FIELD_MASK);
	return ret > 0 ? (ret / sizeof(__u64)) & UNWIND_KFRAME_MASK : 0;
}

/*
 * The end of rec's period at end_ns: its record goes to the ring buffer
 * unless its length is outside [min, max]. The entry is consumed either way,
 * and reused at the thread's next switch-out.
 */
static __always_inline void period_end(struct sfbpf_offcpu_sample *rec, __u64 end_ns,
				       struct sfbpf_offcpu_stats *cnt)
{
	__u64 delta = end_ns - rec->start_ns, us;
	__u32 size;

	if (delta < min_ns || delta > max_ns) {
		cnt->v[delta < min_ns ? SFBPF_OFFCPU_STAT_SHORT : SFBPF_OFFCPU_STAT_LONG]++;
		rec->start_ns = 0;
		return;
	}
	rec->end_ns = end_ns;
	rec->s.time_ns = end_ns;
	us = delta / 1000;
	rec->s.weight = us > 0xffffffffULL ? 0xffffffffU : (__u32)us;
	ustack_count_stop(&cnt->unwind, rec->s.stop);

	size = SFBPF_OFFCPU_HDR_SIZE +
	       (rec->s.nr_user + rec->s.nr_kernel + 2 * rec->s.nr_py) * sizeof(__u64);
	if (size <= SFBPF_OFFCPU_REC_SIZE) {
		/* Straight from the map value: no copy to build. */
		if (bpf_ringbuf_output(&events, rec, size,
				       target_wakeup_flag(&events, wakeup_bytes)))
			cnt->unwind.v[SFBPF_STAT_RB_DROPS]++;
		else
			cnt->unwind.v[SFBPF_STAT_EMITTED]++;
	}
	rec->start_ns = 0;
}

/*
 * prev is switching out with its last period still open: this program never
 * saw it switched back in. The kernel ran it without a sched_switch event
 * (seen on a Firecracker guest, where ftrace misses the same switches:
 * about one in 1,500, after a switch away from PID 1's threads). Kept open,
 * the period would be overwritten now and lost whole: a 50 ms sleep gone
 * from the profile. It ended when prev's present run began: now, less the
 * CPU time prev has had since (the fair class sets prev_sum_exec_runtime
 * at the switch-in, and put_prev has just brought sum_exec_runtime up to
 * date). Where that lands before the period's start (another class, whose
 * prev_sum is not its run's), the end is unknown: dropped, and counted.
 */
static __always_inline void close_unseen(struct task_struct *prev, struct sfbpf_offcpu_sample *rec,
					 struct sfbpf_offcpu_stats *cnt)
{
	__u64 now = bpf_ktime_get_ns(), ran;

	ran = BPF_CORE_READ(prev, se.sum_exec_runtime) -
	      BPF_CORE_READ(prev, se.prev_sum_exec_runtime);
	if (ran < now && now - ran > rec->start_ns) {
		cnt->v[SFBPF_OFFCPU_STAT_UNSEEN]++;
		period_end(rec, now - ran, cnt);
	} else {
		cnt->v[SFBPF_OFFCPU_STAT_UNSEEN_LOST]++;
		rec->start_ns = 0;
	}
}

/*
 * Prev's entry, its record's header filled in: the user and kernel stacks
 * follow (offcpu_walk(), offcpu_finish()). NULL: prev is not recorded.
 */
static __always_inline struct sfbpf_offcpu_sample *
switch_out(__u64 *ctx, struct task_struct *prev, bool preempt, struct scratch *sc,
	   struct sfbpf_offcpu_stats *cnt)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32, state;
	struct sfbpf_offcpu_sample *rec;
	int cls;

	if (!tid) /* the idle task is not waiting for anything */
		return NULL;
	state = prev_task_state(ctx, prev);
	if (state & TASK_DEAD) /* exiting: never switched in again */
		return NULL;
	/*
	 * do_exit() sets PF_EXITING before the sched_process_exit hook runs, and
	 * goes on after it (closing files, the last fput's task work, exit_mm on
	 * newer kernels) where it may block: an entry made then would outlive the
	 * thread, nobody left to delete it, until the map is full of them. Its user
	 * stack is being torn down anyway.
	 */
	if (BPF_CORE_READ(prev, flags) & PF_EXITING) {
		cnt->v[SFBPF_OFFCPU_STAT_EXITING]++;
		return NULL;
	}
	cls = state_class(preempt, state);
	if (!target_wanted(tgid))
		return NULL;
	rec = bpf_map_lookup_elem(&blocked, &tid);
	/* Before the state filter: a preempted switch-out ends an unseen run as well. */
	if (rec && rec->start_ns)
		close_unseen(prev, rec, cnt);
	if (!(state_mask & SFBPF_STATE_BIT(cls)))
		return NULL;
	if (!rec) {
		/* The thread's first period: insert, then fill in place. */
		sc->init.start_ns = 0;
		if (bpf_map_update_elem(&blocked, &tid, &sc->init, BPF_NOEXIST)) {
			cnt->v[SFBPF_OFFCPU_STAT_MAP_FULL]++;
			return NULL;
		}
		rec = bpf_map_lookup_elem(&blocked, &tid);
		if (!rec)
			return NULL;
	}
	cnt->unwind.v[SFBPF_STAT_SAMPLES]++;
	cnt->v[SFBPF_OFFCPU_STAT_BLOCKS]++;

	rec->state = cls;
	rec->end_ns = 0;
	rec->s.pid = tgid;
	rec->s.tid = tid;
	rec->s.cpu = bpf_get_smp_processor_id();
	rec->s.flags = SFBPF_SAMPLE_KERNEL_MODE; /* it left the CPU in the kernel */
	rec->s.nr_py = 0;
	rec->s.weight = 0;
	bpf_get_current_comm(rec->s.comm, sizeof(rec->s.comm));
	return rec;
}

/*
 * With CPU samples beside (on+off): prev's on-CPU time since its last CPU
 * sample (or its switch-in here), which its next sample will weigh.
 */
static __always_inline __u32 switch_out_owed(__u32 tid, __u64 now)
{
	const struct sfbpf_cpu_run *run;
	__u32 zero = 0;
	__u64 ns;

	if (!stamp_at_entry)
		return 0;
	run = bpf_map_lookup_elem(&cpu_run, &zero);
	if (!run || run->tid != tid || now < run->mark_ns)
		return 0;
	ns = now - run->mark_ns + run->owed_ns;
	return ns > 0xffffffffULL ? 0xffffffffU : (__u32)ns;
}

static __always_inline void switch_in(struct task_struct *next, __u64 now,
				      struct sfbpf_offcpu_stats *cnt)
{
	struct sfbpf_offcpu_sample *rec;
	__u32 tid = BPF_CORE_READ(next, pid), zero = 0;
	struct sfbpf_cpu_run *run = NULL;

	rec = tid ? bpf_map_lookup_elem(&blocked, &tid) : NULL;
	/* With CPU samples beside (stamp_at_entry): next's on-CPU time starts now. */
	if (stamp_at_entry)
		run = bpf_map_lookup_elem(&cpu_run, &zero);
	if (run) {
		run->tid = tid;
		run->mark_ns = now;
		run->owed_ns = rec ? rec->owed_ns : 0;
	}
	if (rec)
		rec->owed_ns = 0;
	if (!rec || !rec->start_ns)
		return;
	cnt->v[SFBPF_OFFCPU_STAT_WAKEUPS]++;
	period_end(rec, now, cnt);
}

/*
 * prev's frames of the after-walk runtimes in kinds (afterwalk.h; prev is the
 * current task).
 */
static __always_inline void offcpu_runtimes(struct scratch *sc, struct sfbpf_offcpu_sample *rec,
					    struct sfbpf_offcpu_stats *cnt, bool chained,
					    __u32 kinds)
{
	/* Bounded (128, 127): so is the first Python slot. */
	__u32 nu = unwind_nr_frames(rec->s.nr_user), nk = rec->s.nr_kernel & UNWIND_KFRAME_MASK;

	if (!user_stacks)
		return;
	if ((kinds & (1U << RT_AFTER_PY)) && sc->st.v8_nwords)
		rec->s.nr_py = v8_words_out(&sc->st, &rec->s.ips[nu + nk], SFBPF_OFFCPU_PY_FRAMES,
					    &rec->s.flags);
	else
		rec->s.nr_py = rt_after_walk(&sc->rt, &rec->s.ips[nu + nk], ustack_current_task(),
					     rec->s.pid, rec->s.tid, SFBPF_OFFCPU_PY_FRAMES,
					     &rec->s.flags, &cnt->unwind, chained, NULL, 0, kinds);
}

/* The start of prev's period (rec, if recorded), then next's switch-in. */
static __always_inline void offcpu_done(__u64 *ctx, struct sfbpf_offcpu_sample *rec,
					struct sfbpf_offcpu_stats *cnt, __u64 entry_ns)
{
	struct task_struct *next = (struct task_struct *)ctx[2];
	__u64 now = entry_ns;

	if (!stamp_at_entry)
		now = bpf_ktime_get_ns();
	/* Last: a non-zero start is what makes the entry a blocked period. */
	if (rec)
		rec->start_ns = now;
	switch_in(next, now, cnt);
}

/*
 * The end of a context switch, after prev's user walk (rec: prev's entry, or
 * NULL when prev is not recorded): prev's kernel stack and Python frames
 * and the start of its period, then next's switch-in. entry_ns: the
 * program's start, with stamp_at_entry. Chained (5.10-5.16), the runtime's
 * walk and next's switch-in are the chain's last link (afterwalk.h:
 * sfbpf_offcpu_finish and its siblings), as the CPU profiler has it; nothing but prev's start
 * follows the tail call (with next's switch-in there too, 5.10's verifier went past 1M instructions
 * on sfbpf_offcpu_walk, 174k without the link).
 */
static __always_inline void offcpu_finish(__u64 *ctx, struct scratch *sc,
					  struct sfbpf_offcpu_sample *rec,
					  struct sfbpf_offcpu_stats *cnt, __u64 entry_ns,
					  bool chained)
{
	__u32 nu, nk = 0;

	if (rec) {
		/* No reports: the loader reads the CPU profiler's lifecycle ring, not this one's. */
		nu = ustack_end(&sc->st, &rec->s, &cnt->unwind, NULL, rec->s.pid, false);
		if (kernel_stacks)
			nk = record_kernel(ctx, &rec->s.ips[nu]);
		rec->s.nr_user = nu;
		rec->s.nr_kernel = nk;
		if (chained) {
			sc->entry_ns = entry_ns;
			bpf_tail_call(ctx, &walk_chain, rt_after_link(&sc->rt, &sc->st));
			/*
			 * Past the kernel's tail-call limit, which the walk of at
			 * most SFBPF_OFFCPU_MAX_FRAMES never reaches (below): no
			 * Python frames, and next's period lost, counted.
			 */
			cnt->v[SFBPF_OFFCPU_STAT_NO_FINISH]++;
			rec->start_ns = stamp_at_entry ? entry_ns : bpf_ktime_get_ns();
			return;
		}
		offcpu_runtimes(sc, rec, cnt, false, RT_AFTER_ALL);
	}
	offcpu_done(ctx, rec, cnt, entry_ns);
}

/*
 * One context switch, prev's user stack walked in this program (bpf_loop())
 * or, chained, in as many programs as it needs (sfbpf_offcpu_walk): the
 * loader loads one of sfbpf_offcpu and sfbpf_offcpu_chained, as the kernel
 * allows.
 */
static __always_inline int offcpu_switch(__u64 *ctx, bool chained)
{
	/* TP_PROTO(bool preempt, struct task_struct *prev, struct task_struct *next, ...) */
	struct task_struct *prev = (struct task_struct *)ctx[1];
	const struct sfbpf_proc *proc = NULL;
	struct sfbpf_offcpu_stats *cnt;
	struct sfbpf_offcpu_sample *rec;
	__u64 now = stamp_at_entry ? bpf_ktime_get_ns() : 0;
	struct scratch *sc;
	__u32 zero = 0;

	cnt = bpf_map_lookup_elem(&stats, &zero);
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!cnt || !sc)
		return 0;
	cnt->v[SFBPF_OFFCPU_STAT_SWITCHES]++;
	rec = switch_out(ctx, prev, (bool)ctx[0], sc, cnt);
	if (rec) {
		rec->owed_ns = switch_out_owed(rec->s.tid, now);
		proc = ustack_begin(&sc->st, &rec->s, &cnt->unwind, ustack_current_task(),
				    rec->s.pid, false);
		if (chained)
			rt_after_kind(&sc->rt, rec->s.pid);
	}
	if (proc && chained) {
		/*
		 * Every frame in the links (sfbpf_offcpu_walk): with the runtimes'
		 * steps inlined in its frames (runtime.h), walking the first ones
		 * here as well took this program past 1M instructions on 6.18's
		 * verifier. The walk of at most SFBPF_OFFCPU_MAX_FRAMES still
		 * leaves a tail call for the last link (below).
		 */
		sc->entry_ns = now;
		bpf_tail_call(ctx, &walk_chain, USTACK_CHAIN_WALK);
		sc->st.stop = SFBPF_STOP_DEPTH;
	} else if (proc) {
		ustack_walk(&sc->st, &rec->s, proc);
	}
	offcpu_finish(ctx, sc, rec, cnt, now, chained);
	return 0;
}

SEC("raw_tp/sched_switch")
int sfbpf_offcpu(__u64 *ctx)
{
	return offcpu_switch(ctx, false);
}

SEC("raw_tp/sched_switch")
int sfbpf_offcpu_chained(__u64 *ctx)
{
	return offcpu_switch(ctx, true);
}

/*
 * What a chain link works on: the per-CPU counters and scratch, and prev's
 * entry (*rec, NULL when prev is not recorded). False: no per-CPU state.
 */
static __always_inline bool link_state(struct sfbpf_offcpu_stats **cnt, struct scratch **sc,
				       struct sfbpf_offcpu_sample **rec)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;

	*cnt = bpf_map_lookup_elem(&stats, &zero);
	*sc = bpf_map_lookup_elem(&scratch, &zero);
	*rec = bpf_map_lookup_elem(&blocked, &tid);
	return *cnt && *sc;
}

/* The chain's next link: prev's walk goes on where the previous program left it. */
SEC("raw_tp")
int sfbpf_offcpu_walk(__u64 *ctx)
{
	struct sfbpf_offcpu_sample *rec;
	struct sfbpf_offcpu_stats *cnt;
	struct scratch *sc;

	if (!link_state(&cnt, &sc, &rec))
		return 0;
	if (rec)
		ustack_chain(ctx, &sc->st, rec->s.ips, rec->s.pid);
	offcpu_finish(ctx, sc, rec, cnt, sc->entry_ns, true);
	return 0;
}

/*
 * Its walk takes one link per SFBPF_CHAIN_FRAMES frames, all after the
 * first program: the kernel's limit of tail calls (32 before 5.17) always
 * leaves one for the last link.
 */
_Static_assert((SFBPF_OFFCPU_MAX_FRAMES + SFBPF_CHAIN_FRAMES - 1) / SFBPF_CHAIN_FRAMES + 1 < 32,
	       "a chained off-CPU walk leaves a tail call for sfbpf_offcpu_finish");

/*
 * A chain's last link: prev's frames of the runtime kind (afterwalk.h; CPython's
 * link names its V8 frames), its period's start, next's switch-in.
 */
static __always_inline int offcpu_finish_link(__u64 *ctx, enum rt_after kind)
{
	struct sfbpf_offcpu_sample *rec;
	struct sfbpf_offcpu_stats *cnt;
	struct scratch *sc;

	if (!link_state(&cnt, &sc, &rec))
		return 0;
	/* prev's V8 frames, stepped by fp, named here (v8.h: v8_later_names()). */
	if (kind == RT_AFTER_PY && rec && sc->st.v8_nlater) {
		v8_later_names(&sc->st, rec->s.ips, unwind_nr_frames(rec->s.nr_user));
		ustack_count_v8(&sc->st, &cnt->unwind);
	}
	if (rec)
		offcpu_runtimes(sc, rec, cnt, true, 1U << kind);
	offcpu_done(ctx, rec, cnt, sc->entry_ns);
	return 0;
}

/* The chain's last links, in walk_chain from USTACK_CHAIN_FINISH, in enum rt_after's order. */
#define OFFCPU_FINISH_LINK(name, kind)                \
	SEC("raw_tp")                                 \
	int name(__u64 *ctx)                          \
	{                                             \
		return offcpu_finish_link(ctx, kind); \
	}
OFFCPU_FINISH_LINK(sfbpf_offcpu_finish, RT_AFTER_PY)
OFFCPU_FINISH_LINK(sfbpf_offcpu_finish_php, RT_AFTER_PHP)
OFFCPU_FINISH_LINK(sfbpf_offcpu_finish_ruby, RT_AFTER_RB)
OFFCPU_FINISH_LINK(sfbpf_offcpu_finish_perl, RT_AFTER_PL)

/* A thread exits (in its own context): forget its entry, so tids can be reused. */
SEC("raw_tp/sched_process_exit")
int sfbpf_offcpu_exit(__u64 *ctx)
{
	struct sfbpf_offcpu_stats *cnt;
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;

	(void)ctx;
	if (bpf_map_delete_elem(&blocked, &tid))
		return 0;
	cnt = bpf_map_lookup_elem(&stats, &zero);
	if (cnt)
		cnt->v[SFBPF_OFFCPU_STAT_EXITS]++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
