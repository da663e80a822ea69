/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Prometheus metrics endpoint: GET /metrics answers the agent's own
 * counters in the text exposition format (version 0.0.4), for operators who
 * watch every agent of a fleet. A thread of its own accepts and answers, so
 * a slow scraper never stalls sampling; the figures come from the owner's
 * loop, which is the only one that may read them:
 *
 *   a scrape arrives -> metrics__wanted() turns true -> the loop renders the
 *   text (metrics_put per counter) and calls metrics__publish() -> the
 *   scrape gets it.
 *
 * A scrape waits up to a second for fresh figures, then gets the last ones
 * published (a loop busy writing a profile). Names are "sfbpf_" + the
 * --stats name with '.' as '_'; counters get "_total", as Prometheus names
 * them; each has HELP and TYPE lines.
 *
 * Listens on ADDR:PORT ("127.0.0.1:9464", "[::]:9464", "0.0.0.0:9464"), or on
 * the loopback for a bare PORT: exposing the agent takes an explicit address.
 */
#ifndef SFBPF_METRICS_H
#define SFBPF_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct metrics;

/* A rendering in progress: the text exposition. Zeroed to start; err sticks. */
struct metrics_text {
	char *buf;
	size_t len, cap;
	int err;
};

/* Listen and start answering. NULL + errno (a line on stderr says why). */
struct metrics *metrics__start(const char *addr_port);
/* Whether a scrape waits for figures. Cheap: for every loop iteration. */
bool metrics__wanted(struct metrics *m);
/* The new figures (t is consumed: its buffer is taken over, t reset). */
void metrics__publish(struct metrics *m, struct metrics_text *t);
/* Stop the thread, close the socket. NULL is fine. */
void metrics__stop(struct metrics *m);
/*
 * What the server did with its connections: accepted; served (an answer sent
 * whole); timed_out (closed at their 2 s deadline: a client that never sent
 * its request, or never read the answer); dropped (closed early by the client,
 * or headers over 8 KiB); full (times all 16 slots were busy, so that new
 * connections waited in the listen backlog, or were dropped by the kernel
 * once it was full).
 */
struct metrics_server_stats {
	uint64_t accepted, served, timed_out, dropped, full;
};
void metrics__server_stats(struct metrics *m, struct metrics_server_stats *st);
/* The same, each as a counter to cb (metrics_conns_accepted, ...): for --stats and the metrics. */
void metrics__for_each_stat(struct metrics *m,
			    void (*cb)(void *ctx, const char *name, uint64_t value, bool gauge),
			    void *ctx);
/* The port listened on (for --metrics ADDR:0 and tests). */
int metrics__port(const struct metrics *m);

/* One metric: name as --stats has it, its value, whether a gauge. */
void metrics_put(struct metrics_text *t, const char *name, uint64_t value, bool gauge);
/* metrics_put for callbacks that pass their context untyped (session__for_each_stat). */
void metrics_put_cb(void *t, const char *name, uint64_t value, bool gauge);
/* Parse "ADDR:PORT" or "PORT" (0 or -EINVAL); host is "" for the loopback. */
int metrics_parse_addr(const char *arg, char *host, size_t host_size, char *port, size_t port_size);

#endif /* SFBPF_METRICS_H */
