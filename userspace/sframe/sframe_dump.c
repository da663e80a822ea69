// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * readelf-compatible and JSON dumps of an SFrame section.
 *
 * The text dump deliberately works from the raw FRE data words, not from the
 * decoder's recovery rules: readelf's notation has quirks (fixed offsets shown
 * as "f", RA padding as "U", V2 s390x register encodings, the 2.40 dumper's
 * handling of V1) that only the data words reproduce exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sframe/sframe_dump.h"
#include "util/glibc.h"

#define DEFAULT_SECTION ".sframe"

/* SFRAME_ERR of libsframe: what its offset getters return for a missing word. */
#define LIBSFRAME_ERR (-1)

/* One value as readelf's column buffer holds it. */
struct col {
	char s[64];
};

static bool abi_is_aarch64(uint8_t abi)
{
	return abi == SFRAME_ABI_AARCH64_ENDIAN_BIG || abi == SFRAME_ABI_AARCH64_ENDIAN_LITTLE;
}

static bool abi_is_s390x(uint8_t abi)
{
	return abi == SFRAME_ABI_S390X_ENDIAN_BIG;
}

/* Data word idx, or false when the FRE has fewer words. */
static bool word(const struct sframe_fre *fre, unsigned int idx, int32_t *v)
{
	if (idx >= fre->dataword_count || idx >= SFRAME_FRE_MAX_DATAWORDS)
		return false;
	*v = fre->data[idx];
	return true;
}

static bool uword(const struct sframe_fre *fre, unsigned int idx, uint32_t *v)
{
	if (idx >= fre->dataword_count || idx >= SFRAME_FRE_MAX_DATAWORDS)
		return false;
	*v = fre->udata[idx];
	return true;
}

/* s390x stores the CFA offset as (offset - 160) / 8; readelf shows it decoded. */
static int32_t cfa_display(uint8_t abi, int32_t v)
{
	if (!abi_is_s390x(abi))
		return v;
	/* Wrap like libsframe's int32 arithmetic instead of overflowing. */
	return (int32_t)((uint32_t)v * SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR +
			 SFRAME_S390X_CFA_OFFSET_ADJUSTMENT);
}

static void print_row_start(FILE *out, const struct sframe_fde *fde, const struct sframe_fre *fre)
{
	/* PCMASK rows show the raw offset within the repeat block, as readelf does. */
	uint64_t pc = fre->start_off;

	if (fde->pctype != SFRAME_FDE_PCTYPE_MASK)
		pc += fde->func_start;
	fprintf(out, "\n    %016" PRIx64, pc);
}

static void print_ra_col(FILE *out, struct col *ra, const struct sframe_fre *fre)
{
	strcat(ra->s, fre->mangled_ra ? "[s]" : "   ");
	fprintf(out, "%-13s", ra->s);
}

/* --- V1: readelf 2.40 ---------------------------------------------------- */

static void v1_header(FILE *out, const struct sframe_header *h)
{
	const char *flags = "";

	/* 2.40 builds the string with strcpy, so FRAME_POINTER replaces FDE_SORTED. */
	if (!h->flags)
		flags = "NONE";
	else if (h->flags & SFRAME_F_FRAME_POINTER)
		flags = "SFRAME_F_FRAME_POINTER";
	else if (h->flags & SFRAME_F_FDE_SORTED)
		flags = "SFRAME_F_FDE_SORTED";
	fprintf(out, "\n  Header :\n\n    Version: SFRAME_VERSION_1\n    Flags: %s\n", flags);
	fprintf(out, "    Num FDEs: %d\n    Num FREs: %d\n", (int)h->num_fdes, (int)h->num_fres);
}

static void v1_row(FILE *out, const struct sframe_header *h, const struct sframe_fre *fre)
{
	struct col cfa, fp, ra;
	int32_t v = LIBSFRAME_ERR;
	unsigned int fp_idx = h->cfa_fixed_ra_offset ? 1 : 2;

	/* 2.40 ignores the header's fixed offsets: a fixed FP or RA shows as "u". */
	word(fre, 0, &v);
	snprintf(cfa.s, sizeof(cfa.s), "%s+%d", fre->cfa_base_reg_id ? "sp" : "fp", v);
	if (!h->cfa_fixed_fp_offset && word(fre, fp_idx, &v))
		snprintf(fp.s, sizeof(fp.s), "c%+d", v);
	else
		strcpy(fp.s, "u");
	if (!h->cfa_fixed_ra_offset && word(fre, 1, &v))
		snprintf(ra.s, sizeof(ra.s), "c%+d", v);
	else
		strcpy(ra.s, "u");
	fprintf(out, "  %-10s%-10s", cfa.s, fp.s);
	print_ra_col(out, &ra, fre);
}

