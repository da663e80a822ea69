// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A file shrinking under the reader. The ELF readers map the object with
 * libelf (ELF_C_READ_MMAP) through an fd from /proc/PID/map_files, and the
 * owner of a shared library can truncate it while it is mapped: touching a
 * mapped page past the new end of file raises SIGBUS, which kills the
 * profiler. Here one thread truncates and restores a copy of an ELF file in
 * a loop while the main thread reads it the way the loader does
 * (elfobj__read, sframe_elf__load_fd, cfi__flatten_fd).
 *
 * Usage: truncate_race ELF WORKFILE SECONDS   (WORKFILE: the copy, removed)
 * Prints "survived N reads" (exit 0) or "SIGBUS after N reads" (exit 1).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tables/cfi.h"
#include "tables/elfobj.h"
#include "sframe/sframe_elf.h"

static const char *path;
static char *image;
static size_t image_size;
static volatile sig_atomic_t done;
static volatile unsigned long reads;

static void on_sigbus(int sig)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "SIGBUS after %lu reads\n", reads);

	(void)sig;
	unlink(path);
	if (write(STDOUT_FILENO, msg, n) < 0)
		_exit(2);
	_exit(1);
}

/* The file's owner: shrink it to nothing, then put it back, over and over. */
static void *truncator(void *arg)
{
	int fd = open(path, O_WRONLY);

	(void)arg;
	while (fd >= 0 && !done) {
		if (ftruncate(fd, 0) || pwrite(fd, image, image_size, 0) != (ssize_t)image_size)
			break;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int load(const char *src)
{
	struct stat st;
	FILE *f = fopen(src, "rb");

	if (!f || fstat(fileno(f), &st))
		return -1;
	image_size = (size_t)st.st_size;
	image = malloc(image_size);
	if (!image || fread(image, 1, image_size, f) != image_size)
		return -1;
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	struct flat_table *t;
	struct sframe_elf s;
	struct elfobj_info info;
	pthread_t thr;
	time_t end;
	int fd;

	if (argc != 4 || load(argv[1])) {
		fprintf(stderr, "usage: %s ELF WORKFILE SECONDS\n", argv[0]);
		return 2;
	}
	path = argv[2];
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, image, image_size) != (ssize_t)image_size)
		return 2;
	close(fd);
	signal(SIGBUS, on_sigbus);
	pthread_create(&thr, NULL, truncator, NULL);
	end = time(NULL) + atoi(argv[3]);
	while (time(NULL) < end) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		elfobj__read(fd, &info);
		if (!sframe_elf__load_fd(fd, &s, NULL))
			sframe_elf__release(&s);
		if (!cfi__flatten_fd(fd, &t, NULL))
			flat_table__free(t);
		close(fd);
		reads++;
	}
	done = 1;
	pthread_join(thr, NULL);
	unlink(path);
	printf("survived %lu reads\n", reads);
	return 0;
}
