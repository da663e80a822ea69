/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the C test drivers share: one "PASS: NAME" or "FAIL: NAME: why" line
 * per check, as tests/run.sh counts them. Define TEST_PREFIX (e.g.
 * "outputs-") before including to prefix every name.
 */
#ifndef SFBPF_TESTLIB_H
#define SFBPF_TESTLIB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#ifndef TEST_PREFIX
#define TEST_PREFIX ""
#endif

static int failures;

static void report(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), unused));

/* Flushed: a crash or a forked child must not lose or repeat lines. */
static void report(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s%s", ok ? "PASS" : "FAIL", TEST_PREFIX, name);
	if (!ok) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		failures++;
	}
	printf("\n");
	fflush(stdout);
}

#endif /* SFBPF_TESTLIB_H */
