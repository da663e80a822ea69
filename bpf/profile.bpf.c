// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CPU profiler: a perf_event program on a cpu-clock event per CPU. Each sample
 * unwinds the user stack from the SFrame tables (ustack.h), adds the kernel
 * stack and sends only the used part of the sample to userspace. A sample
 * that finds no table for its process, or a PC in no known mapping, tells the
 * loader (rate-limited). Two raw tracepoint programs follow processes: exec
 * and exit drop the process's entry at once (its mappings are no longer
 * valid) and tell the loader. See docs/DESIGN-lifecycle.md.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "abi.h"
#include "target.h"
#include "ustack.h"
#include "python.h"
#include "php.h"
#include "ruby.h"
#include "perl.h"
#include "afterwalk.h"

/* Settings, filled by userspace between open and load. */
const volatile bool kernel_stacks = true;
const volatile bool skip_idle = false;
/* on+off: the off-CPU program times each CPU's thread (cpu_run): samples weigh that time. */
const volatile bool timed_samples = false;
/*
 * Wake the reader only once this many bytes wait (0: at every sample). A
 * wake-up per sample costs the reader a context switch per sample; it polls
 * with a timeout for what stays below the mark (profile__poll).
 */
const volatile __u64 wakeup_bytes = 0;
/*
 * The same for exit events (nothing waits for them). Exec events then wake
 * the reader forcibly: the default wakes only an empty ring's reader, and
 * unread exits may be waiting.
 */
const volatile __u64 exit_wakeup_bytes = 0;

TARGET_PERCPU_VALUE(stats, struct sfbpf_stats);
/* on+off: shared with the off-CPU program, which starts it at each switch (abi.h). */
TARGET_PERCPU_VALUE(cpu_run, struct sfbpf_cpu_run);

/* This CPU's last sample: whose it was, and the time it accounted for (sample_periods). */
struct period_run {
	__u64 last_ns; /* when it was taken (0: none yet) */
	__u64 switches; /* its thread's context switches then (nvcsw + nivcsw) */
	__s64 carry; /* time since last_ns's grid point not yet paid in periods (ns) */
	__u32 tid;
	__u32 pad;
};

/* The sample being built: too big for the 512-byte BPF stack. */
struct scratch {
	struct sfbpf_sample sample;
	struct sfbpf_unwind_state st;
	struct rt_walks rt;
	struct period_run periods;
};

_Static_assert(sizeof(struct scratch) < 32768, "per-CPU scratch value: under 32 KiB");
_Static_assert(SFBPF_SAMPLE_HDR_SIZE + (UNWIND_MAX_FRAMES + UNWIND_KFRAME_MASK + 2 * PY_SLOT_MASK) *
					       sizeof(__u64) <=
		       sizeof(struct scratch),
	       "profile_send's bounds: inside scratch");

TARGET_PERCPU_VALUE(scratch, struct scratch);

/*
 * A sample with a runtime's frames is named from the process's memory when
 * the reader gets it, which must then still hold them: a Perl BEGIN block
 * is freed once run, a short script's process is gone. Waiting for the
 * mark or the reader's timeout (100 ms) left 16 % of a module's test
 * suite's Perl samples with a frame freed or unreadable (3 % since): such
 * a sample wakes the reader, at most once a RUNTIME_WAKE_NS on all CPUs
 * (1,000 wake-ups a second); other samples pay one test.
 */
#define RUNTIME_WAKE_NS (1 * 1000000ULL)
__u64 runtime_woken_ns = 0;

static __always_inline __u64 sample_wakeup_flag(struct sfbpf_stats *cnt, __u32 npy)
{
	__u64 flags = target_wakeup_flag(&events, wakeup_bytes), now;

	if (!npy || flags != BPF_RB_NO_WAKEUP)
		return flags;
	now = bpf_ktime_get_ns();
	if (now - runtime_woken_ns < RUNTIME_WAKE_NS)
		return flags;
	runtime_woken_ns = now;
	cnt->v[SFBPF_STAT_RUNTIME_WAKEUPS]++;
	return BPF_RB_FORCE_WAKEUP;
}

