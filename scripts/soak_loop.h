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

/*
 * This thread's CPU time, s: the churn's units of work spin for so much CPU,
 * not wall time, so that the load (and the samples it gives, and what the
 * profilers hold for them) is the same whatever else the machine runs. Spun
 * by the wall clock, a unit got a third of its CPU while a proof ran beside
 * the soak, and the samples rose from 31 to 55 a second once it ended: the
 * judged memory followed the machine, not the profiler (RELIABILITY, run 4).
 */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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
