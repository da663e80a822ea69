/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 (FIPS 180-4), for the digest of the bytes a table was built from
 * (tablebytes.h). A forger who wants a copy of a library whose digest is the
 * real one's needs a second preimage: a fast non-cryptographic hash (FNV,
 * CRC) gives one in seconds. No library sfbpf links exports a cryptographic
 * hash (libelf, libdw, zlib, libbpf, libiberty's installed headers), and
 * linking libcrypto for one function would be a new dependency on every
 * build and cross-build.
 *
 * Lifecycle: sha256__init, sha256__update any number of times, sha256__final.
 * No errors; no allocation.
 */
#ifndef SFBPF_SHA256_H
#define SFBPF_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32

struct sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
	uint32_t used; /* bytes of buf filled */
};

void sha256__init(struct sha256 *s);
void sha256__update(struct sha256 *s, const void *p, size_t n);
void sha256__final(struct sha256 *s, uint8_t out[SHA256_BYTES]);

#endif /* SFBPF_SHA256_H */
