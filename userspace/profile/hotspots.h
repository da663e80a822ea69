/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The HotSpot JVMs of a session (issue #44, docs/DESIGN-hotspot.md): when
 * the process tracker writes the entry of a process that maps a libjvm, the
 * JVM is attached (interp/hotspot.h: its tables read, its layout resolved)
 * and the settings of the native walk's HotSpot step pushed to the hs_procs
 * map (bpf/hotspot.h); they go with the entry (exit, exec). A JVM still
 * starting is tried again at its samples; one refused is profiled as native
 * code, counted.
 *
 * Each sample of an attached JVM is spliced as it arrives, while the
 * process lives: an interpreted frame (Method, bytecode index) becomes its
 * method's name and line; a pc in a code heap the methods its nmethod runs
 * there, inlined ones as frames of their own, innermost first; a stub's pc
 * the stub's name. Names go through interp/python_names.h, the program's one
 * table of interpreted frames' names, so that every output shows them.
 * Resolutions are cached by identity and checked at each use: a Method by
 * its ConstMethod (a class unloaded), a blob by its block, size and compile
 * id (an nmethod flushed, another compiled at its address), so a name is
 * never lent to what is later at an address.
 *
 * Lifecycle: hotspots__new() → the tracker's listener and hotspots__splice()
 * per sample → hotspots__free(). Not thread-safe (the session's thread).
 * Error rule: negative errno; NULL + errno from hotspots__new().
 */
#ifndef SFBPF_PROFILE_HOTSPOTS_H
#define SFBPF_PROFILE_HOTSPOTS_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "procs/proctrack.h"

struct hotspots;

struct hotspots_stats {
	uint64_t attached; /* JVMs whose Java frames the BPF walk steps */
	uint64_t refused; /* the attach checks failed: native frames only */
	uint64_t unreadable; /* its memory unreadable, or gone: native frames only */
	uint64_t samples; /* samples spliced */
	uint64_t interpreted; /* interpreted frames named */
	uint64_t compiled; /* compiled frames named, inlined ones included */
	uint64_t stubs; /* frames of the JVM's code of no method (stubs, adapters) */
	uint64_t unknown; /* frames whose method or blob no longer read as one: a marker */
	uint64_t cache_stale; /* cached resolutions found stale (flushed, unloaded) */
};

/* hs_procs_fd: the BPF map (profile__hs_procs_fd()). */
struct hotspots *hotspots__new(int hs_procs_fd);
void hotspots__free(struct hotspots *hs);

/* The tracker's listener (proctrack__set_listener(); the session chains it). */
struct proctrack_listener hotspots__listener(struct hotspots *hs);

/*
 * in (size bytes) with its Java frames named, into out (a whole struct
 * sfbpf_sample; in == out is not allowed): 1; 0 when in is no attached
 * JVM's (use it as it is). A JVM still starting is tried again here.
 */
int hotspots__splice(struct hotspots *hs, const struct sfbpf_sample *in, size_t size,
		     struct sfbpf_sample *out);

/* A collection of python_names is under way: forget the cached ids (named again when met). */
void hotspots__mark_names(struct hotspots *hs);
/* A round of samples was read: processes that exited before the round before it are forgotten. */
void hotspots__drained(struct hotspots *hs);

void hotspots__stats(const struct hotspots *hs, struct hotspots_stats *out);

#endif /* SFBPF_PROFILE_HOTSPOTS_H */
