/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * V8, one of the session's runtimes (runtime.h; issue #45,
 * docs/DESIGN-v8.md): a process that maps node (or libnode) publishing
 * V8's postmortem metadata is attached (interp/v8.h: its layout from the
 * v8dbg_* symbols) and the settings of the native walk's V8 step pushed to
 * the v8_procs map (bpf/v8.h), again when its mappings change (new JIT
 * code); they go with the process. A build the walk cannot read is
 * profiled as native code, counted.
 *
 * Each sample of an attached node is spliced as it arrives: a JavaScript
 * frame (SharedFunctionInfo, bytecode offset) becomes its function's name,
 * script and line; an optimised frame's pc the functions its code runs
 * there, inlined ones as frames of their own, innermost first. Names go
 * through interp/frame_names.h as "js" frames. Resolutions are cached by
 * identity and checked again after a millisecond: a function by its
 * SharedFunctionInfo's type and name field, code by its instruction start,
 * so a name is never lent to what the collector later put at an address.
 */
#ifndef SFBPF_PROFILE_V8S_H
#define SFBPF_PROFILE_V8S_H

#include "profile/runtime.h"

extern const struct runtime_ops v8_runtime;

#endif /* SFBPF_PROFILE_V8S_H */
