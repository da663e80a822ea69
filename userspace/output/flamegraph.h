/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Flame graph writer: a self-contained interactive SVG (no external files or
 * network), readable in any browser and, without its script, in any SVG
 * viewer.
 *
 * Frames are exactly the folded output's (stackwalk.h, folded.h): "all", then
 * comm, then user root ... leaf (inlined functions with a "_[i]" suffix), then
 * kernel root ... leaf ("_[k]" suffix).
 * Each frame's width is its share of the samples (or weights); siblings are
 * sorted by kind (inlined, kernel, unsymbolized, then user code) and name, so
 * that the layout does not depend on sample order. Colours tell user code
 * (warm), inlined functions (aqua), kernel code (blue), user frames without a
 * symbol (grey) and processes (violet) apart.
 *
 * In a browser: hover for name, samples and share (also the frame's tooltip);
 * click a frame to zoom to it, "Reset Zoom" (or a click on "all") to zoom out;
 * "Search" (or Ctrl-F, "/") takes a regular expression, highlights matching
 * frames and shows the share of samples they cover ("Matched: N%"), Escape
 * clears it. URL parameters do the same on load: FILE.svg?s=REGEX searches,
 * ?z=REGEX zooms to the widest frame whose name matches.
 *
 * Frames narrower than min_width pixels at full view are left out (as
 * flamegraph.pl does): they would be invisible and bloat the file.
 */
#ifndef SFBPF_FLAMEGRAPH_H
#define SFBPF_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdio.h>

struct snapshot;

struct flamegraph_opts {
	const char *title; /* NULL: "Flame Graph" */
	const char *subtitle; /* optional second line, e.g. the command and duration */
	const char *unit; /* what values count, no parentheses; NULL: "samples" */
	bool weight; /* size frames by summed sample weights instead of counts */
	bool inverted; /* icicle graph: roots at the top */
	unsigned width; /* image width in pixels; 0: 1200 */
	double min_width; /* pixels; 0: 0.1 */
};

/*
 * The stacks of snap (snapshot.h); opts may be NULL (defaults). path "-" is
 * stdout. Returns 0 or a negative errno.
 */
int flamegraph__write_svg(const struct snapshot *snap, const struct flamegraph_opts *opts,
			  const char *path);
int flamegraph__write_svg_file(const struct snapshot *snap, const struct flamegraph_opts *opts,
			       FILE *f);

#endif /* SFBPF_FLAMEGRAPH_H */
