/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spool: profiles written but not yet delivered to the backend, one file
 * each in a directory, so that nothing is lost while the backend is down or
 * sfbpf restarts. A file leaves the spool when it was delivered, when the
 * backend refused it for good, or when the spool is over its limits: then the
 * oldest profiles go first, each with a warning, and are counted.
 *
 * Files are named FROM-UNTIL[.N].pb.gz: the interval in unix seconds (12
 * digits) and, rarely, a sequence number when two profiles share an
 * interval. Nothing else in the directory is touched: other names,
 * directories and symlinks are ignored. Profiles enter as hard links to the
 * written file (a copy across file systems), so spooling costs no data
 * copy and outlives the out-dir's rotation.
 *
 * Thread-safe: the interval loop adds while the sender takes and finishes.
 * The sender's entry in flight is never dropped.
 */
#ifndef SFBPF_SPOOL_H
#define SFBPF_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_DEFAULT_FILES 1440 /* a day of one-minute profiles */
#define SPOOL_DEFAULT_BYTES (512ULL << 20)

struct spool_limits {
	unsigned max_files; /* 0: SPOOL_DEFAULT_FILES */
	uint64_t max_bytes; /* 0: SPOOL_DEFAULT_BYTES */
};

struct spool_entry {
	int64_t from, until; /* unix seconds */
	uint64_t size; /* bytes */
	char name[48];
};

struct spool_stats {
	unsigned files; /* waiting now */
	uint64_t bytes;
	uint64_t added; /* since open */
	uint64_t removed; /* delivered or refused (spool__finish) */
	uint64_t dropped; /* over the limits */
	uint64_t dropped_bytes;
};

struct spool;

/* Open (creating it) and scan the spool directory. NULL + errno on failure. */
struct spool *spool__open(const char *dir, bool nofollow, const struct spool_limits *lim);
void spool__close(struct spool *sp);
/* Reopen the directory (SIGHUP: recreated if it went away) and rescan it. */
int spool__reopen(struct spool *sp);

/*
 * Spool the file srcname in srcdirfd as the profile of [from, until), then
 * drop the oldest profiles while over the limits. Returns 0 or -errno.
 */
int spool__add(struct spool *sp, int srcdirfd, const char *srcname, int64_t from,
	       int64_t until);

/* The same with the file's content given: data, size bytes (OTLP bodies). */
int spool__add_data(struct spool *sp, const void *data, size_t size, int64_t from,
		    int64_t until);

/* The oldest profile, now in flight. -ENOENT: the spool is empty. */
int spool__take(struct spool *sp, struct spool_entry *out);
/* Its content (malloc'ed). -ENOENT if it went away meanwhile. */
int spool__read(struct spool *sp, const struct spool_entry *e, void **data, size_t *size);
/* Done with the profile in flight: remove it (delivered, refused) or keep it. */
void spool__finish(struct spool *sp, const struct spool_entry *e, bool remove);

void spool__stats(struct spool *sp, struct spool_stats *out);
const char *spool__path(const struct spool *sp);

#endif /* SFBPF_SPOOL_H */
