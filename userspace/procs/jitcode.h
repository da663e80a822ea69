/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Arenas of identical JIT trampolines as objects with a table. CPython 3.12+
 * run with -X perf (or PYTHONPERFSUPPORT) copies one small assembly function
 * (Python/asm_trampoline.S) into anonymous executable memory, one copy per
 * code object, and names each copy in /tmp/perf-PID.map. On x86-64 it is
 * "[endbr64;] sub $8,%rsp; call *%rcx; add $8,%rsp; ret" with no frame
 * pointer, so the frame-pointer fallback cannot step out of it; and the
 * arena (64 KiB, mmap'ed read-write, filled with copies at a 16-byte stride,
 * 3.12's at the code's own 11, then made read-execute) has no unwind
 * information anywhere.
 *
 * Such a mapping is recognised by its bytes (read with process_vm_readv):
 * periodic with a period P (8..256 bytes), every copy the same code,
 * which a small decoder understands fully: frame setup (endbr64, push/pop
 * %rbp, mov %rsp,%rbp, sub/add $imm,%rsp, leave, nops), exactly one
 * indirect call, then ret and padding. The decoder's rows are written as
 * .eh_frame of a tiny ELF image in a memfd (one copy of the code at vaddr
 * JITCODE_TEXT_VADDR), loaded like any file: one table per distinct
 * template, shared by every process and every arena. The unwinder folds a
 * PC of the mapping onto the first copy (SFBPF_MAP_F_PERIOD in the
 * mapping's flags): the table never grows with the arena. Nothing in this
 * is specific to CPython but the shape of the code it accepts.
 *
 * Lifecycle: jitcode__new() per process tracker, jitcode__resolve() per
 * anonymous executable mapping at each refresh, jitcode__free(). The
 * decoder and image writer are pure (tests call them). Errors are negative
 * errnos; -ENOENT means "not an arena of trampolines".
 */
#ifndef SFBPF_PROCS_JITCODE_H
#define SFBPF_PROCS_JITCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "maps/tables.h"

#define JITCODE_MIN_PERIOD 8 /* a call and a ret, and a frame to step out of */
#define JITCODE_MAX_PERIOD 256
#define JITCODE_MAX_MAPPING (4u << 20) /* larger anonymous code is a real JIT */
#define JITCODE_TEXT_VADDR 0x1000 /* where the image holds its copy */
#define JITCODE_MAX_ROWS 32

/* One row of a template: the rule from offset off (in the copy) on. */
struct jitcode_row {
	uint32_t off;
	int32_t cfa_off; /* CFA = (cfa_fp ? rbp : rsp) + cfa_off */
	uint8_t cfa_fp;
	int32_t fp_off; /* caller's rbp saved at CFA + fp_off; 0: rbp unchanged */
};

struct jitcode_template {
	uint32_t period; /* bytes per copy */
	bool shape; /* a runtime's shape (jitcode__shape()), never a trampoline's match */
	uint32_t code_len; /* bytes up to and including the ret */
	uint8_t bytes[JITCODE_MAX_PERIOD];
	struct jitcode_row rows[JITCODE_MAX_ROWS];
	uint32_t nr_rows;
	int fd; /* memfd holding the ELF image; -1 until written */
	struct obj_key key; /* the memfd's identity: one per distinct template (all its bytes) */
};

/*
 * The smallest period P in [JITCODE_MIN_PERIOD, JITCODE_MAX_PERIOD] with
 * buf[i] == buf[i % P] for all i < len (the last copy may be cut short), or
 * -ENOENT. Not only powers of two: CPython 3.12's copies are 11 bytes apart.
 */
int jitcode__period(const uint8_t *buf, size_t len);

/*
 * Decodes one copy (t->bytes, t->period set) into t->rows and t->code_len.
 * 0, or -ENOENT when the code is not a trampoline this decoder understands
 * fully (any unknown instruction, no or several calls, SP not back at the
 * entry value at ret, non-padding bytes after it).
 */
int jitcode__decode(struct jitcode_template *t);

/*
 * Writes t's ELF image (one copy of the code at JITCODE_TEXT_VADDR, its
 * rows as .eh_frame) into buf of size cap. Returns its length, or -E2BIG.
 */
int jitcode__image(const struct jitcode_template *t, uint8_t *buf, size_t cap);

/* The mapping flags that fold a PC onto the first copy (bpf/abi.h). */
uint32_t jitcode__map_flags(const struct jitcode_template *t);

struct jitcode;

struct jitcode *jitcode__new(void);
void jitcode__free(struct jitcode *jc);

/*
 * Whether pid's anonymous executable mapping [start, end) is an arena of
 * trampolines: 0 with *out set (owned by jc; its fd has the image), -ENOENT
 * when not, another negative errno on failure (process gone: -ESRCH).
 */
int jitcode__resolve(struct jitcode *jc, int pid, uint64_t start, uint64_t end,
		     const struct jitcode_template **out);

/*
 * A runtime's JIT code whose frames all have one shape, as the runtime knows
 * it (Ruby 3.1's YJIT: three registers pushed at its entry, rbp never
 * touched), in one process: [lo, hi), CFA = rsp + cfa_off, the return
 * address at CFA - 8, the caller's rbp still in rbp. Its mappings, whatever
 * their protection now (YJIT makes its code writable while it compiles),
 * get a template of that one row over JITCODE_SHAPE_PERIOD bytes, onto
 * which every PC folds. What the code holds is not read: the runtime vouches
 * for it, and a frame it misdescribes (an instruction of an entry or exit,
 * a C call made with more pushed) reads a wrong return address, which the
 * walk finds in no mapping: the stack ends there.
 */
struct jitcode_region {
	uint64_t lo, hi;
	int32_t cfa_off;
	const char *name; /* the table's, static: "[ruby-yjit]" */
};

#define JITCODE_SHAPE_PERIOD 16

/* The template of that one row (made once per shape): 0 and *out, or a negative errno. */
int jitcode__shape(struct jitcode *jc, int32_t cfa_off, const struct jitcode_template **out);

/* pid's region (the process started at start_ticks), set or replaced: 0 or -ENOMEM. */
int jitcode__set_region(struct jitcode *jc, int pid, uint64_t start_ticks,
			const struct jitcode_region *r);
/* pid's region if it was set for the process started at start_ticks, else NULL. */
const struct jitcode_region *jitcode__region(const struct jitcode *jc, int pid,
					     uint64_t start_ticks);
/* pid's region, if any, dropped (the process is gone). */
void jitcode__forget(struct jitcode *jc, int pid);

#endif /* SFBPF_PROCS_JITCODE_H */
