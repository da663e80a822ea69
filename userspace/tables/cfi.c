// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DWARF CFI → flat table (see cfi.h). This file enumerates the FDEs
 * (dwarf_next_cfi gives raw entries, so their address ranges are decoded
 * here from the CIE's pointer encoding), orders them, resolves overlaps, and
 * has each FDE's program run once by cfi_interp.c, its rows translated by
 * cfi_rule.c. The libdw row walk it replaced stays as a reference for the
 * tests and the benchmark (SFBPF_CFI_ROWS=libdw).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tables/cfi_prog.h"
#include "tables/cfi_int.h"
#include "util/search.h"
#include "util/vec.h"

const char *cfi_source__name(enum cfi_source src)
{
	return src == CFI_SRC_EH_FRAME	  ? ".eh_frame" :
	       src == CFI_SRC_DEBUG_FRAME ? ".debug_frame" :
					    "?";
}

/* ---------------------------------------------------------------- FDE enumeration */

/* The FDE pointer encoding of the CIE at off ('z' augmentations; else absolute). */
static int parse_cie(struct cfi_reader *r, enum cfi_source src, Dwarf_Off off)
{
	const struct cfi_section *s = &r->sec[src];
	const uint8_t *p, *end;
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	uint64_t skip;
	const char *a;
	uint8_t enc;

	if (r->cie.valid && r->cie.off == off)
		return 0;
	r->cie = (struct cfi_cie_info){ .off = off };
	r->cie.ent.prog.fde_enc = DW_EH_PE_absptr;
	if (dwarf_next_cfi(r->e_ident, s->data, src == CFI_SRC_EH_FRAME, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e))
		return -EINVAL;
	a = e.cie.augmentation;
	if (a[0] && a[0] != 'z')
		return -EINVAL; /* pre-'z' GNU augmentations: not emitted for decades */
	r->cie.zaug = a[0] == 'z';
	r->cie.ent.prog = (struct cfi_cie_prog){
		.insn = e.cie.initial_instructions,
		.insn_end = e.cie.initial_instructions_end,
		.code_align = e.cie.code_alignment_factor,
		.data_align = e.cie.data_alignment_factor,
		.ra_reg = (uint32_t)e.cie.return_address_register,
		.fde_enc = DW_EH_PE_absptr,
	};
	p = e.cie.augmentation_data;
	end = p + e.cie.augmentation_data_size;
	for (a = a[0] ? a + 1 : a; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return -EINVAL;
			r->cie.ent.prog.fde_enc = *p++;
			break;
		case 'L':
			if (p++ >= end)
				return -EINVAL;
			break;
		case 'P':
			if (p >= end)
				return -EINVAL;
			enc = *p++;
			if (cfi_prog__read_encoded(&p, end, enc & ~DW_EH_PE_indirect, 0, false,
						   &skip))
				return -EINVAL;
			break;
		case 'S': /* signal frame */
			r->cie.ent.signal = true;
			break;
		case 'B': /* AArch64 B key, MTE tagged frames: no data */
		case 'G':
			break;
		default:
			goto done; /* unknown: the 'z' size still lets libdw skip the rest */
		}
	}
done:
	if (VEC_RESERVE(r->cies, r->cap_cies, (size_t)r->nr_cies + 1, 16))
		return -ENOMEM;
	r->cie.idx = r->nr_cies;
	r->cies[r->nr_cies++] = r->cie.ent;
	r->cie.valid = true;
	return 0;
}

static bool in_exec_segment(const struct cfi_reader *r, uint64_t lo, uint64_t hi)
{
	uint32_t i;

	for (i = 0; i < r->nr_exec; i++)
		if (lo >= r->exec[i].lo && hi <= r->exec[i].hi)
			return true;
	return false;
}

