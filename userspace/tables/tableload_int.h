/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the table loader (tableload.c) and its chunked builds (tablesplit.c)
 * share: the loader's state, its workers, the splits in progress. Internal
 * to userspace/tables/tableload.c and tablesplit.c; everything else uses
 * tableload.h.
 */
#ifndef SFBPF_TABLES_TABLELOAD_INT_H
#define SFBPF_TABLES_TABLELOAD_INT_H

#include <pthread.h>

#include "tables/tableload.h"

/*
 * Two workers: one builds anything, the files only it may build first; the
 * other only files up to EXPRESS_MAX_SIZE, smallest first, so that libraries
 * keep loading while a huge binary takes seconds.
 */
#define NR_WORKERS 2
#define EXPRESS_MAX_SIZE (16ULL << 20)

struct tableload;

struct worker {
	struct tableload *tl;
	pthread_t thread;
	uint64_t max_size;
	bool started;
	struct tableload_job *job; /* the one being built (under tl->lock) */
};

/*
 * A whole table's CFI in chunks (cfi.h), walked by the worker building it
 * and by the other whenever it has no job of its own: cc1's 45k FDEs take
 * 15-25 ms of one thread, all of it before the first complete stack of a
 * new compiler. A worker whose own chunks are all handed out helps another
 * split while its last ones are walked. The other worker helps before it
 * takes a job no sample asked for once the object was sampled (urgent:
 * tableload__hurry), and when it has no job otherwise.
 */
struct split {
	const void *owner; /* the job's */
	bool urgent;
	const struct cfi_index *ix;
	struct flat_table **parts;
	struct cfi_stats *stats;
	uint32_t nr, next, done; /* chunks: all, handed out, walked */
	uint32_t helped; /* walked by the other worker */
	int err; /* the first chunk's error: no more are handed out */
	struct split *next_split;
};

struct tableload {
	struct tableload_opts opts;
	struct worker workers[NR_WORKERS];
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	uint32_t running; /* workers not yet exited */
	struct tableload_job *queue; /* sorted by size, smallest first */
	struct tableload_job *done, **done_tail; /* in completion order */
	uint32_t queued, in_flight;
	struct split *splits; /* tables being walked in chunks, oldest first */
	int wake_fd; /* written when a job is done (tableload__wake_fd), -1: none */
	pthread_cond_t split_done; /* its last chunk walked */
};

/*
 * A chunk of the oldest split with one left (an urgent one only, if
 * urgent_only), walked, if any: called and returns with tl->lock held.
 */
bool tablesplit__help_locked(struct tableload *tl, bool urgent_only);
/*
 * ix's whole table in chunks (*parts, *nr: the caller frees them), walked
 * by this worker and, when it is free, the other; st: the whole walk's
 * counts, the first part's table counts the whole table's (cfi.h).
 */
int tablesplit__flatten(struct tableload *tl, struct tableload_job *job, const struct cfi_index *ix,
			struct flat_table ***parts, uint32_t *nr, struct cfi_stats *st);
/* owner's build, if it is running: its split (now or to come) is urgent. Under tl->lock. */
void tablesplit__hurry_locked(struct tableload *tl, const void *owner);

#endif /* SFBPF_TABLES_TABLELOAD_INT_H */
