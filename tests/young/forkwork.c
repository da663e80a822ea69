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
 * Both start with a second of start-up before the first fork.
 * The children's work: main;fk_serve;fk_handle;fk_work (or fk_a;fk_b;fk_c;
 * fk_spin in loop mode), each frame a real call with CFI of its own.
 */
#include <stdlib.h>
#include <string.h>
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

__attribute__((noinline)) static void fk_spin(double end)
{
	while (now() < end)
		for (int i = 0; i < 1000; i++)
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
	for (unsigned req = 0; now() < end; req++)
		fk_handle(req);
	sink++;
}

int main(int argc, char **argv)
{
	double end, life;
	int workers, alive = 0;

	if (argc < 4)
		return 2;
	/*
	 * Start-up, as a server's: the loader reads the parent (its exec)
	 * meanwhile; a second leaves room for a loader slowed by a busy machine.
	 */
	usleep(1000000);
	end = now() + atof(argv[2]);
	life = atof(argv[3]) / 1000;
	workers = argc > 4 ? atoi(argv[4]) : 1;
	if (!strcmp(argv[1], "loop")) {
		while (now() < end) {
			pid_t p = fork();

			if (!p) {
				fk_a(now() + life);
				_exit(0);
			}
			if (p > 0)
				waitpid(p, NULL, 0);
		}
		return 0;
	}
	while (now() < end || alive) {
		while (alive < workers && now() < end) {
			pid_t p = fork();

			if (!p) {
				fk_serve(now() + life);
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
