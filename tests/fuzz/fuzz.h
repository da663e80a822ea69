/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the libFuzzer targets in tests/fuzz/ (built by scripts/fuzz.sh).
 * An invariant that does not hold is a finding like a sanitizer report: it
 * prints what was wrong and aborts, so libFuzzer saves the input.
 */
#ifndef SFBPF_FUZZ_H
#define SFBPF_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_CHECK(cond, ...)                                              \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "fuzz invariant failed: %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			abort();                                           \
		}                                                          \
	} while (0)

/*
 * Bugs found and reported but not fixed yet would stop every run within
 * seconds. scripts/fuzz.sh sets SFBPF_FUZZ_SKIP_KNOWN=1 while fuzzing so the
 * targets pass over inputs showing them (each such check names its
 * regression input); replaying tests/fuzz/regress/ never sets it, so the bug
 * stays visible until it is fixed. Once fixed the filters never trigger.
 */
static inline int fuzz_skip_known(void)
{
	static int skip = -1;

	if (skip < 0) {
		const char *v = getenv("SFBPF_FUZZ_SKIP_KNOWN");

		skip = v && *v == '1';
	}
	return skip;
}

/*
 * The input as a file: the ELF readers take an fd (and mmap it, as they do
 * a process's mapped file). One memfd serves every run; it is rewritten
 * and resized to the input each time. Returns the fd or -1.
 */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	static int fd = -1;
	size_t done = 0;
	ssize_t n;

	if (fd < 0)
		fd = memfd_create("sfbpf-fuzz", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || ftruncate(fd, (off_t)size))
		return -1;
	while (done < size) {
		n = pwrite(fd, data + done, size - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return fd;
}

#endif /* SFBPF_FUZZ_H */