static int push_fde(struct cfi_reader *r, uint64_t lo, uint64_t hi, enum cfi_source src,
		    const uint8_t *insn, const uint8_t *insn_end)
{
	if (VEC_RESERVE(r->fdes, r->cap_fdes, (size_t)r->nr_fdes + 1, 256))
		return -ENOMEM;
	r->fdes[r->nr_fdes++] = (struct cfi_fde_ent){ .lo = lo,
						      .hi = hi,
						      .insn = insn,
						      .insn_end = insn_end,
						      .cie = r->cie.idx,
						      .src = src };
	return 0;
}

/* Range of one FDE and where its instructions start; false if it cannot be decoded. */
static bool fde_range(struct cfi_reader *r, enum cfi_source src, const Dwarf_FDE *f, uint64_t *lo,
		      uint64_t *hi, const uint8_t **insn)
{
	const struct cfi_section *s = &r->sec[src];
	const uint8_t *p = f->start, *base = s->data->d_buf;
	uint64_t range, alen;

	if (parse_cie(r, src, f->CIE_pointer))
		return false;
	if (cfi_prog__read_encoded(&p, f->end, r->cie.ent.prog.fde_enc,
				   s->addr + (uint64_t)(p - base), true, lo) ||
	    cfi_prog__read_encoded(&p, f->end, r->cie.ent.prog.fde_enc & 0x0f, 0, false, &range))
		return false;
	if (r->cie.zaug) {
		if (cfi_prog__read_uleb(&p, f->end, &alen) || alen > (uint64_t)(f->end - p))
			return false;
		p += alen;
	}
	*insn = p;
	*hi = *lo + range;
	return *hi >= *lo;
}

