/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pprof writer: the aggregated stacks as a gzip-compressed profile.proto, the
 * format `go tool pprof`, Pyroscope, Parca and Grafana read.
 *
 * Follows Go's CPU profiles: sample types samples/count and cpu/nanoseconds
 * (count x period), period type cpu/nanoseconds, period 1e9/freq. A profile of
 * weighted samples (off-CPU) sets type "off_cpu" and value_from_weight: the
 * second value is then the stack's summed sample weights.
 *
 * Stacks name frames exactly as the folded output does (stackwalk.h), leaf
 * first (inlined functions as a location's extra Lines, below): kernel
 * frames, then user frames, then "[truncated]" for a stack that
 * lost its root. The folded output's comm root frame is the "comm" label here;
 * every sample also has a numeric "pid" label (none for the idle task, pid 0)
 * and the extra labels of the options.
 *
 * Mappings: each executable mapping's range, file offset, path and build-id
 * (hex); kernel frames are in one "[kernel.kallsyms]" mapping carrying the
 * running kernel's build-id. Every location carries its function already
 * (has_functions): pprof shows our names. Where the object's DWARF covers an
 * address (symbolize.h), its location has one Line per function, innermost
 * first (the functions inlined there, then the one they were inlined into),
 * each with its line number, and Functions name their declaration's file and
 * first line (mappings then also say has_line_numbers, has_inline_frames);
 * elsewhere one Line of line 0 and the mapped file as the function's file.
 * A location's address is the address that was symbolized: the return
 * address - 1 for callers.
 */
#ifndef SFBPF_PPROF_H
#define SFBPF_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct snapshot;

/* A string label put on every sample, e.g. { "hostname", "db-1" }. */
struct pprof_label {
	const char *key;
	const char *value;
};

struct pprof_opts {
	const char *type; /* second sample type and period type; NULL: "cpu" */
	const char *unit; /* their unit; NULL: "nanoseconds" */
	bool value_from_weight; /* value = summed weights (off-CPU), else count x period */
	int64_t weight_scale; /* weights x weight_scale = unit (1000: weights in µs); 0: 1 */
	unsigned long freq; /* sampling frequency (Hz): period = 1e9 / freq if period is 0 */
	int64_t period; /* units per sample */
	int64_t time_nanos; /* wall-clock start of the collection (ns since the epoch) */
	int64_t duration_nanos;
	const struct pprof_label *labels;
	size_t nr_labels;
	const char *comment; /* optional note shown by pprof (-raw, web UI) */
	/* A sample's cgroup v2 path (a "cgroup" label), or NULL; NULL: no such labels. */
	const char *(*cgroup_path)(void *ctx, uint64_t cgroup_id);
	void *cgroup_ctx;
	/*
	 * More labels of a sample's cgroup (container, pod), up to max, into out;
	 * their count. Strings need to stay valid until the next call only. NULL: none.
	 */
	size_t (*cgroup_labels)(void *ctx, uint64_t cgroup_id, struct pprof_label *out, size_t max);
};

#define PPROF_MAX_CGROUP_LABELS 4

/*
 * The stacks of snap (snapshot.h); opts may be NULL (cpu defaults, no
 * period). path "-" is stdout. Returns 0 or a negative errno.
 */
int pprof__write(const struct snapshot *snap, const struct pprof_opts *opts, const char *path);
int pprof__write_file(const struct snapshot *snap, const struct pprof_opts *opts, FILE *f);

#endif /* SFBPF_PPROF_H */
