/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The C library functions sfbpf uses that are newer than the oldest glibc a
 * release binary runs on (2.31, Debian 11 and Ubuntu 20.04: make release).
 * Built against a glibc that has them, these call them; built against 2.31,
 * they look them up when first called and fall back where the host's glibc
 * is as old as the one built against.
 */
#ifndef SFBPF_UTIL_GLIBC_H
#define SFBPF_UTIL_GLIBC_H

#include <stdint.h>

/* errno's symbolic name ("EINVAL"), as strerrorname_np (2.32); NULL if unknown. */
const char *glibc_errname(int err);

/*
 * The allocator's bytes handed out (small blocks and whole mappings) and
 * bytes free but kept in its arenas, as mallinfo2 (2.33) counts them. On an
 * older host, mallinfo's int counts, which wrap past 2 GiB.
 */
void glibc_heap(uint64_t *in_use, uint64_t *free_kept);

#endif /* SFBPF_UTIL_GLIBC_H */
