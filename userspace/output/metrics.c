// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prometheus metrics endpoint (see metrics.h): a plain HTTP/1.0 server, each
 * connection answered and closed. Requests are small and bounded (headers
 * only, 8 KiB), every connection has 2 s to send its request and 2 s to take
 * its answer, and at most MAX_CONNS are served at once. The lock guards only
 * the figures: each answer is a copy, sent without it, so a client that
 * stops reading never blocks metrics__publish() (the profiler's loop).
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
#include <sys/eventfd.h>
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
#define MAX_CONNS 16
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics {
	int fd;
	int port;
	pthread_t thread;
	bool started;
	atomic_bool stopping;
	atomic_bool wanted;
	int wake; /* eventfd: a publication, or stop */
	pthread_mutex_t lock; /* the fields below */
	uint64_t generation; /* publications so far */
	char *text;
	size_t len;
	/* The server's own counts (metrics.h): written by its thread, read by the loop. */
	atomic_uint_fast64_t accepted, served, timed_out, dropped, full;
};

/* ---- the exposition ---------------------------------------------------------------- */

static void put(struct metrics_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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
		{ "metrics_conns_", "Connections to this /metrics endpoint" },
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
	put(t, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", metric, help_of(name, help, sizeof(help)),
	    metric, gauge ? "gauge" : "counter", metric, (unsigned long long)value);
}

void metrics_put_cb(void *t, const char *name, uint64_t value, bool gauge)
{
	metrics_put(t, name, value, gauge);
}

/* ---- the server -------------------------------------------------------------------- */

/* Where a connection is: reading its request, waiting for figures, sending the answer. */
enum conn_state { CONN_FREE, CONN_READING, CONN_WAITING, CONN_WRITING };

struct conn {
	enum conn_state state;
	int fd;
	bool head; /* HEAD: the answer without its body */
	double deadline; /* monotonic: closed then, whatever its state */
	double fresh_until; /* CONN_WAITING: the last figures after this */
	uint64_t generation; /* CONN_WAITING: publications when the request came */
	char req[REQUEST_MAX];
	size_t req_len;
	char *out; /* CONN_WRITING: the whole answer, our own copy */
	size_t out_len, out_off;
};

static void conn_close(struct conn *c)
{
	if (c->fd >= 0) {
		shutdown(c->fd, SHUT_WR);
		close(c->fd);
	}
	free(c->out);
	*c = (struct conn){ .state = CONN_FREE, .fd = -1 };
}

/* The answer, head and body, into c's own buffer: nothing shared is held while it is sent. */
static void conn_answer(struct conn *c, const char *status, const char *ctype, const char *body,
			size_t n)
{
	size_t cap = 256 + n;
	int h;

	c->out = malloc(cap);
	if (!c->out) {
		conn_close(c);
		return;
	}
	h = snprintf(c->out, cap,
		     "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		     "Connection: close\r\n\r\n",
		     status, ctype, n);
	c->out_len = h;
	if (!c->head) {
		memcpy(c->out + h, body, n);
		c->out_len += n;
	}
	c->out_off = 0;
	c->state = CONN_WRITING;
	c->deadline = clock__mono_s() + IO_TIMEOUT_MS / 1000.0;
}

/* A connection closed before its answer was sent whole: the client's doing, or too long. */
static void conn_drop(struct metrics *m, struct conn *c)
{
	atomic_fetch_add(&m->dropped, 1);
	conn_close(c);
}

/* The request is whole: answer at once, or wait for the loop's figures. */
static void conn_request(struct metrics *m, struct conn *c)
{
	char *path, *end;

	c->head = !strncmp(c->req, "HEAD ", 5);
	if (strncmp(c->req, "GET ", 4) && !c->head) {
		conn_answer(c, "405 Method Not Allowed", "text/plain", "GET /metrics\n", 13);
		return;
	}
	path = strchr(c->req, ' ') + 1;
	end = path + strcspn(path, " ?\r\n");
	if (end - path != 8 || strncmp(path, "/metrics", 8)) {
		conn_answer(c, "404 Not Found", "text/plain", "try /metrics\n", 13);
		return;
	}
	pthread_mutex_lock(&m->lock);
	c->generation = m->generation;
	pthread_mutex_unlock(&m->lock);
	c->state = CONN_WAITING;
	c->fresh_until = clock__mono_s() + FRESH_WAIT_S;
	/* The wait is ours, not the client's: its deadline starts again with the answer. */
	c->deadline = c->fresh_until + 1.0;
	atomic_store(&m->wanted, true);
}

static void conn_read(struct metrics *m, struct conn *c)
{
	ssize_t r = recv(c->fd, c->req + c->req_len, sizeof(c->req) - 1 - c->req_len, 0);

	if (r <= 0) {
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		conn_drop(m, c);
		return;
	}
	c->req_len += r;
	c->req[c->req_len] = '\0';
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
		conn_request(m, c);
	else if (c->req_len + 1 >= sizeof(c->req))
		conn_drop(m, c); /* headers longer than we read: not a scraper */
}

static void conn_write(struct metrics *m, struct conn *c)
{
	ssize_t r = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		conn_drop(m, c);
		return;
	}
	c->out_off += r;
	if (c->out_off == c->out_len) {
		atomic_fetch_add(&m->served, 1);
		conn_close(c);
	}
}

/* Waiting connections whose figures came (or whose wait is over) get them, copied. */
static void conn_serve_fresh(struct metrics *m, struct conn *conns, double now)
{
	bool waiting = false;
	int i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &conns[i];

		if (c->state != CONN_WAITING)
			continue;
		if (m->generation == c->generation && now < c->fresh_until &&
		    !atomic_load(&m->stopping)) {
			waiting = true;
			continue;
		}
		conn_answer(c, "200 OK", CONTENT_TYPE, m->text ? m->text : "", m->len);
	}
	pthread_mutex_unlock(&m->lock);
	if (!waiting)
		atomic_store(&m->wanted, false);
}

