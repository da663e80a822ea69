/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/malformed.c's one-defect cases: each breaks a built section (struct
 * mut: the builder's description and its bytes) in one specific way, and
 * names the error the decoder must give (mcases[]). Included once, by
 * malformed.c, after its configs and `current`.
 */
#ifndef SFBPF_TESTS_MALFORMED_CASES_H
#define SFBPF_TESTS_MALFORMED_CASES_H

/* ---- one-defect cases over built sections ---- */

struct mut {
	struct sfb_sect s;
	struct sfb_out o;
	uint64_t addr;
	size_t lo, hi; /* the error offset must fall in [lo, hi]; lo == NO_RANGE: any */
	uint32_t arg; /* struct mcase's arg */
};

struct mcase {
	const char *name;
	enum sframe_errcode want;
	bool (*apply)(struct mut *m); /* false: the case does not apply to this section */
	uint32_t arg; /* the value some cases write */
};

static void rebuild(struct mut *m)
{
	if (sfb_build(&m->s, &m->o)) {
		fprintf(stderr, "builder overflow in %s\n", current);
		exit(2);
	}
}

static void put(struct mut *m, size_t off, unsigned int width, uint64_t v)
{
	sfb_put(&m->o, off, width, v);
}

static bool at(struct mut *m, size_t lo, size_t hi)
{
	m->lo = lo;
	m->hi = hi;
	return true;
}

static bool v3(const struct mut *m)
{
	return m->s.version == 3;
}

static uint32_t fs(const struct mut *m)
{
	return sfb_small_idx(&m->s);
}

static uint32_t last(const struct mut *m)
{
	return m->s.nfuncs - 1;
}

/* Where function i's FDE info byte, and its FRE count, live. */
static size_t info_off(const struct mut *m, uint32_t i)
{
	return v3(m) ? m->o.attr[i] + 2 : m->o.fde[i] + 16;
}

static size_t num_fres_off(const struct mut *m, uint32_t i)
{
	return v3(m) ? m->o.attr[i] : m->o.fde[i] + 12;
}

static unsigned int num_fres_width(const struct mut *m)
{
	return v3(m) ? 2 : 4;
}

static size_t fre_off_field(const struct mut *m, uint32_t i)
{
	return m->o.fde[i] + (v3(m) ? 12 : 8);
}

/* Expected error offset: function i's info byte (k = 0), info2 (1) or rep_size (2). */
static bool at_info(struct mut *m, uint32_t i, unsigned int k)
{
	size_t off = v3(m) ? m->o.attr[i] + 2 + k : m->o.fde[i] + 16 + (k ? 1 : 0);

	return at(m, off, off);
}

/* Expected error offset range: function i's FDE (index entry in V3). */
static bool at_fde(struct mut *m, uint32_t i)
{
	return at(m, m->o.fde[i], m->o.fde[i] + m->o.fde_size - 1);
}

static bool at_fre(struct mut *m, uint32_t i, uint32_t j)
{
	size_t end = j + 1 < m->s.funcs[i].nfres ? m->o.fre[i][j + 1] : m->o.fre_end[i];

	return at(m, m->o.fre[i][j], end - 1);
}

static bool at_header(struct mut *m, size_t field, unsigned int width)
{
	return at(m, field, field + width - 1);
}

static uint32_t hdr(const struct mut *m, size_t field)
{
	return (uint32_t)sfb_get(&m->o, field, 4);
}

/* Valid sections. */
static bool c_valid(struct mut *m)
{
	(void)m;
	return true;
}

static bool c_auxhdr_valid(struct mut *m)
{
	m->s.auxhdr_len = 9;
	rebuild(m);
	return true;
}

static bool c_no_fdes(struct mut *m)
{
	m->s.nfuncs = 0;
	rebuild(m);
	return true;
}

static bool c_unsorted_unflagged(struct mut *m)
{
	struct sfb_func tmp = m->s.funcs[fs(m)];

	m->s.funcs[fs(m)] = m->s.funcs[fs(m) + 1];
	m->s.funcs[fs(m) + 1] = tmp;
	m->s.flags &= ~SORTED;
	rebuild(m);
	return true;
}

