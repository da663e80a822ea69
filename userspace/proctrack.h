/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Process tracker: keeps, for each profiled process, the BPF map entry that
 * lists its executable mappings (start, end, load bias, object table), and
 * holds references on the object tables those mappings use.
 */
#ifndef SFBPF_PROCTRACK_H
#define SFBPF_PROCTRACK_H

#include <stdint.h>

#include "tables.h"

struct proctrack;

struct proctrack *proctrack__new(struct tables *tables, int procs_fd);
void proctrack__free(struct proctrack *pt);

/* (Re)load pid's mappings. -ESRCH when the process is gone (its entry is dropped). */
int proctrack__refresh(struct proctrack *pt, int pid);
/* Forget pid: delete its map entry and release its objects. */
void proctrack__remove(struct proctrack *pt, int pid);
/* Load every process in /proc. Returns how many were loaded. */
int proctrack__scan(struct proctrack *pt);

struct proctrack_stats {
	uint32_t procs; /* processes with a map entry */
	uint32_t mappings; /* executable mappings in those entries */
	uint32_t mappings_with_table;
	uint32_t mappings_dropped; /* past SFBPF_MAX_MAPPINGS */
};

void proctrack__stats(const struct proctrack *pt, struct proctrack_stats *out);

#endif /* SFBPF_PROCTRACK_H */
