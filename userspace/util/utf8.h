/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * UTF-8 validation for names that leave the process in formats that demand
 * it (pprof's strings, SVG/XML text): symbol names and commands are bytes.
 */
#ifndef SFBPF_UTIL_UTF8_H
#define SFBPF_UTIL_UTF8_H

#include <stddef.h>

/*
 * Length of the well-formed UTF-8 sequence starting at s (1 to 4), or 0 when
 * the bytes there are not one: overlong forms, surrogates, code points past
 * U+10FFFF and truncated sequences are refused. s must be NUL-terminated.
 */
size_t utf8__seq_len(const unsigned char *s);

#endif /* SFBPF_UTIL_UTF8_H */
