// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DWARF CFI → flat table (see cfi.h). libdw executes the CFA programs; this
 * file only enumerates the FDEs (dwarf_next_cfi gives raw entries, so their
 * address ranges are decoded here from the CIE's pointer encoding), orders
 * them, resolves overlaps, and walks each FDE one CFI row at a time.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tables/cfi.h"
#include "tables/flatbuild.h"

#define MAX_PLT_ROWS (1u << 16) /* expansion bound for one PLT-shaped row */
#define MAX_EXEC_SEGMENTS 16
/*
 * libdw sizes a frame state by the highest register a program names and
 * copies it for every DW_CFA_remember_state: programs beyond these limits
 * are not handed to it (x86-64 DWARF registers end at 125, k7).
 */
#define MAX_CFA_REGNUM 127
#define MAX_CFA_DEPTH 64
/*
 * libdw re-runs the CIE's and the FDE's program for every row it is asked
 * about: walking an FDE costs rows * instructions. Bounds per FDE and per
 * object, in instructions evaluated (about 5 ns each; libc needs 1M, libLLVM 40M).
 */
#define FDE_WORK_BUDGET (32ull << 20)
#define OBJ_WORK_BUDGET (256ull << 20)

struct cfi_section {
	Elf_Data *data; /* NULL: the object has no such section */
	uint64_t addr; /* sh_addr */
	Dwarf_CFI *cfi; /* libdw's handle on the same section */
};

/* One FDE's range, in the order the table is built. */
struct fde_ent {
	uint64_t lo, hi;
	uint32_t ops; /* CFA instructions of its CIE and its own, 0 if not accepted */
	uint8_t src; /* enum cfi_source */
	bool shadowed; /* a .debug_frame FDE an .eh_frame FDE overlaps */
	uint32_t off; /* the FDE's offset in its section (AArch64: RA signing) */
};

/* What an FDE needs from its CIE. */
struct cie_info {
	Dwarf_Off off;
	bool valid;
	uint8_t fde_enc; /* DW_EH_PE_* of initial_location / address_range */
	bool zaug; /* 'z' augmentation: FDEs carry an augmentation length */
	uint64_t code_align; /* code alignment factor */
	const uint8_t *insn, *insn_end; /* initial instructions */
};

struct exec_range {
	uint64_t lo, hi;
};

struct reader {
	Elf *elf;
	Dwarf *dwarf; /* only for .debug_frame */
	const struct cfi_machine *m; /* x86-64 or AArch64 */
	unsigned char e_ident[EI_NIDENT];
	struct cfi_section sec[CFI_SRC__COUNT];
	struct exec_range exec[MAX_EXEC_SEGMENTS]; /* executable PT_LOADs */
	uint32_t nr_exec;
	struct fde_ent *fdes;
	uint32_t nr_fdes, cap_fdes;
	struct cie_info cie; /* last CIE parsed: FDEs share few CIEs, in runs */
	struct flat_builder b;
	int64_t unsup_id; /* local id of the unsupported rule, -1 until used */
	struct cfi_stats *st;
};

const char *cfi_source__name(enum cfi_source src)
{
	return src == CFI_SRC_EH_FRAME	  ? ".eh_frame" :
	       src == CFI_SRC_DEBUG_FRAME ? ".debug_frame" :
					    "?";
}

/* ---------------------------------------------------------------- encoded pointers */

/*
 * LEB128: 7 bits a byte, low first; a signed one extends its last byte's
 * bit 6. More than 64 bits, or running past end, is an error.
 */
static int read_leb(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *v)
{
	unsigned shift = 0;
	uint8_t byte;

	*v = 0;
	do {
		if (*p >= end || shift > 63)
			return -EINVAL;
		byte = *(*p)++;
		*v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	if (sign && shift < 64 && (byte & 0x40))
		*v |= ~0ull << shift;
	return 0;
}

static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	return read_leb(p, end, false, v);
}

static int read_sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t u;
	int err = read_leb(p, end, true, &u);

	*v = (int64_t)u;
	return err;
}

