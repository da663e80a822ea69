// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A process's executable name outlives a sweep of the symbolizer's strings
 * (issue 28), for tests/symbolize_exe.test. Built with ASan: a name read
 * after it was freed aborts the run.
 *
 *   symbolize_exe BIN DIR
 *     BIN (a copy of a long-sleeping program, e.g. sleep) runs as a child and
 *     is noted: its name is BIN. BIN is then moved to BIN.old (mv, as an
 *     upgrade may set the old binary aside): the child maps BIN.old, the same
 *     inode, and a refresh merges into the same generation, whose mappings
 *     now name only BIN.old. A second child maps 1,100 distinct files of DIR
 *     and is noted, then exits and is forgotten: its paths are swept (at
 *     least 1,000 freed). The first child's name is then read: BIN.old, the
 *     latest snapshot's. (Before the fix, the generation kept BIN, which no
 *     mapping held any more: the sweep freed it, and OTLP read it.)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols/symbolize.h"
#include "testlib.h"

#define NFILES 1100

/* Whether pid's maps show a mapping of path (its image is in place). */
static bool maps_name(pid_t pid, const char *path)
{
	char file[64], line[PATH_MAX + 128];
	size_t len = strlen(path), n;
	bool found = false;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/maps", pid);
	f = fopen(file, "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		n = strcspn(line, "\n");
		found = n >= len && !memcmp(line + n - len, path, len);
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * Starts BIN 300 and waits until the child runs it: its exe is BIN and its
 * maps show BIN. The exe link is set before the ELF loader maps the image,
 * so on a busy machine a snapshot between the two found no executable.
 */
static pid_t start_bin(const char *bin)
{
	char link[64], path[PATH_MAX];
	pid_t pid = fork();
	ssize_t n;
	int i;

	if (pid == 0) {
		execl(bin, bin, "300", (char *)NULL);
		_exit(127);
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	for (i = 0; pid > 0 && i < 6000; i++) { /* 60 s: a busy machine */
		n = readlink(link, path, sizeof(path) - 1);
		if (n > 0 && (path[n] = 0, !strcmp(path, bin)) && maps_name(pid, bin))
			return pid;
		usleep(10000);
	}
	return -1;
}

/* A child mapping NFILES distinct files of dir; ready once it writes to fd. */
static pid_t start_mapper(const char *dir)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		char path[PATH_MAX];
		int i, fd;

		close(pfd[0]);
		for (i = 0; i < NFILES; i++) {
			snprintf(path, sizeof(path), "%s/mapped-%04d", dir, i);
			fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd < 0 || ftruncate(fd, 4096) ||
			    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
				    MAP_FAILED)
				_exit(1);
			close(fd);
		}
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &c, 1) != 1) {
		close(pfd[0]);
		return -1;
	}
	close(pfd[0]);
	return pid;
}

int main(int argc, char **argv)
{
	char moved[PATH_MAX];
	struct symbolizer_stats st0, st1;
	struct symbolizer *s;
	const char *bin, *exe;
	pid_t child, mapper;

	if (argc != 3) {
		fprintf(stderr, "usage: symbolize_exe BIN DIR\n");
		return 2;
	}
	bin = argv[1];
	snprintf(moved, sizeof(moved), "%s.old", bin);
	s = symbolizer__new();
	child = start_bin(bin);
	if (!s || child < 0) {
		report(false, "exe-after-sweep", "could not start %s", bin);
		return 1;
	}
	symbolizer__note_pid(s, child);
	exe = symbolizer__exe(s, child);
	report(exe && !strcmp(exe, bin), "exe-noted", "%s", exe ? exe : "(none)");

	/* Moved: the same inode, the same generation, its mappings named anew. */
	if (rename(bin, moved)) {
		report(false, "exe-after-sweep", "mv %s: %s", bin, strerror(errno));
		goto out;
	}
	symbolizer__refresh_pid(s, child);

	mapper = start_mapper(argv[2]);
	if (mapper < 0) {
		report(false, "exe-after-sweep", "the mapping child failed");
		goto out;
	}
	symbolizer__note_pid(s, mapper);
	symbolizer__stats(s, &st0);
	kill(mapper, SIGKILL);
	waitpid(mapper, NULL, 0);
	symbolizer__forget_pid(s, mapper);
	symbolizer__stats(s, &st1);
	report(st1.strings_swept - st0.strings_swept >= 1000, "paths-swept",
	       "%llu paths swept after the mapper was forgotten (%llu interned before)",
	       (unsigned long long)(st1.strings_swept - st0.strings_swept),
	       (unsigned long long)st0.strings);
	exe = symbolizer__exe(s, child);
	report(exe && !strcmp(exe, moved), "exe-after-sweep", "%s (want %s)", exe ? exe : "(none)",
	       moved);
out:
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	symbolizer__free(s);
	return failures ? 1 : 0;
}
