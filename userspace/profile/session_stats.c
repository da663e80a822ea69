// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's counters (see session.h): gathered from both BPF programs, the
 * table loader, the process tracker and the lifecycle, and printed as
 * "sfbpf: stat NAME VALUE" lines (the names scripts parse: see README and
 * docs/DESIGN-lifecycle.md).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/session_int.h"
#include "symbols/srcline.h"
#include "util/clock.h"
#include "util/glibc.h"
#include "util/vec.h"

/* Resident memory of this process (second field of /proc/self/statm, in pages). */
static uint64_t rss_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	uint64_t rss = 0;

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) == 2)
			rss = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
	return rss;
}

/* The "map_id:" and "memlock:" lines of a descriptor's fdinfo; false if either is missing. */
static bool map_fdinfo(int fdinfo_dir, const char *fd, uint32_t *id, uint64_t *memlock)
{
	int dfd = openat(fdinfo_dir, fd, O_RDONLY | O_CLOEXEC);
	bool has_id = false, has_mem = false;
	unsigned long long v;
	char line[128];
	FILE *f;

	if (dfd < 0)
		return false;
	f = fdopen(dfd, "re");
	if (!f) {
		close(dfd);
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "map_id: %llu", &v) == 1) {
			*id = (uint32_t)v;
			has_id = true;
		} else if (sscanf(line, "memlock: %llu", &v) == 1) {
			*memlock = v;
			has_mem = true;
		}
	}
	fclose(f);
	return has_id && has_mem;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * BPF map memory charged for the maps this process holds: the kernel's
 * "memlock:" figure of each map behind a descriptor, once per map (libbpf and
 * the table loader may hold one map through several descriptors). Every map
 * counts, those of the programs' objects and those made at run time alike,
 * as long as a descriptor holds it. 0 if /proc is not readable.
 */
static uint64_t map_bytes(void)
{
	struct {
		uint32_t id;
		uint64_t memlock;
	} *maps = NULL;
	size_t n = 0, cap = 0, i;
	uint64_t total = 0;
	uint32_t id = 0;
	uint64_t mem = 0;
	int fd_dir, info_dir;
	struct dirent *de;
	char target[32];
	ssize_t len;
	DIR *d;

	fd_dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	info_dir = open("/proc/self/fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd_dir >= 0 && info_dir >= 0 ? fdopendir(fd_dir) : NULL;
	if (!d) {
		if (fd_dir >= 0)
			close(fd_dir);
		if (info_dir >= 0)
			close(info_dir);
		return 0;
	}
	while ((de = readdir(d))) {
		len = readlinkat(fd_dir, de->d_name, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strcmp(target, "anon_inode:bpf-map") ||
		    !map_fdinfo(info_dir, de->d_name, &id, &mem))
			continue;
		if (VEC_RESERVE(maps, cap, n + 1, 64))
			break;
		maps[n].id = id;
		maps[n++].memlock = mem;
	}
	closedir(d);
	close(info_dir);
	/* id first in the element: sorted by id, duplicates are neighbours. */
	if (n)
		qsort(maps, n, sizeof(*maps), cmp_u32);
	for (i = 0; i < n; i++)
		if (!i || maps[i].id != maps[i - 1].id)
			total += maps[i].memlock;
	free(maps);
	return total;
}

void session__stats(struct session *s, struct session_stats *out)
{
	struct sfbpf_offcpu_stats off;
	int i;

	memset(out, 0, sizeof(*out));
	if (s->prof)
		profile__stats(s->prof, out->bpf);
	if (s->off && !offcpu__stats(s->off, &off)) {
		for (i = 0; i < SFBPF_STAT__COUNT; i++)
			out->bpf[i] += off.unwind.v[i];
		memcpy(out->offcpu, off.v, sizeof(out->offcpu));
	}
	memcpy(out->state_ns, s->state_ns, sizeof(out->state_ns));
	out->oncpu_ns = s->oncpu_ns;
	out->oncpu_samples = s->oncpu_samples;
	out->at_end = s->at_end;
	if (s->attach_ns)
		out->window_ns = (s->end_ns ? s->end_ns : clock__mono_ns()) - s->attach_ns;
	out->received = s->received;
	if (s->tables)
		tables__stats(s->tables, &out->tables);
	if (s->table_cache)
		tablecache__stats(s->table_cache, &out->table_cache);
	if (s->procs)
		proctrack__stats(s->procs, &out->procs);
	if (s->lc)
		lifecycle__stats(s->lc, &out->lifecycle);
	if (s->runtimes)
		runtimes__stats(s->runtimes, &out->runtimes);
	frame_names__stats(&out->frame_names);
	out->forgotten = s->forgotten;
	out->kept = s->kept_processes;
	if (s->agg) {
		aggregator__totals(s->agg, &out->stacks);
		out->stack_bytes = aggregator__bytes(s->agg);
	}
	if (s->sym)
		symbolizer__stats(s->sym, &out->sym);
	out->rss_bytes = rss_bytes();
	glibc_heap(&out->heap_in_use_bytes, &out->heap_free_bytes);
	out->map_bytes = map_bytes();
}

/* Where the counters go: a stat line each, or another consumer (metrics). */
struct emitter {
	session_stat_cb cb;
	void *ctx;
};

static void emit(struct emitter *e, const char *prefix, const char *name, unsigned long long v,
		 bool gauge)
{
	char buf[64];
	size_t i;

	snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '-')
			buf[i] = '_';
	e->cb(e->ctx, buf, v, gauge);
}