/* Little-endian fixed-size read (x86-64, AArch64), sign-extended if asked. */
static int read_fixed(const uint8_t **p, const uint8_t *end, unsigned size, bool sign, uint64_t *v)
{
	uint64_t u = 0;
	unsigned i;

	if ((size_t)(end - *p) < size)
		return -EINVAL;
	for (i = 0; i < size; i++)
		u |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && size < 8 && (u >> (8 * size - 1)) & 1)
		u |= ~0ull << (8 * size);
	*p += size;
	*v = u;
	return 0;
}

/*
 * An encoded pointer at *p (vaddr: its address, for pcrel). Only the
 * applications FDE ranges use in linked x86-64 objects (absolute, pcrel).
 */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t vaddr,
			bool apply, uint64_t *v)
{
	int64_t s = 0;
	int err;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return -EINVAL;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		err = read_fixed(p, end, 8, false, v);
		break;
	case DW_EH_PE_uleb128:
		err = read_uleb(p, end, v);
		break;
	case DW_EH_PE_sleb128:
		err = read_sleb(p, end, &s);
		*v = (uint64_t)s;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		err = read_fixed(p, end, 2, enc & DW_EH_PE_signed, v);
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		err = read_fixed(p, end, 4, enc & DW_EH_PE_signed, v);
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		err = read_fixed(p, end, 8, false, v);
		break;
	default:
		return -EINVAL;
	}
	if (err || !apply)
		return err;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		return 0;
	case DW_EH_PE_pcrel:
		*v += vaddr;
		return 0;
	default: /* textrel, datarel, funcrel, aligned: not in linked x86-64 CFI */
		return -EINVAL;
	}
}

/* ---------------------------------------------------------------- FDE enumeration */

/* The FDE pointer encoding of the CIE at off ('z' augmentations; else absolute). */
static int parse_cie(struct reader *r, enum cfi_source src, Dwarf_Off off)
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
	r->cie = (struct cie_info){ .off = off, .fde_enc = DW_EH_PE_absptr };
	if (dwarf_next_cfi(r->e_ident, s->data, src == CFI_SRC_EH_FRAME, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e))
		return -EINVAL;
	a = e.cie.augmentation;
	if (a[0] && a[0] != 'z')
		return -EINVAL; /* pre-'z' GNU augmentations: not emitted for decades */
	r->cie.zaug = a[0] == 'z';
	r->cie.code_align = e.cie.code_alignment_factor;
	r->cie.insn = e.cie.initial_instructions;
	r->cie.insn_end = e.cie.initial_instructions_end;
	p = e.cie.augmentation_data;
	end = p + e.cie.augmentation_data_size;
	for (a = a[0] ? a + 1 : a; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return -EINVAL;
			r->cie.fde_enc = *p++;
			break;
		case 'L':
			if (p++ >= end)
				return -EINVAL;
			break;
		case 'P':
			if (p >= end)
				return -EINVAL;
			enc = *p++;
			if (read_encoded(&p, end, enc & ~DW_EH_PE_indirect, 0, false, &skip))
				return -EINVAL;
			break;
		case 'S': /* signal frame: libdw reports it through dwarf_frame_info */
		case 'B': /* AArch64 B key, MTE tagged frames: no data */
		case 'G':
			break;
		default:
			goto done; /* unknown: the 'z' size still lets libdw skip the rest */
		}
	}
done:
	r->cie.valid = true;
	return 0;
}

static bool in_exec_segment(const struct reader *r, uint64_t lo, uint64_t hi)
{
	uint32_t i;

	for (i = 0; i < r->nr_exec; i++)
		if (lo >= r->exec[i].lo && hi <= r->exec[i].hi)
			return true;
	return false;
}

