/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Continuous mode's front end: the interval loop that drives a session and
 * hands each interval's snapshot to continuous mode's outputs
 * (../output/continuous.h, which also describes the mode and its options).
 * Intervals end at multiples of the interval in wall-clock time; at each end
 * the aggregated stacks start over and what they alone kept (exited
 * processes' mappings, DWARF lines) is let go.
 */
#ifndef SFBPF_CONTINUOUS_LOOP_H
#define SFBPF_CONTINUOUS_LOOP_H

#include "output/continuous.h"

/*
 * Runs until *opts->exiting or the duration is over, then stops the session
 * (session__stop), writes the interval in progress and flushes. Returns 0,
 * or a negative errno when it could not start (out-dir, spool or push setup)
 * or the ring buffer failed; a line on stderr says why.
 */
int continuous__run(struct session *s, const struct continuous_opts *opts);

#endif /* SFBPF_CONTINUOUS_LOOP_H */
