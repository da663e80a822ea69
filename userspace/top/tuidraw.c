// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The live view's main screen, drawn from its state (tui_int.h): figures,
 * column titles, rows with their share bars, the expanded row's trees and
 * the status line. Nothing here changes the model.
 */
#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "profile/session.h"
#include "top/topview.h"
#include "top/tui_int.h"
#include "top/tuipages.h"
#include "util/clock.h"

#define put tui_put
#define mvput tui_mvput

struct layout {
	int comm, dso; /* column widths; 0: not shown */
};

static struct layout layout_for(int cols)
{
	struct layout l = { 15, 20 };

	if (cols < 100)
		l.dso = 14;
	if (cols < 80)
		l.comm = 0;
	return l;
}

int tuidraw__body_height(void)
{
	return LINES - TOP_LINES - 1 > 1 ? LINES - TOP_LINES - 1 : 1;
}

static void draw_header(struct tui *t)
{
	char unwound[64], tables[128], filt[192] = "";
	int len = 0, i;

	topview_status__unwound(&t->now, unwound, sizeof(unwound));
	topview_status__tables(&t->now, tables, sizeof(tables));
	attron(A_BOLD);
	mvput(0, 0, "sfbpf-top");
	attroff(A_BOLD);
	put("  %lu Hz x %ld CPUs%s  %.0f samples/s  unwound %s  drops %" PRIu64 "%s", t->o->freq,
	    sysconf(_SC_NPROCESSORS_ONLN), t->o->system_wide ? " system-wide" : "", t->rate,
	    unwound, t->now.drops, t->paused ? "   " : "");
	if (t->paused) {
		attron(A_REVERSE | A_BOLD);
		put(" PAUSED ");
		attroff(A_REVERSE | A_BOLD);
	}
	for (i = 0; i < t->filter.nr_pids; i++)
		len += snprintf(filt + len, sizeof(filt) - len, "%s%d", i ? "," : "  pid ",
				t->pids[i]);
	if (t->filter.search)
		len += snprintf(filt + len, sizeof(filt) - len, "  /%s", t->search);
	if (t->filter.hide_kernel || t->filter.hide_user)
		snprintf(filt + len, sizeof(filt) - len, "  hiding %s%s",
			 t->filter.hide_kernel ? "[k]" : "", t->filter.hide_user ? "[.]" : "");
	mvput(1, 0,
	      "processes %u  objects %u (+%u without table)  tables %s  counts %s  "
	      "sort %s  group %s%s",
	      t->now.processes, t->now.objects, t->now.objects_without_table, tables,
	      topview_counts_name(t->counts), topview_sort_name(t->sort),
	      topview_group_name(topview__group(t->tv)), filt);
}

static void title_cell(struct tui *t, int sort, const char *fmt, const char *text)
{
	if (sort == (int)t->sort)
		attron(A_BOLD | A_UNDERLINE);
	put(fmt, text);
	if (sort == (int)t->sort)
		attroff(A_BOLD | A_UNDERLINE);
	put(" ");
}

static void draw_titles(struct tui *t, const struct layout *l)
{
	move(TOP_LINES - 1, 0);
	attron(COLOR_PAIR(PAIR_TITLE));
	title_cell(t, TOPVIEW_SORT_SELF, "%7s", "Self%");
	title_cell(t, TOPVIEW_SORT_TOTAL, "%7s", "Total%");
	title_cell(t, TOPVIEW_SORT_SAMPLES, "%8s", "Samples");
	put("%7s ", "PID");
	if (l->comm)
		put("%-*s ", l->comm, "Command");
	put("%-*s %s", l->dso, "Shared Object", "Symbol");
	chgat(-1, A_NORMAL, PAIR_TITLE, NULL);
	attroff(COLOR_PAIR(PAIR_TITLE));
}

static void pct(double share, attr_t base)
{
	int pair = share >= 5 ? PAIR_HOT : share >= 0.5 ? PAIR_WARM : 0;

	attron(COLOR_PAIR(pair));
	put("%6.2f%%", share);
	attroff(COLOR_PAIR(pair));
	attron(base);
	put(" ");
}

