// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Flattener (see flatten.h). The BPF side does a bounded binary search over
 * rows, so everything irregular is made explicit here: PCMASK (PLT) blocks are
 * expanded into one row per FRE per block, PCs covered by no FDE get a gap row
 * (so they never match the previous function's last row), and consecutive rows
 * with the same rule are merged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tables/flatbuild.h"
#include "tables/flatten.h"
#include "util/vec.h"

#define MAX_MASK_ROWS (1u << 16) /* expansion bound for one PCMASK FDE */

/*
 * Rules of FRE encodings seen before (struct sframe_fre_raw): most functions
 * repeat a handful of encodings, so each is decoded and interned once.
 * Direct-mapped; an encoding of up to RULE_KEY_BYTES bytes is its own key,
 * with its length, the FDE type and the signal bit (make_rule's inputs).
 */
#define RULE_CACHE_BITS 10
#define RULE_KEY_BYTES 14

struct rule_cache_ent {
	uint64_t k0, k1; /* k1 == 0: empty (a key's k1 holds its nonzero length) */
	uint32_t id;
	bool unsupported;
};

struct builder {
	const struct sframe_decoder *d;
	uint8_t abi;
	uint8_t version; /* SFrame version: what an FDE without FREs means */
	struct flat_builder fb; /* rows, rules and page index (flatbuild.h) */
	struct flat_table *t; /* fb.t */
	/* Scratch: one FDE's FREs (start offsets, rule ids), and the last one's end. */
	uint32_t *starts, *ids;
	uint32_t last_end;
	size_t cap_fres;
	struct rule_cache_ent cache[1u << RULE_CACHE_BITS];
};

static int64_t intern_rule(struct builder *b, const struct sfbpf_rule *r)
{
	return flat_builder__rule(&b->fb, r);
}

static uint8_t ra_regnum(uint8_t abi)
{
	switch (abi) {
	case SFRAME_ABI_AARCH64_ENDIAN_BIG:
	case SFRAME_ABI_AARCH64_ENDIAN_LITTLE:
		return 30; /* LR */
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		return 14;
	default:
		return 16; /* AMD64 return address column */
	}
}

static uint8_t map_reg(uint8_t abi, const struct sframe_rule *r)
{
	if (r->base == SFRAME_BASE_SP)
		return SFBPF_REG_SP;
	if (r->base == SFRAME_BASE_FP)
		return SFBPF_REG_FP;
	return r->regnum == ra_regnum(abi) ? SFBPF_REG_RA : SFBPF_REG_OTHER;
}

/* RA or FP rule → location; sets TOPMOST_ONLY when it needs a live register. */
static void map_loc(uint8_t abi, const struct sframe_rule *r, uint8_t *loc, uint8_t *reg,
		    int32_t *off, uint8_t deref_flag, struct sfbpf_rule *out)
{
	*off = (int32_t)r->offset;
	switch (r->kind) {
	case SFRAME_RULE_UNDEFINED:
		*loc = SFBPF_LOC_UNDEFINED;
		return;
	case SFRAME_RULE_SAME:
		*loc = SFBPF_LOC_SAME;
		return;
	}
	if (r->deref)
		out->flags |= deref_flag;
	if (r->base == SFRAME_BASE_CFA) {
		*loc = SFBPF_LOC_CFA;
		return;
	}
	*loc = SFBPF_LOC_REG;
	*reg = map_reg(abi, r);
	if (*reg != SFBPF_REG_SP && *reg != SFBPF_REG_FP)
		out->flags |= SFBPF_RULE_TOPMOST_ONLY;
}

/*
 * The rule for fre; false when struct sfbpf_rule cannot express it (a CFA
 * based on a DWARF register above 255: its number does not fit cfa_regnum,
 * and truncating it would name a different register).
 */
static bool make_rule(uint8_t abi, const struct sframe_fde *f, const struct sframe_fre *fre,
		      struct sfbpf_rule *out)
{
	memset(out, 0, sizeof(*out));
	if (f->signal)
		out->flags |= SFBPF_RULE_SIGNAL;
	if (fre->mangled_ra)
		out->flags |= SFBPF_RULE_MANGLED_RA;
	if (fre->ra.kind == SFRAME_RULE_UNDEFINED) {
		out->ra_loc = SFBPF_LOC_UNDEFINED;
		return true;
	}
	/* SFrame says nothing of other registers: a caller's rbx is not known past this frame. */
	out->xreg_off8 = SFBPF_XREG_LOST;
	out->cfa_off = (int32_t)fre->cfa.offset;
	out->cfa_reg = map_reg(abi, &fre->cfa);
	if (out->cfa_reg != SFBPF_REG_SP && out->cfa_reg != SFBPF_REG_FP) {
		if (fre->cfa.regnum > UINT8_MAX)
			return false;
		out->cfa_reg = SFBPF_REG_OTHER;
		out->cfa_regnum = (uint8_t)fre->cfa.regnum;
		out->flags |= SFBPF_RULE_TOPMOST_ONLY;
	}
	if (fre->cfa.deref)
		out->flags |= SFBPF_RULE_CFA_DEREF;
	map_loc(abi, &fre->ra, &out->ra_loc, &out->ra_reg, &out->ra_off, SFBPF_RULE_RA_DEREF, out);
	map_loc(abi, &fre->fp, &out->fp_loc, &out->fp_reg, &out->fp_off, SFBPF_RULE_FP_DEREF, out);
	return true;
}

static int add_row(struct builder *b, uint64_t pc, uint32_t rule)
{
	return flat_builder__row(&b->fb, pc, rule);
}

/* The rule id of fre (decoded) of f; counts the FREs whose rule cannot be expressed. */
static int64_t fre_rule(struct builder *b, const struct sframe_fde *f, const struct sframe_fre *fre,
			bool *unsupported)
{
	struct sfbpf_rule r;

	*unsupported = !make_rule(b->abi, f, fre, &r);
	if (*unsupported) {
		/* The walk stops there and says why, as for CFI it cannot express. */
		memset(&r, 0, sizeof(r));
		r.flags = SFBPF_RULE_GAP | SFBPF_RULE_UNSUPPORTED;
	}
	return intern_rule(b, &r);
}

/* The rule id of the FRE raw of it: from the cache, or decoded and remembered. */
static int64_t raw_rule(struct builder *b, const struct sframe_fre_iter *it,
			const struct sframe_fre_raw *raw)
{
	struct rule_cache_ent *e;
	struct sframe_fre fre;
	uint64_t k0, k1, h;
	bool unsupported;
	int64_t id;

	if (raw->enc_len > RULE_KEY_BYTES) {
		sframe_fre_iter__decode(it, raw, &fre);
		id = fre_rule(b, &it->fde, &fre, &unsupported);
		b->t->nr_unsupported_fres += unsupported;
		return id;
	}
	k0 = raw->enc_words[0];
	k1 = (raw->enc_words[1] & 0xffffffffffffull) | (uint64_t)raw->enc_len << 48 |
	     (uint64_t)(it->fde.fde_type << 1 | it->fde.signal) << 56;
	h = (k0 * 0x9e3779b97f4a7c15ull) ^ (k1 * 0xc2b2ae3d27d4eb4full);
	e = &b->cache[h >> (64 - RULE_CACHE_BITS)];
	if (e->k0 != k0 || e->k1 != k1) {
		sframe_fre_iter__decode(it, raw, &fre);
		id = fre_rule(b, &it->fde, &fre, &unsupported);
		if (id < 0)
			return id;
		*e = (struct rule_cache_ent){
			.k0 = k0, .k1 = k1, .id = (uint32_t)id, .unsupported = unsupported
		};
	}
	b->t->nr_unsupported_fres += e->unsupported;
	return e->id;
}

/* An FDE's FREs into the scratch arrays, their rules interned. The FRE count, or -errno. */
static int collect_fres(struct builder *b, const struct sframe_fde *f)
{
	struct sframe_fre_iter it;
	struct sframe_fre_raw raw;
	uint32_t n = 0;
	int64_t id;

	sframe_fre_iter__init(&it, b->d, f);
	while (n < f->num_fres && sframe_fre_iter__next_raw(&it, &raw)) {
		id = raw_rule(b, &it, &raw);
		if (id < 0)
			return (int)id;
		b->starts[n] = raw.start_off;
		b->ids[n++] = (uint32_t)id;
		b->last_end = raw.end_off;
	}
	return (int)n;
}

static int emit_fde(struct builder *b, const struct sframe_fde *f)
{
	uint32_t *ids, *starts, n, j, block, nblocks, rep;
	size_t cap = b->cap_fres;
	int ret;

	/* Both arrays grow alike: cap_fres is the capacity of each. */
	if (VEC_RESERVE(b->starts, cap, (size_t)f->num_fres + 1, 64) ||
	    VEC_RESERVE(b->ids, b->cap_fres, (size_t)f->num_fres + 1, 64))
		return -ENOMEM;
	ret = collect_fres(b, f);
	if (ret < 0)
		return ret;
	n = (uint32_t)ret;
	ret = 0;
	starts = b->starts;
	ids = b->ids;
	b->t->nr_fres += n;
	if (n == 0) {
		/*
		 * V3 defines a default FDE without FREs as an outermost frame. In
		 * V1/V2 (and for flexible or reserved-type FDEs) it describes
		 * nothing: a gap, which CFI may fill.
		 */
		struct sfbpf_rule outer = { .ra_loc = SFBPF_LOC_UNDEFINED };
		bool outermost = b->version >= SFRAME_VERSION_3 && !f->reserved &&
				 f->fde_type == SFRAME_FDE_TYPE_DEFAULT;
		int64_t id = outermost ? intern_rule(b, &outer) : SFBPF_RULE_GAP_ID;

		return id < 0 ? (int)id : add_row(b, f->func_start, (uint32_t)id);
	}
	/* PCs before the first FRE are covered by nothing. */
	if (starts[0] > 0)
		ret = add_row(b, f->func_start, SFBPF_RULE_GAP_ID);
	/*
	 * FREs at one start follow each other in the builder, which lets the later
	 * one replace the earlier; an FRE at the function's (block's) end covers
	 * nothing and is left out so no row leaks past the function.
	 */
	if (f->pctype != SFRAME_FDE_PCTYPE_MASK) {
		for (j = 0; j < n && !ret; j++)
			if (starts[j] < f->func_size)
				ret = add_row(b, f->func_start + starts[j], ids[j]);
		return ret;
	}
	rep = b->last_end; /* the repetition block size */
	nblocks = rep ? (f->func_size + rep - 1) / rep : 0;
	/* The object's row budget: fail before expanding, not after. */
	if (b->t->nr_rows + (uint64_t)nblocks * n > FLAT_MAX_ROWS)
		return -E2BIG;
	if ((uint64_t)nblocks * n > MAX_MASK_ROWS) {
		b->t->nr_skipped_fdes++;
		return add_row(b, f->func_start, SFBPF_RULE_GAP_ID);
	}
	for (block = 0; block < nblocks && !ret; block++) {
		/* Each block starts uncovered until its first FRE, like the first one. */
		if (block && starts[0] > 0)
			ret = add_row(b, f->func_start + (uint64_t)block * rep, SFBPF_RULE_GAP_ID);
		for (j = 0; j < n && !ret; j++) {
			uint64_t off = (uint64_t)block * rep + starts[j];

			if (starts[j] < rep && off < f->func_size)
				ret = add_row(b, f->func_start + off, ids[j]);
		}
	}
	return ret;
}

/* FDEs in function-start order (the decoder's index), gap rows between them. */
static int emit_all(struct builder *b)
{
	uint32_t i, n = sframe_decoder__num_fdes(b->d);
	struct sframe_fde f;
	uint64_t end = 0;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		sframe_decoder__fde_by_start(b->d, i, &f);
		if (f.func_start < end || f.func_start + f.func_size > UINT32_MAX) {
			b->t->nr_skipped_fdes++; /* overlapping (unsorted input) or too high */
			continue;
		}
		if (i && f.func_start > end)
			ret = add_row(b, end, SFBPF_RULE_GAP_ID);
		if (!ret)
			ret = emit_fde(b, &f);
		end = f.func_start + f.func_size;
		b->t->nr_fdes++;
	}
	if (!ret && b->t->nr_rows)
		ret = add_row(b, end, SFBPF_RULE_GAP_ID);
	return ret;
}

int flat_table__from_sframe(const struct sframe_decoder *d, struct flat_table **out)
{
	struct builder *b = calloc(1, sizeof(*b)); /* the rule cache: 24 KiB */
	int ret;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	b->d = d;
	b->abi = sframe_decoder__header(d)->abi_arch;
	b->version = sframe_decoder__header(d)->version;
	ret = flat_builder__init(&b->fb);
	if (ret)
		goto out;
	b->t = b->fb.t;
	b->t->nr_reserved_fdes = sframe_decoder__num_reserved_fdes(d);
	/* About one row an FRE: reserve them at once rather than doubling up to it. */
	ret = flat_builder__reserve(&b->fb, sframe_decoder__header(d)->num_fres +
						    2ull * sframe_decoder__num_fdes(d));
	if (!ret)
		ret = emit_all(b);
	if (ret)
		flat_builder__abort(&b->fb);
	else
		ret = flat_builder__finish(&b->fb, out);
out:
	free(b->starts);
	free(b->ids);
	free(b);
	return ret;
}
