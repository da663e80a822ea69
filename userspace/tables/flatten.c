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

#define MAX_MASK_ROWS (1u << 16) /* expansion bound for one PCMASK FDE */

struct fde_ref {
	uint64_t start;
	uint32_t index;
};

struct builder {
	const struct sframe_decoder *d;
	uint8_t abi;
	uint8_t version; /* SFrame version: what an FDE without FREs means */
	struct flat_builder fb; /* rows, rules and page index (flatbuild.h) */
	struct flat_table *t; /* fb.t */
	struct sframe_fre *fres; /* scratch: one FDE's FREs */
	uint32_t cap_fres;
};

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, (size_t)ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

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

/* Decode an FDE's FREs into the scratch array, interning their rules. */
static int collect_fres(struct builder *b, const struct sframe_fde *f, uint32_t *rule_ids)
{
	struct sframe_fre_iter it;
	struct sfbpf_rule r;
	uint32_t n = 0;
	int64_t id;

	sframe_fre_iter__init(&it, b->d, f);
	while (n < f->num_fres && sframe_fre_iter__next(&it, &b->fres[n])) {
		if (!make_rule(b->abi, f, &b->fres[n], &r)) {
			/* The walk stops there and says why, as for CFI it cannot express. */
			memset(&r, 0, sizeof(r));
			r.flags = SFBPF_RULE_GAP | SFBPF_RULE_UNSUPPORTED;
			b->t->nr_unsupported_fres++;
		}
		id = intern_rule(b, &r);
		if (id < 0)
			return (int)id;
		rule_ids[n++] = (uint32_t)id;
	}
	return (int)n;
}

static int emit_fde(struct builder *b, const struct sframe_fde *f)
{
	uint32_t *ids, n, j, block, nblocks, rep;
	int ret;

	if (grow((void **)&b->fres, &b->cap_fres, f->num_fres + 1, sizeof(*b->fres)))
		return -ENOMEM;
	ids = calloc(f->num_fres + 1, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	ret = collect_fres(b, f, ids);
	if (ret < 0)
		goto out;
	n = (uint32_t)ret;
	ret = 0;
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

		ret = id < 0 ? (int)id : add_row(b, f->func_start, (uint32_t)id);
		goto out;
	}
	/* PCs before the first FRE are covered by nothing. */
	if (b->fres[0].start_off > 0)
		ret = add_row(b, f->func_start, SFBPF_RULE_GAP_ID);
	/*
	 * FREs at one start follow each other in the builder, which lets the later
	 * one replace the earlier; an FRE at the function's (block's) end covers
	 * nothing and is left out so no row leaks past the function.
	 */
	if (f->pctype != SFRAME_FDE_PCTYPE_MASK) {
		for (j = 0; j < n && !ret; j++)
			if (b->fres[j].start_off < f->func_size)
				ret = add_row(b, f->func_start + b->fres[j].start_off, ids[j]);
		goto out;
	}
	rep = b->fres[n - 1].end_off; /* the repetition block size */
	nblocks = rep ? (f->func_size + rep - 1) / rep : 0;
	/* The object's row budget: fail before expanding, not after. */
	if (b->t->nr_rows + (uint64_t)nblocks * n > FLAT_MAX_ROWS) {
		ret = -E2BIG;
		goto out;
	}
	if ((uint64_t)nblocks * n > MAX_MASK_ROWS) {
		b->t->nr_skipped_fdes++;
		ret = add_row(b, f->func_start, SFBPF_RULE_GAP_ID);
		goto out;
	}
	for (block = 0; block < nblocks && !ret; block++) {
		/* Each block starts uncovered until its first FRE, like the first one. */
		if (block && b->fres[0].start_off > 0)
			ret = add_row(b, f->func_start + (uint64_t)block * rep, SFBPF_RULE_GAP_ID);
		for (j = 0; j < n && !ret; j++) {
			uint64_t off = (uint64_t)block * rep + b->fres[j].start_off;

			if (b->fres[j].start_off < rep && off < f->func_size)
				ret = add_row(b, f->func_start + off, ids[j]);
		}
	}
out:
	free(ids);
	return ret;
}

static int cmp_fde_ref(const void *a, const void *b)
{
	const struct fde_ref *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int emit_all(struct builder *b)
{
	uint32_t i, n = sframe_decoder__num_fdes(b->d);
	struct fde_ref *refs = calloc(n ? n : 1, sizeof(*refs));
	struct sframe_fde f;
	uint64_t end = 0;
	int ret = 0;

	if (!refs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sframe_decoder__fde(b->d, i, &f);
		refs[i] = (struct fde_ref){ .start = f.func_start, .index = i };
	}
	qsort(refs, n, sizeof(*refs), cmp_fde_ref);
	for (i = 0; i < n && !ret; i++) {
		sframe_decoder__fde(b->d, refs[i].index, &f);
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
	free(refs);
	return ret;
}

int flat_table__from_sframe(const struct sframe_decoder *d, struct flat_table **out)
{
	struct builder b = { .d = d,
			     .abi = sframe_decoder__header(d)->abi_arch,
			     .version = sframe_decoder__header(d)->version };
	int ret;

	*out = NULL;
	ret = flat_builder__init(&b.fb);
	if (ret)
		return ret;
	b.t = b.fb.t;
	b.t->nr_reserved_fdes = sframe_decoder__num_reserved_fdes(d);
	ret = emit_all(&b);
	free(b.fres);
	if (ret) {
		flat_builder__abort(&b.fb);
		return ret;
	}
	return flat_builder__finish(&b.fb, out);
}

void flat_table__free(struct flat_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->rules);
	free(t->pages);
	free(t);
}

void flat_table__coarsen_pages(struct flat_table *t)
{
	uint32_t span, p, k = 0, want;

	if (!t->nr_rows || t->nr_pages < 2 || flat_table__page_shift(t) != SFBPF_PAGE_SHIFT)
		return;
	span = t->nr_pages - 2; /* the last row's page */
	want = t->nr_rows / FLAT_ROWS_PER_PAGE ? t->nr_rows / FLAT_ROWS_PER_PAGE : 1;
	while (k < SFBPF_OBJ_PAGE_SHIFT_MAX && (span >> k) + 1 > want)
		k++;
	if (!k)
		return;
	/* Coarse page p starts where fine page p << k does: the same first row. */
	for (p = 0; p <= span >> k; p++)
		t->pages[p] = t->pages[p << k];
	t->pages[p] = t->nr_rows; /* the sentinel */
	t->nr_pages = p + 1;
	t->page_shift = SFBPF_PAGE_SHIFT + k;
}

int64_t flat_table__lookup(const struct flat_table *t, uint32_t pc)
{
	uint32_t p, lo, hi, mid;

	if (!t->nr_rows || pc < t->pc_min)
		return -1;
	p = (pc - t->pc_min) >> flat_table__page_shift(t);
	if (p + 1 >= t->nr_pages)
		return -1;
	/* The answer is the last row in [pages[p] - 1, pages[p + 1]) starting <= pc. */
	lo = t->pages[p] ? t->pages[p] - 1 : 0;
	hi = t->pages[p + 1];
	if (lo >= hi || t->rows[lo].pc_off > pc)
		return -1;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (t->rows[mid].pc_off <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
