// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * DWARF CFI → flat table (see cfi.h). This file enumerates the FDEs
 * (dwarf_next_cfi gives raw entries, so their address ranges are decoded
 * here from the CIE's pointer encoding), orders them, and cuts them into
 * chunks; cfi_walk.c walks them (overlaps resolved, each FDE's program run
 * once by cfi_interp.c, its rows translated by cfi_rule.c). The libdw row walk it replaced stays as
 * a reference for the tests and the benchmark (SFBPF_CFI_ROWS=libdw).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tables/cfi_prog.h"
#include "tables/cfi_int.h"
#include "util/search.h"
#include "util/vec.h"

static int cmp_range(const void *a, const void *b)
{
	const struct cfi_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

uint32_t cfi_ranges__join(struct cfi_range *r, uint32_t n)
{
	uint32_t i, m = 0;

	qsort(r, n, sizeof(*r), cmp_range);
	for (i = 0; i < n; i++) {
		if (m && r[i].lo <= r[m - 1].hi) {
			if (r[i].hi > r[m - 1].hi)
				r[m - 1].hi = r[i].hi;
		} else {
			r[m++] = r[i];
		}
	}
	return m;
}

const char *cfi_source__name(enum cfi_source src)
{
	return src == CFI_SRC_EH_FRAME	  ? ".eh_frame" :
	       src == CFI_SRC_DEBUG_FRAME ? ".debug_frame" :
					    "?";
}

/* ---------------------------------------------------------------- FDE enumeration */

/* The FDE pointer encoding of the CIE at off ('z' augmentations; else absolute). */
static int parse_cie(struct cfi_reader *r, enum cfi_source src, Dwarf_Off off)
{
	const struct cfi_section *s = &r->sec[src];
	const uint8_t *p, *end;
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	uint64_t skip;
	const char *a;
	uint8_t enc;

	if (r->cie.valid && r->cie.off == off)
		return 0;
	r->cie = (struct cfi_cie_info){ .off = off };
	r->cie.ent.prog.fde_enc = DW_EH_PE_absptr;
	if (dwarf_next_cfi(r->e_ident, s->data, src == CFI_SRC_EH_FRAME, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e))
		return -EINVAL;
	a = e.cie.augmentation;
	if (a[0] && a[0] != 'z')
		return -EINVAL; /* pre-'z' GNU augmentations: not emitted for decades */
	r->cie.zaug = a[0] == 'z';
	r->cie.ent.prog = (struct cfi_cie_prog){
		.insn = e.cie.initial_instructions,
		.insn_end = e.cie.initial_instructions_end,
		.code_align = e.cie.code_alignment_factor,
		.data_align = e.cie.data_alignment_factor,
		.ra_reg = (uint32_t)e.cie.return_address_register,
		.fde_enc = DW_EH_PE_absptr,
	};
	p = e.cie.augmentation_data;
	end = p + e.cie.augmentation_data_size;
	for (a = a[0] ? a + 1 : a; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return -EINVAL;
			r->cie.ent.prog.fde_enc = *p++;
			break;
		case 'L':
			if (p++ >= end)
				return -EINVAL;
			break;
		case 'P':
			if (p >= end)
				return -EINVAL;
			enc = *p++;
			if (cfi_prog__read_encoded(&p, end, enc & ~DW_EH_PE_indirect, 0, false,
						   &skip))
				return -EINVAL;
			break;
		case 'S': /* signal frame */
			r->cie.ent.signal = true;
			break;
		case 'B': /* AArch64 B key, MTE tagged frames: no data */
		case 'G':
			break;
		default:
			goto done; /* unknown: the 'z' size still lets libdw skip the rest */
		}
	}
done:
	if (VEC_RESERVE(r->cies, r->cap_cies, (size_t)r->nr_cies + 1, 16))
		return -ENOMEM;
	r->cie.idx = r->nr_cies;
	r->cies[r->nr_cies++] = r->cie.ent;
	r->cie.valid = true;
	return 0;
}

static bool in_exec_segment(const struct cfi_reader *r, uint64_t lo, uint64_t hi)
{
	uint32_t i;

	for (i = 0; i < r->nr_exec; i++)
		if (lo >= r->exec[i].lo && hi <= r->exec[i].hi)
			return true;
	return false;
}

int cfi_reader__push_fde(struct cfi_reader *r, const struct cfi_fde_ent *f)
{
	if (VEC_RESERVE(r->fdes, r->cap_fdes, (size_t)r->nr_fdes + 1, 256))
		return -ENOMEM;
	r->fdes[r->nr_fdes++] = *f;
	return 0;
}

/* Range of one FDE and where its instructions start; false if it cannot be decoded. */
static bool fde_range(struct cfi_reader *r, enum cfi_source src, const Dwarf_FDE *f, uint64_t *lo,
		      uint64_t *hi, const uint8_t **insn)
{
	const struct cfi_section *s = &r->sec[src];
	const uint8_t *p = f->start, *base = s->data->d_buf;
	uint64_t range, alen;

	if (parse_cie(r, src, f->CIE_pointer))
		return false;
	if (cfi_prog__read_encoded(&p, f->end, r->cie.ent.prog.fde_enc,
				   s->addr + (uint64_t)(p - base), true, lo) ||
	    cfi_prog__read_encoded(&p, f->end, r->cie.ent.prog.fde_enc & 0x0f, 0, false, &range))
		return false;
	if (r->cie.zaug) {
		if (cfi_prog__read_uleb(&p, f->end, &alen) || alen > (uint64_t)(f->end - p))
			return false;
		p += alen;
	}
	*insn = p;
	*hi = *lo + range;
	return *hi >= *lo;
}

/* e as an FDE of the table into *f; false: skipped (see cfi_reader__fde_at_offset). */
static bool fde_ent(struct cfi_reader *r, enum cfi_source src, const Dwarf_CFI_Entry *e,
		    struct cfi_fde_ent *f)
{
	const uint8_t *insn;
	uint64_t lo, hi;

	if (!fde_range(r, src, &e->fde, &lo, &hi, &insn) || hi == lo || hi > UINT32_MAX ||
	    !in_exec_segment(r, lo, hi))
		return false;
	*f = (struct cfi_fde_ent){ .lo = lo,
				   .hi = hi,
				   .insn = insn,
				   .insn_end = e->fde.end,
				   .cie = r->cie.idx,
				   .src = src };
	return true;
}

static int collect_fdes(struct cfi_reader *r, enum cfi_source src)
{
	const struct cfi_section *s = &r->sec[src];
	Dwarf_Off off = 0, next;
	struct cfi_fde_ent f;
	Dwarf_CFI_Entry e;
	int ret, err;

	r->cie.valid = false;
	while (off < s->data->d_size) {
		ret = dwarf_next_cfi(r->e_ident, s->data, src == CFI_SRC_EH_FRAME, off, &next, &e);
		if (ret != 0)
			break; /* end, a zero terminator, or garbage: keep what was read */
		off = next;
		if (dwarf_cfi_cie_p(&e)) {
			r->st->cies++;
			continue;
		}
		if (!fde_ent(r, src, &e, &f)) {
			r->st->skipped_fdes++; /* e.g. .debug_frame FDEs of discarded code at 0 */
			continue;
		}
		err = cfi_reader__push_fde(r, &f);
		if (err)
			return err;
	}
	return 0;
}

int cfi_reader__fde_at_offset(struct cfi_reader *r, uint64_t off, struct cfi_fde_ent *f)
{
	const struct cfi_section *s = &r->sec[CFI_SRC_EH_FRAME];
	Dwarf_CFI_Entry e;
	Dwarf_Off next;

	if (!s->data || off >= s->data->d_size ||
	    dwarf_next_cfi(r->e_ident, s->data, true, off, &next, &e) != 0 || dwarf_cfi_cie_p(&e) ||
	    !fde_ent(r, CFI_SRC_EH_FRAME, &e, f))
		return -EINVAL;
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct cfi_fde_ent *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* .eh_frame wins where the two sections describe the same code. */
static void shadow_debug_frame(struct cfi_reader *r)
{
	uint64_t eh_hi = 0, eh_lo = UINT64_MAX;
	int64_t i;

	for (i = 0; i < r->nr_fdes; i++) {
		struct cfi_fde_ent *f = &r->fdes[i];

		if (f->src == CFI_SRC_EH_FRAME)
			eh_hi = f->hi > eh_hi ? f->hi : eh_hi;
		else if (f->lo < eh_hi)
			f->shadowed = true;
	}
	for (i = (int64_t)r->nr_fdes - 1; i >= 0; i--) {
		struct cfi_fde_ent *f = &r->fdes[i];

		if (f->src == CFI_SRC_EH_FRAME)
			eh_lo = f->lo;
		else if (f->hi > eh_lo)
			f->shadowed = true;
	}
	for (i = 0; i < r->nr_fdes; i++)
		r->st->shadowed_fdes += r->fdes[i].shadowed;
}

/* ---------------------------------------------------------------- setup */

/* Executable segments: FDEs outside them describe code that is not loaded. */
static void find_segments(struct cfi_reader *r)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(r->elf, &n))
		return;
	for (i = 0; i < n && r->nr_exec < MAX_EXEC_SEGMENTS; i++)
		if (gelf_getphdr(r->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X))
			r->exec[r->nr_exec++] =
				(struct cfi_exec_range){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz };
}

