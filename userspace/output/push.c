// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Push to a Pyroscope-compatible ingest endpoint (see push.h). One thread
 * takes the spool's oldest profile, sends it, and either removes it or backs
 * off: failures are the backend's state, not the profile's, so the same
 * profile goes first again and nothing overtakes it.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "output/push.h"
#include "output/spool.h"
#include "util/dynlib.h"
#include "util/log.h"
#include "util/clock.h"

#define DEFAULT_TIMEOUT 10.0
#define DEFAULT_BACKOFF_MIN 1.0
#define DEFAULT_BACKOFF_MAX 60.0
#define CONNECT_TIMEOUT_MS 5000L
#define MAX_URL 8192
#define BODY_EXCERPT 160
#define REMIND_SECS 600.0 /* while failing, say so again this often */

enum outcome { SENT, RETRY, REFUSED, UNREADABLE };

/*
 * libcurl, loaded by the first pusher (util/dynlib.h: not every sfbpf-top
 * pushes, and linked it costs every one of them its TLS stack).
 */
static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_global_cleanup) *global_cleanup;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
	__typeof__(curl_mime_init) *mime_init;
	__typeof__(curl_mime_addpart) *mime_addpart;
	__typeof__(curl_mime_name) *mime_name;
	__typeof__(curl_mime_filename) *mime_filename;
	__typeof__(curl_mime_type) *mime_type;
	__typeof__(curl_mime_data) *mime_data;
	__typeof__(curl_mime_free) *mime_free;
} lc;

static const struct dynlib_fn lc_fns[] = {
	{ "curl_global_init", (void **)&lc.global_init },
	{ "curl_global_cleanup", (void **)&lc.global_cleanup },
	{ "curl_easy_init", (void **)&lc.easy_init },
	{ "curl_easy_setopt", (void **)&lc.easy_setopt },
	{ "curl_easy_perform", (void **)&lc.easy_perform },
	{ "curl_easy_getinfo", (void **)&lc.easy_getinfo },
	{ "curl_easy_cleanup", (void **)&lc.easy_cleanup },
	{ "curl_easy_strerror", (void **)&lc.easy_strerror },
	{ "curl_slist_append", (void **)&lc.slist_append },
	{ "curl_slist_free_all", (void **)&lc.slist_free_all },
	{ "curl_mime_init", (void **)&lc.mime_init },
	{ "curl_mime_addpart", (void **)&lc.mime_addpart },
	{ "curl_mime_name", (void **)&lc.mime_name },
	{ "curl_mime_filename", (void **)&lc.mime_filename },
	{ "curl_mime_type", (void **)&lc.mime_type },
	{ "curl_mime_data", (void **)&lc.mime_data },
	{ "curl_mime_free", (void **)&lc.mime_free },
};

struct pusher {
	struct push_opts opts;
	const char *name; /* in messages: "push" or "otlp" */
	char *url_redacted;
	struct spool *sp;
	CURL *curl;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
	char body[BODY_EXCERPT + 1]; /* start of the last answer, for messages */
	size_t body_len;
	pthread_t thread;
	bool curl_ready, started, stopped;
	pthread_mutex_t lock; /* the fields below */
	pthread_cond_t wake;
	bool stopping;
	double deadline; /* stopping: give up at (monotonic seconds) */
	double retry_at; /* backing off until */
	double backoff;
	uint64_t rng;
	unsigned failing; /* failed attempts in a row */
	double warned_at; /* when the failure was last reported */
	char last_error[256], warned_error[256];
	struct push_stats st;
	atomic_llong abort_at_ms; /* the request in flight gives up then; 0: never */
};

/* ---- Pyroscope's syntax ---------------------------------------------------------- */

const char *push_check_url(const char *url)
{
	const char *host;
	size_t i;

	if (!strncasecmp(url, "http://", 7))
		host = url + 7;
	else if (!strncasecmp(url, "https://", 8))
		host = url + 8;
	else
		return "not an http:// or https:// URL";
	if (!*host || *host == '/')
		return "no host";
	for (i = 0; url[i]; i++) {
		if (url[i] == '?' || url[i] == '#')
			return "no query or fragment: sfbpf adds /ingest and its parameters";
		if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f)
			return "spaces or control characters";
	}
	return strlen(url) > 2048 ? "too long" : NULL;
}

