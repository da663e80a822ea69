// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prints, for each path, whose word its identity is (util/fileident.h):
 * "PATH kernel" or "PATH author", or "PATH error: why". tests/fileident.test
 * makes the filesystems and judges.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileident.h"

int main(int argc, char **argv)
{
	struct stat st;
	int i, fd, rc = 0;

	for (i = 1; i < argc; i++) {
		fd = open(argv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			printf("%s error: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else {
			printf("%s %s\n", argv[i],
			       fileident__kernel_kept(fd, &st) ? "kernel" : "author");
		}
		if (fd >= 0)
			close(fd);
	}
	return rc;
}
