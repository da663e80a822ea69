/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the C test drivers share: one "PASS: NAME" or "FAIL: NAME: why" line
 * per check, as tests/run.sh counts them, and the count of failures. Define
 * TEST_PREFIX (e.g. "outputs-") before including to prefix every name;
 * test_tag adds a prefix chosen at run time after it (a mode's name).
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
static const char *test_tag __attribute__((unused)) = "";

static void report(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), unused));

/* Flushed: a crash or a forked child must not lose or repeat lines. */
static void report(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s%s%s", ok ? "PASS" : "FAIL", TEST_PREFIX, test_tag, name);
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

static void test_verdict(bool ok, const char *fmt, va_list ap)
{
	printf("%s: %s%s", ok ? "PASS" : "FAIL", TEST_PREFIX, test_tag);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	failures += !ok;
}

/*
 * A verdict whose whole line is formatted, for checks that say what they
 * judged and on how much whether they pass or not:
 * test_pass("pages %s: %u PCs agree", path, n).
 */
static void test_pass(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void test_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));

static void test_pass(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	test_verdict(true, fmt, ap);
	va_end(ap);
}

static void test_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	test_verdict(false, fmt, ap);
	va_end(ap);
}

#endif /* SFBPF_TESTLIB_H */
