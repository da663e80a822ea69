// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SFrame decoder (see sframe.h). Written from the SFrame specification,
 * versions 1 to 3, and ../shared/spec/NOTES.md.
 *
 * The whole section is validated once in sframe_decoder__new(): header,
 * sub-section bounds, every FDE and every FRE. Iteration afterwards re-reads
 * bytes that are known to be in bounds, so accessors cannot fail.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe/sframe.h"
#include "sframe/sframe_int.h"

/* Header field offsets. */
#define HDR_VERSION 2
#define HDR_FLAGS 3
#define HDR_ABI 4
#define HDR_FIXED_FP 5
#define HDR_FIXED_RA 6
#define HDR_AUXHDR_LEN 7
#define HDR_NUM_FDES 8
#define HDR_NUM_FRES 12
#define HDR_FRE_LEN 16
#define HDR_FDEOFF 20
#define HDR_FREOFF 24

static const char *const errcode_names[SFRAME_ERR__COUNT] = {
	[SFRAME_ERR_NONE] = "ok",
	[SFRAME_ERR_TRUNCATED_HEADER] = "truncated-header",
	[SFRAME_ERR_BAD_MAGIC] = "bad-magic",
	[SFRAME_ERR_BAD_VERSION] = "bad-version",
	[SFRAME_ERR_BAD_FLAGS] = "bad-flags",
	[SFRAME_ERR_BAD_ABI] = "bad-abi",
	[SFRAME_ERR_AUXHDR_BOUNDS] = "auxhdr-bounds",
	[SFRAME_ERR_SUBSECTION_ORDER] = "subsection-order",
	[SFRAME_ERR_FDE_BOUNDS] = "fde-bounds",
	[SFRAME_ERR_FRE_BOUNDS] = "fre-bounds",
	[SFRAME_ERR_FRE_LEN] = "fre-len",
	[SFRAME_ERR_FDE_FRE_OFF] = "fde-fre-off",
	[SFRAME_ERR_FRE_TRUNCATED] = "fre-truncated",
	[SFRAME_ERR_FRE_TYPE] = "fre-type",
	[SFRAME_ERR_FDE_TYPE] = "fde-type",
	[SFRAME_ERR_DATAWORD_SIZE] = "dataword-size",
	[SFRAME_ERR_DATAWORD_COUNT] = "dataword-count",
	[SFRAME_ERR_REP_SIZE] = "rep-size",
	[SFRAME_ERR_FDE_UNSORTED] = "fde-unsorted",
	[SFRAME_ERR_FDE_OVERLAP] = "fde-overlap",
	[SFRAME_ERR_FRE_START_ORDER] = "fre-start-order",
	[SFRAME_ERR_FRE_START_RANGE] = "fre-start-range",
	[SFRAME_ERR_NUM_FRES] = "num-fres",
	[SFRAME_ERR_FLEX_RULE] = "flex-rule",
	[SFRAME_ERR_ADDR_OVERFLOW] = "addr-overflow",
};

const char *sframe_errcode__name(enum sframe_errcode code)
{
	if ((unsigned)code >= SFRAME_ERR__COUNT)
		return "unknown";
	return errcode_names[code];
}

const char *sframe_abi__name(uint8_t abi_arch)
{
	switch (abi_arch) {
	case SFRAME_ABI_AARCH64_ENDIAN_BIG:
		return "AARCH64 BIG ENDIAN";
	case SFRAME_ABI_AARCH64_ENDIAN_LITTLE:
		return "AARCH64 LITTLE ENDIAN";
	case SFRAME_ABI_AMD64_ENDIAN_LITTLE:
		return "AMD64 LITTLE ENDIAN";
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		return "S390X BIG ENDIAN";
	default:
		return "UNKNOWN";
	}
}

/* DWARF register numbers from each psABI. */
int sframe_abi__sp_regnum(uint8_t abi_arch)
{
	switch (abi_arch) {
	case SFRAME_ABI_AARCH64_ENDIAN_BIG:
	case SFRAME_ABI_AARCH64_ENDIAN_LITTLE:
		return 31;
	case SFRAME_ABI_AMD64_ENDIAN_LITTLE:
		return 7;
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		return 15;
	default:
		return -1;
	}
}

