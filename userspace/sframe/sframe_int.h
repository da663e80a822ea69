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
