// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One walk over some of an object's FDEs (cfi_int.h): each FDE's program run
 * once by the interpreter (cfi_interp.c), or by libdw for the reference, its
 * rows translated (cfi_rule.c) into the walk's table, gap rows between FDEs,
 * overlapping FDEs unsupported. Walks of one reader run on any threads.
 */
#include <errno.h>
#include <stdlib.h>

#include "tables/cfi_int.h"
#include "util/clock.h"

int cfi_walk__unsupported_row(struct cfi_walk *w, uint64_t pc, uint64_t end,
			      enum cfi_unsupported why)
{
	struct sfbpf_rule rule;

	if (w->unsup_id < 0) {
		cfi_rule__unsupported(&rule);
		w->unsup_id = flat_builder__rule(&w->b, &rule);
		if (w->unsup_id < 0)
			return (int)w->unsup_id;
	}
	w->st->unsupported_rows++;
	w->st->unsupported[why]++;
	w->st->unsupported_bytes += end - pc;
	return flat_builder__row(&w->b, pc, (uint32_t)w->unsup_id);
}

/* One PLT-shaped row over [pc, end): the rule alternates inside every block. */
static int plt_rows(struct cfi_walk *w, const struct cfi_row_rule *rr, uint64_t pc, uint64_t end)
{
	uint64_t period = (uint64_t)rr->plt_cfa.mask + 1, blk, a, b;
	int64_t lo_id, hi_id;
	int err = 0;

	if ((end - pc) / period * 2 > MAX_PLT_ROWS)
		return cfi_walk__unsupported_row(w, pc, end, CFI_UNSUP_CFA_EXPR);
	lo_id = flat_builder__rule(&w->b, &rr->rule);
	hi_id = flat_builder__rule(&w->b, &rr->rule_hi);
	if (lo_id < 0 || hi_id < 0)
		return -ENOMEM;
	for (blk = pc & ~(uint64_t)rr->plt_cfa.mask; blk < end && !err; blk += period) {
		/* [blk, blk + threshold): low rule; [blk + threshold, blk + period): high. */
		a = blk > pc ? blk : pc;
		b = blk + rr->plt_cfa.threshold;
		if (a < b && a < end)
			err = flat_builder__row(&w->b, a, (uint32_t)lo_id);
		a = b > pc ? b : pc;
		if (!err && a < blk + period && a < end)
			err = flat_builder__row(&w->b, a, (uint32_t)hi_id);
	}
	return err;
}

int cfi_walk__rule_rows(struct cfi_walk *w, const struct cfi_row_rule *rr, uint64_t pc,
			uint64_t end)
{
	int64_t id;

	if (rr->why)
		return cfi_walk__unsupported_row(w, pc, end, rr->why);
	if (rr->rule.ra_loc == SFBPF_LOC_UNDEFINED)
		w->st->outermost_rows++;
	if (rr->rule.flags & SFBPF_RULE_TOPMOST_ONLY)
		w->st->topmost_rows++;
	if (rr->plt)
		return plt_rows(w, rr, pc, end);
	id = flat_builder__rule(&w->b, &rr->rule);
	return id < 0 ? (int)id : flat_builder__row(&w->b, pc, (uint32_t)id);
}

/* Budget left for one more program: the FDE's and the object's. */
static uint64_t ops_left(const struct cfi_walk *w)
{
	uint64_t left = w->st->cfa_ops < w->budget ? w->budget - w->st->cfa_ops : 0;

	return left < FDE_WORK_BUDGET ? left : FDE_WORK_BUDGET;
}

/* A program refused: its whole FDE is unsupported, err says why. */
static int refuse_fde(struct cfi_walk *w, const struct cfi_fde_ent *f, int err)
{
	if (err == -ENOMEM)
		return err;
	return cfi_walk__unsupported_row(w, f->lo, f->hi,
					 err == -E2BIG ? CFI_UNSUP_BUDGET : CFI_UNSUP_INSN);
}

