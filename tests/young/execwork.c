// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Programs exec'd faster than the loader reads them, for tests/execs.test:
 *   execwork loop SECS LIFE_MS PROG   exec PROG work LIFE_MS, one at a time,
 *                                     for SECS (after half a second of
 *                                     start-up)
 *   execwork work LIFE_MS             the exec'd program: LIFE_MS in
 *                                     main;NAME(a);NAME(b);NAME(spin)
 * Built twice: names ex_* by default, rw_* with -DREWRITTEN, whose layout
 * differs (another frame, rw_mid, with a frame of its own size between a and
 * b): a table of the one applied to the other's code would unwind it wrong.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef REWRITTEN
#define NAME(x) rw_##x
#else
#define NAME(x) ex_##x
#endif

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void NAME(spin)(double end)
{
	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

__attribute__((noinline)) static void NAME(b)(double end)
{
	NAME(spin)(end);
	sink++;
}

#ifdef REWRITTEN
__attribute__((noinline)) static void NAME(mid)(double end)
{
	volatile char pad[1000];

	pad[0] = 1;
	NAME(b)(end);
	sink += pad[0];
}
#define NEXT NAME(mid)
#else
#define NEXT NAME(b)
#endif

__attribute__((noinline)) static void NAME(a)(double end)
{
	NEXT(end);
	sink++;
}

int main(int argc, char **argv)
{
	double end;

	if (argc == 3 && !strcmp(argv[1], "work")) {
		NAME(a)(now() + atof(argv[2]) / 1000);
		return 0;
	}
	if (argc != 5 || strcmp(argv[1], "loop"))
		return 2;
	usleep(500000);
	end = now() + atof(argv[2]);
	while (now() < end) {
		pid_t p = fork();

		if (!p) {
			execl(argv[4], argv[4], "work", argv[3], (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return 0;
}
