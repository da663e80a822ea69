// SPDX-License-Identifier: GPL-2.0-or-later
/* A whole table's CFI walked in chunks by the loader's workers (see tableload_int.h). */
#include <errno.h>
#include <stdlib.h>

#include "tables/tableload_int.h"

/* Walks chunk k of s (tl->lock not held), and counts it walked. */
static void split_walk(struct tableload *tl, struct split *s, uint32_t k, bool helper)
{
	int err = cfi_index__flatten_chunk(s->ix, k, &s->parts[k], &s->stats[k]);

	pthread_mutex_lock(&tl->lock);
	if (err && !s->err) {
		s->err = err;
		/* The rest is not walked: counted done, or its owner would wait for them. */
		s->done += s->nr - s->next;
		s->next = s->nr;
	}
	s->helped += helper;
	if (++s->done == s->nr)
		pthread_cond_broadcast(&tl->split_done);
	pthread_mutex_unlock(&tl->lock);
}

/*
 * A chunk of the oldest split with one left (an urgent one only, if
 * urgent_only), if any: called and returns with tl->lock held.
 */
bool tablesplit__help_locked(struct tableload *tl, bool urgent_only)
{
	struct split *s;
	uint32_t k;

	for (s = tl->splits; s && (s->next == s->nr || (urgent_only && !s->urgent));
	     s = s->next_split)
		;
	if (!s)
		return false;
	k = s->next++;
	pthread_mutex_unlock(&tl->lock);
	split_walk(tl, s, k, true);
	pthread_mutex_lock(&tl->lock);
	return true;
}

/*
 * ix's whole table in chunks (*parts, *nr: the caller frees them), walked
 * by this worker and, when it is free, the other; st: the whole walk's
 * counts, the first part's table counts the whole table's (cfi.h).
 */
int tablesplit__flatten(struct tableload *tl, struct tableload_job *job, const struct cfi_index *ix,
			struct flat_table ***parts, uint32_t *nr, struct cfi_stats *st)
{
	struct split s = { .owner = job->owner, .ix = ix, .nr = cfi_index__nr_chunks(ix) }, **pp;
	uint32_t k;

	s.parts = calloc(s.nr, sizeof(*s.parts));
	s.stats = calloc(s.nr, sizeof(*s.stats));
	if (!s.parts || !s.stats) {
		free(s.parts);
		free(s.stats);
		return -ENOMEM;
	}
	pthread_mutex_lock(&tl->lock);
	for (pp = &tl->splits; *pp; pp = &(*pp)->next_split)
		;
	*pp = &s;
	s.urgent = job->hurried;
	pthread_cond_broadcast(&tl->cond);
	while (s.done < s.nr) {
		if (s.next < s.nr) {
			k = s.next++;
			pthread_mutex_unlock(&tl->lock);
			split_walk(tl, &s, k, false);
			pthread_mutex_lock(&tl->lock);
		} else if (!tablesplit__help_locked(tl, false)) {
			pthread_cond_wait(&tl->split_done, &tl->lock);
		}
	}
	for (pp = &tl->splits; *pp != &s; pp = &(*pp)->next_split)
		;
	*pp = s.next_split;
	pthread_mutex_unlock(&tl->lock);
	job->chunks = s.nr;
	job->chunks_helped = s.helped;
	if (!s.err)
		cfi_index__join(ix, s.parts, s.stats, s.nr, st);
	free(s.stats);
	if (s.err) {
		for (k = 0; k < s.nr; k++)
			flat_table__free(s.parts[k]);
		free(s.parts);
		return s.err;
	}
	*parts = s.parts;
	*nr = s.nr;
	return 0;
}

/* owner's build, if it is running: its split (now or to come) is urgent. */
void tablesplit__hurry_locked(struct tableload *tl, const void *owner)
{
	struct split *s;
	int i;

	for (i = 0; i < NR_WORKERS; i++)
		if (tl->workers[i].job && tl->workers[i].job->owner == owner)
			tl->workers[i].job->hurried = true;
	for (s = tl->splits; s; s = s->next_split)
		if (s->owner == owner && !s->urgent) {
			s->urgent = true;
			pthread_cond_broadcast(&tl->cond);
		}
}
