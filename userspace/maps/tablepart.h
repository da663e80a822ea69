/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sampled code first (issue #27 part 2): a big object seen for the first
 * time has no table for as long as its whole table takes to build (gcc's cc1:
 * 475k rows from .eh_frame, a quarter to half a second of a loader thread),
 * and code built without frame pointers cannot be walked by the fallback
 * meanwhile. So while it builds, the PCs its processes are sampled at (the
 * first frame of a truncated stack that lies in the object and has no row:
 * up to there every step was taken by a rule, so it is a real PC), and the
 * return addresses on their stacks (procs/proctrack.c), name the FDEs to
 * walk first. Their rows, and gaps everywhere else, are published in the
 * object's slot as a table of its own, made again with each round's new PCs
 * (their FDEs walked and merged into the rows built before; a new generation
 * each time: the unwinder's row cache never serves an older one's rows),
 * until the whole table replaces it.
 *
 * A partial table never holds a rule the whole table would not: its rows come
 * from the same CFI walk (cfi_index, one FDE at a time) merged with the same
 * ELF knowledge (complete.h), and every PC outside its FDEs is a gap, walked
 * by the frame-pointer chain as before. Its FDEs come from the index its
 * whole build read and shares (tableload__shared_index), or, when no such
 * build runs or it shares none, from an index job of their own on a loader
 * thread (ahead of the queue: 10-20 ms for a compiler), its file reopened
 * through a process that maps it (an object with aliases gets no partial
 * table: theirs must come from the bytes compared); each table is then
 * built on the sampling thread, in slices of its own outside the budget's
 * accounting (a few hundred rows, for a second).
 *
 * tables.c calls it; it calls entries.h and tablebudget.h. Errors are
 * negative errnos.
 */
#ifndef SFBPF_MAPS_TABLEPART_H
#define SFBPF_MAPS_TABLEPART_H

#include <stdint.h>

#include "maps/entries.h"

/* PCs one object takes at most: past them, the whole table is awaited. */
#define TABLEPART_MAX_PCS 4096

/*
 * e's process was sampled at ELF address pc in its code, which has no row of
 * e's partial table. 1: no row covers pc (it is asked for now, or was and has
 * no FDE, or is being built); 0: covered, or e takes no PCs (no partial table
 * for it: built, not a first build, shared, or given up).
 */
int tablepart_want(struct tables *t, struct entry *e, uint64_t pc);

/* Builds and publishes the partial tables with new PCs, until deadline (monotonic ns). */
void tablepart_process(struct tables *t, uint64_t deadline);
/*
 * A finished index job (tableload_job.index_only): its index handed to the
 * partial table that asked for it, if that is still there (the job keeps
 * what it did not give).
 */
void tablepart_indexed(struct tables *t, struct tableload_job *job);

#endif /* SFBPF_MAPS_TABLEPART_H */
