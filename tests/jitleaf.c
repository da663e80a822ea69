/*
 * A JIT's newest code: every CHUNK_MS of CPU time a new function at a new
 * address (a fresh anonymous mapping, never one seen before), named in
 * /tmp/perf-PID.map as jit_leaf and called from jitleaf_driver, then
 * unmapped. The profiler's copy of the process's mappings is always behind:
 * the sampled PC lies in no mapping it knows (tests/jitleaf.test).
 * The code keeps a frame pointer, as V8's and HotSpot's code does.
 * Usage: jitleaf CPU_SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_MS 20
#define SLOTS 4096 /* distinct addresses: one per chunk, never reused */

#if defined(__x86_64__)
/* push rbp; mov rbp,rsp; 1: sub rdi,1; jnz 1b; pop rbp; ret */
static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xef,
				0x01, 0x75, 0xfa, 0x5d, 0xc3 };
#elif defined(__aarch64__)
/* stp x29,x30,[sp,#-16]!; mov x29,sp; 1: subs x0,x0,#1; b.ne 1b; ldp x29,x30,[sp],#16; ret */
static const uint32_t code[] = { 0xa9bf7bfd, 0x910003fd, 0xf1000400,
				 0x54ffffe1, 0xa8c17bfd, 0xd65f03c0 };
#else
#error "jitleaf: x86-64 and AArch64 only"
#endif

typedef void (*jit_fn)(unsigned long);

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void jitleaf_driver(jit_fn fn, double until)
{
	while (cpu_now() < until)
		fn(20000);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static int jitleaf_outer(double secs, FILE *map)
{
	long page = sysconf(_SC_PAGESIZE);
	double end = cpu_now() + secs;
	uint8_t *base, *p;
	unsigned i;

	/* Reserved, so that each chunk's address is new and stays free for it. */
	base = mmap(NULL, (size_t)page * SLOTS, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return 1;
	for (i = 0; cpu_now() < end; i = (i + 1) % SLOTS) {
		p = mmap(base + (size_t)i * page, page, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		memcpy(p, code, sizeof(code));
		__builtin___clear_cache((char *)p, (char *)p + sizeof(code));
		fprintf(map, "%lx %zx jit_leaf\n", (unsigned long)(uintptr_t)p, sizeof(code));
		fflush(map);
		jitleaf_driver((jit_fn)(uintptr_t)p, cpu_now() + CHUNK_MS / 1000.0);
		/* Back to a reservation: the next chunk's mapping is a new one. */
		if (mmap(p, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			return 1;
	}
	__asm__ volatile("" ::: "memory");
	return 0;
}

int main(int argc, char **argv)
{
	char path[64];
	FILE *map;
	int rc;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	/* The map stays: the profiler may name samples after the exit. */
	rc = jitleaf_outer(atof(argv[1]), map);
	fclose(map);
	return rc;
}
