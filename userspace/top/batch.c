// SPDX-License-Identifier: GPL-2.0-or-later
/* sfbpf-top's batch mode (see batch.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "top/batch.h"
#include "profile/session.h"
#include "top/topview.h"
#include "util/clock.h"

#define POLL_MS 100 /* longest wait in the ring buffer: bounds the lateness of a table */

static void print_header(FILE *out, const struct batch_opts *o, const struct topview_status *prev,
			 const struct topview_status *now)
{
	char when[32], unwound[64], tables[128], maps[32];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	topview_status__unwound(now, unwound, sizeof(unwound));
	topview_status__tables(now, tables, sizeof(tables));
	topview_format_bytes(now->map_bytes, maps, sizeof(maps));
	fprintf(out,
		"%s  %" PRIu64 " samples (%.1f/s, %lu Hz x %ld CPUs)  unwound %s  drops %" PRIu64
		"  processes %u  objects %u  tables %s  maps %s\n",
		when, now->received - prev->received, topview_status__rate(prev, now), o->freq,
		sysconf(_SC_NPROCESSORS_ONLN), unwound, now->drops, now->processes, now->objects,
		tables, maps);
}

static void print_row(FILE *out, const struct topview_row *r, double all)
{
	char pid[16] = "-";

	if (r->pid)
		snprintf(pid, sizeof(pid), "%" PRIu32, r->pid);
	fprintf(out, "%7.2f %7.2f %8" PRIu64 " %8s %-16s %-20s %s %s\n", 100 * r->self / all,
		100 * r->total / all, r->samples, pid, r->comm, r->sym->module,
		r->sym->kernel ? "[k]" : "[.]", r->sym->name);
}

int batch__print(FILE *out, struct topview *tv, const struct batch_opts *o,
		 const struct topview_status *prev, const struct topview_status *now)
{
	const struct topview_row *const *rows;
	struct topview_totals t;
	int n, i;

	n = topview__select(tv, o->sort, NULL, &rows);
	if (n < 0)
		return n;
	topview__totals(tv, &t);
	print_header(out, o, prev, now);
	fprintf(out, "%7s %7s %8s %8s %-16s %-20s %s\n", "SELF%", "TOTAL%", "SAMPLES", "PID",
		"COMMAND", "SHARED OBJECT", "SYMBOL");
	for (i = 0; i < n && (!o->rows || i < o->rows); i++)
		print_row(out, rows[i], t.weight > 0 ? t.weight : 1);
	fputc('\n', out);
	if (fflush(out) || ferror(out))
		return errno == EPIPE ? -EPIPE : -EIO;
	return 0;
}

/*
 * A new view and empty aggregated stacks for the next table: on a box where
 * processes come and go, every interval brings new stacks and new rows.
 */
static int forget(struct session *s, const struct topview_opts *topts, struct topview **tv)
{
	topview__free(*tv);
	aggregator__reset(session__aggregator(s));
	session__forget_exited(s);
	*tv = topview__new(topts, session__symbolizer(s), session__ksyms(s));
	return *tv ? 0 : -errno;
}

/* One table: fold in what arrived, print, and remember the figures. */
static int table(struct session *s, struct topview *tv, const struct batch_opts *o, FILE *out,
		 struct topview_status *prev)
{
	struct topview_status now;
	int err;

	topview_status__read(s, &now);
	err = topview__update(tv, session__aggregator(s));
	if (!err)
		err = batch__print(out, tv, o, prev, &now);
	if (!err && o->stats && !session__stopped(s)) /* the last ones: at exit, by the caller */
		session__print_stats(s, stderr);
	*prev = now;
	return err;
}

int batch__run(struct session *s, const struct batch_opts *o, FILE *out)
{
	struct topview_opts topts = { .counts = o->counts,
				      .group = o->group,
				      /* off-CPU: rows are µs of blocked time */
				      .weight = session__weighted(s) };
	struct topview *tv = topview__new(&topts, session__symbolizer(s), session__ksyms(s));
	double start = clock__mono_s(), next = start + o->interval, now, wait;
	double end = o->duration > 0 ? start + o->duration : 0;
	struct topview_status prev, last;
	int err = 0;

	if (!tv)
		return -errno;
	topview_status__read(s, &prev);
	while (!*o->stop && !err) {
		now = clock__mono_s();
		if (end && now >= end)
			break;
		if (now >= next) {
			err = table(s, tv, o, out, &prev);
			if (!err && o->forget && o->counts == TOPVIEW_INTERVAL)
				err = forget(s, &topts, &tv);
			/* Fell behind (a slow pipe): skip ahead rather than burst. */
			next = next + o->interval > now ? next + o->interval : now + o->interval;
			continue;
		}
		wait = (end && end < next ? end : next) - now;
		err = session__poll(s, wait * 1000 < POLL_MS ? (int)(wait * 1000) + 1 : POLL_MS);
		if (err == -EINTR || err > 0)
			err = 0;
	}
	if (!err) {
		session__stop(s);
		topview_status__read(s, &last);
		if (last.received > prev.received)
			err = table(s, tv, o, out, &prev);
	}
	topview__free(tv);
	return err;
}
