/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The symbolizer's clock: CLOCK_MONOTONIC in nanoseconds, the clock of
 * bpf_ktime_get_ns() that sample times use, and of its rate limits.
 */
#ifndef SFBPF_SYMBOLS_CLOCK_H
#define SFBPF_SYMBOLS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t symbols__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif /* SFBPF_SYMBOLS_CLOCK_H */
