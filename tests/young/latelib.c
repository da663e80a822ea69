// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A library that tests/young/execwork.c maps late (dlopen), after the loader
 * has read the process: late_a;late_spin, built without frame pointers, so
 * that only a table of this file walks out of it.
 */
#include <time.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) void late_spin(double end)
{
	while (cpu_now() < end)
		for (int i = 0; i < 20000; i++)
			sink += i;
}

__attribute__((noinline)) void late_a(double end)
{
	late_spin(end);
	sink++;
}
