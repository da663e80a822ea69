/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Push: delivers spooled profiles to a Pyroscope-compatible ingest endpoint
 * (Grafana Pyroscope, Grafana Alloy's pyroscope.receive_http, anything that
 * speaks Pyroscope's HTTP ingest API), from a thread of its own so that a
 * slow or dead backend never stalls sampling.
 *
 * One request per profile, oldest first, as Pyroscope's server API reference
 * describes the pprof format:
 *
 *   POST URL/ingest?name=APP{k=v,...}&from=S&until=S&format=pprof
 *                  &sampleRate=HZ&spyName=sfbpf
 *   Content-Type: multipart/form-data; form file field "profile" = the
 *   gzipped profile.proto; X-Scope-OrgID: TENANT when one is given.
 *
 * "name" is the application name with its tags; Pyroscope appends the
 * profile type (APP.cpu). from/until are unix seconds.
 *
 * Delivery is at least once: a profile leaves the spool only after a 2xx
 * answer. Network errors, timeouts, 5xx, 408, 429 and the configuration
 * errors 3xx (redirects are not followed), 401, 403 and 404 (fixable without
 * losing data) are retried with exponential backoff and jitter, the same
 * profile first; any other answer (400, 413, 422...) refuses that profile for
 * good: it is dropped with a warning rather than blocking every later one. A
 * profile whose answer got lost after the backend stored it is sent again.
 *
 * libcurl does the HTTP: https with the system's CA store, proxies from the
 * usual environment variables, basic auth from the URL (user:password@host),
 * IPv6, keep-alive.
 *
 * The same sender delivers OTLP/HTTP export requests (format PUSH_OTLP):
 * each spooled file is already the gzipped protobuf body of one request,
 * POSTed to the URL as given (http://collector:4318/v1development/profiles)
 * with Content-Type: application/x-protobuf and Content-Encoding: gzip, with
 * the same spool, retries, backoff and exactly these answers' meanings
 * (OTLP/HTTP retries 429, 502, 503 and 504 too, and drops on 400).
 */
#ifndef SFBPF_PUSH_H
#define SFBPF_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/pprof.h"

struct spool;

#define PUSH_DEFAULT_APP "sfbpf"
#define PUSH_MAX_TAG_VALUE 255

enum push_format {
	PUSH_PYROSCOPE = 0, /* the profile, multipart, to URL/ingest?name=... (above) */
	PUSH_OTLP, /* the spooled body as is, to URL (otlp.h) */
};

struct push_opts {
	enum push_format format;
	const char *url; /* server address; "/ingest" is appended unless the path ends so */
	const char *app_name; /* NULL: PUSH_DEFAULT_APP */
	const struct pprof_label *tags; /* the name's {k=v,...}: the profile's labels */
	size_t nr_tags;
	const char *tenant; /* X-Scope-OrgID; NULL: none */
	const char *userpwd; /* basic auth "user:password" (not in the URL: ps shows it) */
	unsigned long sample_rate; /* Hz */
	double timeout; /* seconds per request; 0: 10 */
	double backoff_min, backoff_max; /* seconds between retries; 0: 1 and 60 */
	int verbose; /* 1: a line per delivery, 2: libcurl's trace too */
};

struct push_stats {
	uint64_t delivered;
	uint64_t attempts; /* requests made */
	uint64_t failures; /* attempts to retry */
	uint64_t refused; /* dropped: the backend refused them */
};

struct pusher;

/* Start the sender thread over sp. NULL + errno (EINVAL: bad options). */
struct pusher *pusher__start(struct spool *sp, const struct push_opts *opts);
/* A profile was spooled: send it now unless backing off. */
void pusher__kick(struct pusher *p);
/*
 * Deliver what is spooled for up to timeout seconds (0: just stop), then
 * stop the sender; what is left stays spooled for the next run. Returns the
 * number of profiles left. Safe to call once; pusher__free stops too.
 */
unsigned pusher__stop(struct pusher *p, double timeout);
void pusher__free(struct pusher *p);
void pusher__stats(struct pusher *p, struct push_stats *out);

/* ---- Pyroscope's syntax, for option checking (and tests) ---- */

/* http:// or https://, a host, no query or fragment. NULL if fine, else why not. */
const char *push_check_url(const char *url);
/* Application names: [A-Za-z0-9_.-]{1,128}. */
bool push_valid_app_name(const char *s);
/* Tag keys: [A-Za-z_][A-Za-z0-9_.]{0,63}, not starting with "__" (reserved). */
bool push_valid_tag_key(const char *s);
/* Tag values: 1..PUSH_MAX_TAG_VALUE printable ASCII characters but {},=" and space. */
bool push_valid_tag_value(const char *s);
/* The ingest URL of one profile into buf. Returns its length or -ENAMETOOLONG. */
int push_ingest_url(const struct push_opts *opts, int64_t from, int64_t until, char *buf,
		    size_t size);
/* url with any user:password@ replaced by "***@", for messages. */
void push_redact_url(const char *url, char *buf, size_t size);

#endif /* SFBPF_PUSH_H */
