/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Continuous mode: a profiling service. Every interval the session's
 * aggregated stacks become one gzipped pprof file in the out-dir, labelled
 * with the host and the user's labels, and the aggregator starts over (the
 * loop is the front end's, ../top/continuous_loop.h; what leaves the machine
 * is here).
 *
 *   OUT_DIR/sfbpf-20251121T201500Z.pb.gz   the interval starting then (UTC)
 *
 * Intervals are aligned to multiples of the interval in wall-clock time (a
 * 15 s interval ends at :00, :15, :30, :45), so that a fleet's profiles cover
 * the same windows; the first one is shorter. Files appear whole (see
 * atomicfile.h) and never replace anything. The out-dir keeps the newest
 * keep_files profiles (and at most keep_bytes): older sfbpf-*.pb.gz files are
 * deleted, nothing else in the directory is touched.
 *
 * With a push URL every profile with samples also goes to the spool (see
 * spool.h) and from there to a Pyroscope-compatible backend (see push.h);
 * whatever the spool holds at start (an earlier run's leftovers) goes too.
 * With an OTLP URL every interval with samples also becomes one OTLP
 * profiles export request (otlp.h), gzipped, through a spool of its own
 * (OUT_DIR/spool-otlp) and the same sender; both may run at once. With a
 * metrics address, GET /metrics serves every --stats counter (metrics.h).
 *
 * Signals are the caller's: its handlers set the flags this loop reads.
 *   *exiting  (SIGTERM, SIGINT) ends the current interval early: it is written
 *             and pushed (for up to flush_timeout seconds) before returning;
 *   *reopen   (SIGHUP) reopens the out-dir and the spool directory, recreating
 *             them if they were moved away (log shippers, cleanups); cleared
 *             here. Nothing else is re-read.
 */
#ifndef SFBPF_CONTINUOUS_H
#define SFBPF_CONTINUOUS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/pprof.h"

struct session;

#define CONTINUOUS_MAX_LABELS 16
#define CONTINUOUS_DEFAULT_INTERVAL 15
#define CONTINUOUS_MAX_INTERVAL 3600
#define CONTINUOUS_DEFAULT_KEEP 240 /* an hour of 15 s profiles */
#define CONTINUOUS_DEFAULT_FLUSH 5.0
/*
 * The out-dir when none is given: the service's state (spools, kept
 * profiles), where the FHS puts a program's persistent state and where
 * systemd's StateDirectory=sfbpf makes it. Not /var/spool/sfbpf: the kept
 * profiles are no spool, and one directory is one place to set up and clean.
 */
#define CONTINUOUS_STATE_DIR "/var/lib/sfbpf"

struct continuous_opts {
	unsigned interval; /* seconds per profile, 1..CONTINUOUS_MAX_INTERVAL */
	double duration; /* seconds in all; 0: until *exiting */
	const char *out_dir; /* created (with parents) if missing; NULL: the state directory */
	unsigned keep_files; /* profiles kept in out_dir; 0: none (push only) */
	uint64_t keep_bytes; /* their total size at most (the newest always stays); 0: any */
	const char *hostname; /* the hostname label; NULL: gethostname(); "": none */
	const struct pprof_label *labels; /* more labels (continuous_parse_label) */
	size_t nr_labels;
	/* Push (push.h); push_url NULL: none. */
	const char *push_url;
	const char *app_name; /* NULL: "sfbpf" */
	const char *tenant; /* X-Scope-OrgID; NULL: none */
	const char *auth_file; /* "user:password" for basic auth, read once at start */
	const char *spool_dir; /* NULL: OUT_DIR/spool */
	unsigned spool_files; /* 0: SPOOL_DEFAULT_FILES */
	uint64_t spool_bytes; /* 0: SPOOL_DEFAULT_BYTES */
	double push_timeout; /* per request; 0: 10 s */
	double backoff_max; /* longest wait between retries; 0: 60 s */
	double flush_timeout; /* at exit, seconds to deliver what is spooled */
	/* OTLP export (otlp.h, push.h); otlp_url NULL: none. Same limits, auth, tenant. */
	const char *otlp_url;
	const char *otlp_spool_dir; /* NULL: OUT_DIR/spool-otlp */
	/* Prometheus endpoint (metrics.h): "PORT" or "ADDR:PORT"; NULL: none. */
	const char *metrics_addr;
	int verbose; /* 1: a line per profile written and delivered */
	bool stats; /* "sfbpf: stat continuous_* / push_* / spool_*" lines on stderr at exit */
	const volatile sig_atomic_t *exiting;
	volatile sig_atomic_t *reopen; /* may be NULL */
};

/*
 * Continuous mode's outputs, which the front end's interval loop
 * (../top/continuous_loop.h) writes to: the out-dir, the spools and their
 * senders, the metrics endpoint, for the profiles of session s (its mode
 * gives their type, its cgroups their labels, its counters the metrics).
 *
 * continuous__open() checks opts and opens them all: 0, or a negative errno
 * (a line on stderr says why; *cp is then NULL). continuous__emit() writes
 * the interval [start_ns, end_ns) of snap (samples of them; snap NULL: no
 * memory for it) as a profile file, spooled and pushed, and rotates the
 * out-dir; its failures (a full disk, a dead backend) are counted warnings:
 * a service keeps running. continuous__reopen() reopens the out-dir and the
 * spools (*opts->reopen). continuous__serve_metrics() answers a waiting
 * scrape. continuous__close() delivers what is spooled (for up to
 * flush_timeout seconds), prints the --stats lines and frees everything.
 */
struct continuous;
struct snapshot;

int continuous__open(struct continuous **cp, struct session *s, const struct continuous_opts *opts);
void continuous__emit(struct continuous *c, const struct snapshot *snap, uint64_t samples,
		      int64_t start_ns, int64_t end_ns);
void continuous__reopen(struct continuous *c);
void continuous__serve_metrics(struct continuous *c);
void continuous__close(struct continuous *c);

/*
 * Option parsing for the front end. "key=value" is split in place (arg is
 * modified and must outlive the run); the key follows Pyroscope's tag-key
 * rules, the value its tag-value rules (push.h), so that a label that works
 * in files also works pushed. Returns 0, or -EINVAL and *why.
 */
int continuous_parse_label(char *arg, struct pprof_label *out, const char **why);
/* "512M", "2G", "100k", "4096": bytes (powers of 1024). 0 or -EINVAL. */
int continuous_parse_size(const char *arg, uint64_t *out);

/*
 * The state directory's path: $STATE_DIRECTORY (set by systemd's
 * StateDirectory=; its first path) if absolute, else CONTINUOUS_STATE_DIR.
 * 0 or -ENAMETOOLONG.
 */
int continuous_state_dir(char *buf, size_t size);
/*
 * Opens the state directory, making it (mode 0700, not its parents) if
 * missing. Refused (-EPERM, -ELOOP or -ENOTDIR, a line on stderr says why):
 * a symlink, anything but a directory, a directory owned by another uid than
 * ours or with any permission for group or others. The directory's fd, or a
 * negative errno.
 */
int continuous_state_dir_open(const char *path);

#endif /* SFBPF_CONTINUOUS_H */
