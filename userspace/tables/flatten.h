/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Flattener: turns one object's decoded SFrame section into the table the BPF
 * unwinder searches — rows sorted by PC (one per FRE, PLT blocks expanded,
 * explicit gap rows between functions), deduplicated rules, and a page index
 * (the table: flattable.h).
 */
#ifndef SFBPF_FLATTEN_H
#define SFBPF_FLATTEN_H

#include <stdint.h>

#include "sframe/sframe.h"
#include "tables/flattable.h"

/*
 * Flatten d. Each FRE's rule applies from its start to the next FRE's (the
 * later of two FREs at one start wins; FREs at the function's end are left
 * out); FDEs without usable FREs are gaps, except V3's outermost frames.
 * Rules that do not fit struct sfbpf_rule become SFBPF_RULE_UNSUPPORTED rows,
 * where the walk stops. Row PCs are d's function start addresses (ELF virtual addresses
 * when sect_addr was the section's sh_addr). Returns 0 or a negative errno
 * (-ENOMEM, -E2BIG when the table would not fit 32-bit PCs or row indexes).
 */
int flat_table__from_sframe(const struct sframe_decoder *d, struct flat_table **out);

#endif /* SFBPF_FLATTEN_H */
