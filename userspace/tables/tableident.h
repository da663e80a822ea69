/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table cache's identity index (issue 27): which digest of table bytes
 * (tablebytes.h) a file had, by the file's identity as the kernel gives it
 * (device, inode, size, mtime, ctime: the map loader's obj_key, opaque
 * here). With it a restarted sfbpf-top finds a file's cached table without
 * reading and hashing the file's sections (cc1: 5 MB), and can read the
 * tables of the files used last back before any process maps them again.
 *
 * Why an identity may stand for bytes: a record is written only when the
 * file's ctime was older than the hashing by more than the filesystem's
 * timestamp granularity, the identity did not change across the hashing,
 * and every field of it is the kernel's (util/fileident.h: not an image, a
 * removable disk, FUSE, a network filesystem or overlayfs, whose inode
 * numbers and times their author chose). Any later write to the file sets a
 * newer ctime, which nobody but the kernel can choose: a new identity, no
 * record. Device numbers of anonymous filesystems (overlayfs, tmpfs) are
 * reused after an unmount and the clock may be set back across a reboot, so
 * a record holds only for the boot it was written in
 * (/proc/sys/kernel/random/boot_id).
 *
 * A file per identity in the cache directory's ident/ (0700, as the cache),
 * named by the hex of the first 16 bytes of the identity's SHA-256, holding
 * one fixed-size record whose SHA-256 covers it; written to a temporary name
 * (.tmp.*) and renamed; its mtime is its last use. Nothing read is trusted: a
 * short, corrupt or other-version record is refused, counted and deleted;
 * another boot's is deleted. The records are in the cache's byte budget
 * (tablecache.h): a host that sees new files for weeks gets a record for
 * each, so each new one is charged to the budget before it is written (the
 * least recently used files go, tables and records alike) and the cache's
 * eviction lists ident/ with the tables. A start also keeps at most
 * TABLEIDENT_MAX_FILES (the oldest go): what it lists and reads is bounded
 * by count too.
 *
 * Thread-safe (the loader threads note and look up; the sampling thread
 * lists the recent ones at start). Errors are negative errnos.
 */
#ifndef SFBPF_TABLEIDENT_H
#define SFBPF_TABLEIDENT_H

#include <stdint.h>
#include <sys/stat.h>

#include "tables/sha256.h"

#define TABLEIDENT_MAX 192 /* identity bytes, at most */
#define TABLEIDENT_NAME_MAX 96 /* a file's name, for messages (cut) */
#define TABLEIDENT_MAX_FILES 4096
/*
 * ctime must be older than the hashing by this much: coarse timestamps move
 * by a timer tick (10 ms at HZ=100), so a write right after the hash could
 * otherwise keep the ctime the record names.
 */
#define TABLEIDENT_CTIME_MARGIN_NS (100 * 1000000ll)

struct tableident_stats {
	uint64_t noted; /* records written */
	uint64_t not_noted; /* identities not recorded: ctime too new, changed, or filesystem */
	uint64_t hits; /* digests found (a file's sections not read) */
	uint64_t refused; /* records deleted: short, corrupt or another version */
};

/* One recorded identity, as tableident__recent() lists them. */
struct tableident_rec {
	uint8_t ident[TABLEIDENT_MAX];
	uint32_t len;
	uint8_t digest[SHA256_BYTES];
	char name[TABLEIDENT_NAME_MAX];
};

struct tableident;

/* The index under the cache directory dir_fd (ident/, made 0700): NULL when it cannot be used. */
struct tableident *tableident__open(int dir_fd);
void tableident__free(struct tableident *x);
/*
 * The budget the records are charged to: fn(ctx, bytes) with bytes > 0 before
 * a new record is written (room is made for it), < 0 when a file the index
 * wrote is deleted (or a write failed). Set once, before the index is used.
 */
typedef void (*tableident_charge_fn)(void *ctx, int64_t bytes);
void tableident__set_charge(struct tableident *x, tableident_charge_fn fn, void *ctx);
/* ident/, open: the cache's eviction lists and deletes its files. Owned by the index. */
int tableident__dir_fd(const struct tableident *x);

/*
 * The digest recorded for ident (the file open at fd was hashed to it, its
 * status st taken before the hashing began at hash_start_ns, CLOCK_REALTIME):
 * written when the rules above allow (1), else not (0), or an error.
 */
int tableident__note(struct tableident *x, const void *ident, uint32_t len,
		     const uint8_t digest[SHA256_BYTES], const char *name, int fd,
		     const struct stat *st, int64_t hash_start_ns);
/* The digest recorded for ident in this boot: 0, -ENOENT, or an error. */
int tableident__digest(struct tableident *x, const void *ident, uint32_t len,
		       uint8_t digest[SHA256_BYTES]);
/* Up to max records of this boot, the most recently used first (*out: the caller frees). */
int tableident__recent(struct tableident *x, uint32_t max, struct tableident_rec **out,
		       uint32_t *nr);
void tableident__stats(struct tableident *x, struct tableident_stats *out);

#endif /* SFBPF_TABLEIDENT_H */
