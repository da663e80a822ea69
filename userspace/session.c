// SPDX-License-Identifier: GPL-2.0-or-later
/* Profiling session (see session.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session.h"

#define PID_BITMAP_BITS (1u << 22) /* pid_max upper bound */

double session_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool test_and_set(uint8_t *bitmap, uint32_t pid)
{
	uint32_t i = pid % PID_BITMAP_BITS;
	bool was = bitmap[i / 8] & (1u << (i % 8));

	bitmap[i / 8] |= 1u << (i % 8);
	return was;
}

static int on_sample(void *ctx, const struct sfbpf_sample *smp, size_t size)
{
	struct session *s = ctx;

	s->received++;
	/* Snapshot the mappings now: the process may be gone when we symbolize. */
	if (!test_and_set(s->seen, smp->pid))
		symbolizer__note_pid(s->sym, smp->pid);
	/* System-wide: a process that started after us gets its tables once. */
	if (smp->stop == SFBPF_STOP_NO_PROC && !s->opts.nr_pids && !test_and_set(s->tried, smp->pid))
		proctrack__refresh(s->procs, smp->pid);
	return aggregator__add_raw(s->agg, smp, size);
}

static int open_bpf(struct session *s)
{
	struct profile_opts opts = {
		.max_frames = s->opts.max_frames,
		.user_stacks = s->opts.user_stacks,
		.kernel_stacks = s->opts.kernel_stacks,
		.filter_pids = s->opts.nr_pids > 0,
		.skip_idle = true,
		.verbose = s->opts.verbose > 1 ? s->opts.verbose - 1 : 0,
		.on_sample = on_sample,
		.ctx = s,
	};

	s->prof = profile__new(&opts);
	if (!s->prof) {
		fprintf(stderr, "sfbpf: cannot load the BPF program: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static int open_tables(struct session *s)
{
	struct tables_opts topts = {
		.rows_fd = profile__rows_fd(s->prof),
		.rules_fd = profile__rules_fd(s->prof),
		.objects_fd = profile__objects_fd(s->prof),
		.pages_fd = profile__pages_fd(s->prof),
		.max_rows = PROFILE_DEFAULT_ROWS,
		.max_rules = PROFILE_DEFAULT_RULES,
		.max_objects = PROFILE_DEFAULT_OBJECTS,
		.max_pages = PROFILE_DEFAULT_PAGES,
		.verbose = s->opts.verbose,
	};

	s->tables = tables__new(&topts);
	s->procs = s->tables ? proctrack__new(s->tables, profile__procs_fd(s->prof)) : NULL;
	return s->procs ? 0 : -ENOMEM;
}

/* Tables for the targets, before sampling starts, so the first samples unwind. */
static int load_targets(struct session *s)
{
	int i, err, fd = profile__target_pids_fd(s->prof);
	__u8 one = 1;

	if (!s->opts.user_stacks)
		goto filter;
	if (!s->opts.nr_pids) {
		err = proctrack__scan(s->procs);
		if (s->opts.verbose)
			fprintf(stderr, "sfbpf: loaded tables for %d processes\n", err);
	}
	for (i = 0; i < s->opts.nr_pids; i++) {
		err = proctrack__refresh(s->procs, s->opts.pids[i]);
		if (err == -ESRCH || err == -ENOENT) {
			fprintf(stderr, "sfbpf: no process with PID %d\n", s->opts.pids[i]);
			return -ESRCH;
		}
	}
filter:
	for (i = 0; i < s->opts.nr_pids; i++) {
		__u32 pid = s->opts.pids[i];

		err = bpf_map_update_elem(fd, &pid, &one, BPF_ANY);
		if (err) {
			fprintf(stderr, "sfbpf: cannot filter PID %u: %s\n", pid, strerror(-err));
			return err;
		}
	}
	return 0;
}

int session__open(struct session *s, const struct session_opts *opts)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->opts = *opts;
	s->start_time = session_now();
	s->agg = aggregator__new();
	s->sym = symbolizer__new();
	s->ksyms = ksyms__new(); /* NULL is fine: kernel frames stay addresses */
	s->seen = calloc(PID_BITMAP_BITS / 8, 1);
	s->tried = calloc(PID_BITMAP_BITS / 8, 1);
	if (!s->agg || !s->sym || !s->seen || !s->tried) {
		fprintf(stderr, "sfbpf: out of memory\n");
		return -ENOMEM;
	}
	err = open_bpf(s);
	if (!err)
		err = open_tables(s);
	if (!err)
		err = load_targets(s);
	if (!err) {
		err = profile__attach(s->prof, s->opts.freq);
		if (err)
			fprintf(stderr, "sfbpf: cannot attach to the CPUs: %s\n", strerror(-err));
	}
	s->attach_time = session_now();
	return err;
}

int session__poll(struct session *s, int timeout_ms)
{
	return profile__poll(s->prof, timeout_ms);
}

void session__stop(struct session *s)
{
	if (s->prof)
		profile__poll(s->prof, 0);
}

void session__close(struct session *s)
{
	proctrack__free(s->procs);
	tables__free(s->tables);
	profile__free(s->prof);
	aggregator__free(s->agg);
	symbolizer__free(s->sym);
	ksyms__free(s->ksyms);
	free(s->seen);
	free(s->tried);
	memset(s, 0, sizeof(*s));
}

void session__stats(struct session *s, struct session_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (s->prof)
		profile__stats(s->prof, out->bpf);
	out->received = s->received;
	if (s->tables)
		tables__stats(s->tables, &out->tables);
	if (s->procs)
		proctrack__stats(s->procs, &out->procs);
}

static void print_counter(FILE *f, const char *prefix, const char *name, unsigned long long v)
{
	char buf[64];
	size_t i;

	snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '-')
			buf[i] = '_';
	fprintf(f, "sfbpf: stat %s %llu\n", buf, v);
}

void session__print_stats(struct session *s, FILE *f)
{
	static const char *const names[SFBPF_STAT_STOP_BASE] = {
		[SFBPF_STAT_SAMPLES] = "samples", [SFBPF_STAT_EMITTED] = "emitted",
		[SFBPF_STAT_RB_DROPS] = "drops",   [SFBPF_STAT_FRAMES] = "frames",
		[SFBPF_STAT_FP_FRAMES] = "fp_frames",
	};
	struct session_stats st;
	const struct tables_stats *ts = &st.tables;
	int i;

	session__stats(s, &st);
	for (i = 0; i < SFBPF_STAT_STOP_BASE; i++)
		print_counter(f, "", names[i], st.bpf[i]);
	for (i = 0; i < SFBPF_STOP__COUNT; i++)
		print_counter(f, "stop.", profile__stop_name(i), st.bpf[SFBPF_STAT_STOP_BASE + i]);
	print_counter(f, "", "received", st.received);
	print_counter(f, "", "processes", st.procs.procs);
	print_counter(f, "", "objects", ts->objects);
	print_counter(f, "", "objects_without_table", ts->objects_without_table);
	print_counter(f, "", "objects_rejected", ts->objects_rejected);
	print_counter(f, "", "rows", ts->rows_used);
	print_counter(f, "", "table_bytes",
		      ts->rows_used * sizeof(struct sfbpf_row) +
			      ts->rules_used * sizeof(struct sfbpf_rule) +
			      ts->pages_used * sizeof(__u32));
	print_counter(f, "", "sframe_bytes", ts->sframe_bytes);
	print_counter(f, "", "objects_sframe", ts->objects_sframe);
	print_counter(f, "", "rows_sframe", ts->rows_sframe);
	print_counter(f, "", "objects_eh_frame", ts->objects_eh_frame);
	print_counter(f, "", "rows_eh_frame", ts->rows_eh_frame);
	print_counter(f, "", "load_us", ts->load_ns / 1000);
}