/* Header. */
static bool c_truncated_header(struct mut *m)
{
	m->o.size = SFRAME_HEADER_SIZE - 1;
	return at(m, 0, SFRAME_HEADER_SIZE);
}

static bool c_empty(struct mut *m)
{
	m->o.size = 0;
	return at(m, 0, 0);
}

static bool c_magic(struct mut *m)
{
	put(m, SFB_H_MAGIC, 2, m->arg);
	return at_header(m, SFB_H_MAGIC, 2);
}

static bool set_byte(struct mut *m, size_t off, uint8_t v)
{
	m->o.buf[off] = v;
	return at_header(m, off, 1);
}

static bool c_version(struct mut *m)
{
	return set_byte(m, SFB_H_VERSION, (uint8_t)m->arg);
}

static bool c_abi(struct mut *m)
{
	return set_byte(m, SFB_H_ABI, (uint8_t)m->arg);
}

/* Set one flag bit, where this version does not define it. */
static bool c_flag(struct mut *m)
{
	uint8_t defined = m->s.version == 1 ? 0x3 : m->s.version == 2 ? 0x7 : 0x5;

	return !(defined & m->arg) && set_byte(m, SFB_H_FLAGS, (uint8_t)(m->s.flags | m->arg));
}

/* One small function, so 255 auxiliary header bytes cannot fit. */
static bool c_auxhdr_past_end(struct mut *m)
{
	m->s.funcs[0] = m->s.funcs[fs(m)];
	m->s.nfuncs = 1;
	rebuild(m);
	m->o.buf[SFB_H_AUXHDR_LEN] = 255;
	return at(m, SFB_H_AUXHDR_LEN, SFRAME_HEADER_SIZE);
}

/* Header words: arg picks the field and the broken value. */
enum {
	H_FDES_PLUS_1,
	H_FDES_MAX,
	H_FDES_WRAP,
	H_FDEOFF_GT,
	H_FDEOFF_AT_FRES,
	H_FREOFF_PAST,
	H_FREOFF_HUGE,
	H_FRE_LEN_PLUS_1,
	H_FRE_LEN_WRAP,
	H_FRE_LEN_MINUS_1,
	H_NUM_FRES_PLUS_1,
	H_NUM_FRES_MINUS_1,
};

static bool c_hdr(struct mut *m)
{
	uint32_t freoff = hdr(m, SFB_H_FREOFF), fre_len = m->o.fre_len;
	uint64_t wrap_fdes = ((1ULL << 32) + m->o.fde_size - 1) / m->o.fde_size;
	const struct {
		size_t field;
		uint64_t v;
	} e[] = {
		[H_FDES_PLUS_1] = { SFB_H_NUM_FDES, m->s.nfuncs + 1 },
		[H_FDES_MAX] = { SFB_H_NUM_FDES, UINT32_MAX },
		/* num_fdes * FDE size wraps to a few bytes in 32 bits. */
		[H_FDES_WRAP] = { SFB_H_NUM_FDES, wrap_fdes },
		[H_FDEOFF_GT] = { SFB_H_FDEOFF, freoff + 1 },
		[H_FDEOFF_AT_FRES] = { SFB_H_FDEOFF, freoff },
		[H_FREOFF_PAST] = { SFB_H_FREOFF, m->o.size },
		[H_FREOFF_HUGE] = { SFB_H_FREOFF, UINT32_MAX - 3 },
		[H_FRE_LEN_PLUS_1] = { SFB_H_FRE_LEN, fre_len + 1 },
		/* FRE sub-section start + fre_len wraps to 0 in 32 bits. */
		[H_FRE_LEN_WRAP] = { SFB_H_FRE_LEN, (uint32_t)-m->o.fre_sub },
		[H_FRE_LEN_MINUS_1] = { SFB_H_FRE_LEN, fre_len - 1 },
		[H_NUM_FRES_PLUS_1] = { SFB_H_NUM_FRES, m->o.num_fres + 1 },
		[H_NUM_FRES_MINUS_1] = { SFB_H_NUM_FRES, m->o.num_fres - 1 },
	};

	put(m, e[m->arg].field, 4, e[m->arg].v);
	/* A short sfh_fre_len looks like alignment padding until an FRE runs past it. */
	if (m->arg == H_FRE_LEN_MINUS_1)
		return true;
	return at(m, SFB_H_NUM_FDES, SFRAME_HEADER_SIZE - 1);
}