static bool all_of(const char *s, const char *extra, size_t max)
{
	size_t n = strlen(s), i;

	if (!n || n > max)
		return false;
	for (i = 0; i < n; i++)
		if (!isascii((unsigned char)s[i]) ||
		    (!isalnum((unsigned char)s[i]) && !strchr(extra, s[i])))
			return false;
	return true;
}

bool push_valid_app_name(const char *s)
{
	return all_of(s, "_.-", 128);
}

bool push_valid_tag_key(const char *s)
{
	return all_of(s, "_.", 64) && !isdigit((unsigned char)s[0]) && s[0] != '.' &&
	       strncmp(s, "__", 2);
}

bool push_valid_tag_value(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n > PUSH_MAX_TAG_VALUE)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f || strchr("{},=\"", s[i]))
			return false;
	return true;
}

/* RFC 3986: everything but the unreserved characters as %XX. */
static size_t encode(const char *s, char *out, size_t room)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = *s;

		if (isalnum(c) || strchr("-._~", c)) {
			if (n + 1 < room)
				out[n] = c;
			n++;
			continue;
		}
		if (n + 3 < room) {
			out[n] = '%';
			out[n + 1] = hex[c >> 4];
			out[n + 2] = hex[c & 15];
		}
		n += 3;
	}
	if (room)
		out[n < room ? n : room - 1] = '\0';
	return n;
}

/* APP{k=v,...}: the application name and its tags. */
static int app_name(const struct push_opts *o, char *buf, size_t size)
{
	size_t n, i;

	n = snprintf(buf, size, "%s{", o->app_name ? o->app_name : PUSH_DEFAULT_APP);
	for (i = 0; i < o->nr_tags && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s=%s", i ? "," : "", o->tags[i].key,
			      o->tags[i].value);
	if (n < size)
		n += snprintf(buf + n, size - n, "}");
	return n < size ? (int)n : -ENAMETOOLONG;
}

int push_ingest_url(const struct push_opts *o, int64_t from, int64_t until, char *buf, size_t size)
{
	char name[4096], enc[3 * sizeof(name)];
	size_t base = strlen(o->url), n;

	while (base > 0 && o->url[base - 1] == '/')
		base--;
	if (app_name(o, name, sizeof(name)) < 0 || encode(name, enc, sizeof(enc)) >= sizeof(enc))
		return -ENAMETOOLONG;
	n = snprintf(buf, size,
		     "%.*s%s?name=%s&from=%" PRId64 "&until=%" PRId64
		     "&format=pprof&sampleRate=%lu&spyName=sfbpf",
		     (int)base, o->url,
		     base >= 7 && !strncmp(o->url + base - 7, "/ingest", 7) ? "" : "/ingest", enc,
		     from, until, o->sample_rate);
	return n < size ? (int)n : -ENAMETOOLONG;
}

void push_redact_url(const char *url, char *buf, size_t size)
{
	const char *host = strstr(url, "://"), *at, *slash;

	host = host ? host + 3 : url;
	slash = strchr(host, '/');
	at = memchr(host, '@', slash ? (size_t)(slash - host) : strlen(host));
	if (at)
		snprintf(buf, size, "%.*s***%s", (int)(host - url), url, at);
	else
		snprintf(buf, size, "%s", url);
}

/* ---- one request ------------------------------------------------------------------- */

static size_t keep_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct pusher *p = ctx;
	size_t n = size * nmemb, room = BODY_EXCERPT - p->body_len;

	memcpy(p->body + p->body_len, data, n < room ? n : room);
	p->body_len += n < room ? n : room;
	p->body[p->body_len] = '\0';
	return n;
}

/* libcurl's progress hook: gives up on the request once pusher__stop's time is over. */
static int check_abort(void *ctx, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	struct pusher *p = ctx;
	long long at = atomic_load(&p->abort_at_ms);

	(void)dlt, (void)dln, (void)ult, (void)uln;
	return at && clock__mono_s() * 1000 >= at;
}