/* A count that only grows, and a level that goes up and down. */
static void print_counter(struct emitter *e, const char *prefix, const char *name,
			  unsigned long long v)
{
	emit(e, prefix, name, v, false);
}

static void print_gauge(struct emitter *e, const char *prefix, const char *name,
			unsigned long long v)
{
	emit(e, prefix, name, v, true);
}

/* Unwinding counters of both programs, stacks complete or truncated, per stop reason. */
static void print_unwinding(struct emitter *f, const struct session_stats *st)
{
	static const char *const names[SFBPF_STAT_STOP_BASE] = {
		[SFBPF_STAT_SAMPLES] = "samples",     [SFBPF_STAT_EMITTED] = "emitted",
		[SFBPF_STAT_RB_DROPS] = "drops",      [SFBPF_STAT_FRAMES] = "frames",
		[SFBPF_STAT_FP_FRAMES] = "fp_frames",
	};
	const __u64 *stop = st->bpf + SFBPF_STAT_STOP_BASE;
	uint64_t truncated = 0;
	int i;

	for (i = 0; i < SFBPF_STAT_STOP_BASE; i++)
		print_counter(f, "", names[i], st->bpf[i]);
	for (i = 0; i < SFBPF_STOP__COUNT; i++) {
		print_counter(f, "stop.", profile__stop_name(i), stop[i]);
		if (aggr_stop_truncated(i))
			truncated += stop[i];
	}
	print_counter(f, "", "stacks_complete", stop[SFBPF_STOP_OUTERMOST]);
	print_counter(f, "", "stacks_truncated", truncated);
	for (i = SFBPF_STAT_STOP_BASE + SFBPF_STOP__COUNT; i < SFBPF_STAT__COUNT; i++)
		print_counter(f, "", profile__stat_name(i), st->bpf[i]);
}

