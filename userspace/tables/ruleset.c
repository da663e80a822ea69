// SPDX-License-Identifier: GPL-2.0-or-later
/* Deduplicated rule set (see ruleset.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tables/ruleset.h"
#include "util/vec.h"

/* Every byte of the rule (what memcmp compares), 8 at a time: interning is per row. */
static uint32_t hash_rule(const struct sfbpf_rule *r)
{
	uint64_t w[(sizeof(*r) + 7) / 8] = { 0 }, h = 0;
	size_t i;

	memcpy(w, r, sizeof(*r));
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

static int rehash(struct ruleset *rs)
{
	uint32_t i, h, size = rs->hash_size ? rs->hash_size * 2 : 256;
	uint32_t *tab = calloc(size, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < rs->nr_rules; i++) {
		h = hash_rule(&rs->rules[i]) & (size - 1);
		while (tab[h])
			h = (h + 1) & (size - 1);
		tab[h] = i + 1;
	}
	free(rs->hash);
	rs->hash = tab;
	rs->hash_size = size;
	return 0;
}

int64_t ruleset__intern(struct ruleset *rs, const struct sfbpf_rule *r, uint32_t max)
{
	uint32_t h, idx;

	if ((rs->nr_rules + 1) * 2 > rs->hash_size && rehash(rs))
		return -ENOMEM;
	h = hash_rule(r) & (rs->hash_size - 1);
	while ((idx = rs->hash[h])) {
		if (!memcmp(&rs->rules[idx - 1], r, sizeof(*r)))
			return idx - 1;
		h = (h + 1) & (rs->hash_size - 1);
	}
	if (rs->nr_rules >= max)
		return -ENOSPC;
	if (VEC_RESERVE(rs->rules, rs->cap_rules, (size_t)rs->nr_rules + 1, 64))
		return -ENOMEM;
	rs->rules[rs->nr_rules] = *r;
	rs->hash[h] = rs->nr_rules + 1;
	return rs->nr_rules++;
}

void ruleset__clear(struct ruleset *rs)
{
	free(rs->rules);
	free(rs->hash);
	memset(rs, 0, sizeof(*rs));
}
