// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A container's JIT, for tests/symbolize_debug.test: run chrooted in its own
 * mount and PID namespaces, linked statically (the root holds nothing else).
 * It copies two functions' worth of code into anonymous executable memory and
 * names them in /tmp/perf-PID.map, with PID as it sees it (its namespace's,
 * 1 as the namespace's first process) and /tmp inside its root, as JIT
 * runtimes do. Prints its functions as "func NAME ADDR", the JIT code's base
 * as "jit jitbase ADDR" (the map names jitbase+0 sfbpf_ns_jit_a and
 * jitbase+0x40 sfbpf_ns_jit_b), "nspid PID N", then "ready", and waits for
 * EOF on stdin.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static int sfbpf_ns_static(int x)
{
	for (int i = 0; i < 8; i++)
		x = x * 3 + i;
	return x;
}

NOINLINE int sfbpf_ns_global(int x)
{
	return sfbpf_ns_static(x) * 5 + 1;
}

int main(void)
{
	static const unsigned char code[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	unsigned char *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64], buf[16];
	FILE *map;

	if (jit == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(jit, code, sizeof(code));
	memcpy(jit + 0x40, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "w");
	if (!map) {
		perror(path);
		return 1;
	}
	fprintf(map, "%lx 40 sfbpf_ns_jit_a\n%lx 40 sfbpf_ns_jit_b\n", (unsigned long)jit,
		(unsigned long)(jit + 0x40));
	fclose(map);
	printf("func sfbpf_ns_static %p\n", (void *)sfbpf_ns_static);
	printf("func sfbpf_ns_global %p\n", (void *)sfbpf_ns_global);
	printf("func main %p\n", (void *)main);
	printf("jit jitbase %p\n", (void *)jit);
	printf("nspid PID %x\n", getpid());
	printf("ready %d\n", sfbpf_ns_global(getpid()));
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	unlink(path);
	return 0;
}
