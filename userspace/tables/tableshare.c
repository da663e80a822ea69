// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sharing a table between two files (see struct obj_key): a file whose
 * build-id and size are another's uses that one's table only once their bytes
 * are found equal, compared here; it is then remembered as an alias of the
 * other's entry. A build-id is chosen by whoever built the file, so without
 * the comparison a tenant's forged copy of a library, mapped first, would
 * give its table to every process mapping the real one.
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
	a->next = t->aliases[b];
	t->aliases[b] = a;
	return 0;
}

struct entry *tables_find_same_bytes(struct tables *t, int fd, const struct obj_key *key)
{
	struct entry *e;
	uint64_t size;
	bool same;
	int other;

	if (!key->hint_len)
		return NULL;
	/* The hint ends with the size (obj_key__from). */
	memcpy(&size, key->hint + key->hint_len - 8, 8);
	for (e = t->hints[tables_hint_hash(key)]; e; e = e->hint_next) {
		if (e->key.hint_len != key->hint_len ||
		    memcmp(e->key.hint, key->hint, key->hint_len))
			continue;
		if (size > SHARE_MAX_BYTES || (other = tables_reopen(e)) < 0) {
			t->stats.same_id_unverified++;
			continue;
		}
		/* Either file changed while compared: no verdict, an own table. */
		same = same_bytes(fd, other, size) && still(other, &e->key) && still(fd, key);
		close(other);
		if (!same) {
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
