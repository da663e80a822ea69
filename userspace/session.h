/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A profiling session: the BPF program, the tables it unwinds with, the
 * processes it covers, and what userspace made of the samples so far
 * (aggregated stacks, symbols). Every front end — plain run, live view,
 * continuous mode — drives one session: open, poll until done, read, close.
 */
#ifndef SFBPF_SESSION_H
#define SFBPF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "aggregate.h"
#include "ksyms.h"
#include "profile.h"
#include "proctrack.h"
#include "symbolize.h"
#include "tables.h"

#define SESSION_MAX_PIDS 1024

struct session_opts {
	int pids[SESSION_MAX_PIDS]; /* empty: the whole system */
	int nr_pids;
	unsigned long freq; /* samples per second per CPU */
	bool user_stacks, kernel_stacks;
	unsigned max_frames; /* 0: SFBPF_MAX_FRAMES */
	int verbose;
};

struct session {
	struct session_opts opts;
	struct profile *prof;
	struct tables *tables;
	struct proctrack *procs;
	struct aggregator *agg; /* everything received since open (or the last reset) */
	struct symbolizer *sym;
	struct ksyms *ksyms;
	uint8_t *seen; /* pids noted for symbolization */
	uint8_t *tried; /* pids whose tables were loaded on demand */
	uint64_t received;
	double start_time, attach_time; /* CLOCK_MONOTONIC seconds */
};

/*
 * Load the BPF program, load tables for the target processes (or all), and
 * start sampling. Prints a one-line reason on stderr and returns a negative
 * errno on failure (-ESRCH: a target PID does not exist).
 */
int session__open(struct session *s, const struct session_opts *opts);
/* Read samples for up to timeout_ms; returns samples handled or a negative errno. */
int session__poll(struct session *s, int timeout_ms);
/* Stop sampling and read what is still in the ring buffer. */
void session__stop(struct session *s);
void session__close(struct session *s);

struct session_stats {
	__u64 bpf[SFBPF_STAT__COUNT];
	uint64_t received;
	struct tables_stats tables;
	struct proctrack_stats procs;
};

void session__stats(struct session *s, struct session_stats *out);
/* "sfbpf: stat NAME VALUE" lines: the names scripts parse (see README). */
void session__print_stats(struct session *s, FILE *f);

/* Seconds since CLOCK_MONOTONIC's origin. */
double session_now(void);

#endif /* SFBPF_SESSION_H */
