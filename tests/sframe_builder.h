/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SFrame test kit:
 * - sfb_build(): a tiny section writer. It writes every field byte by byte from
 *   a plain description, so a test can build valid V1/V2/V3 sections in either
 *   byte order and then break exactly one thing. It deliberately accepts
 *   out-of-range values (FRE type 15, data-word size 3, 15 data words,
 *   unsorted functions, ...): producing invalid input is its purpose.
 * - sfb_standard(): a section with one function of each kind.
 * - sfb_expect_section(): the decoder must read back exactly what was built.
 * - sfb_check_invariants(): what any section a decoder accepts must satisfy.
 * - sfb_decode(), sfb_corrupt(): decode an exactly-sized copy; seeded damage.
 *
 * The writer shares no code with the decoder: only the constants of sframe.h.
 */
#ifndef SFBPF_SFRAME_BUILDER_H
#define SFBPF_SFRAME_BUILDER_H

#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe/sframe.h"

#define SFB_MAX_FUNCS 8
#define SFB_MAX_FRES 8
#define SFB_MAX_SIZE 4096

/* Header field offsets (the same in every version). */
#define SFB_H_MAGIC 0
#define SFB_H_VERSION 2
#define SFB_H_FLAGS 3
#define SFB_H_ABI 4
#define SFB_H_FIXED_FP 5
#define SFB_H_FIXED_RA 6
#define SFB_H_AUXHDR_LEN 7
#define SFB_H_NUM_FDES 8
#define SFB_H_NUM_FRES 12
#define SFB_H_FRE_LEN 16
#define SFB_H_FDEOFF 20
#define SFB_H_FREOFF 24

struct sfb_fre {
	uint32_t start;
	uint8_t base; /* fre_cfa_base_reg_id: 0 = FP, 1 = SP */
	uint8_t size_code; /* SFRAME_FRE_DATAWORD_*; 3 is written as 4-byte words */
	uint8_t count; /* number of data words, 0..15 */
	bool mangled_ra;
	int32_t words[SFRAME_FRE_MAX_DATAWORDS];
};

struct sfb_func {
	int64_t start; /* function start, relative to the section's first byte */
	uint32_t size;
	uint8_t fre_type; /* 0..15; 3..15 are written with 4-byte starts */
	uint8_t pctype;
	uint8_t pauth_key;
	bool signal; /* V3 only */
	uint8_t info2; /* V3 only: FDE type in bits 0-4, and the unused bits */
	uint8_t rep_size; /* V2 and V3 */
	uint32_t nfres;
	struct sfb_fre fres[SFB_MAX_FRES];
};

struct sfb_sect {
	uint8_t version;
	uint8_t flags;
	uint8_t abi;
	bool big_endian;
	int8_t fixed_fp;
	int8_t fixed_ra;
	uint8_t auxhdr_len; /* written as that many 0xaa bytes */
	uint32_t nfuncs; /* FDEs and their FREs are written in array order */
	struct sfb_func funcs[SFB_MAX_FUNCS];
};

/* The built bytes, and where everything landed (absolute section offsets). */
struct sfb_out {
	uint8_t buf[SFB_MAX_SIZE];
	size_t size;
	bool big_endian;
	size_t fde_size; /* 17, 20 or 16 */
	size_t fde_sub; /* start of the FDE sub-section */
	size_t fre_sub; /* start of the FRE sub-section */
	size_t fde[SFB_MAX_FUNCS]; /* FDE (V3: FDE index entry) of function i */
	size_t attr[SFB_MAX_FUNCS]; /* V3: FDE attribute; before V3: first FRE */
	size_t fre[SFB_MAX_FUNCS][SFB_MAX_FRES]; /* FRE j of function i */
	size_t fre_end[SFB_MAX_FUNCS]; /* one past function i's last FRE byte */
	uint32_t num_fres;
	uint32_t fre_len;
};

/* Store / load an unsigned value of width bytes in the section's byte order. */
static inline void sfb_put(struct sfb_out *o, size_t off, unsigned int width, uint64_t v)
{
	for (unsigned int k = 0; k < width && off + k < SFB_MAX_SIZE; k++) {
		unsigned int shift = o->big_endian ? 8 * (width - 1 - k) : 8 * k;

		o->buf[off + k] = (uint8_t)(v >> shift);
	}
}