/* Walk one FDE: its program runs once, every row comes out of that run. */
static int walk_fde(struct cfi_walk *w, const struct cfi_fde_ent *f)
{
	const struct cfi_reader *r = w->r;
	const struct cfi_cie_ent *c = &r->cies[f->cie];
	const struct cfi_section *s = &r->sec[f->src];
	struct cfi_interp *ip = &w->ip;
	bool plt = false, sig = false;
	struct cfi_memo_val mv;
	struct cfi_row_rule rr;
	uint64_t before = ip->ops, end;
	int64_t id;
	size_t i;
	int err;

	if (w->ip_cie != f->cie) {
		w->ip_cie = -1;
		err = cfi_interp__cie(ip, r->m, &c->prog, s->data->d_buf, s->addr, ops_left(w));
		w->st->cfa_ops += ip->ops - before;
		if (err)
			return refuse_fde(w, f, err);
		w->ip_cie = f->cie;
		before = ip->ops;
	}
	err = cfi_interp__fde(ip, f->lo, f->hi, f->insn, f->insn_end, ops_left(w));
	w->st->cfa_ops += ip->ops - before;
	if (err)
		return refuse_fde(w, f, err);
	for (i = 0; i < ip->nr_rows && !err; i++) {
		const struct cfi_row *row = &ip->rows[i];

		end = i + 1 < ip->nr_rows ? ip->rows[i + 1].lo : f->hi;
		if (row->bad) {
			err = cfi_walk__unsupported_row(w, row->lo, f->hi, row->bad);
			break;
		}
		w->st->cfi_rows++;
		sig |= c->signal;
		if (cfi_memo__get(&w->memo, f->cie, &row->st, &mv)) {
			w->st->outermost_rows += mv.outermost;
			w->st->topmost_rows += mv.topmost;
			err = flat_builder__row(&w->b, row->lo, mv.rule_id);
			continue;
		}
		cfi_rule__from_state(&row->st, c->signal, c->prog.ra_reg, r->m, &rr);
		if (!rr.why && row->st.ra_signed)
			rr.rule.flags |= SFBPF_RULE_MANGLED_RA;
		plt |= rr.plt;
		/* Unsupported and PLT rows depend on their range: translated each time. */
		if (rr.why || rr.plt) {
			err = cfi_walk__rule_rows(w, &rr, row->lo, end);
			continue;
		}
		id = flat_builder__rule(&w->b, &rr.rule);
		if (id < 0)
			return (int)id;
		mv = (struct cfi_memo_val){ .rule_id = (uint32_t)id,
					    .outermost = rr.rule.ra_loc == SFBPF_LOC_UNDEFINED,
					    .topmost = rr.rule.flags & SFBPF_RULE_TOPMOST_ONLY };
		cfi_memo__put(&w->memo, f->cie, &row->st, &mv);
		w->st->outermost_rows += mv.outermost;
		w->st->topmost_rows += mv.topmost;
		err = flat_builder__row(&w->b, row->lo, mv.rule_id);
	}
	w->st->plt_fdes += plt;
	w->st->signal_fdes += sig;
	return err;
}

/*
 * Whether [lo, hi) meets a wanted range. Asked in increasing lo order, so
 * the ranges that end before lo are never looked at again.
 */
static bool wanted(struct cfi_walk *w, uint64_t lo, uint64_t hi)
{
	if (!w->want)
		return true;
	while (w->next_want < w->nr_want && w->want[w->next_want].hi <= lo)
		w->next_want++;
	return w->next_want < w->nr_want && w->want[w->next_want].lo < hi;
}

/*
 * Rows of FDEs [from, to) in PC order, gap rows between them and after the
 * last; overlaps are unsupported. from and to are run boundaries (no run of
 * FDEs overlapping each other crosses them: chunk_starts).
 */
int cfi_walk__emit(struct cfi_walk *w, uint32_t from, uint32_t to)
{
	const struct cfi_reader *r = w->r;
	uint32_t i, j, members;
	uint64_t end = 0, run_hi;
	int err = 0;

	for (i = from; i < to && !err; i = j) {
		const struct cfi_fde_ent *f = &r->fdes[i];

		j = i + 1;
		if (f->shadowed)
			continue;
		/* A run of FDEs (of one section: see shadow_debug_frame) overlapping each other. */
		run_hi = f->hi;
		for (members = 1; j < to && r->fdes[j].lo < run_hi; j++) {
			if (r->fdes[j].shadowed)
				continue;
			members++;
			if (r->fdes[j].hi > run_hi)
				run_hi = r->fdes[j].hi;
		}
		if (!wanted(w, f->lo, run_hi)) {
			w->st->unwanted_fdes += members;
			continue; /* a gap, as if the FDEs were not there */
		}
		/*
		 * A walk of thousands of FDEs takes milliseconds: on the
		 * sampling thread it ends when its time is up, between FDEs (a
		 * clock read is a hundredth of one), after one at least (each
		 * call gets somewhere). What is left is a gap, as unwanted.
		 */
		if (w->deadline_ns && w->runs && clock__mono_ns() >= w->deadline_ns) {
			w->stopped_at = f->lo;
			break;
		}
		w->runs++;
		if (end && f->lo > end)
			err = flat_builder__row(&w->b, end, SFBPF_RULE_GAP_ID);
		if (err)
			break;
		w->st->code_bytes += run_hi - f->lo;
		if (members == 1) {
			w->st->fdes[f->src]++;
			err = r->libdw_rows ? cfi_libdw__walk_fde(w, f) : walk_fde(w, f);
		} else {
			err = cfi_walk__unsupported_row(w, f->lo, run_hi, CFI_UNSUP_OVERLAP);
		}
		end = run_hi;
	}
	if (!err && w->b.t->nr_rows)
		err = flat_builder__row(&w->b, end, SFBPF_RULE_GAP_ID);
	return err;
}
