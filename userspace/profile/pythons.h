/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Python processes of a session (issue #29, docs/DESIGN-python.md):
 * when the process tracker writes a process's entry, the process's CPython
 * is attached (interp/python.h: found, versioned, its layout checked) and
 * its settings pushed to the BPF walk's py_procs map; they go with the
 * entry (exit, exec), their codes once the samples before it are read
 * (pythons__drained()). An interpreter refused or unsupported is profiled
 * as native code, counted.
 *
 * Each sample with Python frames is spliced as it arrives: every native frame of the eval loop
 * (_PyEval_EvalFrameDefault) is replaced by the Python frames it runs
 * (innermost first, up to and including the next frame marked as its
 * call's outermost), each named through interp/python_names.h. Code objects
 * are resolved once per (process, code address, stamp): from the
 * description the BPF walk sent when it first met them (pythons__describe()),
 * else read from the process and re-checked (type and stamp): a freed one
 * is "[freed code]", never another function's name.
 *
 * Lifecycle: pythons__new() → the tracker's listener (pythons__listener())
 * and pythons__splice() per sample → pythons__free(). Not thread-safe: the
 * thread that refreshes processes reads samples too (the session's).
 * Error rule: negative errno.
 */
#ifndef SFBPF_PROFILE_PYTHONS_H
#define SFBPF_PROFILE_PYTHONS_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "procs/proctrack.h"

struct pythons;

struct pythons_stats {
	uint64_t attached; /* processes whose Python frames the BPF walk reads */
	uint64_t refused; /* the attach checks failed: native frames only */
	uint64_t unsupported; /* a CPython without a known layout: native frames only */
	uint64_t samples; /* samples spliced */
	uint64_t frames; /* Python frames named */
	uint64_t freed_code; /* of those, "[freed code]" */
	uint64_t bad_code; /* of those, "[bad code]": unreadable */
	uint64_t left; /* samples with Python frames no native eval frame took (py-left) */
	uint64_t short_; /* samples with a native eval frame and no Python frame left (py-short) */
	uint64_t no_proc; /* samples with Python frames of a process no longer attached */
	uint64_t codes_described; /* code objects named from the BPF walk's description */
	uint64_t codes_read; /* code objects (or whole line tables) read from the process */
	uint64_t described_stale; /* descriptions for another attach of the process: ignored */
	uint64_t line_unknown; /* past a description's line table, and no longer readable */
	uint64_t renewed; /* a process's codes forgotten at MAX_CODES (a new generation) */
	uint64_t object_reads; /* interpreter files read (symbols, eval loop): python__object_stats */
	uint64_t object_hits; /* attaches that found their file's facts kept */
};

/* py_procs_fd: the BPF map (profile__py_procs_fd()). NULL + errno. */
struct pythons *pythons__new(int py_procs_fd);
void pythons__free(struct pythons *ps);

/* The listener to give the process tracker (proctrack__set_listener()). */
struct proctrack_listener pythons__listener(struct pythons *ps);

/*
 * in (size bytes, as read from the ring) with its Python frames spliced
 * into its user frames, into out (a whole struct sfbpf_sample): 1. 0: in
 * has no Python frames to splice (use it as it is). Negative errno.
 */
int pythons__splice(struct pythons *ps, const struct sfbpf_sample *in, size_t size,
		    struct sfbpf_sample *out);

/*
 * A sample of pid without Python frames was read: a process whose
 * interpreter was not initialised at its last attach is tried again if due
 * (one lookup while any waits; nothing otherwise).
 */
void pythons__sampled(struct pythons *ps, int pid);

/*
 * A code object the BPF walk described (size bytes of rec, read from the
 * ring before the samples holding it): its names are taken from it, not
 * from the process, where it may be gone when the sample is read.
 */
void pythons__describe(struct pythons *ps, const struct sfbpf_py_code *rec, size_t size);

/*
 * A collection of python_names (python_names.h) is under way: marks the
 * markers' names and forgets the ids the frame caches hold (named again
 * when met). Then the caller marks its stacks' ids and sweeps.
 */
void pythons__mark_names(struct pythons *ps);

/*
 * A round of samples was read to the end (the session's drains): processes
 * that exited before the round before it are forgotten, codes and all.
 */
void pythons__drained(struct pythons *ps);

void pythons__stats(const struct pythons *ps, struct pythons_stats *out);

#endif /* SFBPF_PROFILE_PYTHONS_H */
