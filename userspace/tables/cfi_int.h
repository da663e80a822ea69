/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What cfi.c and its sibling cfi_libdw.c share: an object's CFI as read once
 * (sections, CIEs, FDEs in table order) and the table being built from it.
 * Internal to userspace/tables/cfi*.c; everything else uses cfi.h.
 *
 * Rows: cfi.c walks an FDE with the interpreter; cfi_libdw.c walks it with
 * libdw (SFBPF_CFI_ROWS=libdw), the reference the interpreter replaced. Both
 * turn each row into table rows with cfi_walk__rule_rows() and
 * cfi_walk__unsupported_row(). Error rule: negative errno.
 */
#ifndef SFBPF_TABLES_CFI_INT_H
#define SFBPF_TABLES_CFI_INT_H

#include <elfutils/libdw.h>
#include <gelf.h>

#include "tables/cfi.h"
#include "tables/cfi_interp.h"
#include "tables/flatbuild.h"

#define MAX_PLT_ROWS (1u << 16) /* expansion bound for one PLT-shaped row */
#define MAX_EXEC_SEGMENTS 16
/*
 * Bounds per FDE and per object, in CFA instructions executed (libc has
 * 0.06M, libLLVM-14 2.2M).
 */
#define FDE_WORK_BUDGET (32ull << 20)
#define OBJ_WORK_BUDGET (256ull << 20)
/*
 * FDEs per chunk of a whole table walked on several threads (cfi.h): cc1's
 * 45k FDEs make 11 chunks of about a millisecond each, few enough to join
 * cheaply, enough for two or more threads to share evenly.
 */
#define CFI_CHUNK_FDES 4096
struct cfi_section {
	Elf_Data *data; /* NULL: the object has no such section */
	uint64_t addr; /* sh_addr */
	Dwarf_CFI *cfi; /* libdw's handle on the same section (the reference walk only) */
};

/* A CIE as its FDEs need it. */
struct cfi_cie_ent {
	struct cfi_cie_prog prog;
	bool signal; /* augmentation 'S' */
};

/* One FDE's range, in the order the table is built, and its programs. */
struct cfi_fde_ent {
	uint64_t lo, hi;
	const uint8_t *insn, *insn_end; /* the FDE's instructions */
	uint32_t cie; /* index in reader.cies */
	uint8_t src; /* enum cfi_source */
	bool shadowed; /* a .debug_frame FDE an .eh_frame FDE overlaps */
};

/* The CIE parsed last: FDEs share few CIEs, in runs. */
struct cfi_cie_info {
	Dwarf_Off off;
	bool valid;
	bool zaug; /* 'z' augmentation: FDEs carry an augmentation length */
	uint32_t idx; /* in reader.cies */
	struct cfi_cie_ent ent;
};

struct cfi_exec_range {
	uint64_t lo, hi;
};

/*
 * .eh_frame_hdr's search table (cfi_hdr.c): the start of every .eh_frame FDE
 * and where it is, sorted by start, as the linker wrote it for unwinders
 * that look up one PC at a time.
 */
struct cfi_hdr {
	const uint8_t *table; /* count pairs of sdata4, relative to addr */
	uint32_t count;
	uint64_t addr; /* the section's address */
};

/*
 * An object's CFI as read once: its sections, CIEs and FDEs in table order.
 * Written while the index is opened (cfi.c), only read after: any number of
 * walks, on any threads, read one reader at once (libdw's reference walk
 * excepted: its handles are libdw's, used by one walk at a time).
 */
struct cfi_reader {
	Elf *elf;
	Dwarf *dwarf; /* only for .debug_frame */
	const struct cfi_machine *m; /* x86-64 or AArch64 */
	unsigned char e_ident[EI_NIDENT];
	struct cfi_section sec[CFI_SRC__COUNT];
	struct cfi_hdr hdr; /* count 0: no usable .eh_frame_hdr */
	struct cfi_exec_range exec[MAX_EXEC_SEGMENTS]; /* executable PT_LOADs */
	uint32_t nr_exec;
	struct cfi_fde_ent *fdes;
	uint32_t nr_fdes;
	size_t cap_fdes;
	struct cfi_cie_ent *cies;
	uint32_t nr_cies;
	size_t cap_cies;
	struct cfi_cie_info cie; /* last CIE parsed (while reading the FDEs) */
	bool libdw_rows; /* rows from libdw (SFBPF_CFI_ROWS=libdw): the reference */
	struct cfi_stats *st; /* what reading the FDEs counts */
};

