// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Benchmark workload: a fixed amount of CPU-bound work split over THREADS
 * threads. Each round fills an array with pseudo-random keys, sorts it with
 * a recursive quicksort (stacks 15-30 frames deep, so an unwinder has real
 * work at every sample), and folds it into a checksum. The work does not
 * depend on timing, so runs are comparable; the profilers' cost shows as
 * extra wall and CPU time.
 *
 * Prints: mtwork threads=T rounds=R wall_s=W cpu_s=C checksum=X
 * Usage: mtwork THREADS ROUNDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KEYS 16384

struct worker {
	pthread_t thread;
	unsigned int id;
	unsigned long rounds;
	uint64_t sum;
};

static double clock_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t next(uint64_t *state)
{
	/* xorshift64: cheap, deterministic, no libc calls in the hot loop. */
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

__attribute__((noinline)) static void fill(uint32_t *a, size_t n, uint64_t *state)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = (uint32_t)next(state);
}

__attribute__((noinline)) static size_t partition(uint32_t *a, size_t n)
{
	uint32_t pivot = a[n / 2], t;
	size_t i = 0, j = n - 1;

	for (;;) {
		while (a[i] < pivot)
			i++;
		while (a[j] > pivot)
			j--;
		if (i >= j)
			return j;
		t = a[i];
		a[i++] = a[j];
		a[j--] = t;
	}
}

__attribute__((noinline)) static void insertion_sort(uint32_t *a, size_t n)
{
	size_t i, j;
	uint32_t v;

	for (i = 1; i < n; i++) {
		v = a[i];
		for (j = i; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* Recurses on both halves (no tail call): the depth is what we want. */
__attribute__((noinline)) static void quicksort(uint32_t *a, size_t n)
{
	size_t p;

	if (n <= 16) {
		insertion_sort(a, n);
		return;
	}
	p = partition(a, n);
	quicksort(a, p + 1);
	quicksort(a + p + 1, n - p - 1);
}

__attribute__((noinline)) static uint64_t fold(const uint32_t *a, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ a[i]) * 1099511628211ull;
	return h;
}

__attribute__((noinline)) static uint64_t round_trip(uint32_t *a, uint64_t *state)
{
	fill(a, KEYS, state);
	quicksort(a, KEYS);
	return fold(a, KEYS);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t state = 0x9e3779b97f4a7c15ull * (w->id + 1);
	uint32_t *a = malloc(KEYS * sizeof(*a));
	unsigned long r;

	if (!a)
		return NULL;
	for (r = 0; r < w->rounds; r++)
		w->sum += round_trip(a, &state);
	free(a);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;
	unsigned long threads, rounds, i;
	double wall0, cpu0;
	uint64_t sum = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: mtwork THREADS ROUNDS\n");
		return 2;
	}
	threads = strtoul(argv[1], NULL, 10);
	rounds = strtoul(argv[2], NULL, 10);
	if (!threads || threads > 256 || !rounds) {
		fprintf(stderr, "mtwork: THREADS in 1..256, ROUNDS > 0\n");
		return 2;
	}
	w = calloc(threads, sizeof(*w));
	if (!w)
		return 1;
	wall0 = clock_s(CLOCK_MONOTONIC);
	cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	for (i = 0; i < threads; i++) {
		w[i].id = i;
		w[i].rounds = rounds / threads + (i < rounds % threads);
		if (pthread_create(&w[i].thread, NULL, work, &w[i])) {
			fprintf(stderr, "mtwork: pthread_create failed\n");
			return 1;
		}
	}
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		sum ^= w[i].sum;
	}
	printf("mtwork threads=%lu rounds=%lu wall_s=%.6f cpu_s=%.6f checksum=%016llx\n", threads,
	       rounds, clock_s(CLOCK_MONOTONIC) - wall0, clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0,
	       (unsigned long long)sum);
	free(w);
	return 0;
}
