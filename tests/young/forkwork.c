// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Processes that never exec, for tests/forks.test: every sample is taken in a
 * process younger than the loader's read of /proc.
 *   forkwork loop SECS LIFE_MS             one child at a time, each working
 *                                          LIFE_MS then exiting (a shell's
 *                                          subshells, a fork per request)
 *   forkwork prefork SECS LIFE_MS WORKERS  WORKERS children at once, each
 *                                          serving for LIFE_MS, replaced as
 *                                          it exits (a pre-fork server)
 * Both start with a second of start-up before the first fork, and fork until
 * their children have run SECS of CPU time together (ten times SECS of wall
 * time at most); a child works LIFE_MS of its own CPU time. CPU time, not
 * wall time: a sampler at a fixed rate takes as many samples on a busy
 * machine as on an idle one.
 * The children's work: main;fk_serve;fk_handle;fk_work (or fk_a;fk_b;fk_c;
 * fk_spin in loop mode), each frame a real call with CFI of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* This process's CPU time (a system call: read every ~20 us of work, not more). */
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

__attribute__((noinline)) static void fk_spin(double end)
{
	while (cpu_now() < end)
		for (int i = 0; i < 20000; i++)
			sink += i;
}

__attribute__((noinline)) static void fk_c(double end)
{
	fk_spin(end);
	sink++;
}

__attribute__((noinline)) static void fk_b(double end)
{
	fk_c(end);
	sink++;
}

__attribute__((noinline)) static void fk_a(double end)
{
	fk_b(end);
	sink++;
}

__attribute__((noinline)) static void fk_work(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) static void fk_handle(unsigned req)
{
	fk_work(20000 + req % 7);
	sink++;
}

__attribute__((noinline)) static void fk_serve(double end)
{
	for (unsigned req = 0; cpu_now() < end; req++)
		fk_handle(req);
	sink++;
}

int main(int argc, char **argv)
{
	double secs, cap, life;
	int workers, alive = 0;

	if (argc < 4)
		return 2;
	/*
	 * Start-up, as a server's: the loader reads the parent (its exec)
	 * meanwhile; a second leaves room for a loader slowed by a busy machine.
	 */
	usleep(1000000);
	secs = atof(argv[2]);
	cap = now() + 10 * secs;
	life = atof(argv[3]) / 1000;
	workers = argc > 4 ? atoi(argv[4]) : 1;
	if (!strcmp(argv[1], "loop")) {
		while (children_cpu() < secs && now() < cap) {
			pid_t p = fork();

			if (!p) {
				fk_a(cpu_now() + life);
				_exit(0);
			}
			if (p > 0)
				waitpid(p, NULL, 0);
		}
		return 0;
	}
	while ((children_cpu() < secs && now() < cap) || alive) {
		while (alive < workers && children_cpu() < secs && now() < cap) {
			pid_t p = fork();

			if (!p) {
				fk_serve(cpu_now() + life);
				_exit(0);
			}
			alive += p > 0;
		}
		if (wait(NULL) > 0)
			alive--;
		else
			alive = 0;
	}
	return 0;
}
