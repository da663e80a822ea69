/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hash functions every table in sfbpf uses: FNV-1a over bytes or a
 * string, finished by a 64-bit mixer so that the low bits (the ones an
 * open-addressing table indexes by) depend on every input byte.
 */
#ifndef SFBPF_UTIL_HASH_H
#define SFBPF_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* A bijective 64-bit finalizer (MurmurHash3's fmix64 constants). */
static inline uint64_t hash__mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* FNV-1a, unmixed: continue a running hash h over n more bytes. */
static inline uint64_t hash__fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

#define HASH_FNV1A_INIT 0xcbf29ce484222325ULL

static inline uint64_t hash__bytes(const void *p, size_t n)
{
	return hash__mix64(hash__fnv1a(HASH_FNV1A_INIT, p, n));
}

static inline uint64_t hash__str(const char *s)
{
	uint64_t h = HASH_FNV1A_INIT;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return hash__mix64(h);
}

#endif /* SFBPF_UTIL_HASH_H */
