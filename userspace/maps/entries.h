/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The map loader's entries, one per object, and its state (struct tables):
 * what tables.c (registry, loading, publishing), tablebudget.c (sizing,
 * admission, eviction, hotness) and tableshare.c (aliases) share, with the
 * operations on an entry all three call (entries.c), so that the three call
 * down to it and not each other back.
 */
#ifndef SFBPF_MAPS_ENTRIES_H
#define SFBPF_MAPS_ENTRIES_H

#include <stdbool.h>
#include <stdint.h>

#include "tables/cfi.h"
#include "tables/complete.h"
#include "tables/flattable.h"
#include "tables/sha256.h"
#include "maps/slices.h"
#include "tables/ruleset.h"
#include "maps/segments.h"
#include "tables/tableload.h"
#include "maps/tables.h"
#include "util/hashmap.h"

#define TABLES_SRCS 4 /* places an object was seen mapped, remembered to reopen it */
#define TABLES_MAX_ALIASES 64 /* files sharing one entry's table besides its own */
#define TABLES_DIFFERS 4 /* differing identities remembered per entry (a ring) */
/*
 * Freed slices are rewritten only this long after they were unpublished: a
 * sample being unwound on another CPU may still read them (an unwind takes
 * microseconds).
 */
#define TABLES_QUARANTINE_NS 2000000ULL
/* Hit counts are read and tables rebalanced this often. */
#define TABLES_REBALANCE_NS (5 * 1000000000ULL)

/*
 * PENDING (being built) -> PUSHING (rows being written) -> LOADED, or
 * NO_BUDGET (no room: the slot stays, flagged) or NO_TABLE (nothing usable).
 * LOADED -> NO_BUDGET when evicted while referenced; NO_BUDGET -> PENDING
 * when promoted.
 */
enum obj_state {
	OBJ_PENDING,
	OBJ_PUSHING,
	OBJ_LOADED,
	OBJ_NO_BUDGET,
	OBJ_NO_TABLE,
};

/*
 * What an entry's digest (tablebytes.h) says: nothing yet; what its file held
 * when a would-be alias was compared while its build was pending (the build
 * must then come out of the same bytes); the bytes its table was built from.
 */
enum obj_digest {
	DIGEST_NONE,
	DIGEST_CLAIMED,
	DIGEST_BUILT,
};

/* Another file whose table would be built from an entry's bytes: its identity names that entry. */
struct obj_alias {
	struct obj_key key;
	struct entry *e;
	struct obj_alias *sibling; /* e's other aliases */
	uint8_t ident; /* as struct entry's */
	uint64_t ident_delta;
};

/*
 * A partial table (tablepart.c): while an entry's whole table is being built,
 * the rows of the FDEs that cover the PCs its processes were sampled at,
 * published in the entry's slot (gaps elsewhere) until the whole table is.
 */
struct entry_part {
	int fd; /* the entry's file, reopened at the first PC; the index reads it */
	struct cfi_index *ix;
	struct complete_info ci;
	uint64_t id; /* names it to its index job (the job may outlive it) */
	bool indexing; /* its index is being read on a loader thread */
	bool no_lookup; /* the object has no usable .eh_frame_hdr: an index of all its FDEs */
	bool failed; /* no index (no CFI, file gone): no more PCs taken */
	uint64_t *pcs; /* ELF addresses asked for, sorted */
	uint32_t nr_pcs;
	size_t cap_pcs;
	uint64_t *fresh; /* of those, the ones asked for since the last build */
	uint32_t nr_fresh;
	size_t cap_fresh;
	struct flat_table *local; /* the rows built so far, with the table's own rule ids */
	struct cfi_range *walked; /* the code whose FDEs are in local: sorted, disjoint */
	uint32_t nr_walked;
	/* The published table (global rule ids) and its slices. */
	struct flat_table *ft;
	bool has_ranges;
	uint32_t row_start, nr_rows, page_start, nr_pages;
	/* The next one, written, published once its segments are linked (NULL: none). */
	struct flat_table *wait_ft;
	uint32_t wait_row_start, wait_nr_rows, wait_page_start, wait_nr_pages;
	struct entry *next; /* t->parts */
};

