/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the SFrame decoder: the decoder's state and the reads and checks
 * that sframe.c (header, FDEs, validation, lookups) and sframe_fre.c (FRE
 * fields and data words into CFA/RA/FP rules) share. Not for other modules.
 */
#ifndef SFBPF_SFRAME_INT_H
#define SFBPF_SFRAME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sframe/sframe.h"

struct sframe_decoder {
	const uint8_t *data;
	size_t size;
	uint64_t sect_addr;
	bool swap;
	struct sframe_header hdr;
	size_t fde_base; /* section offset of the FDE sub-section */
	size_t fre_base; /* section offset of the FRE sub-section */
	size_t fde_size; /* 17, 20 or 16 bytes per FDE (index entry in V3) */
	uint32_t *by_start; /* FDE indexes sorted by function start */
	uint32_t num_reserved; /* FDEs skipped for a reserved type */
};

/* Unaligned, endian-aware reads. Callers have checked bounds. */
static inline uint8_t rd8(const struct sframe_decoder *d, size_t off)
{
	return d->data[off];
}

static inline uint16_t rd16(const struct sframe_decoder *d, size_t off)
{
	uint16_t v;

	memcpy(&v, d->data + off, sizeof(v));
	return d->swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t rd32(const struct sframe_decoder *d, size_t off)
{
	uint32_t v;

	memcpy(&v, d->data + off, sizeof(v));
	return d->swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t rd64(const struct sframe_decoder *d, size_t off)
{
	uint64_t v;

	memcpy(&v, d->data + off, sizeof(v));
	return d->swap ? __builtin_bswap64(v) : v;
}

/* Bytes of an FRE's start address: ADDR1, ADDR2, ADDR4. */
static inline unsigned sframe_fre__addr_size(uint8_t fre_type)
{
	return 1u << fre_type;
}

/* Most data words an FRE of this FDE may carry. */
static inline unsigned sframe_fre__max_datawords(const struct sframe_decoder *d,
						 const struct sframe_fde *f)
{
	if (f->fde_type == SFRAME_FDE_TYPE_FLEX)
		return 6; /* CFA pair, RA pair, FP pair */
	return d->hdr.cfa_fixed_ra_offset ? 2 : 3; /* CFA[, RA], FP */
}

/*
 * The cheap part of sframe_fre__read(), for walks over many FREs: the start
 * offset and the size in bytes of the FRE at section offset off (end: the
 * FRE sub-section's end; asz, max_dw: the FDE's address size and data-word
 * limit). The same checks, without a message: -1 exactly where
 * sframe_fre__read() fails, and then that says why.
 */
static inline int sframe_fre__peek(const struct sframe_decoder *d, unsigned asz, unsigned max_dw,
				   size_t off, size_t end, uint32_t *start)
{
	unsigned info, size_code, count;
	size_t len;

	if (off + asz + 1 > end)
		return -1;
	*start = asz == 1 ? rd8(d, off) : asz == 2 ? rd16(d, off) : rd32(d, off);
	info = d->data[off + asz];
	size_code = (info >> 5) & 0x3;
	count = (info >> 1) & 0xf;
	if (size_code > SFRAME_FRE_DATAWORD_4B || count > max_dw)
		return -1;
	len = asz + 1 + ((size_t)count << size_code);
	if (off + len > end)
		return -1;
	return (int)len;
}

/* Fills err (when non-NULL) and returns -EINVAL. */
int sframe__set_err(struct sframe_error *err, enum sframe_errcode code, uint64_t off,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Reads the FRE at section offset off of FDE f: start address, info byte and
 * raw data words. Returns the FRE's size in bytes, or -EINVAL with err set
 * when it is malformed or runs past the FRE sub-section.
 */
int sframe_fre__read(const struct sframe_decoder *d, const struct sframe_fde *f, size_t off,
		     struct sframe_fre *fre, struct sframe_error *err);
/* Turns an FRE's raw data words into CFA/RA/FP rules; 0 or -EINVAL. */
int sframe_fre__rules(const struct sframe_decoder *d, const struct sframe_fde *f,
		      struct sframe_fre *fre, size_t off, struct sframe_error *err);

#endif /* SFBPF_SFRAME_INT_H */
