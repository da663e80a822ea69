/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HotSpot, one of the session's runtimes (runtime.h; issue #44,
 * docs/DESIGN-hotspot.md): a process that maps a libjvm is attached
 * (interp/hotspot.h: its tables read, its layout resolved) and the settings
 * of the native walk's HotSpot step pushed to the hs_procs map
 * (bpf/hotspot.h); they go with the process (exit, exec). A JVM still
 * starting is tried again; one refused is profiled as native code, counted.
 *
 * Each sample of an attached JVM is spliced as it arrives, while the
 * process lives: an interpreted frame (Method, bytecode index) becomes its
 * method's name and line; a pc in a code heap the methods its nmethod runs
 * there, inlined ones as frames of their own, innermost first; a stub's pc
 * the stub's name. Names go through interp/frame_names.h, the program's one
 * table of interpreted frames' names, so that every output shows them.
 * Resolutions are cached by identity and checked at each use: a Method by
 * its ConstMethod (a class unloaded), a blob by its block, size and compile
 * id (an nmethod flushed, another compiled at its address), so a name is
 * never lent to what is later at an address.
 */
#ifndef SFBPF_PROFILE_HOTSPOTS_H
#define SFBPF_PROFILE_HOTSPOTS_H

#include "profile/runtime.h"

extern const struct runtime_ops hotspot_runtime;

#endif /* SFBPF_PROFILE_HOTSPOTS_H */
