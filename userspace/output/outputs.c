// SPDX-License-Identifier: GPL-2.0-or-later
/* End-of-run outputs (see outputs.h). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/flamegraph.h"
#include "output/folded.h"
#include "output/outfile.h"
#include "output/otlp.h"
#include "output/outputs.h"
#include "output/pprof.h"
#include "procs/cgroups.h"
#include "profile/snapshot.h"
#include "util/clock.h"

static const char *cgroup_path_cb(void *ctx, uint64_t cgroup_id)
{
	return session__cgroup_path(ctx, cgroup_id);
}

size_t outputs_cgroup_labels(void *ctx, uint64_t cgroup_id, struct pprof_label *out, size_t max)
{
	/* Valid until the next call (pprof.h): the writers copy the strings at once. */
	static struct cgroup_info ci;
	size_t n = 0;

	cgroups_parse_path(session__cgroup_path(ctx, cgroup_id), &ci);
	if (ci.container_id[0] && n < max)
		out[n++] = (struct pprof_label){ "container_id", ci.container_id };
	if (ci.pod_uid[0] && n < max)
		out[n++] = (struct pprof_label){ "pod_uid", ci.pod_uid };
	return n;
}

void outputs__pprof_opts(struct session *s, struct pprof_opts *po)
{
	const struct session_opts *so = session__opts(s);

	po->freq = so->freq;
	if (so->off_cpu) {
		po->type = so->on_off ? "wall" : "off_cpu";
		po->value_from_weight = true;
		po->weight_scale = 1000; /* weights are µs, values ns */
	}
	po->cgroup_path = session__has_cgroups(s) ? cgroup_path_cb : NULL;
	po->cgroup_labels = session__has_cgroups(s) ? outputs_cgroup_labels : NULL;
	po->cgroup_ctx = s;
}

static int write_pprof(struct session *s, const struct snapshot *snap, const struct outputs_opts *o)
{
	struct pprof_opts po = {
		.time_nanos = o->start_ns,
		.duration_nanos = (int64_t)(o->duration_s * 1e9),
		.comment = "sfbpf-top",
	};

	/* Sample type and weights from the mode; a cgroup label on every sample. */
	outputs__pprof_opts(s, &po);
	if (session__weighted(s))
		po.freq = 0; /* values are measured times, not periods */
	return pprof__write(snap, &po, o->pprof_path);
}

static int write_otlp(struct session *s, const struct snapshot *snap, const struct outputs_opts *o)
{
	struct otlp_opts oo = { .po = { .time_nanos = o->start_ns,
					.duration_nanos = (int64_t)(o->duration_s * 1e9) } };
	struct outfile out;
	char host[256] = "";
	size_t size;
	void *data;
	int err;

	outputs__pprof_opts(s, &oo.po);
	if (session__weighted(s))
		oo.po.freq = 0;
	if (!gethostname(host, sizeof(host) - 1))
		oo.hostname = host;
	err = otlp__encode(snap, &oo, &data, &size);
	if (err)
		return err;
	err = outfile__open(&out, o->otlp_path);
	if (!err) {
		if (size && fwrite(data, size, 1, out.f) != 1)
			err = -EIO;
		err = outfile__close(&out, err);
	}
	free(data);
	return err;
}

static int write_svg(struct session *s, const struct snapshot *snap, const struct outputs_opts *o)
{
	const struct session_opts *so = session__opts(s);
	struct flamegraph_opts fo = { .title = "CPU Flame Graph" };
	char sub[160];

	if (session__weighted(s)) {
		fo.title = so->on_off ? "Wall-Clock Time Flame Graph" : "Off-CPU Time Flame Graph";
		fo.unit = "µs";
		fo.weight = true;
		snprintf(sub, sizeof(sub), "sfbpf-top, %.1f s%s", o->duration_s,
			 so->nr_pids ? "" : ", system-wide");
	} else {
		snprintf(sub, sizeof(sub), "sfbpf-top, %lu Hz, %.1f s%s", so->freq, o->duration_s,
			 so->nr_pids ? "" : ", system-wide");
	}
	fo.subtitle = sub;
	return flamegraph__write_svg(snap, &fo, o->svg_path);
}

static int report(int err, const char *what, const char *path)
{
	if (err)
		fprintf(stderr, "sfbpf-top: writing %s %s: %s\n", what, path, strerror(-err));
	return err;
}

int outputs__check(const struct outputs_opts *o)
{
	const char *paths[] = { o->folded_path, o->pprof_path, o->svg_path, o->otlp_path };
	const char *what[] = { "folded stacks", "pprof", "flame graph", "OTLP profiles" };
	int err = 0, e;
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (!paths[i])
			continue;
		e = outfile__probe(paths[i]);
		if (e)
			fprintf(stderr, "sfbpf-top: cannot write %s to %s: %s\n", what[i], paths[i],
				strerror(-e));
		err = err ? err : e;
	}
	return err;
}

int outputs__write(struct session *s, const struct outputs_opts *o)
{
	struct folded_opts fopts = { .weight = session__weighted(s) };
	struct snapshot *snap = NULL;
	int err = 0, e, serr = 0;

	/* Every output from one symbolized snapshot: each frame named once. */
	if (o->folded_path || o->pprof_path || o->svg_path || o->otlp_path) {
		snap = session__snapshot(s);
		serr = snap ? 0 : -errno;
	}
	if (o->folded_path) {
		e = serr ?: folded__write(snap, &fopts, o->folded_path);
		err = err ? err : report(e, "folded stacks", o->folded_path);
	}
	if (o->pprof_path) {
		e = serr ?: write_pprof(s, snap, o);
		err = err ? err : report(e, "pprof", o->pprof_path);
	}
	if (o->svg_path) {
		e = serr ?: write_svg(s, snap, o);
		err = err ? err : report(e, "flame graph", o->svg_path);
	}
	if (o->otlp_path) {
		e = serr ?: write_otlp(s, snap, o);
		err = err ? err : report(e, "OTLP profiles", o->otlp_path);
	}
	snapshot__free(snap);
	/* Written: the DWARF the source lines took is not needed until the next outputs. */
	if (session__symbolizer(s))
		symbolizer__release_lines(session__symbolizer(s), UINT64_MAX);
	malloc_trim(0);
	return err;
}
