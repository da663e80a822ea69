// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the SFrame decoder on arbitrary section bytes.
 *
 * A rejected section must come with a known error code and a terminated
 * message. An accepted one must satisfy everything sfb_check_invariants()
 * checks (counts, order, FRE sanity), every FRE must end at or after its
 * start, and every lookup at and around each function's bounds must answer
 * consistently with iteration. The section is decoded at a low address and
 * again just below 2^64, where function ends overflow: sorted sections must
 * refuse that, unsorted ones (relocatable objects) wrap by design, so
 * sfb_check_invariants() (which forbids wrapping) is not asked of an
 * unsorted section with a function that wraps.
 */
#include "../sframe_builder.h"
#include "fuzz.h"

#define LOW_ADDR 0x400000ull
#define HIGH_ADDR 0xffffffffffff0000ull
#define MAX_FDES_CHECKED 512

/* The FRE find_fre() picks for pc must be the one whose range holds pc. */
static void check_find_fre(const struct sframe_decoder *d, const struct sframe_fde *f,
			   uint64_t pc)
{
	struct sframe_fre fre;
	uint64_t off;

	if (sframe_decoder__find_fre(d, f, pc, &fre))
		return;
	FUZZ_CHECK(pc >= f->func_start && pc - f->func_start < f->func_size,
		   "FDE %u: FRE found for pc %#llx outside [%#llx,+%#x)", f->index,
		   (unsigned long long)pc, (unsigned long long)f->func_start, f->func_size);
	off = pc - f->func_start;
	FUZZ_CHECK(fre.index < f->num_fres, "FDE %u: FRE index %u of %u", f->index, fre.index,
		   f->num_fres);
	if (f->pctype == SFRAME_FDE_PCTYPE_MASK)
		return; /* off is taken modulo the block size: checked by start order */
	FUZZ_CHECK(fre.start_off <= off && off < fre.end_off,
		   "FDE %u: pc offset %#llx outside its FRE [%#x,%#x)", f->index,
		   (unsigned long long)off, fre.start_off, fre.end_off);
}

/* find_fde() at pc must agree with the function f that covers (or not) pc. */
static void check_find_fde(const struct sframe_decoder *d, uint64_t pc)
{
	struct sframe_fde found;

	if (sframe_decoder__find_fde(d, pc, &found))
		return;
	FUZZ_CHECK(found.func_start <= pc && pc - found.func_start < found.func_size,
		   "find_fde(%#llx) gave FDE %u [%#llx,+%#x)", (unsigned long long)pc,
		   found.index, (unsigned long long)found.func_start, found.func_size);
	check_find_fre(d, &found, pc);
}

/* Each FRE's PC range [start_off, end_off) must not run backwards. */
static void check_fre_ranges(const struct sframe_decoder *d, const struct sframe_fde *f)
{
	struct sframe_fre_iter it;
	struct sframe_fre fre;

	sframe_fre_iter__init(&it, d, f);
	while (sframe_fre_iter__next(&it, &fre)) {
		/* Known: regress/sframe_decode/pcmask-fre-past-rep-size.sframe. */
		if (fuzz_skip_known() && f->pctype == SFRAME_FDE_PCTYPE_MASK &&
		    fre.end_off < fre.start_off)
			return;
		FUZZ_CHECK(fre.end_off >= fre.start_off,
			   "FDE %u (pctype %u, size %#x, rep %u): FRE %u [%#x,%#x) ends before it starts",
			   f->index, f->pctype, f->func_size, f->rep_size, fre.index, fre.start_off,
			   fre.end_off);
	}
}

static void check_lookups(const struct sframe_decoder *d)
{
	uint32_t i, n = sframe_decoder__num_fdes(d);
	struct sframe_fde f;

	if (n > MAX_FDES_CHECKED)
		n = MAX_FDES_CHECKED;
	for (i = 0; i < n; i++) {
		uint64_t s, e;

		FUZZ_CHECK(!sframe_decoder__fde(d, i, &f), "fde(%u) failed", i);
		s = f.func_start;
		e = s + f.func_size;
		check_fre_ranges(d, &f);
		check_find_fde(d, s);
		check_find_fde(d, s - 1);
		check_find_fde(d, s + f.func_size / 2);
		check_find_fde(d, e - 1);
		check_find_fde(d, e);
		check_find_fre(d, &f, s);
		check_find_fre(d, &f, e - 1);
		check_find_fre(d, &f, e); /* one past the end: never found */
	}
}

/* Does an unsorted section have a function whose end wraps past 2^64? */
static bool wraps(const struct sframe_decoder *d)
{
	uint32_t i, n = sframe_decoder__num_fdes(d);
	struct sframe_fde f;

	if (sframe_decoder__header(d)->flags & SFRAME_F_FDE_SORTED)
		return false;
	for (i = 0; i < n; i++) {
		sframe_decoder__fde(d, i, &f);
		if (f.func_start + f.func_size < f.func_start)
			return true;
	}
	return false;
}

static void decode_at(const uint8_t *data, size_t size, uint64_t addr)
{
	struct sframe_decoder *d = NULL;
	struct sframe_error err;
	const char *why;
	int ret;

	ret = sframe_decoder__new(data, size, addr, &d, &err);
	if (ret) {
		FUZZ_CHECK(d == NULL, "rejected but returned a decoder");
		FUZZ_CHECK(ret == -ENOMEM || (err.code > SFRAME_ERR_NONE &&
					      err.code < SFRAME_ERR__COUNT),
			   "rejected (%d) with error code %d", ret, err.code);
		FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL, "message not terminated");
		return;
	}
	if (!wraps(d)) {
		why = sfb_check_invariants(d);
		FUZZ_CHECK(why == NULL, "%s", why);
	}
	check_lookups(d);
	sframe_decoder__free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode_at(data, size, LOW_ADDR);
	decode_at(data, size, HIGH_ADDR);
	return 0;
}
