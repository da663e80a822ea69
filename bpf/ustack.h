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
/*
 * What the kernel offers, as the loader probed it (docs/DESIGN-unwinder.md,
 * "Kernels"). Branches on these are dead code the verifier never looks at, so
 * a helper an older kernel lacks may stand in the branch it does not take.
 */
const volatile bool have_task_btf = true; /* bpf_get_current_task_btf(): 5.11 */
const volatile bool have_task_pt_regs = true; /* bpf_task_pt_regs(): 5.15 */
/*
 * Without bpf_task_pt_regs(): the kernel's THREAD_SIZE. The user registers
 * are saved at the top of the task's kernel stack (task_pt_regs() on x86-64
 * and AArch64, no padding above them there).
 */
const volatile __u64 thread_size = 16384;

/*
 * The chained walker's next programs (kernels without bpf_loop()), set by
 * the loader after load: the program's own walker, and the links that
 * finish a sample (its interpreter frames, then the send), one for each
 * after-walk runtime from USTACK_CHAIN_FINISH on (afterwalk.h).
 */
#define USTACK_CHAIN_WALK 0
#define USTACK_CHAIN_FINISH 1
#define USTACK_CHAIN_LINKS (USTACK_CHAIN_FINISH + SFBPF_CHAIN_FINISHES)

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, USTACK_CHAIN_LINKS);
	__uint(key_size, sizeof(__u32)); /* sizes: program arrays take no BTF types */
	__uint(value_size, sizeof(__u32));
} walk_chain SEC(".maps");

/*
 * The current task: a BTF pointer where the kernel has them (its fields are
 * then read directly), else an address whose fields are read with CO-RE
 * (bpf_probe_read_kernel): the ustack_task_* readers below.
 */
static __always_inline struct task_struct *ustack_current_task(void)
{
	if (have_task_btf)
		return bpf_get_current_task_btf();
	return (struct task_struct *)bpf_get_current_task();
}

/* task has user memory and is not a kernel thread: it has a user stack. */
static __always_inline bool ustack_task_user(struct task_struct *task)
{
	if (have_task_btf)
		return task->mm && !(task->flags & USTACK_PF_KTHREAD);
	return BPF_CORE_READ(task, mm) && !(BPF_CORE_READ(task, flags) & USTACK_PF_KTHREAD);
}

/* The group leader's start, in ns since boot. */
static __always_inline __u64 ustack_task_start_ns(struct task_struct *task)
{
	if (have_task_btf)
		return task->group_leader->start_boottime;
	return BPF_CORE_READ(task, group_leader, start_boottime);
}

/*
 * The task's user registers, saved at kernel entry, or NULL. For a sample in
 * user mode they are the sample's own registers (x86-64 and AArch64 save
 * interrupted user state there too), so one source serves both cases; a
 * thread off the CPU cannot change them.
 */
static __always_inline struct pt_regs *ustack_task_regs(struct task_struct *task)
{
	__u64 stack;

	if (have_task_pt_regs)
		return (struct pt_regs *)bpf_task_pt_regs(task);
	/* task_pt_regs(): the top of the kernel stack, less one struct pt_regs. */
	stack = (__u64)BPF_CORE_READ(task, stack);
	if (!stack)
		return NULL;
	return (struct pt_regs *)(stack + thread_size - bpf_core_type_size(struct pt_regs));
}

_Static_assert(SFBPF_STAT_NOTIFY_LIMITED == SFBPF_STAT_NOTIFY_SENT + 1 &&
		       SFBPF_STAT_NOTIFY_DROPS == SFBPF_STAT_NOTIFY_SENT + 2 &&
		       SFBPF_STAT_NOTIFY_SENT + 3 < SFBPF_STAT__COUNT,
	       "unwind_report's return values index the counters");

