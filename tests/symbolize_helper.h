/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The helper process tests/symbolize.c checks the symbolizer against: a
 * program (tests/symbolize.test's helper.c, tests/fixtures-sym/app.c) run on
 * pipes, that prints "KIND NAME ADDR" lines (its probes: the runtime
 * addresses of its functions, of libc's getpid, of the vdso...) then "ready",
 * and answers command lines on its stdin (exec, dlopen...) the same way.
 * Included by tests/symbolize.c and tests/symbolize_gone.c (every
 * tests/NAME.c is a program of its own, so a part two share is a header; its
 * functions inline, as each program uses some).
 */
#ifndef SFBPF_TESTS_SYMBOLIZE_HELPER_H
#define SFBPF_TESTS_SYMBOLIZE_HELPER_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PROBES 32

struct probe {
	char kind[16]; /* func, libc, vdso, jit, heap */
	char name[64];
	uint64_t addr;
};

struct helper {
	pid_t pid;
	FILE *out; /* its stdout */
	int in; /* its stdin: closing it makes it exit */
	struct probe probes[MAX_PROBES];
	int n;
};

/* Collect "KIND NAME ADDR" lines until "ready". */
static inline int helper__wait_ready(struct helper *h)
{
	char line[256];

	while (h->out && fgets(line, sizeof(line), h->out)) {
		struct probe *p = &h->probes[h->n];

		if (strncmp(line, "ready", 5) == 0)
			return 0;
		if (h->n < MAX_PROBES &&
		    sscanf(line, "%15s %63s %" SCNx64, p->kind, p->name, &p->addr) == 3)
			h->n++;
	}
	return -EIO;
}

static inline int helper__start(struct helper *h, char *const argv[])
{
	int to[2], from[2];

	if (pipe(to) || pipe(from))
		return -errno;
	h->pid = fork();
	if (h->pid < 0)
		return -errno;
	if (h->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	h->in = to[1];
	h->out = fdopen(from[0], "r");
	return helper__wait_ready(h);
}

/* Send a command line to the helper; its probes are appended to h->probes. */
static inline int helper__command(struct helper *h, const char *cmd)
{
	size_t len = strlen(cmd);

	if (write(h->in, cmd, len) != (ssize_t)len)
		return -EIO;
	return helper__wait_ready(h);
}

static inline void helper__stop(struct helper *h)
{
	int st;

	close(h->in);
	waitpid(h->pid, &st, 0);
	if (h->out)
		fclose(h->out);
}

static inline const struct probe *probe(const struct helper *h, const char *kind, const char *name)
{
	int i;

	for (i = 0; i < h->n; i++) {
		if (!strcmp(h->probes[i].kind, kind) && (!name || !strcmp(h->probes[i].name, name)))
			return &h->probes[i];
	}
	return NULL;
}

/*
 * The newest probe named name: after a command (an exec), the helper's
 * current address of a name is the one it printed last.
 */
static inline const struct probe *probe_by_name(const struct helper *h, const char *name)
{
	int i;

	for (i = h->n - 1; i >= 0; i--) {
		if (!strcmp(h->probes[i].name, name))
			return &h->probes[i];
	}
	return NULL;
}

#endif /* SFBPF_TESTS_SYMBOLIZE_HELPER_H */
