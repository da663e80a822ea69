/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every sampling program declares alike: the target filters (-p PIDs,
 * --cgroup) and the ring its records go to, with the reader's wake-up rule.
 * Include after vmlinux.h and bpf_helpers.h. The loader sizes the maps and
 * sets the settings between open and load; nothing here fails.
 */
#ifndef SFBPF_TARGET_H
#define SFBPF_TARGET_H

const volatile bool filter_pids = false;
const volatile bool filter_cgroup = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} target_pids SEC(".maps");

/* --cgroup: only tasks in this cgroup v2 directory or below (index 0). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} target_cgroup SEC(".maps");

/* The program's records (samples, off-CPU periods), read by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

/* A per-CPU single-value map: counters, or scratch space off the 512-byte stack. */
#define TARGET_PERCPU_VALUE(name, vtype)                 \
	struct {                                         \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, 1);                  \
		__type(key, __u32);                      \
		__type(value, vtype);                    \
	} name SEC(".maps")

/* The current task passes the filters: its process is a target, in the cgroup. */
static __always_inline bool target_wanted(__u32 tgid)
{
	if (filter_pids && !bpf_map_lookup_elem(&target_pids, &tgid))
		return false;
	return !filter_cgroup || bpf_current_task_under_cgroup(&target_cgroup, 0) == 1;
}

/*
 * Wake-up flag for a record in ring rb: only once `mark` bytes wait (0: the
 * default, every record). A wake-up per record costs the reader a context
 * switch per record; it polls with a timeout for what stays below the mark.
 */
static __always_inline __u64 target_wakeup_flag(void *rb, __u64 mark)
{
	if (!mark)
		return 0;
	if (bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= mark)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

#endif /* SFBPF_TARGET_H */
