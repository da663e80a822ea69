/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole reads and writes: read(2) and write(2) may move fewer bytes than
 * asked (a signal, a pipe, a filesystem's own limits); these loop until all
 * are moved. Error rule: 0, or a negative errno; -EIO when the file ends
 * first (a short read is a file that shrank, never a partial result).
 */
#ifndef SFBPF_UTIL_FULLIO_H
#define SFBPF_UTIL_FULLIO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* n bytes of fd at off into p. */
static inline int fullio__pread(int fd, void *p, size_t n, uint64_t off)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = pread(fd, (char *)p + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += (size_t)r;
	}
	return 0;
}

/* n bytes of p to fd, at its offset. */
static inline int fullio__write(int fd, const void *p, size_t n)
{
	size_t done = 0;
	ssize_t w;

	while (done < n) {
		w = write(fd, (const char *)p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}

#endif /* SFBPF_UTIL_FULLIO_H */
