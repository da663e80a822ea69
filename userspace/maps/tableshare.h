/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sharing a table between two files whose build-id and size are the same,
 * once their bytes compare equal (tableshare.c says why and how). tables.c
 * calls it on an acquire; it calls entries.h only.
 */
#ifndef SFBPF_MAPS_TABLESHARE_H
#define SFBPF_MAPS_TABLESHARE_H

#include "maps/entries.h"

/*
 * An entry whose table was built from the bytes a table of the file open at
 * fd would be built from (whose identity is key, with a hint; tablebytes.h),
 * found by key's hint and compared by digest: key becomes its alias. NULL:
 * none (counted in the stats).
 */
struct entry *tables_find_same_bytes(struct tables *t, int fd, const struct obj_key *key);

#endif /* SFBPF_MAPS_TABLESHARE_H */