static int setup_curl(struct pusher *p)
{
	CURL *c = lc.easy_init();
	char hdr[320];

	if (!c)
		return -ENOMEM;
	p->curl = c;
	lc.easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for DNS timeouts */
	lc.easy_setopt(c, CURLOPT_ERRORBUFFER, p->errbuf);
	lc.easy_setopt(c, CURLOPT_USERAGENT, "sfbpf/0.1");
	lc.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	lc.easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(p->opts.timeout * 1000));
	lc.easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
	lc.easy_setopt(c, CURLOPT_WRITEDATA, p);
	lc.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	lc.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, check_abort);
	lc.easy_setopt(c, CURLOPT_XFERINFODATA, p);
	lc.easy_setopt(c, CURLOPT_VERBOSE, p->opts.verbose >= 2 ? 1L : 0L);
	if (p->opts.userpwd) {
		lc.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		lc.easy_setopt(c, CURLOPT_USERPWD, p->opts.userpwd);
	}
#if LIBCURL_VERSION_NUM >= 0x075500
	lc.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	/* No "Expect: 100-continue" round trip before each profile. */
	p->headers = lc.slist_append(NULL, "Expect:");
	if (p->headers && p->opts.format == PUSH_OTLP &&
	    (!lc.slist_append(p->headers, "Content-Type: application/x-protobuf") ||
	     !lc.slist_append(p->headers, "Content-Encoding: gzip")))
		return -ENOMEM;
	if (p->headers && p->opts.tenant) {
		snprintf(hdr, sizeof(hdr), "X-Scope-OrgID: %s", p->opts.tenant);
		if (!lc.slist_append(p->headers, hdr))
			return -ENOMEM;
	}
	if (!p->headers)
		return -ENOMEM;
	lc.easy_setopt(c, CURLOPT_HTTPHEADER, p->headers);
	return 0;
}

/*
 * 3xx (redirects are not followed), 401, 403 and 404 are configuration
 * errors: keep the data while someone fixes the URL or the credentials.
 */
static bool retryable(long status)
{
	return status < 400 || status >= 500 || status == 408 || status == 429 || status == 401 ||
	       status == 403 || status == 404;
}

static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || (unsigned char)*s >= 0x7f)
			*s = ' ';
}

static enum outcome post(struct pusher *p, const char *url, const void *data, size_t size)
{
	curl_mime *mime = NULL;
	curl_mimepart *part;
	long status = 0;
	CURLcode res;

	lc.easy_setopt(p->curl, CURLOPT_URL, url);
	if (p->opts.format == PUSH_OTLP) {
		/* The body as spooled: already the gzipped request. */
		lc.easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)size);
		lc.easy_setopt(p->curl, CURLOPT_POSTFIELDS, data);
	} else {
		mime = lc.mime_init(p->curl);
		part = mime ? lc.mime_addpart(mime) : NULL;
		if (!part) {
			lc.mime_free(mime);
			snprintf(p->last_error, sizeof(p->last_error), "out of memory");
			return RETRY;
		}
		lc.mime_name(part, "profile");
		lc.mime_filename(part, "profile.pb.gz");
		lc.mime_type(part, "application/octet-stream");
		lc.mime_data(part, data, size);
		lc.easy_setopt(p->curl, CURLOPT_MIMEPOST, mime);
	}
	p->errbuf[0] = '\0';
	p->body_len = 0;
	p->body[0] = '\0';
	res = lc.easy_perform(p->curl);
	if (mime) {
		lc.easy_setopt(p->curl, CURLOPT_MIMEPOST, NULL);
		lc.mime_free(mime);
	}
	if (res == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(p->last_error, sizeof(p->last_error),
			 "no answer in the time left at exit");
		return RETRY;
	}
	if (res != CURLE_OK) {
		snprintf(p->last_error, sizeof(p->last_error), "%s",
			 p->errbuf[0] ? p->errbuf : lc.easy_strerror(res));
		return RETRY;
	}
	lc.easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return SENT;
	printable(p->body);
	snprintf(p->last_error, sizeof(p->last_error), "HTTP %ld%s%s", status,
		 p->body[0] ? ": " : "", p->body);
	return retryable(status) ? RETRY : REFUSED;
}

/* Send one spooled profile. */
static enum outcome deliver(struct pusher *p, const struct spool_entry *e)
{
	char url[MAX_URL];
	enum outcome r;
	size_t size;
	void *data;
	int err;

