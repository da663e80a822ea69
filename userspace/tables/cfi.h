/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DWARF CFI reader: synthesizes an object's unwind table from its .eh_frame
 * (and, for code no .eh_frame FDE covers, from its own .debug_frame) when it
 * has no .sframe — the same struct flat_table flatten.c builds from SFrame, so
 * the loader and the BPF unwinder cannot tell the two apart.
 *
 * Each FDE's program runs once (cfi_interp.c), from its CIE's initial state,
 * and gives every row of the FDE, each translated by cfi_rule.c. Rows the
 * BPF rule set cannot express become explicit SFBPF_RULE_UNSUPPORTED rows,
 * never approximations. PLT expressions become one row pair per entry;
 * signal frames (CIE augmentation 'S') carry SFBPF_RULE_SIGNAL; RA undefined
 * gives the outermost rule. x86-64 and little-endian AArch64 (-ENOTSUP
 * otherwise); AArch64's RA may stay in LR (SFBPF_LOC_SAME). See
 * docs/DESIGN-cfi.md.
 *
 * Error convention: negative errno.
 *   -ENOENT    no CFI section with an FDE (or no section headers)
 *   -EINVAL    not an ELF file, or ET_REL
 *   -ENOTSUP   neither x86-64 nor little-endian AArch64
 *   -E2BIG     PCs beyond 32 bits or too many rows
 *   -ENOMEM
 */
#ifndef SFBPF_CFI_H
#define SFBPF_CFI_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/cfi_rule.h"
#include "tables/flattable.h"

enum cfi_source {
	CFI_SRC_EH_FRAME = 0,
	CFI_SRC_DEBUG_FRAME,
	CFI_SRC__COUNT,
};

struct cfi_stats {
	uint32_t fdes[CFI_SRC__COUNT]; /* FDEs whose rows are in the table, per section */
	uint32_t cies;
	uint32_t cfi_rows; /* CFI rows visited (libdw frames) */
	uint32_t rows; /* table rows, gaps included */
	uint32_t rules; /* distinct rules in the table */
	uint32_t unsupported_rows; /* CFI rows that became SFBPF_RULE_UNSUPPORTED */
	uint32_t unsupported[CFI_UNSUP__COUNT]; /* ... by reason */
	uint32_t plt_fdes; /* FDEs with a PLT-shaped CFA */
	uint32_t signal_fdes; /* FDEs of signal trampolines ('S') */
	uint32_t outermost_rows; /* CFI rows with RA undefined */
	uint32_t topmost_rows; /* CFI rows usable in the topmost frame only (DRAP) */
	uint32_t skipped_fdes; /* empty, outside executable sections, undecodable */
	uint32_t shadowed_fdes; /* .debug_frame FDEs overlapping .eh_frame ones */
	uint64_t unsupported_bytes; /* code bytes covered by unsupported rows */
	uint64_t code_bytes; /* code bytes covered by FDEs in the table */
	uint64_t cfa_ops; /* CFA instructions executed (bounded work) */
	uint32_t unwanted_fdes; /* outside the ranges asked for (cfi_index__flatten) */
};

/* A PC range [lo, hi). */
struct cfi_range {
	uint64_t lo, hi;
};

/* Sorts r[0 .. n) by start and joins the ranges that meet: how many are left. */
uint32_t cfi_ranges__join(struct cfi_range *r, uint32_t n);

/*
 * Table from the CFI of the ELF file open at fd (read with pread/mmap; the
 * offset is untouched, fd stays the caller's). stats may be NULL.
 */
int cfi__flatten_fd(int fd, struct flat_table **out, struct cfi_stats *stats);
int cfi__flatten_path(const char *path, struct flat_table **out, struct cfi_stats *stats);

/*
 * The same, in two steps: cfi_index__open() reads and orders every FDE once
 * (5-10 ms for gcc's cc1), cfi_index__flatten() then walks them, or only
 * where needed: FDEs (or runs of FDEs that overlap each other) covering no
 * PC of want[0 .. nr_want) (sorted by lo, disjoint) are left out, as gaps.
 * At every PC inside those ranges the table has the rule cfi__flatten_fd()
 * gives; elsewhere it may say less (want NULL: everything). Walking FDEs is
 * most of the cost: an object with .sframe needs CFI only where .sframe has
 * no rule (complete__cfi_ranges), and the rows of sampled PCs while a whole
 * table is being built (maps/tablepart.c) a few FDEs each time
 * (microseconds each). The index reads the file at open; fd stays the
 * caller's. cfi_index__free(NULL) is a no-op.
 */
