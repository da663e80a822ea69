// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The program tests/release.test profiles from a release sfbpf-top running in
 * another distribution's root: built here with -O2 and no frame pointers, so
 * that its stacks unwind from .eh_frame only.
 *   spin SECS    main -> outer -> inner -> spin, on CPU
 *   sleep SECS   main -> napper -> nanosleep, off CPU (10 ms naps)
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static time_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

__attribute__((noinline)) static void spin(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i * i;
}

__attribute__((noinline)) static void inner(void)
{
	spin();
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void outer(void)
{
	inner();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void napper(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int sleeper = argc > 1 && !strcmp(argv[1], "sleep");
	time_t end = now() + (argc > 2 ? atoi(argv[2]) : 60);

	while (now() < end) {
		if (sleeper)
			napper();
		else
			outer();
	}
	return 0;
}