	err = spool__read(p->sp, e, &data, &size);
	if (err) {
		snprintf(p->last_error, sizeof(p->last_error), "%s", strerror(-err));
		/* Removed behind our back, or unreadable: retrying cannot help. */
		return UNREADABLE;
	}
	if (p->opts.format == PUSH_OTLP)
		snprintf(url, sizeof(url), "%s", p->opts.url);
	else if (push_ingest_url(&p->opts, e->from, e->until, url, sizeof(url)) < 0) {
		free(data);
		snprintf(p->last_error, sizeof(p->last_error), "ingest URL too long");
		return REFUSED;
	}
	r = post(p, url, data, size);
	free(data);
	return r;
}

/* ---- the sender thread ------------------------------------------------------------- */

/* A delay in [d/2, d]: hosts that lost the same backend do not come back in step. */
static double jitter(struct pusher *p, double d)
{
	p->rng ^= p->rng << 13;
	p->rng ^= p->rng >> 7;
	p->rng ^= p->rng << 17;
	return d / 2 + d / 2 * (double)(p->rng >> 11) / (double)(1ULL << 53);
}

/* Called with the lock held, after an attempt: counters, messages, backoff. */
static void account(struct pusher *p, const struct spool_entry *e, enum outcome r)
{
	double delay;

	if (r != UNREADABLE)
		p->st.attempts++;
	if (r == SENT) {
		p->st.delivered++;
		if (p->failing)
			pr_warn("%s: %s answers again, after %u failed attempts", p->name,
				p->url_redacted, p->failing);
		else if (p->opts.verbose)
			pr_warn("%s: delivered %" PRId64 "..%" PRId64, p->name, e->from, e->until);
		p->failing = 0;
		p->backoff = p->opts.backoff_min;
		return;
	}
	if (r == UNREADABLE) {
		pr_warn("%s: cannot read %s/%s: %s; skipped it", p->name, spool__path(p->sp),
			e->name, p->last_error);
		return;
	}
	if (r == REFUSED) {
		p->st.refused++;
		pr_warn("%s: %s refused profile %" PRId64 "..%" PRId64 ": %s; dropped it",
			p->name, p->url_redacted, e->from, e->until, p->last_error);
		return;
	}
	p->st.failures++;
	delay = jitter(p, p->backoff);
	/* Once per outage, again when the reason changes, and now and then. */
	if (!p->failing++ || p->opts.verbose || strcmp(p->last_error, p->warned_error) ||
	    clock__mono_s() - p->warned_at >= REMIND_SECS) {
		pr_warn("%s: cannot deliver to %s: %s; profiles stay in %s, retrying "
			"with backoff (up to %gs)",
			p->name, p->url_redacted, p->last_error, spool__path(p->sp), p->opts.backoff_max);
		p->warned_at = clock__mono_s();
		snprintf(p->warned_error, sizeof(p->warned_error), "%s", p->last_error);
	}
	p->retry_at = clock__mono_s() + delay;
	p->backoff = p->backoff * 2 < p->opts.backoff_max ? p->backoff * 2 : p->opts.backoff_max;
}

static void wait_until(struct pusher *p, double when)
{
	struct timespec ts;

	if (when <= 0) {
		pthread_cond_wait(&p->wake, &p->lock);
		return;
	}
	ts.tv_sec = (time_t)when;
	ts.tv_nsec = (long)((when - ts.tv_sec) * 1e9);
	pthread_cond_timedwait(&p->wake, &p->lock, &ts);
}

/* With the lock held: false once the sender should stop; else whether to send now. */
static bool next_step(struct pusher *p, bool *send)
{
	double now = clock__mono_s();

	*send = false;
	if (p->stopping && now >= p->deadline)
		return false;
	if (now < p->retry_at) {
		if (p->stopping && p->retry_at >= p->deadline)
			return false;
		wait_until(p, p->stopping && p->deadline < p->retry_at ? p->deadline : p->retry_at);
		return true;
	}
	*send = true;
	return true;
}