/* --- V2 and V3: readelf 2.47 ------------------------------------------- */

static void v23_flags(FILE *out, const struct sframe_header *h)
{
	static const struct {
		uint8_t bit;
		const char *name;
	} names[] = {
		{ SFRAME_F_FDE_SORTED, "SFRAME_F_FDE_SORTED" },
		{ SFRAME_F_FRAME_POINTER, "SFRAME_F_FRAME_POINTER" },
		{ SFRAME_F_FDE_FUNC_START_PCREL, "SFRAME_F_FDE_FUNC_START_PCREL" },
	};
	const char *prefix = "Flags: ";
	uint8_t left = h->flags;

	if (!left) {
		fprintf(out, "%11sNONE\n", prefix);
		return;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		/* FRAME_POINTER has no name in V3: it falls through as a residual number. */
		if (!(left & names[i].bit) ||
		    (names[i].bit == SFRAME_F_FRAME_POINTER && h->version != SFRAME_VERSION_2))
			continue;
		left &= (uint8_t)~names[i].bit;
		fprintf(out, "%11s%s%s\n", prefix, names[i].name, left ? "," : "");
		prefix = " ";
	}
	if (left)
		fprintf(out, "%11s%d\n", prefix, left);
}

static void v23_header(FILE *out, const struct sframe_header *h)
{
	fprintf(out, "\n  Header :\n\n    Version: SFRAME_VERSION_%d\n", h->version);
	v23_flags(out, h);
	if (h->cfa_fixed_fp_offset)
		fprintf(out, "    CFA fixed FP offset: %d\n", h->cfa_fixed_fp_offset);
	if (h->cfa_fixed_ra_offset)
		fprintf(out, "    CFA fixed RA offset: %d\n", h->cfa_fixed_ra_offset);
	fprintf(out, "    Num FDEs: %d\n    Num FREs: %d\n", (int)h->num_fdes, (int)h->num_fres);
}

/* V2 s390x marks a register number (rather than a CFA offset) with bit 0. */
static void fmt_cfa_rel(struct col *c, const struct sframe_header *h, int32_t v)
{
	if (abi_is_s390x(h->abi_arch) && h->version == SFRAME_VERSION_2 && (v & 1))
		snprintf(c->s, sizeof(c->s), "r%d", v >> 1);
	else
		snprintf(c->s, sizeof(c->s), "c%+d", v);
}

static void v23_row_default(FILE *out, const struct sframe_header *h, const struct sframe_fre *fre)
{
	unsigned int fp_idx = h->cfa_fixed_ra_offset ? 1 : 2;
	struct col cfa, fp, ra;
	int32_t v = 0;

	word(fre, 0, &v);
	snprintf(cfa.s, sizeof(cfa.s), "%s+%d", fre->cfa_base_reg_id ? "sp" : "fp",
		 cfa_display(h->abi_arch, v));
	if (h->cfa_fixed_fp_offset)
		fmt_cfa_rel(&fp, h, h->cfa_fixed_fp_offset);
	else if (word(fre, fp_idx, &v))
		fmt_cfa_rel(&fp, h, v);
	else
		strcpy(fp.s, "u");
	/* "f": RA at a fixed offset; "U": RA not saved (padding word for a saved FP). */
	if (h->cfa_fixed_ra_offset)
		strcpy(ra.s, "f");
	else if (!word(fre, 1, &v))
		strcpy(ra.s, "u");
	else if (v == 0)
		strcpy(ra.s, "U");
	else
		fmt_cfa_rel(&ra, h, v);
	fprintf(out, "  %-10s%-10s", cfa.s, fp.s);
	print_ra_col(out, &ra, fre);
}

static const char *reg_name(uint8_t abi, unsigned int regnum, struct col *buf)
{
	if ((int)regnum == sframe_abi__sp_regnum(abi))
		return "sp";
	if ((int)regnum == sframe_abi__fp_regnum(abi))
		return "fp";
	snprintf(buf->s, sizeof(buf->s), "r%u", regnum);
	return buf->s;
}

/* A flexible-FDE rule: control word + offset, as "c+8", "sp+16" or "(fp-8)". */
struct flex_rule {
	bool has_ctrl, has_off;
	uint32_t ctrl;
	int32_t off;
};

static void fmt_flex(struct col *c, uint8_t abi, const struct flex_rule *r)
{
	bool reg_p = r->ctrl & 1, deref = reg_p && ((r->ctrl >> 1) & 1);
	struct col rbuf;
	const char *base = reg_p ? reg_name(abi, r->ctrl >> 3, &rbuf) : "c";

	snprintf(c->s, sizeof(c->s), deref ? "(%s%+d)" : "%s%+d", base, r->off);
}

