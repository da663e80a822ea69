/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What sfbpf-top writes at the end of a run: folded stacks, a pprof profile,
 * a flame graph, an OTLP profiles request — all from the same aggregated stacks, so they agree. CPU
 * runs count samples; off-CPU and on+off runs weigh stacks by time (µs).
 * A named file is replaced whole once written, never followed (outfile.h).
 */
#ifndef SFBPF_OUTPUTS_H
#define SFBPF_OUTPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "output/pprof.h"
#include "profile/session.h"

struct outputs_opts {
	const char *folded_path; /* NULL: not written; "-": stdout */
	const char *pprof_path;
	const char *svg_path;
	const char *otlp_path; /* an OTLP ExportProfilesServiceRequest, uncompressed (otlp.h) */
	int64_t start_ns; /* wall clock at start (CLOCK_REALTIME) */
	double duration_s;
};

/*
 * Before the run: whether every requested output can be written (a file is
 * created and dropped in each directory), so that a bad path fails at once,
 * not after the run; reports failures on stderr; 0 or the first error.
 */
int outputs__check(const struct outputs_opts *o);
/* Writes every requested output; reports failures on stderr; 0 or the first error. */
int outputs__write(struct session *s, const struct outputs_opts *o);

/*
 * The pprof options that follow from the session's mode (sample type, weights,
 * period) and its cgroup labels; the caller adds times, labels, comment.
 */
void outputs__pprof_opts(struct session *s, struct pprof_opts *po);

/*
 * The container and pod labels of a cgroup id (cgroups_parse_path), for
 * pprof_opts.cgroup_labels: ctx is the session.
 */
size_t outputs_cgroup_labels(void *ctx, uint64_t cgroup_id, struct pprof_label *out,
			     size_t max);

#endif /* SFBPF_OUTPUTS_H */