static int push_fde(struct reader *r, uint64_t lo, uint64_t hi, enum cfi_source src, uint32_t ops)
{
	struct fde_ent *n;
	uint32_t ncap;

	if (r->nr_fdes == r->cap_fdes) {
		ncap = r->cap_fdes ? r->cap_fdes * 2 : 256;
		n = realloc(r->fdes, (size_t)ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->fdes = n;
		r->cap_fdes = ncap;
	}
	r->fdes[r->nr_fdes++] = (struct fde_ent){ .lo = lo, .hi = hi, .ops = ops, .src = src };
	return 0;
}

/* Range of one FDE and where its instructions start; false if it cannot be decoded. */
static bool fde_range(struct reader *r, enum cfi_source src, const Dwarf_FDE *f, uint64_t *lo,
		      uint64_t *hi, const uint8_t **insn)
{
	const struct cfi_section *s = &r->sec[src];
	const uint8_t *p = f->start, *base = s->data->d_buf;
	uint64_t range, alen;

	if (parse_cie(r, src, f->CIE_pointer))
		return false;
	if (read_encoded(&p, f->end, r->cie.fde_enc, s->addr + (uint64_t)(p - base), true, lo) ||
	    read_encoded(&p, f->end, r->cie.fde_enc & 0x0f, 0, false, &range))
		return false;
	if (r->cie.zaug) {
		if (read_uleb(&p, f->end, &alen) || alen > (uint64_t)(f->end - p))
			return false;
		p += alen;
	}
	*insn = p;
	*hi = *lo + range;
	return *hi >= *lo;
}

struct cfa_scan {
	uint64_t ops;
	uint32_t depth; /* DW_CFA_remember_state nesting */
	bool aarch64; /* DW_CFA_AARCH64_negate_ra_state is known */
	/*
	 * With track: the RA signing state (negate_ra_state toggles it,
	 * remember/restore_state save it) from loc on, up to the row at pc.
	 */
	bool track, ra_signed, reached;
	uint64_t loc, pc, code_align, saved; /* saved: a bit per remembered state */
};

/* Moves s's location by delta code units; true once past the row wanted. */
static bool cfa_advance(struct cfa_scan *s, uint64_t delta)
{
	s->loc += delta * s->code_align;
	s->reached = s->track && s->loc > s->pc;
	return s->reached;
}

static bool cfa_reg_ok(const uint8_t **p, const uint8_t *end)
{
	uint64_t reg;

	return !read_uleb(p, end, &reg) && reg <= MAX_CFA_REGNUM;
}

static bool cfa_skip_uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v;

	return !read_uleb(p, end, &v);
}

static bool cfa_skip_sleb(const uint8_t **p, const uint8_t *end)
{
	int64_t v;

	return !read_sleb(p, end, &v);
}

static bool cfa_skip_block(const uint8_t **p, const uint8_t *end)
{
	uint64_t len;

	if (read_uleb(p, end, &len) || len > (uint64_t)(end - *p))
		return false;
	*p += len;
	return true;
}

/*
 * Check a DW_CFA program before libdw runs it: every opcode known, every
 * operand inside [p, end), every register at most MAX_CFA_REGNUM, and the
 * remember_state nesting bounded. Counts the instructions in s->ops.
 */
