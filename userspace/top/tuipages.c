// SPDX-License-Identifier: GPL-2.0-or-later
/* The live view's full-screen pages and its clipped printw (see tuipages.h). */
#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/session.h"
#include "top/srcview.h"
#include "top/topview.h"
#include "top/tuipages.h"

#define COUNTER_WIDTH 38 /* "lifecycle.no_mapping 123456789012" fits */

void tui_put(const char *fmt, ...)
{
	char buf[1024];
	int y, x;
	va_list ap;

	getyx(stdscr, y, x);
	(void)y;
	if (x >= COLS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	addnstr(buf, COLS - x);
}

static const char *const help_text[] = {
	"sfbpf-top keys",
	"",
	"  q             quit (Ctrl-C too)",
	"  h ?           this help; any key closes it",
	"  i             the counters (as --stats prints them), in pages; PgDn PgUp turn",
	"  a             the selected function's source lines and their samples (DWARF)",
	"  Up Down       move the selection; PgUp PgDn: a page; Home End: first, last",
	"  Enter         expand or collapse the selected function's callers and callees",
	"  Esc           collapse the expanded function",
	"  s             sort by the next column: Self% -> Total% -> Samples -> Self%",
	"  < >           sort by the column left / right of the sorted one (wraps around)",
	"  p             show only these PIDs (comma-separated, empty: all; groups by PID)",
	"  /             show only symbols containing a text, ignoring case (empty: all)",
	"  K             hide / show kernel functions [k]",
	"  U             hide / show user functions [.]",
	"  g             group rows by PID, by command, or all processes together",
	"  c             counts: decaying (x 7/8 per refresh), cumulative, per interval",
	"  z             zero the counts",
	"  P             pause / resume the display (sampling goes on)",
	"  Ctrl-L        redraw the screen",
	"",
	"Self%    samples in the function itself, of all samples",
	"Total%   samples with the function anywhere on the stack (its children too)",
	"Samples  samples in the function itself since start or z (never decayed)",
	"[k] kernel function, [.] user function; [MODULE]: no symbol in that object",
	"Header: unwound = user stacks unwound to their outermost frame [main other",
	"        stop reason]; drops = samples lost in a full ring buffer",
	NULL,
};

void tuipages__help(void)
{
	int i;

	erase();
	for (i = 0; help_text[i] && i < LINES; i++) {
		if (i == 0)
			attron(A_BOLD);
		tui_mvput(i, 0, "%s", help_text[i]);
		attroff(A_BOLD);
	}
	refresh();
}

/*
 * The --stats lines, laid out column by column: the same names scripts
 * parse, so what the screen shows can be looked up in DESIGN-lifecycle.md.
 * There are more of them than a screen holds (224 with a JVM's), so they
 * come in pages; *page is clamped to the last one, whose number is returned.
 */
int tuipages__counters(struct session *s, int *page)
{
	char *text = NULL, *line, *save = NULL, name[64];
	unsigned long long v;
	size_t size = 0;
	int rows = LINES - 3 > 1 ? LINES - 3 : 1, cols = COLS / COUNTER_WIDTH, n = 0, per, pages;
	FILE *f = open_memstream(&text, &size);

	erase();
	if (!f) {
		tui_mvput(0, 0, "sfbpf-top counters: (out of memory)");
		refresh();
		return 1;
	}
	session__print_stats(s, f);
	fclose(f);
	for (line = text; (line = strstr(line, "sfbpf: stat ")); line++)
		n++;
	per = rows * (cols > 0 ? cols : 1);
	pages = n ? (n + per - 1) / per : 1;
	if (*page >= pages)
		*page = pages - 1;
	if (*page < 0)
		*page = 0;
	attron(A_BOLD);
	tui_mvput(0, 0, "sfbpf-top counters since start (--stats), page %d of %d", *page + 1,
		  pages);
	attroff(A_BOLD);
	tui_mvput(LINES - 1, 0,
		  "PgDn Down Space: next page; PgUp Up: previous; any other key closes");
	n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int i;

		if (sscanf(line, "sfbpf: stat %63s %llu", name, &v) != 2)
			continue;
		i = n++ - *page * per;
		if (i < 0)
			continue;
		if (i >= per)
			break;
		tui_mvput(2 + i % rows, (i / rows) * COUNTER_WIDTH, "%-24s %12llu", name, v);
	}
	free(text);
	refresh();
	return pages;
}

