// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prometheus metrics endpoint (see metrics.h): a plain HTTP/1.0 server, one
 * connection at a time, each answered and closed. Requests are small and
 * bounded (headers only, 8 KiB, 2 s), so a stuck client delays the next
 * scrape, never the profiler.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "output/metrics.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/vec.h"

#define REQUEST_MAX 8192
#define IO_TIMEOUT_MS 2000
#define FRESH_WAIT_S 1.0
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics {
	int fd;
	int port;
	pthread_t thread;
	bool started;
	atomic_bool stopping;
	atomic_bool wanted;
	pthread_mutex_t lock; /* the fields below */
	pthread_cond_t fresh;
	uint64_t generation; /* publications so far */
	char *text;
	size_t len;
};

/* ---- the exposition ---------------------------------------------------------------- */

static void put(struct metrics_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct metrics_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt,
			      ap);
		va_end(ap);
		if (n < 0) {
			t->err = -EINVAL;
			return;
		}
		if (t->buf && t->len + n < t->cap) {
			t->len += n;
			return;
		}
		if (VEC_RESERVE(t->buf, t->cap, t->len + n + 1, 4096)) {
			t->err = -ENOMEM;
			return;
		}
	}
}

/* What a family of counters means, by the --stats name's group. */
static const char *help_of(const char *name, char *buf, size_t size)
{
	static const struct {
		const char *prefix, *what;
	} groups[] = {
		{ "stop.", "Samples whose user stack walk stopped for this reason" },
		{ "lifecycle.", "Process lifecycle events handled" },
		{ "offcpu_ns.", "Off-CPU time in this thread state, in nanoseconds" },
		{ "offcpu.", "Off-CPU tracking events" },
		{ "continuous_", "Continuous mode's profiles" },
		{ "push_", "Pushes to the Pyroscope-compatible backend" },
		{ "otlp_", "Exports to the OTLP profiles endpoint" },
		{ "spool_", "The spool of profiles awaiting delivery" },
	};
	size_t i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (!strncmp(name, groups[i].prefix, strlen(groups[i].prefix))) {
			snprintf(buf, size, "%s (--stats %s)", groups[i].what, name);
			return buf;
		}
	snprintf(buf, size, "sfbpf counter %s, as --stats prints it", name);
	return buf;
}

void metrics_put(struct metrics_text *t, const char *name, uint64_t value, bool gauge)
{
	char metric[128], help[192];
	size_t i, n;

	n = snprintf(metric, sizeof(metric), "sfbpf_");
	/* Prometheus names: [a-zA-Z_:][a-zA-Z0-9_:]*; the stat names' '.' and '-' become '_'. */
	for (i = 0; name[i] && n + 7 < sizeof(metric); i++) {
		char c = name[i];

		metric[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					      (c >= '0' && c <= '9') || c == '_' ?
				      c :
				      '_';
	}
	metric[n] = '\0';
	if (!gauge)
		snprintf(metric + n, sizeof(metric) - n, "_total");
	put(t, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", metric,
	    help_of(name, help, sizeof(help)), metric, gauge ? "gauge" : "counter", metric,
	    (unsigned long long)value);
}

/* ---- the server -------------------------------------------------------------------- */

static void send_all(int fd, const char *p, size_t n)
{
	ssize_t r;

	while (n) {
		r = send(fd, p, n, MSG_NOSIGNAL);
		if (r <= 0)
			return;
		p += r;
		n -= r;
	}
}

static void answer(int fd, const char *status, const char *ctype, const char *body, size_t n)
{
	char head[256];
	int h;

	h = snprintf(head, sizeof(head),
		     "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\n",
		     status, ctype, n);
	send_all(fd, head, h);
	send_all(fd, body, n);
}

/* The request's headers (up to the blank line), or false. */
static bool read_request(int fd, char *buf, size_t size)
{
	double end = clock__mono_s() + IO_TIMEOUT_MS / 1000.0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t len = 0;
	ssize_t r;
	int left;

	while (len + 1 < size) {
		left = (int)((end - clock__mono_s()) * 1000);
		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			return false;
		r = recv(fd, buf + len, size - 1 - len, 0);
		if (r <= 0)
			return false;
		len += r;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return true;
	}
	return false;
}

/* Fresh figures from the loop, or after a second the last ones. Lock held. */
static void wait_fresh(struct metrics *m)
{
	uint64_t gen = m->generation;
	double until = clock__mono_s() + FRESH_WAIT_S;
	struct timespec ts;

	atomic_store(&m->wanted, true);
	while (m->generation == gen && !atomic_load(&m->stopping) && clock__mono_s() < until) {
		double t = clock__mono_s() + 0.1;

		ts.tv_sec = (time_t)t;
		ts.tv_nsec = (long)((t - ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&m->fresh, &m->lock, &ts);
	}
}

static void serve_one(struct metrics *m, int fd)
{
	char req[REQUEST_MAX], *path, *end;

	if (!read_request(fd, req, sizeof(req)))
		return;
	if (strncmp(req, "GET ", 4) && strncmp(req, "HEAD ", 5)) {
		answer(fd, "405 Method Not Allowed", "text/plain", "GET /metrics\n", 13);
		return;
	}
	path = strchr(req, ' ') + 1;
	end = path + strcspn(path, " ?\r\n");
	if (end - path != 8 || strncmp(path, "/metrics", 8)) {
		answer(fd, "404 Not Found", "text/plain", "try /metrics\n", 13);
		return;
	}
	pthread_mutex_lock(&m->lock);
	wait_fresh(m);
	if (!strncmp(req, "HEAD ", 5))
		answer(fd, "200 OK", CONTENT_TYPE, "", 0);
	else
		answer(fd, "200 OK", CONTENT_TYPE, m->text ? m->text : "", m->len);
	pthread_mutex_unlock(&m->lock);
}

static void *server(void *arg)
{
	struct metrics *m = arg;
	struct pollfd pfd = { .fd = m->fd, .events = POLLIN };
	int fd;

	while (!atomic_load(&m->stopping)) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		fd = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve_one(m, fd);
		shutdown(fd, SHUT_WR);
		close(fd);
	}
	return NULL;
}

/* ---- life cycle -------------------------------------------------------------------- */

int metrics_parse_addr(const char *arg, char *host, size_t host_size, char *port,
		       size_t port_size)
{
	const char *colon = strrchr(arg, ':'), *h = arg, *p;
	size_t hl;
	char *end;
	long v;

	if (!colon) {
		hl = 0;
		p = arg;
	} else {
		hl = colon - arg;
		p = colon + 1;
		if (hl >= 2 && arg[0] == '[' && arg[hl - 1] == ']') { /* [::1]:9464 */
			h++;
			hl -= 2;
		} else if (memchr(arg, ':', hl)) {
			return -EINVAL; /* a bare IPv6 address: brackets say where the port starts */
		}
	}
	v = strtol(p, &end, 10);
	if (!*p || *end || v < 0 || v > 65535 || hl >= host_size || strlen(p) >= port_size)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, port_size, "%ld", v);
	return 0;
}

