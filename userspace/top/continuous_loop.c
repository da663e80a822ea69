// SPDX-License-Identifier: GPL-2.0-or-later
/* Continuous mode's interval loop (see continuous_loop.h). */
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include "output/continuous.h"
#include "profile/aggregate.h"
#include "profile/session.h"
#include "profile/snapshot.h"
#include "symbols/symbolize.h"
#include "top/continuous_loop.h"
#include "util/clock.h"
#include "util/log.h"

#define POLL_MS 100 /* longest wait in the ring buffer: bounds a profile's lateness */
#define NSEC 1000000000LL

/* The end of the interval holding now: the next multiple of the interval. */
static int64_t next_boundary(const struct continuous_opts *o, int64_t now_ns)
{
	int64_t len = (int64_t)o->interval * NSEC;

	return (now_ns / len + 1) * len;
}

/* Interval [start_ns, end_ns) to the outputs, then a fresh aggregator. */
static void interval(struct continuous *c, struct session *s, int64_t start_ns, int64_t end_ns)
{
	/* The profile and the OTLP request from one snapshot: each frame named once. */
	struct snapshot *snap = session__snapshot(s);
	struct aggr_totals t;

	aggregator__totals(session__aggregator(s), &t);
	continuous__emit(c, snap, t.samples, start_ns, end_ns);
	snapshot__free(snap);
	aggregator__reset(session__aggregator(s));
	/*
	 * No stack refers to an exited process any more: its mappings, and the
	 * symbol objects and DWARF they hold, can go (as batch and the live view
	 * do at each table), not only after SESSION_MAX_EXITED later exits.
	 */
	session__forget_exited(s);
	/* The next profile is an interval away: the DWARF its lines took can go. */
	if (session__symbolizer(s))
		symbolizer__release_lines(session__symbolizer(s), UINT64_MAX);
	malloc_trim(0);
}

static int loop(struct continuous *c, struct session *s, const struct continuous_opts *o)
{
	double end = o->duration > 0 ? clock__mono_s() + o->duration : 0;
	int64_t start = clock__wall_ns(), next = next_boundary(o, start), now, len;
	struct aggr_totals t;
	int wait_ms, err = 0;

	len = (int64_t)o->interval * NSEC;
	while (!err && !*o->exiting && !(end && clock__mono_s() >= end)) {
		if (o->reopen && *o->reopen) {
			*o->reopen = 0;
			continuous__reopen(c);
		}
		now = clock__wall_ns();
		/* The clock was set back: realign rather than wait out the step. */
		if (next - now > len)
			next = next_boundary(o, now);
		if (now >= next) {
			interval(c, s, start, next);
			start = next;
			/* Fell behind (a long write, a clock step forward): skip, do not burst. */
			next = next + len > now ? next + len : next_boundary(o, now);
			continue;
		}
		continuous__serve_metrics(c);
		wait_ms = (next - now) / 1000000 + 1;
		if (end && (end - clock__mono_s()) * 1000 < wait_ms)
			wait_ms = (int)((end - clock__mono_s()) * 1000) + 1;
		err = session__poll(s, wait_ms < POLL_MS ? wait_ms : POLL_MS);
		if (err == -EINTR || err > 0)
			err = 0;
		if (err)
			pr_warn("cannot read samples: %s", strerror(-err));
	}
	/* The interval in progress: what arrived until now, the ring buffer drained. */
	session__stop(s);
	now = clock__wall_ns();
	aggregator__totals(session__aggregator(s), &t);
	if (t.samples)
		interval(c, s, start, now);
	return err;
}

int continuous__run(struct session *s, const struct continuous_opts *o)
{
	struct continuous *c;
	int err = continuous__open(&c, s, o);

	if (err)
		return err;
	err = loop(c, s, o);
	continuous__close(c);
	return err;
}
