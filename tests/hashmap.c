// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The one hash map (userspace/util/hashmap.h) against a plain model: random
 * adds and deletions of entries over few distinct hashes (long probe runs,
 * runs that wrap past the end of the slots, deletions that shift entries
 * back), after each step every entry found by its key, every value visited
 * once by hashmap__next(), and hashmap__next_at() giving exactly the entries
 * of one hash. Driven by tests/hashmap.test.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_PREFIX "hashmap-"
#include "testlib.h"
#include "util/hashmap.h"

#define N 1200
#define STEPS 30000

struct item {
	uint32_t key, hash;
	bool in;
};

static struct item items[N];

static bool item_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return items[val].key == *(const uint32_t *)key;
}

/* Few hashes, some near the top of any capacity: long runs that wrap. */
static uint32_t hash_of(uint32_t key, uint32_t mode)
{
	switch (mode) {
	case 0:
		return key % 7;
	case 1:
		return 0xffffffffu - key % 5; /* the last slots: runs wrap to slot 0 */
	default:
		return key * 2654435761u;
	}
}

static bool check(struct hashmap *m, const char *what, uint32_t mode, int step)
{
	static uint8_t seen[N];
	size_t iter = 0, n = 0, in = 0;
	uint64_t val;
	uint32_t i, h;

	memset(seen, 0, sizeof(seen));
	while (hashmap__next(m, &iter, &val)) {
		if (val >= N || !items[val].in || seen[val]++) {
			report(false, what, "mode %u step %d: value %llu visited wrongly", mode,
			       step, (unsigned long long)val);
			return false;
		}
		n++;
	}
	for (i = 0; i < N; i++) {
		int64_t v = hashmap__find(m, items[i].hash, item_eq, NULL, &items[i].key);

		in += items[i].in;
		if (items[i].in != (v == (int64_t)i)) {
			report(false, what, "mode %u step %d: key %u found as %lld (in: %d)", mode,
			       step, items[i].key, (long long)v, items[i].in);
			return false;
		}
	}
	if (n != in || hashmap__size(m) != in) {
		report(false, what, "mode %u step %d: %zu visited, %zu in, size %zu", mode, step, n,
		       in, hashmap__size(m));
		return false;
	}
	/* One hash's values: exactly the entries in with that hash. */
	h = items[step % N].hash;
	memset(seen, 0, sizeof(seen));
	iter = n = 0;
	while (hashmap__next_at(m, h, &iter, &val)) {
		if (val >= N || items[val].hash != h || !items[val].in || seen[val]++) {
			report(false, what, "mode %u step %d: next_at gave %llu", mode, step,
			       (unsigned long long)val);
			return false;
		}
		n++;
	}
	for (i = 0, in = 0; i < N; i++)
		in += items[i].in && items[i].hash == h;
	if (n != in) {
		report(false, what, "mode %u step %d: next_at gave %zu of hash %u's %zu", mode,
		       step, n, h, in);
		return false;
	}
	return true;
}

int main(void)
{
	uint32_t mode, i;
	int step;

	srand(12345);
	for (mode = 0; mode < 3; mode++) {
		struct hashmap m = { 0 };
		bool ok = true;

		for (i = 0; i < N; i++)
			items[i] = (struct item){ .key = i * 7919u + 1, .hash = 0 };
		for (i = 0; i < N; i++)
			items[i].hash = hash_of(items[i].key, mode);
		for (step = 0; ok && step < STEPS; step++) {
			i = (uint32_t)rand() % N;
			if (!items[i].in) {
				ok = !hashmap__add(&m, items[i].hash, i);
				items[i].in = ok;
			} else {
				ok = hashmap__del(&m, items[i].hash, item_eq, NULL, &items[i].key);
				items[i].in = false;
			}
			/* Every step while small, then now and then: the checks are O(N). */
			if (ok && (step < 300 || step % 211 == 0))
				ok = check(&m, "model", mode, step);
		}
		if (ok)
			test_pass("model, %s: %d random adds and deletions, every find, visit and "
				  "value of one hash exact",
				  mode == 0 ? "7 hashes" :
				  mode == 1 ? "runs that wrap" :
					      "spread",
				  STEPS);
		else if (step < STEPS)
			report(false, "model", "mode %u: stopped at step %d", mode, step);
		hashmap__free(&m);
	}
	return failures ? 1 : 0;
}
