// SPDX-License-Identifier: GPL-2.0-or-later
/* The one diagnostics path: see log.h. */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Lines of a refused program's log printed without -vv: the verifier's reason is last. */
#define VERIFIER_TAIL_LINES 15

static char verifier_path[PATH_MAX];

void log__verifier_reset(void)
{
	verifier_path[0] = 0;
}

const char *log__verifier_path(void)
{
	return verifier_path[0] ? verifier_path : NULL;
}

/* log__printf() of a line of len bytes. */
static void print_line(enum log_level level, const char *prog, const char *line, int len)
{
	log__printf(level, "verifier (%s): %.*s", prog, len, line);
}

/* The whole log in a new file of its own (a root tool: never a name someone may have made). */
static void save_log(const char *prog, const char *body, size_t len)
{
	const char *dir = getenv("TMPDIR");
	bool ok;
	FILE *f;
	int fd;

	snprintf(verifier_path, sizeof(verifier_path), "%s/sfbpf-verifier-%.64s-XXXXXX.log",
		 dir && *dir ? dir : "/tmp", prog);
	fd = mkstemps(verifier_path, 4);
	if (fd < 0) {
		verifier_path[0] = 0;
		return;
	}
	f = fdopen(fd, "w");
	ok = f && fwrite(body, 1, len, f) == len;
	/* fclose() closes fd even when it fails: once, whatever happened. */
	if (f)
		ok = !fclose(f) && ok;
	else
		close(fd);
	if (!ok) {
		unlink(verifier_path);
		verifier_path[0] = 0;
	}
}

/*
 * A program's verifier log, which libbpf passes whole in one message: after
 * a load (debug level, with -vv) its statistics are printed and the log goes
 * to a file; after a refusal the log goes to a file, and its last lines (all
 * of them with -vv) are printed.
 */
static void verifier_log(enum log_level level, const char *msg)
{
	const char *name = strstr(msg, "prog '"), *body = strchr(msg, '\n'), *end, *line, *nl;
	char prog[64] = "?";
	int lines = 0, skip;

	if (name && sscanf(name, "prog '%63[^']'", prog) != 1)
		snprintf(prog, sizeof(prog), "?");
	if (!body)
		return;
	body++;
	end = strstr(body, "-- END PROG LOAD LOG --");
	if (!end)
		end = body + strlen(body);
	if (level != LOG_WARN) {
		for (line = body; line < end; line = nl + 1) {
			nl = memchr(line, '\n', end - line);
			nl = nl ? nl : end;
			if (!strncmp(line, "processed ", 10) ||
			    !strncmp(line, "verification time", 17))
				print_line(LOG_DEBUG, prog, line, nl - line);
		}
		/* -vv: the whole log of a program that loaded, for who tunes it. */
		save_log(prog, body, end - body);
		if (verifier_path[0])
			log__printf(LOG_DEBUG, "verifier (%s): its whole log: %s", prog,
				    verifier_path);
		verifier_path[0] = 0;
		return;
	}
	save_log(prog, body, end - body);
	for (line = body; line < end; line = nl + 1) {
		nl = memchr(line, '\n', end - line);
		nl = nl ? nl : end;
		lines++;
	}
	skip = max_level >= LOG_DEBUG || lines <= VERIFIER_TAIL_LINES ? 0 :
									lines - VERIFIER_TAIL_LINES;
	for (line = body; line < end; line = nl + 1) {
		nl = memchr(line, '\n', end - line);
		nl = nl ? nl : end;
		if (skip-- <= 0)
			print_line(LOG_WARN, prog, line, nl - line);
	}
}

/* libbpf's own messages carry "libbpf: " already. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum log_level l = level == LIBBPF_WARN ? LOG_WARN :
			   level == LIBBPF_INFO ? LOG_INFO :
						  LOG_DEBUG;
	char *msg;

	if (l > max_level)
		return 0;
	if (strstr(fmt, "BEGIN PROG LOAD LOG")) {
		if (vasprintf(&msg, fmt, ap) >= 0) {
			verifier_log(l, msg);
			free(msg);
		}
		return 0;
	}
	emit("", fmt, ap);
	return 0;
}

void log__init(int verbosity)
{
	log__set_level(verbosity >= 2 ? LOG_DEBUG : verbosity == 1 ? LOG_INFO : LOG_WARN);
	libbpf_set_print(libbpf_print);
}
