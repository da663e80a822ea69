// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Continuous mode's outputs (see continuous.h): profile files and their
 * rotation, the spools and senders, the metrics endpoint. Pushing is
 * push.c's, spooling spool.c's; the interval loop is the front end's
 * (../top/continuous_loop.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "output/atomicfile.h"
#include "output/continuous.h"
#include "output/metrics.h"
#include "output/otlp.h"
#include "output/outputs.h"
#include "output/pprof.h"
#include "output/push.h"
#include "profile/session.h"
#include "profile/snapshot.h"
#include "output/spool.h"
#include "util/log.h"
#include "util/clock.h"
#include "util/vec.h"

#define NSEC 1000000000LL
#define PREFIX "sfbpf-"
#define SUFFIX ".pb.gz"
#define STAMP_LEN 16 /* 20251121T201500Z */
#define MAX_SEQ 1000

struct continuous {
	const struct continuous_opts *o;
	struct session *s;
	const char *out_dir; /* o->out_dir, or the state directory */
	bool state_dir; /* out_dir is the state directory: checked at every open */
	char state_path[4096];
	int outfd;
	struct spool *sp;
	struct pusher *push;
	struct spool *osp; /* OTLP */
	struct pusher *opush;
	struct otlp_opts oo;
	char *ospool_path;
	struct metrics *metrics;
	struct pprof_opts po;
	struct pprof_label labels[CONTINUOUS_MAX_LABELS + 1];
	char hostname[PUSH_MAX_TAG_VALUE + 1];
	char *spool_path;
	char userpwd[1024];
	uint64_t written, empty, write_errors, spool_errors, rotated;
	uint64_t otlp_errors, otlp_spool_errors;
};

/* ---- options --------------------------------------------------------------------- */

int continuous_parse_label(char *arg, struct pprof_label *out, const char **why)
{
	char *eq = strchr(arg, '=');

	if (!eq) {
		*why = "expected key=value";
		return -EINVAL;
	}
	*eq = '\0';
	if (!push_valid_tag_key(arg)) {
		*why = "keys are letters, digits, '_' and '.', not starting with a digit or \"__\"";
		return -EINVAL;
	}
	if (!push_valid_tag_value(eq + 1)) {
		*why = "values are 1-255 printable ASCII characters without spaces, quotes or {},=";
		return -EINVAL;
	}
	out->key = arg;
	out->value = eq + 1;
	return 0;
}

int continuous_parse_size(const char *arg, uint64_t *out)
{
	static const char units[] = "kmgt";
	const char *u;
	char *end;
	uint64_t v;
	int shift;

	if (*arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end | 0x20);
		if (!u || (end[1] && strcasecmp(end + 1, "b") && strcasecmp(end + 1, "ib")))
			return -EINVAL;
		shift = 10 * (int)(u - units + 1);
		if (v > UINT64_MAX >> shift)
			return -EINVAL;
		v <<= shift;
	}
	*out = v;
	return 0;
}

/* The hostname as a tag value: anything Pyroscope would refuse becomes '_'. */
static void host_label(struct continuous *c)
{
	char *p;

	if (c->o->hostname) {
		snprintf(c->hostname, sizeof(c->hostname), "%s", c->o->hostname);
		return;
	}
	if (gethostname(c->hostname, sizeof(c->hostname) - 1))
		snprintf(c->hostname, sizeof(c->hostname), "unknown");
	c->hostname[sizeof(c->hostname) - 1] = '\0';
	for (p = c->hostname; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || strchr("{},=\"", *p))
			*p = '_';
}

/* hostname first unless the user gave one, then the user's labels. */
static size_t build_labels(struct continuous *c)
{
	size_t n = 0, i;
	bool user_host = false;

	for (i = 0; i < c->o->nr_labels; i++)
		user_host |= !strcmp(c->o->labels[i].key, "hostname");
	host_label(c);
	if (!user_host && c->hostname[0])
		c->labels[n++] = (struct pprof_label){ "hostname", c->hostname };
	for (i = 0; i < c->o->nr_labels && n < CONTINUOUS_MAX_LABELS; i++)
		c->labels[n++] = c->o->labels[i];
	return n;
}

/* The session's mode decides the profile's type (see pprof.h, session.h). */
static void pprof_setup(struct continuous *c)
{
	outputs__pprof_opts(c->s, &c->po);
	c->po.labels = c->labels;
	c->po.nr_labels = build_labels(c);
}

/* ---- files ------------------------------------------------------------------------- */