int sframe_abi__fp_regnum(uint8_t abi_arch)
{
	switch (abi_arch) {
	case SFRAME_ABI_AARCH64_ENDIAN_BIG:
	case SFRAME_ABI_AARCH64_ENDIAN_LITTLE:
		return 29;
	case SFRAME_ABI_AMD64_ENDIAN_LITTLE:
		return 6;
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		return 11;
	default:
		return -1;
	}
}

int sframe__set_err(struct sframe_error *err, enum sframe_errcode code, uint64_t off,
		    const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		err->offset = off;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static uint8_t valid_flags(uint8_t version)
{
	switch (version) {
	case SFRAME_VERSION_1:
		return SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER;
	case SFRAME_VERSION_2:
		return SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER | SFRAME_F_FDE_FUNC_START_PCREL;
	default:
		return SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	}
}

static int parse_preamble(struct sframe_decoder *d, struct sframe_error *err)
{
	struct sframe_header *h = &d->hdr;
	uint16_t magic;

	if (d->size < SFRAME_HEADER_SIZE)
		return sframe__set_err(err, SFRAME_ERR_TRUNCATED_HEADER, d->size,
				       "section of %zu bytes is smaller than the %d-byte header",
				       d->size, SFRAME_HEADER_SIZE);
	memcpy(&magic, d->data, sizeof(magic));
	if (magic == __builtin_bswap16(SFRAME_MAGIC))
		d->swap = true;
	else if (magic != SFRAME_MAGIC)
		return sframe__set_err(err, SFRAME_ERR_BAD_MAGIC, 0, "bad magic 0x%04x", magic);
	h->magic = SFRAME_MAGIC;
	h->foreign_endian = d->swap;
	h->version = rd8(d, HDR_VERSION);
	if (h->version < SFRAME_VERSION_1 || h->version > SFRAME_VERSION_3)
		return sframe__set_err(err, SFRAME_ERR_BAD_VERSION, HDR_VERSION,
				       "unknown version %u", h->version);
	h->flags = rd8(d, HDR_FLAGS);
	if (h->flags & ~valid_flags(h->version))
		return sframe__set_err(err, SFRAME_ERR_BAD_FLAGS, HDR_FLAGS,
				       "flags 0x%02x not defined for version %u", h->flags,
				       h->version);
	return 0;
}

static int parse_header(struct sframe_decoder *d, struct sframe_error *err)
{
	struct sframe_header *h = &d->hdr;
	uint64_t hdr_end, fde_end, fre_end;
	int ret;

	ret = parse_preamble(d, err);
	if (ret)
		return ret;
	h->abi_arch = rd8(d, HDR_ABI);
	if (h->abi_arch < SFRAME_ABI_AARCH64_ENDIAN_BIG ||
	    h->abi_arch > SFRAME_ABI_S390X_ENDIAN_BIG)
		return sframe__set_err(err, SFRAME_ERR_BAD_ABI, HDR_ABI, "unknown ABI/arch %u",
				       h->abi_arch);
	h->cfa_fixed_fp_offset = (int8_t)rd8(d, HDR_FIXED_FP);
	h->cfa_fixed_ra_offset = (int8_t)rd8(d, HDR_FIXED_RA);
	h->auxhdr_len = rd8(d, HDR_AUXHDR_LEN);
	h->num_fdes = rd32(d, HDR_NUM_FDES);
	h->num_fres = rd32(d, HDR_NUM_FRES);
	h->fre_len = rd32(d, HDR_FRE_LEN);
	h->fdeoff = rd32(d, HDR_FDEOFF);
	h->freoff = rd32(d, HDR_FREOFF);

	hdr_end = SFRAME_HEADER_SIZE + (uint64_t)h->auxhdr_len;
	if (hdr_end > d->size)
		return sframe__set_err(err, SFRAME_ERR_AUXHDR_BOUNDS, HDR_AUXHDR_LEN,
				       "auxiliary header of %u bytes runs past the section end",
				       h->auxhdr_len);
	if (h->fdeoff > h->freoff)
		return sframe__set_err(
			err, SFRAME_ERR_SUBSECTION_ORDER, HDR_FDEOFF,
			"FDE sub-section (0x%x) starts after the FRE sub-section (0x%x)", h->fdeoff,
			h->freoff);
	d->fde_size = h->version == SFRAME_VERSION_1 ? SFRAME_V1_FDE_SIZE :
		      h->version == SFRAME_VERSION_2 ? SFRAME_V2_FDE_SIZE :
						       SFRAME_V3_FDE_INDEX_SIZE;
	d->fde_base = hdr_end + h->fdeoff;
	d->fre_base = hdr_end + h->freoff;
	fde_end = d->fde_base + (uint64_t)h->num_fdes * d->fde_size;
	if (fde_end > d->fre_base || fde_end > d->size)
		return sframe__set_err(
			err, SFRAME_ERR_FDE_BOUNDS, HDR_NUM_FDES,
			"%u FDEs at 0x%zx run past the FRE sub-section or section end", h->num_fdes,
			d->fde_base);
	fre_end = d->fre_base + (uint64_t)h->fre_len;
	if (fre_end > d->size)
		return sframe__set_err(
			err, SFRAME_ERR_FRE_BOUNDS, HDR_FRE_LEN,
			"FRE sub-section [0x%zx, +%u) runs past the section end (%zu)", d->fre_base,
			h->fre_len, d->size);
	/* Every FRE takes 2 bytes at least: bounds the work a hostile header can ask for. */
	if (h->num_fres > h->fre_len / 2)
		return sframe__set_err(err, SFRAME_ERR_NUM_FRES, HDR_NUM_FRES,
				       "sfh_num_fres %u cannot fit in %u bytes of FREs",
				       h->num_fres, h->fre_len);
	/* gas pads some sections (s390x) to their alignment: allow fewer than 8 bytes. */
	if (d->size - fre_end >= 8)
		return sframe__set_err(err, SFRAME_ERR_FRE_LEN, HDR_FRE_LEN,
				       "sfh_fre_len %u but the FRE sub-section has %zu bytes",
				       h->fre_len, d->size - d->fre_base);
	return 0;
}

static size_t fde_offset(const struct sframe_decoder *d, uint32_t i)
{
	return d->fde_base + (size_t)i * d->fde_size;
}

/* Decode FDE i (bounds of the FDE array already checked; the V3 attribute not). */
static void read_fde(const struct sframe_decoder *d, uint32_t i, struct sframe_fde *f)
{
	size_t off = fde_offset(d, i);
	uint64_t base;

	memset(f, 0, sizeof(*f));
	f->index = i;
	if (d->hdr.version == SFRAME_VERSION_3) {
		f->func_start_field = (int64_t)rd64(d, off);
		f->func_size = rd32(d, off + 8);
		f->start_fre_off = rd32(d, off + 12);
	} else {
		f->func_start_field = (int32_t)rd32(d, off);
		f->func_size = rd32(d, off + 4);
		f->start_fre_off = rd32(d, off + 8);
		f->num_fres = rd32(d, off + 12);
		f->info = rd8(d, off + 16);
		if (d->hdr.version == SFRAME_VERSION_2)
			f->rep_size = rd8(d, off + 17);
	}
	/* PCREL: relative to the field itself; otherwise to the section start. */
	base = d->sect_addr;
	if (d->hdr.flags & SFRAME_F_FDE_FUNC_START_PCREL)
		base += off;
	f->func_start = base + (uint64_t)f->func_start_field;
}

/*
 * Fill the fields derived from the info bytes. Reserved values are decided
 * per field. The FRE type (4 bits, 3 defined) sets the size of each FRE's
 * start address, so such an FDE's FREs cannot be read; the V3 FDE type (5
 * bits of info2, 2 defined) says how data words are read, so its FREs have no
 * known meaning. Either way only that FDE is lost: every FDE's FREs are found
 * through its own start_fre_off and (V3) its fixed-size attribute, never by
 * walking the FREs before them. The PC type (1 bit) has both values defined,
 * and V1/V2 have no other type field; unused bits are ignored, as the spec
 * asks of readers.
 */
static void split_info(const struct sframe_decoder *d, struct sframe_fde *f)
{
	f->fre_type = f->info & 0xf;
	f->pctype = (f->info >> 4) & 0x1;
	f->pauth_key = (f->info >> 5) & 0x1;
	if (d->hdr.version == SFRAME_VERSION_3) {
		f->signal = (f->info >> 7) & 0x1;
		f->fde_type = f->info2 & 0x1f;
	}
	if (f->fre_type > SFRAME_FRE_TYPE_ADDR4)
		f->reserved = SFRAME_FDE_RESERVED_FRE_TYPE;
	else if (f->fde_type > SFRAME_FDE_TYPE_FLEX)
		f->reserved = SFRAME_FDE_RESERVED_FDE_TYPE;
}

/* Offset of the first FRE of f; for V3 past the FDE attribute. */
static size_t first_fre_offset(const struct sframe_decoder *d, const struct sframe_fde *f)
{
	size_t off = d->fre_base + f->start_fre_off;

	return d->hdr.version == SFRAME_VERSION_3 ? off + SFRAME_V3_FDE_ATTR_SIZE : off;
}

static int read_fde_attr(const struct sframe_decoder *d, struct sframe_fde *f,
			 struct sframe_error *err)
{
	size_t need = d->hdr.version == SFRAME_VERSION_3 ? SFRAME_V3_FDE_ATTR_SIZE : 0;
	size_t off = d->fre_base + f->start_fre_off;

	if ((uint64_t)f->start_fre_off + need > d->hdr.fre_len ||
	    (need == 0 && f->num_fres && f->start_fre_off >= d->hdr.fre_len))
		return sframe__set_err(
			err, SFRAME_ERR_FDE_FRE_OFF, fde_offset(d, f->index),
			"FDE %u: FREs at 0x%x lie outside the FRE sub-section (%u bytes)", f->index,
			f->start_fre_off, d->hdr.fre_len);
	if (need) {
		f->num_fres = rd16(d, off);
		f->info = rd8(d, off + 2);
		f->info2 = rd8(d, off + 3);
		f->rep_size = rd8(d, off + 4);
	}
	return 0;
}

/* Read and check an FDE's own fields (not its FREs). */
static int load_fde(const struct sframe_decoder *d, uint32_t i, struct sframe_fde *f,
		    struct sframe_error *err)
{
	size_t info_off;
	int ret;

	read_fde(d, i, f);
	ret = read_fde_attr(d, f, err);
	if (ret)
		return ret;
	split_info(d, f);
	info_off = d->hdr.version == SFRAME_VERSION_3 ? d->fre_base + f->start_fre_off + 2 :
							fde_offset(d, i) + 16;
	/* V1 has no rep_size field; its PCMASK FDEs imply a 16-byte block. */
	if (!f->reserved && f->pctype == SFRAME_FDE_PCTYPE_MASK &&
	    d->hdr.version > SFRAME_VERSION_1 && f->rep_size == 0)
		return sframe__set_err(err, SFRAME_ERR_REP_SIZE,
				       info_off + (d->hdr.version == SFRAME_VERSION_3 ? 2 : 1),
				       "FDE %u: PCMASK FDE with repetition size 0", i);
	/*
	 * Addresses are modular, as readelf computes them: relocatable objects and
	 * libsframe's test data put functions at "negative" PCs. Only a linked
	 * (sorted) section's function may not wrap past the top of the address space.
	 */
	if ((d->hdr.flags & SFRAME_F_FDE_SORTED) && f->func_start + f->func_size < f->func_start)
		return sframe__set_err(err, SFRAME_ERR_ADDR_OVERFLOW, fde_offset(d, i),
				       "FDE %u: function end wraps around the address space", i);
	return 0;
}

/* Size of the PC range an FDE's FRE starts are measured in. */
static uint32_t fre_range(const struct sframe_decoder *d, const struct sframe_fde *f)
{
	if (f->pctype != SFRAME_FDE_PCTYPE_MASK)
		return f->func_size;
	if (d->hdr.version == SFRAME_VERSION_1)
		return 16; /* V1 PLT entries: no rep_size field, 16-byte blocks */
	return f->rep_size;
}

/*
 * Walk and check every FRE of f. Adds its FRE count to *total. The common
 * case costs a few instructions an FRE (sframe_fre__peek); only flexible FDEs,
 * whose rules may be malformed, are decoded in full, and a malformed FRE is
 * read again by sframe_fre__read() to say why.
 */
static int check_fres(const struct sframe_decoder *d, const struct sframe_fde *f, uint64_t *total,
		      struct sframe_error *err)
{
	struct sframe_fre fre;
	size_t off = first_fre_offset(d, f), end = d->fre_base + d->hdr.fre_len;
	unsigned asz = sframe_fre__addr_size(f->fre_type);
	unsigned max_dw = sframe_fre__max_datawords(d, f);
	bool mask = f->pctype == SFRAME_FDE_PCTYPE_MASK;
	uint32_t j, start, prev = 0;
	int len, ret;

	*total += f->num_fres;
	if (f->reserved)
		return 0; /* FREs of unknown size or meaning: the FDE is skipped */
	for (j = 0; j < f->num_fres; j++) {
		len = sframe_fre__peek(d, asz, max_dw, off, end, &start);
		if (len < 0) {
			ret = sframe_fre__read(d, f, off, &fre, err);
			return ret < 0 ? ret :
					 sframe__set_err(err, SFRAME_ERR_FRE_TRUNCATED, off,
							 "FDE %u: FRE %u unreadable", f->index, j);
		}
		/*
		 * Equal starts are allowed (the later FRE applies), and so is a start
		 * at the function's or block's end (it covers nothing): gas emits
		 * both, see struct sframe_fre.
		 */
		if (start < prev)
			return sframe__set_err(err, SFRAME_ERR_FRE_START_ORDER, off,
					       "FDE %u: FRE %u starts at 0x%x, before 0x%x",
					       f->index, j, start, prev);
		if (start > f->func_size)
			return sframe__set_err(
				err, SFRAME_ERR_FRE_START_RANGE, off,
				"FDE %u: FRE %u starts at 0x%x, past the function size 0x%x",
				f->index, j, start, f->func_size);
		/* PCMASK: starts are offsets into the repeated block. */
		if (mask && start > fre_range(d, f))
			return sframe__set_err(
				err, SFRAME_ERR_FRE_START_RANGE, off,
				"FDE %u: FRE %u starts at 0x%x, past the 0x%x-byte block", f->index,
				j, start, fre_range(d, f));
		/* Only a flexible FDE's rules can be malformed. */
		if (f->fde_type == SFRAME_FDE_TYPE_FLEX) {
			sframe_fre__read(d, f, off, &fre, NULL);
			ret = sframe_fre__rules(d, f, &fre, off, err);
			if (ret)
				return ret;
		}
		prev = start;
		off += len;
	}
	return 0;
}

static int cmp_start(const void *a, const void *b, void *arg)
{
	const struct sframe_decoder *d = arg;
	struct sframe_fde fa, fb;

	read_fde(d, *(const uint32_t *)a, &fa);
	read_fde(d, *(const uint32_t *)b, &fb);
	if (fa.func_start != fb.func_start)
		return fa.func_start < fb.func_start ? -1 : 1;
	return fa.index < fb.index ? -1 : fa.index > fb.index;
}

/*
 * Order check. Sorted sections (what linkers emit) must be sorted and free of
 * overlaps; unsorted ones (relocatable objects, where every text section starts
 * at 0) are only indexed.
 */
static int index_fdes(struct sframe_decoder *d, struct sframe_error *err)
{
	struct sframe_fde prev, cur;
	uint32_t i, n = d->hdr.num_fdes;

	d->by_start = calloc(n ? n : 1, sizeof(*d->by_start));
	if (!d->by_start)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		d->by_start[i] = i;
	if (!(d->hdr.flags & SFRAME_F_FDE_SORTED)) {
		qsort_r(d->by_start, n, sizeof(*d->by_start), cmp_start, d);
		return 0;
	}
	for (i = 1; i < n; i++) {
		read_fde(d, i - 1, &prev);
		read_fde(d, i, &cur);
		if (cur.func_start < prev.func_start)
			return sframe__set_err(err, SFRAME_ERR_FDE_UNSORTED, fde_offset(d, i),
					       "FDE %u (0x%llx) sorts before FDE %u (0x%llx)", i,
					       (unsigned long long)cur.func_start, i - 1,
					       (unsigned long long)prev.func_start);
		if (cur.func_start < prev.func_start + prev.func_size)
			return sframe__set_err(err, SFRAME_ERR_FDE_OVERLAP, fde_offset(d, i),
					       "FDE %u [0x%llx,+0x%x) overlaps FDE %u", i,
					       (unsigned long long)cur.func_start, cur.func_size,
					       i - 1);
	}
	return 0;
}

static int validate(struct sframe_decoder *d, struct sframe_error *err)
{
	struct sframe_fde f;
	uint64_t total = 0;
	uint32_t i;
	int ret;

	ret = parse_header(d, err);
	if (ret)
		return ret;
	for (i = 0; i < d->hdr.num_fdes; i++) {
		ret = load_fde(d, i, &f, err);
		if (ret)
			return ret;
		d->num_reserved += f.reserved != SFRAME_FDE_OK;
		ret = check_fres(d, &f, &total, err);
		if (ret)
			return ret;
		/* FDEs may share FRE bytes; stop before that costs more than the header claims. */
		if (total > d->hdr.num_fres)
			break;
	}
	if (total != d->hdr.num_fres)
		return sframe__set_err(err, SFRAME_ERR_NUM_FRES, HDR_NUM_FRES,
				       "sfh_num_fres is %u but the FDEs hold %llu FREs",
				       d->hdr.num_fres, (unsigned long long)total);
	return index_fdes(d, err);
}

int sframe_decoder__new(const void *data, size_t size, uint64_t sect_addr,
			struct sframe_decoder **out, struct sframe_error *err)
{
	struct sframe_decoder *d;
	int ret;

	if (err)
		memset(err, 0, sizeof(*err));
	*out = NULL;
	if (!data && size)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->data = data;
	d->size = size;
	d->sect_addr = sect_addr;
	ret = validate(d, err);
	if (ret) {
		sframe_decoder__free(d);
		return ret;
	}
	*out = d;
	return 0;
}

void sframe_decoder__free(struct sframe_decoder *d)
{
	if (!d)
		return;
	free(d->by_start);
	free(d);
}

const struct sframe_header *sframe_decoder__header(const struct sframe_decoder *d)
{
	return &d->hdr;
}

uint32_t sframe_decoder__num_fdes(const struct sframe_decoder *d)
{
	return d->hdr.num_fdes;
}

uint32_t sframe_decoder__num_reserved_fdes(const struct sframe_decoder *d)
{
	return d->num_reserved;
}

const char *sframe_fde_reserved__name(uint8_t reserved)
{
	switch (reserved) {
	case SFRAME_FDE_OK:
		return "ok";
	case SFRAME_FDE_RESERVED_FRE_TYPE:
		return "fre-type";
	case SFRAME_FDE_RESERVED_FDE_TYPE:
		return "fde-type";
	}
	return "unknown";
}

int sframe_decoder__fde(const struct sframe_decoder *d, uint32_t i, struct sframe_fde *fde)
{
	if (i >= d->hdr.num_fdes)
		return -ERANGE;
	read_fde(d, i, fde);
	read_fde_attr(d, fde, NULL); /* validated in __new */
	split_info(d, fde);
	return 0;
}

int sframe_decoder__find_fde(const struct sframe_decoder *d, uint64_t pc, struct sframe_fde *fde)
{
	uint32_t lo = 0, hi = d->hdr.num_fdes, mid;
	struct sframe_fde f;

	/* Last FDE (in start order) whose start is <= pc. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		read_fde(d, d->by_start[mid], &f);
		if (f.func_start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * A sorted section has no overlaps: that FDE covers pc or none does. An
	 * unsorted one (a relocatable object) may overlap, and the last start <= pc
	 * may be a shorter or empty function at or after a covering one's start:
	 * walk back to the nearest start that covers pc.
	 */
	while (lo-- > 0) {
		read_fde(d, d->by_start[lo], &f);
		if (pc - f.func_start < f.func_size)
			return sframe_decoder__fde(d, d->by_start[lo], fde);
		if (d->hdr.flags & SFRAME_F_FDE_SORTED)
			break;
	}
	return -ENOENT;
}

int sframe_decoder__find_fre(const struct sframe_decoder *d, const struct sframe_fde *fde,
			     uint64_t pc, struct sframe_fre *fre)
{
	struct sframe_fre_iter it;
	struct sframe_fre cur;
	uint64_t off;
	bool found = false;

	/* A reserved-type FDE has no FREs (nor a checked rep_size). */
	if (fde->reserved || pc < fde->func_start || pc >= fde->func_start + fde->func_size)
		return -ENOENT;
	off = pc - fde->func_start;
	if (fde->pctype == SFRAME_FDE_PCTYPE_MASK)
		off %= fre_range(d, fde);
	sframe_fre_iter__init(&it, d, fde);
	while (sframe_fre_iter__next(&it, &cur) && cur.start_off <= off) {
		*fre = cur;
		found = true;
	}
	return found ? 0 : -ENOENT;
}

int sframe_decoder__fde_by_start(const struct sframe_decoder *d, uint32_t rank,
				 struct sframe_fde *fde)
{
	if (rank >= d->hdr.num_fdes)
		return -ERANGE;
	return sframe_decoder__fde(d, d->by_start[rank], fde);
}

void sframe_fre_iter__init(struct sframe_fre_iter *it, const struct sframe_decoder *d,
			   const struct sframe_fde *fde)
{
	it->d = d;
	it->fde = *fde;
	it->pos = first_fre_offset(d, fde);
	it->next = fde->reserved ? fde->num_fres : 0; /* nothing to read */
	it->end = d->fre_base + d->hdr.fre_len;
	it->range = fre_range(d, fde);
	it->asz = (uint8_t)sframe_fre__addr_size(fde->fre_type);
	it->max_dw = (uint8_t)sframe_fre__max_datawords(d, fde);
	it->next_len = 0;
}

/* enc_words of raw: one unaligned load where the section has 16 bytes left. */
static void enc_words(const struct sframe_decoder *d, struct sframe_fre_raw *raw)
{
	size_t off = (size_t)(raw->enc - d->data), i;
	uint32_t n = raw->enc_len < 16 ? raw->enc_len : 16;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (off + 16 <= d->size) {
		memcpy(raw->enc_words, raw->enc, 16);
		if (n < 8) {
			raw->enc_words[0] &= (1ull << (8 * n)) - 1;
			raw->enc_words[1] = 0;
		} else if (n < 16) {
			raw->enc_words[1] &= (1ull << (8 * (n - 8))) - 1;
		}
		return;
	}
#endif
	raw->enc_words[0] = raw->enc_words[1] = 0;
	for (i = 0; i < n; i++)
		raw->enc_words[i / 8] |= (uint64_t)raw->enc[i] << (8 * (i % 8));
}

bool sframe_fre_iter__next_raw(struct sframe_fre_iter *it, struct sframe_fre_raw *raw)
{
	const struct sframe_decoder *d = it->d;
	uint32_t next_start;
	int len;

	if (it->next >= it->fde.num_fres)
		return false;
	len = it->next_len;
	raw->start_off = it->next_start;
	if (!len)
		len = sframe_fre__peek(d, it->asz, it->max_dw, it->pos, it->end, &raw->start_off);
	if (len <= 0)
		return false; /* cannot happen on a validated section */
	raw->index = it->next;
	raw->pos = it->pos;
	raw->enc = d->data + it->pos + it->asz;
	raw->enc_len = (uint32_t)len - it->asz;
	enc_words(d, raw);
	it->pos += len;
	it->next++;
	/* The next FRE's start is where this one ends: read once for both. */
	raw->end_off = it->range;
	it->next_len = 0;
	if (it->next < it->fde.num_fres) {
		len = sframe_fre__peek(d, it->asz, it->max_dw, it->pos, it->end, &next_start);
		if (len > 0) {
			raw->end_off = it->next_start = next_start;
			it->next_len = len;
		}
	}
	return true;
}

void sframe_fre_iter__decode(const struct sframe_fre_iter *it, const struct sframe_fre_raw *raw,
			     struct sframe_fre *fre)
{
	memset(fre, 0, sizeof(*fre));
	sframe_fre__read(it->d, &it->fde, raw->pos, fre, NULL); /* validated in __new */
	sframe_fre__rules(it->d, &it->fde, fre, raw->pos, NULL);
	fre->index = raw->index;
	fre->end_off = raw->end_off;
}

bool sframe_fre_iter__next(struct sframe_fre_iter *it, struct sframe_fre *fre)
{
	struct sframe_fre_raw raw;

	if (!sframe_fre_iter__next_raw(it, &raw))
		return false;
	sframe_fre_iter__decode(it, &raw, fre);
	return true;
}
