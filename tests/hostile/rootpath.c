// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * procmap__open() on a mapping /proc/PID/map_files cannot serve (it went away
 * between reading maps and opening, the race a hostile process controls), so
 * the /proc/PID/root/PATH fallback is taken. PATH and the inode come from the
 * hostile process's maps: whatever PATH is inside that root, the file opened
 * must be one inside it, and opening must not block.
 *
 * Usage: rootpath PID PATH INODE
 * Prints "refused ERRNO-NAME", or "opened DEV:INO REALPATH" (the file that was
 * opened, as this process sees it). Exits 0 either way; the test judges.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procs/procmaps.h"

int main(int argc, char **argv)
{
	struct procmap m = { 0 };
	char link[64], real[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: %s PID PATH INODE\n", argv[0]);
		return 2;
	}
	/* An address range no mapping has: map_files answers ENOENT. */
	m.start = 0x1000;
	m.end = 0x2000;
	m.perms = PROCMAP_READ | PROCMAP_EXEC;
	m.path = argv[2];
	m.inode = strtoull(argv[3], NULL, 0);
	fd = procmap__open(atoi(argv[1]), &m);
	if (fd < 0) {
		printf("refused %s\n", strerror(-fd));
		return 0;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof(real) - 1);
	real[n > 0 ? n : 0] = '\0';
	if (fstat(fd, &st))
		memset(&st, 0, sizeof(st));
	printf("opened %llu:%llu %s\n", (unsigned long long)st.st_dev,
	       (unsigned long long)st.st_ino, real);
	close(fd);
	return 0;
}
