/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Map loader: owns the BPF table maps (rows, rules, objects, pages) and the
 * objects loaded into them. An object (executable or shared library) is
 * loaded once however many processes map it, keyed by its identity (struct
 * obj_key: device, inode, size, mtime, ctime; another file with the same
 * build-id shares it only once the bytes a table is built from digest the
 * same: tablebytes.h), and
 * reference-counted by the processes that use it. Its table comes from its .sframe, else (none, or
 * malformed) is synthesized from its DWARF CFI (tableload.h). Objects without a usable table are
 * remembered too, so a file is parsed once. See docs/DESIGN.md, DESIGN-cfi.md, DESIGN-lifecycle.md.
 *
 * Lifecycle (docs/DESIGN-lifecycle.md): with async set, tables are built on a
 * loader thread; an object gets its slot at once (flag PENDING: its frames
 * use the frame-pointer chain) and its table is published when built.
 * tables__process() moves finished tables into the maps in bounded slices.
 * Unreferenced tables linger for linger_ns (an exec storm of one binary loads
 * it once), then go. The row/page/rule capacities are a memory budget: when a
 * table does not fit, lingering tables go first, then cold ones (per-slot hit
 * counts from the unwinder); a table that still does not fit keeps its slot
 * flagged NO_BUDGET (counted by the unwinder) until it is hot enough to
 * replace a colder one.
 */
#ifndef SFBPF_TABLES_H
#define SFBPF_TABLES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tables/elfobj.h"

struct tablecache;

struct tables_opts {
	int rows_fd, rules_fd, objects_fd, pages_fd;
	uint32_t max_rows, max_rules, max_objects, max_pages;
	uint32_t seg_shift; /* the row and page maps' segments (tables_sizes); 0: the most */
	uint64_t budget_bytes; /* what the sizes came from (stats); 0: what they take */
	bool no_cfi; /* SFrame only: no tables synthesized from .eh_frame/.debug_frame */
	bool no_partial; /* no partial tables of the sampled code while a table builds */
	struct tablecache *cache; /* tables kept across restarts (tablecache.h), or NULL */
	/* Lifecycle; zero values keep the simple synchronous loader. */
	int obj_hits_fd; /* > 0: the unwinder's per-slot hit counts (eviction order) */
	int idents_fd; /* > 0: the unwinder's identity -> slot map (tables__publish_ident) */
	bool async; /* build tables on a loader thread (tables__process publishes) */
	uint64_t linger_ns; /* keep unreferenced tables this long; 0: free at once */
	uint64_t min_residency_ns; /* a loaded table is safe from hotter ones this long; 0: 30 s */
};

/*
 * Identity of a file: what the kernel says it is (device and inode, from the
 * file opened through the mapping) with its size, mtime and ctime, so that a
 * file changed in place is a new object, and its filesystem's type (a FUSE
 * server chooses its files' inodes and times, on a device number an unmount
 * may have freed: it could otherwise name a local file's identity). Build-id, size and mtime are
 * chosen by the file's owner: a forged copy of a library can carry the real one's, so they only
 * name candidates (hint) whose table bytes are then digested before a table is shared (the same
 * image layer seen through two overlayfs mounts has two devices). hint_len 0: never shared beyond
 * the identity.
 */
#define OBJ_KEY_MAX 80
#define OBJ_HINT_MAX (1 + ELFOBJ_BUILD_ID_MAX + 8)
struct obj_key {
	uint8_t len;
	uint8_t bytes[OBJ_KEY_MAX];
	uint8_t hint_len;
	uint8_t hint[OBJ_HINT_MAX];
};

/*
 * bytes[0] says whose word the identity is (util/fileident.h): 'F', the
 * kernel's (it stands for the file's bytes this boot, also in the table
 * cache's identity index); 'A', the file's author's (an image, FUSE,
 * overlayfs), never written to the index, which names one file only within
 * the mount it was opened through: its unique number follows the identity
 * where the kernel gives one (6.8 and later), else the identity names the
 * file only while the map loader holds the file open (obj_key__pinned);
 * 'V', a vDSO image's.
 */
#define OBJ_KEY_FILE_LEN (1 + 8 * 8) /* 'F'/'A' and the identity, without a mount */
static inline bool obj_key__is_file(const struct obj_key *key)
{
	return key->len && (key->bytes[0] == 'F' || key->bytes[0] == 'A');
}

static inline bool obj_key__authored(const struct obj_key *key)
{
	return key->len && key->bytes[0] == 'A';
}

/* An author's identity without a mount number: it names its file only while pinned. */
static inline bool obj_key__pinned(const struct obj_key *key)
{
	return obj_key__authored(key) && key->len == OBJ_KEY_FILE_LEN;
}

/* fd: the file st is of (its filesystem's type and keeper are part of the identity), or -1. */
void obj_key__from(struct obj_key *key, const struct elfobj_info *info, const struct stat *st,
		   int fd);
/*
 * key as the table cache's identity index keeps it (tableident.h): its bytes
 * into out (at most OBJ_KEY_IDENT_MAX), their length returned; and back,
 * false when the bytes are not a key's.
 */