static void *sender(void *arg)
{
	struct pusher *p = arg;
	struct spool_entry e;
	enum outcome r;
	bool send;

	pthread_mutex_lock(&p->lock);
	while (next_step(p, &send)) {
		if (!send)
			continue;
		if (spool__take(p->sp, &e)) {
			if (p->stopping)
				break;
			wait_until(p, 0); /* until kicked */
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		r = deliver(p, &e);
		spool__finish(p->sp, &e, r != RETRY);
		pthread_mutex_lock(&p->lock);
		account(p, &e, r);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- life cycle -------------------------------------------------------------------- */

static int check_opts(struct pusher *p)
{
	struct push_opts *o = &p->opts;
	const char *why = push_check_url(o->url ? o->url : "");
	size_t i;

	if (why) {
		pr_warn("%s: bad URL: %s", p->name, why);
		return -EINVAL;
	}
	if (o->app_name && !push_valid_app_name(o->app_name)) {
		pr_warn("push: bad application name: %s", o->app_name);
		return -EINVAL;
	}
	for (i = 0; i < o->nr_tags; i++) {
		if (push_valid_tag_key(o->tags[i].key) && push_valid_tag_value(o->tags[i].value))
			continue;
		pr_warn("push: bad label %s=%s", o->tags[i].key, o->tags[i].value);
		return -EINVAL;
	}
	/* It becomes a header line: no spaces or control characters. */
	if (o->tenant && (!push_valid_tag_value(o->tenant) || strlen(o->tenant) > 200)) {
		pr_warn("push: bad tenant ID: %s", o->tenant);
		return -EINVAL;
	}
	if (o->timeout <= 0)
		o->timeout = DEFAULT_TIMEOUT;
	if (o->backoff_min <= 0)
		o->backoff_min = DEFAULT_BACKOFF_MIN;
	if (o->backoff_max <= 0)
		o->backoff_max = DEFAULT_BACKOFF_MAX;
	if (o->backoff_max < o->backoff_min)
		o->backoff_max = o->backoff_min;
	return 0;
}

static int init(struct pusher *p)
{
	sigset_t all, old;
	int err;

	p->url_redacted = malloc(strlen(p->opts.url) + 8);
	if (!p->url_redacted)
		return -ENOMEM;
	push_redact_url(p->opts.url, p->url_redacted, strlen(p->opts.url) + 8);
	if (dynlib__load("libcurl.so.4", lc_fns, sizeof(lc_fns) / sizeof(lc_fns[0])))
		return -ENOENT;
	if (lc.global_init(CURL_GLOBAL_DEFAULT))
		return -ENOMEM;
	p->curl_ready = true;
	err = setup_curl(p);
	if (err)
		return err;
	/* Signals are the main thread's: SIGTERM must reach the interval loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&p->thread, NULL, sender, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	p->started = !err;
	return err;
}

struct pusher *pusher__start(struct spool *sp, const struct push_opts *opts)
{
	struct pusher *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	int err;

	if (!p)
		return NULL;
	p->opts = *opts;
	p->name = opts->format == PUSH_OTLP ? "otlp" : "push";
	p->sp = sp;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* backoff ignores clock steps */
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	p->rng = (uint64_t)clock__mono_s() * 1000003 ^ (uint64_t)getpid() << 20 ^ 0x9e3779b97f4a7c15ULL;
	err = check_opts(p);
	p->backoff = p->opts.backoff_min;
	if (!err)
		err = init(p);
	if (err) {
		pusher__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

void pusher__kick(struct pusher *p)
{
	pthread_mutex_lock(&p->lock);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

unsigned pusher__stop(struct pusher *p, double timeout)
{
	struct spool_stats st;

	if (p->started && !p->stopped) {
		pthread_mutex_lock(&p->lock);
		p->stopping = true;
		p->deadline = clock__mono_s() + timeout;
		/* One more try at once: the last interval deserves a chance. */
		p->retry_at = 0;
		atomic_store(&p->abort_at_ms, (long long)(p->deadline * 1000) + 1);
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		p->stopped = true;
	}
	spool__stats(p->sp, &st);
	return st.files;
}

void pusher__free(struct pusher *p)
{
	if (!p)
		return;
	pusher__stop(p, 0);
	if (p->curl) /* then libcurl is loaded */
		lc.easy_cleanup(p->curl);
	if (p->headers)
		lc.slist_free_all(p->headers);
	if (p->curl_ready)
		lc.global_cleanup();
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->url_redacted);
	free(p);
}

void pusher__stats(struct pusher *p, struct push_stats *out)
{
	pthread_mutex_lock(&p->lock);
	*out = p->st;
	pthread_mutex_unlock(&p->lock);
}