/* The group leader's start time in clock ticks: /proc/PID/stat's starttime. */
static __always_inline __u64 unwind_start_ticks(struct task_struct *task)
{
	__u64 tick = clock_tick_ns;

	return tick ? ustack_task_start_ns(task) / tick : 0;
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
 * At the end of a sample (ustack_end()): reports what the
 * loader lacks, a process or a mapping, and counts the report's fate.
 */
static __always_inline void unwind_account(struct task_struct *task, __u32 tgid,
					   const struct sfbpf_unwind_state *st, __u8 stop,
					   struct sfbpf_stats *cnt)
{
	__u32 type = 0;
	__u64 addr = 0;
	int ret;

	if (stop == SFBPF_STOP_NO_PROC || st->vma_walk) {
		/*
		 * Walked with VMAs found in the kernel: still to be read, but
		 * not in a hurry, unless a file had no table by its identity
		 * (the loader learns of a file by reading a process mapping it).
		 */
		type = SFBPF_EVENT_NO_PROC;
		addr = st->vma_walk && st->vma_miss != 1 + SFBPF_VMA_NO_IDENT ?
			       SFBPF_NO_PROC_WALKED :
			       0;
	} else if (stop == SFBPF_STOP_NO_MAPPING && st->miss_addr) {
		type = SFBPF_EVENT_NO_MAPPING;
		addr = st->miss_addr;
	} else if (st->leaf_miss) {
		/* Walked past by a frame-pointer step: the loader still lacks it. */
		type = SFBPF_EVENT_NO_MAPPING;
		addr = st->leaf_miss;
	}
	if (!type)
		return;
	ret = unwind_report(tgid, type, addr, unwind_start_ticks(task));
	cnt->v[SFBPF_STAT_NOTIFY_SENT + (ret & 3)]++;
}

/*
 * The pc, sp and frame pointer of the user registers at regs into st: read
 * directly from bpf_task_pt_regs()'s BTF pointer, else field by field (an
 * address the verifier knows nothing of; a copy of the whole struct, 336
 * bytes on AArch64, would not fit the 512-byte BPF stack beside the walk's).
 * Returns 0, or -1: unreadable.
 */
static __always_inline int ustack_read_regs(struct pt_regs *regs, struct sfbpf_unwind_state *st)
{
	if (have_task_pt_regs) {
		arch_user_regs(regs, &st->pc, &st->sp, &st->fp);
		return 0;
	}
	return arch_read_user_regs(regs, &st->pc, &st->sp, &st->fp) ? -1 : 0;
}

/*
 * Begins a user-stack sample of task into s->ips: the user registers, the
 * process's mapping table, the walk's first frame. Returns the process's
 * table when frames are to be walked (ustack_walk(), or the chained
 * ustack_chain()), else NULL: the sample is complete as it is (no user
 * stack, no table, a PC in no mapping), with the reason in st->stop.
 * With vma (the CPU profiler's one-program walk: its sampled task is
 * current), a process without an entry is walked with the VMAs found in the
 * kernel (vmafind.h). ustack_end() finishes every sample.
 */
static __always_inline const struct sfbpf_proc *
ustack_begin(struct sfbpf_unwind_state *st, struct sfbpf_sample *s, struct sfbpf_stats *cnt,
	     struct task_struct *task, __u32 tgid, bool vma)
{
	const struct sfbpf_proc *proc, *kept;
	struct pt_regs *regs;
	bool stale;

	unwind_reset(st);
	st->tgid = tgid;
	if (!user_stacks || !tgid || !ustack_task_user(task)) {
		st->stop = SFBPF_STOP_KERNEL_ONLY;
		return NULL;
	}
	regs = ustack_task_regs(task);
	if (!regs || ustack_read_regs(regs, st)) {
		st->stop = SFBPF_STOP_READ;
		return NULL;
	}
	st->regs = (__u64)regs;
	st->max = max_user_frames;

	if (!st->pc) { /* no user context (e.g. an io_uring worker) */
		st->stop = SFBPF_STOP_NO_MAPPING;
		return NULL;
	}
	proc = unwind_proc(task, tgid, &stale);
	/*
	 * No entry yet, or one read before the process mapped more code
	 * (vmafind.h): the mappings this walk meets, found in the kernel; for
	 * an entry, only if they hold the leaf (not the vDSO: they have none).
	 * Two call sites: one, with the choice kept in a variable across it,
	 * took the program past 6.1's 512 bytes of stack over its calls.
	 */
	if (vma && proc && vmafind_newer(proc, tgid, unwind_start_ticks(task), s->time_ns)) {
		kept = vmafind_begin(st, st->pc, tgid, unwind_start_ticks(task));
		if (kept) {
			cnt->v[SFBPF_STAT_VMA_OVER_ENTRY]++;
			proc = kept;
		}
	} else if (vma && !proc && !stale) {
		/* Inside execve (vmafind.h): no user stack to read; the exec's event follows. */
		if (vmafind_in_execve()) {
			st->stop = SFBPF_STOP_EXECVE;
			return NULL;
		}
		proc = vmafind_begin(st, st->pc, tgid, unwind_start_ticks(task));
	}
	if (!proc) {
		/* No table yet: the leaf still tells where the time went. */
		s->ips[0] = st->pc;
		st->n = 1;
		st->stop = SFBPF_STOP_NO_PROC;
		cnt->v[SFBPF_STAT_STALE_PROC] += stale;
		return NULL;
	}
	return unwind_begin(st, s->ips, proc, vma) ? proc : NULL;
}

/*
 * After a walk in proc: true if proc still holds the table the walk began in.
 * A hash map may hand a replaced element to the next update at once, with
 * no RCU grace period: always when preallocated (procs before 6.1), and
 * through bpf_mem_alloc's per-CPU free lists after. A refresh of this
 * process on another CPU during the walk, followed by any other update,
 * may then have given the walk another process's mappings. Every update
 * writes a new, never reused generation ahead of the mappings, so the walk
 * checks it after its last read of them. A replaced entry keeps only the
 * leaf (read from the registers, not the table): one counted, truncated
 * sample instead of a wrong stack.
 */
static __always_inline bool ustack_same_table(struct sfbpf_unwind_state *st,
					      const struct sfbpf_proc *proc)
{
	if (*(volatile const __u32 *)&proc->generation == st->proc_gen)
		return true;
	if (st->n)
		st->n = 1;
	st->stop = SFBPF_STOP_REPLACED;
	return false;
}

/*
 * The walk of a sample begun by ustack_begin(), in this program: one
 * bpf_loop() iteration per frame (5.17 and later).
 */
static __always_inline void ustack_walk(struct sfbpf_unwind_state *st, struct sfbpf_sample *s,
					const struct sfbpf_proc *proc)
{
	struct sfbpf_unwind_ctx c = { .st = st, .ips = s->ips, .proc = proc };

	bpf_loop(st->max, unwind_step, &c, 0);
	ustack_same_table(st, proc);
}

/*
 * The walk of a sample begun by ustack_begin() on a kernel without
 * bpf_loop(): UNWIND_CHAIN_FRAMES frames here, then, while the stack goes on,
 * the same again in the program walk_chain holds (the calling program's own
 * walker), which finds the walk in st (per CPU: a chain runs on one CPU, to
 * its end, before anything else uses st). Returns when the walk is over in
 * this program: the stack ended, or the chain could go no further (its
 * length is the kernel's tail-call limit: st->stop says depth). The process's
 * table is looked up again in every program; in a table refreshed in between
 * the walk goes on from the current PC's mapping there.
 */
static __always_inline void ustack_chain(void *ctx, struct sfbpf_unwind_state *st, __u64 *ips,
					 __u32 tgid)
{
	const struct sfbpf_proc *proc = bpf_map_lookup_elem(&procs, &tgid);
	bool done;
	int idx;

	if (!proc) {
		st->stop = SFBPF_STOP_NO_PROC;
		return;
	}
	if (proc->generation != st->proc_gen && !st->in_rt_code) {
		/*
		 * Refreshed since the last link: the mapping index is the old
		 * table's. Found again in the new one, the walk goes on there.
		 */
		idx = unwind_find_mapping(proc, st->exact ? st->pc : st->pc - 1, 0);
		if (idx < 0) {
			st->stop = SFBPF_STOP_NO_MAPPING;
			st->miss_addr = st->pc;
			return;
		}
		st->map = idx;
		st->proc_gen = proc->generation;
	}
	done = unwind_frames(st, ips, proc);
	if (!ustack_same_table(st, proc) || done)
		return;
	bpf_tail_call(ctx, &walk_chain, USTACK_CHAIN_WALK);
	st->stop = SFBPF_STOP_DEPTH;
}

/*
 * The sample's V8 frames per kind: at its end, or, chained, once its last
 * link named them (v8_later_names(): none were before).
 */
static __always_inline void ustack_count_v8(struct sfbpf_unwind_state *st, struct sfbpf_stats *cnt)
{
	cnt->v[SFBPF_STAT_V8_INTERPRETED] += st->v8_interpreted;
	cnt->v[SFBPF_STAT_V8_BASELINE] += st->v8_baseline;
	cnt->v[SFBPF_STAT_V8_OPTIMIZED] += st->v8_optimized;
	cnt->v[SFBPF_STAT_V8_OTHER] += st->v8_other;
	cnt->v[SFBPF_STAT_V8_UNREAD] += st->v8_unread;
}

/*
 * Ends a user-stack sample: sets s->stop and returns the number of user
 * frames (none with user_stacks off), at most UNWIND_MAX_FRAMES as the
 * verifier knows. Counts frames, frame-pointer steps, stale entries and
 * table-less objects met in cnt; the stop reason is the caller's to count
 * (the off-CPU program counts it when the period is kept). With report, an
 * unknown process or mapping is reported to the loader (rate-limited): only
 * a program whose lifecycle ring the loader reads may ask for that.
 */
static __always_inline __u32 ustack_end(struct sfbpf_unwind_state *st, struct sfbpf_sample *s,
					struct sfbpf_stats *cnt, struct task_struct *task,
					__u32 tgid, bool report)
{
	/*
	 * A read failed inside execve, in a walk with the entry of the image
	 * the registers are still of: past the exec's point of no return the
	 * mm is the new image's, the old stack gone (one in eight of a shell
	 * session's user stacks stopped "read" so). Not an unwinding failure:
	 * execve's stop, no user frames, as for a process without an entry.
	 * The constant first: where it is false (before 5.11) the verifier
	 * sees no branch at all (5.10's chained off-CPU walk, near its
	 * limit, was refused with one more).
	 */
	if (have_task_btf && st->stop == SFBPF_STOP_READ && vmafind_in_execve()) {
		st->stop = SFBPF_STOP_EXECVE;
		st->n = 0;
	}
	s->stop = st->stop;
	s->rt_epoch = st->rt_epoch;
	cnt->v[SFBPF_STAT_FRAMES] += st->n;
	cnt->v[SFBPF_STAT_FP_FRAMES] += st->fp_frames;
	cnt->v[SFBPF_STAT_GAP_FP_FRAMES] += st->gap_frames;
	cnt->v[SFBPF_STAT_FP_SWITCHES] += st->switches;
	cnt->v[SFBPF_STAT_LEAF_FP_STEPS] += st->leaf_miss != 0;
	cnt->v[SFBPF_STAT_PENDING] += (st->obj_flags & SFBPF_OBJ_F_PENDING) != 0;
	cnt->v[SFBPF_STAT_NO_BUDGET] += (st->obj_flags & SFBPF_OBJ_F_NO_BUDGET) != 0;
	cnt->v[SFBPF_STAT_VMA_WALKS] += st->vma_walk;
	cnt->v[SFBPF_STAT_VMA_FOUND] += st->vma_found;
	cnt->v[SFBPF_STAT_HS_INTERPRETED] += st->hs_interpreted;
	cnt->v[SFBPF_STAT_HS_COMPILED] += st->hs_compiled;
	ustack_count_v8(st, cnt);
	cnt->v[SFBPF_STAT_V8_LATER_LOST] += st->v8_later_lost;
	if (st->hs_stop) {
		__u32 i = st->hs_stop - 1 + SFBPF_STAT_HS_STOP_BASE;

		cnt->v[SFBPF_STAT_HS_FAILED]++;
		barrier_var(i);
		if (i <= SFBPF_STAT_HS_STOP_LAST)
			cnt->v[i]++;
	}
	if (st->vma_miss) {
		__u32 i = st->vma_miss - 1 + SFBPF_STAT_VMA_MISS_BASE;

		barrier_var(i);
		if (i <= SFBPF_STAT_VMA_MISS_LAST)
			cnt->v[i]++;
	}
	if (report)
		unwind_account(task, tgid, st, s->stop, cnt);
	return unwind_nr_frames(st->n);
}

/*
 * Counts why a stack ended in cnt. Bounded where the access is: older
 * verifiers (6.1) do not carry a bound checked on one register over to a copy
 * of it made before the check, which the compiler may do for base + stop.
 */
static __always_inline void ustack_count_stop(struct sfbpf_stats *cnt, __u8 stop)
{
	__u32 i = stop;

	if (i >= SFBPF_STOP__COUNT)
		i = SFBPF_STOP_READ;
	i += SFBPF_STAT_STOP_BASE;
	barrier_var(i);
	if (i < SFBPF_STAT__COUNT)
		cnt->v[i]++;
}

#endif /* SFBPF_USTACK_H */
