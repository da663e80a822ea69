/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model behind sfbpf-top's table: per-function Self, Total (children) and
 * Samples, computed from a session's aggregator, plus caller/callee trees of
 * one function. The live view and batch mode only format what this computes.
 *
 * A row is a function of one group: (PID, thread name) by default, or one
 * command name, or every process together. A function is a symbol of one
 * shared object, user ([.]) or kernel ([k]); frames are named by
 * stackwalk__name(), the rule every output names them by ("[MODULE]",
 * "[unknown]", return addresses looked up at addr - 1), so a row matches a
 * flame-graph frame. A row is the function a sampled address is in: the
 * functions inlined there have no rows of their own.
 *
 *   Self     samples whose leaf (innermost) frame is the function
 *   Total    samples with the function anywhere in the stack, once per sample
 *            even when it recurses (perf's "children")
 *   Samples  Self, as a whole number of samples since the last zeroing, never
 *            decayed (perf top's Samples column)
 *
 * Self and Total follow the counting mode: decaying (every update multiplies
 * what was counted before by a factor, 7/8 as in perf top), cumulative (since
 * start or the last zeroing), or interval (zeroed at every update: only what
 * arrived since the previous one).
 *
 * Updates are incremental: every distinct stack is symbolized once, when it
 * first appears, into function ids (each distinct address once); an update
 * reads every stack's count but only folds in those that grew. Stacks are
 * followed by their aggregator id: a stack gone from the aggregator (evicted
 * for its budget, dropped as idle, or a reset) leaves the table with what it
 * weighed, and once as many have gone as remain, the model is rebuilt from
 * the remaining ones, so that it never outgrows the aggregator. A stack
 * evicted for the budget leaves its samples to its process's stack (a
 * "[truncated]" row, as in batch outputs): counted there once, in every
 * counting mode, never lost nor counted twice.
 *
 * Error convention: negative errno; topview__new() returns NULL + errno.
 */
#ifndef SFBPF_TOPVIEW_H
#define SFBPF_TOPVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aggregator;
struct symbolizer;
struct ksyms;
struct session;

enum topview_counts {
	TOPVIEW_DECAY = 0,
	TOPVIEW_CUMULATIVE,
	TOPVIEW_INTERVAL,
	TOPVIEW_COUNTS__COUNT,
};

enum topview_group {
	TOPVIEW_GROUP_PID = 0, /* one row per (PID, thread name, function) */
	TOPVIEW_GROUP_COMM, /* one row per (thread name, function) */
	TOPVIEW_GROUP_NONE, /* one row per function, all processes together */
	TOPVIEW_GROUP__COUNT,
};

/* In the order of the table's columns: < and > step through them. */
enum topview_sort {
	TOPVIEW_SORT_SELF = 0,
	TOPVIEW_SORT_TOTAL,
	TOPVIEW_SORT_SAMPLES,
	TOPVIEW_SORT__COUNT,
};

#define TOPVIEW_DEFAULT_DECAY 0.875

struct topview_opts {
	enum topview_counts counts;
	enum topview_group group;
	double decay; /* factor per update in TOPVIEW_DECAY mode; 0: the default */
	bool weight; /* Self/Total sum sample weights (off-CPU: µs), not samples */
};

/* A function: what a frame symbolizes to. */
struct topview_sym {
	const char *name; /* symbol, "[MODULE]" or "[unknown]" */
	const char *module; /* "libc.so.6", "[kernel.kallsyms]", "[ext4]", "[unknown]"... */
	bool kernel;
	/* A runtime's frame (module "python", "java"; name is its label): qualname, file base name.
	 */
	const char *py_function, *py_file;
};

struct topview_row {
	uint32_t id;
	uint32_t pid; /* 0 unless grouped by PID */
	const char *comm; /* "-" when grouped by nothing */
	const struct topview_sym *sym;
	double self, total; /* in the counting mode */
	uint64_t samples; /* leaf samples since the last zeroing */
};

struct topview_totals {
	double weight; /* every sample, in the counting mode: the 100% */
	uint64_t samples; /* since the last zeroing */
	uint64_t stacks; /* distinct stacks known */
	uint32_t rows, syms;
	uint64_t addrs; /* (process, address) pairs symbolized and remembered */
	uint64_t rebuilds; /* times the model was rebuilt from the stacks left */
};

/* What the table shows; NULL/0 fields filter nothing. */
struct topview_filter {
	const int *pids; /* rows of these PIDs only (grouped by PID) */
	int nr_pids;
	const char *search; /* symbol names containing this, ignoring case */
	bool hide_kernel, hide_user;
};

struct topview;

struct topview *topview__new(const struct topview_opts *opts, struct symbolizer *sym,
			     const struct ksyms *ks);
void topview__free(struct topview *tv);

/* Folds in what a counted since the last update (decaying or zeroing first). */
int topview__update(struct topview *tv, const struct aggregator *a);
/* Forgets every count (the stacks stay known and symbolized). */
void topview__zero(struct topview *tv);
/* Counting mode from now on; counts so far are kept as they are. */
void topview__set_counts(struct topview *tv, enum topview_counts counts);
/* Regroups the rows: recounted from the stacks' current weights. */
int topview__set_group(struct topview *tv, enum topview_group group);
enum topview_group topview__group(const struct topview *tv);
void topview__totals(const struct topview *tv, struct topview_totals *out);

/*
 * Rows passing f (NULL: all), sorted by key, largest first (ties: the other
 * keys, then names). In decaying mode rows decayed below half a sample are
 * left out, as perf top drops them. *rows stays valid until the next
 * topview__select(), __update(), __zero() or __set_group(). Returns how many,
 * or a negative errno.
 */
int topview__select(struct topview *tv, enum topview_sort key, const struct topview_filter *f,
		    const struct topview_row *const **rows);
/* Row by id, or NULL (e.g. after a regrouping). */
const struct topview_row *topview__row(const struct topview *tv, uint32_t id);

enum topview_dir {
	TOPVIEW_CALLERS, /* from the function towards the stacks' roots */
	TOPVIEW_CALLEES, /* from the function towards the leaves */
};

/* One line of a tree, in display order (depth-first, heaviest first). */
struct topview_node {
	const struct topview_sym *sym; /* a "[truncated]" node ends a lost root */
	double weight; /* in the counting mode, like Total */
	int depth; /* 1: the function's direct callers or callees */
};

/*
 * Callers or callees of row id over the stacks that contain it, merged into a
 * tree. Recursion: callees start at the outermost occurrence of the function,
 * callers at the innermost, so every sample counts once and the depth-1 nodes
 * sum to the row's Total (less the samples that end there). Frames hidden by
 * f's hide_kernel/hide_user are skipped. Nodes lighter than min_share of the
 * row's Total are pruned; at most max_nodes are returned (0: no limit).
 * *nodes stays valid until the next topview__tree(). Returns how many, or a
 * negative errno (-ENOENT: no such row).
 */
int topview__tree(struct topview *tv, uint32_t id, enum topview_dir dir,
		  const struct topview_filter *f, double min_share, size_t max_nodes,
		  const struct topview_node **nodes);

/* The header's figures, from a session's counters. */
struct topview_status {
	double time; /* clock__mono_s() when read */
	uint64_t received, emitted, drops, invalid;
	uint64_t user_stacks; /* emitted stacks that had a user part to unwind */
	uint64_t outermost; /* of those, unwound to their outermost frame */
	int top_stop; /* most frequent other stop reason, or -1 */
	uint64_t top_stop_count;
	uint32_t processes, objects, objects_without_table;
	uint64_t table_bytes, table_budget; /* used, and what the table maps hold */
	uint32_t objects_pending, objects_no_budget; /* tables loading / without room */
	uint64_t samples_no_budget; /* samples with a frame in an object without room */
	uint64_t map_bytes; /* all our BPF maps' memory (session_stats.map_bytes) */
};
/*
 * "12.3 MiB of 48.0 MiB", plus ", 3 loading" and ", 2 over budget (1234
 * samples)" when there are any: the tables part of the headers.
 */
void topview_status__tables(const struct topview_status *st, char *buf, size_t size);

void topview_status__read(struct session *s, struct topview_status *out);
/* Samples per second between two readings (0 when no time passed). */
double topview_status__rate(const struct topview_status *prev, const struct topview_status *now);
/*
 * "97.5%", plus the main other stop reason when under 99% ("0.0% [fp_chain
 * 100%]"), or "n/a" without user stacks: the share of user stacks unwound to
 * their outermost frame since start.
 */
void topview_status__unwound(const struct topview_status *st, char *buf, size_t size);
/* "620 B", "12.3 KiB", "4.0 MiB"... */
void topview_format_bytes(uint64_t bytes, char *buf, size_t size);

/* Short names: "decay", "cumulative", "interval"; "pid", "comm", "none"; "self"... */
const char *topview_counts_name(enum topview_counts c);
const char *topview_group_name(enum topview_group g);
const char *topview_sort_name(enum topview_sort k);
/* Inverse of the above: the enum value, or -1. */
int topview_counts_parse(const char *s);
int topview_group_parse(const char *s);
int topview_sort_parse(const char *s);

#endif /* SFBPF_TOPVIEW_H */
