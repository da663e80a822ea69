// SPDX-License-Identifier: GPL-2.0-or-later
/* Table builder and its loader thread (see tableload.h). */
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tables/cfi.h"
#include "tables/complete.h"
#include "tables/tablebytes.h"
#include "tables/tablecache.h"
#include "tables/tableident.h"
#include "sframe/sframe_elf.h"
#include "tables/tableload.h"
#include "util/clock.h"
#include "util/log.h"

#include "tables/tableload_int.h"

/* Table from the object's .sframe: 0, -ENOENT (none), or why it is unusable. */
static int sframe_table(struct tableload_job *job, struct flat_table **ft)
{
	struct sframe_elf_error eerr;
	struct sframe_error serr;
	struct sframe_decoder *d = NULL;
	struct sframe_elf s = { 0 };
	int err;

	err = sframe_elf__load_fd(job->fd, &s, &eerr);
	if (err == -EINVAL || err == -E2BIG || err == -EOVERFLOW) {
		/* Headers that point past the file, and the like: said, and counted. */
		job->rejected = true;
		pr_warn("%s: rejected .sframe: %s", job->name, eerr.msg);
	}
	if (err)
		goto cleanup;
	err = sframe_decoder__new(s.data, s.size, s.addr, &d, &serr);
	if (err) {
		job->rejected = true;
		pr_warn("%s: rejected .sframe: %s: %s (at byte 0x%llx)", job->name,
			sframe_errcode__name(serr.code), serr.msg, (unsigned long long)serr.offset);
		goto cleanup;
	}
	err = flat_table__from_sframe(d, ft);
	job->sframe_bytes = s.size;
cleanup:
	sframe_decoder__free(d);
	sframe_elf__release(&s);
	return err;
}

/* What partial tables of job's object use, from now on (tableload__shared_index). */
static void share_index(struct tableload *tl, struct tableload_job *job, struct cfi_index *ix,
			const struct complete_info *ci)
{
	if (!tl->started)
		return;
	pthread_mutex_lock(&tl->lock);
	job->shared_ix = cfi_index__ref(ix);
	job->shared_ci = *ci;
	job->share_state = 1;
	pthread_mutex_unlock(&tl->lock);
}

static void share_none(struct tableload *tl, struct tableload_job *job)
{
	if (!tl->started)
		return;
	pthread_mutex_lock(&tl->lock);
	if (!job->share_state)
		job->share_state = -1;
	pthread_mutex_unlock(&tl->lock);
}

/*
 * Table synthesized from the object's DWARF CFI (see cfi.h); with a .sframe
 * table, only where the merge will look at it (complete__cfi_ranges). A
 * whole table of many chunks is walked by both workers (tablesplit.c).
 */
static int cfi_table(struct tableload *tl, struct tableload_job *job, const struct flat_table *sft,
		     const struct complete_info *ci, struct flat_table ***parts, uint32_t *nr)
{
	struct cfi_range *want = NULL;
	struct cfi_index *ix = NULL;
	struct cfi_stats st;
	uint32_t nr_want = 0;
	int err = sft ? complete__cfi_ranges(sft, ci, &want, &nr_want) : 0;

	*parts = NULL;
	*nr = 0;
	memset(&st, 0, sizeof(st));
	if (!err)
		err = cfi_index__open(job->fd, &ix);
	/* Shared only for a whole walk by the interpreter (libdw's handles are the walk's). */
	if (!err && !sft && !cfi__libdw_rows())
		share_index(tl, job, ix, ci);
	else
		share_none(tl, job);
	if (!err && !sft && tl->started && cfi_index__nr_chunks(ix) > 1) {
		err = tablesplit__flatten(tl, job, ix, parts, nr, &st);
	} else if (!err && !(*parts = calloc(1, sizeof(**parts)))) {
		err = -ENOMEM;
	} else if (!err) {
		err = cfi_index__flatten(ix, sft ? want : NULL, nr_want, *parts, &st);
		*nr = !err;
		if (err) {
			free(*parts);
			*parts = NULL;
		}
	}
	cfi_index__free(ix);
	free(want);
	/* Rows: of the table, or of the chunks (each ends in a gap row the next one may replace).
	 */
	if (!err)
		pr_info("%s: %u rows from %s (%u CFI rows, %u unsupported%s)", job->name, st.rows,
			st.fdes[CFI_SRC_DEBUG_FRAME] && !st.fdes[CFI_SRC_EH_FRAME] ?
				".debug_frame" :
				".eh_frame",
			st.cfi_rows, st.unsupported_rows, sft ? ", where .sframe has none" : "");
	else if (err != -ENOENT)
		pr_info("%s: no table from DWARF CFI: %s", job->name, strerror(-err));
	return err;
}