/* The sample, its user, kernel and npy Python frames, to the ring buffer. */
static __always_inline void profile_send(struct scratch *sc, struct sfbpf_stats *cnt, __u32 npy)
{
	struct sfbpf_sample *s = &sc->sample;
	/*
	 * Bounded for the verifier (the size's test alone may be made on a
	 * copy): the largest size these allow still lies inside scratch.
	 */
	__u32 nu = unwind_nr_frames(s->nr_user), nk = s->nr_kernel & UNWIND_KFRAME_MASK, size;

	npy &= PY_SLOT_MASK;
	s->nr_py = npy;
	size = SFBPF_SAMPLE_HDR_SIZE + (nu + nk + 2 * npy) * sizeof(__u64);
	if (size > sizeof(*s))
		return;
	if (bpf_ringbuf_output(&events, s, size, sample_wakeup_flag(cnt, npy)))
		cnt->v[SFBPF_STAT_RB_DROPS]++;
	else
		cnt->v[SFBPF_STAT_EMITTED]++;
}

/*
 * The after-walk runtimes' frames of the sample (afterwalk.h: those in
 * kinds), after its user and kernel frames: how many.
 */
static __always_inline __u32 profile_runtimes(struct scratch *sc, struct sfbpf_stats *cnt,
					      struct task_struct *task, bool chained, __u32 kinds)
{
	struct sfbpf_sample *s = &sc->sample;
	/* Bounded (1,024, 127): so is the first Python slot. */
	__u32 nu = unwind_nr_frames(s->nr_user), nk = s->nr_kernel & UNWIND_KFRAME_MASK;
	__u32 room = (SFBPF_MAX_FRAMES + SFBPF_MAX_KFRAMES - nu - nk) / 2;

	if (!user_stacks || !s->tid)
		return 0;
	/* A node's frames have no Python's beside them. */
	if ((kinds & (1U << RT_AFTER_PY)) && sc->st.v8_nwords)
		return v8_words_out(&sc->st, &s->ips[nu + nk], room, &s->flags);
	return rt_after_walk(&sc->rt, &s->ips[nu + nk], task, s->pid, s->tid, room, &s->flags, cnt,
			     chained, &sc->st, nu ? s->ips[0] : 0, kinds);
}

/*
 * The end of a sample, after its user walk: its stop reason counted, the
 * kernel stack, the Python frames, and only the used part of it to the ring
 * buffer. Chained, the runtime's walk is a program of its own (afterwalk.h:
 * sfbpf_profile_finish and its siblings): the links' verifier budget stays
 * the native walk's.
 */
static __always_inline void profile_finish(struct bpf_perf_event_data *ctx, struct scratch *sc,
					   struct sfbpf_stats *cnt, struct task_struct *task,
					   bool chained)
{
	struct sfbpf_sample *s = &sc->sample;
	__u32 nu, nk = 0;
	long ret;

	nu = ustack_end(&sc->st, s, cnt, task, s->pid, true);
	ustack_count_stop(cnt, s->stop);

	if (kernel_stacks && (s->flags & SFBPF_SAMPLE_KERNEL_MODE)) {
		ret = bpf_get_stack(ctx, &s->ips[nu], SFBPF_MAX_KFRAMES * sizeof(__u64), 0);
		if (ret > 0)
			nk = (ret / sizeof(__u64)) & UNWIND_KFRAME_MASK;
	}
	s->nr_user = nu;
	s->nr_kernel = nk;
	if (chained) {
		bpf_tail_call(ctx, &walk_chain, rt_after_link(&sc->rt, &sc->st));
		/* Past the kernel's tail-call limit (a full chain): no runtime's frames. */
		profile_send(sc, cnt, 0);
		return;
	}
	profile_send(sc, cnt, profile_runtimes(sc, cnt, task, false, RT_AFTER_ALL));
}