static int find_sections(struct cfi_reader *r, bool eh_frame_only)
{
	Elf_Data *hdr = NULL;
	uint64_t hdr_addr = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(r->elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(r->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(r->elf, shstrndx, sh.sh_name)))
			continue;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (!strcmp(name, ".eh_frame")) {
			r->sec[CFI_SRC_EH_FRAME].data = elf_getdata(scn, NULL);
			r->sec[CFI_SRC_EH_FRAME].addr = sh.sh_addr;
		} else if (!strcmp(name, ".eh_frame_hdr")) {
			hdr = elf_getdata(scn, NULL);
			hdr_addr = sh.sh_addr;
		} else if (!eh_frame_only && !strcmp(name, ".debug_frame")) {
			/* libdw may have decompressed it already; otherwise do it here. */
			if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
				continue;
			r->sec[CFI_SRC_DEBUG_FRAME].data = elf_getdata(scn, NULL);
			r->sec[CFI_SRC_DEBUG_FRAME].addr = 0;
		}
	}
	if (hdr && r->sec[CFI_SRC_EH_FRAME].data)
		cfi_hdr__init(&r->hdr, hdr, hdr_addr, r->sec[CFI_SRC_EH_FRAME].addr);
	return 0;
}

/* Sections with bytes (the interpreter needs no libdw handle). */
static void keep_sections(struct cfi_reader *r)
{
	int src;

	for (src = 0; src < CFI_SRC__COUNT; src++)
		if (r->sec[src].data && !r->sec[src].data->d_buf)
			r->sec[src].data = NULL;
}

