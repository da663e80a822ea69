// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark reference: the frame-pointer profiler sfbpf is compared with. It
 * does everything profile.bpf.c does per sample (filters, counters, sample
 * header, kernel stack, variable-length ring buffer record of the same layout)
 * except that the user stack comes from the kernel's own frame-pointer walk,
 * bpf_get_stack(BPF_F_USER_STACK), instead of the SFrame tables. The
 * difference in run time between the two is the cost of SFrame unwinding.
 * Used by scripts/bench.sh only.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "abi.h"

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h */

/* Settings, filled by userspace between open and load. */
const volatile __u32 max_user_frames = SFBPF_MAX_FRAMES;
const volatile bool filter_pids = false;
const volatile bool kernel_stacks = true;
const volatile bool skip_idle = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} target_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* PROFILE_DEFAULT_RINGBUF */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfbpf_stats);
} stats SEC(".maps");

/* The sample being built: too big for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfbpf_sample);
} scratch SEC(".maps");

SEC("perf_event")
int sfbpf_fpwalk(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0, nu = 0, nk = 0, size;
	struct task_struct *task;
	struct sfbpf_stats *cnt;
	struct sfbpf_sample *s;
	__u32 max = max_user_frames;
	long ret;

	if (filter_pids && !bpf_map_lookup_elem(&target_pids, &tgid))
		return 0;
	if (skip_idle && !(__u32)id)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	cnt = bpf_map_lookup_elem(&stats, &zero);
	if (!s || !cnt)
		return 0;
	cnt->v[SFBPF_STAT_SAMPLES]++;

	s->time_ns = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = (__u32)id;
	s->cpu = bpf_get_smp_processor_id();
	s->weight = 1;
	s->flags = (__s64)PT_REGS_IP(&ctx->regs) < 0 ? SFBPF_SAMPLE_KERNEL_MODE : 0;
	s->nr_py = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	task = bpf_get_current_task_btf();
	if (tgid && task->mm && !(task->flags & PF_KTHREAD)) {
		/*
		 * The kernel walks the frame-pointer chain from the user regs,
		 * at most kernel.perf_event_max_stack frames (127 by default:
		 * the benchmark raises it for deeper stacks).
		 */
		if (max > SFBPF_MAX_FRAMES)
			max = SFBPF_MAX_FRAMES;
		ret = bpf_get_stack(ctx, s->ips, max * sizeof(__u64), BPF_F_USER_STACK);
		if (ret > 0)
			nu = (ret / sizeof(__u64)) & (2 * SFBPF_MAX_FRAMES - 1);
		s->stop = SFBPF_STOP_FP_CHAIN;
	} else {
		s->stop = SFBPF_STOP_KERNEL_ONLY;
	}
	if (nu > SFBPF_MAX_FRAMES)
		nu = SFBPF_MAX_FRAMES;
	cnt->v[SFBPF_STAT_FRAMES] += nu;
	cnt->v[SFBPF_STAT_STOP_BASE + s->stop]++;

	if (kernel_stacks && (s->flags & SFBPF_SAMPLE_KERNEL_MODE)) {
		ret = bpf_get_stack(ctx, &s->ips[nu], SFBPF_MAX_KFRAMES * sizeof(__u64), 0);
		if (ret > 0)
			nk = (ret / sizeof(__u64)) & 0xff;
	}
	if (nk > SFBPF_MAX_KFRAMES)
		nk = SFBPF_MAX_KFRAMES;
	s->nr_user = nu;
	s->nr_kernel = nk;

	size = SFBPF_SAMPLE_HDR_SIZE + (nu + nk) * sizeof(__u64);
	if (size > sizeof(*s))
		return 0;
	if (bpf_ringbuf_output(&events, s, size, 0))
		cnt->v[SFBPF_STAT_RB_DROPS]++;
	else
		cnt->v[SFBPF_STAT_EMITTED]++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