static bool c_trailing_byte(struct mut *m)
{
	m->o.size++;
	return true;
}

/* Where an FDE's FREs start. */
static bool set_fre_off(struct mut *m, uint32_t i, uint32_t v)
{
	put(m, fre_off_field(m, i), 4, v);
	return at(m, m->o.fde[i], m->o.fde[i] + m->o.fde_size - 1);
}

/* arg 0: past the FREs; 1: at their end; 2: UINT32_MAX; 3: + V3 attribute wraps to 0. */
static bool c_fre_off(struct mut *m)
{
	const uint32_t v[] = { m->o.fre_len + 16, m->o.fre_len, UINT32_MAX, UINT32_MAX - 4 };

	return set_fre_off(m, fs(m), v[m->arg]);
}

static bool c_attr_past_end(struct mut *m)
{
	return v3(m) && set_fre_off(m, last(m), m->o.fre_len - 3);
}

/* FREs and data words running past the end of the section. */
static bool c_fres_past_end(struct mut *m)
{
	uint32_t i = last(m);

	put(m, num_fres_off(m, i), num_fres_width(m), m->s.funcs[i].nfres + 1);
	return at(m, m->o.fre_end[i] - 1, m->o.size);
}

static bool c_words_past_end(struct mut *m)
{
	uint32_t i = last(m), j = m->s.funcs[i].nfres - 1;
	size_t info = m->o.fre[i][j] + sfb_fre_start_width(m->s.funcs[i].fre_type);

	m->o.buf[info] = (uint8_t)((m->o.buf[info] & ~0x60) | SFB_W4 << 5);
	return at(m, m->o.fre[i][j], m->o.size);
}

/* FDE info bytes. */
static bool set_fre_type(struct mut *m, uint8_t type)
{
	size_t off = info_off(m, fs(m));

	m->o.buf[off] = (uint8_t)((m->o.buf[off] & 0xf0) | type);
	return at_info(m, fs(m), 0);
}

/*
 * A reserved FRE type skips that FDE, not the section: written through the
 * builder (which writes 4-byte starts for it) so the rest reads back exactly.
 */
static bool c_fre_type(struct mut *m)
{
	m->s.funcs[fs(m)].fre_type = (uint8_t)m->arg;
	rebuild(m);
	return true;
}

/* A skipped FDE's other fields go unchecked: a PCMASK rep_size of 0 must not be used. */
static bool c_fre_type_rep_0(struct mut *m)
{
	uint32_t plt = fs(m) - 1;

	if (m->s.version == 1)
		return false;
	m->s.funcs[plt].fre_type = (uint8_t)m->arg;
	m->s.funcs[plt].rep_size = 0;
	rebuild(m);
	return true;
}

/* A reserved FRE type whose FREs are not even 4-byte-start FREs: still only that FDE. */
static bool c_fre_type_garbage(struct mut *m)
{
	size_t first = m->o.fre[fs(m)][0];

	set_fre_type(m, (uint8_t)m->arg);
	memset(m->o.buf + first, 0xff, m->o.fre[fs(m) + 1][0] - first - (v3(m) ? 5 : 0));
	return true;
}

static bool c_rep_size_0(struct mut *m)
{
	uint32_t plt = fs(m) - 1;

	if (m->s.version == 1)
		return false;
	m->s.funcs[plt].rep_size = 0;
	rebuild(m);
	return at_info(m, plt, 2);
}

static bool set_fde_type(struct mut *m, uint8_t type)
{
	if (!v3(m))
		return false;
	m->s.funcs[fs(m)].info2 = type;
	rebuild(m);
	return at_info(m, fs(m), 1);
}

static bool c_fde_type(struct mut *m)
{
	return set_fde_type(m, (uint8_t)m->arg);
}

/* V3 info2's unused bits 5-7 are ignored: the FDE type is bits 0-4. */
static bool c_info2_unused(struct mut *m)
{
	return set_fde_type(m, (uint8_t)(m->arg | (m->s.funcs[fs(m)].info2 & 0x1f)));
}