/* eh_frame_only: .debug_frame is not read (nor decompressed). */
static int open_elf(struct cfi_reader *r, int fd, bool eh_frame_only)
{
	GElf_Ehdr eh;

	elf_version(EV_CURRENT);
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	r->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!r->elf || elf_kind(r->elf) != ELF_K_ELF || !gelf_getehdr(r->elf, &eh))
		return -EINVAL;
	memcpy(r->e_ident, eh.e_ident, EI_NIDENT);
	r->m = eh.e_machine == EM_X86_64  ? &cfi_x86_64 :
	       eh.e_machine == EM_AARCH64 ? &cfi_aarch64 :
					    NULL;
	if (!r->m || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOTSUP;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return -EINVAL; /* relocatable: FDE addresses are not final */
	find_segments(r);
	return find_sections(r, eh_frame_only);
}

static void reader_close(struct cfi_reader *r)
{
	cfi_libdw__close(r);
	if (r->elf)
		elf_end(r->elf);
	free(r->fdes);
	free(r->cies);
}

/*
 * FDEs in cmp_fde order. The linker's order is nearly that already (a few
 * start-up functions out of place), which an insertion sort fixes in one
 * pass; past a few moves per FDE, qsort. Entries cmp_fde finds equal overlap
 * each other (one unsupported run): their order is moot.
 */
static void sort_fdes(struct cfi_reader *r)
{
	uint64_t moves = 0, budget = 4ull * r->nr_fdes + 64;
	struct cfi_fde_ent *f = r->fdes, v;
	uint32_t i, j;

	for (i = 1; i < r->nr_fdes; i++) {
		if (cmp_fde(&f[i - 1], &f[i]) <= 0)
			continue;
		v = f[i];
		for (j = i; j > 0 && cmp_fde(&f[j - 1], &v) > 0; j--)
			f[j] = f[j - 1];
		f[j] = v;
		moves += i - j;
		if (moves > budget) {
			qsort(r->fdes, r->nr_fdes, sizeof(*r->fdes), cmp_fde);
			return;
		}
	}
}

/* An object's FDEs, read and ordered once, to be walked for any ranges (cfi.h). */
struct cfi_index {
	struct cfi_reader r;
	struct cfi_stats collected; /* what reading the FDEs counted */
	uint32_t *chunk_starts; /* chunk k: FDEs [chunk_starts[k], chunk_starts[k + 1]) */
	uint32_t nr_chunks;
	uint32_t refs; /* atomic: cfi_index__ref(), cfi_index__free() */
	bool lookup; /* FDEs not read: found in .eh_frame_hdr when asked for */
};

