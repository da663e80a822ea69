/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Perl, one of the session's runtimes (runtime.h; issue #46,
 * docs/DESIGN-perl.md): a process mapping a perl (or a libperl) that
 * exports PL_curinterp is attached (interp/perl.h: its API version's
 * layout, its interpreter checked) and its settings pushed to the BPF walk's
 * pl_procs map (bpf/perl.h). A version with no known layout is profiled as
 * native code, counted.
 *
 * Each sample with Perl frames is spliced as Python's are: every native
 * frame of the ops loop is replaced by the frames it runs. A frame (CV,
 * COP) is named once per process from its memory, and again after each
 * collection of the names table.
 */
#ifndef SFBPF_PROFILE_PERLS_H
#define SFBPF_PROFILE_PERLS_H

#include "profile/afterwalk.h"
#include "profile/runtime.h"

extern const struct runtime_ops perl_runtime;
/* Its reader on the after-walk half (tests/bench/kcost -s attaches with it too). */
extern const struct afterwalk_kind perl_kind;

#endif /* SFBPF_PROFILE_PERLS_H */