/* The runtimes' processes and frames (runtimes.h), beside the BPF walk's py-* and hs-* counters. */
static void print_runtimes(struct emitter *f, const struct session_stats *st)
{
	const struct runtimes_stats *r = &st->runtimes;

	for (size_t i = 0; i < r->nr; i++) {
		if (r->c[i].gauge)
			print_gauge(f, "", r->c[i].name, r->c[i].value);
		else
			print_counter(f, "", r->c[i].name, r->c[i].value);
	}
	/* The names table's budget (frame_names.h: every runtime's), as the others' below. */
	print_gauge(f, "", "py_names", st->frame_names.entries);
	print_gauge(f, "", "py_names_functions", st->frame_names.functions);
	print_gauge(f, "", "py_names_bytes", st->frame_names.bytes);
	print_gauge(f, "", "py_names_budget_bytes", st->frame_names.budget);
	print_counter(f, "", "py_names_evicted", st->frame_names.evicted);
	print_counter(f, "", "py_names_refused", st->frame_names.refused);
	print_counter(f, "", "py_names_collections", st->frame_names.collections);
}

static void print_tables(struct emitter *f, struct session *s, const struct session_stats *st)
{
	const struct tables_stats *ts = &st->tables;

	print_gauge(f, "", "objects", ts->objects);
	print_gauge(f, "", "objects_without_table", ts->objects_without_table);
	print_counter(f, "", "objects_rejected", ts->objects_rejected);
	print_gauge(f, "", "rows", ts->rows_used);
	print_gauge(f, "", "table_bytes", ts->table_bytes);
	/* Tables loaded since the start, by source: counters (a week's churn adds millions). */
	print_counter(f, "", "sframe_bytes", ts->sframe_bytes);
	print_counter(f, "", "objects_sframe", ts->objects_sframe);
	print_counter(f, "", "rows_sframe", ts->rows_sframe);
	print_counter(f, "", "objects_eh_frame", ts->objects_eh_frame);
	print_counter(f, "", "rows_eh_frame", ts->rows_eh_frame);
	print_counter(f, "", "load_us", ts->load_ns / 1000);
	print_counter(f, "", "push_us", ts->push_ns / 1000);
	print_gauge(f, "", "max_load_us", ts->max_load_ns / 1000);
	print_counter(f, "", "loads", ts->loads);
	print_counter(f, "", "load_busy", ts->load_busy);
	print_gauge(f, "", "max_rows_object", ts->max_rows_object);
	print_counter(f, "", "tables_hurried", ts->hurried);
	print_counter(f, "", "partial_tables", ts->partial_tables);
	print_counter(f, "", "partial_rows", ts->partial_rows);
	print_counter(f, "", "partial_pcs", ts->partial_pcs);
	print_counter(f, "", "partial_shared", ts->partial_shared);
	print_counter(f, "", "partial_lookups", ts->partial_lookups);
	print_counter(f, "", "split_builds", ts->split_builds);
	print_counter(f, "", "split_chunks", ts->split_chunks);
	print_counter(f, "", "split_chunks_helped", ts->split_chunks_helped);
	print_gauge(f, "", "pages", ts->pages_used);
	print_gauge(f, "", "rules", ts->rules_used);
	print_gauge(f, "", "table_budget_bytes", s->table_budget);
	print_gauge(f, "", "table_map_bytes", ts->map_bytes);
	print_gauge(f, "", "rows_capacity", ts->rows_capacity);
	print_gauge(f, "", "pages_capacity", ts->pages_capacity);
	print_gauge(f, "", "objects_pending", ts->objects_pending);
	print_counter(f, "", "objects_no_budget", ts->objects_no_budget);
	print_gauge(f, "", "objects_lingering", ts->objects_lingering);
	print_counter(f, "", "objects_over_budget", ts->objects_over_budget);
	print_counter(f, "", "evictions", ts->evictions);
	print_counter(f, "", "promotions", ts->promotions);
	print_counter(f, "", "aged_out", ts->aged_out);
	print_counter(f, "", "objects_shared_same_bytes", ts->shared_same_bytes);
	print_counter(f, "", "objects_same_id_other_bytes", ts->same_id_other_bytes);
	print_counter(f, "", "objects_same_id_unverified", ts->same_id_unverified);
	print_counter(f, "", "objects_same_id_alias_cap", ts->same_id_alias_cap);
}

