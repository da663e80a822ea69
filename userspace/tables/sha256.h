/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256, for the digest of the bytes a table was built from (tablebytes.h).
 * A forger who wants a copy of a library whose digest is the real one's needs
 * a second preimage: a fast non-cryptographic hash (FNV, CRC) gives one in
 * seconds. Nettle's (Debian's libnettle8, on every system apt runs on, since
 * GnuTLS uses it) picks the CPU's SHA extensions at run time where there are
 * some: hashing is on the loader's path for files that share a build-id.
 *
 * Lifecycle: sha256__init, sha256__update any number of times, sha256__final.
 * No errors; no allocation.
 */
#ifndef SFBPF_SHA256_H
#define SFBPF_SHA256_H

#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES SHA256_DIGEST_SIZE

struct sha256 {
	struct sha256_ctx ctx;
};

static inline void sha256__init(struct sha256 *s)
{
	sha256_init(&s->ctx);
}

static inline void sha256__update(struct sha256 *s, const void *p, size_t n)
{
	sha256_update(&s->ctx, n, p);
}

static inline void sha256__final(struct sha256 *s, uint8_t out[SHA256_BYTES])
{
	sha256_digest(&s->ctx, SHA256_BYTES, out);
}

#endif /* SFBPF_SHA256_H */
