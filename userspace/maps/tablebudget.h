/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table budget inside the map loader (tablebudget.c; the sizing that
 * session and tests call is in tables.h): admission of a built table, the
 * parked reload, and hotness. tables.c calls it; it calls entries.h only.
 * Errors are negative errnos.
 */
#ifndef SFBPF_MAPS_TABLEBUDGET_H
#define SFBPF_MAPS_TABLEBUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "maps/entries.h"

/*
 * Interns ft's rules into the system-wide set (new ones written to the rules
 * map) and rewrites its rows' rule ids to the global ones. 0 or a negative errno.
 */
int tables_intern_table(struct tables *t, struct flat_table *ft);
/*
 * Makes room for ft (evicting colder tables if needed), interns its rules and
 * takes its slices; ft is then e->ft (or freed). 0, -ENOSPC (no room), or an
 * error. With park (a reload of a referenced table), no room yet parks it
 * instead: ft kept in e->ft, t->parked = e, -EAGAIN.
 */
int tables_admit(struct tables *t, struct entry *e, struct flat_table *ft, bool park);
/*
 * Tries the parked reload again (throttled): true once it has its slices (the
 * caller pushes it); dropped when its time is up.
 */
bool tables_retry_parked(struct tables *t, uint64_t now);
/*
 * Keeps the segments where the next large table would go linked ahead
 * (segspace__reserve): TABLES_RESERVE_ROWS rows and a page index for them,
 * and where the next small one would go, TABLES_RESERVE_SMALL rows and
 * theirs, each in a space that holds eight times as much. The lifecycle's
 * tables only (async), from their start.
 */
#define TABLES_RESERVE_ROWS (512u << 10)
#define TABLES_RESERVE_SMALL (256u << 10)
void tables_keep_room(struct tables *t);
/* A table was published: its hits from now on tell how hot it is while fresh. */
void tables_note_loaded(struct tables *t, struct entry *e);
/* Reads the hit counters, decays heat, and reloads hot over-budget tables. */
void tables_rebalance(struct tables *t, uint64_t now);

#endif /* SFBPF_MAPS_TABLEBUDGET_H */
