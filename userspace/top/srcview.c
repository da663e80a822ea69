// SPDX-License-Identifier: GPL-2.0-or-later
/* The live view's source page: a function's samples per source line (see srcview.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interp/hotspot.h"
#include "profile/aggregate.h"
#include "procs/procmaps.h"
#include "profile/stackwalk.h"
#include "symbols/symbolize.h"
#include "top/srcview.h"
#include "util/vec.h"

struct collect {
	struct srcview *v;
	struct symbolizer *sym;
	const struct srcview_query *q;
	struct sw_name name; /* the leaf's */
	char *path; /* java_path()'s */
	size_t path_cap;
};

/* Count n samples at (file, line, fn), one entry per distinct line (and process, for Python). */
static int add(struct srcview *v, const char *file, uint32_t line, const char *fn, uint64_t n,
	       uint32_t pid)
{
	size_t i;

	/* Linear: a function has few hot lines, and the page is drawn once a second. */
	for (i = 0; i < v->nr_lines; i++) {
		struct srcview_line *l = &v->lines[i];

		if (l->line == line && l->file == file && l->function == fn && l->pid == pid) {
			l->samples += n;
			return 0;
		}
	}
	if (VEC_RESERVE(v->lines, v->cap, v->nr_lines + 1, 64))
		return -ENOMEM;
	v->lines[v->nr_lines++] = (struct srcview_line){ file, line, fn, n, pid };
	return 0;
}

/*
 * A Java frame's file as its sources are laid out: its class's package as
 * directories, then the base name the class gives ("demo.Spin.spin" in
 * Spin.java: demo/Spin.java). NULL: out of memory.
 */
static const char *java_path(struct collect *c, const struct sw_frame *f)
{
	const char *fn = f->function, *cls_end = strrchr(fn, '.'), *pkg_end = NULL, *p;
	size_t i, n;

	for (p = fn; cls_end && p < cls_end; p++)
		if (*p == '.')
			pkg_end = p;
	n = pkg_end ? (size_t)(pkg_end - fn) : 0;
	if (!n)
		return f->file;
	if (VEC_RESERVE(c->path, c->path_cap, n + strlen(f->file) + 2, 256))
		return NULL;
	for (i = 0; i < n; i++)
		c->path[i] = fn[i] == '.' ? '/' : fn[i];
	sprintf(c->path + n, "/%s", f->file);
	return c->path;
}

/* A sample whose innermost frame is a Python frame of the function: at its line, in its file. */
static int collect_python(struct collect *c, const struct aggr_stack *st)
{
	const struct sw_frame *f = &c->name.f;
	const char *file;

	if (!f->python || !f->function || strcmp(f->function, c->q->py_function) || !f->file ||
	    strcmp(frame_names__base(f->file), c->q->py_file))
		return 0;
	c->v->samples += st->count;
	if (!f->line)
		return add(c->v, NULL, 0, NULL, st->count, 0);
	file = f->module && !strcmp(f->module, "java") ? java_path(c, f) : f->file;
	file = file ? strset__intern(&c->v->names, file) : NULL;
	if (!file)
		return -ENOMEM;
	return add(c->v, file, f->line, NULL, st->count, st->pid);
}

static int collect_one(const struct aggr_stack *st, void *ctx)
{
	struct collect *c = ctx;
	const struct srcview_query *q = c->q;
	const struct sym_info *si = &c->name.si;
	const struct sw_frame *f = &c->name.f;
	const struct srcline_frame *l;
	const char *file, *fn;

	if (!st->nr_user || st->nr_kernel || !st->count)
		return 0;
	if ((q->pid && st->pid != q->pid) ||
	    (q->comm && strcmp(q->comm, "-") && strcmp(q->comm, st->comm)))
		return 0;
	stackwalk__name(c->sym, NULL, st->pid, SW_USER, stackwalk__addr(st->ips[0], true),
			&c->name);
	if (q->py_function)
		return collect_python(c, st);
	if (!f->symbol || f->python || strcmp(f->name, q->name) || !f->module ||
	    strcmp(f->module, q->module))
		return 0;
	c->v->samples += st->count;
	if (!si->nr_lines)
		return add(c->v, NULL, 0, NULL, st->count, 0);
	l = &si->lines[0];
	/* Copies: the next lookup may free these (srcview.h); interned: equal ones are one. */
	file = strset__intern(&c->v->names, l->file);
	fn = strset__intern(&c->v->names, l->function);
	if ((l->file && !file) || (l->function && !fn))
		return -ENOMEM;
	return add(c->v, file, l->line, fn, st->count, 0);
}

