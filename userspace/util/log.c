// SPDX-License-Identifier: GPL-2.0-or-later
/* The one diagnostics path: see log.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "util/log.h"

#define PREFIX "sfbpf: "

static enum log_level max_level = LOG_WARN;

void log__set_level(enum log_level level)
{
	max_level = level;
}

enum log_level log__level(void)
{
	return max_level;
}

/*
 * One write per line, so that lines from loader threads never interleave;
 * a line longer than the buffer is cut, not split.
 */
static void emit(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	size_t len = strlen(prefix);
	int n;

	memcpy(buf, prefix, len);
	n = vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
	if (n < 0)
		return;
	len += (size_t)n < sizeof(buf) - len ? (size_t)n : sizeof(buf) - len - 1;
	if (len && buf[len - 1] != '\n') {
		if (len == sizeof(buf) - 1)
			len--;
		buf[len++] = '\n';
	}
	fflush(stderr); /* keep order with anything still buffered there */
	if (write(STDERR_FILENO, buf, len) < 0)
		return;
}

void log__printf(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	emit(PREFIX, fmt, ap);
	va_end(ap);
}

/* libbpf's own messages carry "libbpf: " already. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum log_level l = level == LIBBPF_WARN ? LOG_WARN :
			   level == LIBBPF_INFO ? LOG_INFO :
						  LOG_DEBUG;

	if (l > max_level)
		return 0;
	emit("", fmt, ap);
	return 0;
}

void log__init(int verbosity)
{
	log__set_level(verbosity >= 2 ? LOG_DEBUG : verbosity == 1 ? LOG_INFO : LOG_WARN);
	libbpf_set_print(libbpf_print);
}