/* One walk over some of a reader's FDEs, and the table it builds. */
struct cfi_walk {
	const struct cfi_reader *r;
	struct cfi_interp ip;
	int64_t ip_cie; /* the CIE whose initial state ip holds, -1: none */
	struct cfi_memo memo; /* rule ids of row states seen (b's ids) */
	struct flat_builder b;
	int64_t unsup_id; /* local id of the unsupported rule, -1 until used */
	const struct cfi_range *want; /* the ranges asked for; NULL: everything */
	uint32_t nr_want, next_want; /* next_want: the first that may still matter */
	uint64_t budget; /* CFA instructions this walk may run (OBJ_WORK_BUDGET, or its share) */
	/*
	 * CLOCK_MONOTONIC ns past which no run of FDEs is begun, once one has
	 * been (0: none); stopped_at: where the walk then stopped (UINT64_MAX:
	 * it did not).
	 */
	uint64_t deadline_ns, stopped_at;
	uint32_t runs; /* runs of FDEs walked */
	struct cfi_stats *st;
};

/*
 * Rows of FDEs [from, to) of the reader in PC order into w's table, gap rows
 * between them and after the last; from and to are run boundaries (no run
 * of FDEs overlapping each other crosses them). Stops early at w's deadline.
 */
int cfi_walk__emit(struct cfi_walk *w, uint32_t from, uint32_t to);
/* Rows for rr over [pc, end): its rule, its PLT pair per entry, or unsupported. */
int cfi_walk__rule_rows(struct cfi_walk *w, const struct cfi_row_rule *rr, uint64_t pc,
			uint64_t end);
/* One unsupported row over [pc, end), counted under why. */
int cfi_walk__unsupported_row(struct cfi_walk *w, uint64_t pc, uint64_t end,
			      enum cfi_unsupported why);

/*
 * The FDE at offset off of .eh_frame, its CIE parsed (r->cies, r->cie), in
 * *f: 0, or -EINVAL (not an FDE, undecodable, empty, beyond 32 bits or
 * outside the executable segments: what reading them all skips).
 */
int cfi_reader__fde_at_offset(struct cfi_reader *r, uint64_t off, struct cfi_fde_ent *f);
/* f appended to r->fdes. */
int cfi_reader__push_fde(struct cfi_reader *r, const struct cfi_fde_ent *f);

/*
 * The table of .eh_frame_hdr's bytes d at addr, whose .eh_frame is at
 * eh_frame_addr: 0, or -ENOENT (no table of the one encoding linkers write,
 * datarel sdata4; another version; another .eh_frame).
 */
int cfi_hdr__init(struct cfi_hdr *h, const Elf_Data *d, uint64_t addr, uint64_t eh_frame_addr);
/*
 * Appends to r->fdes (sorted, each once) the .eh_frame FDEs that meet
 * want[0 .. nr_want) (sorted by lo, disjoint), found in r->hdr, not reading
 * the others: an FDE that overlaps the one before or after it in the table
 * is left out (a gap), as the whole walk leaves no rule there. 0 or -ENOMEM.
 */
int cfi_hdr__collect(struct cfi_reader *r, const struct cfi_range *want, uint32_t nr_want);
/* The .eh_frame FDE that holds pc, found in r->hdr, into *f: false if none. */
bool cfi_hdr__fde_at(struct cfi_reader *r, uint64_t pc, struct cfi_fde_ent *f);
/* cfi_index__around() in r->hdr's table. */
bool cfi_hdr__around(const struct cfi_hdr *h, uint64_t pc, uint32_t k, struct cfi_range *out);

/* libdw's handles on the sections found (a section libdw refuses is dropped). */
void cfi_libdw__open(struct cfi_reader *r);
/* f's rows, one dwarf_cfi_addrframe() query each. */
int cfi_libdw__walk_fde(struct cfi_walk *w, const struct cfi_fde_ent *f);
void cfi_libdw__close(struct cfi_reader *r);

#endif /* SFBPF_TABLES_CFI_INT_H */
