/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Samples made up for the aggregator (profile/aggregate.h) as the ring
 * buffer brings them: the output tests build one aggregate of known stacks
 * this one way, and check what each writer makes of it.
 */
#ifndef SFBPF_TESTSAMPLE_H
#define SFBPF_TESTSAMPLE_H

#include <stdint.h>
#include <string.h>

#include "profile/aggregate.h"

/*
 * Adds times samples of pid (comm) with nu user frames (leaf first) then nk
 * kernel frames, stopped for stop, each weighing weight, through s (the
 * caller's sample-sized buffer) as a ring buffer record of its exact size.
 * 0, or the first error of aggregator__add_raw().
 */
static inline int test_sample_add(struct aggregator *a, struct sfbpf_sample *s, uint32_t pid,
				  const char *comm, int stop, const uint64_t *user, int nu,
				  const uint64_t *kern, int nk, uint32_t weight, int times)
{
	int i, err = 0;

	memset(s, 0, sizeof(*s));
	s->pid = s->tid = pid;
	s->stop = stop;
	s->weight = weight;
	s->nr_user = nu;
	s->nr_kernel = nk;
	memcpy(s->comm, comm, strnlen(comm, sizeof(s->comm) - 1));
	/* NULL frames with a count: a record that claims frames it lacks. */
	if (user)
		memcpy(s->ips, user, nu * sizeof(*user));
	if (kern)
		memcpy(s->ips + nu, kern, nk * sizeof(*kern));
	for (i = 0; i < times && !err; i++)
		err = aggregator__add_raw(a, s,
					  SFBPF_SAMPLE_HDR_SIZE + (nu + nk) * sizeof(uint64_t));
	return err;
}

#endif /* SFBPF_TESTSAMPLE_H */
