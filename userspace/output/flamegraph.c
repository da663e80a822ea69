// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Flame graph SVG writer (see flamegraph.h).
 *
 * Every distinct stack becomes a line of frames in one string pool, each frame
 * a kind tag followed by its name (named and sanitized as in the folded
 * output), frames separated by SEP, a control character no name holds. Lines
 * are sorted (strcmp: siblings come by kind, then name), equal lines merged,
 * and one pass over the sorted lines lays the graph out: a frame opens where
 * a line first differs from the previous one and closes where a later line
 * stops sharing it, its width being the value accumulated in between.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregate.h"
#include "output/flamegraph.h"
#include "output/flamegraph_js.h"
#include "output/outfile.h"
#include "profile/snapshot.h"
#include "util/hash.h"
#include "util/vec.h"
#include "util/utf8.h"

#define FONT_SIZE 12
#define FRAME_H 16 /* frame height, gap included */
#define PAD 10 /* left and right margins */
#define TOP 76 /* title, subtitle, buttons and legend */
#define BOTTOM 30 /* details line */
#define MATCH_FILL "rgb(230,0,230)"
#define SEP '\x01' /* between frames: sorts before any character of a name */

/* Frame kinds as tagged in lines; they pick the colours. */
enum {
	TAG_ALL = 'a',
	TAG_COMM = 'c',
	TAG_TRUNCATED = 't',
	TAG_USER = 'u',
	TAG_USER_NOSYM = 'n',
	TAG_KERNEL = 'k',
	TAG_INLINED = 'i',
};

struct line {
	size_t off; /* in pool: TAG name SEP TAG name ... NUL */
	uint64_t value;
};

struct frame_ref {
	const char *name; /* tag, then name */
	size_t len; /* tag and name */
	uint64_t start;
};

struct writer {
	struct flamegraph_opts opts;
	char *pool;
	size_t len, cap;
	struct line *lines;
	size_t nlines, lines_cap;
	uint64_t total;
	unsigned max_depth;
	FILE *f;
	double scale; /* pixels per value unit */
	struct frame_ref *open; /* max_depth + 1 entries while laying out */
};

/* ---- collecting lines ------------------------------------------------------------ */
/*
 * Tag and name, sanitized as folded.c does (';' -> ':', control -> '_', so no
 * SEP inside), then suffix.
 */
static int put_frame(struct writer *w, char tag, const char *name, const char *suffix)
{
	size_t n = strlen(name), ns = strlen(suffix), i, k;
	char *d;

	if (VEC_RESERVE(w->pool, w->cap, w->len + (n + ns + 2), 1 << 16))
		return -ENOMEM;
	d = w->pool + w->len;
	*d++ = tag;
	for (i = 0; i < n; i += k) {
		unsigned char c = name[i];

		k = utf8__seq_len((const unsigned char *)name + i);
		if (k > 1) {
			memcpy(d, name + i, k);
			d += k;
			continue;
		}
		k = 1;
		*d++ = c == ';' ? ':' : c < 0x20 || c == 0x7f ? '_' : c >= 0x80 ? '?' : c;
	}
	memcpy(d, suffix, ns);
	d[ns] = SEP;
	w->len = d + ns + 1 - w->pool;
	return 0;
}

static char frame_tag(const struct sw_frame *f)
{
	switch (f->kind) {
	case SW_COMM:
		return TAG_COMM;
	case SW_TRUNCATED:
		return TAG_TRUNCATED;
	case SW_KERNEL:
		return TAG_KERNEL;
	default:
		if (f->inlined)
			return TAG_INLINED;
		return f->symbol ? TAG_USER : TAG_USER_NOSYM;
	}
}

