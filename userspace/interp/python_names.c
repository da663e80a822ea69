// SPDX-License-Identifier: GPL-2.0-or-later
/* The program's table of named Python frames (python_names.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python_names.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/vec.h"

struct entry {
	struct python_name n;
	uint64_t hash;
};

static struct {
	pthread_mutex_t lock;
	struct hashmap map; /* hash -> index in entries */
	struct entry **entries; /* id - 1 -> entry */
	size_t nr, cap;
} names = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct key {
	const char *qualname, *file;
	uint32_t firstline, line;
};

static bool key_eq(const void *ctx, uint64_t val, const void *k)
{
	const struct entry *e = names.entries[val];
	const struct key *key = k;

	(void)ctx;
	return e->n.firstline == key->firstline && e->n.line == key->line &&
	       !strcmp(e->n.qualname, key->qualname) && !strcmp(e->n.file, key->file);
}

static uint64_t key_hash(const struct key *k)
{
	uint64_t h = hash__str(k->qualname) ^ hash__mix64(hash__str(k->file) + k->line);

	return hash__mix64(h + ((uint64_t)k->firstline << 32));
}

/* py-spy's form: the file's base name, "<frozen x>" and "<string>" as they are. */
static char *make_label(const char *qualname, const char *file, uint32_t line)
{
	const char *base = file[0] == '<' ? file : strrchr(file, '/');
	char *s;

	base = !base ? file : base[0] == '/' ? base + 1 : base;
	if (line ? asprintf(&s, "%s (%s:%u)", qualname, base, line) < 0 :
		   asprintf(&s, "%s (%s)", qualname, base) < 0)
		return NULL;
	return s;
}

uint64_t python_names__intern(const char *qualname, const char *file, uint32_t firstline,
			      uint32_t line)
{
	struct key k = { qualname, file, firstline, line };
	uint64_t h = key_hash(&k), id = 0;
	struct entry *e;
	int64_t found;

	pthread_mutex_lock(&names.lock);
	found = hashmap__find(&names.map, (uint32_t)h, key_eq, NULL, &k);
	if (found >= 0) {
		id = (uint64_t)found + 1;
		goto out;
	}
	if (names.nr >= PYTHON_NAMES_MAX ||
	    VEC_RESERVE(names.entries, names.cap, names.nr + 1, 1024))
		goto out;
	e = calloc(1, sizeof(*e));
	if (!e)
		goto out;
	e->n.qualname = strdup(qualname);
	e->n.file = strdup(file);
	e->n.label = make_label(qualname, file, line);
	e->n.firstline = firstline;
	e->n.line = line;
	e->hash = h;
	if (!e->n.qualname || !e->n.file || !e->n.label ||
	    hashmap__add(&names.map, (uint32_t)h, names.nr)) {
		free((char *)e->n.qualname);
		free((char *)e->n.file);
		free((char *)e->n.label);
		free(e);
		goto out;
	}
	names.entries[names.nr++] = e;
	id = names.nr;
out:
	pthread_mutex_unlock(&names.lock);
	return id;
}

bool python_names__get(uint64_t ip, struct python_name *out)
{
	uint64_t id = ip & SFBPF_PY_ADDR_MASK;
	bool ok = false;

	if (!python_names__is_ip(ip))
		return false;
	pthread_mutex_lock(&names.lock);
	if (id >= 1 && id <= names.nr) {
		*out = names.entries[id - 1]->n;
		ok = true;
	}
	pthread_mutex_unlock(&names.lock);
	return ok;
}