/* A sample stands for at most this many periods (a virtual CPU stopped for seconds). */
#define MAX_SAMPLE_PERIODS 100000

/*
 * How many periods of CPU time the sample stands for. cpu-clock fires every
 * sample_period ns on each CPU, but the kernel skips the points it cannot
 * serve: throttled (above kernel.perf_event_max_sample_rate per tick, a
 * limit it lowers by itself when samples take long: "perf: interrupt took
 * too long"), or a virtual CPU its host did not run. The points it skipped
 * while the current thread ran were the thread's: since this CPU's previous
 * sample if that was the thread's, with no context switch since (a thread
 * leaves a CPU only through one), else since the thread's switch-in here
 * (run, in on+off runs). Those periods go to this sample; the rest of a gap
 * was other threads', and is lost, as perf loses it. Since the previous
 * sample, the elapsed time decides, carried from sample to sample, not a
 * count: a sample late by most of a period, then one on time, stand for two
 * periods, not three.
 */
static __always_inline __u32 sample_periods(struct bpf_perf_event_data *ctx, struct period_run *r,
					    const struct sfbpf_cpu_run *run,
					    struct task_struct *task, __u32 tid, __u64 now,
					    struct sfbpf_stats *cnt)
{
	__u64 period = ctx->sample_period, switches, n = 1;
	__s64 credit = 0;

	switches = BPF_CORE_READ(task, nvcsw) + BPF_CORE_READ(task, nivcsw);
	if (!period) {
		/* no period to count in */
	} else if (r->last_ns && r->tid == tid && r->switches == switches && now > r->last_ns &&
		   now - r->last_ns < MAX_SAMPLE_PERIODS * period) {
		credit = (__s64)(now - r->last_ns) + r->carry;
		if (credit > (__s64)period)
			n = (__u64)credit / period;
		credit -= (__s64)(n * period);
		/* Early samples do not pile up a debt: at most one period's. */
		if (credit < -(__s64)period)
			credit = -(__s64)period;
	} else if (run && run->tid == tid && run->mark_ns && now > run->mark_ns &&
		   now - run->mark_ns < MAX_SAMPLE_PERIODS * period) {
		/* The thread's first sample since its switch-in: the points since, this one too. */
		n = 1 + (now - run->mark_ns) / period;
	}
	cnt->v[SFBPF_STAT_FILLED_PERIODS] += n - 1;
	r->last_ns = now;
	r->switches = switches;
	r->carry = credit;
	r->tid = tid;
	return (__u32)n;
}

/*
 * The sample's weight: in on+off runs, its thread's on-CPU time since its
 * previous sample, as the off-CPU program timed it (cpu_run): exact, the
 * periods the kernel skipped and the ends of slices no sample fell in
 * included; otherwise, and for a thread not timed yet (running since before
 * the start), periods (sample_periods), and its timing starts here.
 */
static __always_inline void sample_weight(struct bpf_perf_event_data *ctx, struct scratch *sc,
					  struct task_struct *task, struct sfbpf_stats *cnt)
{
	struct sfbpf_sample *s = &sc->sample;
	struct sfbpf_cpu_run *run = NULL;
	__u64 now = s->time_ns, ns;
	__u32 zero = 0;

	if (timed_samples)
		run = bpf_map_lookup_elem(&cpu_run, &zero);
	s->weight = sample_periods(ctx, &sc->periods, run, task, s->tid, now, cnt);
	if (!run)
		return;
	if (run->tid == s->tid && now >= run->mark_ns) {
		ns = now - run->mark_ns + run->owed_ns;
		/* A weight holds 4.29 s at most: the rest waits for the next sample. */
		run->owed_ns = ns > 0xffffffffULL ? ns - 0xffffffffULL : 0;
		s->weight = ns > 0xffffffffULL ? 0xffffffffU : (__u32)ns;
		s->flags |= SFBPF_SAMPLE_TIMED;
	} else {
		run->tid = s->tid;
		run->owed_ns = 0;
	}
	run->mark_ns = now;
}

