// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OTLP names a process's executable as it was while the process ran, not
 * as /proc/PID/exe says at export time (issue 28), for tests/tenant_otlp.test:
 *
 *   tenant_otlp SECOND
 *     A child (this program, forked) is noted by a symbolizer, then execs
 *     SECOND (another program under the same PID, as after PID reuse); a
 *     sample of the child taken before is exported: its resource's
 *     process.executable.name must be this program's name, not SECOND's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile/snapshot.h"
#include "bpf/abi.h"
#include "output/otlp.h"
#include "profile/aggregate.h"
#include "symbols/symbolize.h"
#include "testlib.h"

#define KEY "process.executable.name"

__attribute__((noinline)) static int spin(int x)
{
	return x * 7 + 1;
}

/* Varint at *p (within end); 0 past the end. */
static uint64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	int shift = 0;

	while (*p < end && shift < 64) {
		v |= (uint64_t)(**p & 0x7f) << shift;
		if (!(*(*p)++ & 0x80))
			return v;
		shift += 7;
	}
	return 0;
}

/*
 * The values of every KEY attribute in the request (KeyValue: key, then
 * value = AnyValue { string_value = 1 }), into names; their number.
 */
static int exe_names(const uint8_t *data, size_t size, char names[][256], int max)
{
	const uint8_t *p = data, *end = data + size, *hit;
	uint64_t len;
	int n = 0;

	while (n < max && (hit = memmem(p, end - p, KEY, sizeof(KEY) - 1))) {
		p = hit + sizeof(KEY) - 1;
		if (p >= end || *p++ != 0x12) /* field 2, length-delimited */
			continue;
		varint(&p, end);
		if (p >= end || *p++ != 0x0a) /* field 1, string */
			continue;
		len = varint(&p, end);
		if (len >= 256 || len > (uint64_t)(end - p))
			continue;
		memcpy(names[n], p, len);
		names[n++][len] = '\0';
		p += len;
	}
	return n;
}

/* Whether /proc/PID/exe names a file called base, waiting 10 s at most. */
static bool exe_is(int pid, const char *base)
{
	struct timespec nap = { 0, 10 * 1000000 };
	char link[64], path[PATH_MAX];
	const char *b;
	ssize_t n;
	int i;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	for (i = 0; i < 1000; i++) {
		n = readlink(link, path, sizeof(path) - 1);
		if (n > 0) {
			path[n] = '\0';
			b = strrchr(path, '/');
			if (!strcmp(b ? b + 1 : path, base))
				return true;
		}
		nanosleep(&nap, NULL);
	}
	return false;
}

int main(int argc, char **argv)
{
	struct otlp_opts opts = { .po = { .freq = 99 } };
	struct sfbpf_sample *sample = calloc(1, sizeof(*sample));
	struct symbolizer *sym = symbolizer__new();
	struct aggregator *a = aggregator__new();
	struct snapshot *snap;
	const char *second, *me;
	char names[8][256];
	int go[2], n, i, ok;
	size_t size = 0;
	void *data = NULL;
	pid_t child;

	if (argc != 2 || !sample || !sym || !a || pipe(go)) {
		fprintf(stderr, "usage: tenant_otlp SECOND\n");
		return 2;
	}
	second = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	me = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	child = fork();
	if (child == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) == 1)
			execl(argv[1], argv[1], "60", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	/* Seen while it is this program: the snapshot a profile would be symbolized with. */
	report(!symbolizer__note_pid(sym, child), "tenant-otlp-noted", "pid %d", child);
	memset(sample, 0, sizeof(*sample));
	sample->pid = sample->tid = child;
	sample->weight = 1;
	sample->nr_user = 1;
	sample->ips[0] = (uint64_t)(uintptr_t)spin + 1;
	snprintf(sample->comm, sizeof(sample->comm), "tenant-child");
	aggregator__add(a, sample);
	/* Then the PID is another program's, before the profile is written. */
	if (write(go[1], "x", 1) != 1 || !exe_is(child, second)) {
		report(false, "tenant-otlp-exec", "pid %d never became %s", child, second);
		kill(child, SIGKILL);
		return 1;
	}
	snap = snapshot__new(a, sym, NULL);
	ok = snap && !otlp__encode(snap, &opts, &data, &size);
	snapshot__free(snap);
	n = ok ? exe_names(data, size, names, 8) : 0;
	for (i = 0; i < n; i++)
		ok &= !strcmp(names[i], me);
	report(ok && n == 1, "tenant-otlp-exe-name", "%d %s values: %s (want %s, not %s)", n, KEY,
	       n ? names[0] : "none", me, second);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	free(data);
	aggregator__free(a);
	symbolizer__free(sym);
	free(sample);
	return failures ? 1 : 0;
}