static void accept_one(struct metrics *m, struct conn *conns)
{
	int fd, i;

	fd = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	for (i = 0; i < MAX_CONNS && conns[i].state != CONN_FREE; i++)
		;
	if (i == MAX_CONNS) { /* not polled for when full: cannot happen, but never leak */
		close(fd);
		return;
	}
	atomic_fetch_add(&m->accepted, 1);
	conns[i] = (struct conn){ .state = CONN_READING, .fd = fd };
	conns[i].deadline = clock__mono_s() + IO_TIMEOUT_MS / 1000.0;
}

/*
 * One thread, up to MAX_CONNS connections at once, every socket non-blocking
 * and every connection with a deadline: a client that never sends, or never
 * reads, holds one slot for IO_TIMEOUT_MS, never the lock, the loop or the
 * other scrapes. When all slots are busy, new connections wait in the
 * listen backlog.
 */
static void *server(void *arg)
{
	struct metrics *m = arg;
	struct conn conns[MAX_CONNS];
	struct pollfd pfd[MAX_CONNS + 2];
	struct conn *polled[MAX_CONNS + 2];
	double now, next;
	uint64_t ev;
	int i, n, busy, timeout;
	bool was_full = false;

	for (i = 0; i < MAX_CONNS; i++)
		conns[i] = (struct conn){ .state = CONN_FREE, .fd = -1 };
	while (!atomic_load(&m->stopping)) {
		now = clock__mono_s();
		conn_serve_fresh(m, conns, now);
		next = now + 1.0;
		n = busy = 0;
		pfd[n++] = (struct pollfd){ .fd = m->wake, .events = POLLIN };
		for (i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &conns[i];

			if (c->state == CONN_FREE)
				continue;
			if (now >= c->deadline) {
				atomic_fetch_add(&m->timed_out, 1);
				conn_close(c);
				continue;
			}
			busy++;
			next = c->deadline < next ? c->deadline : next;
			if (c->state == CONN_WAITING) {
				next = c->fresh_until < next ? c->fresh_until : next;
				continue;
			}
			polled[n] = c;
			pfd[n++] = (struct pollfd){ .fd = c->fd,
						    .events = c->state == CONN_READING ? POLLIN :
											 POLLOUT };
		}
		if (busy < MAX_CONNS) {
			polled[n] = NULL;
			pfd[n++] = (struct pollfd){ .fd = m->fd, .events = POLLIN };
			was_full = false;
		} else if (!was_full) {
			/* Newcomers wait in the listen backlog (the kernel drops them past it). */
			atomic_fetch_add(&m->full, 1);
			was_full = true;
		}
		timeout = (int)((next - now) * 1000) + 1;
		if (poll(pfd, n, timeout) <= 0)
			continue;
		if (pfd[0].revents && read(m->wake, &ev, sizeof(ev)) < 0 && errno != EAGAIN)
			break;
		for (i = 1; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (!polled[i])
				accept_one(m, conns);
			else if (polled[i]->state == CONN_READING)
				conn_read(m, polled[i]);
			else if (polled[i]->state == CONN_WRITING)
				conn_write(m, polled[i]);
		}
	}
	for (i = 0; i < MAX_CONNS; i++)
		if (conns[i].state != CONN_FREE)
			conn_close(&conns[i]);
	return NULL;
}

/* ---- life cycle -------------------------------------------------------------------- */

int metrics_parse_addr(const char *arg, char *host, size_t host_size, char *port, size_t port_size)
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
			return -EINVAL; /* a bare IPv6 address: brackets say where the port starts
					 */
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
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
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
	sigset_t all, old;
	int err;

	if (!m)
		return NULL;
	m->fd = -1;
	pthread_mutex_init(&m->lock, NULL);
	m->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	err = m->wake < 0 ? -errno : listen_on(m, addr_port);
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

/* The server's poll returns. Never blocks: an eventfd's counter only saturates. */
static void wake(struct metrics *m)
{
	uint64_t one = 1;

	if (write(m->wake, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_debug("metrics: waking the server: %s", strerror(errno));
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
	pthread_mutex_unlock(&m->lock);
	wake(m);
	*t = (struct metrics_text){ 0 };
}

void metrics__server_stats(struct metrics *m, struct metrics_server_stats *st)
{
	*st = (struct metrics_server_stats){
		.accepted = atomic_load(&m->accepted),
		.served = atomic_load(&m->served),
		.timed_out = atomic_load(&m->timed_out),
		.dropped = atomic_load(&m->dropped),
		.full = atomic_load(&m->full),
	};
}

void metrics__for_each_stat(struct metrics *m,
			    void (*cb)(void *ctx, const char *name, uint64_t value, bool gauge),
			    void *ctx)
{
	struct metrics_server_stats ms;

	metrics__server_stats(m, &ms);
	cb(ctx, "metrics_conns_accepted", ms.accepted, false);
	cb(ctx, "metrics_conns_served", ms.served, false);
	cb(ctx, "metrics_conns_timed_out", ms.timed_out, false);
	cb(ctx, "metrics_conns_dropped", ms.dropped, false);
	cb(ctx, "metrics_conns_full", ms.full, false);
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
		wake(m);
		pthread_join(m->thread, NULL);
	}
	if (m->fd >= 0)
		close(m->fd);
	if (m->wake >= 0)
		close(m->wake);
	pthread_mutex_destroy(&m->lock);
	free(m->text);
	free(m);
}
