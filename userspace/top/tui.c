// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sfbpf-top's live view (see tui.h). One loop: poll the session (at most
 * POLL_MS at a time), read every pending key, refresh the model when the
 * interval is up, redraw when something changed. The screen is rebuilt from
 * the model each time: a list of body lines (rows, and the expanded row's
 * caller/callee trees) of which a window is shown.
 */
#include <curses.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/session.h"
#include "top/topview.h"
#include "top/tui.h"
#include "top/tuipages.h"
#include "util/clock.h"

#define POLL_MS 50 /* longest wait for samples: bounds the key latency */
#define MAX_PIDS 32
#define TREE_MIN_SHARE 0.005 /* tree nodes under 0.5% of the function's Total: pruned */
#define TREE_MAX_NODES 300
#define TOP_LINES 3 /* two lines of figures, then the column titles */
#define MESSAGE_SECS 4
#define KEY_ESC 27
#define CTRL(c) ((c)&0x1f)

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
	int prompt; /* 0, 'p' or '/' */
	char input[128];
	char message[192];
	double message_until;
	double next_refresh;

	FILE *errlog; /* stderr while the screen is ours */
	int saved_stderr;
	long errlog_seen;
};

static void message(struct tui *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->message, sizeof(t->message), fmt, ap);
	va_end(ap);
	t->message_until = clock__mono_s() + MESSAGE_SECS;
}

/* ---- stderr: kept off the screen, shown on the status line, replayed at exit ---- */

static void capture_stderr(struct tui *t)
{
	fflush(stderr);
	t->saved_stderr = -1;
	t->errlog = tmpfile();
	if (!t->errlog)
		return;
	t->saved_stderr = dup(STDERR_FILENO);
	if (t->saved_stderr < 0 || dup2(fileno(t->errlog), STDERR_FILENO) < 0) {
		fclose(t->errlog);
		t->errlog = NULL;
	}
}

