/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The soak's load generators' loop (soak_load.c, soak_churn.c): run until a
 * duration is over or SIGTERM (on_term) ends it, sleeping in steps SIGTERM
 * cuts short.
 */
#ifndef SOAK_LOOP_H
#define SOAK_LOOP_H

#include <errno.h>
#include <signal.h>
#include <time.h>

static volatile sig_atomic_t terminated; /* SIGTERM: end the loop now */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_term(int sig)
{
	(void)sig;
	terminated = 1;
}

/* The loops' condition: SECS not over, no SIGTERM. */
static int running(double t0, double secs)
{
	return !terminated && now() - t0 < secs;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (s > 0 && nanosleep(&ts, &ts) && errno == EINTR && !terminated)
		;
}

#endif /* SOAK_LOOP_H */
