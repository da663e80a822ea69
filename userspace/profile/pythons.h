/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPython, one of the session's runtimes (runtime.h; issue #29,
 * docs/DESIGN-python.md): a process whose mappings name python, or whose
 * executable embeds it, is attached (interp/python.h: found, versioned,
 * its layout checked) and its settings pushed to the BPF walk's py_procs
 * map (bpf/python.h); they go with the process (exit, exec), its codes once
 * the samples before it are read (runtimes.h). An interpreter refused or
 * unsupported is profiled as native code, counted.
 *
 * Each sample with Python frames is spliced as it arrives: every native frame of the eval loop
 * (_PyEval_EvalFrameDefault) is replaced by the Python frames it runs
 * (innermost first, up to and including the next frame marked as its
 * call's outermost), each named through interp/frame_names.h. Code objects
 * are resolved once per (process, code address, stamp): from the
 * description the BPF walk sent when it first met them (the describe operation),
 * else read from the process and re-checked (type and stamp): a freed one
 * is "[freed code]", never another function's name.
 */
#ifndef SFBPF_PROFILE_PYTHONS_H
#define SFBPF_PROFILE_PYTHONS_H

#include "profile/runtime.h"

extern const struct runtime_ops python_runtime;

#endif /* SFBPF_PROFILE_PYTHONS_H */
