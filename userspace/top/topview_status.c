// SPDX-License-Identifier: GPL-2.0-or-later
/* The live view's and batch tables' header figures, and the option names (see topview.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "profile/aggregate.h"
#include "profile/session.h"
#include "top/topview.h"
#include "util/clock.h"

/* ---- header figures ---- */

void topview_status__read(struct session *s, struct topview_status *o)
{
	const __u64 *stop;
	struct session_stats st;
	struct aggr_totals t;
	const struct tables_stats *ts = &st.tables;
	uint64_t all = 0;
	int i;

	memset(o, 0, sizeof(*o));
	session__stats(s, &st);
	stop = st.bpf + SFBPF_STAT_STOP_BASE;
	o->time = clock__mono_s();
	o->received = st.received;
	o->emitted = st.bpf[SFBPF_STAT_EMITTED];
	o->drops = st.bpf[SFBPF_STAT_RB_DROPS];
	if (session__aggregator(s)) {
		aggregator__totals(session__aggregator(s), &t);
		o->invalid = t.invalid;
	}
	o->top_stop = -1;
	for (i = 0; i < SFBPF_STOP__COUNT; i++) {
		all += stop[i];
		if (i == SFBPF_STOP_OUTERMOST || aggr_stop_no_user(i) || !stop[i] ||
		    stop[i] <= o->top_stop_count)
			continue;
		o->top_stop = i;
		o->top_stop_count = stop[i];
	}
	/* Kernel threads (-K) and execve's samples have no user stack: not unwinding failures. */
	o->user_stacks = all - stop[SFBPF_STOP_KERNEL_ONLY] - stop[SFBPF_STOP_EXECVE];
	o->outermost = stop[SFBPF_STOP_OUTERMOST];
	o->processes = st.procs.procs;
	o->objects = ts->objects;
	o->objects_without_table = ts->objects_without_table;
	o->table_bytes = ts->table_bytes;
	o->table_budget = ts->budget_bytes;
	o->objects_pending = ts->objects_pending;
	o->objects_no_budget = ts->objects_no_budget;
	o->samples_no_budget = st.bpf[SFBPF_STAT_NO_BUDGET];
	o->map_bytes = st.map_bytes;
}

void topview_status__tables(const struct topview_status *st, char *buf, size_t size)
{
	char used[32], budget[32];
	int n;

	topview_format_bytes(st->table_bytes, used, sizeof(used));
	topview_format_bytes(st->table_budget, budget, sizeof(budget));
	n = snprintf(buf, size, "%s of %s", used, budget);
	if (st->objects_pending && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, ", %u loading", st->objects_pending);
	/* Budget trouble must be visible: those stacks fall back to frame pointers. */
	if ((st->objects_no_budget || st->samples_no_budget) && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - n, ", %u over budget (%" PRIu64 " samples)",
			 st->objects_no_budget, st->samples_no_budget);
}

double topview_status__rate(const struct topview_status *prev, const struct topview_status *now)
{
	double dt = now->time - prev->time;

	return dt > 0 ? (double)(now->received - prev->received) / dt : 0;
}

void topview_status__unwound(const struct topview_status *st, char *buf, size_t size)
{
	double share;

	if (!st->user_stacks) {
		snprintf(buf, size, "n/a");
		return;
	}
	share = 100.0 * (double)st->outermost / (double)st->user_stacks;
	if (share >= 99 || st->top_stop < 0)
		snprintf(buf, size, "%.1f%%", share);
	else
		snprintf(buf, size, "%.1f%% [%s %.0f%%]", share, profile__stop_name(st->top_stop),
			 100.0 * (double)st->top_stop_count / (double)st->user_stacks);
}

void topview_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* ---- names ---- */

static const char *const counts_names[TOPVIEW_COUNTS__COUNT] = { "decay", "cumulative",
								 "interval" };
static const char *const group_names[TOPVIEW_GROUP__COUNT] = { "pid", "comm", "none" };
static const char *const sort_names[TOPVIEW_SORT__COUNT] = { "self", "total", "samples" };

static const char *name_of(const char *const *names, int n, int v)
{
	return v >= 0 && v < n ? names[v] : "?";
}

static int parse_name(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

const char *topview_counts_name(enum topview_counts c)
{
	return name_of(counts_names, TOPVIEW_COUNTS__COUNT, c);
}

const char *topview_group_name(enum topview_group g)
{
	return name_of(group_names, TOPVIEW_GROUP__COUNT, g);
}

const char *topview_sort_name(enum topview_sort k)
{
	return name_of(sort_names, TOPVIEW_SORT__COUNT, k);
}

int topview_counts_parse(const char *s)
{
	return parse_name(counts_names, TOPVIEW_COUNTS__COUNT, s);
}

int topview_group_parse(const char *s)
{
	return parse_name(group_names, TOPVIEW_GROUP__COUNT, s);
}

int topview_sort_parse(const char *s)
{
	return parse_name(sort_names, TOPVIEW_SORT__COUNT, s);
}
