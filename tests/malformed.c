// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Malformed-input corpus for the SFrame decoder (issue 2).
 *
 * 1. Builds valid V1/V2/V3 sections (both byte orders, AMD64/AArch64/s390x)
 *    with tests/sframe_builder.h and proves they decode to what was written.
 * 2. Breaks each of them in one specific way per case and expects the
 *    specific enum sframe_errcode (and an offset near the broken field).
 * 3. Truncates built and real sections (files named on the command line) at
 *    every byte and flips random bytes: the decoder must reject every short
 *    prefix and never crash; whatever it accepts must satisfy its invariants.
 *
 * Every input is copied into an exactly-sized malloc'd buffer, so ASan sees
 * any read past the end. Output: PASS/FAIL/SKIP lines for tests/run.sh.
 *
 * Usage: malformed [--flips N] [--seed S] [NAME=FILE[@SECTION_ADDR]]...
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sframe/sframe.h"
#include "tables/flatten.h"
#include "sframe_builder.h"

#define SECT_ADDR 0x400000ULL
#define NO_RANGE SIZE_MAX
#define CURRENT_LEN 320
#define CHILD_FAILED 42 /* a child's exit status when it reported a FAIL */

#include "testlib.h"

/* What the child is decoding right now; shared, so the parent can name a crash. */
static char *current;

/*
 * Run fn in a child process, so that a sanitizer report or a signal fails
 * this group (naming the input being decoded) and the other groups still run.
 */
