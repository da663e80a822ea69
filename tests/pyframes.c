// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prints a CPython process's Python stacks as interp/python.c reads them
 * from outside, for tests/pyframes.test.
 *
 *   pyframes PID           one block per thread, innermost frame first:
 *                            thread IDENT NATIVE_ID
 *                              NAME (FILE:LINE)[ *]
 *                          " *": the outermost frame of a call of the native
 *                          eval loop (each such call is one native frame)
 *   pyframes --layout PID  the layout's offsets, name=value
 *   pyframes --attach PID... [--touch FILE PID...]
 *                          attaches to each in turn (after --touch, FILE's
 *                          times set to now), then prints "attached N reads
 *                          R hits H": the interpreter files read and those
 *                          found kept by their identity
 *
 * The first line is always "python VERSION SOURCE" and the attach-time
 * checks (counts); stderr says the eval loop's parts and their sizes
 * (codeparts.h). Exit status 1 when the process cannot be read.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "interp/python.h"
#include "util/log.h"

static int attach_each(int n, char **pids)
{
	uint64_t reads, hits;
	struct python *py;
	int i, attached = 0;

	for (i = 0; i < n; i++)
		if (!strcmp(pids[i], "--touch") && i + 1 < n) {
			if (utimensat(AT_FDCWD, pids[++i], NULL, 0))
				perror(pids[i]);
		} else if (!python__attach(atoi(pids[i]), &py)) {
			attached++;
			python__free(py);
		}
	python__object_stats(&reads, &hits);
	printf("attached %d reads %llu hits %llu\n", attached, (unsigned long long)reads,
	       (unsigned long long)hits);
	return 0;
}

int main(int argc, char **argv)
{
	const struct python_checks *c;
	const struct code_part *parts;
	struct python_thread *threads;
	struct python *py;
	bool layout = argc == 3 && !strcmp(argv[1], "--layout");
	size_t nr;
	int err;

	if (argc >= 3 && !strcmp(argv[1], "--attach"))
		return attach_each(argc - 2, argv + 2);
	if (argc != 2 && !layout) {
		fprintf(stderr, "usage: pyframes [--layout] PID\n");
		return 2;
	}
	log__init(1);
	err = python__attach(atoi(argv[argc - 1]), &py);
	if (err) {
		fprintf(stderr, "pyframes: %s\n", strerror(-err));
		return 1;
	}
	c = python__checks(py);
	printf("python %s %s threads %u interp %u task %u codes %u typed %u\n", python__version(py),
	       python__layout_src(py) == PYTHON_LAYOUT_BUILTIN ? "builtin" : "debug-offsets",
	       c->threads, c->threads_interp, c->threads_task, c->codes, c->codes_typed);
	nr = python__eval_parts(py, &parts);
	fprintf(stderr, "eval loop: %zu part(s):", nr);
	for (size_t i = 0; i < nr; i++)
		fprintf(stderr, " %llu", (unsigned long long)(parts[i].hi - parts[i].lo));
	fprintf(stderr, " bytes\n");
	if (layout) {
		python__print_layout(py, stdout);
		python__free(py);
		return 0;
	}
	err = python__threads(py, &threads, &nr);
	for (size_t i = 0; !err && i < nr; i++) {
		printf("thread %llu %llu\n", (unsigned long long)threads[i].thread_id,
		       (unsigned long long)threads[i].native_id);
		for (uint32_t j = 0; j < threads[i].nr_frames; j++) {
			char name[256], file[1024];
			int line;

			if (python__code_line(py, &threads[i].frames[j], name, sizeof(name), file,
					      sizeof(file), &line))
				printf("  ? (?:0)\n");
			else
				printf("  %s (%s:%d)%s\n", name, file, line,
				       threads[i].frames[j].entry ? " *" : "");
		}
	}
	if (!err)
		python__threads_free(threads, nr);
	python__free(py);
	if (err)
		fprintf(stderr, "pyframes: %s\n", strerror(-err));
	return err ? 1 : 0;
}