static bool cfa_scan(const uint8_t *p, const uint8_t *end, uint8_t fde_enc, struct cfa_scan *s)
{
	uint64_t v;
	uint8_t op;
	bool ok;

	while (p < end) {
		op = *p++;
		s->ops++;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			if (cfa_advance(s, op & 0x3f))
				return true;
			continue;
		case DW_CFA_offset:
			if ((op & 0x3f) > MAX_CFA_REGNUM || !cfa_skip_uleb(&p, end))
				return false;
			continue;
		case DW_CFA_restore:
			if ((op & 0x3f) > MAX_CFA_REGNUM)
				return false;
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			ok = true;
			break;
		case DW_CFA_set_loc: /* (not emitted by gcc or clang: tracking stops) */
			ok = !read_encoded(&p, end, fde_enc & 0x0f, 0, false, &v);
			s->reached = s->track;
			break;
		case DW_CFA_advance_loc1:
			ok = !read_fixed(&p, end, 1, false, &v);
			break;
		case DW_CFA_advance_loc2:
			ok = !read_fixed(&p, end, 2, false, &v);
			break;
		case DW_CFA_advance_loc4:
			ok = !read_fixed(&p, end, 4, false, &v);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_def_cfa:
		case DW_CFA_val_offset:
		case DW_CFA_GNU_negative_offset_extended:
			ok = cfa_reg_ok(&p, end) && cfa_skip_uleb(&p, end);
			break;
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset_sf:
			ok = cfa_reg_ok(&p, end) && cfa_skip_sleb(&p, end);
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			ok = cfa_reg_ok(&p, end);
			break;
		case DW_CFA_register:
			ok = cfa_reg_ok(&p, end) && cfa_reg_ok(&p, end);
			break;
		case DW_CFA_remember_state:
			ok = ++s->depth <= MAX_CFA_DEPTH;
			s->saved = s->saved << 1 | s->ra_signed;
			break;
		case DW_CFA_restore_state:
			ok = s->depth > 0;
			s->depth -= ok;
			s->ra_signed = s->saved & 1;
			s->saved >>= 1;
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_GNU_args_size:
			ok = cfa_skip_uleb(&p, end);
			break;
		case DW_CFA_def_cfa_offset_sf:
			ok = cfa_skip_sleb(&p, end);
			break;
		case DW_CFA_def_cfa_expression:
			ok = cfa_skip_block(&p, end);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			ok = cfa_reg_ok(&p, end) && cfa_skip_block(&p, end);
			break;
		case DW_CFA_AARCH64_negate_ra_state:
			/* RA signed or not: libdw ignores it; the unwinder strips any RA. */
			ok = s->aarch64;
			s->ra_signed = !s->ra_signed;
			break;
		default: /* vendor extensions; DW_CFA_GNU_window_save is SPARC's */
			ok = false;
			break;
		}
		if (!ok)
			return false;
		if (s->reached)
			return true;
		if (op >= DW_CFA_advance_loc1 && op <= DW_CFA_advance_loc4 && cfa_advance(s, v))
			return true;
	}
	return true;
}

/* Instructions libdw runs per row of this FDE, 0 if it must not run them. */
static uint32_t fde_ops(const struct reader *r, const uint8_t *insn, const uint8_t *end)
{
	struct cfa_scan s = { .aarch64 = r->m == &cfi_aarch64 };

	if (!r->cie.insn || r->cie.insn > r->cie.insn_end || insn > end ||
	    !cfa_scan(r->cie.insn, r->cie.insn_end, r->cie.fde_enc, &s) ||
	    !cfa_scan(insn, end, r->cie.fde_enc, &s))
		return 0;
	return s.ops + 1 < UINT32_MAX ? (uint32_t)s.ops + 1 : UINT32_MAX;
}

