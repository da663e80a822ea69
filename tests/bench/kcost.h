/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What kcost.c (the native and Python walks, main) shares with kcost_jit.c
 * (the steps of the JIT runtimes, HotSpot and V8; the walks of PHP, Ruby
 * and Perl): the options, the
 * unwinder's state, and the helpers both measure with.
 */
#ifndef SFBPF_BENCH_KCOST_H
#define SFBPF_BENCH_KCOST_H

#include <stdbool.h>
#include <sys/types.h>

#include "bpf/abi.h"

#define MAX_DEPTHS 16
/* A window's wall time may be this many times SECS on a busy machine. */
#define SLOWEST 30

struct kcost_env {
	double secs;
	unsigned long hz;
	int reps;
	const char *sf_bin, *fp_bin;
	const char *python, *py_script; /* -y: the Python walk's cost instead */
	const char *java, *java_cp; /* -j: the HotSpot step's */
	const char *node, *node_script; /* -n: V8's step's */
	const char *vm, *vm_bin, *vm_script; /* -s: PHP's, Ruby's or Perl's walk's */
	const char *mode; /* -m: sframe, vma or vmamiss */
	int depths[MAX_DEPTHS];
	int nr_depths;
};
extern struct kcost_env env;

struct bench {
	struct profile *prof;
	struct tables *tables;
	struct proctrack *procs;
	struct runtimes *runtimes;
	struct fpwalk_bpf *fp;
	struct ring_buffer *fp_rb;
	int sf_prog, sf_stats, fp_prog, fp_stats;
};

/* The unwinder's run time and counters at one moment. */
struct snap {
	__u64 run_ns, runs;
	__u64 v[SFBPF_STAT__COUNT];
};

double now(void);
/* CPU time (user + system) of /proc/PROC_PATH, of pid, in seconds; -1 once gone. */
double cpu_secs_at(const char *proc_path);
double cpu_secs(pid_t pid);
void pin(pid_t pid, int cpu);
/* A disabled per-task cpu-clock event at env.hz running prog_fd: its fd, or -1. */
int open_event(pid_t pid, int prog_fd);
int take(int prog_fd, int stats_fd, struct snap *s);
/* Until both have run secs of CPU beyond base_*, or deadline (wall); -1 if one is gone. */
int run_both(struct bench *b, pid_t a, double base_a, pid_t c, double base_c, double secs,
	     double deadline);

/*
 * One window on pid (its event ev, enabled for it): secs/2 of its CPU time,
 * the unwinder's run time and counters before and after into a and z; each
 * (NULL: none) called between polls of poll_ms. 0, or -1 (pid gone).
 */
int sample_window(struct bench *b, pid_t pid, int ev, struct snap *a, struct snap *z,
		  int (*each)(void *ctx), void *ctx, int poll_ms);

/* kcost_jit.c: one depth, one repetition of a JIT runtime's step, off and on. */
int measure_java(struct bench *b, int rep, int frames, int cpu);
int measure_node(struct bench *b, int rep, int frames, int cpu);
/* The same for a VM read after the native walk (-s: PHP, Ruby, Perl); env.vm known. */
int measure_vm(struct bench *b, int rep, int frames, int cpu);
bool vm_known(const char *name);

#endif /* SFBPF_BENCH_KCOST_H */
