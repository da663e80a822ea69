/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sfbpf-top's batch mode: the top of the function table as plain text, once
 * per interval, for logs and pipes. Each table is a header line, a column
 * line and up to opts.rows rows, then an empty line, flushed at once:
 *
 *   2025-11-21 20:15:03  198 samples (198.0/s, 99 Hz x 2 CPUs)  unwound ...
 *     SELF%  TOTAL%  SAMPLES      PID COMMAND          SHARED OBJECT        SYMBOL
 *     98.99  100.00      196     1234 chain.pie        chain.pie            [.] hot
 *
 * Fields are separated by spaces; COMMAND is 16 columns wide (a command
 * name can hold spaces), SYMBOL is last and runs to the end of the line.
 */
#ifndef SFBPF_BATCH_H
#define SFBPF_BATCH_H

#include <signal.h>
#include <stdio.h>

#include "top/topview.h"

struct session;

struct batch_opts {
	double interval; /* seconds between tables */
	double duration; /* seconds in all; 0: until *stop */
	int rows; /* per table; 0: every row */
	enum topview_counts counts; /* TOPVIEW_INTERVAL: each table covers its interval */
	enum topview_sort sort;
	enum topview_group group;
	unsigned long freq; /* for the header */
	bool stats; /* session__print_stats() to stderr after every table */
	/*
	 * With interval counts: drop each table's stacks once it is printed
	 * (aggregated stacks, the view, exited processes' mappings), so that
	 * memory follows one interval's stacks, not the run's. Not when an output
	 * file wants the whole run.
	 */
	bool forget;
	const volatile sig_atomic_t *stop; /* set by a signal handler */
};

/*
 * Polls s and prints a table every interval until the duration is over or
 * *stop is set, then one last table if samples arrived since the previous
 * one. Returns 0, or a negative errno (-EPIPE: the reader went away).
 */
int batch__run(struct session *s, const struct batch_opts *opts, FILE *out);

/* One table from tv as it stands, with the header figures now vs prev. */
int batch__print(FILE *out, struct topview *tv, const struct batch_opts *opts,
		 const struct topview_status *prev, const struct topview_status *now);

#endif /* SFBPF_BATCH_H */