static int collect_fdes(struct reader *r, enum cfi_source src)
{
	const struct cfi_section *s = &r->sec[src];
	Dwarf_Off off = 0, next, here;
	Dwarf_CFI_Entry e;
	const uint8_t *insn;
	uint64_t lo, hi;
	int ret, err;

	r->cie.valid = false;
	while (off < s->data->d_size) {
		ret = dwarf_next_cfi(r->e_ident, s->data, src == CFI_SRC_EH_FRAME, off, &next, &e);
		if (ret != 0)
			break; /* end, a zero terminator, or garbage: keep what was read */
		here = off;
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
		err = push_fde(r, lo, hi, src, fde_ops(r, insn, e.fde.end));
		if (!err)
			r->fdes[r->nr_fdes - 1].off = (uint32_t)here;
		if (err)
			return err;
	}
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_ent *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* .eh_frame wins where the two sections describe the same code. */
static void shadow_debug_frame(struct reader *r)
{
	uint64_t eh_hi = 0, eh_lo = UINT64_MAX;
	int64_t i;

	for (i = 0; i < r->nr_fdes; i++) {
		struct fde_ent *f = &r->fdes[i];

		if (f->src == CFI_SRC_EH_FRAME)
			eh_hi = f->hi > eh_hi ? f->hi : eh_hi;
		else if (f->lo < eh_hi)
			f->shadowed = true;
	}
	for (i = (int64_t)r->nr_fdes - 1; i >= 0; i--) {
		struct fde_ent *f = &r->fdes[i];

		if (f->src == CFI_SRC_EH_FRAME)
			eh_lo = f->lo;
		else if (f->hi > eh_lo)
			f->shadowed = true;
	}
	for (i = 0; i < r->nr_fdes; i++)
		r->st->shadowed_fdes += r->fdes[i].shadowed;
}

/* ---------------------------------------------------------------- rows */

static int unsupported_row(struct reader *r, uint64_t pc, uint64_t end, enum cfi_unsupported why)
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
static int plt_rows(struct reader *r, const struct cfi_row_rule *rr, uint64_t pc, uint64_t end)
{
	uint64_t period = (uint64_t)rr->plt_cfa.mask + 1, blk, a, b;
	int64_t lo_id, hi_id;
	int err = 0;

	if ((end - pc) / period * 2 > MAX_PLT_ROWS)
		return unsupported_row(r, pc, end, CFI_UNSUP_CFA_EXPR);
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

static int rule_rows(struct reader *r, const struct cfi_row_rule *rr, uint64_t pc, uint64_t end)
{
	int64_t id;

	if (rr->why)
		return unsupported_row(r, pc, end, rr->why);
	if (rr->rule.ra_loc == SFBPF_LOC_UNDEFINED)
		r->st->outermost_rows++;
	if (rr->rule.flags & SFBPF_RULE_TOPMOST_ONLY)
		r->st->topmost_rows++;
	if (rr->plt)
		return plt_rows(r, rr, pc, end);
	id = flat_builder__rule(&r->b, &rr->rule);
	return id < 0 ? (int)id : flat_builder__row(&r->b, pc, (uint32_t)id);
}

/*
 * AArch64: whether the RA is signed in f's row at pc, which libdw does not
 * track (it ignores DW_CFA_AARCH64_negate_ra_state): f's programs re-read
 * from its entry, up to that row.
 */
static bool ra_signed(struct reader *r, const struct fde_ent *f, uint64_t pc)
{
	const struct cfi_section *sec = &r->sec[f->src];
	struct cfa_scan s = { .aarch64 = true, .track = true, .loc = f->lo, .pc = pc };
	const uint8_t *insn;
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	uint64_t lo, hi;

	if (dwarf_next_cfi(r->e_ident, sec->data, f->src == CFI_SRC_EH_FRAME, f->off, &next, &e) ||
	    dwarf_cfi_cie_p(&e) || !fde_range(r, f->src, &e.fde, &lo, &hi, &insn))
		return false;
	s.code_align = r->cie.code_align;
	if (!cfa_scan(r->cie.insn, r->cie.insn_end, r->cie.fde_enc, &s) ||
	    (!s.reached && !cfa_scan(insn, e.fde.end, r->cie.fde_enc, &s)))
		return false;
	return s.ra_signed;
}

/* Walk one FDE: libdw evaluates the row at pc and says where it ends. */
static int walk_fde(struct reader *r, const struct fde_ent *f)
{
	Dwarf_CFI *cfi = r->sec[f->src].cfi;
	bool signal = false, plt = false, sig = false;
	struct cfi_row_rule rr;
	Dwarf_Addr start, end;
	Dwarf_Frame *frame;
	uint64_t pc = f->lo, work = 0;
	int ra_reg, err = 0;

	if (!f->ops)
		return unsupported_row(r, pc, f->hi, CFI_UNSUP_INSN);
	while (pc < f->hi && !err) {
		/* Each row re-runs the programs: bound the FDE's and the object's total. */
		work += f->ops;
		r->st->cfa_ops += f->ops;
		if (work > FDE_WORK_BUDGET || r->st->cfa_ops > OBJ_WORK_BUDGET)
			return unsupported_row(r, pc, f->hi, CFI_UNSUP_BUDGET);
		frame = NULL;
		if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0)
			return unsupported_row(r, pc, f->hi, CFI_UNSUP_LIBDW);
		ra_reg = dwarf_frame_info(frame, &start, &end, &signal);
		/* Another FDE answered (libdw's lookup disagrees with ours): do not guess. */
		if (ra_reg < 0 || start > pc || end <= pc || end > f->hi) {
			free(frame);
			return unsupported_row(r, pc, f->hi, CFI_UNSUP_LIBDW);
		}
		cfi_rule__from_frame(frame, signal, ra_reg, r->m, &rr);
		free(frame);
		if (r->m == &cfi_aarch64 && !rr.why && ra_signed(r, f, pc))
			rr.rule.flags |= SFBPF_RULE_MANGLED_RA;
		r->st->cfi_rows++;
		plt |= rr.plt;
		sig |= signal;
		err = rule_rows(r, &rr, pc, end);
		pc = end;
	}
	r->st->plt_fdes += plt;
	r->st->signal_fdes += sig;
	return err;
}

/* Rows of every FDE in PC order, gap rows between them; overlaps are unsupported. */
static int emit_all(struct reader *r)
{
	uint32_t i, j, members;
	uint64_t end = 0, run_hi;
	int err = 0;

	for (i = 0; i < r->nr_fdes && !err; i = j) {
		const struct fde_ent *f = &r->fdes[i];

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
		if (end && f->lo > end)
			err = flat_builder__row(&r->b, end, SFBPF_RULE_GAP_ID);
		if (err)
			break;
		r->st->code_bytes += run_hi - f->lo;
		if (members == 1) {
			r->st->fdes[f->src]++;
			err = walk_fde(r, f);
		} else {
			err = unsupported_row(r, f->lo, run_hi, CFI_UNSUP_OVERLAP);
		}
		end = run_hi;
	}
	if (!err && r->b.t->nr_rows)
		err = flat_builder__row(&r->b, end, SFBPF_RULE_GAP_ID);
	return err;
}

/* ---------------------------------------------------------------- setup */

/* Executable segments: FDEs outside them describe code that is not loaded. */
static void find_segments(struct reader *r)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(r->elf, &n))
		return;
	for (i = 0; i < n && r->nr_exec < MAX_EXEC_SEGMENTS; i++)
		if (gelf_getphdr(r->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X))
			r->exec[r->nr_exec++] =
				(struct exec_range){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz };
}