/*
 * Where the FDEs split into chunks of about CFI_CHUNK_FDES for walks on
 * several threads: at run boundaries only (an FDE that no earlier one
 * overlaps), so that each chunk's rows are the whole walk's. Fixed by the
 * object alone, never by the threads at hand: a table comes out the same
 * however many walked it. libdw's reference walk is one chunk (its handles
 * are not shared).
 */
static int chunk_starts(struct cfi_index *ix)
{
	const struct cfi_reader *r = &ix->r;
	uint32_t i, next = CFI_CHUNK_FDES, max = r->nr_fdes / CFI_CHUNK_FDES + 2;
	uint64_t hi = 0;

	ix->chunk_starts = malloc((size_t)(max + 1) * sizeof(*ix->chunk_starts));
	if (!ix->chunk_starts)
		return -ENOMEM;
	ix->chunk_starts[ix->nr_chunks++] = 0;
	for (i = 0; i < r->nr_fdes && !r->libdw_rows; i++) {
		const struct cfi_fde_ent *f = &r->fdes[i];

		if (f->shadowed)
			continue;
		if (i >= next && f->lo >= hi && ix->nr_chunks < max) {
			ix->chunk_starts[ix->nr_chunks++] = i;
			next = i + CFI_CHUNK_FDES;
		}
		if (f->hi > hi)
			hi = f->hi;
	}
	ix->chunk_starts[ix->nr_chunks] = r->nr_fdes;
	return 0;
}

/* ix with its ELF file open, its sections found and read. */
static struct cfi_index *index_new(int fd, bool eh_frame_only, int *err)
{
	struct cfi_index *ix = calloc(1, sizeof(*ix));

	*err = -ENOMEM;
	if (!ix)
		return NULL;
	ix->refs = 1;
	ix->r.st = &ix->collected;
	*err = open_elf(&ix->r, fd, eh_frame_only);
	return ix;
}

int cfi_index__open(int fd, struct cfi_index **out)
{
	struct cfi_index *ix;
	struct cfi_reader *r;
	int err, src;

	*out = NULL;
	ix = index_new(fd, false, &err);
	if (err)
		goto fail;
	r = &ix->r;
	r->libdw_rows = cfi__libdw_rows();
	if (r->libdw_rows)
		cfi_libdw__open(r);
	else
		keep_sections(r);
	for (src = 0; src < CFI_SRC__COUNT && !err; src++)
		if (r->sec[src].data)
			err = collect_fdes(r, src);
	if (!err && !r->nr_fdes)
		err = -ENOENT;
	if (err)
		goto fail;
	sort_fdes(r);
	shadow_debug_frame(r);
	r->st = NULL; /* read only from here */
	err = chunk_starts(ix);
	if (err)
		goto fail;
	*out = ix;
	return 0;
fail:
	cfi_index__free(ix);
	return err;
}

int cfi_index__open_lookup(int fd, struct cfi_index **out)
{
	struct cfi_index *ix;
	int err;

	*out = NULL;
	ix = index_new(fd, true, &err);
	if (!err && (cfi__libdw_rows() || !ix->r.hdr.count))
		err = -ENOENT;
	if (err) {
		cfi_index__free(ix);
		return err;
	}
	keep_sections(&ix->r);
	ix->r.st = NULL;
	ix->lookup = true;
	*out = ix;
	return 0;
}

/*
 * A reader of ix's sections with FDEs and CIEs of its own, for a lookup
 * index's FDEs (read while the index is read by others: it stays as it is).
 */
static void lookup_reader(const struct cfi_index *ix, struct cfi_reader *r, struct cfi_stats *st)
{
	*r = ix->r;
	r->fdes = NULL;
	r->nr_fdes = 0;
	r->cap_fdes = 0;
	r->cies = NULL;
	r->nr_cies = 0;
	r->cap_cies = 0;
	r->cie.valid = false;
	r->st = st;
}

static void lookup_reader_done(struct cfi_reader *r)
{
	free(r->fdes);
	free(r->cies);
}