static int add_stack(const struct sw_stack *st, void *ctx)
{
	struct writer *w = ctx;
	uint64_t value = w->opts.weight ? st->weight : st->count;
	size_t start = w->len, i;
	int err = 0;

	if (!value)
		return 0;
	for (i = 0; i < st->nr_frames && !err; i++) {
		const struct sw_frame *f = &st->frames[i];

		err = put_frame(w, frame_tag(f), f->name,
				f->kind == SW_KERNEL ? "_[k]" :
				f->inlined	     ? "_[i]" :
						       "");
	}
	if (err)
		return err;
	w->pool[w->len - 1] = '\0'; /* the last SEP ends the line */
	if (VEC_RESERVE(w->lines, w->lines_cap, w->nlines + 1, 4096))
		return -ENOMEM;
	w->lines[w->nlines++] = (struct line){ start, value };
	w->total += value;
	if (st->nr_frames > w->max_depth)
		w->max_depth = st->nr_frames;
	return 0;
}

/* ---- sorting ------------------------------------------------------------------- */

/* Length of the frame (tag and name) at s. */
static size_t frame_len(const char *s)
{
	const char *e = strchr(s, SEP);

	return e ? (size_t)(e - s) : strlen(s);
}

static int cmp_line(const void *x, const void *y, void *pool)
{
	return strcmp((const char *)pool + ((const struct line *)x)->off,
		      (const char *)pool + ((const struct line *)y)->off);
}

/* ---- SVG output ------------------------------------------------------------------ */

static void put_xml(FILE *f, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(s[i], f);
		}
	}
}

/* Characters of a label that fit w pixels, like the script's fit(). */
static size_t fit(const char *name, size_t n, double w, bool *dots)
{
	double room = (w - 6) / (FONT_SIZE * 0.59);
	size_t chars = 0, i;

	*dots = false;
	if (room < 3)
		return 0;
	for (i = 0; i < n; i++)
		chars += ((unsigned char)name[i] & 0xc0) != 0x80;
	if (chars <= (size_t)room)
		return n;
	*dots = true;
	for (chars = 0, i = 0; i < n; i++) {
		if (((unsigned char)name[i] & 0xc0) != 0x80 && ++chars > (size_t)room - 2)
			break;
	}
	return i;
}

/* Colour by kind; the name's hash varies it, so one function keeps one colour. */
static void put_fill(FILE *f, char tag, const char *name, size_t n)
{
	uint32_t h = (uint32_t)hash__bytes(name, n);
	double v1 = (h & 0xff) / 255.0, v2 = (h >> 8 & 0xff) / 255.0, v3 = (h >> 16 & 0xff) / 255.0;

	switch (tag) {
	case TAG_USER:
		fprintf(f, "hsl(%.0f,%.0f%%,%.0f%%)", 4 + 46 * v1, 78 + 17 * v2, 52 + 12 * v3);
		break;
	case TAG_KERNEL:
		fprintf(f, "hsl(%.0f,%.0f%%,%.0f%%)", 188 + 32 * v1, 52 + 20 * v2, 60 + 10 * v3);
		break;
	case TAG_INLINED: /* aqua, as flamegraph.pl colours "_[i]" frames */
		fprintf(f, "hsl(%.0f,%.0f%%,%.0f%%)", 160 + 16 * v1, 45 + 20 * v2, 58 + 10 * v3);
		break;
	case TAG_COMM:
		fprintf(f, "hsl(%.0f,32%%,%.0f%%)", 262 + 24 * v1, 70 + 8 * v3);
		break;
	case TAG_ALL:
		fputs("hsl(0,0%,80%)", f);
		break;
	default: /* no symbol, [truncated] */
		fprintf(f, "hsl(40,6%%,%.0f%%)", 66 + 10 * v3);
	}
}

/* Thousands separators: "1,234,567". */
static void put_count(FILE *f, uint64_t v)
{
	char buf[32], *p = buf + sizeof(buf) - 1;
	int digits = 0;

	*p = '\0';
	do {
		if (digits && digits % 3 == 0)
			*--p = ',';
		*--p = '0' + v % 10;
		v /= 10;
		digits++;
	} while (v);
	fputs(p, f);
}

static double frame_y(const struct writer *w, unsigned depth)
{
	if (w->opts.inverted)
		return TOP + depth * FRAME_H;
	return TOP + (w->max_depth - depth) * FRAME_H;
}

