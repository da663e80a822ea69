// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SFrame FREs (see sframe_int.h): the start address and info byte, the data
 * words, and what they mean per ABI and FDE type — the CFA, RA and FP rules
 * of struct sframe_fre. Written from the SFrame specification, versions 1
 * to 3, and ../shared/spec/NOTES.md.
 */
#include <errno.h>
#include <string.h>

#include "sframe/sframe_int.h"

static int32_t read_dataword(const struct sframe_decoder *d, size_t off, unsigned size, uint32_t *u)
{
	switch (size) {
	case 1:
		*u = rd8(d, off);
		return (int8_t)*u;
	case 2:
		*u = rd16(d, off);
		return (int16_t)*u;
	default:
		*u = rd32(d, off);
		return (int32_t)*u;
	}
}

static int fre_overrun(const struct sframe_decoder *d, const struct sframe_fde *f, size_t off,
		       size_t need, struct sframe_error *err)
{
	if (off + need <= d->size)
		return sframe__set_err(err, SFRAME_ERR_FRE_LEN, off,
				       "FDE %u: FRE at 0x%zx runs past sfh_fre_len (%u)", f->index,
				       off, d->hdr.fre_len);
	return sframe__set_err(err, SFRAME_ERR_FRE_TRUNCATED, off,
			       "FDE %u: FRE at 0x%zx runs past the FRE sub-section", f->index, off);
}

int sframe_fre__read(const struct sframe_decoder *d, const struct sframe_fde *f, size_t off,
		     struct sframe_fre *fre, struct sframe_error *err)
{
	size_t end = d->fre_base + d->hdr.fre_len;
	unsigned asz = sframe_fre__addr_size(f->fre_type), size_code, i;

	if (off + asz + 1 > end)
		return fre_overrun(d, f, off, asz + 1, err);
	fre->start_off = asz == 1 ? rd8(d, off) : asz == 2 ? rd16(d, off) : rd32(d, off);
	fre->info = rd8(d, off + asz);
	fre->cfa_base_reg_id = fre->info & 0x1;
	fre->dataword_count = (fre->info >> 1) & 0xf;
	size_code = (fre->info >> 5) & 0x3;
	fre->mangled_ra = (fre->info >> 7) & 0x1;
	if (size_code > SFRAME_FRE_DATAWORD_4B)
		return sframe__set_err(err, SFRAME_ERR_DATAWORD_SIZE, off + asz,
				       "FDE %u: FRE data-word size code 3 invalid", f->index);
	fre->dataword_size = 1u << size_code;
	if (fre->dataword_count > sframe_fre__max_datawords(d, f))
		return sframe__set_err(err, SFRAME_ERR_DATAWORD_COUNT, off + asz,
				       "FDE %u: %u data words, at most %u allowed", f->index,
				       fre->dataword_count, sframe_fre__max_datawords(d, f));
	if (off + asz + 1 + (size_t)fre->dataword_count * fre->dataword_size > end)
		return fre_overrun(d, f, off, asz + 1 + fre->dataword_count * fre->dataword_size,
				   err);
	for (i = 0; i < fre->dataword_count; i++)
		fre->data[i] = read_dataword(d, off + asz + 1 + i * fre->dataword_size,
					     fre->dataword_size, &fre->udata[i]);
	return asz + 1 + fre->dataword_count * fre->dataword_size;
}

/* 64-bit: a 4-byte s390x data word scaled by 8 does not fit 32 bits. */
static int64_t cfa_offset(const struct sframe_decoder *d, int32_t raw)
{
	if (d->hdr.abi_arch == SFRAME_ABI_S390X_ENDIAN_BIG)
		return (int64_t)raw * SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR +
		       SFRAME_S390X_CFA_OFFSET_ADJUSTMENT;
	return raw;
}

static void rule_reg(const struct sframe_decoder *d, struct sframe_rule *r, unsigned regnum)
{
	r->regnum = regnum;
	if ((int)regnum == sframe_abi__sp_regnum(d->hdr.abi_arch))
		r->base = SFRAME_BASE_SP;
	else if ((int)regnum == sframe_abi__fp_regnum(d->hdr.abi_arch))
		r->base = SFRAME_BASE_FP;
	else
		r->base = SFRAME_BASE_REG;
}

static void rule_cfa_slot(struct sframe_rule *r, int64_t off)
{
	r->kind = SFRAME_RULE_OFFSET;
	r->base = SFRAME_BASE_CFA;
	r->deref = true;
	r->offset = off;
}

/*
 * A saved FP or RA in a default FDE: a CFA-relative stack slot, or on s390x
 * V2 an odd value that encodes the DWARF register holding it.
 */
