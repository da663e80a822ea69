// SPDX-License-Identifier: GPL-2.0-or-later
/* What the front ends read of a session (see session.h). */
#include "profile/session_int.h"
#include "profile/snapshot.h"

struct snapshot *session__snapshot(struct session *s)
{
	return snapshot__new_kept(s->agg, s->sym, s->ksyms, s->kept);
}

struct aggregator *session__aggregator(struct session *s)
{
	return s->agg;
}

struct symbolizer *session__symbolizer(struct session *s)
{
	return s->sym;
}

const struct ksyms *session__ksyms(const struct session *s)
{
	return s->ksyms;
}

const struct session_opts *session__opts(const struct session *s)
{
	return &s->opts;
}

const struct session_budgets *session__budgets(const struct session *s)
{
	return &s->budgets;
}

bool session__weighted(const struct session *s)
{
	return s->opts.off_cpu || s->opts.on_off;
}

double session__attach_time(const struct session *s)
{
	return s->attach_time;
}

bool session__stopped(const struct session *s)
{
	return s->stopped;
}

bool session__has_cgroups(const struct session *s)
{
	return s->cgroups != NULL;
}