/*
 * One sample, walked in this program (bpf_loop()) or, chained, in as many
 * programs as the stack needs (sfbpf_profile_walk): the loader loads one of
 * sfbpf_profile and sfbpf_profile_chained, as the kernel allows.
 */
static __always_inline int profile_sample(struct bpf_perf_event_data *ctx, bool chained)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0;
	const struct sfbpf_proc *proc;
	struct task_struct *task;
	struct sfbpf_stats *cnt;
	struct sfbpf_sample *s;
	struct scratch *sc;

	if (skip_idle && !(__u32)id)
		return 0;
	if (!target_wanted(tgid))
		return 0;
	sc = bpf_map_lookup_elem(&scratch, &zero);
	cnt = bpf_map_lookup_elem(&stats, &zero);
	if (!sc || !cnt)
		return 0;
	cnt->v[SFBPF_STAT_SAMPLES]++;

	s = &sc->sample;
	s->time_ns = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = (__u32)id;
	s->cpu = bpf_get_smp_processor_id();
	s->flags = (__s64)PT_REGS_IP(&ctx->regs) < 0 ? SFBPF_SAMPLE_KERNEL_MODE : 0;
	s->nr_py = 0;
	s->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	task = ustack_current_task();
	sample_weight(ctx, sc, task, cnt);
	/* VMAs found in the kernel: the one-program walk only (its callback is 5.13's). */
	proc = ustack_begin(&sc->st, s, cnt, task, tgid, !chained);
	if (chained)
		rt_after_kind(&sc->rt, tgid);
	if (proc && chained) {
		runtime_leaf_chained(&sc->st, s->ips, proc);
		ustack_chain(ctx, &sc->st, s->ips, tgid);
	} else if (proc)
		ustack_walk(&sc->st, s, proc);
	profile_finish(ctx, sc, cnt, task, chained);
	return 0;
}

SEC("perf_event")
int sfbpf_profile(struct bpf_perf_event_data *ctx)
{
	return profile_sample(ctx, false);
}

SEC("perf_event")
int sfbpf_profile_chained(struct bpf_perf_event_data *ctx)
{
	return profile_sample(ctx, true);
}

/* The chain's next link: the walk goes on where the previous program left it. */
SEC("perf_event")
int sfbpf_profile_walk(struct bpf_perf_event_data *ctx)
{
	struct sfbpf_stats *cnt;
	struct scratch *sc;
	__u32 zero = 0;

	sc = bpf_map_lookup_elem(&scratch, &zero);
	cnt = bpf_map_lookup_elem(&stats, &zero);
	if (!sc || !cnt)
		return 0;
	ustack_chain(ctx, &sc->st, sc->sample.ips, sc->sample.pid);
	profile_finish(ctx, sc, cnt, ustack_current_task(), true);
	return 0;
}

/*
 * A chain's last link, the sample's frames of the runtime kind (afterwalk.h),
 * then the send; CPython's link names the walk's V8 frames.
 */
static __always_inline int profile_finish_link(enum rt_after kind)
{
	struct sfbpf_stats *cnt;
	struct scratch *sc;
	__u32 zero = 0;

	sc = bpf_map_lookup_elem(&scratch, &zero);
	cnt = bpf_map_lookup_elem(&stats, &zero);
	if (!sc || !cnt)
		return 0;
	/* The walk's V8 frames, stepped by fp, named here (v8.h: v8_later_names()). */
	if (kind == RT_AFTER_PY && sc->st.v8_nlater) {
		v8_later_names(&sc->st, sc->sample.ips, unwind_nr_frames(sc->sample.nr_user));
		ustack_count_v8(&sc->st, cnt);
	}
	profile_send(sc, cnt, profile_runtimes(sc, cnt, ustack_current_task(), true, 1U << kind));
	return 0;
}

