/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one path for diagnostics: every library file reports through pr_warn(),
 * pr_info() and pr_debug(), and so does libbpf once log__init() has wired its
 * print callback here. Messages go to stderr as one line each, prefixed
 * "sfbpf: ", written whole (loader threads may report at the same time).
 *
 * Levels: warnings are always shown; -v shows info (what was loaded, skipped,
 * evicted; libbpf's own info lines); -vv shows debug (libbpf's debug output,
 * the verifier's statistics). The live view keeps stderr off the screen and
 * replays it at exit (top/tui.c), so callers need not know where it goes.
 */
#ifndef SFBPF_UTIL_LOG_H
#define SFBPF_UTIL_LOG_H

enum log_level {
	LOG_WARN = 0,
	LOG_INFO = 1,
	LOG_DEBUG = 2,
};

/* Wires libbpf's print callback to this log and sets the level (-v count). */
void log__init(int verbosity);
/* Messages at or below this level are printed. */
void log__set_level(enum log_level level);
enum log_level log__level(void);

/*
 * A BPF program the kernel refused: libbpf's copy of the verifier's log is
 * written to a file of its own ($TMPDIR or /tmp), its last lines printed (all
 * of them with -vv). Reset before a load; the path of the log written since,
 * or NULL.
 */
void log__verifier_reset(void);
const char *log__verifier_path(void);

void log__printf(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_warn(...) log__printf(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log__printf(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log__printf(LOG_DEBUG, __VA_ARGS__)

#endif /* SFBPF_UTIL_LOG_H */
