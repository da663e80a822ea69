/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The live view's full-screen pages (keys h, i and a) and its clipped printw:
 * drawing helpers kept out of tui.c's loop and model.
 */
#ifndef SFBPF_TUIPAGES_H
#define SFBPF_TUIPAGES_H

struct session;
struct topview_row;

/* printw that stops at the right edge instead of wrapping onto the next line. */
void tui_put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define tui_mvput(y, x, ...) (move((y), (x)), tui_put(__VA_ARGS__))

/* The keys and what the columns mean. */
void tuipages__help(void);
/*
 * The session's counters, the ones --stats prints (unwinding, stop reasons,
 * tables and budget, lifecycle, loader), in columns, the *page-th screenful
 * (clamped to the last). Returns how many pages there are.
 */
int tuipages__counters(struct session *s, int *page);

/*
 * The source lines of row's function where its own samples fell (srcview.h),
 * in file and line order, with the source text when readable; when they do
 * not fit, the hottest ones. row may be NULL (nothing selected).
 */
void tuipages__source(struct session *s, const struct topview_row *row);
/* Frees what the source page keeps (its buffers and source texts). */
void tuipages__free(void);

#endif /* SFBPF_TUIPAGES_H */