bool cfi_index__fde_at(const struct cfi_index *ix, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	const struct cfi_reader *r = &ix->r;
	size_t i, k;

	if (ix->lookup) {
		struct cfi_stats st = { 0 };
		struct cfi_reader lr;
		struct cfi_fde_ent f;
		bool found;

		lookup_reader(ix, &lr, &st);
		found = cfi_hdr__fde_at(&lr, pc, &f);
		lookup_reader_done(&lr);
		if (found) {
			*lo = f.lo;
			*hi = f.hi;
		}
		return found;
	}
	i = SEARCH_UPTO(r->fdes, r->nr_fdes, lo, pc);

	/* Sorted by start: the one starting last at or below pc, else one just
	 * before it (the other section's FDE at the same start). */
	for (k = 0; i > 0 && k < 4; i--, k++) {
		const struct cfi_fde_ent *f = &r->fdes[i - 1];

		if (pc >= f->lo && pc < f->hi) {
			*lo = f->lo;
			*hi = f->hi;
			return true;
		}
	}
	return false;
}

bool cfi_index__around(const struct cfi_index *ix, uint64_t pc, uint32_t k, struct cfi_range *out)
{
	const struct cfi_reader *r = &ix->r;
	size_t i, last;

	if (ix->lookup)
		return cfi_hdr__around(&r->hdr, pc, k, out);
	i = SEARCH_UPTO(r->fdes, r->nr_fdes, lo, pc);
	if (!i)
		return false;
	i--;
	last = r->nr_fdes - i > k ? i + k : r->nr_fdes - 1;
	out->lo = r->fdes[i > k ? i - k : 0].lo;
	out->hi = last + 1 < r->nr_fdes ? r->fdes[last + 1].lo : r->fdes[last].hi;
	/* FDEs overlapping each other: at least up to the FDE's own end. */
	if (out->hi < r->fdes[last].hi)
		out->hi = r->fdes[last].hi;
	return out->hi > out->lo;
}

struct cfi_index *cfi_index__ref(struct cfi_index *ix)
{
	__atomic_add_fetch(&ix->refs, 1, __ATOMIC_RELAXED);
	return ix;
}

void cfi_index__free(struct cfi_index *ix)
{
	if (!ix || __atomic_sub_fetch(&ix->refs, 1, __ATOMIC_ACQ_REL))
		return;
	reader_close(&ix->r);
	free(ix->chunk_starts);
	free(ix);
}

/* Every row takes an instruction of at least a byte: a bound on the rows of the whole table. */
static uint64_t rows_bound(const struct cfi_reader *r)
{
	uint64_t bytes = 0;
	int src;

	for (src = 0; src < CFI_SRC__COUNT; src++)
		bytes += r->sec[src].data ? r->sec[src].data->d_size : 0;
	return bytes / 2 + 64;
}

/*
 * FDEs [from, to) of ix walked into a table (the ranges in want only, unless
 * NULL), with a budget of CFA instructions and a deadline (0: none; *done:
 * where it stopped, if done is not NULL); stats counts the walk alone.
 */
static int walk(const struct cfi_reader *r, uint32_t from, uint32_t to, uint64_t budget,
		uint64_t reserve, const struct cfi_range *want, uint32_t nr_want,
		uint64_t deadline_ns, uint64_t *done, struct flat_table **out,
		struct cfi_stats *stats)
{
	struct cfi_walk *w = calloc(1, sizeof(*w));
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	*w = (struct cfi_walk){ .r = r,
				.ip_cie = -1,
				.unsup_id = -1,
				.want = want,
				.nr_want = nr_want,
				.budget = budget,
				.deadline_ns = deadline_ns,
				.stopped_at = UINT64_MAX,
				.st = stats };
	cfi_memo__clear(&w->memo);
	err = flat_builder__init(&w->b);
	if (!err && reserve)
		err = flat_builder__reserve(&w->b, reserve);
	if (!err)
		err = cfi_walk__emit(w, from, to);
	if (err)
		flat_builder__abort(&w->b);
	else
		err = flat_builder__finish(&w->b, out);
	if (done)
		*done = w->stopped_at;
	cfi_interp__free(&w->ip);
	free(w);
	return err;
}

/* The table's own counts, from what was read and walked. */
static void set_counts(struct flat_table *t, const struct cfi_stats *st)
{
	t->nr_fdes = st->fdes[CFI_SRC_EH_FRAME] + st->fdes[CFI_SRC_DEBUG_FRAME];
	t->nr_fres = st->cfi_rows;
	t->nr_skipped_fdes = st->skipped_fdes + st->shadowed_fdes;
}

int cfi_index__flatten(const struct cfi_index *ix, const struct cfi_range *want, uint32_t nr_want,
		       struct flat_table **out, struct cfi_stats *stats)
{
	return cfi_index__flatten_until(ix, want, nr_want, 0, NULL, out, stats);
}

