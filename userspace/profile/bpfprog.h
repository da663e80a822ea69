/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every sfbpf BPF program goes through between open and close, written
 * once for the CPU profiler (profile.c) and the off-CPU tracer (offcpu.c):
 * checking the kernel, sizing or sharing maps before load, loading with the
 * verifier's statistics on -vv, attaching raw tracepoints, polling a ring
 * buffer whose producer wakes the reader only in bulk, and summing per-CPU
 * counters. Each program keeps its own skeleton and settings; this file
 * knows no program by name.
 *
 * Functions return 0 (or a count) or a negative errno, and say what went
 * wrong through the log (util/log.h), naming the program by `what`.
 */
#ifndef SFBPF_PROFILE_BPFPROG_H
#define SFBPF_PROFILE_BPFPROG_H

#include <stddef.h>

#include <bpf/libbpf.h>
#include <linux/types.h>

/* The kernel has BTF (CO-RE relocations need it). */
int bpfprog__check_kernel(void);
/* A ring buffer size is 0 (the default) or a power of two of at least a page. */
int bpfprog__check_ring_bytes(__u32 bytes);
/* Possible CPUs, the size of per-CPU values; never 0. */
int bpfprog__nr_cpus(void);

/* The table segments' shift to use for a requested one (0: the most). */
__u32 bpfprog__seg_shift(__u32 requested);
/*
 * Checks a skeleton's __open(), attempted only when nr_cpus > 0: 0 when skel
 * was opened, else the error (nr_cpus's, or errno's), said once.
 */
int bpfprog__opened(const void *skel, int nr_cpus, const char *what);

/* One map to prepare before load: shared with another program, or sized. */
struct bpfprog_map {
	struct bpf_map *map;
	__u32 entries; /* used when reuse_fd < 0 */
	int reuse_fd; /* >= 0: take this existing map (and its definition) */
};

/* How to load an opened skeleton. */
struct bpfprog_load {
	const char *what; /* names the program in messages: "profiling", "off-CPU" */
	struct bpf_program *prog; /* whose verifier statistics -vv prints */
	const struct bpfprog_map *maps; /* prepared before load */
	size_t nr_maps;
	struct bpf_map *cgroup_map; /* a CGROUP_ARRAY that cgroup goes into after load */
	const char *cgroup; /* cgroup v2 directory; NULL: no filter */
	/*
	 * The unwinder's table spaces (arrays of maps), when this program makes
	 * them (NULL: shared, their shape comes with them): their segments hold
	 * 1 << seg_shift entries, as the program's seg_shift setting says.
	 */
	struct bpf_map *seg_rows, *seg_pages;
	__u32 seg_shift;
};

/*
 * Prepares the maps, loads the skeleton's object and sets the cgroup filter.
 * With the log at debug level (-vv), prints the verifier's statistics. A
 * permission error says what is needed.
 */
int bpfprog__load(struct bpf_object_skeleton *skel, const struct bpfprog_load *opts);

/* Attaches prog to a raw tracepoint; *link is set on success. */
int bpfprog__attach_raw_tp(struct bpf_program *prog, const char *tp, struct bpf_link **link);

/* A ring buffer reader over map_fd with fn as its callback. */
struct ring_buffer *bpfprog__ring_new(int map_fd, ring_buffer_sample_fn fn, void *ctx,
				      const char *what);

/*
 * Waits up to timeout_ms (< 0: until something comes) and returns how many
 * records were handled. Producers wake the reader only past a fill mark, so
 * records below it raise no event: this waits at most latency_ms at a time
 * and then reads whatever is there.
 */
int bpfprog__poll(struct ring_buffer *rb, int timeout_ms, int latency_ms);

/*
 * Sums a per-CPU array's entry 0, seen as n __u64 counters per CPU, into
 * out[0 .. n).
 */
int bpfprog__sum_percpu(int map_fd, int nr_cpus, __u64 *out, size_t n, const char *what);

#endif /* SFBPF_PROFILE_BPFPROG_H */