static void rule_default_slot(const struct sframe_decoder *d, struct sframe_rule *r, int32_t v)
{
	if (d->hdr.abi_arch == SFRAME_ABI_S390X_ENDIAN_BIG && d->hdr.version == SFRAME_VERSION_2 &&
	    (v & 1)) {
		r->kind = SFRAME_RULE_OFFSET;
		rule_reg(d, r, (uint32_t)v >> 1);
		r->deref = false;
		r->offset = 0;
		return;
	}
	rule_cfa_slot(r, v);
}

static void rules_default(const struct sframe_decoder *d, struct sframe_fre *fre)
{
	const struct sframe_header *h = &d->hdr;
	unsigned n = fre->dataword_count, fp_idx = 2;

	fre->cfa.kind = SFRAME_RULE_OFFSET;
	rule_reg(d, &fre->cfa,
		 fre->cfa_base_reg_id ? sframe_abi__sp_regnum(h->abi_arch) :
					sframe_abi__fp_regnum(h->abi_arch));
	fre->cfa.offset = cfa_offset(d, fre->data[0]);
	if (h->cfa_fixed_ra_offset) {
		rule_cfa_slot(&fre->ra, h->cfa_fixed_ra_offset);
		fp_idx = 1;
	} else if (n > 1 && fre->data[1] != 0) {
		rule_default_slot(d, &fre->ra, fre->data[1]);
	} /* else RA unchanged: still in its register (topmost frame) */
	if (n > fp_idx)
		rule_default_slot(d, &fre->fp, fre->data[fp_idx]);
	else if (h->cfa_fixed_fp_offset)
		rule_cfa_slot(&fre->fp, h->cfa_fixed_fp_offset);
}

/* One flexible-FDE (control word, offset) pair. */
static void rule_flex(const struct sframe_decoder *d, struct sframe_rule *r, uint32_t ctrl,
		      int64_t off)
{
	r->kind = SFRAME_RULE_OFFSET;
	r->deref = (ctrl >> 1) & 1;
	r->offset = off;
	if (ctrl & 1)
		rule_reg(d, r, ctrl >> 3);
	else
		r->base = SFRAME_BASE_CFA;
}

static int rules_flex(const struct sframe_decoder *d, const struct sframe_fde *f,
		      struct sframe_fre *fre, size_t off, struct sframe_error *err)
{
	const struct sframe_header *h = &d->hdr;
	unsigned n = fre->dataword_count, fp_idx = 2;

	if (n < 2 || !(fre->udata[0] & 1))
		return sframe__set_err(err, SFRAME_ERR_FLEX_RULE, off,
				       "FDE %u: flexible FRE without a register-based CFA rule",
				       f->index);
	rule_flex(d, &fre->cfa, fre->udata[0], cfa_offset(d, fre->data[1]));
	if (n > 2 && fre->udata[2] != 0) {
		if (n < 4)
			return sframe__set_err(err, SFRAME_ERR_FLEX_RULE, off,
					       "FDE %u: flexible FRE RA rule lacks its offset",
					       f->index);
		rule_flex(d, &fre->ra, fre->udata[2], fre->data[3]);
		fp_idx = 4;
	} else {
		if (h->cfa_fixed_ra_offset)
			rule_cfa_slot(&fre->ra, h->cfa_fixed_ra_offset);
		fp_idx = 3; /* past the single padding word, if any */
	}
	if (n > fp_idx) {
		if (n < fp_idx + 2)
			return sframe__set_err(err, SFRAME_ERR_FLEX_RULE, off,
					       "FDE %u: flexible FRE FP rule lacks its offset",
					       f->index);
		rule_flex(d, &fre->fp, fre->udata[fp_idx], fre->data[fp_idx + 1]);
	} else if (h->cfa_fixed_fp_offset) {
		rule_cfa_slot(&fre->fp, h->cfa_fixed_fp_offset);
	}
	return 0;
}

/* Turn raw data words into CFA/RA/FP rules. */
int sframe_fre__rules(const struct sframe_decoder *d, const struct sframe_fde *f,
		      struct sframe_fre *fre, size_t off, struct sframe_error *err)
{
	memset(&fre->cfa, 0, sizeof(fre->cfa));
	memset(&fre->ra, 0, sizeof(fre->ra));
	memset(&fre->fp, 0, sizeof(fre->fp));
	if (fre->dataword_count == 0) {
		/* Spec (V2 erratum 2, V3): RA undefined, the outermost frame. */
		fre->cfa.kind = SFRAME_RULE_UNDEFINED;
		fre->ra.kind = SFRAME_RULE_UNDEFINED;
		return 0;
	}
	if (f->fde_type == SFRAME_FDE_TYPE_FLEX)
		return rules_flex(d, f, fre, off, err);
	rules_default(d, fre);
	return 0;
}