int cfi_index__flatten_until(const struct cfi_index *ix, const struct cfi_range *want,
			     uint32_t nr_want, uint64_t deadline_ns, uint64_t *done,
			     struct flat_table **out, struct cfi_stats *stats)
{
	struct cfi_stats dummy, *st = stats ? stats : &dummy;
	struct cfi_reader lr;
	int err;

	*st = ix->collected;
	if (done)
		*done = UINT64_MAX;
	if (ix->lookup) {
		if (!want)
			return -EINVAL; /* a lookup index walks what is asked for only */
		lookup_reader(ix, &lr, st);
		err = cfi_hdr__collect(&lr, want, nr_want);
		if (!err)
			err = walk(&lr, 0, lr.nr_fdes, OBJ_WORK_BUDGET, 0, want, nr_want,
				   deadline_ns, done, out, st);
		lookup_reader_done(&lr);
	} else {
		/*
		 * A whole table never grows (each growth copies it and faults
		 * its pages in again); the pages reserved and not written are
		 * never backed, and finish gives them back.
		 */
		err = walk(&ix->r, 0, ix->r.nr_fdes, OBJ_WORK_BUDGET, want ? 0 : rows_bound(&ix->r),
			   want, nr_want, deadline_ns, done, out, st);
	}
	if (!err) {
		set_counts(*out, st);
		st->rows = (*out)->nr_rows;
		st->rules = (*out)->nr_rules;
	}
	return err;
}

uint32_t cfi_index__nr_chunks(const struct cfi_index *ix)
{
	return ix->nr_chunks;
}

int cfi_index__flatten_chunk(const struct cfi_index *ix, uint32_t k, struct flat_table **out,
			     struct cfi_stats *stats)
{
	uint32_t from, to;

	*out = NULL;
	memset(stats, 0, sizeof(*stats));
	if (k >= ix->nr_chunks)
		return -EINVAL;
	from = ix->chunk_starts[k];
	to = ix->chunk_starts[k + 1];
	/* The object's budget, shared by the chunks as their FDEs are; rows reserved as above. */
	return walk(&ix->r, from, to,
		    OBJ_WORK_BUDGET / ix->r.nr_fdes * (to - from) + FDE_WORK_BUDGET,
		    ix->nr_chunks > 1 ? rows_bound(&ix->r) / ix->nr_chunks * 2 : rows_bound(&ix->r),
		    NULL, 0, 0, NULL, out, stats);
}

/* Adds what one walk counted to total (rows and rules are the joined table's). */
static void add_stats(struct cfi_stats *total, const struct cfi_stats *s)
{
	int i;

	for (i = 0; i < CFI_SRC__COUNT; i++)
		total->fdes[i] += s->fdes[i];
	for (i = 0; i < CFI_UNSUP__COUNT; i++)
		total->unsupported[i] += s->unsupported[i];
	total->cfi_rows += s->cfi_rows;
	total->unsupported_rows += s->unsupported_rows;
	total->plt_fdes += s->plt_fdes;
	total->signal_fdes += s->signal_fdes;
	total->outermost_rows += s->outermost_rows;
	total->topmost_rows += s->topmost_rows;
	total->unsupported_bytes += s->unsupported_bytes;
	total->code_bytes += s->code_bytes;
	total->cfa_ops += s->cfa_ops;
	total->unwanted_fdes += s->unwanted_fdes;
}

void cfi_index__join(const struct cfi_index *ix, struct flat_table *const *parts,
		     const struct cfi_stats *stats, uint32_t n, struct cfi_stats *total)
{
	uint32_t k;

	*total = ix->collected;
	for (k = 0; k < n; k++) {
		add_stats(total, &stats[k]);
		total->rows += parts[k]->nr_rows;
		if (parts[k]->nr_rules > total->rules)
			total->rules = parts[k]->nr_rules;
	}
	if (n)
		set_counts(parts[0], total);
}

int cfi__flatten_fd(int fd, struct flat_table **out, struct cfi_stats *stats)
{
	struct cfi_index *ix;
	int err;

	*out = NULL;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	err = cfi_index__open(fd, &ix);
	if (!err)
		err = cfi_index__flatten(ix, NULL, 0, out, stats);
	cfi_index__free(ix);
	return err;
}

int cfi__flatten_path(const char *path, struct flat_table **out, struct cfi_stats *stats)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	*out = NULL;
	if (fd < 0)
		return -errno;
	err = cfi__flatten_fd(fd, out, stats);
	close(fd);
	return err;
}