static int collect_fdes(struct cfi_reader *r, enum cfi_source src)
{
	const struct cfi_section *s = &r->sec[src];
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	const uint8_t *insn;
	uint64_t lo, hi;
	int ret, err;

	r->cie.valid = false;
	while (off < s->data->d_size) {
		ret = dwarf_next_cfi(r->e_ident, s->data, src == CFI_SRC_EH_FRAME, off, &next, &e);
		if (ret != 0)
			break; /* end, a zero terminator, or garbage: keep what was read */
		off = next;
		if (dwarf_cfi_cie_p(&e)) {
			r->st->cies++;
			continue;
		}
		if (!fde_range(r, src, &e.fde, &lo, &hi, &insn) || hi == lo || hi > UINT32_MAX ||
		    !in_exec_segment(r, lo, hi)) {
			r->st->skipped_fdes++; /* e.g. .debug_frame FDEs of discarded code at 0 */
			continue;
		}
		err = push_fde(r, lo, hi, src, insn, e.fde.end);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct cfi_fde_ent *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* .eh_frame wins where the two sections describe the same code. */
static void shadow_debug_frame(struct cfi_reader *r)
{
	uint64_t eh_hi = 0, eh_lo = UINT64_MAX;
	int64_t i;

	for (i = 0; i < r->nr_fdes; i++) {
		struct cfi_fde_ent *f = &r->fdes[i];

		if (f->src == CFI_SRC_EH_FRAME)
			eh_hi = f->hi > eh_hi ? f->hi : eh_hi;
		else if (f->lo < eh_hi)
			f->shadowed = true;
	}
	for (i = (int64_t)r->nr_fdes - 1; i >= 0; i--) {
		struct cfi_fde_ent *f = &r->fdes[i];

		if (f->src == CFI_SRC_EH_FRAME)
			eh_lo = f->lo;
		else if (f->hi > eh_lo)
			f->shadowed = true;
	}
	for (i = 0; i < r->nr_fdes; i++)
		r->st->shadowed_fdes += r->fdes[i].shadowed;
}

/* ---------------------------------------------------------------- rows */

int cfi_reader__unsupported_row(struct cfi_reader *r, uint64_t pc, uint64_t end,
				enum cfi_unsupported why)
{
	struct sfbpf_rule rule;

	if (r->unsup_id < 0) {
		cfi_rule__unsupported(&rule);
		r->unsup_id = flat_builder__rule(&r->b, &rule);
		if (r->unsup_id < 0)
			return (int)r->unsup_id;
	}
	r->st->unsupported_rows++;
	r->st->unsupported[why]++;
	r->st->unsupported_bytes += end - pc;
	return flat_builder__row(&r->b, pc, (uint32_t)r->unsup_id);
}

/* One PLT-shaped row over [pc, end): the rule alternates inside every block. */
static int plt_rows(struct cfi_reader *r, const struct cfi_row_rule *rr, uint64_t pc, uint64_t end)
{
	uint64_t period = (uint64_t)rr->plt_cfa.mask + 1, blk, a, b;
	int64_t lo_id, hi_id;
	int err = 0;

	if ((end - pc) / period * 2 > MAX_PLT_ROWS)
		return cfi_reader__unsupported_row(r, pc, end, CFI_UNSUP_CFA_EXPR);
	lo_id = flat_builder__rule(&r->b, &rr->rule);
	hi_id = flat_builder__rule(&r->b, &rr->rule_hi);
	if (lo_id < 0 || hi_id < 0)
		return -ENOMEM;
	for (blk = pc & ~(uint64_t)rr->plt_cfa.mask; blk < end && !err; blk += period) {
		/* [blk, blk + threshold): low rule; [blk + threshold, blk + period): high. */
		a = blk > pc ? blk : pc;
		b = blk + rr->plt_cfa.threshold;
		if (a < b && a < end)
			err = flat_builder__row(&r->b, a, (uint32_t)lo_id);
		a = b > pc ? b : pc;
		if (!err && a < blk + period && a < end)
			err = flat_builder__row(&r->b, a, (uint32_t)hi_id);
	}
	return err;
}

int cfi_reader__rule_rows(struct cfi_reader *r, const struct cfi_row_rule *rr, uint64_t pc,
			  uint64_t end)
{
	int64_t id;

	if (rr->why)
		return cfi_reader__unsupported_row(r, pc, end, rr->why);
	if (rr->rule.ra_loc == SFBPF_LOC_UNDEFINED)
		r->st->outermost_rows++;
	if (rr->rule.flags & SFBPF_RULE_TOPMOST_ONLY)
		r->st->topmost_rows++;
	if (rr->plt)
		return plt_rows(r, rr, pc, end);
	id = flat_builder__rule(&r->b, &rr->rule);
	return id < 0 ? (int)id : flat_builder__row(&r->b, pc, (uint32_t)id);
}

/* Budget left for one more program: the FDE's and the object's. */
static uint64_t ops_left(const struct cfi_reader *r)
{
	uint64_t left = r->st->cfa_ops < OBJ_WORK_BUDGET ? OBJ_WORK_BUDGET - r->st->cfa_ops : 0;

	return left < FDE_WORK_BUDGET ? left : FDE_WORK_BUDGET;
}

/* A program refused: its whole FDE is unsupported, err says why. */
static int refuse_fde(struct cfi_reader *r, const struct cfi_fde_ent *f, int err)
{
	if (err == -ENOMEM)
		return err;
	return cfi_reader__unsupported_row(r, f->lo, f->hi,
					   err == -E2BIG ? CFI_UNSUP_BUDGET : CFI_UNSUP_INSN);
}

/* Walk one FDE: its program runs once, every row comes out of that run. */
static int walk_fde(struct cfi_reader *r, const struct cfi_fde_ent *f)
{
	const struct cfi_cie_ent *c = &r->cies[f->cie];
	const struct cfi_section *s = &r->sec[f->src];
	struct cfi_interp *ip = &r->ip;
	bool plt = false, sig = false;
	struct cfi_memo_val mv;
	struct cfi_row_rule rr;
	uint64_t before = ip->ops, end;
	int64_t id;
	size_t i;
	int err;

	if (r->ip_cie != f->cie) {
		r->ip_cie = -1;
		err = cfi_interp__cie(ip, r->m, &c->prog, s->data->d_buf, s->addr, ops_left(r));
		r->st->cfa_ops += ip->ops - before;
		if (err)
			return refuse_fde(r, f, err);
		r->ip_cie = f->cie;
		before = ip->ops;
	}
	err = cfi_interp__fde(ip, f->lo, f->hi, f->insn, f->insn_end, ops_left(r));
	r->st->cfa_ops += ip->ops - before;
	if (err)
		return refuse_fde(r, f, err);
	for (i = 0; i < ip->nr_rows && !err; i++) {
		const struct cfi_row *row = &ip->rows[i];

		end = i + 1 < ip->nr_rows ? ip->rows[i + 1].lo : f->hi;
		if (row->bad) {
			err = cfi_reader__unsupported_row(r, row->lo, f->hi, row->bad);
			break;
		}
		r->st->cfi_rows++;
		sig |= c->signal;
		if (cfi_memo__get(&r->memo, f->cie, &row->st, &mv)) {
			r->st->outermost_rows += mv.outermost;
			r->st->topmost_rows += mv.topmost;
			err = flat_builder__row(&r->b, row->lo, mv.rule_id);
			continue;
		}
		cfi_rule__from_state(&row->st, c->signal, c->prog.ra_reg, r->m, &rr);
		if (!rr.why && row->st.ra_signed)
			rr.rule.flags |= SFBPF_RULE_MANGLED_RA;
		plt |= rr.plt;
		/* Unsupported and PLT rows depend on their range: translated each time. */
		if (rr.why || rr.plt) {
			err = cfi_reader__rule_rows(r, &rr, row->lo, end);
			continue;
		}
		id = flat_builder__rule(&r->b, &rr.rule);
		if (id < 0)
			return (int)id;
		mv = (struct cfi_memo_val){ .rule_id = (uint32_t)id,
					    .outermost = rr.rule.ra_loc == SFBPF_LOC_UNDEFINED,
					    .topmost = rr.rule.flags & SFBPF_RULE_TOPMOST_ONLY };
		cfi_memo__put(&r->memo, f->cie, &row->st, &mv);
		r->st->outermost_rows += mv.outermost;
		r->st->topmost_rows += mv.topmost;
		err = flat_builder__row(&r->b, row->lo, mv.rule_id);
	}
	r->st->plt_fdes += plt;
	r->st->signal_fdes += sig;
	return err;
}

/*
 * Whether [lo, hi) meets a wanted range. Asked in increasing lo order, so
 * the ranges that end before lo are never looked at again.
 */
static bool wanted(struct cfi_reader *r, uint64_t lo, uint64_t hi)
{
	if (!r->want)
		return true;
	while (r->next_want < r->nr_want && r->want[r->next_want].hi <= lo)
		r->next_want++;
	return r->next_want < r->nr_want && r->want[r->next_want].lo < hi;
}

/* Rows of every FDE in PC order, gap rows between them; overlaps are unsupported. */
static int emit_all(struct cfi_reader *r)
{
	uint32_t i, j, members;
	uint64_t end = 0, run_hi;
	int err = 0;

	for (i = 0; i < r->nr_fdes && !err; i = j) {
		const struct cfi_fde_ent *f = &r->fdes[i];

		j = i + 1;
		if (f->shadowed)
			continue;
		/* A run of FDEs (of one section: see shadow_debug_frame) overlapping each other. */
		run_hi = f->hi;
		for (members = 1; j < r->nr_fdes && r->fdes[j].lo < run_hi; j++) {
			if (r->fdes[j].shadowed)
				continue;
			members++;
			if (r->fdes[j].hi > run_hi)
				run_hi = r->fdes[j].hi;
		}
		if (!wanted(r, f->lo, run_hi)) {
			r->st->unwanted_fdes += members;
			continue; /* a gap, as if the FDEs were not there */
		}
		if (end && f->lo > end)
			err = flat_builder__row(&r->b, end, SFBPF_RULE_GAP_ID);
		if (err)
			break;
		r->st->code_bytes += run_hi - f->lo;
		if (members == 1) {
			r->st->fdes[f->src]++;
			err = r->libdw_rows ? cfi_libdw__walk_fde(r, f) : walk_fde(r, f);
		} else {
			err = cfi_reader__unsupported_row(r, f->lo, run_hi, CFI_UNSUP_OVERLAP);
		}
		end = run_hi;
	}
	if (!err && r->b.t->nr_rows)
		err = flat_builder__row(&r->b, end, SFBPF_RULE_GAP_ID);
	return err;
}

/* ---------------------------------------------------------------- setup */

/* Executable segments: FDEs outside them describe code that is not loaded. */
static void find_segments(struct cfi_reader *r)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(r->elf, &n))
		return;
	for (i = 0; i < n && r->nr_exec < MAX_EXEC_SEGMENTS; i++)
		if (gelf_getphdr(r->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X))
			r->exec[r->nr_exec++] =
				(struct cfi_exec_range){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz };
}