static void release_stderr(struct tui *t)
{
	char buf[4096];
	size_t n;

	if (!t->errlog)
		return;
	fflush(stderr);
	dup2(t->saved_stderr, STDERR_FILENO);
	close(t->saved_stderr);
	rewind(t->errlog);
	while ((n = fread(buf, 1, sizeof(buf), t->errlog)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(t->errlog);
	t->errlog = NULL;
}

/* The last line written to stderr since the previous look, as a message. */
static void check_stderr(struct tui *t)
{
	char buf[256], *nl, *last;
	struct stat st;
	long from;
	size_t n;

	fflush(stderr);
	if (!t->errlog || fstat(fileno(t->errlog), &st) || st.st_size <= t->errlog_seen)
		return;
	from = st.st_size - (long)sizeof(buf) + 1 > t->errlog_seen ?
		       st.st_size - (long)sizeof(buf) + 1 :
		       t->errlog_seen;
	n = pread(fileno(t->errlog), buf, st.st_size - from, from);
	t->errlog_seen = st.st_size;
	if (n == (size_t)-1)
		return;
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	nl = strrchr(buf, '\n');
	last = nl ? nl + 1 : buf;
	if (*last)
		message(t, "%s", last);
}

/* ---- the model ---- */

static int copy_tree(struct tui *t, enum topview_dir dir, struct nodes *out)
{
	const struct topview_node *nodes;
	int n = topview__tree(t->tv, t->expanded_id, dir, &t->filter, TREE_MIN_SHARE,
			      TREE_MAX_NODES, &nodes);
	void *p;

	out->n = 0;
	if (n <= 0)
		return n;
	if ((size_t)n > out->cap) {
		p = realloc(out->v, n * sizeof(*out->v));
		if (!p)
			return -ENOMEM;
		out->v = p;
		out->cap = n;
	}
	memcpy(out->v, nodes, n * sizeof(*nodes));
	out->n = n;
	return n;
}

static int add_line(struct tui *t, struct line l)
{
	void *p;

	if ((size_t)t->nr_lines == t->lines_cap) {
		size_t cap = t->lines_cap ? t->lines_cap * 2 : 256;

		p = realloc(t->lines, cap * sizeof(*t->lines));
		if (!p)
			return -ENOMEM;
		t->lines = p;
		t->lines_cap = cap;
	}
	t->lines[t->nr_lines++] = l;
	return 0;
}

static void add_tree_lines(struct tui *t, const char *title, const struct nodes *n)
{
	int i;

	add_line(t, (struct line){ .kind = LINE_TITLE, .title = title });
	for (i = 0; i < n->n; i++)
		add_line(t, (struct line){ .kind = LINE_NODE, .node = &n->v[i] });
}

/* Rows and trees as they stand, for the current sort and filter. */
static void select_rows(struct tui *t)
{
	int i, n = topview__select(t->tv, t->sort, &t->filter, &t->rows);

	t->nr_rows = n > 0 ? n : 0;
	if (t->follow) {
		for (i = 0; i < t->nr_rows; i++)
			if (t->rows[i]->id == t->sel_id)
				t->sel = i;
	}
	if (t->sel >= t->nr_rows)
		t->sel = t->nr_rows ? t->nr_rows - 1 : 0;
	if (t->sel < 0)
		t->sel = 0;
	if (t->nr_rows)
		t->sel_id = t->rows[t->sel]->id;
	if (t->expanded) {
		copy_tree(t, TOPVIEW_CALLERS, &t->callers);
		copy_tree(t, TOPVIEW_CALLEES, &t->callees);
	}
	t->nr_lines = 0;
	for (i = 0; i < t->nr_rows; i++) {
		add_line(t, (struct line){ .kind = LINE_ROW, .row = i });
		if (t->expanded && t->rows[i]->id == t->expanded_id) {
			add_tree_lines(t, "callers", &t->callers);
			add_tree_lines(t, "callees", &t->callees);
		}
	}
}

/*
 * The window: when nothing wants the whole run, the stacks not counted in
 * the last TUI_WINDOW refreshes leave the aggregator (and with it the table),
 * and the processes that exited meanwhile the symbolizer. By then decay has
 * taken a stack below 0.5% of what it weighed (7/8 a refresh, 40 times), as
 * perf top drops the entries its decay brought to zero. Cumulative counts
 * are since start: they keep every stack, within the aggregator's budget.
 */
static void slide_window(struct tui *t)
{
	struct aggr_totals at;
	unsigned slot = t->refreshes++ % TUI_WINDOW;
	int err;

	aggregator__totals(t->s->agg, &at);
	if (t->o->window && t->counts != TOPVIEW_CUMULATIVE) {
		err = aggregator__drop_idle(t->s->agg, t->marks[slot]);
		if (err)
			message(t, "forgetting idle stacks: %s", strerror(-err));
		session__forget_exited(t->s);
	}
	t->marks[slot] = at.samples;
}

static void refresh_model(struct tui *t)
{
	int err;

	if (!t->paused) {
		t->prev = t->now;
		topview_status__read(t->s, &t->now);
		t->rate = topview_status__rate(&t->prev, &t->now);
		err = topview__update(t->tv, t->s->agg);
		if (err)
			message(t, "updating the table: %s", strerror(-err));
		slide_window(t);
	}
	check_stderr(t);
	select_rows(t);
}

/* ---- drawing ---- */

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

static int body_height(void)
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
	int h = body_height(), s = sel_line(t), end = s;

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

static void draw(struct tui *t)
{
	struct layout l = layout_for(COLS);
	struct topview_totals tot;
	int i, y, h = body_height();

	if (t->help) {
		tuipages__help();
		return;
	}
	if (t->counters) {
		tuipages__counters(t->s);
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

/* ---- keys ---- */

static void apply_pids(struct tui *t)
{
	char *p = t->input, *end;
	long v;
	int n = 0;

	while (*p && n < MAX_PIDS) {
		v = strtol(p, &end, 10);
		if (end == p || v <= 0) {
			message(t, "not a PID list: %s", t->input);
			return;
		}
		t->pids[n++] = (int)v;
		p = end + strspn(end, ", ");
	}
	t->filter.pids = t->pids;
	t->filter.nr_pids = n;
	if (n && topview__group(t->tv) != TOPVIEW_GROUP_PID) {
		topview__set_group(t->tv, TOPVIEW_GROUP_PID);
		t->expanded = false;
		message(t, "rows grouped by PID for the PID filter");
	}
}

static void end_prompt(struct tui *t, bool apply)
{
	if (apply && t->prompt == 'p') {
		apply_pids(t);
	} else if (apply) {
		snprintf(t->search, sizeof(t->search), "%s", t->input);
		t->filter.search = t->search[0] ? t->search : NULL;
	}
	t->prompt = 0;
	t->top = 0;
}

static void prompt_key(struct tui *t, int ch)
{
	size_t n = strlen(t->input);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
		end_prompt(t, true);
	else if (ch == KEY_ESC)
		end_prompt(t, false);
	else if ((ch == KEY_BACKSPACE || ch == 127 || ch == CTRL('h')) && n)
		t->input[n - 1] = '\0';
	else if (ch == CTRL('u'))
		t->input[0] = '\0';
	else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof(t->input))
		t->input[n] = (char)ch, t->input[n + 1] = '\0';
}

static void start_prompt(struct tui *t, int which)
{
	int i, len = 0;

	t->prompt = which;
	t->input[0] = '\0';
	if (which == '/') {
		snprintf(t->input, sizeof(t->input), "%s", t->search);
		return;
	}
	for (i = 0; i < t->filter.nr_pids; i++)
		len += snprintf(t->input + len, sizeof(t->input) - len, "%s%d", i ? "," : "",
				t->pids[i]);
}

static void move_sel(struct tui *t, int to)
{
	if (to >= t->nr_rows)
		to = t->nr_rows - 1;
	t->sel = to < 0 ? 0 : to;
	if (t->nr_rows)
		t->sel_id = t->rows[t->sel]->id;
	t->follow = true;
}

static void toggle_expand(struct tui *t)
{
	if (!t->nr_rows)
		return;
	if (t->expanded && t->expanded_id == t->rows[t->sel]->id) {
		t->expanded = false;
		return;
	}
	t->expanded = true;
	t->expanded_id = t->rows[t->sel]->id;
	t->sel_id = t->expanded_id;
	t->follow = true;
	t->reveal = true;
}

static void view_key(struct tui *t, int ch)
{
	int g;

	switch (ch) {
	case 'g':
		g = (topview__group(t->tv) + 1) % TOPVIEW_GROUP__COUNT;
		topview__set_group(t->tv, g);
		t->expanded = false;
		t->follow = false;
		if (g != TOPVIEW_GROUP_PID)
			t->filter.nr_pids = 0;
		message(t, "rows per %s",
			g == TOPVIEW_GROUP_PID	? "PID and command" :
			g == TOPVIEW_GROUP_COMM ? "command" :
						  "function, all processes together");
		break;
	case 'c':
		t->counts = (t->counts + 1) % TOPVIEW_COUNTS__COUNT;
		topview__set_counts(t->tv, t->counts);
		message(t, "counts: %s",
			t->counts == TOPVIEW_DECAY	? "decaying, x 7/8 per refresh" :
			t->counts == TOPVIEW_CUMULATIVE ? "cumulative" :
							  "per refresh interval");
		break;
	case 'z':
		topview__zero(t->tv);
		message(t, "counts zeroed");
		break;
	case 'P':
		t->paused = !t->paused;
		break;
	case 'K':
		t->filter.hide_kernel = !t->filter.hide_kernel;
		break;
	case 'U':
		t->filter.hide_user = !t->filter.hide_user;
		break;
	}
}

static void handle_key(struct tui *t, int ch)
{
	int h = body_height();

	if (ch == KEY_RESIZE || ch == CTRL('l')) {
		clearok(curscr, TRUE);
		return;
	}
	if (t->prompt) {
		prompt_key(t, ch);
		return;
	}
	if (t->help || t->counters || t->source) {
		t->help = t->counters = t->source = false;
		return;
	}
	switch (ch) {
	case 'q':
	case 'Q':
		t->quit = true;
		break;
	case 'h':
	case '?':
		t->help = true;
		break;
	case 'i':
		t->counters = true;
		break;
	case 'a':
		t->source = true;
		break;
	case 's':
	case '>':
		t->sort = (t->sort + 1) % TOPVIEW_SORT__COUNT;
		break;
	case '<':
		t->sort = (t->sort + TOPVIEW_SORT__COUNT - 1) % TOPVIEW_SORT__COUNT;
		break;
	case 'p':
	case '/':
		start_prompt(t, ch);
		break;
	case KEY_UP:
		move_sel(t, t->sel - 1);
		break;
	case KEY_DOWN:
		move_sel(t, t->sel + 1);
		break;
	case KEY_PPAGE:
		move_sel(t, t->sel - h);
		break;
	case KEY_NPAGE:
		move_sel(t, t->sel + h);
		break;
	case KEY_HOME:
		move_sel(t, 0);
		break;
	case KEY_END:
		move_sel(t, t->nr_rows - 1);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		toggle_expand(t);
		break;
	case KEY_ESC:
		t->expanded = false;
		break;
	default:
		view_key(t, ch);
	}
}

/* ---- the loop ---- */

static int start_screen(SCREEN **screen)
{
	setlocale(LC_ALL, "");
	*screen = newterm(NULL, stdout, stdin);
	if (!*screen)
		return -ENOTTY;
	cbreak(); /* Ctrl-C still raises SIGINT */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(PAIR_HOT, COLOR_RED, -1);
		init_pair(PAIR_WARM, COLOR_GREEN, -1);
		init_pair(PAIR_TITLE, COLOR_BLACK, COLOR_CYAN);
		init_pair(PAIR_KERNEL, COLOR_YELLOW, -1);
	}
	return 0;
}

static int loop(struct tui *t)
{
	double end = t->o->duration > 0 ? clock__mono_s() + t->o->duration : 0, now, wait;
	bool dirty = true;
	int ch, err;

	t->next_refresh = clock__mono_s() + t->o->interval;
	while (!t->quit && !*t->o->stop) {
		now = clock__mono_s();
		if (end && now >= end)
			break;
		if (now >= t->next_refresh) {
			refresh_model(t);
			t->next_refresh += t->o->interval;
			if (t->next_refresh <= now)
				t->next_refresh = now + t->o->interval;
			dirty = true;
		}
		if (dirty)
			draw(t);
		dirty = false;
		wait = t->next_refresh - now;
		err = session__poll(t->s, wait * 1000 < POLL_MS ? (int)(wait * 1000) + 1 : POLL_MS);
		if (err < 0 && err != -EINTR)
			return err;
		while ((ch = getch()) != ERR) {
			handle_key(t, ch);
			dirty = true;
		}
		if (dirty && !t->help)
			select_rows(t);
		if (t->message[0] && now > t->message_until) {
			t->message[0] = '\0';
			dirty = true;
		}
	}
	return 0;
}

int tui__run(struct session *s, const struct tui_opts *o)
{
	struct topview_opts topts = { .counts = o->counts,
				      .group = o->group,
				      /* off-CPU: rows are µs of blocked time */
				      .weight = s->opts.off_cpu || s->opts.on_off };
	struct tui t = { .s = s, .o = o, .counts = o->counts, .sort = o->sort };
	SCREEN *screen = NULL;
	int err;

	t.tv = topview__new(&topts, s->sym, s->ksyms);
	if (!t.tv)
		return -errno;
	topview_status__read(s, &t.now);
	err = start_screen(&screen);
	if (err)
		goto out;
	capture_stderr(&t);
	err = loop(&t);
	endwin();
	delscreen(screen);
	release_stderr(&t);
out:
	topview__free(t.tv);
	tuipages__free();
	free(t.callers.v);
	free(t.callees.v);
	free(t.lines);
	return err;
}