/*
 * job's table from the cache, if it holds a usable one for these bytes.
 * A refused file (tablecache.h) is counted there: the table is built anew.
 */
static bool from_cache(const struct tableload *tl, struct tableload_job *job,
		       const uint8_t digest[SHA256_BYTES])
{
	char name[2 * SHA256_BYTES + 1];
	struct tablecache_meta meta;

	if (tablecache__lookup(tl->opts.cache, digest, &job->ft, &meta))
		return false;
	tablecache__name(tl->opts.cache, digest, name);
	job->from_cache = true;
	job->from_cfi = meta.from_cfi;
	job->rejected = meta.rejected;
	job->sframe_bytes = meta.sframe_bytes;
	pr_info("%s: %u rows from the table cache (%s)", job->name, job->ft->nr_rows, name);
	/* Said again: whoever reads this run's messages did not see the build's. */
	if (job->rejected)
		pr_warn("%s: rejected .sframe (when its table was built; now from the table cache)",
			job->name);
	return true;
}

/* Whether st is the file job's identity names (not written since it was keyed). */
static bool is_keyed_file(const struct tableload_job *job, const struct stat *st)
{
	const uint64_t *v = job->ident_stat;

	return job->ident_len && v[0] == (uint64_t)st->st_dev && v[1] == (uint64_t)st->st_ino &&
	       v[2] == (uint64_t)st->st_size && v[3] == (uint64_t)clock__ts_ns(&st->st_mtim) &&
	       v[4] == (uint64_t)clock__ts_ns(&st->st_ctim);
}

/*
 * A file the identity index knows (ix; the job's fd is the file its identity
 * names): its table read back from the cache under the digest recorded,
 * without reading (and hashing) its sections.
 */
static bool from_ident(const struct tableload *tl, struct tableident *ix, struct tableload_job *job)
{
	uint8_t digest[SHA256_BYTES];

	if (tableident__digest(ix, job->ident, job->ident_len, digest) ||
	    !from_cache(tl, job, digest))
		return false;
	job->from_ident = true;
	if (job->want_digest) {
		memcpy(job->digest, digest, SHA256_BYTES);
		job->has_digest = true;
	}
	return true;
}

/*
 * Builds job's table from every source (complete.h): .sframe rows, CFI rows
 * in PLT sections and wherever .sframe has a gap (code assembled without
 * --gsframe, such as crt1.o's _start: with it, stacks end at the outermost
 * frame; FDEs without FREs), and outermost rows for known runtimes' entry
 * functions. A malformed .sframe falls back to the rest entirely.
 */