/* The tables kept across restarts (tables/tablecache.h); all 0 with --no-table-cache. */
static void print_table_cache(struct emitter *f, const struct session_stats *st)
{
	const struct tablecache_stats *cs = &st->table_cache;

	print_counter(f, "", "table_cache_hits", cs->hits);
	print_counter(f, "", "table_cache_misses", cs->misses);
	print_counter(f, "", "table_cache_stored", cs->stored);
	print_counter(f, "", "table_cache_store_failed", cs->store_failed);
	print_counter(f, "", "table_cache_evicted", cs->evicted);
	print_counter(f, "", "table_cache_refused_corrupt", cs->refused_corrupt);
	print_counter(f, "", "table_cache_refused_foreign", cs->refused_foreign);
	print_counter(f, "", "table_cache_refused_version", cs->refused_version);
	print_gauge(f, "", "table_cache_refused_dir", cs->refused_dir);
	print_gauge(f, "", "table_cache_read_only", cs->read_only);
	print_gauge(f, "", "table_cache_bytes", cs->bytes);
	print_gauge(f, "", "table_cache_budget_bytes", cs->max_bytes);
	print_counter(f, "", "table_cache_ident_noted", cs->ident.noted);
	print_counter(f, "", "table_cache_ident_not_noted", cs->ident.not_noted);
	print_counter(f, "", "table_cache_ident_hits", cs->ident.hits);
	print_counter(f, "", "table_cache_ident_refused", cs->ident.refused);
	print_counter(f, "", "table_cache_preloaded", st->tables.preloaded);
	print_counter(f, "", "table_cache_preload_used", st->tables.preload_used);
}

static void print_lifecycle(struct emitter *f, const struct session_stats *st)
{
	const struct proctrack_stats *ps = &st->procs;
	const struct lifecycle_stats *ls = &st->lifecycle;

	print_gauge(f, "", "procs_bytes", (uint64_t)ps->procs * sizeof(struct sfbpf_proc));
	print_gauge(f, "", "mappings", ps->mappings);
	print_gauge(f, "", "mappings_with_table", ps->mappings_with_table);
	print_counter(f, "", "mappings_dropped", ps->mappings_dropped);
	print_counter(f, "", "mappings_deferred", ps->deferred);
	print_counter(f, "", "mappings_replaced", ps->mappings_replaced);
	print_counter(f, "", "stack_scans", ps->stack_scans);
	print_counter(f, "", "stack_scan_pcs", ps->stack_scan_pcs);
	print_counter(f, "", "proc_refreshes", ps->refreshes);
	print_counter(f, "", "proc_adopted", ps->adopted);
	print_counter(f, "", "proc_adopt_withdrawn", ps->adopt_withdrawn);
	print_counter(f, "", "proc_update_failed", ps->update_failed);
	print_counter(f, "lifecycle.", "exec", ls->exec_events);
	print_counter(f, "lifecycle.", "exit", ls->exit_events);
	print_counter(f, "lifecycle.", "fork", ls->fork_events);
	print_counter(f, "lifecycle.", "fork_gone", ls->fork_gone);
	print_counter(f, "lifecycle.", "no_proc", ls->no_proc_events);
	print_counter(f, "lifecycle.", "no_mapping", ls->no_mapping_events);
	print_counter(f, "lifecycle.", "refreshes", ls->refreshes);
	print_counter(f, "lifecycle.", "unchanged", ls->unchanged);
	print_counter(f, "lifecycle.", "gone", ls->gone);
	print_counter(f, "lifecycle.", "failed", ls->failed);
	print_counter(f, "lifecycle.", "incomplete", ls->incomplete);
	print_counter(f, "lifecycle.", "young", ls->young);
	print_counter(f, "lifecycle.", "queue_drops", ls->queue_drops);
	print_counter(f, "lifecycle.", "swept", ls->swept);
	print_gauge(f, "lifecycle.", "queued", ls->queued);
	print_counter(f, "", "exited_forgotten", st->forgotten);
	print_counter(f, "", "exited_kept", st->kept);
	print_gauge(f, "", "rss_bytes", st->rss_bytes);
	print_gauge(f, "", "heap_in_use_bytes", st->heap_in_use_bytes);
	print_gauge(f, "", "heap_free_bytes", st->heap_free_bytes);
	print_gauge(f, "", "map_bytes", st->map_bytes);
}

