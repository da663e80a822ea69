/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A deduplicated set of unwind rules: most functions share a handful of
 * rules, so rows carry an index into a set instead of the rule itself. Used
 * per object by the flattener and system-wide by the map loader.
 */
#ifndef SFBPF_RULESET_H
#define SFBPF_RULESET_H

#include <stdint.h>

#include "bpf/abi.h"
#include "util/hashmap.h"

struct ruleset {
	struct sfbpf_rule *rules;
	uint32_t nr_rules;
	size_t cap_rules;
	struct hashmap index; /* rule -> its index in rules */
};

/* Index of r in the set, adding it if new; -ENOMEM, or -ENOSPC past max. */
int64_t ruleset__intern(struct ruleset *rs, const struct sfbpf_rule *r, uint32_t max);
void ruleset__clear(struct ruleset *rs);
/* The index alone (the rules array taken over by its new owner). */
void ruleset__free_index(struct ruleset *rs);

#endif /* SFBPF_RULESET_H */