/* sfbpf-STAMP[-N].pb.gz: the sequence number, or -1 if the name is not ours. */
static int profile_seq(const char *name)
{
	static const char stamp[] = "########T######Z"; /* #: a digit */
	const char *p = name + strlen(PREFIX) + STAMP_LEN;
	const char *s = name + strlen(PREFIX);
	int seq = 0, i;

	if (strncmp(name, PREFIX, strlen(PREFIX)) || strlen(name) < strlen(PREFIX) + STAMP_LEN)
		return -1;
	for (i = 0; i < STAMP_LEN; i++)
		if (stamp[i] == '#' ? s[i] < '0' || s[i] > '9' : s[i] != stamp[i])
			return -1;
	if (*p == '-') {
		for (p++; *p >= '0' && *p <= '9' && seq < MAX_SEQ; p++)
			seq = seq * 10 + (*p - '0');
		if (!seq)
			return -1;
	}
	return strcmp(p, SUFFIX) ? -1 : seq;
}

static void profile_name(int64_t start_ns, int seq, char *buf, size_t size)
{
	time_t t = start_ns / NSEC;
	char stamp[STAMP_LEN + 1];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (seq)
		snprintf(buf, size, PREFIX "%s-%d" SUFFIX, stamp, seq);
	else
		snprintf(buf, size, PREFIX "%s" SUFFIX, stamp);
}

/* The profile into a new file named for its start; name gets the name used. */
static int write_profile(struct continuous *c, const struct snapshot *snap, int64_t start_ns,
			 char *name, size_t size)
{
	struct atomicfile af;
	int err, seq, fd;
	FILE *f;

	err = atomicfile__open(&af, c->outfd);
	if (err)
		return err;
	fd = dup(af.fd);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		atomicfile__abort(&af);
		return err;
	}
	err = pprof__write_file(snap, &c->po, f);
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (err) {
		atomicfile__abort(&af);
		return err;
	}
	for (seq = 0, err = -EEXIST; seq < MAX_SEQ && err == -EEXIST; seq++) {
		profile_name(start_ns, seq, name, size);
		err = atomicfile__commit(&af, name);
	}
	if (err == -EEXIST)
		atomicfile__abort(&af);
	return err;
}

struct old_file {
	char name[64];
	int seq;
	uint64_t size;
};

static int old_cmp(const void *a, const void *b)
{
	const struct old_file *x = a, *y = b;
	int r = strncmp(x->name, y->name, strlen(PREFIX) + STAMP_LEN);

	return r ? r : x->seq - y->seq;
}

/* Our profiles in the out-dir, oldest first. */
static int list_profiles(int dirfd, struct old_file **out, size_t *count)
{
	struct old_file *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int seq;

	dir = atomicfile_dir_list(dirfd);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		seq = profile_seq(d->d_name);
		if (seq < 0 || strlen(d->d_name) >= sizeof(v->name) ||
		    fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (VEC_RESERVE(v, cap, n + 1, 64)) {
			free(v);
			closedir(dir);
			return -ENOMEM;
		}
		memcpy(v[n].name, d->d_name, strlen(d->d_name) + 1); /* length checked above */
		v[n].seq = seq;
		v[n++].size = st.st_size;
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), old_cmp);
	*out = v;
	*count = n;
	return 0;
}

/* Keep the newest keep_files profiles, and no more than keep_bytes of them. */
static void rotate(struct continuous *c)
{
	struct old_file *v = NULL;
	uint64_t bytes = 0;
	size_t n = 0, i;

	if (list_profiles(c->outfd, &v, &n))
		return;
	for (i = 0; i < n; i++)
		bytes += v[i].size;
	for (i = 0; i < n; i++) {
		bool too_many = n - i > c->o->keep_files;
		bool too_big = c->o->keep_bytes && bytes > c->o->keep_bytes && i + 1 < n;

		if (!too_many && !too_big)
			break;
		if (!unlinkat(c->outfd, v[i].name, 0))
			c->rotated++;
		bytes -= v[i].size;
	}
	free(v);
}

/* ---- outputs ---------------------------------------------------------------------- */

