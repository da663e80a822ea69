// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rows of an FDE from libdw (see cfi_int.h): the walk the CFA
 * interpreter replaced, kept as the reference tests/cfiref.test compares
 * the interpreter's tables with, and as the benchmark's baseline. libdw has
 * no row iterator: each row is one dwarf_cfi_addrframe() query, which
 * re-runs the CIE's and the FDE's program from their start (rows x
 * instructions) with a frame allocated per query.
 */
#include <stdlib.h>
#include <string.h>

#include "tables/cfi_prog.h"
#include "tables/cfi_int.h"

/*
 * The libdw reference re-runs the CIE's and the FDE's program for every row
 * and counts rows * instructions (libc 1M, libLLVM 40M; one FDE of gcc's cc1,
 * 20 KiB of CFI, 36M). It ran out of FDE_WORK_BUDGET there and gave
 * unsupported rows: as a reference for the interpreter's rows it may go on,
 * to bounds only a hostile file reaches.
 */
#define REF_FDE_WORK_BUDGET (1ull << 32)
#define REF_OBJ_WORK_BUDGET (1ull << 36)

bool cfi__libdw_rows(void)
{
	const char *v = getenv("SFBPF_CFI_ROWS");

	return v && !strcmp(v, "libdw");
}

/* libdw handles for the sections found; a section libdw refuses is dropped. */
void cfi_libdw__open(struct cfi_reader *r)
{
	struct cfi_section *eh = &r->sec[CFI_SRC_EH_FRAME], *dbg = &r->sec[CFI_SRC_DEBUG_FRAME];

	if (eh->data && eh->data->d_buf && !(eh->cfi = dwarf_getcfi_elf(r->elf)))
		eh->data = NULL;
	if (!eh->data || !eh->data->d_buf)
		eh->data = NULL;
	if (!dbg->data || !dbg->data->d_buf) {
		dbg->data = NULL;
		return;
	}
	r->dwarf = dwarf_begin_elf(r->elf, DWARF_C_READ, NULL);
	dbg->cfi = r->dwarf ? dwarf_getcfi(r->dwarf) : NULL;
	if (!dbg->cfi)
		dbg->data = NULL;
}

void cfi_libdw__close(struct cfi_reader *r)
{
	if (r->sec[CFI_SRC_EH_FRAME].cfi)
		dwarf_cfi_end(r->sec[CFI_SRC_EH_FRAME].cfi);
	if (r->dwarf)
		dwarf_end(r->dwarf); /* owns the .debug_frame handle */
}

/*
 * Instructions libdw runs per row of this FDE, 0 if it must not run them:
 * libdw sizes a frame by the highest register named and copies it at every
 * remember_state, so programs are checked first (cfi_prog__scan).
 */
static uint32_t fde_ops(const struct cfi_reader *r, const struct cfi_fde_ent *f)
{
	const struct cfi_cie_prog *c = &r->cies[f->cie].prog;
	struct cfi_prog_scan s = { .aarch64 = r->m == &cfi_aarch64 };

	if (!c->insn || c->insn > c->insn_end || f->insn > f->insn_end ||
	    !cfi_prog__scan(c->insn, c->insn_end, c->fde_enc, &s) ||
	    !cfi_prog__scan(f->insn, f->insn_end, c->fde_enc, &s))
		return 0;
	return s.ops + 1 < UINT32_MAX ? (uint32_t)s.ops + 1 : UINT32_MAX;
}

/*
 * AArch64: whether the RA is signed in f's row at pc, which libdw does not
 * track (it ignores DW_CFA_AARCH64_negate_ra_state): f's programs re-read
 * from its entry, up to that row.
 */
static bool ra_signed(const struct cfi_cie_prog *c, const struct cfi_fde_ent *f, uint64_t pc)
{
	struct cfi_prog_scan s = {
		.aarch64 = true, .track = true, .loc = f->lo, .pc = pc, .code_align = c->code_align
	};

	if (!cfi_prog__scan(c->insn, c->insn_end, c->fde_enc, &s) ||
	    (!s.reached && !cfi_prog__scan(f->insn, f->insn_end, c->fde_enc, &s)))
		return false;
	return s.ra_signed;
}

/*
 * The reference walk: libdw evaluates the row at pc and says where it ends,
 * re-running the FDE's program from its start for each row.
 */
int cfi_libdw__walk_fde(struct cfi_walk *w, const struct cfi_fde_ent *f)
{
	const struct cfi_reader *r = w->r;
	Dwarf_CFI *cfi = r->sec[f->src].cfi;
	bool signal = false, plt = false, sig = false;
	struct cfi_row_rule rr;
	Dwarf_Addr start, end;
	Dwarf_Frame *frame;
	uint64_t pc = f->lo, work = 0;
	uint32_t ops = fde_ops(r, f);
	int ra_reg, err = 0;

	if (!ops)
		return cfi_walk__unsupported_row(w, pc, f->hi, CFI_UNSUP_INSN);
	while (pc < f->hi && !err) {
		/* Each row re-runs the programs: bound the FDE's and the object's total. */
		work += ops;
		w->st->cfa_ops += ops;
		if (work > REF_FDE_WORK_BUDGET || w->st->cfa_ops > REF_OBJ_WORK_BUDGET)
			return cfi_walk__unsupported_row(w, pc, f->hi, CFI_UNSUP_BUDGET);
		frame = NULL;
		if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
			return cfi_walk__unsupported_row(w, pc, f->hi, CFI_UNSUP_LIBDW);
		ra_reg = dwarf_frame_info(frame, &start, &end, &signal);
		/* Another FDE answered (libdw's lookup disagrees with ours): do not guess. */
		if (ra_reg < 0 || start > pc || end <= pc || end > f->hi) {
			free(frame);
			return cfi_walk__unsupported_row(w, pc, f->hi, CFI_UNSUP_LIBDW);
		}
		cfi_rule__from_frame(frame, signal, ra_reg, r->m, &rr);
		free(frame);
		if (r->m == &cfi_aarch64 && !rr.why && ra_signed(&r->cies[f->cie].prog, f, pc))
			rr.rule.flags |= SFBPF_RULE_MANGLED_RA;
		w->st->cfi_rows++;
		plt |= rr.plt;
		sig |= signal;
		err = cfi_walk__rule_rows(w, &rr, pc, end);
		pc = end;
	}
	w->st->plt_fdes += plt;
	w->st->signal_fdes += sig;
	return err;
}
