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
 * Each PC asks for the code of TABLEPART_AROUND FDEs on each side of its
 * own too (code that runs together lies together), TABLEPART_ROUND_PCS PCs
 * a round; code walked before is not walked again.
 *
 * A partial table never holds a rule the whole table would not: its rows come
 * from the same CFI walk (cfi_index) merged with the same ELF knowledge
 * (complete.h), and every PC outside its FDEs is a gap, walked by the
 * frame-pointer chain as before. Its FDEs come from the index its whole
 * build read and shares (tableload__shared_index) if it has read it by the
 * first PC; else from .eh_frame_hdr's search table, read here (a
 * millisecond for a compiler: cfi_index__open_lookup); for an object
 * without one, from the build's index once read, or an index job of their
 * own on a loader thread (ahead of the queue: 10-20 ms for a compiler). Its
 * file is reopened through a process that maps it (an object with aliases
 * gets no partial table: theirs must come from the bytes compared); each
 * table is built on the sampling thread, in slices of its own outside the
 * budget's accounting (tens of thousands of rows, for a second), and
 * published once their segments are linked (never waited for here: the
 * linker's thread wakes the sampling thread).
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
 * FDEs walked on each side of a PC's own (in PC order): a sample's leaf
 * changes with nearly every sample, and code that runs together lies
 * together (one source file). Simulated on ten recordings of gcc's cc1
 * (their samples and stacks in order, each asked PC's rows 3 ms later, a
 * stack scan every 10 ms), the first stack complete to main came at a
 * median of 36 ms after exec with 32 on each side (2.7k FDEs walked by
 * then), 44 with 16 (1.8k), 47 with 8, and after 60 ms in 6 runs of 10 with
 * none. Measured (bench's coldstart-ab.sh), walking them costs what they
 * save beyond 16: each FDE is a few microseconds of the sampling thread.
 */
#define TABLEPART_AROUND 16
/*
 * PCs a partial table takes in at a time (a stack scan asks for dozens at
 * once): a round walks a few thousand FDEs at most, a millisecond or two of
 * the sampling thread, and the samples it left waiting are read before the
 * next round takes the rest.
 */
#define TABLEPART_ROUND_PCS 32

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