/*
 * Word layout of a flexible FRE, as libsframe reads it: CFA control + offset
 * at 0/1; RA control + offset at 2/3, or a single 0 word at 2 when RA is not
 * saved; then FP control + offset.
 */
static void flex_rules(const struct sframe_header *h, const struct sframe_fre *fre,
		       struct flex_rule *cfa, struct flex_rule *ra, struct flex_rule *fp)
{
	bool ra_pad;

	memset(cfa, 0, sizeof(*cfa));
	memset(ra, 0, sizeof(*ra));
	memset(fp, 0, sizeof(*fp));
	cfa->off = ra->off = fp->off = LIBSFRAME_ERR;

	cfa->has_ctrl = uword(fre, 0, &cfa->ctrl);
	cfa->has_off = word(fre, 1, &cfa->off);
	if (cfa->has_off)
		cfa->off = cfa_display(h->abi_arch, cfa->off);

	ra->has_ctrl = uword(fre, 2, &ra->ctrl);
	ra->has_off = word(fre, 3, &ra->off);
	if (!ra->has_off && h->cfa_fixed_ra_offset) {
		ra->off = h->cfa_fixed_ra_offset;
		ra->has_off = true;
	}

	ra_pad = ra->has_ctrl && ra->ctrl == 0;
	fp->has_ctrl = uword(fre, ra_pad ? 3 : 4, &fp->ctrl);
	fp->has_off = word(fre, ra_pad ? 4 : 5, &fp->off);
	if (!fp->has_off && h->cfa_fixed_fp_offset) {
		fp->off = h->cfa_fixed_fp_offset;
		fp->has_off = true;
	}
}

static void v23_row_flex(FILE *out, const struct sframe_header *h, const struct sframe_fre *fre)
{
	struct flex_rule rcfa, rra, rfp;
	struct col cfa, fp, ra;

	flex_rules(h, fre, &rcfa, &rra, &rfp);
	fmt_flex(&cfa, h->abi_arch, &rcfa);
	if (rfp.has_ctrl && rfp.has_off)
		fmt_flex(&fp, h->abi_arch, &rfp);
	else
		strcpy(fp.s, "u");
	if (!rra.has_ctrl)
		strcpy(ra.s, h->cfa_fixed_ra_offset ? "f" : "u");
	else if (rra.ctrl == 0)
		strcpy(ra.s, "U");
	else
		fmt_flex(&ra, h->abi_arch, &rra);
	fprintf(out, "  %-10s%-10s", cfa.s, fp.s);
	print_ra_col(out, &ra, fre);
}

/* --- functions ----------------------------------------------------------- */

static void print_fde_heading(FILE *out, const struct sframe_header *h,
			      const struct sframe_fde *fde)
{
	bool signal = (fde->info >> 7) & 1, flex = fde->fde_type == SFRAME_FDE_TYPE_FLEX;

	fprintf(out, "\n    func idx [%d]: pc = 0x%" PRIx64 ", size = %d bytes", (int)fde->index,
		fde->func_start, (int)fde->func_size);
	/* readelf 2.47 reads the signal bit from the info byte even for V2. */
	if (h->version != SFRAME_VERSION_1 && (signal || flex))
		fprintf(out, ", attr = \"%s%s\"", signal ? "S" : "", flex ? "F" : "");
	if (abi_is_aarch64(h->abi_arch) && ((fde->info >> 5) & 1))
		fprintf(out, ", pauth = B key");
	fprintf(out, "\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC",
		fde->pctype == SFRAME_FDE_PCTYPE_MASK ? "[m]" : "   ", "CFA", "FP", "RA");
}

static void print_fde(FILE *out, const struct sframe_decoder *d, const struct sframe_header *h,
		      const struct sframe_fde *fde)
{
	struct sframe_fre_iter it;
	struct sframe_fre fre;

	print_fde_heading(out, h, fde);
	/* readelf has no notation for these (binutils never writes them). */
	if (fde->reserved == SFRAME_FDE_RESERVED_FRE_TYPE)
		fprintf(out, "\n    skipped: FRE type %u is reserved", fde->fre_type);
	else if (fde->reserved == SFRAME_FDE_RESERVED_FDE_TYPE)
		fprintf(out, "\n    skipped: FDE type %u is reserved", fde->fde_type);
	sframe_fre_iter__init(&it, d, fde);
	while (sframe_fre_iter__next(&it, &fre)) {
		print_row_start(out, fde, &fre);
		if (h->version == SFRAME_VERSION_1) {
			v1_row(out, h, &fre);
			continue;
		}
		if (fre.dataword_count == 0) {
			fprintf(out, "  RA undefined");
			continue;
		}
		if (fde->fde_type == SFRAME_FDE_TYPE_FLEX)
			v23_row_flex(out, h, &fre);
		else
			v23_row_default(out, h, &fre);
	}
	fputc('\n', out);
}

