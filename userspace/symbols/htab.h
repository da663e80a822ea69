/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Chained hash table of intrusive nodes, keyed by a 64-bit key, for the
 * symbolizer's processes, objects and interned strings. Several nodes may
 * share a key (a hash of something longer): walk them with htab__first() and
 * htab__next() and compare what the key stands for.
 *
 * Lifecycle: a zeroed struct htab is empty and ready; nodes are owned by the
 * caller, who embeds a struct hnode in each; htab__free_all() frees every
 * node with a callback, then the buckets. Errors: htab__add returns -ENOMEM.
 */
#ifndef SFBPF_SYMBOLS_HTAB_H
#define SFBPF_SYMBOLS_HTAB_H

#include <stddef.h>
#include <stdint.h>

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#endif

struct hnode {
	struct hnode *next;
	uint64_t key;
};

struct htab {
	struct hnode **b;
	size_t nb, n; /* nb: power of two */
};

/* A 64-bit mix (murmur3's finalizer): spreads nearby keys over the buckets. */
uint64_t hash64(uint64_t x);
/* FNV-1a of a string. */
uint64_t hash_str(const char *s);

/* The first node with key, or NULL; htab__next: the next node with its key. */
struct hnode *htab__first(const struct htab *h, uint64_t key);
struct hnode *htab__next(struct hnode *n);
int htab__add(struct htab *h, struct hnode *node);
void htab__del(struct htab *h, struct hnode *node);
/* Call fn on each node's container (node_off: offsetof the hnode in it), free the buckets. */
void htab__free_all(struct htab *h, size_t node_off, void (*fn)(void *));

#endif /* SFBPF_SYMBOLS_HTAB_H */
