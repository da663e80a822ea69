// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sharing a table between two files (see struct obj_key): a file whose
 * build-id and size are another's uses that one's table only once their bytes
 * are found equal, compared here; it is then remembered as an alias of the
 * other's entry. A build-id is chosen by whoever built the file, so without
 * the comparison a tenant's forged copy of a library, mapped first, would
 * give its table to every process mapping the real one.
 *
 * The comparison runs on the sampling thread and may read 2 x 256 MiB, so it
 * is bounded: at most SHARE_MAX_CMP entries are compared per acquire, an
 * identity found different from an entry is not compared with it again, and
 * an entry takes at most TABLES_MAX_ALIASES aliases (which live as long as it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tables/tables_int.h"

/* Larger files get their own table: comparing them would stall the sampling thread. */
#define SHARE_MAX_BYTES (256ull << 20)
#define CMP_CHUNK (64u << 10)
#define SHARE_MAX_CMP 2

/* Whether files a and b hold the same size bytes (both read, chunk by chunk). */
static bool same_bytes(int a, int b, uint64_t size)
{
	uint8_t *x = malloc(2 * CMP_CHUNK), *y = x + CMP_CHUNK;
	uint64_t off = 0;
	ssize_t n, m;
	bool same = x != NULL;

	while (same && off < size) {
		n = pread(a, x, CMP_CHUNK, off);
		m = pread(b, y, CMP_CHUNK, off);
		same = n > 0 && n == m && !memcmp(x, y, n);
		off += n > 0 ? n : 0;
	}
	free(x);
	return same && off == size;
}

/* Whether the file open at fd still is what key names (not changed meanwhile). */
static bool still(int fd, const struct obj_key *key)
{
	struct obj_key now;
	struct stat st;

	if (fstat(fd, &st))
		return false;
	obj_key__from(&now, NULL, &st);
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
	uint32_t b = tables_key_hash(key);

	if (!a)
		return -ENOMEM;
	a->key = *key;
	a->e = e;
	a->sibling = e->aliases;
	e->aliases = a;
	e->nr_aliases++;
	a->next = t->aliases[b];
	t->aliases[b] = a;
	return 0;
}

struct entry *tables_find_same_bytes(struct tables *t, int fd, const struct obj_key *key)
{
	uint64_t size, id = identity_hash(key);
	unsigned compared = 0;
	bool differ, stable;
	struct entry *e;
	int other;

	if (!key->hint_len)
		return NULL;
	/* The hint ends with the size (obj_key__from). */
	memcpy(&size, key->hint + key->hint_len - 8, 8);
	for (e = t->hints[tables_hint_hash(key)]; e; e = e->hint_next) {
		if (e->key.hint_len != key->hint_len ||
		    memcmp(e->key.hint, key->hint, key->hint_len))
			continue;
		if (known_different(e, id)) {
			t->stats.same_id_other_bytes++;
			continue;
		}
		if (e->nr_aliases >= TABLES_MAX_ALIASES) {
			t->stats.same_id_alias_cap++;
			continue;
		}
		if (size > SHARE_MAX_BYTES || compared >= SHARE_MAX_CMP ||
		    (other = tables_reopen(e)) < 0) {
			t->stats.same_id_unverified++;
			continue;
		}
		compared++;
		differ = !same_bytes(fd, other, size);
		/* Either file changed while compared: no verdict, an own table. */
		stable = still(other, &e->key) && still(fd, key);
		close(other);
		if (differ || !stable) {
			if (differ && stable)
				note_different(e, id);
			t->stats.same_id_other_bytes++;
			continue;
		}
		if (add_alias(t, e, key))
			return NULL;
		t->stats.shared_same_bytes++;
		return e;
	}
	return NULL;
}