static void build(struct tableload *tl, struct tableload_job *job)
{
	struct flat_table *ft = NULL, *sft = NULL, **cparts = NULL;
	uint32_t nr_cparts = 0;
	char name[2 * SHA256_BYTES + 1];
	struct tablecache_meta meta;
	struct complete_info ci;
	uint64_t start = clock__mono_ns();
	uint8_t digest[SHA256_BYTES];
	struct tableident *ix = tablecache__ident(tl->opts.cache);
	bool cacheable = false, keyed;
	int64_t hash_start;
	struct stat st;
	int err, cerr, copy;

	if (job->index_only) {
		err = cfi_index__open(job->fd, &job->ix);
		if (!err)
			err = complete__read_fd(job->fd, &job->ci);
		job->err = err;
		job->build_ns = clock__mono_ns() - start;
		return; /* fd stays open: the index reads it */
	}
	if (job->preload) {
		err = -ENOENT;
		if (tl->opts.cache && from_cache(tl, job, job->digest)) {
			job->has_digest = true;
			ft = job->ft;
			err = 0;
		}
		goto done;
	}
	/*
	 * The file the job's identity names, as the index knows it or will
	 * record it: its status before any hashing.
	 */
	hash_start = clock__wall_ns();
	keyed = ix && !fstat(job->fd, &st) && is_keyed_file(job, &st);
	if (keyed && from_ident(tl, ix, job)) {
		ft = job->ft;
		err = 0;
		goto done;
	}
	/*
	 * A table that may be shared, or kept in the cache, is built from a
	 * private copy of the bytes its digest names: the file's owner can
	 * rewrite it during the build. Without a copy (not ELF64, too much to
	 * read) it is built from the file, never shared nor cached.
	 */
	if ((job->want_digest || tl->opts.cache) && !tablebytes__read(job->fd, digest, &copy)) {
		if (keyed)
			tableident__note(ix, job->ident, job->ident_len, digest, job->name, job->fd,
					 &st, hash_start);
		close(job->fd);
		job->fd = copy;
		cacheable = tl->opts.cache != NULL;
		if (job->want_digest) {
			memcpy(job->digest, digest, SHA256_BYTES);
			job->has_digest = true;
		}
	}
	if (cacheable && from_cache(tl, job, digest)) {
		ft = job->ft;
		err = 0;
		goto done;
	}
	err = sframe_table(job, &sft);
	if (!tl->opts.no_cfi && err != -ENOMEM && err != -E2BIG) {
		if (complete__read_fd(job->fd, &ci))
			memset(&ci, 0, sizeof(ci));
		cerr = cfi_table(tl, job, sft, &ci, &cparts, &nr_cparts);
		job->from_cfi = !sft;
		err = complete__merge_parts(sft, (const struct flat_table *const *)cparts,
					    nr_cparts, &ci, &ft);
		if (err == -ENOENT && cerr)
			err = cerr;
	} else if (!err) {
		ft = sft;
		sft = NULL;
	}
	flat_table__free(sft);
	while (nr_cparts)
		flat_table__free(cparts[--nr_cparts]);
	free(cparts);
	if (err) {
		flat_table__free(ft);
		ft = NULL;
	}
	/* Stored before tables_admit() rewrites its rules' ids and coarsens its pages. */
	if (cacheable && ft) {
		meta = (struct tablecache_meta){ .from_cfi = job->from_cfi,
						 .rejected = job->rejected,
						 .sframe_bytes = job->sframe_bytes };
		tablecache__name(tl->opts.cache, digest, name);
		if (!tablecache__store(tl->opts.cache, digest, ft, &meta))
			pr_info("%s: table stored in the table cache as %s", job->name, name);
	}
done:
	share_none(tl, job);
	job->err = err;
	job->ft = ft;
	job->build_ns = clock__mono_ns() - start;
	if (job->fd >= 0)
		close(job->fd);
	job->fd = -1;
}

