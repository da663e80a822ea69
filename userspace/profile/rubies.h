/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ruby, one of the session's runtimes (runtime.h; issue #46,
 * docs/DESIGN-ruby.md): a process mapping a libruby (or a ruby linked
 * statically) that exports ruby_current_vm_ptr is attached (interp/ruby.h:
 * its version's layout, its VM checked) and its settings pushed to the BPF
 * walk's rb_procs map (bpf/ruby.h). A version with no known layout is
 * profiled as native code, counted.
 *
 * Each sample with Ruby frames is spliced as Python's are: every native
 * frame of the VM's loop is replaced by the frames of the iseqs it runs. A
 * frame (iseq, pc) is named once per process from its memory, and again
 * after each collection of the names table.
 */
#ifndef SFBPF_PROFILE_RUBIES_H
#define SFBPF_PROFILE_RUBIES_H

#include "profile/afterwalk.h"
#include "profile/runtime.h"

extern const struct runtime_ops ruby_runtime;
/* Its reader on the after-walk half (tests/bench/kcost -s attaches with it too). */
extern const struct afterwalk_kind ruby_kind;

#endif /* SFBPF_PROFILE_RUBIES_H */
