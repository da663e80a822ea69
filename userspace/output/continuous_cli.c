// SPDX-License-Identifier: GPL-2.0-or-later
/* Continuous mode's command-line options (see continuous_cli.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/continuous_cli.h"
#include "output/metrics.h"
#include "output/push.h"

/* Keys of this child parser: clear of the front end's characters and OPT_* values. */
enum {
	OPT_CONTINUOUS = 0x2000,
	OPT_INTERVAL,
	OPT_OUT_DIR,
	OPT_KEEP,
	OPT_KEEP_SIZE,
	OPT_LABEL,
	OPT_HOSTNAME,
	OPT_PUSH,
	OPT_APP_NAME,
	OPT_TENANT,
	OPT_AUTH_FILE,
	OPT_SPOOL_DIR,
	OPT_SPOOL_MAX,
	OPT_SPOOL_SIZE,
	OPT_PUSH_TIMEOUT,
	OPT_FLUSH_TIMEOUT,
	OPT_OTLP,
	OPT_OTLP_SPOOL_DIR,
	OPT_METRICS,
};

struct continuous_cli continuous_cli = {
	.opts = {
		.interval = CONTINUOUS_DEFAULT_INTERVAL,
		.keep_files = CONTINUOUS_DEFAULT_KEEP,
		.flush_timeout = CONTINUOUS_DEFAULT_FLUSH,
		.labels = continuous_cli.labels,
	},
};

static const struct argp_option options[] = {
	{ "continuous", OPT_CONTINUOUS, NULL, 0,
	  "Run as a profiling service: a pprof file every interval into --out-dir", 1 },
	{ "out-dir", OPT_OUT_DIR, "DIR", 0,
	  "Where the profiles go (created if missing; default with --push or --otlp: the state "
	  "directory " CONTINUOUS_STATE_DIR ", keeping none unless --keep)",
	  1 },
	{ "interval", OPT_INTERVAL, "SECS", 0,
	  "Seconds per profile, aligned to the clock (default 15)", 1 },
	{ "keep", OPT_KEEP, "N", 0,
	  "Profiles kept in the out-dir, older ones deleted (default 240; 0, with --push: none)",
	  1 },
	{ "keep-size", OPT_KEEP_SIZE, "SIZE", 0, "...and at most this much of them (e.g. 1G)", 1 },
	{ "label", OPT_LABEL, "KEY=VALUE", 0,
	  "A label on every sample and pushed profile (repeatable; hostname is added)", 1 },
	{ "hostname", OPT_HOSTNAME, "NAME", 0, "The hostname label (default: this host's name)",
	  1 },
	{ NULL, 0, NULL, 0, "Pushing to Pyroscope (or anything speaking its ingest API):", 2 },
	{ "push", OPT_PUSH, "URL", 0,
	  "Send each profile to this Pyroscope-compatible server (URL/ingest)", 2 },
	{ "app-name", OPT_APP_NAME, "NAME", 0, "Pyroscope application name (default sfbpf)", 2 },
	{ "tenant", OPT_TENANT, "ID", 0, "Pyroscope tenant (the X-Scope-OrgID header)", 2 },
	{ "push-auth-file", OPT_AUTH_FILE, "FILE", 0,
	  "Basic-auth credentials, \"user:password\" on the first line (mode 600)", 2 },
	{ "spool-dir", OPT_SPOOL_DIR, "DIR", 0,
	  "Undelivered profiles wait here (default OUT_DIR/spool)", 2 },
	{ "spool-max", OPT_SPOOL_MAX, "N", 0,
	  "At most N undelivered profiles, the oldest dropped first (default 1440)", 2 },
	{ "spool-size", OPT_SPOOL_SIZE, "SIZE", 0, "...and at most this much (default 512M)", 2 },
	{ "push-timeout", OPT_PUSH_TIMEOUT, "SECS", 0, "Seconds per request (default 10)", 2 },
	{ "flush-timeout", OPT_FLUSH_TIMEOUT, "SECS", 0,
	  "At exit, seconds to deliver what is spooled (default 5)", 2 },
	{ NULL, 0, NULL, 0, "OpenTelemetry export and self-monitoring:", 3 },
	{ "otlp", OPT_OTLP, "URL", 0,
	  "Export each interval as an OTLP/HTTP profiles request to URL (e.g. "
	  "http://collector:4318/v1development/profiles); the --push spool, retry and limit "
	  "options apply too",
	  3 },
	{ "otlp-spool-dir", OPT_OTLP_SPOOL_DIR, "DIR", 0,
	  "Undelivered OTLP requests wait here (default OUT_DIR/spool-otlp)", 3 },
	{ "metrics", OPT_METRICS, "[ADDR:]PORT", 0,
	  "Serve Prometheus metrics on http://ADDR:PORT/metrics, from --continuous or the live "
	  "view (default address: loopback)",
	  3 },
	{},
};

static unsigned long number(const char *arg, unsigned long max, const char *what,
			    struct argp_state *state)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || arg[0] < '0' || arg[0] > '9' || v > max)
		argp_error(state, "invalid %s: %s (0 to %lu)", what, arg, max);
	return v;
}

static double seconds(const char *arg, const char *what, struct argp_state *state)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || !(v >= 0 && v <= 3600))
		argp_error(state, "invalid %s: %s (0 to 3600 seconds)", what, arg);
	return v;
}

static uint64_t size(const char *arg, const char *what, struct argp_state *state)
{
	uint64_t v;

	if (continuous_parse_size(arg, &v))
		argp_error(state, "invalid %s: %s (bytes, or with K, M, G, T)", what, arg);
	return v;
}

