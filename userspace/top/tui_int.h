/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live view's state, shared by its loop, model and keys (tui.c) and the
 * drawing of its main screen (tuidraw.c): the screen is drawn from this
 * state alone, and only tui.c changes it.
 */
#ifndef SFBPF_TUI_INT_H
#define SFBPF_TUI_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "top/topview.h"
#include "top/tui.h"

#define MAX_PIDS 32
#define TOP_LINES 3 /* two lines of figures, then the column titles */

enum { PAIR_HOT = 1, PAIR_WARM, PAIR_TITLE, PAIR_KERNEL };

enum line_kind { LINE_ROW, LINE_TITLE, LINE_NODE };

struct line {
	enum line_kind kind;
	int row; /* LINE_ROW: index in rows */
	const char *title; /* LINE_TITLE: "callers", "callees" */
	const struct topview_node *node; /* LINE_NODE */
};

struct nodes {
	struct topview_node *v; /* a copy: topview reuses its buffer */
	int n;
	size_t cap;
};

struct tui {
	struct session *s;
	const struct tui_opts *o;
	struct topview *tv;
	struct metrics *metrics; /* --metrics; NULL: none */
	enum topview_counts counts;
	enum topview_sort sort;
	struct topview_filter filter;
	int pids[MAX_PIDS];
	char search[128];

	struct topview_status prev, now;
	double rate;
	const struct topview_row *const *rows;
	int nr_rows;
	int sel; /* selected row */
	uint32_t sel_id;
	bool follow; /* after a move, the selection follows its function */
	bool expanded;
	uint32_t expanded_id;
	int top; /* first body line on screen */
	bool reveal; /* scroll the expanded tree into view at the next draw */
	struct nodes callers, callees;
	struct line *lines;
	int nr_lines;
	size_t lines_cap;

	/* The aggregator's sample count at each of the last TUI_WINDOW refreshes (a ring). */
	uint64_t marks[TUI_WINDOW];
	unsigned refreshes;

	bool paused, help, counters, source, quit;
	int counters_page, counters_pages; /* which screenful of the counters, of how many */
	int prompt; /* 0, 'p' or '/' */
	char input[128];
	char message[192];
	double message_until;
	double next_refresh;

	FILE *errlog; /* stderr while the screen is ours */
	int saved_stderr;
	long errlog_seen;
};

/* The body's height on the screen now (lines between the titles and the status line). */
int tuidraw__body_height(void);
/*
 * Draws t's screen: the figures, the column titles, the window of body lines
 * from t->top (moved first to show the selection or the expanded tree), the
 * status line; or the page asked for (help, counters, source).
 */
void tuidraw__draw(struct tui *t);

#endif /* SFBPF_TUI_INT_H */