static int open_outputs(struct continuous *c)
{
	int fd, err;

	if (c->state_dir) {
		fd = continuous_state_dir_open(c->out_dir); /* says why itself */
		if (fd < 0)
			return fd;
	} else {
		fd = atomicfile_dir_open(c->out_dir, false);
	}
	if (fd < 0) {
		pr_warn("cannot open the out-dir %s: %s", c->out_dir, strerror(-fd));
		return fd;
	}
	if (c->outfd >= 0)
		close(c->outfd);
	c->outfd = fd;
	if (c->sp) {
		err = spool__reopen(c->sp);
		if (err)
			pr_warn("cannot reopen the spool %s: %s", spool__path(c->sp),
				strerror(-err));
	}
	if (c->osp) {
		err = spool__reopen(c->osp);
		if (err)
			pr_warn("cannot reopen the spool %s: %s", spool__path(c->osp),
				strerror(-err));
	}
	return 0;
}

/*
 * Credentials from a file, not the command line (any user can read that in
 * /proc/PID/cmdline): its first line, "user:password".
 */
static int read_auth(struct continuous *c)
{
	struct stat st;
	int fd, err;
	ssize_t n;

	fd = open(c->o->auth_file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		pr_warn("cannot read %s: %s", c->o->auth_file, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (st.st_mode & 077)
		pr_warn("warning: %s is readable by others (chmod 600)", c->o->auth_file);
	n = read(fd, c->userpwd, sizeof(c->userpwd) - 1);
	close(fd);
	c->userpwd[n > 0 ? n : 0] = '\0';
	c->userpwd[strcspn(c->userpwd, "\r\n")] = '\0';
	if (!strchr(c->userpwd, ':')) {
		pr_warn("%s: expected user:password on the first line", c->o->auth_file);
		return -EINVAL;
	}
	return 0;
}

/* Open a spool directory: the user's, else our own subdirectory of the out-dir. */
static struct spool *open_spool(struct continuous *c, const char *dir, const char *sub, char **path)
{
	const struct continuous_opts *o = c->o;
	struct spool_limits lim = { .max_files = o->spool_files, .max_bytes = o->spool_bytes };
	struct spool *sp;

	if (dir)
		*path = strdup(dir);
	else if (asprintf(path, "%s/%s", c->out_dir, sub) < 0)
		*path = NULL;
	if (!*path) {
		errno = ENOMEM;
		return NULL;
	}
	/* Our own subdirectory is never a symlink; a directory the user named may be. */
	sp = spool__open(*path, !dir, &lim);
	if (!sp)
		pr_warn("cannot open the spool %s: %s", *path, strerror(errno));
	return sp;
}

/* A spool and the sender that empties it (what: "pushing", "exporting"). */
static int start_sender(struct continuous *c, const char *dir, const char *sub, char **path,
			const struct push_opts *po, const char *what, struct spool **sp,
			struct pusher **sender)
{
	int err;

	*sp = open_spool(c, dir, sub, path);
	if (!*sp)
		return -errno;
	*sender = pusher__start(*sp, po);
	if (!*sender) {
		err = -errno;
		pr_warn("cannot start %s to %s: %s", what, po->url, strerror(-err));
		return err;
	}
	return 0;
}

/* OTLP requests: the pprof options plus the host; the user's labels are resource attributes. */
static int start_otlp(struct continuous *c)
{
	const struct continuous_opts *o = c->o;
	struct push_opts po = {
		.format = PUSH_OTLP,
		.url = o->otlp_url,
		.tenant = o->tenant,
		.userpwd = o->auth_file ? c->userpwd : NULL,
		.timeout = o->push_timeout,
		.backoff_max = o->backoff_max,
		.verbose = o->verbose,
	};

	if (o->auth_file && !c->userpwd[0] && read_auth(c))
		return -EINVAL;
	c->oo.po = c->po;
	c->oo.po.labels = o->labels;
	c->oo.po.nr_labels = o->nr_labels;
	c->oo.hostname = c->hostname;
	return start_sender(c, o->otlp_spool_dir, "spool-otlp", &c->ospool_path, &po, "exporting",
			    &c->osp, &c->opush);
}

/* The interval's OTLP request into its spool; before the aggregator starts over. */
static void spool_otlp(struct continuous *c, const struct snapshot *snap, int64_t from,
		       int64_t until)
{
	void *raw = NULL, *gz = NULL;
	size_t n, gn;
	int err;

	c->oo.po.time_nanos = c->po.time_nanos;
	c->oo.po.duration_nanos = c->po.duration_nanos;
	err = snap ? otlp__encode(snap, &c->oo, &raw, &n) : -ENOMEM;
	if (!err)
		err = otlp_gzip(raw, n, &gz, &gn);
	free(raw);
	if (err) {
		c->otlp_errors++;
		pr_warn("cannot encode the OTLP request of %" PRId64 "..%" PRId64 ": %s; lost it",
			from, until, strerror(-err));
		return;
	}
	err = spool__add_data(c->osp, gz, gn, from, until);
	free(gz);
	if (err) {
		c->otlp_spool_errors++;
		pr_warn("cannot spool the OTLP request of %" PRId64 "..%" PRId64 " into %s: %s",
			from, until, spool__path(c->osp), strerror(-err));
		return;
	}
	pusher__kick(c->opush);
}

/* Pushed profiles carry the same labels as the files, as the name's tags. */
static int start_push(struct continuous *c)
{
	const struct continuous_opts *o = c->o;
	struct push_opts po = {
		.url = o->push_url,
		.app_name = o->app_name,
		.tags = c->labels,
		.nr_tags = c->po.nr_labels,
		.tenant = o->tenant,
		.userpwd = o->auth_file ? c->userpwd : NULL,
		.sample_rate = session__opts(c->s)->freq ? session__opts(c->s)->freq : 100,
		.timeout = o->push_timeout,
		.backoff_max = o->backoff_max,
		.verbose = o->verbose,
	};

	if (o->auth_file && read_auth(c))
		return -EINVAL;
	return start_sender(c, o->spool_dir, "spool", &c->spool_path, &po, "pushing", &c->sp,
			    &c->push);
}

/* name = prefix + what, to cb. */
static void stat_as(session_stat_cb cb, void *ctx, const char *pfx, const char *what, uint64_t v,
		    bool gauge)
{
	char name[64];

	snprintf(name, sizeof(name), "%s%s", pfx, what);
	cb(ctx, name, v, gauge);
}

/*
 * One sender's counters and its spool's state: push_* and spool_* for
 * Pyroscope (the names --stats always had), otlp_* and otlp_spool_* for OTLP.
 */
static void sender_stats(struct pusher *p, struct spool *sp, bool otlp, uint64_t errors,
			 session_stat_cb cb, void *ctx)
{
	const char *pfx = otlp ? "otlp_" : "push_", *spfx = otlp ? "otlp_spool_" : "spool_";
	struct spool_stats ss;
	struct push_stats ps;

	pusher__stats(p, &ps);
	spool__stats(sp, &ss);
	stat_as(cb, ctx, pfx, "delivered", ps.delivered, false);
	stat_as(cb, ctx, pfx, "attempts", ps.attempts, false);
	stat_as(cb, ctx, pfx, "failures", ps.failures, false);
	stat_as(cb, ctx, pfx, "refused", ps.refused, false);
	stat_as(cb, ctx, spfx, "errors", errors, false);
	stat_as(cb, ctx, spfx, "dropped", ss.dropped, false);
	stat_as(cb, ctx, spfx, "left", ss.files, true);
	stat_as(cb, ctx, spfx, "bytes", ss.bytes, true);
}

/* Continuous mode's own counters, for --stats and the metrics alike. */
static void for_each_stat(struct continuous *c, session_stat_cb cb, void *ctx)
{
	cb(ctx, "continuous_profiles", c->written, false);
	cb(ctx, "continuous_empty", c->empty, false);
	cb(ctx, "continuous_write_errors", c->write_errors, false);
	cb(ctx, "continuous_rotated", c->rotated, false);
	if (c->push)
		sender_stats(c->push, c->sp, false, c->spool_errors, cb, ctx);
	if (c->opush) {
		cb(ctx, "otlp_encode_errors", c->otlp_errors, false);
		sender_stats(c->opush, c->osp, true, c->otlp_spool_errors, cb, ctx);
	}
	if (c->metrics)
		metrics__for_each_stat(c->metrics, cb, ctx);
}

static void stat_line(void *ctx, const char *name, uint64_t v, bool gauge)
{
	(void)ctx, (void)gauge;
	pr_warn("stat %s %" PRIu64, name, v);
}

/* A scrape waits: the session's counters and ours, rendered here (their only reader). */
void continuous__serve_metrics(struct continuous *c)
{
	struct metrics_text t = { 0 };

	if (!metrics__wanted(c->metrics))
		return;
	session__for_each_stat(c->s, metrics_put_cb, &t);
	for_each_stat(c, metrics_put_cb, &t);
	metrics__publish(c->metrics, &t);
}

/*
 * Both senders flush at once: the deadline is the same for both, so the
 * second must not wait for the first one's whole flush timeout.
 */
static void stop_senders(struct continuous *c)
{
	double end = clock__mono_s() + c->o->flush_timeout, left_s;
	unsigned left;

	if (c->push) {
		left = pusher__stop(c->push, c->o->flush_timeout);
		if (left)
			pr_warn("push: %u profiles left in %s for the next run", left,
				spool__path(c->sp));
	}
	if (c->opush) {
		left_s = end - clock__mono_s();
		left = pusher__stop(c->opush, left_s > 0 ? left_s : 0);
		if (left)
			pr_warn("otlp: %u requests left in %s for the next run", left,
				spool__path(c->osp));
	}
}

void continuous__emit(struct continuous *c, const struct snapshot *snap, uint64_t samples,
		      int64_t start_ns, int64_t end_ns)
{
	int64_t from = start_ns / NSEC, until = (end_ns + NSEC - 1) / NSEC;
	char name[80];
	int err = snap ? 0 : -ENOMEM;

	until = until > from ? until : from + 1;
	c->po.time_nanos = start_ns;
	c->po.duration_nanos = end_ns > start_ns ? end_ns - start_ns : 0;
	if (!err)
		err = write_profile(c, snap, start_ns, name, sizeof(name));
	if (err == -ENOENT || err == -ESTALE) {
		/* The out-dir went away: make it again, once. */
		if (!open_outputs(c))
			err = write_profile(c, snap, start_ns, name, sizeof(name));
	}
	if (c->opush && samples)
		spool_otlp(c, snap, from, until);
	if (err) {
		c->write_errors++;
		pr_warn("cannot write the profile of %" PRId64 "..%" PRId64 " into %s: %s; lost it",
			from, until, c->out_dir, strerror(-err));
		return;
	}
	c->written++;
	c->empty += !samples;
	if (c->o->verbose)
		pr_warn("continuous: wrote %s from=%" PRId64 " until=%" PRId64
			" duration_ms=%" PRId64 " samples=%" PRIu64,
			name, from, until, c->po.duration_nanos / 1000000, samples);
	if (c->push && samples) {
		err = spool__add(c->sp, c->outfd, name, from, until);
		if (err) {
			c->spool_errors++;
			pr_warn("cannot spool %s into %s: %s; not pushed", name, spool__path(c->sp),
				strerror(-err));
		} else {
			pusher__kick(c->push);
		}
	}
	rotate(c);
}

void continuous__reopen(struct continuous *c)
{
	if (c->o->verbose)
		pr_warn("continuous: reopening outputs");
	open_outputs(c);
}

static void free_outputs(struct continuous *c)
{
	metrics__stop(c->metrics);
	pusher__free(c->push);
	pusher__free(c->opush);
	spool__close(c->osp);
	free(c->ospool_path);
	explicit_bzero(c->userpwd, sizeof(c->userpwd));
	spool__close(c->sp);
	free(c->spool_path);
	if (c->outfd >= 0)
		close(c->outfd);
	free(c);
}

int continuous__open(struct continuous **cp, struct session *s, const struct continuous_opts *o)
{
	struct continuous *c;
	int err;

	*cp = NULL;
	if ((o->out_dir && !o->out_dir[0]) || !o->interval ||
	    o->interval > CONTINUOUS_MAX_INTERVAL || o->nr_labels > CONTINUOUS_MAX_LABELS ||
	    !o->exiting)
		return -EINVAL;
	if (!o->keep_files && !o->push_url && !o->otlp_url) {
		pr_warn("keeping no profiles and pushing none would keep nothing");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct continuous){ .o = o, .s = s, .outfd = -1, .out_dir = o->out_dir };
	if (!c->out_dir) {
		err = continuous_state_dir(c->state_path, sizeof(c->state_path));
		if (err)
			goto fail;
		c->out_dir = c->state_path;
		c->state_dir = true;
		if (o->verbose)
			pr_warn("continuous: state directory %s", c->out_dir);
	}
	pprof_setup(c);
	err = open_outputs(c);
	if (!err && o->push_url)
		err = start_push(c);
	if (!err && o->otlp_url)
		err = start_otlp(c);
	if (!err && o->metrics_addr) {
		c->metrics = metrics__start(o->metrics_addr);
		err = c->metrics ? 0 : -errno;
	}
	if (err)
		goto fail;
	*cp = c;
	return 0;
fail:
	free_outputs(c);
	return err;
}

void continuous__close(struct continuous *c)
{
	if (!c)
		return;
	stop_senders(c);
	if (c->o->stats)
		for_each_stat(c, stat_line, NULL);
	free_outputs(c);
}
