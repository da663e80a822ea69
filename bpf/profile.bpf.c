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

/* Settings, filled by userspace between open and load. */
const volatile bool kernel_stacks = true;
const volatile bool skip_idle = false;
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

/* The sample being built: too big for the 512-byte BPF stack. */
struct scratch {
	struct sfbpf_sample sample;
	struct sfbpf_unwind_state st;
	struct py_walk py;
};

_Static_assert(sizeof(struct scratch) < 32768, "per-CPU scratch value: under 32 KiB");
_Static_assert(SFBPF_SAMPLE_HDR_SIZE + (UNWIND_MAX_FRAMES + UNWIND_KFRAME_MASK + 2 * PY_SLOT_MASK) *
					       sizeof(__u64) <=
		       sizeof(struct scratch),
	       "profile_send's bounds: inside scratch");

TARGET_PERCPU_VALUE(scratch, struct scratch);

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
	if (bpf_ringbuf_output(&events, s, size, target_wakeup_flag(&events, wakeup_bytes)))
		cnt->v[SFBPF_STAT_RB_DROPS]++;
	else
		cnt->v[SFBPF_STAT_EMITTED]++;
}

/*
 * The Python frames of the sample (a process the loader gave Python
 * settings), after its user and kernel frames: how many.
 */
static __always_inline __u32 profile_python(struct scratch *sc, struct sfbpf_stats *cnt,
					    struct task_struct *task, bool chained)
{
	struct sfbpf_sample *s = &sc->sample;
	/* Bounded (1,024, 127): so is the first Python slot. */
	__u32 nu = unwind_nr_frames(s->nr_user), nk = s->nr_kernel & UNWIND_KFRAME_MASK;
	__u32 room = (SFBPF_MAX_FRAMES + SFBPF_MAX_KFRAMES - nu - nk) / 2;

	if (!user_stacks || !s->tid)
		return 0;
	return py_walk(&sc->py, &s->ips[nu + nk], task, s->pid, s->tid, room, cnt, chained);
}

/*
 * The end of a sample, after its user walk: its stop reason counted, the
 * kernel stack, the Python frames, and only the used part of it to the ring
 * buffer. Chained, the Python walk is a program of its own
 * (sfbpf_profile_finish): the links' verifier budget stays the native walk's.
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
		bpf_tail_call(ctx, &walk_chain, USTACK_CHAIN_FINISH);
		/* Past the kernel's tail-call limit (a full chain): no Python frames. */
		profile_send(sc, cnt, 0);
		return;
	}
	profile_send(sc, cnt, profile_python(sc, cnt, task, false));
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
	s->weight = 1;
	s->flags = (__s64)PT_REGS_IP(&ctx->regs) < 0 ? SFBPF_SAMPLE_KERNEL_MODE : 0;
	s->nr_py = 0;
	s->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	task = ustack_current_task();
	proc = ustack_begin(&sc->st, s, cnt, task, tgid);
	if (proc && chained)
		ustack_chain(ctx, &sc->st, s->ips, tgid);
	else if (proc)
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

/* The chain's last link: the sample's Python frames, then the send. */
SEC("perf_event")
int sfbpf_profile_finish(struct bpf_perf_event_data *ctx)
{
	struct sfbpf_stats *cnt;
	struct scratch *sc;
	__u32 zero = 0;

	(void)ctx;
	sc = bpf_map_lookup_elem(&scratch, &zero);
	cnt = bpf_map_lookup_elem(&stats, &zero);
	if (!sc || !cnt)
		return 0;
	profile_send(sc, cnt, profile_python(sc, cnt, ustack_current_task(), true));
	return 0;
}

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
 * A new program image (in the exec'ing task: the new mm is in place). The old
 * image's mappings must never unwind the new one: drop the entry now, before
 * the loader hears of it; samples see no entry and report until it reloads.
 */
SEC("raw_tp/sched_process_exec")
int sfbpf_exec(__u64 *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	(void)ctx;
	if (!target_wanted(tgid)) /* the lifecycle follows the sampler's filters */
		return 0;
	bpf_map_delete_elem(&procs, &tgid);
	bpf_map_delete_elem(&notify_next, &tgid); /* a new program reports at once */
	lifecycle_event(ustack_current_task(), tgid, SFBPF_EVENT_EXEC);
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
	bpf_map_delete_elem(&notify_next, &tgid);
	lifecycle_event(task, tgid, SFBPF_EVENT_EXIT);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
