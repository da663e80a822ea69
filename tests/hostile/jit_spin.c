// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A hostile "JIT" for tests/hostile.test. It runs its hot loop from anonymous
 * executable memory at JIT_ADDR, as JIT compilers do, and names that code in
 * /tmp/perf-PID.map, the perf convention profilers read to symbolize JIT
 * code. What that map file is, is up to the process (and so the attacker):
 *
 *   jit_spin SECS file          an honest map: the code is "jit_hot"
 *   jit_spin SECS link TARGET   a symlink to TARGET, an absolute path that
 *                               means something else outside this process's
 *                               root (run it chrooted)
 *   jit_spin SECS fifo          a FIFO nobody ever writes to
 *
 * Linked statically, so it runs in an empty chroot. Writes "ready PID" on
 * stdout once the map exists and the loop is about to start (PID: its own, so
 * that a test can tell its readiness from an earlier run's).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define JIT_ADDR 0x10000000UL
#define JIT_SIZE 4096

/* spin(flag): while (!*flag) ; — mov (%rdi),%eax; test %eax,%eax; je .-6; ret */
static const unsigned char spin_code[] = { 0x8b, 0x07, 0x85, 0xc0, 0x74, 0xfa, 0xc3 };

static volatile int stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static int make_map(const char *kind, const char *target)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	unlink(path);
	if (!strcmp(kind, "link"))
		return target ? symlink(target, path) : -1;
	if (!strcmp(kind, "fifo"))
		return mkfifo(path, 0644);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%lx %x jit_hot\n", JIT_ADDR, JIT_SIZE);
	return fclose(f);
}

int main(int argc, char **argv)
{
	struct itimerval it = { 0 };
	double secs = argc > 2 ? strtod(argv[1], NULL) : 0;
	void (*spin)(volatile int *);
	void *mem;

	if (argc < 3 || secs <= 0) {
		fprintf(stderr, "usage: %s SECS file|link TARGET|fifo\n", argv[0]);
		return 2;
	}
	mem = mmap((void *)JIT_ADDR, JIT_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (mem != (void *)JIT_ADDR) {
		perror("mmap");
		return 1;
	}
	memcpy(mem, spin_code, sizeof(spin_code));
	if (make_map(argv[2], argc > 3 ? argv[3] : NULL)) {
		perror("perf map");
		return 1;
	}
	signal(SIGALRM, on_alarm);
	it.it_value.tv_sec = (time_t)secs;
	it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
	setitimer(ITIMER_REAL, &it, NULL);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	spin = (void (*)(volatile int *))mem;
	spin(&stop);
	return 0;
}
