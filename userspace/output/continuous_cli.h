/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Continuous mode's command-line options, as an argp child parser: a front
 * end lists continuous_argp among its argp children and finds the result in
 * continuous_cli. The options and their checks live here, next to the mode,
 * so the front end only picks the mode and wires its signal flags:
 *
 *   --continuous --out-dir DIR [--interval SECS] [--keep N] [--keep-size SIZE]
 *   [--label KEY=VALUE]... [--hostname NAME]
 *   [--push URL [--app-name NAME] [--tenant ID] [--push-auth-file FILE]
 *    [--spool-dir DIR] [--spool-max N] [--spool-size SIZE]
 *    [--push-timeout SECS] [--flush-timeout SECS]]
 *   [--otlp URL [--otlp-spool-dir DIR]] [--metrics [ADDR:]PORT]
 *
 * Every option but --continuous needs --continuous; the push options need
 * --push or --otlp (its requests share the spool limits, auth and timeouts).
 * See docs/continuous.md.
 */
#ifndef SFBPF_CONTINUOUS_CLI_H
#define SFBPF_CONTINUOUS_CLI_H

#include <argp.h>
#include <stdbool.h>

#include "output/continuous.h"

struct continuous_cli {
	bool enabled; /* --continuous */
	/* Filled from the options; the caller adds duration, verbose, stats, the flags. */
	struct continuous_opts opts;
	struct pprof_label labels[CONTINUOUS_MAX_LABELS];
};

extern struct continuous_cli continuous_cli;
extern const struct argp continuous_argp;

#endif /* SFBPF_CONTINUOUS_CLI_H */