/* The chain's last links, in walk_chain from USTACK_CHAIN_FINISH, in enum rt_after's order. */
#define PROFILE_FINISH_LINK(name, kind)           \
	SEC("perf_event")                         \
	int name(struct bpf_perf_event_data *ctx) \
	{                                         \
		(void)ctx;                        \
		return profile_finish_link(kind); \
	}
PROFILE_FINISH_LINK(sfbpf_profile_finish, RT_AFTER_PY)
PROFILE_FINISH_LINK(sfbpf_profile_finish_php, RT_AFTER_PHP)
PROFILE_FINISH_LINK(sfbpf_profile_finish_ruby, RT_AFTER_RB)
PROFILE_FINISH_LINK(sfbpf_profile_finish_perl, RT_AFTER_PL)

static __always_inline void lifecycle_event(struct task_struct *task, __u32 tgid, __u32 type)
{
	struct sfbpf_stats *cnt;
	struct sfbpf_event ev = {};
	__u32 zero = 0;
	__u64 flags = 0;

	cnt = bpf_map_lookup_elem(&stats, &zero);
	if (!cnt)
		return;
	ev.time_ns = bpf_ktime_get_ns();
	ev.start_ticks = unwind_start_ticks(task);
	if (type == SFBPF_EVENT_EXEC)
		ev.addr = BPF_CORE_READ(task, self_exec_id);
	ev.type = type;
	ev.pid = tgid;
	if (type == SFBPF_EVENT_EXIT)
		flags = target_wakeup_flag(&lifecycle, exit_wakeup_bytes);
	else if (exit_wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&lifecycle, &ev, sizeof(ev), flags))
		cnt->v[SFBPF_STAT_EVENT_DROPS]++;
	else
		cnt->v[type == SFBPF_EVENT_EXEC ? SFBPF_STAT_EXECS : SFBPF_STAT_EXITS]++;
}

/*
 * Every runtime's settings of a process (runtime.h's maps), dropped where its
 * entry is: an exec'd image is no longer the runtime they describe, and an
 * exited process's PID may be reused; userspace's detach, later, finds none.
 */
static __always_inline void runtimes_drop(__u32 tgid)
{
	bpf_map_delete_elem(&py_procs, &tgid);
	bpf_map_delete_elem(&php_procs, &tgid);
	bpf_map_delete_elem(&rb_procs, &tgid);
	bpf_map_delete_elem(&pl_procs, &tgid);
	bpf_map_delete_elem(&hs_procs, &tgid);
	bpf_map_delete_elem(&v8_procs, &tgid);
}

/*
 * A new program image (in the exec'ing task: the new mm is in place). The old
 * image's mappings must never unwind the new one: drop the entry now, before
 * the loader hears of it; samples see no entry and report until it reloads.
 * Its runtimes' settings go too.
 */
SEC("raw_tp/sched_process_exec")
int sfbpf_exec(__u64 *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	(void)ctx;
	if (!target_wanted(tgid)) /* the lifecycle follows the sampler's filters */
		return 0;
	bpf_map_delete_elem(&procs, &tgid);
	runtimes_drop(tgid);
	bpf_map_delete_elem(&notify_next, &tgid); /* a new program reports at once */
	lifecycle_event(ustack_current_task(), tgid, SFBPF_EVENT_EXEC);
	return 0;
}

/*
 * Beside sfbpf_exec: the new image's program and interpreter found now, in
 * process context, before its first sample (vmafind.h; the old image's kept
 * table, made for another image, is replaced). A program of its own, loaded only where
 * bpf_find_vma() exists: a program naming its callback does not load before 5.13.
 */
SEC("raw_tp/sched_process_exec")
int sfbpf_exec_vmas(__u64 *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task = ustack_current_task();
	__u64 pc = 0, sp, fp;
	struct pt_regs *regs;

	(void)ctx;
	if (!have_find_vma || !target_wanted(tgid) || !(regs = ustack_task_regs(task)))
		return 0;
	if (have_task_pt_regs)
		arch_user_regs(regs, &pc, &sp, &fp);
	else if (arch_read_user_regs(regs, &pc, &sp, &fp))
		pc = 0;
	vmafind_exec(tgid, unwind_start_ticks(task), pc);
	return 0;
}