#define OBJ_KEY_IDENT_MAX (2 + OBJ_KEY_MAX + OBJ_HINT_MAX)
uint32_t obj_key__ident(const struct obj_key *key, uint8_t out[OBJ_KEY_IDENT_MAX]);
bool obj_key__from_ident(struct obj_key *key, const uint8_t *b, uint32_t len);
/* What key says of its file: device, inode, size, mtime and ctime (ns); false if not a file's. */
bool obj_key__stat(const struct obj_key *key, uint64_t out[5]);
/*
 * "dev D, inode I" of key (st_dev and st_ino, as stat(1) prints them with %d
 * and %i): which file a message is about, where two files share a name.
 */
#define OBJ_KEY_FILE_MAX 48
void obj_key__file(const struct obj_key *key, char buf[OBJ_KEY_FILE_MAX]);

struct tables_stats {
	uint32_t objects; /* with a table in the maps */
	uint32_t objects_without_table; /* no .sframe nor CFI, malformed (remembered) */
	uint32_t objects_rejected; /* malformed .sframe */
	uint32_t objects_over_budget; /* times a table did not fit the budget */
	uint64_t rows_used, rows_capacity;
	uint64_t rules_used, rules_capacity;
	uint64_t pages_used, pages_capacity;
	/*
	 * Since the start (counters, not what is held): the .sframe bytes tables were
	 * loaded from, and where each table came from (.eh_frame synthesis: see
	 * docs/DESIGN-cfi.md).
	 */
	uint64_t sframe_bytes;
	uint64_t objects_sframe, objects_eh_frame; /* eh_frame: synthesized from DWARF CFI */
	uint64_t rows_sframe, rows_eh_frame;
	uint64_t load_ns; /* time spent decoding and flattening (loader thread) */
	uint64_t push_ns; /* time spent writing tables to the maps */
	/* Lifecycle. */
	uint32_t objects_pending; /* being built or pushed */
	uint32_t objects_no_budget; /* referenced, but no room for their tables now */
	uint32_t objects_lingering; /* loaded, unreferenced, kept for linger_ns */
	uint64_t evictions; /* tables removed to make room */
	uint64_t promotions; /* tables reloaded because they turned hot */
	uint64_t aged_out; /* lingering tables freed */
	uint64_t loads; /* tables built */
	uint64_t load_busy; /* builds not queued: the loader's queue was full */
	uint64_t max_load_ns; /* the longest build */
	uint64_t max_rows_object; /* rows of the largest table loaded */
	uint64_t budget_bytes; /* what the table maps may take at most (tables__map_bytes) */
	/* Files with another's build-id and size (obj_key hint). */
	uint64_t shared_same_bytes; /* bytes equal: the table is shared */
	uint64_t same_id_other_bytes; /* bytes differ (a forged or patched copy): own table */
	uint64_t same_id_unverified; /* not compared (the other gone, over 64 MiB to digest, 2
					compared already) */
	uint64_t same_id_alias_cap; /* not compared: the other shares with TABLES_MAX_ALIASES */
	/*
	 * Restarts (tableident.h): tables read back at start for the files used
	 * last, before any process mapped them; of those, the ones a process
	 * then mapped.
	 */
	uint64_t preloaded, preload_used;
	/* Builds moved ahead of the loader's queue: their code was sampled while they waited. */
	uint64_t hurried;
	/*
	 * Partial tables (tablepart.h): published, their rows in all, PCs asked
	 * for; objects whose partial tables used the index their whole build
	 * shared (no index job of their own).
	 */
	uint64_t partial_tables, partial_rows, partial_pcs, partial_shared, partial_lookups;
	/*
	 * Whole tables from CFI walked in chunks by both loader threads
	 * (tables/tableload.c): builds, their chunks, the chunks the thread not
	 * building the table walked.
	 */
	uint64_t split_builds, split_chunks, split_chunks_helped;
	uint64_t table_bytes; /* rows, page entries and rules in use */
	uint64_t map_bytes; /* what the table maps take now: segments, rules, slots */
};

/* Map capacities, in entries. */
struct tables_sizes {
	uint32_t rows, pages, rules, objects;
	uint32_t seg_shift; /* segments of 1 << seg_shift rows or page entries (bpf/abi.h) */
};

/*
 * Capacities that fit a budget of bytes of BPF map memory (rows 4 bytes,
 * page entries 4, rules 24, object slots 40 with their hit counters).
 */
void tables__size_budget(uint64_t bytes, struct tables_sizes *out);
/* Bytes of map memory those capacities take. */
uint64_t tables__map_bytes(const struct tables_sizes *sizes);
/* The default budget: 1/512 of the machine's memory, within [32, 256] MiB. */
uint64_t tables__default_budget(void);

struct tables;

struct tables *tables__new(const struct tables_opts *opts);
void tables__free(struct tables *t);

/* Where an object is mapped: lets the loader reopen it later (promotion). */
struct tables_src {
	int pid;
	uint64_t start, end; /* the mapping, as in /proc/PID/map_files */
};