int sframe_dump__text(FILE *out, const struct sframe_decoder *d, const char *section)
{
	const struct sframe_header *h = sframe_decoder__header(d);
	uint32_t n = sframe_decoder__num_fdes(d);
	struct sframe_fde fde;

	fprintf(out, "Contents of the SFrame section %s:", section ? section : DEFAULT_SECTION);
	if (h->version == SFRAME_VERSION_1)
		v1_header(out, h);
	else
		v23_header(out, h);
	fprintf(out, "\n  Function Index :\n");
	for (uint32_t i = 0; i < n; i++) {
		if (sframe_decoder__fde(d, i, &fde))
			return -EINVAL;
		print_fde(out, d, h, &fde);
	}
	return ferror(out) ? -EIO : 0;
}

/* --- JSON ---------------------------------------------------------------- */

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void json_meta(FILE *out, const struct sframe_dump_meta *meta)
{
	fprintf(out, "{\"file\":");
	json_str(out, meta->file ? meta->file : "");
	if (meta->section) {
		fprintf(out, ",\"section\":");
		json_str(out, meta->section);
	}
	if (meta->source)
		fprintf(out, ",\"source\":\"%s\"", meta->source);
}

static void json_flags(FILE *out, uint8_t flags)
{
	static const char *const names[] = {
		"SFRAME_F_FDE_SORTED",
		"SFRAME_F_FRAME_POINTER",
		"SFRAME_F_FDE_FUNC_START_PCREL",
	};
	bool first = true;

	fputc('[', out);
	for (unsigned int bit = 0; bit < 8; bit++) {
		if (!(flags & (1u << bit)))
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		if (bit < sizeof(names) / sizeof(names[0]))
			fprintf(out, "\"%s\"", names[bit]);
		else
			fprintf(out, "\"0x%x\"", 1u << bit);
	}
	fputc(']', out);
}

static void json_header(FILE *out, const struct sframe_header *h)
{
	fprintf(out, "\"header\":{\"magic\":%u,\"version\":%u,\"flags\":", h->magic, h->version);
	json_flags(out, h->flags);
	fprintf(out, ",\"abi_arch\":%u,\"abi\":", h->abi_arch);
	json_str(out, sframe_abi__name(h->abi_arch));
	fprintf(out,
		",\"cfa_fixed_fp_offset\":%d,\"cfa_fixed_ra_offset\":%d,\"auxhdr_len\":%u,"
		"\"num_fdes\":%" PRIu32 ",\"num_fres\":%" PRIu32 ",\"fre_len\":%" PRIu32
		",\"fdeoff\":%" PRIu32 ",\"freoff\":%" PRIu32 ",\"foreign_endian\":%s}",
		h->cfa_fixed_fp_offset, h->cfa_fixed_ra_offset, h->auxhdr_len, h->num_fdes,
		h->num_fres, h->fre_len, h->fdeoff, h->freoff,
		h->foreign_endian ? "true" : "false");
}

static void json_rule(FILE *out, const char *key, const struct sframe_rule *r)
{
	static const char *const bases[] = { "sp", "fp", "cfa", "reg" };

	fprintf(out, "\"%s\":", key);
	if (r->kind == SFRAME_RULE_SAME) {
		fprintf(out, "{\"rule\":\"same\"}");
		return;
	}
	if (r->kind == SFRAME_RULE_UNDEFINED) {
		fprintf(out, "{\"rule\":\"undefined\"}");
		return;
	}
	fprintf(out, "{\"rule\":\"offset\",\"base\":\"%s\"",
		r->base < sizeof(bases) / sizeof(bases[0]) ? bases[r->base] : "unknown");
	if (r->base != SFRAME_BASE_CFA)
		fprintf(out, ",\"reg\":%u", r->regnum);
	fprintf(out, ",\"offset\":%" PRId64 ",\"deref\":%s}", r->offset,
		r->deref ? "true" : "false");
}

