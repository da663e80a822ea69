/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * OTLP profiles writer: the aggregated stacks as one OpenTelemetry
 * ExportProfilesServiceRequest (opentelemetry-proto, profiles
 * v1development: proto/otlp/), the body of an OTLP/HTTP export request.
 *
 * One ProfilesDictionary for the whole request: strings, functions,
 * mappings, locations, stacks and attributes, each deduplicated, each table
 * starting with its zero value as the schema requires. One ResourceProfiles
 * per process (pid and cgroup), with the resource attributes
 *
 *   host.name, service.name, process.pid, process.executable.name,
 *   container.id, k8s.pod.uid, and the caller's labels
 *
 * service.name is the task's systemd service (its cgroup), else
 * "unknown_service:EXE" as OpenTelemetry's conventions say. Each holds one
 * scope ("sfbpf") with one profile; its samples index stacks (leaf first)
 * and carry a "thread.name" attribute (the comm: the folded output's root
 * frame). The frames are the folded output's, named as stackwalk.h says. A
 * frame and the functions inlined at its address make one location, its
 * lines innermost first (the last is the caller they were inlined into),
 * each with its source line where DWARF gives one; a user function's
 * filename and start_line are its DWARF declaration's, else its filename is
 * the object's path. Kernel locations have the attribute
 * profile.frame.type=kernel, user ones =native, and mappings carry their
 * build-id as process.executable.build_id.gnu.
 *
 * CPU profiles: sample type samples/count, period type cpu/nanoseconds,
 * period 1e9/freq. Weighted (off-CPU, wall) profiles: sample type
 * TYPE/nanoseconds, values the summed weights x weight_scale.
 *
 * Every profile gets a random 16-byte profile_id: a body sent twice (the
 * answer got lost) can be recognized by the receiver.
 */
#ifndef SFBPF_OTLP_H
#define SFBPF_OTLP_H

#include <stddef.h>

#include "output/pprof.h"

struct snapshot;

struct otlp_opts {
	/* type, unit, weights, freq, times, labels and the cgroup callback, as for pprof. */
	struct pprof_opts po;
	const char *hostname; /* host.name; NULL or "": none */
};

/*
 * The request of snap's stacks (snapshot.h), serialized, into *data
 * (malloc'ed; *size bytes). Returns 0 or a negative errno (-EINVAL: no
 * period for a CPU profile).
 */
int otlp__encode(const struct snapshot *snap, const struct otlp_opts *opts, void **data,
		 size_t *size);

/* data gzip-compressed (Content-Encoding: gzip) into *out (malloc'ed). 0 or -errno. */
int otlp_gzip(const void *data, size_t size, void **out, size_t *out_size);

#endif /* SFBPF_OTLP_H */
