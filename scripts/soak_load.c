// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Load generators of scripts/soak.sh, one program with modes, built with
 * SFrame (-Wa,--gsframe) so that its stacks unwind from .sframe:
 *
 *   soak_load storm SECS RATE SPIN_EVERY SPIN_SECS [SHORT_SECS]
 *       fork+exec "soak_short short [SHORT_SECS]" RATE times a second, and every
 *       SPIN_EVERY seconds "soak_spin spin SPIN_SECS" (main;a;b;hot), through
 *       the symlinks soak.sh makes beside this program (their names are the
 *       processes' comm); prints "storm_short N" and "storm_spin N"
 *       (processes started) at the end
 *   soak_load spin SECS       the chain main;a;b;hot spinning for SECS
 *   soak_load short [SECS]    exits at once, or after spinning SECS of its
 *                             CPU time in main;a;b;hot (long enough to be
 *                             sampled; the same work however busy the
 *                             machine)
 *   soak_load dlopen SECS LIB ON_MS OFF_MS
 *       dlopen LIB, spin ON_MS in its plugin_entry (main;run_plugin;
 *       plugin_entry;plugin_inner;plugin_hot), dlclose, sleep OFF_MS, again;
 *       prints "dlopen_cycles N"
 *   soak_load threads SECS RATE ON_MS
 *       RATE threads a second, each spinning ON_MS in thread_main;t_a;t_hot
 *       and exiting; prints "threads N"
 *
 * Every mode ends by itself after SECS: nothing outlives the soak. SIGTERM
 * ends storm, dlopen and threads early, as if SECS had passed: they still
 * wait for what they started and print their counts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "soak_loop.h"

#define NOIPA __attribute__((noipa))

static volatile unsigned long sink;
/* What hot() spins by: the wall clock (spin), or its CPU time (short: a fixed amount of work). */
static double (*spin_clock)(void) = now;

/* ---- spin: main;a;b;hot -------------------------------------------------------- */

NOIPA static void hot(double end)
{
	unsigned long i;

	do {
		for (i = 0; i < 100000; i++)
			sink++;
	} while (spin_clock() < end);
}

NOIPA static unsigned long b(double end, unsigned long x)
{
	unsigned long p = x * 3, q = x ^ 5, r = x + 7;

	hot(end);
	sink += p ^ q ^ r;
	return p + q + r;
}

NOIPA static void a(double end)
{
	sink += b(end, sink);
}

/* ---- storm ----------------------------------------------------------------------- */

static char dir[4096], path[4200];

/* Runs NAME (a symlink to this program beside it, so that comm is NAME) with mode and arg. */
static int start(const char *name, const char *mode, const char *arg)
{
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl(path, name, mode, arg, (char *)NULL);
		_exit(127);
	}
	return 0;
}

static void reap(int options)
{
	while (waitpid(-1, NULL, options) > 0)
		;
}

static int storm(double secs, double rate, double spin_every, const char *spin_secs,
		 const char *short_secs)
{
	double t0 = now(), next_spin = t0, tick = 1.0 / rate;
	unsigned long shorts = 0, spins = 0;
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	if (n <= 0 || !strrchr(dir, '/'))
		return 1;
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	while (running(t0, secs)) {
		if (!start("soak_short", "short", short_secs))
			shorts++;
		if (now() >= next_spin) {
			if (!start("soak_spin", "spin", spin_secs))
				spins++;
			next_spin += spin_every;
		}
		reap(WNOHANG);
		sleep_s(tick);
	}
	reap(0);
	printf("storm_short %lu\nstorm_spin %lu\n", shorts, spins);
	return 0;
}

/* ---- dlopen/dlclose --------------------------------------------------------------- */

static volatile sig_atomic_t plugin_stop;

static void on_alarm(int sig)
{
	(void)sig;
	plugin_stop = 1;
}

NOIPA static int run_plugin(void (*entry)(volatile sig_atomic_t *))
{
	entry(&plugin_stop);
	sink++;
	return 0;
}

static int dlopen_loop(double secs, const char *lib, double on_ms, double off_ms)
{
	struct itimerval on = { .it_value = { 0, (long)(on_ms * 1000) } };
	void (*entry)(volatile sig_atomic_t *);
	double t0 = now();
	unsigned long cycles = 0;
	void *h;

	signal(SIGALRM, on_alarm);
	while (running(t0, secs)) {
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "soak_load: %s\n", dlerror());
			return 1;
		}
		entry = (void (*)(volatile sig_atomic_t *))dlsym(h, "plugin_entry");
		if (!entry)
			return 1;
		plugin_stop = 0;
		setitimer(ITIMER_REAL, &on, NULL);
		run_plugin(entry);
		dlclose(h);
		cycles++;
		sleep_s(off_ms / 1000);
	}
	printf("dlopen_cycles %lu\n", cycles);
	return 0;
}

/* ---- thread churn ------------------------------------------------------------------ */

NOIPA static void t_hot(double end)
{
	unsigned long i;

	do {
		for (i = 0; i < 10000; i++)
			sink++;
	} while (now() < end);
}

NOIPA static void t_a(double end)
{
	t_hot(end);
	sink++;
}

static double thread_on_ms;

NOIPA static void *thread_main(void *arg)
{
	(void)arg;
	t_a(now() + thread_on_ms / 1000);
	sink++;
	return NULL;
}

static int threads(double secs, double rate, double on_ms)
{
	double t0 = now(), tick = 1.0 / rate;
	unsigned long started = 0;
	pthread_t t;

	thread_on_ms = on_ms;
	while (running(t0, secs)) {
		if (!pthread_create(&t, NULL, thread_main, NULL)) {
			pthread_detach(t);
			started++;
		}
		sleep_s(tick);
	}
	sleep_s(on_ms / 1000 + 0.1); /* the last ones end */
	printf("threads %lu\n", started);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The loops end at SIGTERM; spin and short keep its default action. */
	if (!strcmp(mode, "storm") || !strcmp(mode, "dlopen") || !strcmp(mode, "threads"))
		signal(SIGTERM, on_term);
	if (!strcmp(mode, "short")) {
		spin_clock = cpu_now;
		if (argc == 3)
			a(cpu_now() + atof(argv[2]));
		return 0;
	}
	if (!strcmp(mode, "spin") && argc == 3) {
		a(now() + atof(argv[2]));
		return 0;
	}
	if (!strcmp(mode, "storm") && (argc == 6 || argc == 7))
		return storm(atof(argv[2]), atof(argv[3]), atof(argv[4]), argv[5],
			     argc == 7 ? argv[6] : NULL);
	if (!strcmp(mode, "dlopen") && argc == 6)
		return dlopen_loop(atof(argv[2]), argv[3], atof(argv[4]), atof(argv[5]));
	if (!strcmp(mode, "threads") && argc == 5)
		return threads(atof(argv[2]), atof(argv[3]), atof(argv[4]));
	fprintf(stderr, "usage: see scripts/soak_load.c\n");
	return 2;
}
