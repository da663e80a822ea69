// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * .eh_frame_hdr's search table (the LSB's "Exception Frame Header"): a
 * version byte, the encodings of the three fields after it, a pointer to
 * .eh_frame, the number of FDEs, then one pair per FDE, the FDE's initial
 * location and its address, sorted by location. Linkers write the table as
 * pairs of 32-bit signed numbers relative to the header's own address
 * (datarel sdata4), the one encoding a binary search can use in place;
 * anything else is refused (the FDEs are then read all at once).
 *
 * With it, the rows of a few PCs take a few FDEs read, where reading every
 * FDE of gcc's cc1 takes 10-20 ms: a partial table (maps/tablepart.c) comes
 * out within a millisecond of a big object's first sample.
 */
#include <dwarf.h>
#include <errno.h>
#include <string.h>

#include "tables/cfi_int.h"
#include "tables/cfi_prog.h"

#define HDR_VERSION 1
#define HDR_TABLE_ENC (DW_EH_PE_datarel | DW_EH_PE_sdata4)
#define HDR_ENTRY_SIZE 8

int cfi_hdr__init(struct cfi_hdr *h, const Elf_Data *d, uint64_t addr, uint64_t eh_frame_addr)
{
	const uint8_t *p, *end;
	uint64_t eh_frame, count;
	uint8_t ptr_enc, count_enc, table_enc;

	memset(h, 0, sizeof(*h));
	if (!d || !d->d_buf || d->d_size < 4)
		return -ENOENT;
	p = d->d_buf;
	end = p + d->d_size;
	if (p[0] != HDR_VERSION)
		return -ENOENT;
	ptr_enc = p[1];
	count_enc = p[2];
	table_enc = p[3];
	p += 4;
	if (table_enc != HDR_TABLE_ENC || count_enc == DW_EH_PE_omit ||
	    cfi_prog__read_encoded(&p, end, ptr_enc, addr + 4, true, &eh_frame) ||
	    eh_frame != eh_frame_addr ||
	    cfi_prog__read_encoded(&p, end, count_enc, 0, false, &count))
		return -ENOENT;
	if (!count || count > UINT32_MAX || count > (uint64_t)(end - p) / HDR_ENTRY_SIZE)
		return -ENOENT;
	h->table = p;
	h->count = (uint32_t)count;
	h->addr = addr;
	return 0;
}

static int64_t sdata4(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v)); /* little-endian: the only byte order cfi.c opens */
	return v;
}

/* Entry i's initial location. */
static uint64_t entry_lo(const struct cfi_hdr *h, uint32_t i)
{
	return h->addr + (uint64_t)sdata4(h->table + (size_t)i * HDR_ENTRY_SIZE);
}

/* How many entries start at or below pc (the table is sorted: a linker's output). */
static uint32_t upto(const struct cfi_hdr *h, uint64_t pc)
{
	uint32_t lo = 0, hi = h->count, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (entry_lo(h, mid) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Entry i's FDE into *f: 0, or -EINVAL (unreadable, outside the table's
 * rules, or not starting where the table says: a table that does not match
 * its .eh_frame names no FDE).
 */
static int entry_fde(struct cfi_reader *r, uint32_t i, struct cfi_fde_ent *f)
{
	const struct cfi_hdr *h = &r->hdr;
	const struct cfi_section *s = &r->sec[CFI_SRC_EH_FRAME];
	uint64_t addr = h->addr + (uint64_t)sdata4(h->table + (size_t)i * HDR_ENTRY_SIZE + 4);

	if (addr < s->addr || addr - s->addr >= s->data->d_size ||
	    cfi_reader__fde_at_offset(r, addr - s->addr, f) || f->lo != entry_lo(h, i))
		return -EINVAL;
	return 0;
}

/* The entry read last (its end: the next one's check), -1: none. */
struct last_entry {
	int64_t i;
	bool ok; /* its FDE was read */
	uint64_t hi;
};

/*
 * Entry i's FDE, if it overlaps neither the one before it nor the one after
 * it in the table (the whole walk makes a run of overlapping FDEs one
 * unsupported row: no rule either way). Only neighbours are looked at: an
 * FDE overlapped by one further back (none a linker writes for compiled
 * code) keeps its rows here until the whole table replaces them. The one
 * before is read again only if last is not it.
 */
static int alone_fde(struct cfi_reader *r, uint32_t i, struct cfi_fde_ent *f,
		     struct last_entry *last)
{
	bool clash;
	int err;

	if (i > 0 && last->i != (int64_t)i - 1) {
		last->ok = !entry_fde(r, i - 1, f);
		last->hi = last->ok ? f->hi : 0;
	}
	clash = i > 0 && (!last->ok || last->hi > entry_lo(&r->hdr, i));
	err = entry_fde(r, i, f);
	*last = (struct last_entry){ i, !err, err ? 0 : f->hi };
	if (err || clash || (i + 1 < r->hdr.count && entry_lo(&r->hdr, i + 1) < f->hi))
		return -EINVAL;
	return 0;
}

int cfi_hdr__collect(struct cfi_reader *r, const struct cfi_range *want, uint32_t nr_want)
{
	struct last_entry last = { .i = -1 };
	struct cfi_fde_ent f;
	uint32_t k, i, next = 0; /* next: the first entry not looked at yet */
	int err;

	for (k = 0; k < nr_want; k++) {
		/* The FDE starting last at or below lo may hold it; later ones start inside. */
		i = upto(&r->hdr, want[k].lo);
		i = i ? i - 1 : 0;
		for (i = i > next ? i : next; i < r->hdr.count; i++) {
			if (entry_lo(&r->hdr, i) >= want[k].hi)
				break;
			next = i + 1;
			if (alone_fde(r, i, &f, &last) || f.hi <= want[k].lo)
				continue;
			err = cfi_reader__push_fde(r, &f);
			if (err)
				return err;
		}
	}
	return 0;
}

bool cfi_hdr__fde_at(struct cfi_reader *r, uint64_t pc, struct cfi_fde_ent *f)
{
	struct last_entry last = { .i = -1 };
	uint32_t i = upto(&r->hdr, pc);

	return i && !alone_fde(r, i - 1, f, &last) && pc < f->hi;
}

bool cfi_hdr__around(const struct cfi_hdr *h, uint64_t pc, uint32_t k, struct cfi_range *out)
{
	uint32_t i = upto(h, pc);

	if (!i)
		return false;
	i--;
	out->lo = entry_lo(h, i > k ? i - k : 0);
	/* Up to the start of the FDE after the last one (its own end when there is none). */
	out->hi = h->count - i > k + 1 ? entry_lo(h, i + k + 1) : UINT64_MAX;
	return out->hi > out->lo;
}
