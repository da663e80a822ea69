// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark workload: does nothing until killed (or SECONDS pass). Linked
 * with a generated assembly file (tests/bench/bigsframe.awk) it is a process
 * whose executable carries a large .sframe section, for the loader benchmark.
 *
 * Usage: idle [SECONDS]
 */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned int secs = argc > 1 ? (unsigned int)atoi(argv[1]) : 600;

	sleep(secs);
	return 0;
}