static void label(char *arg, struct argp_state *state)
{
	struct continuous_opts *o = &continuous_cli.opts;
	const char *why;

	if (o->nr_labels == CONTINUOUS_MAX_LABELS)
		argp_error(state, "at most %d labels", CONTINUOUS_MAX_LABELS);
	/* Split in place: argv outlives the run. */
	if (continuous_parse_label(arg, &continuous_cli.labels[o->nr_labels], &why))
		argp_error(state, "invalid --label: %s", why);
	o->nr_labels++;
}

static void push_arg(int key, char *arg, struct argp_state *state)
{
	struct continuous_opts *o = &continuous_cli.opts;
	const char *why;

	switch (key) {
	case OPT_PUSH:
		why = push_check_url(arg);
		if (why)
			argp_error(state, "invalid --push URL %s: %s", arg, why);
		o->push_url = arg;
		break;
	case OPT_APP_NAME:
		if (!push_valid_app_name(arg))
			argp_error(state, "invalid --app-name: %s (letters, digits, _ . -)", arg);
		o->app_name = arg;
		break;
	case OPT_TENANT:
		if (!push_valid_tag_value(arg))
			argp_error(state, "invalid --tenant: %s", arg);
		o->tenant = arg;
		break;
	case OPT_AUTH_FILE:
		o->auth_file = arg;
		break;
	case OPT_SPOOL_DIR:
		o->spool_dir = arg;
		break;
	case OPT_SPOOL_MAX:
		o->spool_files = number(arg, 1000000, "--spool-max", state);
		if (!o->spool_files)
			argp_error(state, "--spool-max must be at least 1");
		break;
	case OPT_SPOOL_SIZE:
		o->spool_bytes = size(arg, "--spool-size", state);
		break;
	case OPT_PUSH_TIMEOUT:
		o->push_timeout = seconds(arg, "--push-timeout", state);
		break;
	case OPT_FLUSH_TIMEOUT:
		o->flush_timeout = seconds(arg, "--flush-timeout", state);
		break;
	}
}

static void otlp_arg(int key, char *arg, struct argp_state *state)
{
	struct continuous_opts *o = &continuous_cli.opts;
	char host[256], port[16];
	const char *why;

	switch (key) {
	case OPT_OTLP:
		why = push_check_url(arg);
		if (why)
			argp_error(state, "invalid --otlp URL %s: %s", arg, why);
		o->otlp_url = arg;
		break;
	case OPT_OTLP_SPOOL_DIR:
		o->otlp_spool_dir = arg;
		break;
	case OPT_METRICS:
		if (metrics_parse_addr(arg, host, sizeof(host), port, sizeof(port)))
			argp_error(state, "invalid --metrics %s: PORT, ADDR:PORT or [ADDR]:PORT",
				   arg);
		o->metrics_addr = arg;
		break;
	}
}

/* Options that mean nothing without --continuous, or without --push. */
static void check(struct argp_state *state, bool used, bool push_used, bool keep_used)
{
	struct continuous_opts *o = &continuous_cli.opts;

	if (!continuous_cli.enabled) {
		if (used)
			argp_error(state, "--out-dir, --push and the like need --continuous");
		return;
	}
	if (o->out_dir && !o->out_dir[0])
		argp_error(state, "--out-dir needs a directory");
	if (!o->out_dir && !o->push_url && !o->otlp_url)
		argp_error(state, "--continuous needs --out-dir DIR, or --push or --otlp URL");
	/* A service that only pushes keeps nothing behind: the state directory holds its spools. */
	if (!o->out_dir && !keep_used)
		o->keep_files = 0;
	if (push_used && !o->push_url && !o->otlp_url)
		argp_error(state, "--app-name, --tenant, --push-auth-file, --spool-* and the "
				  "timeouts need --push or --otlp");
	if (!o->keep_files && !o->push_url && !o->otlp_url)
		argp_error(state, "--keep 0 without --push or --otlp would keep nothing");
	if (o->otlp_spool_dir && !o->otlp_url)
		argp_error(state, "--otlp-spool-dir needs --otlp");
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	static bool used, push_used, keep_used;
	struct continuous_opts *o = &continuous_cli.opts;

	/* --metrics serves the live view too (sfbpf-top.c refuses runs that only print or write). */
	used |= key > OPT_CONTINUOUS && key < OPT_METRICS;
	push_used |= key >= OPT_APP_NAME && key <= OPT_FLUSH_TIMEOUT;
	keep_used |= key == OPT_KEEP || key == OPT_KEEP_SIZE;
	switch (key) {
	case OPT_CONTINUOUS:
		continuous_cli.enabled = true;
		break;
	case OPT_OUT_DIR:
		o->out_dir = arg;
		break;
	case OPT_INTERVAL:
		o->interval = number(arg, CONTINUOUS_MAX_INTERVAL, "--interval", state);
		if (!o->interval)
			argp_error(state, "--interval must be at least 1 second");
		break;
	case OPT_KEEP:
		o->keep_files = number(arg, 1000000, "--keep", state);
		break;
	case OPT_KEEP_SIZE:
		o->keep_bytes = size(arg, "--keep-size", state);
		break;
	case OPT_LABEL:
		label(arg, state);
		break;
	case OPT_HOSTNAME:
		if (arg[0] && !push_valid_tag_value(arg))
			argp_error(state, "invalid --hostname: %s", arg);
		o->hostname = arg;
		break;
	case OPT_PUSH ... OPT_FLUSH_TIMEOUT:
		push_arg(key, arg, state);
		break;
	case OPT_OTLP ... OPT_METRICS:
		otlp_arg(key, arg, state);
		break;
	case ARGP_KEY_END:
		check(state, used, push_used, keep_used);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp continuous_argp = { options, parse, NULL, NULL, NULL, NULL, NULL };
