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

static bool rule_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct ruleset *rs = ctx;

	return !memcmp(&rs->rules[val], key, sizeof(struct sfbpf_rule));
}

int64_t ruleset__intern(struct ruleset *rs, const struct sfbpf_rule *r, uint32_t max)
{
	uint32_t h = hash_rule(r);
	int64_t idx = hashmap__find(&rs->index, h, rule_eq, rs, r);

	if (idx >= 0)
		return idx;
	if (rs->nr_rules >= max)
		return -ENOSPC;
	if (VEC_RESERVE(rs->rules, rs->cap_rules, (size_t)rs->nr_rules + 1, 64) ||
	    hashmap__add(&rs->index, h, rs->nr_rules))
		return -ENOMEM;
	rs->rules[rs->nr_rules] = *r;
	return rs->nr_rules++;
}

void ruleset__free_index(struct ruleset *rs)
{
	hashmap__free(&rs->index);
}

void ruleset__clear(struct ruleset *rs)
{
	free(rs->rules);
	hashmap__free(&rs->index);
	memset(rs, 0, sizeof(*rs));
}