static void json_row(FILE *out, const struct sframe_fde *fde, const struct sframe_fre *fre)
{
	fprintf(out,
		"{\"start\":%" PRIu64 ",\"start_off\":%" PRIu32 ",\"end_off\":%" PRIu32
		",\"cfa_base\":\"%s\",\"dataword_size\":%u,\"datawords\":[",
		fde->func_start + fre->start_off, fre->start_off, fre->end_off,
		fre->cfa_base_reg_id ? "sp" : "fp", fre->dataword_size);
	for (unsigned int i = 0; i < fre->dataword_count && i < SFRAME_FRE_MAX_DATAWORDS; i++)
		fprintf(out, "%s%" PRId32, i ? "," : "", fre->data[i]);
	fprintf(out, "],");
	json_rule(out, "cfa", &fre->cfa);
	fputc(',', out);
	json_rule(out, "fp", &fre->fp);
	fputc(',', out);
	json_rule(out, "ra", &fre->ra);
	fprintf(out, ",\"mangled_ra\":%s}", fre->mangled_ra ? "true" : "false");
}

static const char *fre_type_name(uint8_t fre_type)
{
	switch (fre_type) {
	case SFRAME_FRE_TYPE_ADDR1:
		return "addr1";
	case SFRAME_FRE_TYPE_ADDR2:
		return "addr2";
	case SFRAME_FRE_TYPE_ADDR4:
		return "addr4";
	}
	return "reserved";
}

static void json_fde(FILE *out, const struct sframe_decoder *d, const struct sframe_header *h,
		     const struct sframe_fde *fde)
{
	struct sframe_fre_iter it;
	struct sframe_fre fre;
	bool first = true;

	fprintf(out,
		"{\"index\":%" PRIu32 ",\"start\":%" PRIu64 ",\"size\":%" PRIu32
		",\"func_start_field\":%" PRId64 ",\"pctype\":\"%s\",\"fde_type\":\"%s\""
		",\"fre_type\":\"%s\",\"rep_size\":%u,\"signal\":%s",
		fde->index, fde->func_start, fde->func_size, fde->func_start_field,
		fde->pctype == SFRAME_FDE_PCTYPE_MASK ? "mask" : "inc",
		fde->fde_type == SFRAME_FDE_TYPE_FLEX	 ? "flex" :
		fde->fde_type == SFRAME_FDE_TYPE_DEFAULT ? "default" :
							   "reserved",
		fre_type_name(fde->fre_type), fde->rep_size, fde->signal ? "true" : "false");
	if (fde->reserved)
		fprintf(out, ",\"skipped\":\"reserved-%s\"", sframe_fde_reserved__name(fde->reserved));
	if (abi_is_aarch64(h->abi_arch))
		fprintf(out, ",\"pauth_key\":\"%s\"", fde->pauth_key ? "B" : "A");
	fprintf(out, ",\"num_fres\":%" PRIu32 ",\"rows\":[", fde->num_fres);
	sframe_fre_iter__init(&it, d, fde);
	while (sframe_fre_iter__next(&it, &fre)) {
		if (!first)
			fputc(',', out);
		first = false;
		json_row(out, fde, &fre);
	}
	fprintf(out, "]}");
}

int sframe_dump__json(FILE *out, const struct sframe_decoder *d,
		      const struct sframe_dump_meta *meta)
{
	const struct sframe_header *h = sframe_decoder__header(d);
	uint32_t n = sframe_decoder__num_fdes(d);
	struct sframe_fde fde;

	json_meta(out, meta);
	fprintf(out, ",\"address\":%" PRIu64 ",\"size\":%" PRIu64 ",", meta->addr, meta->size);
	json_header(out, h);
	fprintf(out, ",\"functions\":[");
	for (uint32_t i = 0; i < n; i++) {
		if (sframe_decoder__fde(d, i, &fde))
			return -EINVAL;
		if (i)
			fputc(',', out);
		json_fde(out, d, h, &fde);
	}
	fprintf(out, "]}\n");
	return ferror(out) ? -EIO : 0;
}

int sframe_dump__json_error(FILE *out, const struct sframe_dump_meta *meta, int err,
			    const struct sframe_error *serr, const char *message)
{
	const char *ename = glibc_errname(err < 0 ? -err : err);

	json_meta(out, meta);
	fprintf(out, ",\"error\":{\"errno\":");
	json_str(out, ename ? ename : "unknown");
	if (serr && serr->code != SFRAME_ERR_NONE) {
		fprintf(out, ",\"code\":");
		json_str(out, sframe_errcode__name(serr->code));
		fprintf(out, ",\"offset\":%" PRIu64, serr->offset);
	}
	fprintf(out, ",\"message\":");
	json_str(out, message ? message : "");
	fprintf(out, "}}\n");
	return ferror(out) ? -EIO : 0;
}
