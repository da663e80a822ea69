/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The clocks, in the units callers want. Intervals, timeouts and ages are
 * measured on the monotonic clock: wall-clock steps (NTP, an operator) must
 * not stretch or shrink them. The wall clock is for what is stamped with the
 * time of day only: a profile's start, a file's name.
 */
#ifndef SFBPF_UTIL_CLOCK_H
#define SFBPF_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline int64_t clock__mono_ms(void)
{
	return (int64_t)(clock__mono_ns() / 1000000);
}

static inline double clock__mono_s(void)
{
	return (double)clock__mono_ns() / 1e9;
}

/* A timespec (a file's mtime or ctime, say) in nanoseconds. */
static inline int64_t clock__ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* Nanoseconds since the epoch (CLOCK_REALTIME). */
static inline int64_t clock__wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return clock__ts_ns(&ts);
}

#endif /* SFBPF_UTIL_CLOCK_H */