struct entry {
	struct obj_key key;
	uint64_t seq; /* t->entries_made when it was made: candidates for sharing, newest first */
	struct obj_alias *aliases;
	uint32_t nr_aliases; /* at TABLES_MAX_ALIASES newcomers get their own table */
	/* Identities (tableshare.c's hash) whose bytes were found to differ: not compared again. */
	uint64_t differs[TABLES_DIFFERS];
	uint8_t differs_next;
	/* Aliases are compared with this, never with the file as it is now. */
	enum obj_digest digest_state;
	uint8_t digest[SHA256_BYTES];
	struct entry *push_next; /* push queue */
	char *name;
	int32_t slot; /* index in the objects map, -1: none */
	enum obj_state state;
	int err; /* NO_TABLE: why */
	bool in_job; /* the loader is building it: the entry must stay */
	uint64_t job_seq; /* its last build, in the order builds were started */
	bool has_ranges; /* owns [row_start, +nr_rows) and [page_start, +nr_pages) */
	bool want_promote; /* hot enough to reload: at the next acquire if not reopened */
	bool promoting; /* its reload is being built, or parked */
	bool from_cfi;
	bool counted_rejected;
	/*
	 * Read back at start for a file used before the restart (tables__preload),
	 * no process mapping it yet: admitted only into free room, dropped
	 * whole (not remembered as table-less) if the cache fails it.
	 */
	bool preloading; /* its read-back is under way */
	bool preloaded; /* not yet mapped by a process */
	bool hurried; /* sampled while its build was queued: moved ahead (tableload__hurry) */
	/* In the unwinder's idents map (tables__publish_ident): 0 no, 1 yes, 2 never. */
	uint8_t ident;
	uint64_t ident_delta;
	uint32_t refs;
	/*
	 * The file of an author's identity without a mount number
	 * (obj_key__pinned), held open while processes map it: only then does
	 * the identity name this file (the open file pins its superblock, so its
	 * device number and inode go to no other file). -1: not pinned, found by
	 * the same bytes only.
	 */
	int pin_fd;
	/* Its table's size (kept when evicted: what a reload needs). */
	uint32_t row_start, nr_rows, page_start, nr_pages, pc_min;
	uint8_t page_shift; /* of its page index (flattable.h) */
	/* PUSHING: the table, how much is written, and not before when. */
	struct flat_table *ft;
	uint32_t pushed_rows, pushed_pages;
	uint64_t push_after;
	uint64_t sframe_bytes;
	uint64_t used_ns; /* last acquired or released */
	uint64_t loaded_ns; /* published */
	uint64_t hits_seen; /* the slot's hit counter when last read */
	uint64_t hits_at_load; /* the slot's hit counter when its table was published */
	uint64_t hits_live; /* the slot's hit counter, read when room is being made */
	uint64_t heat; /* decayed hits: halves every rebalance period */
	/* Parked (t->parked): its refused reload, in ft, is tried again until then. */
	uint64_t parked_until, park_retry_ns;
	/* Where it was last seen mapped (a ring, newest at src_next - 1): to reopen it. */
	struct tables_src src[TABLES_SRCS];
	uint8_t src_next;
	struct entry_part *part; /* while its table is built: the sampled code's rows */
};