struct cfi_index;
int cfi_index__open(int fd, struct cfi_index **out);
/*
 * An index that reads no FDE at open: cfi_index__flatten() finds those of
 * the ranges asked for in .eh_frame_hdr's search table (want must not be
 * NULL: -EINVAL), reading only them, at PCs the whole walk gives the same
 * rules (an FDE overlapping a neighbour is left out). .eh_frame only: no
 * .debug_frame, no whole table (no chunks). A millisecond for gcc's cc1
 * where cfi_index__open() takes 5-10: the rows of a few sampled PCs first.
 * -ENOENT when the object has no usable .eh_frame_hdr (or rows come from
 * libdw): cfi_index__open() then.
 */
int cfi_index__open_lookup(int fd, struct cfi_index **out);
int cfi_index__flatten(const struct cfi_index *ix, const struct cfi_range *want, uint32_t nr_want,
		       struct flat_table **out, struct cfi_stats *stats);
/*
 * The same, on a deadline (CLOCK_MONOTONIC ns, as util/clock.h's
 * clock__mono_ns; 0: none): the FDEs are walked in PC order and, once one has
 * been, none is begun past it. *done (when done is not NULL): the PC the walk
 * stopped at, the table then holding the rows asked for below it and gaps
 * from it on; UINT64_MAX when it walked all. For the sampling thread, whose
 * partial tables (maps/tablepart.c) ask for thousands of FDEs in a round and
 * must not hold samples unread past the round's time: what is not walked is
 * asked for in the next round. The FDE a walk is in when the time runs out
 * is finished: one is bounded by FDE_WORK_BUDGET instructions.
 */
int cfi_index__flatten_until(const struct cfi_index *ix, const struct cfi_range *want,
			     uint32_t nr_want, uint64_t deadline_ns, uint64_t *done,
			     struct flat_table **out, struct cfi_stats *stats);

/*
 * The whole table in chunks, for threads to share (a big object's build:
 * tables/tableload.c): chunk k of cfi_index__nr_chunks() walked by
 * cfi_index__flatten_chunk() on any thread, several at once (stats: the
 * chunk's own counts). In order, the chunks are the table
 * cfi_index__flatten(ix, NULL, 0, ...) builds, cut at FDE boundaries, each
 * with rule ids of its own and ending in a gap row: complete__merge_parts()
 * takes them as they are.
 * cfi_index__join() sums the walk's counts (total: rows are the chunks'
 * summed, rules the most of one) and sets the first chunk's table counts
 * (nr_fdes and the like) to the whole table's. An index is only read after
 * its open: walks of one index may run at once.
 */
uint32_t cfi_index__nr_chunks(const struct cfi_index *ix);
int cfi_index__flatten_chunk(const struct cfi_index *ix, uint32_t k, struct flat_table **out,
			     struct cfi_stats *stats);
void cfi_index__join(const struct cfi_index *ix, struct flat_table *const *parts,
		     const struct cfi_stats *stats, uint32_t n, struct cfi_stats *total);
/* The FDE that holds pc, as [lo, hi) (ELF addresses); false: none does. */
bool cfi_index__fde_at(const struct cfi_index *ix, uint64_t pc, uint64_t *lo, uint64_t *hi);
/*
 * The code of the FDE at pc and of the k FDEs on each side of it in PC
 * order, as one range (the gaps between them included) into *out; false:
 * no FDE starts at or below pc.
 */
bool cfi_index__around(const struct cfi_index *ix, uint64_t pc, uint32_t k, struct cfi_range *out);
/*
 * One more holder of ix (another thread's walks, while its opener's go on);
 * each holder calls cfi_index__free(), the last one frees it.
 */
struct cfi_index *cfi_index__ref(struct cfi_index *ix);
void cfi_index__free(struct cfi_index *ix);

/*
 * Whether rows come from libdw, the row walk the interpreter replaced
 * (dwarf_cfi_addrframe for every row: O(rows * instructions)), because the
 * environment says SFBPF_CFI_ROWS=libdw. For the tests that compare both
 * and for the benchmark; read by every cfi_index__open().
 */
bool cfi__libdw_rows(void);

/* ".eh_frame" or ".debug_frame". */
const char *cfi_source__name(enum cfi_source src);

#endif /* SFBPF_CFI_H */