static void finish_locked(struct tableload *tl, struct tableload_job *job)
{
	uint64_t one = 1;

	job->next = NULL;
	*tl->done_tail = job;
	tl->done_tail = &job->next;
	/* Non-blocking: a counter the reader has not drained yet only grows. */
	if (tl->wake_fd >= 0 && write(tl->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, and readable already */
	}
}

static void free_list(struct tableload_job *job)
{
	struct tableload_job *next;

	for (; job; job = next) {
		next = job->next;
		tableload_job__free(job);
	}
}

static void destroy(struct tableload *tl)
{
	free_list(tl->queue);
	free_list(tl->done);
	if (tl->wake_fd >= 0)
		close(tl->wake_fd);
	tablecache__free(tl->opts.cache);
	pthread_cond_destroy(&tl->cond);
	pthread_cond_destroy(&tl->split_done);
	pthread_mutex_destroy(&tl->lock);
	free(tl);
}

/*
 * Where the job a worker taking files up to max_size builds next is linked
 * (*result NULL: none). The queue holds the hurried jobs first, then the
 * others by size. A hurried job first; then the thread that takes any size
 * takes the smallest of the files only it may build (an exec queues a big
 * program with its libraries: the other thread is there for them), and
 * otherwise each takes the smallest that fits.
 */
static struct tableload_job **pick_locked(struct tableload *tl, uint64_t max_size)
{
	struct tableload_job **pp = &tl->queue, **big;

	if (*pp && (*pp)->hurried && (*pp)->size <= max_size)
		return pp;
	if (max_size > EXPRESS_MAX_SIZE) {
		for (big = pp; *big && (*big)->size <= EXPRESS_MAX_SIZE; big = &(*big)->next)
			;
		if (*big)
			return big;
	}
	while (*pp && (*pp)->size > max_size)
		pp = &(*pp)->next;
	return pp;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct tableload *tl = w->tl;
	struct tableload_job *job, **pp;
	bool last, helped;

	pthread_mutex_lock(&tl->lock);
	for (;;) {
		/*
		 * A sampled object's build first (hurried jobs, urgent splits),
		 * then other jobs (the libraries a new process needs), then any
		 * split's chunks.
		 */
		helped = false;
		while (!tl->stop) {
			pp = pick_locked(tl, w->max_size);
			if (*pp && (*pp)->hurried)
				break;
			helped = tablesplit__help_locked(tl, *pp != NULL);
			if (helped || *pp)
				break;
			pthread_cond_wait(&tl->cond, &tl->lock);
		}
		if (tl->stop)
			break;
		if (helped)
			continue; /* the queue may have changed meanwhile: picked again */
		job = *pp;
		*pp = job->next;
		tl->queued--;
		w->job = job;
		pthread_mutex_unlock(&tl->lock);
		build(tl, job);
		pthread_mutex_lock(&tl->lock);
		w->job = NULL;
		if (tl->stop) { /* nobody will take it */
			tableload_job__free(job);
			break;
		}
		finish_locked(tl, job);
	}
	/* The last worker out of an abandoned loader frees it. */
	last = --tl->running == 0;
	pthread_mutex_unlock(&tl->lock);
	if (last)
		destroy(tl);
	return NULL;
}

struct tableload *tableload__new(const struct tableload_opts *opts)
{
	struct tableload *tl = calloc(1, sizeof(*tl));
	int err, i;

	if (!tl) {
		errno = ENOMEM;
		return NULL;
	}
	tl->opts = *opts;
	tl->opts.cache = tablecache__ref(opts->cache);
	tl->done_tail = &tl->done;
	/* Closed by the last worker out (destroy): a build left running may still write it. */
	tl->wake_fd = opts->threaded ? eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) : -1;
	pthread_mutex_init(&tl->lock, NULL);
	pthread_cond_init(&tl->cond, NULL);
	pthread_cond_init(&tl->split_done, NULL);
	/* libelf's global version, once, before several threads use it. */
	elf_version(EV_CURRENT);
	for (i = 0; opts->threaded && i < NR_WORKERS; i++) {
		struct worker *w = &tl->workers[i];

		w->tl = tl;
		w->max_size = i ? EXPRESS_MAX_SIZE : UINT64_MAX;
		pthread_mutex_lock(&tl->lock);
		err = pthread_create(&w->thread, NULL, work, w);
		if (!err) {
			tl->running++;
			w->started = tl->started = true;
		}
		pthread_mutex_unlock(&tl->lock);
		if (err) {
			tableload__free(tl);
			errno = err;
			return NULL;
		}
	}
	return tl;
}

/*
 * Idle workers exit at once; one in the middle of a huge build would hold the
 * caller for seconds (a build cannot be interrupted): it is left to finish
 * on its own, drops its result, and the last worker out frees the loader.
 */
void tableload__free(struct tableload *tl)
{
	bool last;
	int i;

	if (!tl)
		return;
	if (!tl->started) {
		destroy(tl);
		return;
	}
	pthread_mutex_lock(&tl->lock);
	tl->stop = true;
	pthread_cond_broadcast(&tl->cond);
	for (i = 0; i < NR_WORKERS; i++)
		if (tl->workers[i].started)
			pthread_detach(tl->workers[i].thread);
	free_list(tl->queue);
	tl->queue = NULL;
	last = tl->running == 0;
	pthread_mutex_unlock(&tl->lock);
	if (last)
		destroy(tl);
}

int tableload__submit(struct tableload *tl, struct tableload_job *job)
{
	struct tableload_job **pp;

	if (!tl->started) {
		build(tl, job);
		finish_locked(tl, job);
		tl->in_flight++;
		return 0;
	}
	pthread_mutex_lock(&tl->lock);
	if (tl->queued >= TABLELOAD_MAX_QUEUED) {
		pthread_mutex_unlock(&tl->lock);
		return -EBUSY;
	}
	for (pp = &tl->queue; *pp && ((*pp)->hurried || (*pp)->size <= job->size);
	     pp = &(*pp)->next)
		;
	job->next = *pp;
	*pp = job;
	tl->queued++;
	tl->in_flight++;
	pthread_cond_broadcast(&tl->cond);
	pthread_mutex_unlock(&tl->lock);
	return 0;
}

