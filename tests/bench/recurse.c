// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark workload: recurses until the user stack is FRAMES frames deep
 * (counting main and the libc frame that calls it), then spins in the leaf
 * until SECONDS have passed or it is killed. The kernel-cost benchmark
 * samples it at fixed depths; it is built twice, with SFrame and without
 * frame pointers, and with frame pointers and no SFrame.
 *
 * Usage: recurse SECONDS FRAMES
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * main and __libc_start_call_main: on Debian 12, whose libc has neither
 * SFrame nor frame pointers, unwinders stop there, so these are the frames a
 * sample shows above the recursion.
 */
#define OUTER_FRAMES 2

static volatile sig_atomic_t done;
static volatile unsigned long sink;

static void on_alarm(int sig)
{
	(void)sig;
	done = 1;
}

/* noipa: every level must be a real call with its own frame, never inlined. */
__attribute__((noipa)) static void leaf(void)
{
	while (!done)
		sink++;
}

__attribute__((noipa)) static void descend(int n)
{
	if (n > 1)
		descend(n - 1);
	else
		leaf();
	sink++; /* keeps the recursive call from becoming a jump */
}

int main(int argc, char **argv)
{
	int secs, frames;

	if (argc != 3) {
		fprintf(stderr, "usage: recurse SECONDS FRAMES\n");
		return 2;
	}
	secs = atoi(argv[1]);
	frames = atoi(argv[2]);
	if (secs <= 0 || frames < OUTER_FRAMES + 2) {
		fprintf(stderr, "recurse: SECONDS > 0 and FRAMES >= %d\n", OUTER_FRAMES + 2);
		return 2;
	}
	signal(SIGALRM, on_alarm);
	alarm(secs);
	/* descend(k) makes k frames, leaf one more. */
	descend(frames - OUTER_FRAMES - 1);
	return 0;
}