/* Userspace memory against its budgets (session_budgets): levels, and what they cost. */
static void print_budgets(struct emitter *f, struct session *s, const struct session_stats *st)
{
	const struct symcache_stats *o = &st->sym.objs;
	const struct perfmap_pool *j = &st->sym.jit;

	print_gauge(f, "", "stack_samples", st->stacks.samples); /* since the last reset */
	print_gauge(f, "", "stacks", st->stacks.stacks);
	print_gauge(f, "", "stack_bytes", st->stack_bytes);
	print_gauge(f, "", "stack_budget_bytes", s->budgets.stacks);
	print_counter(f, "", "stacks_evicted", st->stacks.evicted);
	print_counter(f, "", "stacks_dropped", st->stacks.dropped);
	print_counter(f, "", "samples_folded", st->stacks.folded);
	print_counter(f, "", "samples_refused", st->stacks.refused);
	print_gauge(f, "", "symbol_objects", o->objects);
	print_gauge(f, "", "symbol_objects_cold", o->cold);
	print_gauge(f, "", "symbol_objects_retired", o->retired);
	print_gauge(f, "", "symbol_cold_bytes", o->cold_bytes);
	print_gauge(f, "", "symbol_budget_bytes", o->budget);
	print_gauge(f, "", "symbol_lines_bytes", o->lines_bytes);
	print_counter(f, "", "symbol_lines_forgotten", o->lines_forgotten);
	print_counter(f, "", "symbol_objects_evicted", o->evicted);
	print_counter(f, "", "symbol_objects_replaced", o->replaced);
	print_gauge(f, "", "symbol_objects_pending", o->pending);
	print_counter(f, "", "symbol_objects_deferred", o->deferred);
	print_counter(f, "", "symbol_objects_changed_unread", o->changed_unread);
	print_gauge(f, "", "symbol_paths", st->sym.strings);
	print_counter(f, "", "symbol_paths_swept", st->sym.strings_swept);
	print_counter(f, "", "symbol_kernel_named", st->sym.kernel_named);
	print_gauge(f, "", "dwarf_fds", o->dwarf_fds);
	print_gauge(f, "", "dwarf_fds_budget", o->dwarf_budget);
	print_counter(f, "", "dwarf_refused", o->dwarf_refused);
	print_gauge(f, "", "jit_map_bytes", j->bytes);
	print_gauge(f, "", "jit_map_budget_bytes", j->budget);
	print_counter(f, "", "jit_map_reads", j->reads);
	print_counter(f, "", "jit_map_tail_reads", j->tail_reads);
	print_counter(f, "", "jit_map_refused", j->refused);
	print_counter(f, "", "jit_map_evicted", j->evicted);
}

/* Container paths kept for the labels (cgroups.h): ids and heap bytes, within its cap. */
static void print_cgroups(struct emitter *f, const struct session *s)
{
	uint64_t ids, bytes;

	if (!s->cgroups)
		return;
	cgroups__cache_stats(s->cgroups, &ids, &bytes);
	print_gauge(f, "", "cgroup_paths", ids);
	print_gauge(f, "", "cgroup_paths_max", CGROUPS_KEPT_MAX);
	print_gauge(f, "", "cgroup_path_bytes", bytes);
}

