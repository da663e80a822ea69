/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Table builder: turns an object file into a flat table (its .sframe, completed
 * from its DWARF CFI, else the CFI alone: see docs/DESIGN-cfi.md). Building is
 * the expensive step of loading a table (libc ~60 ms, big binaries seconds),
 * so it runs on a loader thread: the sampling thread submits jobs and picks up
 * the finished ones between polls, and pushes them to the maps itself.
 *
 * Smallest file first, and a second thread for files up to 16 MiB only: one
 * huge binary does not hold up the libraries of the processes starting
 * meanwhile. A file whose code is being sampled goes first (tableload__hurry).
 * A whole table from CFI of many FDEs is walked in chunks by both threads
 * (the second one helps when it has nothing else to do, or before a job no
 * sample asked for once the table's object was sampled), and its build
 * shares its CFI index with the object's partial tables
 * (tableload__shared_index). The finished jobs are announced on an eventfd
 * (tableload__wake_fd). A job owns its file descriptor, so a table still loads when the process
 * that mapped the file has exited.
 *
 * Without a thread (threaded = false), tableload__submit() builds at once.
 */
#ifndef SFBPF_TABLELOAD_H
#define SFBPF_TABLELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/cfi.h"
#include "tables/complete.h"
#include "tables/flatten.h"
#include "tables/sha256.h"

struct tableload_job {
	/* Input. */
	int fd; /* owned by the job: closed once built */
	char *name; /* owned; for messages */
	uint64_t size; /* file size: the queue's order */
	void *owner; /* the submitter's handle */
	bool want_digest; /* build from a private copy of the bytes read, and name them */
	/*
	 * The file's identity as the submitter keys it (opaque, owned), and
	 * what it says of the file: device, inode, size, mtime and ctime (ns).
	 * With a cache, its record in the identity index (tableident.h) names
	 * the digest, so a known file's table is read back without reading
	 * the file; a file hashed anew gets a record.
	 */
	uint8_t *ident;
	uint32_t ident_len;
	uint64_t ident_stat[5];
	/*
	 * No file (fd -1): the table of the bytes digest names, from the cache
	 * only (a restart reading back the tables used last); -ENOENT if not there.
	 */
	bool preload;
	bool hurried; /* queued ahead of the others (tableload__hurry) */
	/*
	 * An index job (maps/tablepart.c): no table, the file's FDEs read and
	 * ordered (cfi_index__open: 10-20 ms for gcc's cc1) and what completes
	 * its rows (complete__read_fd), off the sampling thread. fd is not
	 * closed: the index reads it later, and whoever takes ix takes fd too.
	 */
	bool index_only;
	struct cfi_index *ix; /* owned by the job until taken */
	struct complete_info ci;
	/*
	 * A whole table's build shares the index it walks, and what completes
	 * its rows, as soon as it has them (tableload__shared_index): the
	 * partial tables of a big object need no index job of their own.
	 */
	struct cfi_index *shared_ix; /* a reference; NULL until shared */
	struct complete_info shared_ci;
	int8_t share_state; /* under the loader's lock: 0 not yet known, 1 shared, -1 never */
	/* Output. */
	int err; /* 0, or why there is no table (-ENOENT: no .sframe nor CFI) */
	struct flat_table *ft; /* owned by the job until taken */
	bool from_cfi; /* synthesized from DWARF CFI alone */
	bool rejected; /* the .sframe section was malformed */
	uint64_t sframe_bytes;
	/* want_digest: the digest of exactly what the table was built from (tablebytes.h). */
	bool has_digest;
	uint8_t digest[SHA256_BYTES];
	uint64_t build_ns; /* time spent building (or reading it back from the cache) */
	uint32_t chunks; /* CFI walked in chunks by both workers: how many, 0 if not */
	uint32_t chunks_helped; /* ... of them walked by the worker not building it */
	bool from_cache; /* read back from opts.cache */
	bool from_ident; /* its digest from the identity index: the file was not read */
	struct tableload_job *next;
};

struct tablecache;

struct tableload_opts {
	bool threaded;
	bool no_cfi; /* SFrame only */
	/*
	 * Tables kept across restarts (tablecache.h), or NULL. With one, every
	 * table is built from the private copy of its bytes (want_digest), read
	 * back from the cache under their digest, and stored once built.
	 */
	struct tablecache *cache;
};

struct tableload;

/* NULL + errno on failure. */
struct tableload *tableload__new(const struct tableload_opts *opts);
/* Stops the thread (after the job it is building) and frees every job. */
void tableload__free(struct tableload *tl);

/*
 * Queues job (fd, name, size and owner set): takes ownership of it. Returns 0,
 * or -EBUSY when TABLELOAD_MAX_QUEUED jobs wait (the job is not taken).
 */
#define TABLELOAD_MAX_QUEUED 256
int tableload__submit(struct tableload *tl, struct tableload_job *job);
/*
 * The queued job of owner, if any, goes ahead of every job not hurried (after
 * those hurried before it), whatever its size: its code is being sampled.
 * true if one was found waiting (not yet being built). Being built already,
 * its chunks go ahead of the other thread's jobs not hurried.
 */
bool tableload__hurry(struct tableload *tl, const void *owner);
/* A finished job, or NULL: the caller owns it (tableload_job__free). */
struct tableload_job *tableload__take(struct tableload *tl);
/* Jobs submitted and not yet taken. */
uint32_t tableload__in_flight(struct tableload *tl);
/*
 * An eventfd (non-blocking) written each time a job is done, for the
 * submitter to wait on beside its other work (poll it, read to drain it);
 * -1 when the loader has no threads or no eventfd. The loader's own: not closed by the caller.
 */
int tableload__wake_fd(const struct tableload *tl);
/*
 * The CFI index (a reference: cfi_index__free() it) and complete_info of the
 * whole-table build owner's job is running now: 1 with *ix and *ci, 0 when
 * that build will share them shortly (running, not there yet), -ENOENT when
 * there is no such build or it shares none (a table from .sframe, libdw's
 * rows: their walks are not shared).
 */
int tableload__shared_index(struct tableload *tl, const void *owner, struct cfi_index **ix,
			    struct complete_info *ci);

/* A job for fd (dup'ed: the caller keeps fd), or NULL. */
struct tableload_job *tableload_job__new(int fd, const char *name, void *owner);
/* A preload job: digest's table from the cache (bytes: its file's size, the queue's order). */
struct tableload_job *tableload_job__preload(const uint8_t digest[SHA256_BYTES], uint64_t bytes,
					     const char *name, void *owner);
/* Sets job's identity (copied; ident_len at most TABLEIDENT_MAX): 0 or -ENOMEM. */
int tableload_job__set_ident(struct tableload_job *job, const void *ident, uint32_t len,
			     const uint64_t stat[5]);
void tableload_job__free(struct tableload_job *job);

#endif /* SFBPF_TABLELOAD_H */