static inline uint64_t sfb_get(const struct sfb_out *o, size_t off, unsigned int width)
{
	uint64_t v = 0;

	for (unsigned int k = 0; k < width; k++) {
		unsigned int shift = o->big_endian ? 8 * (width - 1 - k) : 8 * k;

		v |= (uint64_t)o->buf[off + k] << shift;
	}
	return v;
}

static inline unsigned int sfb_fre_start_width(uint8_t fre_type)
{
	return fre_type == SFRAME_FRE_TYPE_ADDR1 ? 1 : fre_type == SFRAME_FRE_TYPE_ADDR2 ? 2 : 4;
}

static inline unsigned int sfb_word_width(uint8_t size_code)
{
	return size_code == SFRAME_FRE_DATAWORD_1B ? 1 :
	       size_code == SFRAME_FRE_DATAWORD_2B ? 2 : 4;
}

static inline uint8_t sfb_fre_info(const struct sfb_fre *f)
{
	return (uint8_t)((f->mangled_ra ? 0x80 : 0) | (f->size_code & 3) << 5 |
			 (f->count & 0xf) << 1 | (f->base & 1));
}

static inline uint8_t sfb_func_info(const struct sfb_sect *s, const struct sfb_func *fn)
{
	uint8_t info = (uint8_t)((fn->pauth_key & 1) << 5 | (fn->pctype & 1) << 4 |
				 (fn->fre_type & 0xf));

	if (s->version == SFRAME_VERSION_3 && fn->signal)
		info |= 0x80;
	return info;
}

/* Size of one FDE entry in the FDE sub-section. */
static inline size_t sfb_fde_size(uint8_t version)
{
	return version == SFRAME_VERSION_1 ? SFRAME_V1_FDE_SIZE :
	       version == SFRAME_VERSION_2 ? SFRAME_V2_FDE_SIZE :
					     SFRAME_V3_FDE_INDEX_SIZE;
}

/* Write one function's FREs (after its V3 attribute) at o->size. */
static inline int sfb_write_fres(const struct sfb_sect *s, int i, struct sfb_out *o)
{
	const struct sfb_func *fn = &s->funcs[i];
	unsigned int sw = sfb_fre_start_width(fn->fre_type);

	if (o->size + SFRAME_V3_FDE_ATTR_SIZE > SFB_MAX_SIZE)
		return -1;
	if (s->version == SFRAME_VERSION_3) {
		sfb_put(o, o->size, 2, fn->nfres);
		o->buf[o->size + 2] = sfb_func_info(s, fn);
		o->buf[o->size + 3] = fn->info2;
		o->buf[o->size + 4] = fn->rep_size;
		o->size += SFRAME_V3_FDE_ATTR_SIZE;
	}
	for (uint32_t j = 0; j < fn->nfres; j++) {
		const struct sfb_fre *f = &fn->fres[j];
		unsigned int ww = sfb_word_width(f->size_code);

		if (o->size + sw + 1 + SFRAME_FRE_MAX_DATAWORDS * 4 > SFB_MAX_SIZE)
			return -1;
		o->fre[i][j] = o->size;
		sfb_put(o, o->size, sw, f->start);
		o->buf[o->size + sw] = sfb_fre_info(f);
		o->size += sw + 1;
		for (unsigned int k = 0; k < f->count; k++, o->size += ww)
			sfb_put(o, o->size, ww, (uint32_t)f->words[k]);
	}
	o->fre_end[i] = o->size;
	o->num_fres += fn->nfres;
	return 0;
}

/* Fill in function i's FDE (its start_fre_off is known only now). */
static inline void sfb_write_fde(const struct sfb_sect *s, int i, struct sfb_out *o)
{
	const struct sfb_func *fn = &s->funcs[i];
	size_t at = o->fde[i];
	int64_t start = fn->start;
	uint32_t fre_off = (uint32_t)(o->attr[i] - o->fre_sub);

	/* PCREL: the offset is from the start field itself, else from byte 0. */
	if (s->flags & SFRAME_F_FDE_FUNC_START_PCREL)
		start -= (int64_t)at;
	if (s->version == SFRAME_VERSION_3) {
		sfb_put(o, at, 8, (uint64_t)start);
		sfb_put(o, at + 8, 4, fn->size);
		sfb_put(o, at + 12, 4, fre_off);
		return;
	}
	sfb_put(o, at, 4, (uint32_t)start);
	sfb_put(o, at + 4, 4, fn->size);
	sfb_put(o, at + 8, 4, fre_off);
	sfb_put(o, at + 12, 4, fn->nfres);
	o->buf[at + 16] = sfb_func_info(s, fn);
	if (s->version == SFRAME_VERSION_2) {
		o->buf[at + 17] = fn->rep_size;
		sfb_put(o, at + 18, 2, 0);
	}
}