/* One frame: tooltip, box, label. tagged = tag then name, n bytes. */
static void put_box(struct writer *w, const char *tagged, size_t n, unsigned depth, uint64_t start,
		    uint64_t end)
{
	double x = PAD + start * w->scale, width = (end - start) * w->scale;
	double y = frame_y(w, depth);
	const char *name = tagged + 1;
	size_t label;
	bool dots;

	if (width < w->opts.min_width)
		return;
	n--;
	fprintf(w->f, "<g data-v=\"%" PRIu64 "\"><title>", end - start);
	put_xml(w->f, name, n);
	fputs(" (", w->f);
	put_count(w->f, end - start);
	fputc(' ', w->f);
	put_xml(w->f, w->opts.unit, strlen(w->opts.unit));
	fprintf(w->f,
		", %.2f%%)</title><rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" "
		"height=\"%d\" fill=\"",
		100.0 * (end - start) / w->total, x, y, width, FRAME_H - 1);
	put_fill(w->f, tagged[0], name, n);
	fprintf(w->f, "\" rx=\"2\" ry=\"2\"/><text x=\"%.3f\" y=\"%.1f\">", x + 3, y + 11.5);
	label = fit(name, n, width, &dots);
	put_xml(w->f, name, label);
	fputs(dots ? "..</text></g>\n" : "</text></g>\n", w->f);
}

/* Lay the sorted, merged lines out; frames close (and are drawn) deepest first. */
static void put_frames(struct writer *w)
{
	unsigned depth = 0, d; /* open frames: w->open[1 .. depth] */
	uint64_t pos = 0;
	size_t i;

	for (i = 0; i < w->nlines; i++) {
		const char *s = w->pool + w->lines[i].off;

		/* Keep the frames this line shares with the open path. */
		for (d = 1; *s; d++) {
			size_t n = frame_len(s);

			if (d > depth || n != w->open[d].len || memcmp(s, w->open[d].name, n))
				break;
			s += n + (s[n] == SEP);
		}
		for (; depth >= d; depth--)
			put_box(w, w->open[depth].name, w->open[depth].len, depth,
				w->open[depth].start, pos);
		while (*s) {
			size_t n = frame_len(s);

			w->open[++depth] = (struct frame_ref){ s, n, pos };
			s += n + (s[n] == SEP);
		}
		pos += w->lines[i].value;
	}
	for (; depth >= 1; depth--)
		put_box(w, w->open[depth].name, w->open[depth].len, depth, w->open[depth].start,
			pos);
	put_box(w, "aall", 4, 0, 0, pos);
}

static void put_legend(struct writer *w, double x, const char *tag_name, const char *label)
{
	fprintf(w->f, "<rect x=\"%.0f\" y=\"56\" width=\"12\" height=\"12\" rx=\"2\" fill=\"", x);
	put_fill(w->f, tag_name[0], tag_name + 1, strlen(tag_name + 1));
	fprintf(w->f, "\"/><text x=\"%.0f\" y=\"66\" class=\"legend\">%s</text>\n", x + 16, label);
}