static struct srcview source;

/* The samples of the n-th hottest line: lines below it are left out when they do not fit. */
static uint64_t nth_hottest(const struct srcview *v, size_t n)
{
	uint64_t *c = malloc(v->nr_lines * sizeof(*c)), min = 0;
	size_t i, j;

	if (!c)
		return 0;
	for (i = 0; i < v->nr_lines; i++) {
		uint64_t x = v->lines[i].samples;

		/* Insertion sort, largest first: n is a screenful. */
		for (j = i; j > 0 && c[j - 1] < x; j--)
			c[j] = c[j - 1];
		c[j] = x;
	}
	if (n && n <= v->nr_lines)
		min = c[n - 1];
	free(c);
	return min;
}

/* The function's name: a Python frame's label without its line, which is one of many. */
static const char *function_title(const struct srcview_query *q, char *buf, size_t size)
{
	const char *open = strrchr(q->name, '('), *colon = strrchr(q->name, ':');

	if (!q->py_function || !open || !colon || colon < open)
		return q->name;
	snprintf(buf, size, "%.*s)", (int)(colon - q->name), q->name);
	return buf;
}

void tuipages__source(struct session *s, const struct topview_row *row)
{
	struct srcview_query q = { 0 };
	char title[512];
	const char *file = NULL;
	uint64_t min = 0;
	int y = 2, room = LINES - 3;
	size_t i;

	erase();
	attron(A_BOLD);
	if (!row || row->sym->kernel) {
		tui_mvput(0, 0, "Source lines: select a user function first; any key closes");
		attroff(A_BOLD);
		refresh();
		return;
	}
	q = (struct srcview_query){ .name = row->sym->name,
				    .module = row->sym->module,
				    .pid = row->pid,
				    .comm = row->comm,
				    .py_function = row->sym->py_function,
				    .py_file = row->sym->py_file };
	if (srcview__collect(&source, session__aggregator(s), session__symbolizer(s), &q)) {
		attroff(A_BOLD);
		tui_mvput(2, 0, "(out of memory)");
		refresh();
		return;
	}
	tui_mvput(0, 0, "%s (%s): %llu own samples by source line; any key closes",
		  function_title(&q, title, sizeof(title)), q.module,
		  (unsigned long long)source.samples);
	attroff(A_BOLD);
	if (!source.nr_lines) {
		tui_mvput(2, 2, "(no samples of its own yet)");
		refresh();
		return;
	}
	/* A file heading before each file's lines takes rows too: count them. */
	if ((int)source.nr_lines * 2 > room)
		min = nth_hottest(&source, room / 2 > 0 ? room / 2 : 1);
	attron(A_DIM);
	tui_mvput(1, 0, "%9s %7s %6s  %s", "SAMPLES", "SHARE", "LINE", "SOURCE");
	attroff(A_DIM);
	for (i = 0; i < source.nr_lines && y < LINES - 1; i++) {
		const struct srcview_line *l = &source.lines[i];
		const char *text;

		if (l->samples < min)
			continue;
		if (!l->file) {
			tui_mvput(y++, 0, "%9llu %6.1f%%         (no source line: no DWARF here)",
				  (unsigned long long)l->samples,
				  100.0 * l->samples / (source.samples ? source.samples : 1));
			continue;
		}
		if (l->file != file) {
			file = l->file;
			attron(A_BOLD);
			tui_mvput(y++, 0, "%s", file);
			attroff(A_BOLD);
			if (y >= LINES - 1)
				break;
		}
		text = srcview__text(l->pid, l->file, l->line);
		tui_mvput(y, 0, "%9llu %6.1f%% %6u  ", (unsigned long long)l->samples,
			  100.0 * l->samples / (source.samples ? source.samples : 1), l->line);
		tui_put("%s", text ? text : "");
		if (l->function && strcmp(l->function, q.name)) {
			attron(A_DIM);
			tui_put("  [%s]", l->function);
			attroff(A_DIM);
		}
		y++;
	}
	refresh();
}

void tuipages__free(void)
{
	srcview__free(&source);
	srcview__free_text();
}
