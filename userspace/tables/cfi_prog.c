// SPDX-License-Identifier: GPL-2.0-or-later
/* Reading DWARF CFI bytes (see cfi_prog.h). */
#include <dwarf.h>
#include <stddef.h>

#include "tables/cfi_prog.h"

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

int cfi_prog__read_fixed(const uint8_t **p, const uint8_t *end, unsigned size, uint64_t *v)
{
	return read_fixed(p, end, size, false, v);
}

int cfi_prog__read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, uint64_t vaddr,
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
		err = cfi_prog__read_uleb(p, end, v);
		break;
	case DW_EH_PE_sleb128:
		err = cfi_prog__read_sleb(p, end, &s);
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

static bool cfa_reg_ok(const uint8_t **p, const uint8_t *end)
{
	uint64_t reg;

	return !cfi_prog__read_uleb(p, end, &reg) && reg <= MAX_CFA_REGNUM;
}

static bool cfa_skip_uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v;

	return !cfi_prog__read_uleb(p, end, &v);
}

static bool cfa_skip_sleb(const uint8_t **p, const uint8_t *end)
{
	int64_t v;

	return !cfi_prog__read_sleb(p, end, &v);
}

static bool cfa_skip_block(const uint8_t **p, const uint8_t *end)
{
	uint64_t len;

	if (cfi_prog__read_uleb(p, end, &len) || len > (uint64_t)(end - *p))
		return false;
	*p += len;
	return true;
}

/* Moves s's location by delta code units; true once past the row wanted. */
static bool cfa_advance(struct cfi_prog_scan *s, uint64_t delta)
{
	s->loc += delta * s->code_align;
	s->reached = s->track && s->loc > s->pc;
	return s->reached;
}

bool cfi_prog__scan(const uint8_t *p, const uint8_t *end, uint8_t fde_enc, struct cfi_prog_scan *s)
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
			ok = !cfi_prog__read_encoded(&p, end, fde_enc & 0x0f, 0, false, &v);
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