static void isolated(const char *group, void (*fn)(const void *), const void *arg)
{
	pid_t pid;
	int st;

	fflush(stdout);
	fflush(stderr);
	snprintf(current, CURRENT_LEN, "%s", group);
	pid = fork();
	if (pid == 0) {
		failures = 0;
		fn(arg);
		fflush(stdout);
		_exit(failures ? CHILD_FAILED : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		report(false, group, "cannot run a child: %s", strerror(errno));
		return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_FAILED) {
		failures++;
		return;
	}
	report(false, current, "crashed (%s %d; sanitizer report on stderr)",
	       WIFSIGNALED(st) ? "signal" : "exit status",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* ---- base sections ---- */

struct config {
	const char *name;
	uint8_t version;
	uint8_t abi;
	bool big_endian;
	uint8_t flags;
};

#define AMD64 SFRAME_ABI_AMD64_ENDIAN_LITTLE
#define A64LE SFRAME_ABI_AARCH64_ENDIAN_LITTLE
#define A64BE SFRAME_ABI_AARCH64_ENDIAN_BIG
#define S390X SFRAME_ABI_S390X_ENDIAN_BIG
#define SORTED SFRAME_F_FDE_SORTED
#define PCREL SFRAME_F_FDE_FUNC_START_PCREL

static const struct config configs[] = {
	{ "v1-amd64", 1, AMD64, false, SORTED },
	{ "v1-aarch64-be", 1, A64BE, true, SORTED | SFRAME_F_FRAME_POINTER },
	{ "v2-amd64", 2, AMD64, false, SORTED },
	{ "v2-pcrel-amd64", 2, AMD64, false, SORTED | PCREL },
	{ "v2-pcrel-aarch64-le", 2, A64LE, false, SORTED | PCREL },
	{ "v2-pcrel-s390x", 2, S390X, true, SORTED | PCREL },
	{ "v3-amd64", 3, AMD64, false, SORTED | PCREL },
	{ "v3-nopcrel-amd64", 3, AMD64, false, SORTED },
	{ "v3-aarch64-le", 3, A64LE, false, SORTED | PCREL },
	{ "v3-aarch64-be", 3, A64BE, true, SORTED | PCREL },
	{ "v3-s390x", 3, S390X, true, SORTED | PCREL },
};

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

struct case_arg {
	const struct config *c;
	const struct mcase *mc;
};

static void run_case(const void *arg)
{
	const struct config *c = ((const struct case_arg *)arg)->c;
	const struct mcase *mc = ((const struct case_arg *)arg)->mc;
	static struct mut m; /* large: keep off the stack */
	char why[200] = "";
	struct sfb_result r;
	const char *got;
	bool ok;

	snprintf(current, CURRENT_LEN, "%s/%s", c->name, mc->name);
	sfb_standard(&m.s, c->version, c->abi, c->big_endian, c->flags);
	rebuild(&m);
	m.addr = SECT_ADDR;
	m.lo = NO_RANGE;
	m.arg = mc->arg;
	if (!mc->apply(&m))
		return;
	r = sfb_decode(m.o.buf, m.o.size, m.addr, mc->want == OK ? &m.s : NULL, &m.o, why,
		       sizeof(why));
	got = r.rc ? sframe_errcode__name(r.err.code) : "none";
	ok = mc->want == OK || mc->want == OK_ANY;
	if (r.broken)
		report(false, current, "accepted but %s", r.broken);
	else if (ok || r.err.code != mc->want)
		report(ok && !r.rc, current, "expected %s got %s (offset %" PRIu64 ": %s)",
		       ok ? "none" : sframe_errcode__name(mc->want), got, r.err.offset, r.err.msg);
	else if (m.lo != NO_RANGE && (r.err.offset < m.lo || r.err.offset > m.hi))
		report(false, current, "%s at offset %" PRIu64 ", expected %zu..%zu (%s)", got,
		       r.err.offset, m.lo, m.hi, r.err.msg);
	else
		report(true, current, NULL);
}

/* ---- flexible-FDE register numbers past 8 bits ---- */

/*
 * A V3 flexible FRE whose CFA is based on DWARF register regnum (control
 * words up to 32 bits hold 29 bits of it). The decoder must keep the number
 * whole, and the flattener must not narrow it into the rule's 8-bit
 * cfa_regnum (65543 would become 7, the stack pointer): such a rule is
 * SFBPF_RULE_UNSUPPORTED.
 */
static void flex_regnum(const void *arg)
{
	uint32_t regnum = *(const uint32_t *)arg;
	static struct mut m;
	struct sframe_decoder *d = NULL;
	struct flat_table *t = NULL;
	const struct sfbpf_rule *rule;
	struct sframe_error err;
	struct sframe_fde f;
	struct sframe_fre fre;
	struct sfb_func *fn;
	int64_t row;

	snprintf(current, CURRENT_LEN, "flex-cfa-regnum-%u", regnum);
	sfb_standard(&m.s, 3, AMD64, false, SORTED | PCREL);
	fn = &m.s.funcs[last(&m)];
	fn->fres[1].size_code = SFRAME_FRE_DATAWORD_4B;
	fn->fres[1].words[0] = (int32_t)(regnum << 3 | 1);
	rebuild(&m);
	if (sframe_decoder__new(m.o.buf, m.o.size, SECT_ADDR, &d, &err)) {
		report(false, current, "rejected: %s", err.msg);
		return;
	}
	sframe_decoder__fde(d, last(&m), &f);
	if (sframe_decoder__find_fre(d, &f, f.func_start + fn->fres[1].start, &fre) ||
	    fre.cfa.regnum != regnum ||
	    fre.cfa.base != (regnum == 7 ? SFRAME_BASE_SP : SFRAME_BASE_REG)) {
		report(false, current, "decoded CFA register %u base %u", fre.cfa.regnum,
		       fre.cfa.base);
		goto out;
	}
	if (flat_table__from_sframe(d, &t)) {
		report(false, current, "flatten failed");
		goto out;
	}
	row = flat_table__lookup(t, (uint32_t)(f.func_start + fn->fres[1].start));
	rule = row >= 0 ? &t->rules[t->rows[row].rule] : NULL;
	if (!rule)
		report(false, current, "no row");
	else if (regnum > 255)
		report((rule->flags & SFBPF_RULE_UNSUPPORTED) && t->nr_unsupported_fres == 1,
		       current, "rule flags %#x cfa_reg %u cfa_regnum %u (%u unsupported)",
		       rule->flags, rule->cfa_reg, rule->cfa_regnum, t->nr_unsupported_fres);
	else
		report(!(rule->flags & SFBPF_RULE_UNSUPPORTED) && rule->cfa_regnum == regnum &&
			       rule->cfa_reg == SFBPF_REG_OTHER && !t->nr_unsupported_fres,
		       current, "rule flags %#x cfa_reg %u cfa_regnum %u", rule->flags,
		       rule->cfa_reg, rule->cfa_regnum);
out:
	flat_table__free(t);
	sframe_decoder__free(d);
}

/* ---- truncation and random corruption of whole sections ---- */

struct input {
	char name[128];
	const uint8_t *buf;
	size_t size;
	uint64_t addr;
	unsigned int flips;
	uint64_t seed;
};

/* The whole section must decode, and what it yields must be sane. */
static void decode_whole(const void *arg)
{
	const struct input *in = arg;
	struct sfb_result r;

	snprintf(current, CURRENT_LEN, "real/%s", in->name);
	r = sfb_decode(in->buf, in->size, in->addr, NULL, NULL, NULL, 0);
	if (r.rc)
		report(false, current, "%zu-byte section rejected: %s at %" PRIu64 ": %s",
		       in->size, sframe_errcode__name(r.err.code), r.err.offset, r.err.msg);
	else
		report(!r.broken, current, "accepted but %s", r.broken);
}

/* Every prefix shorter than the section must be rejected, with an error code. */
static void truncate_all(const void *arg)
{
	const struct input *in = arg;
	struct sfb_tally t = { 0 };
	size_t first_bad = SIZE_MAX;

	for (size_t len = 0; len < in->size; len++) {
		struct sfb_result r;

		snprintf(current, CURRENT_LEN, "truncate/%s: prefix %zu", in->name, len);
		r = sfb_decode(in->buf, len, in->addr, NULL, NULL, NULL, 0);
		sfb_tally_add(&t, &r);
		if ((!r.rc || sfb_bad_rejection(&r)) && first_bad == SIZE_MAX)
			first_bad = len;
	}
	snprintf(current, CURRENT_LEN, "truncate/%s", in->name);
	if (first_bad != SIZE_MAX)
		report(false, current, "prefix of %zu bytes not rejected properly (%u of %u "
		       "prefixes accepted)", first_bad, t.accepted, t.n);
	else
		printf("PASS: %s: %u prefixes rejected (%s)\n", current, t.n, sfb_tally_str(&t));
}

/* Seeded corruption: decode or reject with a code, never crash, never accept nonsense. */
static void flip_all(const void *arg)
{
	const struct input *in = arg;
	uint8_t *work = malloc(in->size ? in->size : 1);
	uint64_t rng = in->seed ^ 0x9e3779b97f4a7c15ULL;
	struct sfb_reasons rs = { 0 };
	struct sfb_tally t = { 0 };
	char desc[96];

	for (const char *p = in->name; *p; p++)
		rng = (rng ^ (uint8_t)*p) * 0x100000001b3ULL;
	for (unsigned int i = 0; i < in->flips && in->size; i++) {
		struct sfb_result r;

		memcpy(work, in->buf, in->size);
		sfb_corrupt(work, in->size, &rng, desc, sizeof(desc));
		snprintf(current, CURRENT_LEN, "flips/%s: mutant %u:%s", in->name, i, desc);
		r = sfb_decode(work, in->size, in->addr, NULL, NULL, NULL, 0);
		sfb_tally_add(&t, &r);
		if (r.broken || sfb_bad_rejection(&r))
			sfb_reasons_add(&rs, r.broken ? r.broken : "rejected without an error code",
				    current + strlen("flips/"));
	}
	free(work);
	snprintf(current, CURRENT_LEN, "flips/%s", in->name);
	if (rs.total)
		report(false, current, "%u of %u mutants mishandled (%s); first: %s", rs.total,
		       t.n, sfb_reasons_str(&rs), rs.first);
	else
		printf("PASS: %s: %u mutants, %u decoded, rejected: %s\n", current, t.n,
		       t.accepted, sfb_tally_str(&t));
}

static void sweep(const struct input *in, bool whole)
{
	char group[CURRENT_LEN];

	if (whole) {
		snprintf(group, sizeof(group), "real/%s", in->name);
		isolated(group, decode_whole, in);
	}
	snprintf(group, sizeof(group), "truncate/%s", in->name);
	isolated(group, truncate_all, in);
	snprintf(group, sizeof(group), "flips/%s", in->name);
	isolated(group, flip_all, in);
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		*size = (size_t)len;
		buf = malloc(*size ? *size : 1);
		if (buf && fread(buf, 1, *size, f) != *size) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* NAME=FILE[@ADDR]: a real section, its address as in the ELF file. */
static void run_real(const char *arg, unsigned int flips, uint64_t seed)
{
	struct input in = { .flips = flips, .seed = seed };
	const char *eq = strchr(arg, '='), *at_sign;
	char path[512];
	uint8_t *buf;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(in.name)) {
		report(false, arg, "argument is not NAME=FILE[@ADDR]");
		return;
	}
	snprintf(in.name, sizeof(in.name), "%.*s", (int)(eq - arg), arg);
	snprintf(path, sizeof(path), "%s", eq + 1);
	at_sign = strrchr(eq + 1, '@');
	if (at_sign) {
		path[at_sign - eq - 1] = 0;
		in.addr = strtoull(at_sign + 1, NULL, 0);
	}
	buf = read_file(path, &in.size);
	if (!buf) {
		report(false, in.name, "cannot read %s", path);
		return;
	}
	in.buf = buf;
	sweep(&in, true);
	free(buf);
}

static const uint32_t flex_regnums[] = { 16, 255, 256, 300, 65536 + 7, (1u << 29) - 1 };

int main(int argc, char **argv)
{
	unsigned int flips = 3000;
	uint64_t seed = 1;
	int i = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	current = mmap(NULL, CURRENT_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (current == MAP_FAILED)
		return 2;
	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--flips"))
			flips = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else
			return fprintf(stderr, "unknown option %s\n", argv[i]), 2;
	}
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		static struct mut m;
		struct input in = { .addr = SECT_ADDR, .flips = flips / 10, .seed = seed };

		for (size_t k = 0; k < sizeof(mcases) / sizeof(mcases[0]); k++) {
			struct case_arg ca = { &configs[c], &mcases[k] };
			char group[CURRENT_LEN];

			snprintf(group, sizeof(group), "%s/%s", configs[c].name, mcases[k].name);
			isolated(group, run_case, &ca);
		}
		sfb_standard(&m.s, configs[c].version, configs[c].abi, configs[c].big_endian,
			     configs[c].flags);
		rebuild(&m);
		snprintf(in.name, sizeof(in.name), "built-%s", configs[c].name);
		in.buf = m.o.buf;
		in.size = m.o.size;
		sweep(&in, false);
	}
	for (size_t k = 0; k < sizeof(flex_regnums) / sizeof(flex_regnums[0]); k++)
		isolated("flex-cfa-regnum", flex_regnum, &flex_regnums[k]);
	for (; i < argc; i++)
		run_real(argv[i], flips, seed);
	return failures ? 1 : 0;
}
