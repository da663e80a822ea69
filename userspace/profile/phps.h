/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PHP, one of the session's runtimes (runtime.h; issue #46,
 * docs/DESIGN-php.md): a process mapping a php binary or a libphp that
 * exports the executor globals is attached (interp/php.h: its build ID's
 * layout, checked) and its settings pushed to the BPF walk's php_procs map
 * (bpf/php.h). A build with no known layout (a ZTS one, a newer PHP) is
 * profiled as native code, counted.
 *
 * Each sample with PHP frames is spliced as Python's are: every native frame
 * of execute_ex is replaced by the frames of user code it runs. A frame
 * (function, opline) is named once per process from its memory, and again
 * after each collection of the names table.
 */
#ifndef SFBPF_PROFILE_PHPS_H
#define SFBPF_PROFILE_PHPS_H

#include "profile/afterwalk.h"
#include "profile/runtime.h"

extern const struct runtime_ops php_runtime;
/* Its reader on the after-walk half (tests/bench/kcost -s attaches with it too). */
extern const struct afterwalk_kind php_kind;

#endif /* SFBPF_PROFILE_PHPS_H */