/* Build s into o: header, aux header, FDEs, then FREs. Returns 0 or -1 if too big. */
static inline int sfb_build(const struct sfb_sect *s, struct sfb_out *o)
{
	memset(o, 0, sizeof(*o));
	o->big_endian = s->big_endian;
	o->fde_size = sfb_fde_size(s->version);
	o->fde_sub = SFRAME_HEADER_SIZE + s->auxhdr_len;
	o->fre_sub = o->fde_sub + s->nfuncs * o->fde_size;
	if (s->nfuncs > SFB_MAX_FUNCS || o->fre_sub > SFB_MAX_SIZE)
		return -1;
	memset(o->buf + SFRAME_HEADER_SIZE, 0xaa, s->auxhdr_len);
	o->size = o->fre_sub;
	for (uint32_t i = 0; i < s->nfuncs; i++) {
		if (s->funcs[i].nfres > SFB_MAX_FRES)
			return -1;
		o->fde[i] = o->fde_sub + i * o->fde_size;
		o->attr[i] = o->size;
		if (sfb_write_fres(s, i, o))
			return -1;
		sfb_write_fde(s, i, o);
	}
	o->fre_len = (uint32_t)(o->size - o->fre_sub);

	sfb_put(o, SFB_H_MAGIC, 2, SFRAME_MAGIC);
	o->buf[SFB_H_VERSION] = s->version;
	o->buf[SFB_H_FLAGS] = s->flags;
	o->buf[SFB_H_ABI] = s->abi;
	o->buf[SFB_H_FIXED_FP] = (uint8_t)s->fixed_fp;
	o->buf[SFB_H_FIXED_RA] = (uint8_t)s->fixed_ra;
	o->buf[SFB_H_AUXHDR_LEN] = s->auxhdr_len;
	sfb_put(o, SFB_H_NUM_FDES, 4, s->nfuncs);
	sfb_put(o, SFB_H_NUM_FRES, 4, o->num_fres);
	sfb_put(o, SFB_H_FRE_LEN, 4, o->fre_len);
	/* Offsets count from the end of the auxiliary header; FDEs come first. */
	sfb_put(o, SFB_H_FDEOFF, 4, 0);
	sfb_put(o, SFB_H_FREOFF, 4, o->fre_sub - o->fde_sub);
	return 0;
}


/* ---- a standard section: one of each kind of function ---- */

#define SFB_FP 0
#define SFB_SP 1
#define SFB_W1 SFRAME_FRE_DATAWORD_1B
#define SFB_W2 SFRAME_FRE_DATAWORD_2B
#define SFB_W4 SFRAME_FRE_DATAWORD_4B

static inline void sfb_add_fre(struct sfb_func *fn, uint32_t start, uint8_t base,
			       uint8_t size_code, uint8_t count, const int32_t *words)
{
	struct sfb_fre *f = &fn->fres[fn->nfres++];

	*f = (struct sfb_fre){ .start = start, .base = base, .size_code = size_code,
			       .count = count };
	memcpy(f->words, words, count * sizeof(*words));
}

static inline struct sfb_func *sfb_add_func(struct sfb_sect *s, int64_t start, uint32_t size,
					    uint8_t fre_type)
{
	struct sfb_func *fn = &s->funcs[s->nfuncs++];

	*fn = (struct sfb_func){ .start = start, .size = size, .fre_type = fre_type };
	return fn;
}

static inline bool sfb_aarch64(uint8_t abi)
{
	return abi == SFRAME_ABI_AARCH64_ENDIAN_BIG || abi == SFRAME_ABI_AARCH64_ENDIAN_LITTLE;
}

/* Data words of a default FDE that tracks all it can: AMD64 CFA, FP; else CFA, RA, FP. */
static inline uint8_t sfb_full_count(uint8_t abi)
{
	return abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE ? 2 : 3;
}

