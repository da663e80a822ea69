/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a program says with --version: its version and commit (version.h,
 * written by the Makefile), then what it runs on. The kernels are the ones
 * the suite proves (make check-kernels, make check-arm64); the C library is
 * the one it was built against, whose symbol versions bound what it needs
 * (make release builds against glibc 2.31).
 */
#ifndef SFBPF_UTIL_BUILDINFO_H
#define SFBPF_UTIL_BUILDINFO_H

#include <features.h>

#include "version.h"

#if defined(__x86_64__)
#define SFBPF_ARCH "x86-64"
#elif defined(__aarch64__)
#define SFBPF_ARCH "arm64"
#else
#error "sfbpf is built for x86-64 and arm64"
#endif

#define SFBPF_STR_(x) #x
#define SFBPF_STR(x) SFBPF_STR_(x)

#define SFBPF_VERSION_TEXT(prog)                                                      \
	prog " " SFBPF_VERSION " (commit " SFBPF_COMMIT ")\n"                         \
	     "Linux " SFBPF_ARCH ", kernel 5.10 or later with BTF; glibc " SFBPF_STR( \
		     __GLIBC__) "." SFBPF_STR(__GLIBC_MINOR__) " or later"

#endif /* SFBPF_UTIL_BUILDINFO_H */
