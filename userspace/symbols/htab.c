// SPDX-License-Identifier: GPL-2.0-or-later
/* Chained hash table of intrusive nodes (see htab.h). */
#include <errno.h>
#include <stdlib.h>

#include "symbols/htab.h"

uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

struct hnode *htab__first(const struct htab *h, uint64_t key)
{
	struct hnode *n = h->nb ? h->b[hash64(key) & (h->nb - 1)] : NULL;

	while (n && n->key != key)
		n = n->next;
	return n;
}

struct hnode *htab__next(struct hnode *n)
{
	uint64_t key = n->key;

	for (n = n->next; n && n->key != key; n = n->next)
		;
	return n;
}

int htab__add(struct htab *h, struct hnode *node)
{
	size_t i;

	if (h->n >= h->nb) {
		size_t nb = h->nb ? h->nb * 2 : 64;
		struct hnode **b = calloc(nb, sizeof(*b)), *n, *next;

		if (!b)
			return -ENOMEM;
		for (i = 0; i < h->nb; i++) {
			for (n = h->b[i]; n; n = next) {
				next = n->next;
				n->next = b[hash64(n->key) & (nb - 1)];
				b[hash64(n->key) & (nb - 1)] = n;
			}
		}
		free(h->b);
		h->b = b;
		h->nb = nb;
	}
	i = hash64(node->key) & (h->nb - 1);
	node->next = h->b[i];
	h->b[i] = node;
	h->n++;
	return 0;
}

void htab__del(struct htab *h, struct hnode *node)
{
	struct hnode **pp = &h->b[hash64(node->key) & (h->nb - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == node) {
			*pp = node->next;
			h->n--;
			return;
		}
	}
}

void htab__free_all(struct htab *h, size_t node_off, void (*fn)(void *))
{
	struct hnode *n, *next;
	size_t i;

	for (i = 0; i < h->nb; i++) {
		for (n = h->b[i]; n; n = next) {
			next = n->next;
			fn((char *)n - node_off);
		}
	}
	free(h->b);
	h->b = NULL;
	h->nb = h->n = 0;
}