static inline void sfb_add_full_fre(struct sfb_func *fn, uint8_t abi, uint32_t start,
				    uint8_t base, uint8_t size_code, int32_t cfa, int32_t fp)
{
	int32_t w[3] = { cfa, -8, fp };

	if (abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		w[1] = fp;
	sfb_add_fre(fn, start, base, size_code, sfb_full_count(abi), w);
}

/* Index of the small ADDR1 function that tests break; the PLT-like one precedes it. */
static inline uint32_t sfb_small_idx(const struct sfb_sect *s)
{
	return s->version == SFRAME_VERSION_3 ? 3 : 2;
}

/* V3 AMD64/s390x: a flexible FDE exercising padding, all three rules and reg 16. */
static inline void sfb_add_flex(struct sfb_sect *s)
{
	bool amd64 = s->abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	struct sfb_func *fn = sfb_add_func(s, -0x1600, 0x80, SFRAME_FRE_TYPE_ADDR1);
	int32_t c_sp = (amd64 ? 7 : 15) << 3 | 1, c_fp = (amd64 ? 6 : 11) << 3 | 1;

	fn->info2 = SFRAME_FDE_TYPE_FLEX;
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 2, (int32_t[]){ c_sp, 8 });
	/* CFA, no RA rule (one padding word), FP = *(CFA - 16). */
	sfb_add_fre(fn, 1, SFB_SP, SFB_W1, 5, (int32_t[]){ c_sp, 16, 0, 2, -16 });
	sfb_add_fre(fn, 8, SFB_FP, SFB_W2, 6, (int32_t[]){ c_fp, 16, 2, -8, 2, -16 });
	/* Control word 0x83 in one byte: register 16, deref; it must be read unsigned. */
	sfb_add_fre(fn, 0x20, SFB_FP, SFB_W1, 6, (int32_t[]){ 0x83, 8, 2, -8, 2, -16 });
}

/*
 * Functions by start (relative to the section; text lies below it):
 * [V3: outermost, no FREs], big (ADDR4), PLT-like (PCMASK from V2 on),
 * small (ADDR1), mid (ADDR2), [V3 AMD64/s390x: flexible]. The section's last
 * FRE has 1- or 2-byte data words, so widening them runs past the end.
 */
static inline void sfb_standard(struct sfb_sect *s, uint8_t version, uint8_t abi,
				bool big_endian, uint8_t flags)
{
	bool aarch64 = sfb_aarch64(abi);
	struct sfb_func *fn;

	*s = (struct sfb_sect){ .version = version, .flags = flags, .abi = abi,
				.big_endian = big_endian,
				.fixed_ra = abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE ? -8 : 0 };
	if (version == SFRAME_VERSION_3)
		sfb_add_func(s, -0x50000, 0x10, SFRAME_FRE_TYPE_ADDR1);

	fn = sfb_add_func(s, -0x40000, 0x20000, SFRAME_FRE_TYPE_ADDR4);
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	/* No data words (RA undefined) exists from V2 on. */
	sfb_add_fre(fn, 0x100, SFB_SP, SFB_W1, version > 1 ? 0 : 1, (int32_t[]){ 8 });
	sfb_add_full_fre(fn, abi, 0x10010, SFB_FP, SFB_W2, 0x1010, -0x100);
	sfb_add_fre(fn, 0x1ffff, SFB_SP, SFB_W4, 1, (int32_t[]){ -5 });

	fn = sfb_add_func(s, -0x3000, 0x40, SFRAME_FRE_TYPE_ADDR1);
	if (version > 1) {
		fn->pctype = SFRAME_FDE_PCTYPE_MASK;
		fn->rep_size = 16;
	}
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 16 });
	sfb_add_fre(fn, 6, SFB_SP, SFB_W1, 1, (int32_t[]){ 24 });

	fn = sfb_add_func(s, -0x2f00, 0x30, SFRAME_FRE_TYPE_ADDR1);
	fn->signal = true;
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	sfb_add_full_fre(fn, abi, 1, SFB_SP, SFB_W1, 16, -16);
	sfb_add_full_fre(fn, abi, 4, SFB_FP, SFB_W1, 16, -16);
	sfb_add_fre(fn, 0x2f, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	fn->fres[1].mangled_ra = fn->fres[2].mangled_ra = aarch64;

	fn = sfb_add_func(s, -0x2e00, 0x1234, SFRAME_FRE_TYPE_ADDR2);
	fn->pauth_key = aarch64;
	sfb_add_fre(fn, 0, SFB_SP, SFB_W1, 1, (int32_t[]){ 8 });
	sfb_add_fre(fn, 0x101, SFB_SP, SFB_W2, 1, (int32_t[]){ 0x1008 });
	sfb_add_full_fre(fn, abi, 0x1000, SFB_FP, SFB_W4, 0x12345, -0x10000);
	sfb_add_fre(fn, 0x1233, SFB_SP, SFB_W1, 1, (int32_t[]){ -128 });

	if (version == SFRAME_VERSION_3 && !aarch64)
		sfb_add_flex(s);
}

