/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sfbpf-top's live view (ncurses): a header with the profiler's vital signs
 * and a table of functions (Self %, Total %, Samples, PID, Command, Shared
 * Object, Symbol) refreshed every interval from a topview, with keys to sort,
 * filter, expand a function's callers and callees, pause and zero. The
 * session is polled between refreshes and keystrokes: sampling never waits
 * for the screen. docs/sfbpf-top.8 describes the keys.
 */
#ifndef SFBPF_TUI_H
#define SFBPF_TUI_H

#include <signal.h>
#include <stdbool.h>

#include "top/topview.h"

struct session;

struct tui_opts {
	double interval; /* seconds between refreshes */
	double duration; /* 0: until q or *stop */
	enum topview_counts counts;
	enum topview_sort sort;
	enum topview_group group;
	unsigned long freq; /* for the header */
	bool system_wide;
	/*
	 * Nothing at exit wants the whole run (no output file): the view keeps
	 * the stacks of the last TUI_WINDOW refreshes only (see tui.c).
	 */
	bool window;
	/*
	 * --metrics: "[ADDR:]PORT" to serve the session's counters on while the
	 * view runs (metrics.h), as the service does; NULL: none.
	 */
	const char *metrics_addr;
	const volatile sig_atomic_t *stop; /* set by a signal handler */
};

#define TUI_WINDOW 40

/*
 * Runs the view on the terminal (stdin/stdout) until q, *stop or the
 * duration; the terminal is restored on return. Messages written to stderr
 * meanwhile are shown on the status line and replayed on stderr at the end.
 * Returns 0 or a negative errno (-ENOTTY: no usable terminal).
 */
int tui__run(struct session *s, const struct tui_opts *opts);

#endif /* SFBPF_TUI_H */
