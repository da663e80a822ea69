// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sfbpf-top's live view (see tui.h). One loop: poll the session (at most
 * POLL_MS at a time), read every pending key, refresh the model when the
 * interval is up, redraw when something changed. The screen is rebuilt from
 * the model each time: a list of body lines (rows, and the expanded row's
 * caller/callee trees) of which a window is shown, drawn by tuidraw.c.
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

#include "output/metrics.h"
#include "profile/session.h"
#include "top/topview.h"
#include "top/tui.h"
#include "top/tuipages.h"
#include "top/tui_int.h"
#include "util/clock.h"
#include "util/vec.h"

#define POLL_MS 50 /* longest wait for samples: bounds the key latency */
#define TREE_MIN_SHARE 0.005 /* tree nodes under 0.5% of the function's Total: pruned */
#define TREE_MAX_NODES 300
#define MESSAGE_SECS 4
#define KEY_ESC 27
#define CTRL(c) ((c)&0x1f)

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

	out->n = 0;
	if (n <= 0)
		return n;
	if (VEC_RESERVE(out->v, out->cap, n, 64))
		return -ENOMEM;
	memcpy(out->v, nodes, n * sizeof(*nodes));
	out->n = n;
	return n;
}

static int add_line(struct tui *t, struct line l)
{
	if (VEC_RESERVE(t->lines, t->lines_cap, (size_t)t->nr_lines + 1, 256))
		return -ENOMEM;
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

	aggregator__totals(session__aggregator(t->s), &at);
	if (t->o->window && t->counts != TOPVIEW_CUMULATIVE) {
		err = aggregator__drop_idle(session__aggregator(t->s), t->marks[slot]);
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
		err = topview__update(t->tv, session__aggregator(t->s));
		if (err)
			message(t, "updating the table: %s", strerror(-err));
		slide_window(t);
	}
	check_stderr(t);
	select_rows(t);
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
	int h = tuidraw__body_height();

	if (ch == KEY_RESIZE || ch == CTRL('l')) {
		clearok(curscr, TRUE);
		return;
	}
	if (t->prompt) {
		prompt_key(t, ch);
		return;
	}
	if (t->counters) {
		/* The counters come in pages (the last drawing counted them). */
		if (ch == KEY_NPAGE || ch == KEY_DOWN || ch == ' ') {
			if (t->counters_page + 1 < t->counters_pages)
				t->counters_page++;
			return;
		}
		if (ch == KEY_PPAGE || ch == KEY_UP) {
			if (t->counters_page > 0)
				t->counters_page--;
			return;
		}
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
		t->counters_page = 0;
		t->counters_pages = 1;
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

/* A scrape waits: the session's counters, rendered here (the loop is their only reader). */
static void serve_metrics(struct tui *t)
{
	struct metrics_text mt = { 0 };

	if (!t->metrics || !metrics__wanted(t->metrics))
		return;
	session__for_each_stat(t->s, metrics_put_cb, &mt);
	metrics__for_each_stat(t->metrics, metrics_put_cb, &mt);
	metrics__publish(t->metrics, &mt);
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
			tuidraw__draw(t);
		dirty = false;
		serve_metrics(t);
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
				      .weight = session__weighted(s) };
	struct tui t = { .s = s, .o = o, .counts = o->counts, .sort = o->sort };
	SCREEN *screen = NULL;
	int err;

	/* Before the screen: a port that cannot be bound is said on the terminal, plainly. */
	if (o->metrics_addr) {
		t.metrics = metrics__start(o->metrics_addr);
		if (!t.metrics)
			return -errno;
	}
	t.tv = topview__new(&topts, session__symbolizer(s), session__ksyms(s));
	if (!t.tv) {
		err = -errno;
		goto out;
	}
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
	metrics__stop(t.metrics);
	topview__free(t.tv);
	tuipages__free();
	free(t.callers.v);
	free(t.callees.v);
	free(t.lines);
	return err;
}
