/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Table cache: built tables kept on disk across restarts (issue 27), so that
 * sfbpf-top started again (an upgrade, a crash, a fleet rollout) reads each
 * object's table back instead of decoding its .sframe and CFI again.
 *
 * A file per table, in one directory (default TABLECACHE_DEFAULT_DIR), named
 * by the hex of its key: the SHA-256 of the cache format's version, the
 * builder (this executable's own digest: another build of sfbpf may build
 * other rows from the same bytes), the build options that change rows
 * (no_cfi), and the digest of exactly the bytes the table was built from
 * (tablebytes.h). Equal keys mean equal input bytes: a file's owner, who
 * chooses its build-id, cannot make another file's table come back for his.
 *
 * A file holds a header (magic, version, key, counts, what the loader counts
 * about the build) and the table's rows, rules and pages; a SHA-256 covers
 * the header and the payload. Nothing read is trusted: a file is refused,
 * counted by reason and deleted when it is short or its bytes do not hash to
 * their digest (corrupt), when it was written by another format or layout
 * (version), when it holds another key (foreign), or when the table breaks
 * what a freshly built one satisfies (flat_table__check: corrupt). The table
 * is then built as usual.
 *
 * The directory must belong to the user sfbpf-top runs as (root) and be
 * writable by nobody else: otherwise it is refused (counted, warned once) and
 * the cache is off. Files are opened under it with O_NOFOLLOW, never by path.
 * Stores are atomic (a temporary file renamed over the name): a reader never
 * sees half a file.
 *
 * The budget (max_bytes) holds everything the cache writes: the tables and
 * the identity index's records (ident/, tableident.h: 408 bytes each, one
 * per file hashed, so thousands on a host that sees new binaries for weeks),
 * counted once at start and charged as they are written. Over it, the least
 * recently used tables and records (mtime: touched on a hit, on a use) go
 * first, a sixteenth of the budget more than needed (a full cache is not
 * listed again at each store). A temporary file (.tmp.*) is another
 * writer's, maybe another process's, being written: counted, never evicted,
 * unless its mtime is an hour old (a writer that died: swept at start and at
 * each eviction).
 *
 * Lifecycle: tablecache__new() at start (counts the directories' total once),
 * tablecache__lookup()/__store() from the loader threads (thread-safe).
 * Reference-counted: the loader holds one (tablecache__ref), since a worker
 * left to finish a build after tableload__free() still stores it;
 * tablecache__free() drops one, the last frees.
 *
 * Error rule: a negative errno. tablecache__new() returns NULL with errno
 * only when out of memory: a refused directory gives a cache that is off.
 */
#ifndef SFBPF_TABLECACHE_H
#define SFBPF_TABLECACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/flatten.h"
#include "tables/sha256.h"
#include "tables/tableident.h"

#define TABLECACHE_DEFAULT_DIR "/var/cache/sfbpf/tables"
/* The default budget: 2 % of the directory's filesystem, at most this. */
#define TABLECACHE_MAX_DEFAULT (1ull << 30)

struct tablecache_opts {
	const char *dir; /* NULL: TABLECACHE_DEFAULT_DIR (created 0700 if missing) */
	uint64_t max_bytes; /* 0: tablecache__default_budget() */
	bool no_cfi; /* the loader's option: part of the key */
};

/* What the loader counts about a build, kept with its table. */
struct tablecache_meta {
	bool from_cfi;
	bool rejected;
	uint64_t sframe_bytes;
};

struct tablecache_stats {
	uint64_t hits, misses; /* lookups that found a usable table, or no file */
	uint64_t stored; /* tables written */
	uint64_t store_failed; /* not written: I/O error, or a table over the whole budget */
	uint64_t evicted; /* tables and identity records deleted for the budget */
	uint64_t refused_corrupt; /* short, bad digest, broken table */
	uint64_t refused_foreign; /* another key's table under this name */
	uint64_t refused_version; /* another format, layout or endianness */
	uint64_t refused_dir; /* 1: the directory was refused (cache off) */
	uint64_t read_only; /* 1: tables are read from it, none stored (a read-only file system) */
	uint64_t bytes; /* in the directory and ident/ now, as far as this process knows */
	uint64_t max_bytes; /* the budget */
	struct tableident_stats ident; /* the identity index (tableident.h) */
};

struct tablecache;

struct tablecache *tablecache__new(const struct tablecache_opts *opts);
struct tablecache *tablecache__ref(struct tablecache *c);
void tablecache__free(struct tablecache *c);

/*
 * The table built from the bytes digest names: 0 and *ft (the caller owns
 * it), -ENOENT or the open's errno (a miss), -EBADMSG (a file refused, counted and deleted), or
 * -ENODEV (the cache is off).
 */
int tablecache__lookup(struct tablecache *c, const uint8_t digest[SHA256_BYTES],
		       struct flat_table **ft, struct tablecache_meta *meta);
/* Stores ft (not yet admitted: local rules, fine pages) as digest's table. 0 or a negative errno.
 */
int tablecache__store(struct tablecache *c, const uint8_t digest[SHA256_BYTES],
		      const struct flat_table *ft, const struct tablecache_meta *meta);
/* The file name (hex key, NUL-terminated) digest's table has. */
void tablecache__name(const struct tablecache *c, const uint8_t digest[SHA256_BYTES],
		      char name[2 * SHA256_BYTES + 1]);
void tablecache__stats(struct tablecache *c, struct tablecache_stats *out);
/* false: its directory was refused, nothing is looked up nor stored. */
bool tablecache__enabled(const struct tablecache *c);
/*
 * The identity index beside the tables (tableident.h): NULL when the cache is
 * off or the index cannot be used. Owned by the cache.
 */
struct tableident *tablecache__ident(struct tablecache *c);
/* Whether the cache has a file under digest's name, and its size (not read: lookup judges it). */
bool tablecache__holds(struct tablecache *c, const uint8_t digest[SHA256_BYTES], uint64_t *bytes);

/* The default budget for dir's filesystem: min(1 GiB, 2 % of its size). */
uint64_t tablecache__default_budget(int dir_fd);

#endif /* SFBPF_TABLECACHE_H */