struct tables {
	struct tables_opts opts;
	struct slices rows, pages; /* who owns which entries of the two arrays */
	struct ruleset rules; /* mirrors the rules map: indexes are global rule ids */
	struct hashmap by_key; /* entries by key (tables_key_hash) */
	struct hashmap by_hint; /* entries by key.hint: the candidates for sharing */
	struct hashmap by_alias; /* obj_alias by their key */
	struct entry **slots; /* object index -> entry */
	uint64_t *slot_freed_ns; /* when each slot was last emptied (tables__fork_horizon) */
	uint64_t fork_horizon_ns; /* UINT64_MAX until forks copy entries */
	struct tableload *loader;
	struct segspace row_segs, page_segs; /* where the slices' entries are */
	uint32_t table_gen; /* tables published (sfbpf_object.gen) */
	struct entry *push_head, **push_tail;
	/*
	 * Written, published once their segments are linked (push_next links
	 * them): a table whose new segment waits out a grace period does not
	 * hold back the tables queued behind it (a new process's libc behind
	 * a bigger library).
	 */
	struct entry *linking;
	uint32_t nr_pushing; /* in the queue and linking */
	uint32_t promoting; /* reloads being built or parked: one at a time, the hottest first */
	struct entry *parked; /* a reload refused for now: its built table kept, tried again */
	struct entry *parts; /* entries with a partial table (entry_part.next) */
	uint64_t part_ids; /* entry_part.id given so far */
	/* The ranges kept linked ahead (tables_keep_room): start, length. */
	uint32_t kept[4][2];
	uint64_t job_seq; /* builds started */
	uint64_t entries_made;
	uint64_t recycled_ns; /* slices were last given back then */
	uint64_t next_age_ns, next_rebalance_ns;
	struct tables_stats stats;
};

/*
 * What every layer of maps/ does to an entry (entries.c, with tables.h's
 * obj_key__from). Nothing here chooses what to evict or when (tablebudget.h).
 */
void tables_publish_flags(struct tables *t, int32_t slot, uint32_t flags);
/*
 * Gives slices of the rows and pages arrays back (and the segments left
 * unused); they are rewritten only TABLES_QUARANTINE_NS later.
 */
void tables_release_ranges(struct tables *t, uint32_t row_start, uint32_t nr_rows,
			   uint32_t page_start, uint32_t nr_pages);
void tables_drop_rows(struct tables *t, struct entry *e);
/* Unpublishes e and gives its slot back; e stays (a table-less file is remembered). */
void tables_release_slot(struct tables *t, struct entry *e);
void tables_free_entry(struct tables *t, struct entry *e);
/* The entry of key (an alias's: tableshare.c), or NULL. */
struct entry *tables_find_entry(struct tables *t, const struct obj_key *key);
/* e, an authored identity's entry, holds fd's file (a copy of fd) while mapped; 0 or -errno. */
int tables_pin(struct entry *e, int fd);
/* Its file no longer held: its identity names it no more (the next one is compared by bytes). */
void tables_unpin(struct entry *e);
/* A free slot, reclaiming the oldest lingering table if there is none; -ENOSPC. */
int64_t tables_alloc_slot(struct tables *t);
/* The kernel's view of an 'F' key's file (struct sfbpf_ident_key); false for others. */
bool tables_ident_key(const struct obj_key *key, struct sfbpf_ident_key *out);
/* Slot i is empty and no entry a fork copied can name it (tables__fork_horizon). */
bool tables_slot_free(const struct tables *t, uint32_t i);
/* e takes the free slot, flagged PENDING (its table is being built or read back). */
void tables_place_entry(struct tables *t, struct entry *e, int32_t slot);
/* A new entry for key (indexed, no slot yet), or NULL. */
struct entry *tables_new_entry(struct tables *t, const struct obj_key *key, const char *name);
/* Forgets e's partial table: its slices given back (quarantined), its memory freed. */
void tables_drop_part(struct tables *t, struct entry *e);
/* e's memory only, nothing unpublished (tables__free). */
void entry__free(struct entry *e);
/* Drops e's parked reload, if it is the parked one (before e is freed). */
void tables_unpark(struct tables *t, struct entry *e);
int tables_start_job(struct tables *t, struct entry *e, int fd);
void tables_note_src(struct entry *e, const struct tables_src *src);
uint32_t tables_key_hash(const struct obj_key *k);
uint32_t tables_hint_hash(const struct obj_key *k);
/* hashmap_eq: the entry (or alias) is the one whose address key is. */
bool tables_is_ptr(const void *ctx, uint64_t val, const void *key);
/* e's file again, through the places it was last seen mapped (an fd, or a negative errno). */
int tables_reopen(const struct entry *e);

#endif /* SFBPF_MAPS_ENTRIES_H */