/* sys_exit_mmap's record (its format file): the mapping's address, or an error. */
struct mmap_exit {
	__u64 common;
	__s32 nr;
	__s64 ret;
};

/*
 * A mapping made by a process exec'd under us that the loader has not read
 * yet, or read just before (ld.so mapping the libraries): found now, in
 * process context, where bpf_find_vma() may be called for each, rather than
 * one per sample in the sampling interrupt (vmafind.h). Processes with an
 * entry older than the kept tables' trust pay one lookup. Loaded only where
 * bpf_find_vma() exists, as sfbpf_exec_vmas is.
 */
SEC("tracepoint/syscalls/sys_exit_mmap")
int sfbpf_mmap(struct mmap_exit *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	const struct sfbpf_proc *proc;

	if (!have_find_vma || ctx->ret <= 0) /* an error (-errno), or no address */
		return 0;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (proc && bpf_ktime_get_ns() - proc->read_ns >= SFBPF_VMA_TRUST_NS)
		return 0;
	vmafind_mmap(tgid, (__u64)ctx->ret);
	return 0;
}

/*
 * A runtime's settings for a forked child: its parent's, which the copy of
 * the address space makes true, start_ticks (the first field of each:
 * abi.h) its own. Evaluates to whether there were any.
 */
#define FORK_RUNTIME(map, ptgid, tgid, start)                                     \
	({                                                                        \
		const void *from_ = bpf_map_lookup_elem(&map, &(ptgid));          \
		__u64 *to_ = NULL;                                                \
		if (from_ && !bpf_map_update_elem(&map, &(tgid), from_, BPF_ANY)) \
			to_ = bpf_map_lookup_elem(&map, &(tgid));                 \
		if (to_)                                                          \
			*to_ = (start);                                           \
		to_ != NULL;                                                      \
	})
_Static_assert(__builtin_offsetof(struct sfbpf_py_proc, start_ticks) == 0 &&
		       __builtin_offsetof(struct sfbpf_php_proc, start_ticks) == 0 &&
		       __builtin_offsetof(struct sfbpf_rb_proc, start_ticks) == 0 &&
		       __builtin_offsetof(struct sfbpf_pl_proc, start_ticks) == 0 &&
		       __builtin_offsetof(struct sfbpf_hs_proc, start_ticks) == 0 &&
		       __builtin_offsetof(struct sfbpf_v8_proc, start_ticks) == 0,
	       "start_ticks first in every runtime's settings");

/*
 * The child's runtimes, as its parent's: a pre-fork server's worker
 * (php-fpm's, gunicorn's, unicorn's, a Perl daemon's) runs the parent's
 * interpreter from its first instruction and lives a few hundred requests;
 * its first samples carry their frames, and the event has userspace attach
 * it at once (SFBPF_FORK_RUNTIMES). Not for a child that shares the
 * parent's memory (vfork, posix_spawn), which runs none of the
 * interpreter's code before its exec. Returns whether any was copied.
 */
static __always_inline bool fork_runtimes(struct task_struct *child, __u32 ptgid, __u32 tgid,
					  __u64 start)
{
	bool any = false;

	if (BPF_CORE_READ(child, mm) == BPF_CORE_READ(ustack_current_task(), mm))
		return false;
	any |= FORK_RUNTIME(py_procs, ptgid, tgid, start);
	any |= FORK_RUNTIME(php_procs, ptgid, tgid, start);
	if (FORK_RUNTIME(rb_procs, ptgid, tgid, start)) {
		struct sfbpf_rb_proc *rb = bpf_map_lookup_elem(&rb_procs, &tgid);
		struct task_struct *task = ustack_current_task();

		/*
		 * Ruby's stored TID of the forking thread, the child's leader
		 * (abi.h, leader_tid): its own, unless it leads a forked process.
		 */
		if (rb && !(rb->leader_tid && (__u32)BPF_CORE_READ(task, pid) == ptgid))
			rb->leader_tid = py_ns_tid(task);
		any = true;
	}
	any |= FORK_RUNTIME(pl_procs, ptgid, tgid, start);
	any |= FORK_RUNTIME(hs_procs, ptgid, tgid, start);
	any |= FORK_RUNTIME(v8_procs, ptgid, tgid, start);
	return any;
}

