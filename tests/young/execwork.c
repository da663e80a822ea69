// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Programs exec'd faster than the loader reads them, for tests/execs.test:
 *   execwork loop SECS LIFE_MS PROG   exec PROG work LIFE_MS, one at a time,
 *                                     until they have run SECS of CPU time
 *                                     together (after half a second of
 *                                     start-up; ten times SECS of wall time
 *                                     at most)
 *   execwork work LIFE_MS             the exec'd program: LIFE_MS of its CPU
 *                                     time in main;NAME(a);NAME(b);NAME(spin)
 *   execwork late LIB MS              waits for a byte on stdin, then maps
 *                                     LIB (tests/young/latelib.c) and works
 *                                     MS of CPU time in main;ex_late;late_a;
 *                                     late_spin; prints the seconds from its
 *                                     start to the end of that work
 * CPU time, not wall time: a sampler at a fixed rate takes as many samples of
 * each worker, and of them all, however busy the machine is (a proof run
 * beside another suite gave a worker a tenth of a CPU).
 * Built twice: names ex_* by default, rw_* with -DREWRITTEN, whose layout
 * differs (another frame, rw_mid, with a frame of its own size between a and
 * b): a table of the one applied to the other's code would unwind it wrong.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/*
 * Iterations of work between two reads of the CPU clock (~20 us; the
 * environment's EXECWORK_SPIN if set). execs.test's gone run wants samples
 * inside the clock's system call (the vDSO's walk); its fkexec run, judged
 * against perf --call-graph dwarf, wants few: perf loses the stack of a
 * freshly exec'd process there ("[unknown] ([stack])"), and on a loaded
 * virtual machine, where a system call costs microseconds, 16 % of its
 * samples were there, a third of sfbpf's edges left without a reference.
 */
static int spin_iters = 20000;

/* This process's CPU time (a system call: read every spin_iters iterations of work). */
static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The CPU time of the children waited for. */
static double children_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

__attribute__((noinline)) static void NAME(spin)(double end)
{
	while (cpu_now() < end)
		for (int i = 0; i < spin_iters; i++)
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

/* Code mapped after the loader read the process: the library's, called from here. */
__attribute__((noinline)) static int ex_late(const char *lib, double ms)
{
	void (*late_a)(double end);
	void *h = dlopen(lib, RTLD_NOW);

	if (!h || !(late_a = (void (*)(double))dlsym(h, "late_a")))
		return 1;
	late_a(cpu_now() + ms / 1000);
	sink++;
	return 0;
}

int main(int argc, char **argv)
{
	double secs, cap, start = now();
	const char *every = getenv("EXECWORK_SPIN");
	char go;

	if (every && atoi(every) > 0)
		spin_iters = atoi(every);

	if (argc == 3 && !strcmp(argv[1], "work")) {
		NAME(a)(cpu_now() + atof(argv[2]) / 1000);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "late")) {
		if (read(0, &go, 1) != 1 || ex_late(argv[2], atof(argv[3])))
			return 1;
		printf("%.3f\n", now() - start);
		return 0;
	}
	if (argc != 5 || strcmp(argv[1], "loop"))
		return 2;
	usleep(500000);
	secs = atof(argv[2]);
	cap = now() + 10 * secs;
	while (children_cpu() < secs && now() < cap) {
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