/*
 * Table of the object open at fd (whose identity is key; name is for messages;
 * src may be NULL). Returns its object slot (>= 0) with a reference taken —
 * its table may still be loading, or over budget — -ENOENT when it has no
 * usable table (also cached), -EAGAIN when the loader is busy (try again
 * later), or a negative errno.
 */
int64_t tables__acquire_src(struct tables *t, int fd, const struct obj_key *key, const char *name,
			    const struct tables_src *src);
int64_t tables__acquire(struct tables *t, int fd, const struct obj_key *key, const char *name);
/*
 * After a restart: the tables of up to max files the table cache's identity
 * index names as used last in this boot, read back on the loader threads
 * into free room (lingering, as if their processes had just exited), so a
 * process mapping one of them again finds it loaded. Never evicts a table
 * for one, nor takes a lingering table's slot. Returns how many were queued.
 */
uint32_t tables__preload(struct tables *t, uint32_t max);
void tables__release(struct tables *t, uint32_t obj);
/*
 * Slot obj, acquired for the file of key, is named to the unwinder by the
 * file's identity as the kernel has it (bpf/vmafind.h), with delta, ELF
 * address less file offset in its executable segment, and text_vaddr, its
 * lowest executable segment's ELF address (a program's text is found from
 * its mm's start_code: vmafind.h): a process sampled
 * before it is read finds the table from its first sample. Only the
 * kernel's identities (util/fileident.h: the author's may name another
 * tenant's bytes) and the vDSO's (bpf/abi.h), only the entry's own file (not a file sharing its
 * table), withdrawn when the slot is freed, never for a file whose
 * executable segments disagree on delta.
 */
void tables__publish_ident(struct tables *t, uint32_t obj, const struct obj_key *key,
			   uint64_t delta, uint64_t text_vaddr);
/*
 * The files slot obj is named to the unwinder by (tables__publish_ident):
 * the entry's own and those sharing its table, each as its key describes it
 * (obj_key__stat: device, inode, size, mtime, ctime) with its delta; at most
 * max, how many returned. None if the slot was freed at or after since_ns
 * (CLOCK_MONOTONIC, bpf_ktime_get_ns()'s): what named it then may be
 * another file's now. *name: the entry's (valid until the slot changes).
 */
struct tables_slot_file {
	uint64_t st[5];
	uint64_t delta;
};
uint32_t tables__slot_files(const struct tables *t, uint32_t obj, uint64_t since_ns,
			    struct tables_slot_file *out, uint32_t max, const char **name);
/*
 * One more reference on whatever table slot obj holds, for an entry the
 * kernel copied at a fork (proctrack__adopt): 0, or -ENOENT when the slot is
 * empty (its mappings must then name no table).
 */
int tables__hold(struct tables *t, uint32_t obj);
/*
 * Forks copy entries in the kernel: a slot freed at or after horizon_ns may
 * still be named by a copy whose event the caller has not read, so it serves
 * no other file until a later horizon passes it. The caller gives, after
 * each round that read the whole event ring, the time that round began, less
 * a margin for an event being written then. Before the first call slots are
 * reused at once.
 */
void tables__fork_horizon(struct tables *t, uint64_t horizon_ns);

/*
 * Whether some object's table is being built that could take sampled PCs
 * (tables__want_pc): cheap, for a caller deciding whether to look.
 */
bool tables__partial_wanted(const struct tables *t);
/*
 * Whether partial tables are being built: each new PC comes from a sample
 * the caller has yet to read, so it should read them without delay.
 */
bool tables__partial_active(const struct tables *t);
/*
 * A process was sampled at ELF address pc of the object in slot obj, the
 * first frame of its stack that may lack a row: while obj's table is being
 * built, the rows covering pc are built and published first (tablepart.h).
 * 1 when obj has no row for pc yet (frames above it were walked without
 * one: not to be trusted), 0 when it has one or takes no PCs.
 */
int tables__want_pc(struct tables *t, uint32_t obj, uint64_t pc);

/*
 * Publishes finished tables (writing at most a bounded slice of rows per
 * call, within about budget_ns), ages lingering tables out, and rebalances
 * the budget by hotness every few seconds. Call it between polls. Returns
 * the objects still loading.
 */
uint32_t tables__process(struct tables *t, uint64_t budget_ns);
/* Objects whose tables are still being built or pushed. */
uint32_t tables__pending(const struct tables *t);
/*
 * An eventfd written when a build is done or a table's segments are linked:
 * tables__process() has something to publish. For the caller's poll (read
 * it to drain it); -1 without a loader thread. Not closed by the caller.
 */
int tables__wake_fd(const struct tables *t);
/*
 * The builds started so far, as a mark; tables__pending_at() counts those of
 * them not yet published (built and pushed, or found to have no table). A
 * start-up wait for the tables of the processes a scan found then ends when
 * they are loaded, even on a machine that keeps starting new processes.
 */
uint64_t tables__mark(const struct tables *t);
uint32_t tables__pending_at(const struct tables *t, uint64_t mark);
void tables__stats(const struct tables *t, struct tables_stats *out);

#endif /* SFBPF_TABLES_H */
