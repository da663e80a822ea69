// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Folded-stack writer (see folded.h). Every stack of the snapshot (named by
 * stackwalk.c's rule, as for every output) becomes a line kept in one string
 * pool; lines are then sorted, and equal neighbours merged
 * (different raw stacks often symbolize alike: return addresses inside one
 * function, different pids of one comm).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregate.h"
#include "output/folded.h"
#include "output/outfile.h"
#include "profile/snapshot.h"
#include "util/vec.h"

struct line {
	size_t off; /* in pool */
	uint64_t count;
};

struct writer {
	struct folded_opts opts;
	char *pool;
	size_t len, cap;
	struct line *lines;
	size_t nlines, lines_cap;
	size_t line_start;
};

static int put(struct writer *w, const char *s, size_t n)
{
	if (VEC_RESERVE(w->pool, w->cap, w->len + n, 1 << 16))
		return -ENOMEM;
	memcpy(w->pool + w->len, s, n);
	w->len += n;
	return 0;
}

static int put_str(struct writer *w, const char *s)
{
	return put(w, s, strlen(s));
}

/* A name that cannot break the format: no ';', no control characters. */
static int put_name(struct writer *w, const char *s)
{
	size_t i, n = strlen(s);
	char *d;

	if (!n)
		return put_str(w, "[unknown]");
	if (VEC_RESERVE(w->pool, w->cap, w->len + n, 1 << 16))
		return -ENOMEM;
	d = w->pool + w->len;
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		d[i] = c == ';' ? ':' : (c < 0x20 || c == 0x7f ? '_' : c);
	}
	w->len += n;
	return 0;
}

static int add_line(struct writer *w, uint64_t count)
{
	if (VEC_RESERVE(w->lines, w->lines_cap, w->nlines + 1, 4096))
		return -ENOMEM;
	w->lines[w->nlines++] = (struct line){ w->line_start, count };
	return put(w, "", 1);
}

/* One line from a symbolized stack (stackwalk.h names the frames). */
static int build_line(const struct sw_stack *st, void *ctx)
{
	struct writer *w = ctx;
	char pid[16];
	size_t i;
	int err;

	w->line_start = w->len;
	err = put_name(w, st->frames[0].name); /* the comm */
	if (!err && w->opts.pid) {
		snprintf(pid, sizeof(pid), "-%" PRIu32, st->pid);
		err = put_str(w, pid);
	}
	for (i = 1; i < st->nr_frames && !err; i++) {
		err = put_str(w, ";");
		if (!err)
			err = put_name(w, st->frames[i].name);
		if (!err && st->frames[i].kind == SW_KERNEL)
			err = put_str(w, "_[k]");
		else if (!err && st->frames[i].inlined)
			err = put_str(w, "_[i]");
	}
	if (!err)
		err = add_line(w, w->opts.weight ? st->weight : st->count);
	return err;
}

static int cmp_line(const void *a, const void *b, void *pool)
{
	const struct line *x = a, *y = b;

	return strcmp((const char *)pool + x->off, (const char *)pool + y->off);
}

static int emit(struct writer *w, FILE *f)
{
	size_t i, j;

	if (w->nlines) /* an empty profile has no array: qsort_r wants one */
		qsort_r(w->lines, w->nlines, sizeof(*w->lines), cmp_line, w->pool);
	for (i = 0; i < w->nlines; i = j) {
		const char *s = w->pool + w->lines[i].off;
		uint64_t count = 0;

		for (j = i; j < w->nlines && !strcmp(s, w->pool + w->lines[j].off); j++)
			count += w->lines[j].count;
		if (count)
			fprintf(f, "%s %" PRIu64 "\n", s, count);
	}
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}

int folded__write_file(const struct snapshot *snap, const struct folded_opts *opts, FILE *f)
{
	struct writer w = {};
	int err;

	if (opts)
		w.opts = *opts;
	err = snapshot__for_each(snap, build_line, &w);
	if (!err)
		err = emit(&w, f);
	free(w.pool);
	free(w.lines);
	return err;
}

int folded__write(const struct snapshot *snap, const struct folded_opts *opts, const char *path)
{
	struct outfile out;
	int err = outfile__open(&out, path);

	if (err)
		return err;
	return outfile__close(&out, folded__write_file(snap, opts, out.f));
}