bool tableload__hurry(struct tableload *tl, const void *owner)
{
	struct tableload_job **pp, **at, *job = NULL;

	if (!tl->started)
		return false;
	pthread_mutex_lock(&tl->lock);
	for (pp = &tl->queue; *pp; pp = &(*pp)->next) {
		if ((*pp)->owner == owner && !(*pp)->hurried) {
			job = *pp;
			*pp = job->next;
			break;
		}
	}
	if (!job)
		tablesplit__hurry_locked(tl, owner);
	if (job) {
		/* After the jobs hurried before it: the first sampled, the first built. */
		for (at = &tl->queue; *at && (*at)->hurried; at = &(*at)->next)
			;
		job->hurried = true;
		job->next = *at;
		*at = job;
		pthread_cond_broadcast(&tl->cond);
	}
	pthread_mutex_unlock(&tl->lock);
	return job != NULL;
}

struct tableload_job *tableload__take(struct tableload *tl)
{
	struct tableload_job *job;

	if (tl->started)
		pthread_mutex_lock(&tl->lock);
	job = tl->done;
	if (job) {
		tl->done = job->next;
		if (!tl->done)
			tl->done_tail = &tl->done;
		job->next = NULL;
		tl->in_flight--;
	}
	if (tl->started)
		pthread_mutex_unlock(&tl->lock);
	return job;
}

int tableload__shared_index(struct tableload *tl, const void *owner, struct cfi_index **ix,
			    struct complete_info *ci)
{
	int ret = -ENOENT, i;

	if (!tl->started)
		return ret;
	pthread_mutex_lock(&tl->lock);
	for (i = 0; i < NR_WORKERS; i++) {
		const struct tableload_job *job = tl->workers[i].job;

		if (!job || job->owner != owner || job->index_only || job->share_state < 0)
			continue;
		ret = job->share_state;
		if (ret) {
			*ix = cfi_index__ref(job->shared_ix);
			*ci = job->shared_ci;
		}
		break;
	}
	pthread_mutex_unlock(&tl->lock);
	return ret;
}

int tableload__wake_fd(const struct tableload *tl)
{
	return tl->wake_fd;
}

uint32_t tableload__in_flight(struct tableload *tl)
{
	/* Only the submitting thread changes it. */
	return tl->in_flight;
}

struct tableload_job *tableload_job__new(int fd, const char *name, void *owner)
{
	struct tableload_job *job = calloc(1, sizeof(*job));
	struct stat st;

	if (!job)
		return NULL;
	job->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	job->name = strdup(name ? name : "?");
	if (job->fd < 0 || !job->name) {
		if (job->fd >= 0)
			close(job->fd);
		free(job->name);
		free(job);
		return NULL;
	}
	job->size = fstat(fd, &st) ? 0 : (uint64_t)st.st_size;
	job->owner = owner;
	return job;
}

struct tableload_job *tableload_job__preload(const uint8_t digest[SHA256_BYTES], uint64_t bytes,
					     const char *name, void *owner)
{
	struct tableload_job *job = calloc(1, sizeof(*job));

	if (!job)
		return NULL;
	job->name = strdup(name ? name : "?");
	if (!job->name) {
		free(job);
		return NULL;
	}
	job->fd = -1;
	job->preload = true;
	memcpy(job->digest, digest, SHA256_BYTES);
	job->size = bytes;
	job->owner = owner;
	return job;
}

int tableload_job__set_ident(struct tableload_job *job, const void *ident, uint32_t len,
			     const uint64_t stat[5])
{
	if (len > TABLEIDENT_MAX)
		return -EINVAL;
	free(job->ident);
	job->ident = malloc(len ? len : 1);
	if (!job->ident) {
		job->ident_len = 0;
		return -ENOMEM;
	}
	memcpy(job->ident, ident, len);
	job->ident_len = len;
	memcpy(job->ident_stat, stat, sizeof(job->ident_stat));
	return 0;
}

void tableload_job__free(struct tableload_job *job)
{
	if (!job)
		return;
	if (job->fd >= 0)
		close(job->fd);
	flat_table__free(job->ft);
	cfi_index__free(job->ix);
	cfi_index__free(job->shared_ix);
	free(job->ident);
	free(job->name);
	free(job);
}