static int find_sections(struct cfi_reader *r)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(r->elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(r->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(r->elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (!strcmp(name, ".eh_frame")) {
			r->sec[CFI_SRC_EH_FRAME].data = elf_getdata(scn, NULL);
			r->sec[CFI_SRC_EH_FRAME].addr = sh.sh_addr;
		} else if (!strcmp(name, ".debug_frame")) {
			/* libdw may have decompressed it already; otherwise do it here. */
			if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
				continue;
			r->sec[CFI_SRC_DEBUG_FRAME].data = elf_getdata(scn, NULL);
			r->sec[CFI_SRC_DEBUG_FRAME].addr = 0;
		}
	}
	return 0;
}

/* Sections with bytes (the interpreter needs no libdw handle). */
static void keep_sections(struct cfi_reader *r)
{
	int src;

	for (src = 0; src < CFI_SRC__COUNT; src++)
		if (r->sec[src].data && !r->sec[src].data->d_buf)
			r->sec[src].data = NULL;
}

static int open_elf(struct cfi_reader *r, int fd)
{
	GElf_Ehdr eh;

	elf_version(EV_CURRENT);
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	r->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!r->elf || elf_kind(r->elf) != ELF_K_ELF || !gelf_getehdr(r->elf, &eh))
		return -EINVAL;
	memcpy(r->e_ident, eh.e_ident, EI_NIDENT);
	r->m = eh.e_machine == EM_X86_64  ? &cfi_x86_64 :
	       eh.e_machine == EM_AARCH64 ? &cfi_aarch64 :
					    NULL;
	if (!r->m || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOTSUP;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return -EINVAL; /* relocatable: FDE addresses are not final */
	find_segments(r);
	return find_sections(r);
}

static void reader_close(struct cfi_reader *r)
{
	cfi_libdw__close(r);
	if (r->elf)
		elf_end(r->elf);
	cfi_interp__free(&r->ip);
	free(r->fdes);
	free(r->cies);
}

/*
 * FDEs in cmp_fde order. The linker's order is nearly that already (a few
 * start-up functions out of place), which an insertion sort fixes in one
 * pass; past a few moves per FDE, qsort. Entries cmp_fde finds equal overlap
 * each other (one unsupported run): their order is moot.
 */
static void sort_fdes(struct cfi_reader *r)
{
	uint64_t moves = 0, budget = 4ull * r->nr_fdes + 64;
	struct cfi_fde_ent *f = r->fdes, v;
	uint32_t i, j;

	for (i = 1; i < r->nr_fdes; i++) {
		if (cmp_fde(&f[i - 1], &f[i]) <= 0)
			continue;
		v = f[i];
		for (j = i; j > 0 && cmp_fde(&f[j - 1], &v) > 0; j--)
			f[j] = f[j - 1];
		f[j] = v;
		moves += i - j;
		if (moves > budget) {
			qsort(r->fdes, r->nr_fdes, sizeof(*r->fdes), cmp_fde);
			return;
		}
	}
}

/* An object's FDEs, read and ordered once, to be walked for any ranges (cfi.h). */
struct cfi_index {
	struct cfi_reader r;
	struct cfi_stats collected; /* what reading the FDEs counted */
};

int cfi_index__open(int fd, struct cfi_index **out)
{
	struct cfi_index *ix = calloc(1, sizeof(*ix));
	struct cfi_reader *r;
	int err, src;

	*out = NULL;
	if (!ix)
		return -ENOMEM;
	r = &ix->r;
	r->st = &ix->collected;
	err = open_elf(r, fd);
	if (err)
		goto fail;
	r->libdw_rows = cfi__libdw_rows();
	if (r->libdw_rows)
		cfi_libdw__open(r);
	else
		keep_sections(r);
	for (src = 0; src < CFI_SRC__COUNT && !err; src++)
		if (r->sec[src].data)
			err = collect_fdes(r, src);
	if (!err && !r->nr_fdes)
		err = -ENOENT;
	if (err)
		goto fail;
	sort_fdes(r);
	shadow_debug_frame(r);
	*out = ix;
	return 0;
fail:
	cfi_index__free(ix);
	return err;
}

bool cfi_index__fde_at(const struct cfi_index *ix, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	const struct cfi_reader *r = &ix->r;
	size_t i = SEARCH_UPTO(r->fdes, r->nr_fdes, lo, pc), k;

	/* Sorted by start: the one starting last at or below pc, else one just
	 * before it (the other section's FDE at the same start). */
	for (k = 0; i > 0 && k < 4; i--, k++) {
		const struct cfi_fde_ent *f = &r->fdes[i - 1];

		if (pc >= f->lo && pc < f->hi) {
			*lo = f->lo;
			*hi = f->hi;
			return true;
		}
	}
	return false;
}

void cfi_index__free(struct cfi_index *ix)
{
	if (!ix)
		return;
	reader_close(&ix->r);
	free(ix);
}

int cfi_index__flatten(struct cfi_index *ix, const struct cfi_range *want, uint32_t nr_want,
		       struct flat_table **out, struct cfi_stats *stats)
{
	struct cfi_reader *r = &ix->r;
	struct cfi_stats dummy;
	int err;

	*out = NULL;
	r->st = stats ? stats : &dummy;
	*r->st = ix->collected;
	r->want = want;
	r->nr_want = nr_want;
	r->next_want = 0;
	r->unsup_id = -1;
	r->ip_cie = -1;
	cfi_memo__clear(&r->memo);
	err = flat_builder__init(&r->b);
	if (err)
		return err;
	err = emit_all(r);
	r->b.t->nr_fdes = r->st->fdes[CFI_SRC_EH_FRAME] + r->st->fdes[CFI_SRC_DEBUG_FRAME];
	r->b.t->nr_fres = r->st->cfi_rows;
	r->b.t->nr_skipped_fdes = r->st->skipped_fdes + r->st->shadowed_fdes;
	if (err)
		flat_builder__abort(&r->b);
	else
		err = flat_builder__finish(&r->b, out);
	if (!err) {
		r->st->rows = (*out)->nr_rows;
		r->st->rules = (*out)->nr_rules;
	}
	return err;
}

int cfi__flatten_fd_ranges(int fd, const struct cfi_range *want, uint32_t nr_want,
			   struct flat_table **out, struct cfi_stats *stats)
{
	struct cfi_index *ix;
	int err;

	*out = NULL;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	err = cfi_index__open(fd, &ix);
	if (!err)
		err = cfi_index__flatten(ix, want, nr_want, out, stats);
	cfi_index__free(ix);
	return err;
}

int cfi__flatten_fd(int fd, struct flat_table **out, struct cfi_stats *stats)
{
	return cfi__flatten_fd_ranges(fd, NULL, 0, out, stats);
}

int cfi__flatten_path(const char *path, struct flat_table **out, struct cfi_stats *stats)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	*out = NULL;
	if (fd < 0)
		return -errno;
	err = cfi__flatten_fd(fd, out, stats);
	close(fd);
	return err;
}