static void put_header(struct writer *w, unsigned width, unsigned height)
{
	double mid = width / 2.0;

	fprintf(w->f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>\n"
		"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: %dpx; "
		"fill: #000; }\n"
		"#frames text { pointer-events: none; }\n"
		"#frames g:hover rect { stroke: #000; stroke-width: 0.6; cursor: pointer; }\n"
		"#title { font-size: 17px; text-anchor: middle; }\n"
		"#subtitle, .legend { fill: #555; }\n"
		"#subtitle { text-anchor: middle; }\n"
		".button { cursor: pointer; fill: #124; text-decoration: underline; }\n"
		".button:hover { fill: #36c; }\n"
		"#search, #matched { text-anchor: end; }\n"
		".hide { display: none; }\n"
		".parent { opacity: 0.55; }\n"
		"</style>\n"
		"<script><![CDATA[var fg = { width: %u, pad: %d, fh: %d, y0: %.1f, "
		"total: %" PRIu64 ", match: '%s' };]]></script>\n"
		"<script><![CDATA[\n%s]]></script>\n"
		"<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
		"<stop stop-color=\"#f6f6f2\" offset=\"0\"/>"
		"<stop stop-color=\"#e4e6ee\" offset=\"1\"/>"
		"</linearGradient></defs>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"url(#bg)\"/>\n",
		width, height, width, height, FONT_SIZE, width, PAD, FRAME_H, frame_y(w, 0),
		w->total, MATCH_FILL, flamegraph_js);
	fprintf(w->f, "<text id=\"title\" x=\"%.1f\" y=\"24\">", mid);
	put_xml(w->f, w->opts.title, strlen(w->opts.title));
	fprintf(w->f, "</text>\n<text id=\"subtitle\" x=\"%.1f\" y=\"43\">", mid);
	if (w->opts.subtitle)
		put_xml(w->f, w->opts.subtitle, strlen(w->opts.subtitle));
	fprintf(w->f,
		"</text>\n"
		"<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"66\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%d\" y=\"66\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%u\"></text>\n",
		PAD, width - PAD, PAD, height - 10, width - PAD, height - 10);
	put_legend(w, mid - 222, "uuser", "user");
	put_legend(w, mid - 160, "iinlined", "inlined");
	put_legend(w, mid - 84, "kkernel", "kernel");
	put_legend(w, mid - 12, "nno symbol", "no symbol");
	put_legend(w, mid + 76, "cprocess", "process (comm)");
}

static int emit(struct writer *w)
{
	unsigned width = w->opts.width;
	unsigned height = TOP + (w->max_depth + 1) * FRAME_H + BOTTOM;

	w->scale = w->total ? (double)(width - 2 * PAD) / w->total : 0;
	put_header(w, width, height);
	fputs("<g id=\"frames\">\n", w->f);
	if (w->total)
		put_frames(w);
	fputs("</g>\n</svg>\n", w->f);
	if (fflush(w->f) || ferror(w->f))
		return -EIO;
	return 0;
}

/* Merge lines that symbolized identically (they are adjacent once sorted). */
static void merge_lines(struct writer *w)
{
	size_t i, n = 0;

	if (w->nlines) /* an empty profile has no array: qsort_r wants one */
		qsort_r(w->lines, w->nlines, sizeof(*w->lines), cmp_line, w->pool);
	for (i = 0; i < w->nlines; i++) {
		if (n && !cmp_line(&w->lines[n - 1], &w->lines[i], w->pool))
			w->lines[n - 1].value += w->lines[i].value;
		else
			w->lines[n++] = w->lines[i];
	}
	w->nlines = n;
}

int flamegraph__write_svg_file(const struct snapshot *snap, const struct flamegraph_opts *opts,
			       FILE *f)
{
	struct writer *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	if (opts)
		w->opts = *opts;
	if (!w->opts.title)
		w->opts.title = "Flame Graph";
	if (!w->opts.unit)
		w->opts.unit = "samples";
	if (w->opts.width < 200)
		w->opts.width = w->opts.width ? 200 : 1200;
	/* The script tells frames apart by position to 0.005 px: keep them wider. */
	if (w->opts.min_width <= 0)
		w->opts.min_width = 0.1;
	else if (w->opts.min_width < 0.02)
		w->opts.min_width = 0.02;
	w->f = f;
	err = snapshot__for_each(snap, add_stack, w);
	if (!err) {
		merge_lines(w);
		w->open = calloc(w->max_depth + 2, sizeof(*w->open));
		err = w->open ? emit(w) : -ENOMEM;
	}
	free(w->open);
	free(w->pool);
	free(w->lines);
	free(w);
	return err;
}

int flamegraph__write_svg(const struct snapshot *snap, const struct flamegraph_opts *opts,
			  const char *path)
{
	struct outfile out;
	int err = outfile__open(&out, path);

	if (err)
		return err;
	return outfile__close(&out, flamegraph__write_svg_file(snap, opts, out.f));
}