static void draw_row(struct tui *t, int y, const struct topview_row *r, const struct layout *l,
		     double all, bool selected)
{
	attr_t base = selected ? A_REVERSE : A_NORMAL;
	char pid[16] = "-";

	if (r->pid)
		snprintf(pid, sizeof(pid), "%" PRIu32, r->pid);
	move(y, 0);
	attron(base);
	pct(100 * r->self / all, base);
	pct(100 * r->total / all, base);
	put("%8" PRIu64 " %7s ", r->samples, pid);
	if (l->comm)
		put("%-*.*s ", l->comm, l->comm, r->comm);
	put("%-*.*s ", l->dso, l->dso, r->sym->module);
	if (r->sym->kernel)
		attron(COLOR_PAIR(PAIR_KERNEL));
	put("%s ", r->sym->kernel ? "[k]" : "[.]");
	attroff(COLOR_PAIR(PAIR_KERNEL));
	attron(base);
	put("%s", r->sym->name);
	if (selected)
		chgat(-1, A_REVERSE, 0, NULL);
	attroff(base);
	(void)t;
}

static void draw_line(struct tui *t, int y, const struct line *ln, const struct layout *l,
		      double all)
{
	const struct topview_row *r;
	const struct topview_node *n = ln->node;

	switch (ln->kind) {
	case LINE_ROW:
		draw_row(t, y, t->rows[ln->row], l, all, ln->row == t->sel);
		break;
	case LINE_TITLE:
		r = topview__row(t->tv, t->expanded_id);
		attron(A_BOLD);
		mvput(y, 4, "%s of %s:", ln->title, r ? r->sym->name : "?");
		attroff(A_BOLD);
		break;
	case LINE_NODE:
		mvput(y, 4 + 2 * n->depth, "%6.2f%%  %s", 100 * n->weight / all, n->sym->name);
		attron(A_DIM);
		put("  %s%s", n->sym->kernel ? "[k] " : "", n->sym->module);
		attroff(A_DIM);
		break;
	}
}

/* Index of the selected row's line (rows come in order, trees after theirs). */
static int sel_line(const struct tui *t)
{
	int i;

	for (i = 0; i < t->nr_lines; i++)
		if (t->lines[i].kind == LINE_ROW && t->lines[i].row == t->sel)
			return i;
	return 0;
}

/* Scrolls so that the selection, and after Enter as much of its tree, is visible. */
static void scroll_to_selection(struct tui *t)
{
	int h = tuidraw__body_height(), s = sel_line(t), end = s;

	if (t->reveal) {
		while (end + 1 < t->nr_lines && t->lines[end + 1].kind != LINE_ROW)
			end++;
		if (end >= t->top + h)
			t->top = end - h + 1 > s ? s : end - h + 1;
		t->reveal = false;
	}
	if (s < t->top)
		t->top = s;
	if (s >= t->top + h)
		t->top = s - h + 1;
	if (t->top > t->nr_lines - h)
		t->top = t->nr_lines - h;
	if (t->top < 0)
		t->top = 0;
}

static void draw_status(struct tui *t)
{
	static const char prompt_pid[] = "Show PIDs (comma-separated; empty: all): ";
	static const char prompt_sym[] = "Show symbols containing (empty: all): ";

	move(LINES - 1, 0);
	clrtoeol();
	if (t->prompt) {
		put("%s%s", t->prompt == 'p' ? prompt_pid : prompt_sym, t->input);
		curs_set(1);
		return;
	}
	curs_set(0);
	if (t->message[0] && clock__mono_s() < t->message_until) {
		attron(A_BOLD);
		put("%s", t->message);
		attroff(A_BOLD);
		return;
	}
	attron(A_DIM);
	put("q quit  h help  i counters  a source  Enter callers/callees  s < > sort  p pid  / search  "
	    "K U hide  g group  c counts  z zero  P pause");
	attroff(A_DIM);
}

void tuidraw__draw(struct tui *t)
{
	struct layout l = layout_for(COLS);
	struct topview_totals tot;
	int i, y, h = tuidraw__body_height();

	if (t->help) {
		tuipages__help();
		return;
	}
	if (t->counters) {
		t->counters_pages = tuipages__counters(t->s, &t->counters_page);
		return;
	}
	if (t->source) {
		tuipages__source(t->s, t->nr_rows ? t->rows[t->sel] : NULL);
		return;
	}
	topview__totals(t->tv, &tot);
	erase();
	draw_header(t);
	draw_titles(t, &l);
	scroll_to_selection(t);
	for (i = t->top, y = TOP_LINES; i < t->nr_lines && y < TOP_LINES + h; i++, y++)
		draw_line(t, y, &t->lines[i], &l, tot.weight > 0 ? tot.weight : 1);
	if (!t->nr_lines)
		mvput(TOP_LINES, 2,
		      tot.samples || t->filter.nr_pids || t->filter.search ?
			      "(no function matches)" :
			      "(waiting for samples)");
	draw_status(t);
	refresh();
}