/* FRE info bytes. */
static bool c_dataword_size_3(struct mut *m)
{
	m->s.funcs[fs(m)].fres[1].size_code = 3;
	rebuild(m);
	return at_fre(m, fs(m), 1);
}

static bool set_count(struct mut *m, uint32_t i, uint32_t j, uint8_t n)
{
	struct sfb_fre *f = &m->s.funcs[i].fres[j];

	for (unsigned int k = f->count; k < n; k++)
		f->words[k] = 8;
	f->count = n;
	rebuild(m);
	return at_fre(m, i, j);
}

/* arg data words (0: one more than the ABI's default FDE can use). */
static bool c_datawords(struct mut *m)
{
	return set_count(m, fs(m), 1, m->arg ? (uint8_t)m->arg : sfb_full_count(m->s.abi) + 1);
}

static bool has_flex(const struct mut *m)
{
	return v3(m) && m->s.funcs[last(m)].info2 == SFRAME_FDE_TYPE_FLEX;
}

static bool c_flex_datawords_7(struct mut *m)
{
	return has_flex(m) && set_count(m, last(m), 1, 7);
}

/*
 * Flexible FDE rules that cannot be decoded: arg 0-2 cut the CFA, RA or FP pair
 * short; arg 3 bases the CFA on the CFA itself rather than on a register.
 */
static bool c_flex_rule(struct mut *m)
{
	static const struct {
		uint8_t n;
		int32_t w[4];
	} bad[] = {
		{ 1, { 7 << 3 | 1 } },
		{ 3, { 7 << 3 | 1, 16, 2 } },
		{ 4, { 7 << 3 | 1, 16, 0, 2 } },
		{ 2, { 2, 16 } },
	};
	struct sfb_fre *f = &m->s.funcs[last(m)].fres[1];

	if (!has_flex(m))
		return false;
	memcpy(f->words, bad[m->arg].w, sizeof(bad[m->arg].w));
	f->count = bad[m->arg].n;
	rebuild(m);
	return at_fre(m, last(m), 1);
}

/* Function order and ranges. */
static bool c_unsorted(struct mut *m)
{
	c_unsorted_unflagged(m);
	m->s.flags |= SORTED;
	rebuild(m);
	return at(m, m->o.fde[fs(m)], m->o.fde[fs(m) + 1] + m->o.fde_size - 1);
}

static bool c_overlap(struct mut *m)
{
	m->s.funcs[fs(m)].size = 0x101;
	rebuild(m);
	return at(m, m->o.fde[fs(m)], m->o.fde[fs(m) + 1] + m->o.fde_size - 1);
}

static bool c_duplicate_start(struct mut *m)
{
	m->s.funcs[fs(m) + 1].start = m->s.funcs[fs(m)].start;
	rebuild(m);
	return at(m, m->o.fde[fs(m)], m->o.fde[fs(m) + 1] + m->o.fde_size - 1);
}

/* FRE start addresses: arg = FRE index << 16 | new start. */
static bool c_fre_start(struct mut *m)
{
	uint32_t j = m->arg >> 16;

	m->s.funcs[fs(m)].fres[j].start = m->arg & 0xffff;
	rebuild(m);
	return at_fre(m, fs(m), j);
}

static bool c_func_size_0(struct mut *m)
{
	m->s.funcs[fs(m)].size = 0;
	rebuild(m);
	/* gas emits size-0 functions with one FRE at 0 (empty CFI regions): FRE 1 is the error. */
	return at_fre(m, fs(m), 1);
}

/* Function addresses outside the 64-bit address space. */
static bool c_addr_past_top(struct mut *m)
{
	m->addr = UINT64_MAX - 0xfff;
	m->s.funcs[last(m)].start = 0xfc0; /* every function is at least 0x40 bytes */
	rebuild(m);
	return at_fde(m, last(m));
}

static bool c_addr_below_zero(struct mut *m)
{
	m->addr = 0x1000;
	return at_fde(m, 0);
}