/* Source lines (DWARF): what compressed debug sections were refused, and the spill. */
static void print_srclines(struct emitter *f)
{
	struct srcline_stats ss;

	srcline__stats(&ss);
	print_counter(f, "srcline.", "refused_ratio", ss.refused_ratio);
	print_counter(f, "srcline.", "refused_size", ss.refused_size);
	print_counter(f, "srcline.", "refused_memory", ss.refused_memory);
	print_counter(f, "srcline.", "spill_full", ss.spill_full);
	print_counter(f, "srcline.", "tenant_copies", ss.tenant_copies);
	print_gauge(f, "srcline.", "spill_bytes", ss.spilled_bytes);
	print_gauge(f, "srcline.", "spill_budget_bytes", ss.spill_budget);
}

static void print_line(void *ctx, const char *name, uint64_t v, bool gauge)
{
	(void)gauge;
	fprintf(ctx, "sfbpf: stat %s %llu\n", name, (unsigned long long)v);
}

void session__print_stats(struct session *s, FILE *f)
{
	session__for_each_stat(s, print_line, f);
}

void session__for_each_stat(struct session *s, session_stat_cb cb, void *ctx)
{
	struct emitter e = { cb, ctx }, *f = &e;
	struct session_stats st;
	int i;

	session__stats(s, &st);
	print_unwinding(f, &st);
	print_runtimes(f, &st);
	print_counter(f, "", "received", st.received);
	print_gauge(f, "", "processes", st.procs.procs);
	print_gauge(f, "", "symbol_processes", st.sym.procs);
	print_tables(f, s, &st);
	print_table_cache(f, &st);
	print_lifecycle(f, &st);
	print_budgets(f, s, &st);
	print_srclines(f);
	print_cgroups(f, s);
	if (!s->off)
		return;
	for (i = 0; i < SFBPF_OFFCPU_STAT__COUNT; i++)
		print_counter(f, "offcpu.", offcpu__stat_name(i), st.offcpu[i]);
	print_gauge(f, "offcpu.", "at_end", st.at_end);
	for (i = 0; i < SFBPF_STATE__COUNT; i++)
		print_counter(f, "offcpu_ns.", offcpu__state_name(i), st.state_ns[i]);
	if (s->cpu) {
		print_counter(f, "", "oncpu_ns", st.oncpu_ns);
		print_counter(f, "", "oncpu_samples", st.oncpu_samples);
	}
	print_counter(f, "", "window_ns", st.window_ns);
}

void session__print_offcpu_summary(struct session *s, FILE *f)
{
	struct session_stats st;
	uint64_t total;
	int i;

	if (!s->off)
		return;
	session__stats(s, &st);
	total = st.oncpu_ns;
	for (i = 0; i < SFBPF_STATE__COUNT; i++)
		total += st.state_ns[i];
	fprintf(f, "sfbpf: %s time over %.3f s, by thread state:\n",
		s->cpu ? "on- and off-CPU" : "off-CPU", st.window_ns / 1e9);
	if (s->cpu)
		fprintf(f, "  %-9s %12.3f s %5.1f%%\n", "on-CPU", st.oncpu_ns / 1e9,
			total ? 100.0 * st.oncpu_ns / total : 0.0);
	for (i = 0; i < SFBPF_STATE__COUNT; i++)
		fprintf(f, "  %-9s %12.3f s %5.1f%%\n", offcpu__state_name(i), st.state_ns[i] / 1e9,
			total ? 100.0 * st.state_ns[i] / total : 0.0);
	if (st.offcpu[SFBPF_OFFCPU_STAT_MAP_FULL])
		fprintf(f, "sfbpf: %llu off-CPU periods lost: too many threads blocked at once\n",
			(unsigned long long)st.offcpu[SFBPF_OFFCPU_STAT_MAP_FULL]);
	if (st.bpf[SFBPF_STAT_RB_DROPS])
		fprintf(f,
			"sfbpf: %llu samples lost: the ring buffer was full (a busy system: "
			"narrow with -p, -m or --state)\n",
			(unsigned long long)st.bpf[SFBPF_STAT_RB_DROPS]);
}
