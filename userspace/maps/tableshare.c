// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sharing a table between two files (see struct obj_key): a file whose
 * build-id and size are another's uses that one's table only once the bytes
 * its table would be built from (tablebytes.h) are found equal to the bytes
 * that one's table was built from; it is then remembered as an alias of the
 * other's entry. A build-id is chosen by whoever built the file, so without
 * the comparison a tenant's forged copy of a library, mapped first, would
 * give its table to every process mapping the real one.
 *
 * The entry's side is its digest, taken by the loader from the private copy
 * it built from, never the file as it is now: the file's owner could make it
 * equal for the comparison and forged for the build (or the reverse) within
 * one ctime tick, which the identity does not see. An entry still being built
 * has no digest yet: its file's is taken now (claimed), and the build must
 * come out of the same bytes or gives no table (tables.c job_done).
 *
 * The comparison runs on the sampling thread and reads up to TABLEBYTES_MAX
 * of each file, so it is bounded: the newcomer's bytes are read once, at most
 * SHARE_MAX_CMP entries are compared per acquire, an identity found different
 * from an entry is not compared with it again, and an entry takes at most
 * TABLES_MAX_ALIASES aliases (which live as long as it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tables/tablebytes.h"
#include "maps/tableshare.h"
#include "util/vec.h"

#define SHARE_MAX_CMP 2

/* Whether the file open at fd still is what key names (not changed meanwhile). */
static bool still(int fd, const struct obj_key *key)
{
	struct obj_key now;
	struct stat st;

	if (fstat(fd, &st))
		return false;
	obj_key__from(&now, NULL, &st, fd);
	return now.len == key->len && !memcmp(now.bytes, key->bytes, key->len);
}

/* The identity part of key, hashed (never 0: an empty ring slot). */
static uint64_t identity_hash(const struct obj_key *key)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uint8_t i;

	for (i = 0; i < key->len; i++)
		h = (h ^ key->bytes[i]) * 0x100000001b3ULL;
	return h | 1;
}

/*
 * A hash collision only costs a file its share (an own table), never gives
 * it another's: a remembered identity is never shared with.
 */
static bool known_different(const struct entry *e, uint64_t id)
{
	unsigned i;

	for (i = 0; i < TABLES_DIFFERS; i++)
		if (e->differs[i] == id)
			return true;
	return false;
}

static void note_different(struct entry *e, uint64_t id)
{
	e->differs[e->differs_next] = id;
	e->differs_next = (e->differs_next + 1) % TABLES_DIFFERS;
}

static int add_alias(struct tables *t, struct entry *e, const struct obj_key *key)
{
	struct obj_alias *a = calloc(1, sizeof(*a));

	if (!a || hashmap__add(&t->by_alias, tables_key_hash(key), HASHMAP_PTR(a))) {
		free(a);
		return -ENOMEM;
	}
	a->key = *key;
	a->e = e;
	a->sibling = e->aliases;
	e->aliases = a;
	e->nr_aliases++;
	return 0;
}

/* e's digest from its file as it is now, for a build still pending (see above). */
static bool claim(struct entry *e)
{
	int other = tables_reopen(e), err;
	bool stable;

	if (other < 0)
		return false;
	err = tablebytes__read(other, e->digest, NULL);
	stable = still(other, &e->key);
	close(other);
	if (err || !stable)
		return false;
	e->digest_state = DIGEST_CLAIMED;
	return true;
}

static int newest_first(const void *a, const void *b)
{
	const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;

	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

/*
 * The entries with key's hint, newest first: the file just mapped beside its
 * older copies is the likeliest to be the same, and copies a tenant mapped
 * first, to spend the comparisons, come last. NULL (and 0) if none.
 */
static struct entry **candidates(struct tables *t, const struct obj_key *key, size_t *n)
{
	uint32_t h = tables_hint_hash(key);
	struct entry **v = NULL, *e;
	size_t iter = 0, cap = 0;
	uint64_t val;

	*n = 0;
	while (hashmap__next_at(&t->by_hint, h, &iter, &val)) {
		e = HASHMAP_TO_PTR(val);
		if (e->key.hint_len != key->hint_len ||
		    memcmp(e->key.hint, key->hint, key->hint_len))
			continue;
		if (VEC_RESERVE(v, cap, *n + 1, 8)) {
			free(v);
			*n = 0;
			return NULL;
		}
		v[(*n)++] = e;
	}
	if (*n > 1)
		qsort(v, *n, sizeof(*v), newest_first);
	return v;
}

struct entry *tables_find_same_bytes(struct tables *t, int fd, const struct obj_key *key)
{
	uint8_t mine[SHA256_BYTES];
	uint64_t id = identity_hash(key);
	unsigned compared = 0;
	struct entry **cand, *e, *found = NULL;
	bool read = false;
	size_t i, n;

	if (!key->hint_len)
		return NULL;
	cand = candidates(t, key, &n);
	for (i = 0; i < n && !found; i++) {
		e = cand[i];
		if (known_different(e, id)) {
			t->stats.same_id_other_bytes++;
			continue;
		}
		if (e->nr_aliases >= TABLES_MAX_ALIASES) {
			t->stats.same_id_alias_cap++;
			continue;
		}
		if (compared >= SHARE_MAX_CMP) {
			t->stats.same_id_unverified++;
			continue;
		}
		/* Built without a digest (not ELF64, too much to read): never shared. */
		if (e->digest_state == DIGEST_NONE && !e->in_job) {
			t->stats.same_id_unverified++;
			continue;
		}
		/* Read once; a file changed while read gets no verdict: an own table. */
		if (!read && (tablebytes__read(fd, mine, NULL) || !still(fd, key))) {
			t->stats.same_id_unverified++;
			break;
		}
		read = true;
		if (e->digest_state == DIGEST_NONE && !claim(e)) {
			t->stats.same_id_unverified++;
			continue;
		}
		compared++;
		if (memcmp(mine, e->digest, SHA256_BYTES)) {
			note_different(e, id);
			t->stats.same_id_other_bytes++;
			continue;
		}
		/*
		 * An author's identity without a mount number is no alias: it
		 * would name e after its file is gone and its device number is
		 * another image's (fileident.h). Its next process is compared by
		 * bytes again.
		 */
		if (!obj_key__pinned(key) && add_alias(t, e, key))
			break;
		t->stats.shared_same_bytes++;
		found = e;
	}
	free(cand);
	return found;
}