/* s390x CFA words are scaled by 8: the extreme 4-byte words must not overflow. */
static bool c_s390x_cfa(struct mut *m)
{
	if (m->s.abi != S390X)
		return false;
	m->s.funcs[fs(m) + 1].fres[2].words[0] = (int32_t)m->arg;
	rebuild(m);
	return true;
}

#define OK SFRAME_ERR_NONE
/* Accepted, but the bytes differ from the builder's description: invariants only. */
#define OK_ANY SFRAME_ERR__COUNT
#define E(x) SFRAME_ERR_##x

static const struct mcase mcases[] = {
	{ "valid", OK, c_valid, 0 },
	{ "auxhdr-valid", OK, c_auxhdr_valid, 0 },
	{ "no-fdes", OK, c_no_fdes, 0 },
	{ "unsorted-unflagged", OK, c_unsorted_unflagged, 0 },
	{ "s390x-cfa-word-max", OK, c_s390x_cfa, INT32_MAX },
	{ "s390x-cfa-word-min", OK, c_s390x_cfa, (uint32_t)INT32_MIN },
	{ "empty", E(TRUNCATED_HEADER), c_empty, 0 },
	{ "truncated-header", E(TRUNCATED_HEADER), c_truncated_header, 0 },
	{ "bad-magic", E(BAD_MAGIC), c_magic, SFRAME_MAGIC + 1 },
	{ "zero-magic", E(BAD_MAGIC), c_magic, 0 },
	{ "version-0", E(BAD_VERSION), c_version, 0 },
	{ "version-4", E(BAD_VERSION), c_version, 4 },
	{ "version-255", E(BAD_VERSION), c_version, 255 },
	{ "flags-0x02", E(BAD_FLAGS), c_flag, 0x02 },
	{ "flags-0x04", E(BAD_FLAGS), c_flag, 0x04 },
	{ "flags-0x08", E(BAD_FLAGS), c_flag, 0x08 },
	{ "flags-0x10", E(BAD_FLAGS), c_flag, 0x10 },
	{ "flags-0x20", E(BAD_FLAGS), c_flag, 0x20 },
	{ "flags-0x40", E(BAD_FLAGS), c_flag, 0x40 },
	{ "flags-0x80", E(BAD_FLAGS), c_flag, 0x80 },
	{ "abi-0", E(BAD_ABI), c_abi, 0 },
	{ "abi-5", E(BAD_ABI), c_abi, 5 },
	{ "abi-255", E(BAD_ABI), c_abi, 255 },
	{ "auxhdr-past-end", E(AUXHDR_BOUNDS), c_auxhdr_past_end, 0 },
	{ "fdeoff-gt-freoff", E(SUBSECTION_ORDER), c_hdr, H_FDEOFF_GT },
	{ "fdes-past-fres", E(FDE_BOUNDS), c_hdr, H_FDES_PLUS_1 },
	{ "fdeoff-at-fres", E(FDE_BOUNDS), c_hdr, H_FDEOFF_AT_FRES },
	{ "num-fdes-huge", E(FDE_BOUNDS), c_hdr, H_FDES_MAX },
	{ "num-fdes-wrap32", E(FDE_BOUNDS), c_hdr, H_FDES_WRAP },
	{ "freoff-past-end", E(FRE_BOUNDS), c_hdr, H_FREOFF_PAST },
	{ "freoff-huge", E(FRE_BOUNDS), c_hdr, H_FREOFF_HUGE },
	{ "fre-len-plus-1", E(FRE_BOUNDS), c_hdr, H_FRE_LEN_PLUS_1 },
	{ "fre-len-wrap32", E(FRE_BOUNDS), c_hdr, H_FRE_LEN_WRAP },
	{ "fre-len-minus-1", E(FRE_LEN), c_hdr, H_FRE_LEN_MINUS_1 },
	/* gas pads s390x sections to 8 bytes. */
	{ "trailing-byte", OK, c_trailing_byte, 0 },
	{ "fre-off-outside", E(FDE_FRE_OFF), c_fre_off, 0 },
	{ "fre-off-at-end", E(FDE_FRE_OFF), c_fre_off, 1 },
	{ "fre-off-huge", E(FDE_FRE_OFF), c_fre_off, 2 },
	{ "fre-off-wrap32", E(FDE_FRE_OFF), c_fre_off, 3 },
	{ "attr-past-end", E(FDE_FRE_OFF), c_attr_past_end, 0 },
	{ "fres-past-end", E(FRE_TRUNCATED), c_fres_past_end, 0 },
	{ "words-past-end", E(FRE_TRUNCATED), c_words_past_end, 0 },
	/* Reserved types skip their FDE (struct sframe_fde.reserved), not the section. */
	{ "fre-type-3", OK, c_fre_type, 3 },
	{ "fre-type-4", OK, c_fre_type, 4 },
	{ "fre-type-5", OK, c_fre_type, 5 },
	{ "fre-type-6", OK, c_fre_type, 6 },
	{ "fre-type-7", OK, c_fre_type, 7 },
	{ "fre-type-8", OK, c_fre_type, 8 },
	{ "fre-type-9", OK, c_fre_type, 9 },
	{ "fre-type-10", OK, c_fre_type, 10 },
	{ "fre-type-11", OK, c_fre_type, 11 },
	{ "fre-type-12", OK, c_fre_type, 12 },
	{ "fre-type-13", OK, c_fre_type, 13 },
	{ "fre-type-14", OK, c_fre_type, 14 },
	{ "fre-type-15", OK, c_fre_type, 15 },
	{ "fre-type-15-unreadable-fres", OK_ANY, c_fre_type_garbage, 15 },
	{ "fre-type-15-pcmask-rep-size-0", OK, c_fre_type_rep_0, 15 },
	{ "fde-type-2", OK, c_fde_type, 2 },
	{ "fde-type-3", OK, c_fde_type, 3 },
	{ "fde-type-16", OK, c_fde_type, 16 },
	{ "fde-type-31", OK, c_fde_type, 31 },
	{ "info2-unused-bits", OK, c_info2_unused, 0xe0 },
	{ "dataword-size-3", E(DATAWORD_SIZE), c_dataword_size_3, 0 },
	{ "datawords-15", E(DATAWORD_COUNT), c_datawords, 15 },
	{ "datawords-abi-max-plus-1", E(DATAWORD_COUNT), c_datawords, 0 },
	{ "flex-datawords-7", E(DATAWORD_COUNT), c_flex_datawords_7, 0 },
	{ "flex-cfa-pair-cut", E(FLEX_RULE), c_flex_rule, 0 },
	{ "flex-ra-pair-cut", E(FLEX_RULE), c_flex_rule, 1 },
	{ "flex-fp-pair-cut", E(FLEX_RULE), c_flex_rule, 2 },
	{ "flex-cfa-not-register", E(FLEX_RULE), c_flex_rule, 3 },
	{ "rep-size-0", E(REP_SIZE), c_rep_size_0, 0 },
	{ "unsorted", E(FDE_UNSORTED), c_unsorted, 0 },
	{ "overlap", E(FDE_OVERLAP), c_overlap, 0 },
	{ "duplicate-start", E(FDE_OVERLAP), c_duplicate_start, 0 },
	/* gas: two FREs at one address (zero-byte .p2align), one at the end (CFI after ret). */
	{ "fre-start-equal", OK, c_fre_start, 2 << 16 | 1 },
	{ "fre-start-decreasing", E(FRE_START_ORDER), c_fre_start, 2 << 16 | 0 },
	{ "fre-start-at-size", OK, c_fre_start, 3 << 16 | 0x30 },
	{ "fre-start-past-size", E(FRE_START_RANGE), c_fre_start, 3 << 16 | 0xff },
	{ "func-size-0", E(FRE_START_RANGE), c_func_size_0, 0 },
	{ "num-fres-plus-1", E(NUM_FRES), c_hdr, H_NUM_FRES_PLUS_1 },
	{ "num-fres-minus-1", E(NUM_FRES), c_hdr, H_NUM_FRES_MINUS_1 },
	{ "addr-past-top", E(ADDR_OVERFLOW), c_addr_past_top, 0 },
	/* readelf and libsframe's own test data treat starts modulo 2^64. */
	{ "addr-below-zero", OK, c_addr_below_zero, 0 },
};

#endif /* SFBPF_TESTS_MALFORMED_CASES_H */