static int listen_on(struct metrics *m, const char *arg)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res, *ai;
	char host[256], port[16];
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	int fd = -1, one = 1, err;

	if (metrics_parse_addr(arg, host, sizeof(host), port, sizeof(port))) {
		pr_warn("metrics: bad address %s: expected PORT or ADDR:PORT ([ADDR]:PORT for IPv6)",
			arg);
		return -EINVAL;
	}
	err = getaddrinfo(host[0] ? host : "127.0.0.1", port, &hints, &res);
	if (err) {
		pr_warn("metrics: %s: %s", arg, gai_strerror(err));
		return -EINVAL;
	}
	err = -EADDRNOTAVAIL;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
			err = -errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0) {
		pr_warn("metrics: cannot listen on %s: %s", arg, strerror(-err));
		return err;
	}
	m->fd = fd;
	if (!getsockname(fd, (struct sockaddr *)&sa, &sl))
		m->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port :
							   ((struct sockaddr_in *)&sa)->sin_port);
	return 0;
}

struct metrics *metrics__start(const char *addr_port)
{
	struct metrics *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!m)
		return NULL;
	m->fd = -1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->fresh, &ca);
	pthread_condattr_destroy(&ca);
	err = listen_on(m, addr_port);
	if (!err) {
		/* Signals are the main thread's. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = -pthread_create(&m->thread, NULL, server, m);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		m->started = !err;
	}
	if (err) {
		metrics__stop(m);
		errno = -err;
		return NULL;
	}
	return m;
}

bool metrics__wanted(struct metrics *m)
{
	return m && atomic_load(&m->wanted);
}

void metrics__publish(struct metrics *m, struct metrics_text *t)
{
	if (t->err) {
		free(t->buf);
		*t = (struct metrics_text){ 0 };
		return;
	}
	pthread_mutex_lock(&m->lock);
	free(m->text);
	m->text = t->buf;
	m->len = t->len;
	m->generation++;
	atomic_store(&m->wanted, false);
	pthread_cond_broadcast(&m->fresh);
	pthread_mutex_unlock(&m->lock);
	*t = (struct metrics_text){ 0 };
}

int metrics__port(const struct metrics *m)
{
	return m->port;
}

void metrics__stop(struct metrics *m)
{
	if (!m)
		return;
	atomic_store(&m->stopping, true);
	if (m->started) {
		pthread_mutex_lock(&m->lock);
		pthread_cond_broadcast(&m->fresh);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->thread, NULL);
	}
	if (m->fd >= 0)
		close(m->fd);
	pthread_cond_destroy(&m->fresh);
	pthread_mutex_destroy(&m->lock);
	free(m->text);
	free(m);
}
