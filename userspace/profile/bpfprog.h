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

#include <stdbool.h>
#include <stddef.h>

#include <bpf/libbpf.h>
#include <linux/types.h>

#include "bpf/abi.h"

/* The kernel has BTF (CO-RE relocations need it). */
int bpfprog__check_kernel(void);

/*
 * What the kernel offers the unwinder, probed once (docs/DESIGN-unwinder.md,
 * "Kernels"). SFBPF_DISABLE_FEATURES=loop,task_btf,task_pt_regs,no_prealloc
 * treats those as missing, to run an older kernel's programs on a new one;
 * SFBPF_FORCE_FEATURES=loop,task_pt_regs as present (tests: a refusal).
 */
struct bpfprog_kernel {
	bool loop; /* bpf_loop() (5.17): the walk in one program, else chained */
	bool task_btf; /* bpf_get_current_task_btf() (5.11): task fields read directly */
	bool task_pt_regs; /* bpf_task_pt_regs() (5.15), else found from thread_size */
	bool no_prealloc; /* hash maps in tracing programs need not be preallocated (6.1) */
	bool find_vma; /* bpf_find_vma() (5.17), with loop and task_btf: VMAs found in the walk */
	__u64 thread_size; /* the kernel's THREAD_SIZE, where task_pt_regs is missing */
};

const struct bpfprog_kernel *bpfprog__kernel(void);

/*
 * After a verifier gave up on a program's size (E2BIG, its million
 * instructions: kernel 7.2 with the whole walk), the next smaller walk to try:
 * without bpf_find_vma's lookups (processes younger than their read then wait
 * for it). Says so once; false when there is none left.
 */
bool bpfprog__fall_back(void);

/* Sets a skeleton's copy of bpf/ustack.h's kernel settings from bpfprog__kernel(). */
#define bpfprog__set_kernel_rodata(ro)                               \
	do {                                                         \
		const struct bpfprog_kernel *k_ = bpfprog__kernel(); \
		(ro)->have_task_btf = k_->task_btf;                  \
		(ro)->have_task_pt_regs = k_->task_pt_regs;          \
		(ro)->thread_size = k_->thread_size;                 \
	} while (0)
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
	/*
	 * The sampling program in its two forms (bpf/ustack.h): prog walks with
	 * bpf_loop(), chained with chain_link by tail calls through walk_chain.
	 * Only the one the kernel can run is loaded (bpfprog__sampler() says
	 * which); -vv prints the verifier's statistics of what is loaded.
	 */
	struct bpf_program *prog;
	struct bpf_program *chained, *chain_link;
	/*
	 * The chained form's last links (a runtime's frames, the send), one per
	 * after-walk runtime in bpf/afterwalk.h's order; NULL: none.
	 */
	struct bpf_program *chain_finish[SFBPF_CHAIN_FINISHES];
	struct bpf_map *walk_chain;
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
 * Prepares the maps (hash maps preallocated where the kernel wants them so),
 * loads the skeleton's object with the sampling program's form the kernel can
 * run, links the chain and sets the cgroup filter. With the log at debug
 * level (-vv), prints the verifier's statistics. A refusal by the verifier
 * says so, with its last lines and where the whole log went (util/log.h).
 */
int bpfprog__load(struct bpf_object_skeleton *skel, const struct bpfprog_load *opts);

/* The sampling program bpfprog__load() loaded: the one to attach. */
struct bpf_program *bpfprog__sampler(const struct bpfprog_load *opts);

/* Attaches prog to a raw tracepoint; *link is set on success. */
int bpfprog__attach_raw_tp(struct bpf_program *prog, const char *tp, struct bpf_link **link);

/*
 * Attaches prog to the tracepoint category:name (a perf event found through
 * tracefs, mounted first where no one has); *link is set on success. A
 * failure says why in one line.
 */
int bpfprog__attach_tracepoint(struct bpf_program *prog, const char *category, const char *name,
			       struct bpf_link **link);

/* A ring buffer reader over map_fd with fn as its callback. */
struct ring_buffer *bpfprog__ring_new(int map_fd, ring_buffer_sample_fn fn, void *ctx,
				      const char *what);

/*
 * Waits up to timeout_ms (< 0: until something comes) and returns how many
 * records were handled. Producers wake the reader only past a fill mark, so
 * records below it raise no event: this waits at most latency_ms at a time
 * and then reads whatever is there. With w (NULL: none), the wait also ends
 * at once when another thread writes w's eventfd (the table loader's: a
 * build is done). bpfprog__wake_init() puts the ring's epoll and the
 * eventfd in one epoll set (0, or a negative errno); _fini closes it (not
 * the eventfd, the caller's). A zeroed-out struct is not "none": epfd -1 is.
 */
struct bpfprog_wake {
	int epfd, fd;
};

int bpfprog__wake_init(struct bpfprog_wake *w, struct ring_buffer *rb, int wake_fd);
void bpfprog__wake_fini(struct bpfprog_wake *w);
int bpfprog__poll_wake(struct ring_buffer *rb, const struct bpfprog_wake *w, int timeout_ms,
		       int latency_ms);

/*
 * Sums a per-CPU array's entry 0, seen as n __u64 counters per CPU, into
 * out[0 .. n).
 */
int bpfprog__sum_percpu(int map_fd, int nr_cpus, __u64 *out, size_t n, const char *what);

#endif /* SFBPF_PROFILE_BPFPROG_H */