static int find_sections(struct reader *r)
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

/* libdw handles for the sections found; a section libdw refuses is dropped. */
static void open_cfi(struct reader *r)
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

static int open_elf(struct reader *r, int fd)
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

static void reader_close(struct reader *r)
{
	if (r->sec[CFI_SRC_EH_FRAME].cfi)
		dwarf_cfi_end(r->sec[CFI_SRC_EH_FRAME].cfi);
	if (r->dwarf)
		dwarf_end(r->dwarf); /* owns the .debug_frame handle */
	if (r->elf)
		elf_end(r->elf);
	free(r->fdes);
}

int cfi__flatten_fd(int fd, struct flat_table **out, struct cfi_stats *stats)
{
	struct reader r = { .unsup_id = -1 };
	struct cfi_stats dummy;
	int err, src;

	*out = NULL;
	r.st = stats ? stats : &dummy;
	memset(r.st, 0, sizeof(*r.st));
	err = open_elf(&r, fd);
	if (err)
		goto cleanup;
	open_cfi(&r);
	for (src = 0; src < CFI_SRC__COUNT && !err; src++)
		if (r.sec[src].data)
			err = collect_fdes(&r, src);
	if (!err && !r.nr_fdes)
		err = -ENOENT;
	if (err)
		goto cleanup;
	qsort(r.fdes, r.nr_fdes, sizeof(*r.fdes), cmp_fde);
	shadow_debug_frame(&r);
	err = flat_builder__init(&r.b);
	if (err)
		goto cleanup;
	err = emit_all(&r);
	r.b.t->nr_fdes = r.st->fdes[CFI_SRC_EH_FRAME] + r.st->fdes[CFI_SRC_DEBUG_FRAME];
	r.b.t->nr_fres = r.st->cfi_rows;
	r.b.t->nr_skipped_fdes = r.st->skipped_fdes + r.st->shadowed_fdes;
	if (err)
		flat_builder__abort(&r.b);
	else
		err = flat_builder__finish(&r.b, out);
	if (!err) {
		r.st->rows = (*out)->nr_rows;
		r.st->rules = (*out)->nr_rules;
	}
cleanup:
	reader_close(&r);
	return err;
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