/* ---- what any section a decoder accepts must satisfy ---- */

struct sfb_span {
	uint64_t start, end;
};

static inline int sfb_cmp_span(const void *a, const void *b)
{
	const struct sfb_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Walk one FDE's FREs; whatever a validated decoder hands out must be sane. */
static inline const char *sfb_check_fres(const struct sframe_decoder *d,
					 const struct sframe_fde *fde, uint64_t *total)
{
	struct sframe_fre_iter it;
	struct sframe_fre fre;
	uint32_t n = 0, prev = 0;

	sframe_fre_iter__init(&it, d, fde);
	if (fde->reserved) {
		/* Skipped: no FREs, but they count towards sfh_num_fres. */
		*total += fde->num_fres;
		return sframe_fre_iter__next(&it, &fre) ? "a reserved-type FDE yields FREs" : NULL;
	}
	while (sframe_fre_iter__next(&it, &fre)) {
		if (n++ >= fde->num_fres)
			return "iterator yields more FREs than num_fres";
		/* Equal starts (the later applies) and a start at the end are allowed. */
		if (fre.start_off < prev)
			return "FRE starts decreasing";
		if (fre.start_off > fde->func_size)
			return "FRE start past the function size";
		if (fre.end_off < fre.start_off)
			return "FRE ends before it starts";
		if (fre.dataword_size != 1 && fre.dataword_size != 2 && fre.dataword_size != 4)
			return "bad data-word size";
		if (fre.dataword_count > SFRAME_FRE_MAX_DATAWORDS)
			return "too many data words";
		prev = fre.start_off;
	}
	if (n != fde->num_fres)
		return "iterator yields fewer FREs than num_fres";
	*total += n;
	return NULL;
}

/* Invariants every accepted section must satisfy. Returns NULL or what is wrong. */
static inline const char *sfb_check_invariants(const struct sframe_decoder *d)
{
	const struct sframe_header *h = sframe_decoder__header(d);
	uint32_t n = sframe_decoder__num_fdes(d);
	struct sframe_fde fde, found;
	struct sfb_span *spans;
	const char *why = NULL;
	uint64_t total = 0;

	if (n != h->num_fdes)
		return "num_fdes differs from the header";
	if (sframe_decoder__fde(d, n, &fde) != -ERANGE)
		return "fde(num_fdes) is not -ERANGE";
	spans = calloc(n ? n : 1, sizeof(*spans));
	for (uint32_t i = 0; i < n && !why; i++) {
		if (sframe_decoder__fde(d, i, &fde))
			why = "fde(i) failed";
		else if ((fde.fre_type > SFRAME_FRE_TYPE_ADDR4) !=
			 (fde.reserved == SFRAME_FDE_RESERVED_FRE_TYPE))
			why = "reserved FRE type not marked reserved";
		else if (fde.fde_type > SFRAME_FDE_TYPE_FLEX && !fde.reserved)
			why = "unknown FDE type not marked reserved";
		else if (!fde.reserved && fde.pctype == SFRAME_FDE_PCTYPE_MASK && h->version > 1 &&
			 !fde.rep_size)
			why = "PCMASK with rep_size 0 accepted";
		else if (i && (h->flags & SFRAME_F_FDE_SORTED) &&
			 fde.func_start < spans[i - 1].start)
			why = "FDE_SORTED but not sorted";
		else if (fde.func_start + fde.func_size < fde.func_start)
			why = "function end overflows";
		else
			why = sfb_check_fres(d, &fde, &total);
		spans[i] = (struct sfb_span){ fde.func_start, fde.func_start + fde.func_size };
		if (!why && fde.func_size &&
		    (sframe_decoder__find_fde(d, fde.func_start, &found) < 0 ||
		     found.func_start != fde.func_start))
			why = "find_fde misses a function start";
	}
	/* Unsorted sections (relocatable objects) may overlap: every text section starts at 0. */
	qsort(spans, n, sizeof(*spans), sfb_cmp_span);
	for (uint32_t i = 1; i < n && !why && (h->flags & SFRAME_F_FDE_SORTED); i++)
		if (spans[i].start < spans[i - 1].end)
			why = "overlapping functions accepted";
	if (!why && total != h->num_fres)
		why = "FRE total differs from sfh_num_fres";
	free(spans);
	return why;
}

/* ---- reading a built section back through the decoder ---- */

static inline bool sfb_why(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool sfb_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return false;
}

static inline int64_t sfb_sext(uint32_t v, unsigned int width)
{
	unsigned int shift = 64 - 8 * width;

	return (int64_t)((uint64_t)v << shift) >> shift;
}

static inline bool sfb_expect_words(const struct sfb_fre *f, uint32_t j,
				    const struct sframe_fre *got, char *why, size_t len)
{
	unsigned int ww = sfb_word_width(f->size_code);
	uint32_t mask = (uint32_t)(((uint64_t)1 << 8 * ww) - 1);

	for (unsigned int k = 0; k < f->count; k++) {
		uint32_t u = (uint32_t)f->words[k] & mask;

		if (got->udata[k] != u || got->data[k] != sfb_sext(u, ww))
			return sfb_why(why, len, "FRE %u word %u: %d/%#x, want %#x", j, k,
				       got->data[k], got->udata[k], u);
	}
	return true;
}

/* FRE j of fn: raw fields, data words, and the rules that follow from them directly. */
static inline bool sfb_expect_fre(const struct sfb_sect *s, const struct sfb_func *fn,
				  uint32_t j, const struct sframe_fre *got, char *why, size_t len)
{
	const struct sfb_fre *f = &fn->fres[j];
	unsigned int ww = sfb_word_width(f->size_code);
	uint32_t end = j + 1 < fn->nfres ? fn->fres[j + 1].start :
		       fn->pctype == SFRAME_FDE_PCTYPE_MASK ? fn->rep_size : fn->size;
	int64_t cfa = sfb_sext((uint32_t)f->words[0], ww);

	if (got->index != j || got->start_off != f->start || got->end_off != end ||
	    got->info != sfb_fre_info(f) || got->cfa_base_reg_id != f->base ||
	    got->dataword_size != ww || got->dataword_count != f->count ||
	    got->mangled_ra != f->mangled_ra)
		return sfb_why(why, len, "FRE %u: start %#x end %#x info %#x size %u count %u",
			       j, got->start_off, got->end_off, got->info, got->dataword_size,
			       got->dataword_count);
	if (!sfb_expect_words(f, j, got, why, len))
		return false;
	if (s->abi == SFRAME_ABI_S390X_ENDIAN_BIG)
		cfa = cfa * SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR +
		      SFRAME_S390X_CFA_OFFSET_ADJUSTMENT;
	if (fn->info2 == SFRAME_FDE_TYPE_DEFAULT && f->count &&
	    (got->cfa.kind != SFRAME_RULE_OFFSET || got->cfa.offset != cfa ||
	     got->cfa.base != (f->base ? SFRAME_BASE_SP : SFRAME_BASE_FP)))
		return sfb_why(why, len, "FRE %u: CFA rule kind %u base %u offset %" PRId64, j,
			       got->cfa.kind, got->cfa.base, got->cfa.offset);
	if (s->version > 1 && !f->count && got->ra.kind != SFRAME_RULE_UNDEFINED)
		return sfb_why(why, len, "FRE %u: no data words but RA not undefined", j);
	return true;
}

/* What struct sframe_fde.reserved must say for fn. */
static inline uint8_t sfb_reserved(const struct sfb_sect *s, const struct sfb_func *fn)
{
	if (fn->fre_type > SFRAME_FRE_TYPE_ADDR4)
		return SFRAME_FDE_RESERVED_FRE_TYPE;
	if (s->version == 3 && (fn->info2 & 0x1f) > SFRAME_FDE_TYPE_FLEX)
		return SFRAME_FDE_RESERVED_FDE_TYPE;
	return SFRAME_FDE_OK;
}

static inline bool sfb_expect_fde(const struct sfb_sect *s, const struct sfb_out *o,
				  uint64_t addr, uint32_t i, const struct sframe_fde *got,
				  char *why, size_t len)
{
	const struct sfb_func *fn = &s->funcs[i];
	bool pcrel = s->flags & SFRAME_F_FDE_FUNC_START_PCREL, v3 = s->version == 3;
	int64_t field = fn->start - (pcrel ? (int64_t)o->fde[i] : 0);

	if (!v3)
		field = (int32_t)field;
	if (got->index != i || got->func_start != addr + (uint64_t)fn->start ||
	    got->func_start_field != field || got->func_size != fn->size ||
	    got->start_fre_off != o->attr[i] - o->fre_sub || got->num_fres != fn->nfres ||
	    got->info != sfb_func_info(s, fn) || got->info2 != (v3 ? fn->info2 : 0) ||
	    got->fre_type != fn->fre_type || got->pctype != fn->pctype ||
	    got->fde_type != (fn->info2 & 0x1f) || got->rep_size != fn->rep_size ||
	    got->pauth_key != fn->pauth_key || got->signal != (v3 && fn->signal) ||
	    got->reserved != sfb_reserved(s, fn))
		return sfb_why(why, len,
			       "FDE %u: start %#" PRIx64 " field %" PRId64 " size %#x fre_off %u "
			       "num_fres %u info %#x info2 %#x rep %u",
			       i, got->func_start, got->func_start_field, got->func_size,
			       got->start_fre_off, got->num_fres, got->info, got->info2,
			       got->rep_size);
	return true;
}

static inline bool sfb_expect_header(const struct sfb_sect *s, const struct sfb_out *o,
				     const struct sframe_header *h, char *why, size_t len)
{
	bool host_be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

	if (h->magic != SFRAME_MAGIC || h->version != s->version || h->flags != s->flags ||
	    h->abi_arch != s->abi || h->cfa_fixed_fp_offset != s->fixed_fp ||
	    h->cfa_fixed_ra_offset != s->fixed_ra || h->auxhdr_len != s->auxhdr_len ||
	    h->num_fdes != s->nfuncs || h->num_fres != o->num_fres || h->fre_len != o->fre_len ||
	    h->fdeoff != 0 || h->freoff != o->fre_sub - o->fde_sub ||
	    h->foreign_endian != (s->big_endian != host_be))
		return sfb_why(why, len,
			       "header: v%u flags %#x abi %u fdes %u fres %u fre_len %u freoff %u",
			       h->version, h->flags, h->abi_arch, h->num_fdes, h->num_fres,
			       h->fre_len, h->freoff);
	return true;
}

/* Function i's FREs, then a lookup of its last FRE by PC. */
static inline bool sfb_expect_fres(const struct sframe_decoder *d, const struct sfb_sect *s,
				   uint32_t i, const struct sframe_fde *fde, char *why,
				   size_t len)
{
	const struct sfb_func *fn = &s->funcs[i];
	struct sframe_fre_iter it;
	struct sframe_fre fre;
	uint32_t j = 0;

	sframe_fre_iter__init(&it, d, fde);
	if (sfb_reserved(s, fn)) {
		if (sframe_fre_iter__next(&it, &fre) ||
		    !sframe_decoder__find_fre(d, fde, fde->func_start, &fre))
			return sfb_why(why, len, "FDE %u: reserved type, yet FREs", i);
		return true;
	}
	for (; sframe_fre_iter__next(&it, &fre); j++) {
		if (j >= fn->nfres)
			return sfb_why(why, len, "FDE %u: more than %u FREs", i, fn->nfres);
		if (!sfb_expect_fre(s, fn, j, &fre, why, len))
			return false;
	}
	if (j != fn->nfres)
		return sfb_why(why, len, "FDE %u: %u FREs, want %u", i, j, fn->nfres);
	/* Of FREs at one start the last applies; one at the function's end covers nothing. */
	if (fn->nfres && fn->pctype == SFRAME_FDE_PCTYPE_INC && fn->fres[j - 1].start < fn->size &&
	    (sframe_decoder__find_fre(d, fde, fde->func_start + fn->fres[j - 1].start, &fre) ||
	     fre.index != j - 1))
		return sfb_why(why, len, "FDE %u: find_fre misses its last FRE", i);
	return true;
}

/* The decoder must hand back exactly what sfb_build() wrote. */
static inline bool sfb_expect_section(const struct sframe_decoder *d, const struct sfb_sect *s,
				      const struct sfb_out *o, uint64_t addr, char *why,
				      size_t len)
{
	struct sframe_fde fde;

	if (!sfb_expect_header(s, o, sframe_decoder__header(d), why, len))
		return false;
	for (uint32_t i = 0; i < s->nfuncs; i++) {
		if (sframe_decoder__fde(d, i, &fde))
			return sfb_why(why, len, "fde(%u) failed", i);
		if (!sfb_expect_fde(s, o, addr, i, &fde, why, len) ||
		    !sfb_expect_fres(d, s, i, &fde, why, len))
			return false;
	}
	return true;
}

/* ---- decoding a private copy, and corrupting sections ---- */

struct sfb_result {
	int rc;
	struct sframe_error err;
	const char *broken; /* accepted, but an invariant does not hold */
};

/* Decode an exactly-sized copy, so ASan sees any read past the end; check what is accepted. */
static inline struct sfb_result sfb_decode(const uint8_t *bytes, size_t size, uint64_t addr,
					       const struct sfb_sect *expect,
					       const struct sfb_out *layout, char *why,
					       size_t why_len)
{
	struct sfb_result r = { 0 };
	struct sframe_decoder *d = NULL;
	uint8_t *copy = malloc(size);

	if (size)
		memcpy(copy, bytes, size);
	memset(&r.err, 0, sizeof(r.err));
	r.rc = sframe_decoder__new(copy, size, addr, &d, &r.err);
	if (r.rc == 0) {
		r.broken = sfb_check_invariants(d);
		if (!r.broken && expect &&
		    !sfb_expect_section(d, expect, layout, addr, why, why_len))
			r.broken = why;
		sframe_decoder__free(d);
	}
	free(copy);
	return r;
}

/* A rejection must carry a real error code. */
static inline bool sfb_bad_rejection(const struct sfb_result *r)
{
	return r->rc && (r->rc >= 0 || r->err.code == SFRAME_ERR_NONE ||
			 r->err.code >= SFRAME_ERR__COUNT);
}

static inline uint64_t sfb_rng(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dULL;
}

/* Corrupt 1-3 bytes; a quarter of the time aim at the header, which steers everything. */
static inline void sfb_corrupt(uint8_t *buf, size_t size, uint64_t *rng, char *desc, size_t len)
{
	unsigned int nflips = 1 + sfb_rng(rng) % 3;
	size_t used = 0;

	for (unsigned int k = 0; k < nflips; k++) {
		uint64_t r = sfb_rng(rng);
		size_t pos = (r & 3) == 0 && size > SFRAME_HEADER_SIZE ?
			     (r >> 8) % SFRAME_HEADER_SIZE : (r >> 8) % size;
		uint8_t old = buf[pos];

		switch ((r >> 2) & 3) {
		case 0:
		case 1:
			buf[pos] ^= (uint8_t)(1u << ((r >> 4) & 7));
			break;
		case 2:
			buf[pos] = (uint8_t)(r >> 40);
			break;
		default:
			buf[pos] = (r >> 5) & 1 ? 0xff : 0x00;
		}
		used += (size_t)snprintf(desc + used, len - used, " [%zu] %#x->%#x", pos, old,
					 buf[pos]);
		if (used >= len)
			break;
	}
}

/* Outcomes of many decodes: accepted, or rejected by error code. */
struct sfb_tally {
	unsigned int n, accepted, by_code[SFRAME_ERR__COUNT + 1];
};

static inline void sfb_tally_add(struct sfb_tally *t, const struct sfb_result *r)
{
	t->n++;
	if (!r->rc)
		t->accepted++;
	else
		t->by_code[r->err.code < SFRAME_ERR__COUNT ? r->err.code : SFRAME_ERR__COUNT]++;
}

static inline const char *sfb_tally_str(const struct sfb_tally *t)
{
	static char s[512];
	size_t len = 0;

	s[0] = 0;
	for (int c = 1; c < SFRAME_ERR__COUNT && len < sizeof(s) - 40; c++)
		if (t->by_code[c])
			len += (size_t)snprintf(s + len, sizeof(s) - len, "%s%s %u",
						len ? ", " : "",
						sframe_errcode__name(c), t->by_code[c]);
	return s;
}

/* Distinct reasons why inputs were mishandled, with counts, and the first example. */
struct sfb_reasons {
	const char *why[8];
	unsigned int n[8], total;
	char first[448];
};

static inline void sfb_reasons_add(struct sfb_reasons *rs, const char *why, const char *desc)
{
	unsigned int k = 0;

	while (k < 8 && rs->why[k] && strcmp(rs->why[k], why))
		k++;
	if (k < 8) {
		rs->why[k] = why;
		rs->n[k]++;
	}
	if (!rs->total++)
		snprintf(rs->first, sizeof(rs->first), "%s: %s", desc, why);
}

static inline const char *sfb_reasons_str(const struct sfb_reasons *rs)
{
	static char s[512];
	size_t len = 0;

	for (unsigned int k = 0; k < 8 && rs->why[k] && len < sizeof(s) - 80; k++)
		len += (size_t)snprintf(s + len, sizeof(s) - len, "%s%s: %u", k ? ", " : "",
					rs->why[k], rs->n[k]);
	return s;
}

#endif /* SFBPF_SFRAME_BUILDER_H */