/*
 * A new process (not a thread): its address space is a copy of its parent's,
 * so it gets a copy of the parent's entry and unwinds from its first sample
 * (a forked shell, a pre-fork server's worker, a subprocess before its exec)
 * with no work in userspace. Runs in the parent (current) before the child
 * first runs. The event is reserved before the copy is made: the loader hears
 * of every copy, and must hold the tables it names before their slots can
 * serve another file (procs/proctrack.c, proctrack__adopt).
 */
SEC("raw_tp/sched_process_fork")
int sfbpf_fork(__u64 *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx[1];
	__u32 ptgid = bpf_get_current_pid_tgid() >> 32, tgid, zero = 0;
	const struct sfbpf_proc *proc;
	struct sfbpf_stats *cnt;
	struct sfbpf_proc *copy;
	struct sfbpf_event *ev;
	bool stale;

	tgid = BPF_CORE_READ(child, tgid);
	if ((__u32)BPF_CORE_READ(child, pid) != tgid || tgid == ptgid || !target_wanted(tgid))
		return 0;
	proc = unwind_proc(ustack_current_task(), ptgid, &stale);
	cnt = bpf_map_lookup_elem(&stats, &zero);
	if (!proc || !cnt)
		return 0;
	ev = bpf_ringbuf_reserve(&lifecycle, sizeof(*ev), 0);
	if (!ev) {
		cnt->v[SFBPF_STAT_FORK_DROPS]++;
		return 0;
	}
	ev->time_ns = bpf_ktime_get_ns();
	ev->addr = ptgid;
	/* The child leads its new thread group: its own start is the group's. */
	ev->start_ticks = clock_tick_ns ? BPF_CORE_READ(child, start_boottime) / clock_tick_ns : 0;
	ev->type = SFBPF_EVENT_FORK;
	ev->pid = tgid;
	if (bpf_map_update_elem(&procs, &tgid, proc, BPF_ANY) ||
	    !(copy = bpf_map_lookup_elem(&procs, &tgid))) {
		bpf_ringbuf_discard(ev, 0);
		cnt->v[SFBPF_STAT_FORK_DROPS]++;
		return 0;
	}
	copy->start_ticks = ev->start_ticks;
	/* A runtime's child is attached at its event: the reader woken for it. */
	if (fork_runtimes(child, ptgid, tgid, ev->start_ticks)) {
		ev->addr |= SFBPF_FORK_RUNTIMES;
		bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	} else {
		bpf_ringbuf_submit(ev, target_wakeup_flag(&lifecycle, exit_wakeup_bytes));
	}
	cnt->v[SFBPF_STAT_FORKS_INHERITED]++;
	return 0;
}

/*
 * A thread exits. Only the last one of its process matters (signal->live is
 * decremented before the tracepoint, so it reads 0 there): the PID may be
 * reused from then on, so the entry goes now.
 */
SEC("raw_tp/sched_process_exit")
int sfbpf_exit(__u64 *ctx)
{
	struct task_struct *task = ustack_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	int live;

	(void)ctx;
	if (have_task_btf)
		live = task->signal->live.counter;
	else
		live = BPF_CORE_READ(task, signal, live.counter);
	if (live || !target_wanted(tgid))
		return 0;
	bpf_map_delete_elem(&procs, &tgid);
	runtimes_drop(tgid);
	/* vma_cache stays: its mappings name the frames of a process gone before it was read. */
	bpf_map_delete_elem(&notify_next, &tgid);
	lifecycle_event(task, tgid, SFBPF_EVENT_EXIT);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
