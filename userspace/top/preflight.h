/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Preflight checks for sfbpf-top: capabilities (CAP_BPF, CAP_PERFMON), kernel
 * BTF and version (bpf_loop: 5.17), the locked-memory limit (raised when
 * allowed), perf_event_open at the requested frequency, and the target PIDs
 * (a thread ID is replaced by its process, with a note).
 */
#ifndef SFBPF_PREFLIGHT_H
#define SFBPF_PREFLIGHT_H

/* 0 when the profiler can run; else one line on stderr and a negative errno. */
int preflight__run(int *pids, int nr_pids, unsigned long freq);

#endif /* SFBPF_PREFLIGHT_H */