static int cmp_line(const void *a, const void *b)
{
	const struct srcview_line *x = a, *y = b;
	int r;

	if (!x->file || !y->file)
		return !x->file - !y->file;
	r = strcmp(x->file, y->file);
	if (r)
		return r;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return y->samples > x->samples ? 1 : y->samples < x->samples ? -1 : 0;
}

int srcview__collect(struct srcview *v, const struct aggregator *a, struct symbolizer *sym,
		     const struct srcview_query *q)
{
	struct collect *c;
	int err;

	v->nr_lines = 0;
	v->samples = 0;
	strset__free(&v->names); /* the last collect's lines are gone */
	if (!sym || !q->name || !q->module || (q->py_function && !q->py_file))
		return 0;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct collect){ .v = v, .sym = sym, .q = q };
	err = aggregator__for_each(a, collect_one, c);
	free(c->path);
	free(c);
	if (!err && v->nr_lines)
		qsort(v->lines, v->nr_lines, sizeof(*v->lines), cmp_line);
	return err;
}

void srcview__free(struct srcview *v)
{
	free(v->lines);
	strset__free(&v->names);
	*v = (struct srcview){};
}

/* ---- source text ---------------------------------------------------------------- */

struct text_file {
	struct text_file *next;
	uint32_t pid; /* the path is under this process's root; 0: ours */
	char *path;
	char *data; /* NUL-terminated, lines split in place; NULL: unreadable */
	char **line; /* line[i]: line i + 1 */
	size_t nr_lines;
};

static struct text_file *texts;

static void text_load(struct text_file *t)
{
	struct stat st;
	ssize_t r = -1;
	size_t i, n = 0;
	int fd;

	/*
	 * A process's own path: inside its root, whatever symlinks it holds
	 * (procmaps.h); a relative one (a Java class's, a script's run as
	 * `python3 spin.py`) beneath its working directory, and for a Java
	 * class in its class path too (hotspot.h).
	 */
	if (!t->pid)
		fd = open(t->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	else if (t->path[0] == '/')
		fd = procmap__open_in_root((int)t->pid, t->path, true, &st);
	else
		fd = hotspot__source_open(t->pid, t->path);

	if (fd < 0)
		return;
	/* Regular files only: a path from DWARF may name a FIFO or a device. */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (size_t)st.st_size <= SRCVIEW_MAX_FILE &&
	    (t->data = malloc(st.st_size + 1)))
		r = pread(fd, t->data, st.st_size, 0);
	close(fd);
	if (r < 0) {
		free(t->data);
		t->data = NULL;
		return;
	}
	t->data[r] = 0;
	for (i = 0; i < (size_t)r; i++)
		n += t->data[i] == '\n';
	t->line = calloc(n + 1, sizeof(*t->line));
	if (!t->line)
		return;
	t->line[t->nr_lines++] = t->data;
	for (i = 0; i < (size_t)r; i++) {
		if (t->data[i] != '\n')
			continue;
		t->data[i] = 0;
		if (i + 1 < (size_t)r)
			t->line[t->nr_lines++] = t->data + i + 1;
	}
}

const char *srcview__text(uint32_t pid, const char *file, uint32_t line)
{
	struct text_file *t;

	if (!file || !line)
		return NULL;
	for (t = texts; t && (t->pid != pid || strcmp(t->path, file)); t = t->next)
		;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || !(t->path = strdup(file))) {
			free(t);
			return NULL;
		}
		t->pid = pid;
		text_load(t);
		t->next = texts;
		texts = t;
	}
	return t->line && line <= t->nr_lines ? t->line[line - 1] : NULL;
}

void srcview__free_text(void)
{
	struct text_file *t, *next;

	for (t = texts; t; t = next) {
		next = t->next;
		free(t->path);
		free(t->data);
		free(t->line);
		free(t);
	}
	texts = NULL;
}
