// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sfbpf-top: samples every CPU, unwinds user stacks in the kernel from SFrame
 * tables, and shows what it saw. This file parses the options, checks that
 * the system can run the profiler (one clear line per problem, with the fix),
 * picks the output (live view, batch tables, or quiet until a folded file at
 * exit) and drives the session.
 */
#include <argp.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "top/batch.h"
#include "top/continuous_loop.h"
#include "output/continuous_cli.h"
#include "top/preflight.h"
#include "profile/offcpu.h"
#include "output/outputs.h"
#include "profile/session.h"
#include "top/topview.h"
#include "top/tui.h"
#include "util/buildinfo.h"
#include "util/log.h"
#include "util/clock.h"

#define MAX_TARGETS SESSION_MAX_PIDS

enum out_mode { OUT_LIVE, OUT_BATCH, OUT_QUIET, OUT_CONTINUOUS };

static struct env {
	int pids[MAX_TARGETS];
	int nr_pids;
	unsigned long freq;
	bool user_only, kernel_only;
	const char *folded_path;
	bool stats;
	double duration;
	unsigned max_frames;
	int verbose;
	double interval;
	int rows;
	bool batch;
	int counts; /* -1: the mode's default */
	enum topview_sort sort;
	enum topview_group group;
	const char *pprof_path, *svg_path, *otlp_path;
	bool sframe_only;
	bool no_partial_tables;
	bool no_inline; /* --no-inline: inlined functions folded into their callers */
	bool debuginfod; /* --debuginfod: fetch missing debug files ($DEBUGINFOD_URLS) */
	/* Off-CPU analysis. */
	bool off_cpu, on_off;
	unsigned long long min_us, max_us;
	__u32 states;
	const char *cgroup;
	bool interval_set; /* -d given */
	unsigned long long max_table_mem; /* 0: the session's default */
	const char *table_cache; /* NULL: the default directory */
	bool no_table_cache;
	unsigned long long max_table_cache; /* 0: the default */
	int table_wait_ms; /* --table-wait: 0 the session's default, < 0 every table */
	unsigned long long max_stack_mem, max_symbol_mem, max_jit_mem, max_python_mem,
		max_spill; /* 0: defaults */
	unsigned long max_dwarf_files; /* 0: the default */
} env = { .freq = 99, .interval = 1, .rows = 20, .counts = -1 };

const char *argp_program_version = SFBPF_VERSION_TEXT("sfbpf-top");
static const char doc[] =
	"Profile CPUs with stacks unwound in the kernel from SFrame tables: a live\n"
	"table of the hottest functions, plain-text tables for logs, or folded\n"
	"stacks for flame graphs.\n"
	"\n"
	"USAGE: sfbpf-top [-p PID[,PID...]] [-F HZ] [-d SECS] [-b [-n N]]\n"
	"                 [--folded FILE] [DURATION]\n"
	"\n"
	"On a terminal: the live view (press h there for its keys). With --batch, or\n"
	"when stdout is not a terminal and no --folded file is asked for: the top N\n"
	"functions every interval, as text. With --folded: folded stacks at exit.\n"
	"\n"
	"EXAMPLES:\n"
	"    sfbpf-top                          # live view of the whole system\n"
	"    sfbpf-top -p 1234 -F 999           # one process at 999 Hz\n"
	"    sfbpf-top -b -n 10 -d 5 60 > log   # top 10 every 5 s for a minute\n"
	"    sfbpf-top --folded out.folded 30   # folded stacks for flamegraph.pl\n"
	"    sfbpf-top -U --folded - 5          # user stacks only, to stdout\n"
	"    sfbpf-top -p 1234 --pprof cpu.pb.gz 30   # then: go tool pprof -http=: cpu.pb.gz\n"
	"    sfbpf-top --svg flame.svg 10       # interactive flame graph for a browser\n"
	"    sfbpf-top --off-cpu -p 1234 10     # where its threads wait, in microseconds\n"
	"    sfbpf-top --off-cpu -m 1000 --folded off.folded 30   # blocks of 1 ms or more\n"
	"    sfbpf-top --on-off -p 1234 --svg wall.svg 10          # on- plus off-CPU time\n"
	"    sfbpf-top --cgroup /sys/fs/cgroup/system.slice/nginx.service   # one service\n"
	"    sfbpf-top -b -d 10 --stats --max-table-mem 16M > log 2>&1   # counters too\n"
	"\n"
	"Needs root (or CAP_BPF and CAP_PERFMON), kernel BTF and Linux 5.10 or later.\n"
	"See sfbpf-top(8).";

enum {
	OPT_FOLDED = 256,
	OPT_STATS,
	OPT_COUNTS,
	OPT_GROUP,
	OPT_PPROF,
	OPT_SVG,
	OPT_SFRAME_ONLY,
	OPT_NO_INLINE,
	OPT_DEBUGINFOD,
	OPT_OFFCPU,
	OPT_ONOFF,
	OPT_STATE,
	OPT_CGROUP,
	OPT_MAX_TABLE_MEM,
	OPT_OTLP_FILE,
	OPT_MAX_STACK_MEM,
	OPT_MAX_SYMBOL_MEM,
	OPT_MAX_JIT_MEM,
	OPT_MAX_PYTHON_MEM,
	OPT_MAX_DWARF_FILES,
	OPT_MAX_SPILL,
	OPT_TABLE_CACHE,
	OPT_NO_PARTIAL_TABLES,
	OPT_NO_TABLE_CACHE,
	OPT_MAX_TABLE_CACHE,
	OPT_TABLE_WAIT,
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Profile these processes only", 0 },
	{ "freq", 'F', "HZ", 0, "Sampling frequency per CPU (default 99)", 0 },
	{ "user", 'U', NULL, 0, "User stacks only", 0 },
	{ "kernel", 'K', NULL, 0, "Kernel stacks only", 0 },
	{ "delay", 'd', "SECS", 0, "Refresh interval of the view and tables (default 1)", 0 },
	{ "batch", 'b', NULL, 0, "Print tables as text every interval, not the live view", 0 },
	{ "rows", 'n', "N", 0, "Rows per batch table (default 20, 0: all)", 0 },
	{ "counts", OPT_COUNTS, "MODE", 0,
	  "decay (live default: 7/8 per refresh), cumulative, or interval (batch default)", 0 },
	{ "sort", 's', "KEY", 0, "Sort by self (default), total or samples", 0 },
	{ "group", OPT_GROUP, "BY", 0, "Rows per pid (default), comm, or none (all together)", 0 },
	{ "folded", OPT_FOLDED, "FILE", 0, "Write folded stacks at exit (- for stdout)", 0 },
	{ "pprof", OPT_PPROF, "FILE", 0, "Write a gzipped pprof profile at exit (- for stdout)",
	  0 },
	{ "svg", OPT_SVG, "FILE", 0, "Write an interactive flame graph (SVG) at exit", 0 },
	{ "otlp-file", OPT_OTLP_FILE, "FILE", 0,
	  "Write an OTLP profiles export request (protobuf) at exit (- for stdout)", 0 },
	{ "stats", OPT_STATS, NULL, 0,
	  "Print sampling, unwinding and table counters at exit (and every interval with -b or "
	  "-d)",
	  0 },
	{ "cgroup", OPT_CGROUP, "DIR", 0, "Only tasks of this cgroup v2 directory (and below)", 0 },
	{ "max-table-mem", OPT_MAX_TABLE_MEM, "SIZE", 0,
	  "BPF memory for unwind tables, e.g. 64M (default: RAM/512 within 32M..256M)", 0 },
	{ "max-stack-mem", OPT_MAX_STACK_MEM, "SIZE", 0,
	  "Memory for aggregated stacks; past it the coldest are folded into their process "
	  "(default: RAM/64 within 32M..1G)",
	  0 },
	{ "max-symbol-mem", OPT_MAX_SYMBOL_MEM, "SIZE", 0,
	  "Memory for symbols of files no process maps any more, and as much again for the "
	  "source lines looked up in any file (default: RAM/256 within 16M..256M)",
	  0 },
	{ "max-jit-mem", OPT_MAX_JIT_MEM, "SIZE", 0,
	  "Memory for all /tmp/perf-PID.map JIT maps together (default: RAM/256 within "
	  "16M..256M)",
	  0 },
	{ "max-python-mem", OPT_MAX_PYTHON_MEM, "SIZE", 0,
	  "Memory for the names of Python and Java frames (default: RAM/256 within 16M..256M)", 0 },
	{ "max-dwarf-files", OPT_MAX_DWARF_FILES, "N", 0,
	  "Descriptors kept open on DWARF for source lines (default: a quarter of the open "
	  "files limit, within 16..4096)",
	  0 },
	{ "max-spill", OPT_MAX_SPILL, "SIZE", 0,
	  "Disk for compressed DWARF inflated into /var/tmp (default: 1/8 of its free space, "
	  "within 16M..1G)",
	  0 },
	{ "table-cache", OPT_TABLE_CACHE, "DIR", 0,
	  "Keep built unwind tables in DIR across restarts (default /var/cache/sfbpf/tables)", 0 },
	{ "no-table-cache", OPT_NO_TABLE_CACHE, NULL, 0, "Build every table anew, keep none", 0 },
	{ "max-table-cache", OPT_MAX_TABLE_CACHE, "SIZE", 0,
	  "Disk for the table cache; least recently used tables go first (default: 2% of its "
	  "filesystem, at most 1G)",
	  0 },
	{ "table-wait", OPT_TABLE_WAIT, "SECS|all", 0,
	  "Before sampling, wait at most SECS for the tables of running processes (default 10; "
	  "all: for every one)",
	  0 },
	{ "no-partial-tables", OPT_NO_PARTIAL_TABLES, NULL, 0,
	  "While a program's table builds, walk its code by frame pointers only (by default the "
	  "rows of the code it is sampled in come first)",
	  0 },
	{ "sframe-only", OPT_SFRAME_ONLY, NULL, 0,
	  "Unwind with .sframe tables only: none synthesized from .eh_frame", 0 },
	{ "no-inline", OPT_NO_INLINE, NULL, 0,
	  "Fold inlined functions into their callers (outputs show them as _[i] frames)", 0 },
	{ "debuginfod", OPT_DEBUGINFOD, NULL, 0,
	  "Fetch missing debug files (source lines) from $DEBUGINFOD_URLS servers", 0 },
	{ "max-frames", 'S', "N", 0, "User frames per stack (default 1024; off-CPU: 128)", 0 },
	{ "verbose", 'v', NULL, 0, "More diagnostics (twice: libbpf/verifier output)", 0 },
	{ NULL, 0, NULL, 0, "Off-CPU analysis:", 1 },
	{ "off-cpu", OPT_OFFCPU, NULL, 0, "Off-CPU time: where threads wait, in microseconds", 1 },
	{ "on-off", OPT_ONOFF, NULL, 0,
	  "On- plus off-CPU time (wall clock); CPU samples weigh one period", 1 },
	{ "min-block", 'm', "MIN_US", 0, "Drop off-CPU periods shorter than MIN_US", 1 },
	{ "max-block", 'M', "MAX_US", 0, "Drop off-CPU periods longer than MAX_US", 1 },
	{ "state", OPT_STATE, "STATE[,...]", 0,
	  "running|sleeping|disk|other|all (default: all but running; --on-off: all)", 1 },
	{},
};

static int parse_pids(const char *arg, struct argp_state *state)
{
	char *copy = strdup(arg), *tok, *save = NULL, *end;
	long pid;

	if (!copy)
		return ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		errno = 0;
		pid = strtol(tok, &end, 10);
		if (errno || *end || pid <= 0 || pid > INT32_MAX || env.nr_pids == MAX_TARGETS) {
			free(copy);
			argp_error(state, "invalid PID list: %s", arg);
		}
		env.pids[env.nr_pids++] = (int)pid;
	}
	free(copy);
	return 0;
}

static void parse_view_arg(int key, const char *arg, struct argp_state *state)
{
	int v;

	switch (key) {
	case OPT_COUNTS:
		v = topview_counts_parse(arg);
		if (v < 0)
			argp_error(state, "invalid --counts: %s (decay, cumulative, interval)",
				   arg);
		env.counts = v;
		break;
	case 's':
		v = topview_sort_parse(arg);
		if (v < 0)
			argp_error(state, "invalid --sort: %s (self, total, samples)", arg);
		env.sort = v;
		break;
	case OPT_GROUP:
		v = topview_group_parse(arg);
		if (v < 0)
			argp_error(state, "invalid --group: %s (pid, comm, none)", arg);
		env.group = v;
		break;
	}
}

static void parse_offcpu_arg(int key, const char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case OPT_ONOFF:
		env.on_off = true;
		/* fallthrough */
	case OPT_OFFCPU:
		env.off_cpu = true;
		break;
	case 'm':
	case 'M':
		errno = 0;
		*(key == 'm' ? &env.min_us : &env.max_us) = strtoull(arg, &end, 10);
		if (errno || *end || !*arg)
			argp_error(state, "invalid block time: %s (microseconds)", arg);
		break;
	case OPT_STATE:
		if (offcpu__parse_states(arg, &env.states))
			argp_error(state, "invalid state list: %s", arg);
		break;
	}
}

/* "64M", "1G", "500000": bytes, with an optional K/M/G (powers of 1024). */
static unsigned long long parse_size(const char *arg, struct argp_state *state)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end == 'k' || *end == 'K')
		shift = 10;
	else if (*end == 'm' || *end == 'M')
		shift = 20;
	else if (*end == 'g' || *end == 'G')
		shift = 30;
	if (shift)
		end++;
	if (*end == 'i' && shift) /* "64MiB" */
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (errno || *end || !*arg || *arg == '-' || v > (1ULL << 40) >> shift)
		argp_error(state, "invalid size: %s (bytes, or with K, M, G)", arg);
	return v << shift;
}

/*
 * --table-wait: seconds (fractions allowed, up to an hour) or "all". A batch
 * profile that must be complete from its first sample waits for every table;
 * a live view on a busy host would rather start at once.
 */
static int parse_table_wait(const char *arg, struct argp_state *state)
{
	double secs;
	char *end;

	if (!strcmp(arg, "all"))
		return -1;
	errno = 0;
	secs = strtod(arg, &end);
	if (errno || end == arg || *end || !(secs >= 0 && secs <= 3600))
		argp_error(state, "invalid --table-wait: %s (seconds, 0 to 3600, or all)", arg);
	/* 0 is the session's default: "at once" is a millisecond. */
	return secs * 1000 < 1 ? 1 : (int)(secs * 1000);
}

static void check_args(struct argp_state *state)
{
	if (env.user_only && env.kernel_only)
		argp_error(state, "-U and -K exclude each other");
	if (env.batch && ((env.folded_path && !strcmp(env.folded_path, "-")) ||
			  (env.pprof_path && !strcmp(env.pprof_path, "-")) ||
			  (env.svg_path && !strcmp(env.svg_path, "-")) ||
			  (env.otlp_path && !strcmp(env.otlp_path, "-"))))
		argp_error(state, "--batch and an output to - would both write to stdout");
	if (!env.off_cpu && (env.min_us || env.max_us || env.states))
		argp_error(state, "-m, -M and --state go with --off-cpu or --on-off");
	/* Below this, the fixed part (object slots, rules) leaves no room for rows. */
	if (env.max_table_mem && env.max_table_mem < 128 * 1024)
		argp_error(state, "--max-table-mem below 128K leaves no room for tables");
	/* Stacks are kept in 1 MiB chunks: a few are needed to fold into. */
	if (env.max_stack_mem && env.max_stack_mem < 4 << 20)
		argp_error(state, "--max-stack-mem below 4M leaves no room for stacks");
	if (env.no_table_cache && (env.table_cache || env.max_table_cache))
		argp_error(state, "--no-table-cache goes with neither --table-cache nor "
				  "--max-table-cache");
	if (env.max_us && env.max_us < env.min_us)
		argp_error(state, "-M is below -m");
	if (continuous_cli.enabled &&
	    (env.batch || env.folded_path || env.pprof_path || env.svg_path || env.otlp_path))
		argp_error(state, "--continuous writes its own profiles: not with --batch or "
				  "an output file");
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case 'p':
		return parse_pids(arg, state);
	case 'F':
		env.freq = strtoul(arg, &end, 10);
		if (*end || env.freq == 0 || env.freq > 1000000)
			argp_error(state, "invalid frequency: %s", arg);
		break;
	case 'U':
		env.user_only = true;
		break;
	case 'K':
		env.kernel_only = true;
		break;
	case 'd':
		env.interval = strtod(arg, &end);
		if (*end || !(env.interval >= 0.1 && env.interval <= 3600))
			argp_error(state, "invalid interval: %s (0.1 to 3600 seconds)", arg);
		env.interval_set = true;
		break;
	case 'b':
		env.batch = true;
		break;
	case 'n':
		env.rows = (int)strtol(arg, &end, 10);
		if (*end || env.rows < 0)
			argp_error(state, "invalid row count: %s", arg);
		break;
	case OPT_COUNTS:
	case 's':
	case OPT_GROUP:
		parse_view_arg(key, arg, state);
		break;
	case OPT_FOLDED:
		env.folded_path = arg;
		break;
	case OPT_STATS:
		env.stats = true;
		break;
	case OPT_PPROF:
		env.pprof_path = arg;
		break;
	case OPT_SVG:
		env.svg_path = arg;
		break;
	case OPT_OTLP_FILE:
		env.otlp_path = arg;
		break;
	case OPT_SFRAME_ONLY:
		env.sframe_only = true;
		break;
	case OPT_NO_PARTIAL_TABLES:
		env.no_partial_tables = true;
		break;
	case OPT_NO_INLINE:
		env.no_inline = true;
		break;
	case OPT_DEBUGINFOD:
		env.debuginfod = true;
		break;
	case OPT_OFFCPU:
	case OPT_ONOFF:
	case 'm':
	case 'M':
	case OPT_STATE:
		parse_offcpu_arg(key, arg, state);
		break;
	case OPT_CGROUP:
		env.cgroup = arg;
		break;
	case OPT_MAX_TABLE_MEM:
		env.max_table_mem = parse_size(arg, state);
		break;
	case OPT_TABLE_CACHE:
		env.table_cache = arg;
		break;
	case OPT_NO_TABLE_CACHE:
		env.no_table_cache = true;
		break;
	case OPT_MAX_TABLE_CACHE:
		env.max_table_cache = parse_size(arg, state);
		break;
	case OPT_TABLE_WAIT:
		env.table_wait_ms = parse_table_wait(arg, state);
		break;
	case OPT_MAX_STACK_MEM:
		env.max_stack_mem = parse_size(arg, state);
		break;
	case OPT_MAX_SYMBOL_MEM:
		env.max_symbol_mem = parse_size(arg, state);
		break;
	case OPT_MAX_JIT_MEM:
		env.max_jit_mem = parse_size(arg, state);
		break;
	case OPT_MAX_PYTHON_MEM:
		env.max_python_mem = parse_size(arg, state);
		break;
	case OPT_MAX_DWARF_FILES:
		env.max_dwarf_files = strtoul(arg, &end, 10);
		if (*end || !env.max_dwarf_files || env.max_dwarf_files > 1u << 20)
			argp_error(state, "--max-dwarf-files: a count from 1 to 1048576: %s", arg);
		break;
	case OPT_MAX_SPILL:
		env.max_spill = parse_size(arg, state);
		break;
	case 'S':
		env.max_frames = strtoul(arg, &end, 10);
		if (*end || env.max_frames == 0 || env.max_frames > SFBPF_MAX_FRAMES)
			argp_error(state, "invalid frame limit: %s (1..%d)", arg, SFBPF_MAX_FRAMES);
		break;
	case 'v':
		env.verbose++;
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num > 0)
			argp_usage(state);
		env.duration = strtod(arg, &end);
		if (*end || env.duration <= 0)
			argp_error(state, "invalid duration: %s", arg);
		break;
	case ARGP_KEY_END:
		check_args(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static bool is_dev_null(int fd)
{
	struct stat a, b;

	return !fstat(fd, &a) && S_ISCHR(a.st_mode) && !stat("/dev/null", &b) &&
	       a.st_rdev == b.st_rdev;
}

/*
 * The live view needs a terminal on both ends. Batch tables go where they are
 * asked for, or to a stdout that is not a terminal when nothing else is
 * written: a --folded file means a scripted run that wants only that file,
 * and /dev/null (benchmarks, --stats only) wants nothing: the tables would
 * cost symbolizing every stack for nobody.
 */
static enum out_mode pick_output(void)
{
	bool to_stdout = (env.folded_path && !strcmp(env.folded_path, "-")) ||
			 (env.pprof_path && !strcmp(env.pprof_path, "-")) ||
			 (env.svg_path && !strcmp(env.svg_path, "-")) ||
			 (env.otlp_path && !strcmp(env.otlp_path, "-"));
	bool files = env.folded_path || env.pprof_path || env.svg_path || env.otlp_path;

	if (continuous_cli.enabled)
		return OUT_CONTINUOUS;
	if (env.batch)
		return OUT_BATCH;
	if (to_stdout)
		return OUT_QUIET;
	if (isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))
		return OUT_LIVE;
	return files || is_dev_null(STDOUT_FILENO) ? OUT_QUIET : OUT_BATCH;
}

/* ---- running ---- */

static volatile sig_atomic_t exiting, reopen;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reopen = 1; /* continuous mode: reopen the outputs */
	else
		exiting = 1;
}

static void setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* No SA_RESTART: a signal ends the current wait at once. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (continuous_cli.enabled)
		sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a closed pipe is EPIPE on write */
}

static int run_quiet(struct session *s)
{
	double now = clock__mono_s(), end = env.duration > 0 ? now + env.duration : 0;
	double next_stats = now + env.interval;
	int err;

	if (isatty(STDERR_FILENO))
		fprintf(stderr, "sfbpf-top: sampling at %lu Hz%s... Ctrl-C to end\n", env.freq,
			env.nr_pids ? "" : " system-wide");
	for (; !exiting && (!end || now < end); now = clock__mono_s()) {
		if (env.stats && env.interval_set && now >= next_stats) {
			session__print_stats(s, stderr);
			next_stats += env.interval;
		}
		err = session__poll(s, 100);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "sfbpf-top: reading samples: %s\n", strerror(-err));
			return err;
		}
	}
	return 0;
}

static int run_batch(struct session *s)
{
	struct batch_opts o = {
		.interval = env.interval,
		.duration = env.duration,
		.rows = env.rows,
		.counts = env.counts >= 0 ? env.counts : TOPVIEW_INTERVAL,
		.sort = env.sort,
		.group = env.group,
		.freq = env.freq,
		.stats = env.stats,
		/* Nothing wants the whole run: each table's stacks can go. */
		.forget = !env.folded_path && !env.pprof_path && !env.svg_path,
		.stop = &exiting,
	};
	int err = batch__run(s, &o, stdout);

	if (err == -EPIPE)
		return 0; /* the reader has seen enough (| head) */
	if (err)
		fprintf(stderr, "sfbpf-top: batch output: %s\n", strerror(-err));
	return err;
}

static int run_live(struct session *s)
{
	struct tui_opts o = {
		.interval = env.interval,
		.duration = env.duration,
		.counts = env.counts >= 0 ? env.counts : TOPVIEW_DECAY,
		.sort = env.sort,
		.group = env.group,
		.freq = env.freq,
		.system_wide = !env.nr_pids,
		/* No file at exit: the view need not keep the whole run. */
		.window = !env.folded_path && !env.pprof_path && !env.svg_path && !env.otlp_path,
		.metrics_addr = continuous_cli.opts.metrics_addr,
		.stop = &exiting,
	};
	int err = tui__run(s, &o);

	if (err == -ENOTTY)
		fprintf(stderr,
			"sfbpf-top: cannot drive this terminal (TERM=%s): set TERM, or use "
			"--batch\n",
			getenv("TERM") ? getenv("TERM") : "");
	else if (err)
		fprintf(stderr, "sfbpf-top: live view: %s\n", strerror(-err));
	return err;
}

static int run_continuous(struct session *s)
{
	struct continuous_opts o = continuous_cli.opts;
	int err;

	o.duration = env.duration;
	o.verbose = env.verbose;
	o.stats = env.stats;
	o.exiting = &exiting;
	o.reopen = &reopen;
	err = continuous__run(s, &o);
	if (err)
		fprintf(stderr, "sfbpf-top: continuous mode: %s\n", strerror(-err));
	return err;
}

/*
 * The files keep every sample, but the stack budget may have cost some their
 * frames (folded into their process) or, with no room even there, their
 * place in the files: say how many, and what to raise.
 */
static void warn_budget(struct session *s)
{
	struct aggr_totals t;

	aggregator__totals(session__aggregator(s), &t);
	if (t.folded)
		fprintf(stderr,
			"sfbpf-top: %llu of %llu samples (%.1f%%) are in the files without their "
			"frames (as their process's [truncated] stack): the stacks outgrew "
			"--max-stack-mem (%llu MiB)\n",
			(unsigned long long)t.folded, (unsigned long long)t.samples,
			t.samples ? 100.0 * t.folded / t.samples : 0.0,
			(unsigned long long)(session__budgets(s)->stacks >> 20));
	if (t.refused)
		fprintf(stderr,
			"sfbpf-top: %llu samples are not in the files: no room for them within "
			"--max-stack-mem (%llu MiB)\n",
			(unsigned long long)t.refused,
			(unsigned long long)(session__budgets(s)->stacks >> 20));
}

/*
 * SFBPF_TABLE_CACHE: the table cache's directory, or "off", where no option
 * says: a test suite keeps its runs apart from each other and from the
 * machine's cache, a container points it at a volume.
 */
static void table_cache_from_env(struct session_opts *o)
{
	const char *v = getenv("SFBPF_TABLE_CACHE");

	if (!v || !*v || o->table_cache || o->no_table_cache)
		return;
	if (strcmp(v, "off"))
		o->table_cache = v;
	else if (!o->max_table_cache)
		o->no_table_cache = true;
}

static void fill_session_opts(struct session_opts *o)
{
	memset(o, 0, sizeof(*o));
	memcpy(o->pids, env.pids, sizeof(env.pids[0]) * env.nr_pids);
	o->nr_pids = env.nr_pids;
	o->freq = env.freq;
	o->user_stacks = !env.kernel_only;
	o->kernel_stacks = !env.user_only;
	o->max_frames = env.max_frames;
	o->sframe_only = env.sframe_only;
	o->no_partial_tables = env.no_partial_tables;
	o->off_cpu = env.off_cpu;
	o->on_off = env.on_off;
	o->min_block_us = env.min_us;
	o->max_block_us = env.max_us;
	o->states = env.states;
	o->cgroup = env.cgroup;
	o->max_table_mem = env.max_table_mem;
	o->max_stack_mem = env.max_stack_mem;
	o->table_cache = env.table_cache;
	o->no_table_cache = env.no_table_cache;
	o->max_table_cache = env.max_table_cache;
	o->table_wait_ms = env.table_wait_ms;
	table_cache_from_env(o);
	o->max_symbol_mem = env.max_symbol_mem;
	o->max_jit_mem = env.max_jit_mem;
	o->max_python_mem = env.max_python_mem;
	o->max_dwarf_files = env.max_dwarf_files;
	o->max_spill = env.max_spill;
	o->progress = isatty(STDERR_FILENO);
	o->stop = &exiting;
}

int main(int argc, char **argv)
{
	static const struct argp_child children[] = {
		{ &continuous_argp, 0,
		  "Continuous mode (a profiling service, see docs/continuous.md):", 0 },
		{},
	};
	static const struct argp argp = { options,  parse_arg, "[DURATION]", doc,
					  children, NULL,      NULL };
	struct session *sess = NULL;
	struct outputs_opts outs = { 0 };
	struct session_opts sopts;
	enum out_mode mode;
	int err, ferr;

	/*
	 * A fixed mmap threshold: glibc's sliding one rises to the largest block
	 * freed (an ELF section, a table being built: tens of MiB), after which
	 * such blocks come from the heap and fragment it for good. Big blocks are
	 * mapped and unmapped whole instead.
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	argp_err_exit_status = 2; /* usage errors: 2, like the return below */
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	log__init(env.verbose);
	mode = pick_output();
	/*
	 * Tables and files end, and their loops serve no scrape: --metrics is for
	 * what runs long (told, not ignored, where stdout chose batch or quiet).
	 */
	if (continuous_cli.opts.metrics_addr && mode != OUT_LIVE && mode != OUT_CONTINUOUS) {
		fprintf(stderr,
			"sfbpf-top: --metrics serves the live view (a terminal) or "
			"--continuous, not %s\n",
			mode == OUT_BATCH ? "batch tables (--batch, or stdout not a terminal)" :
					    "a run that writes only files");
		return 2;
	}
	if (preflight__run(env.pids, env.nr_pids, env.freq))
		return 1;
	setup_signals();
	fill_session_opts(&sopts);
	outs = (struct outputs_opts){ .folded_path = env.folded_path,
				      .pprof_path = env.pprof_path,
				      .svg_path = env.svg_path,
				      .otlp_path = env.otlp_path,
				      .start_ns = clock__wall_ns() };
	/* A path that cannot be written fails now, not after the whole run. */
	if (outputs__check(&outs))
		return 1;
	err = session__open(&sess, &sopts);
	if (err)
		goto cleanup;
	symbolizer__set_lines(session__symbolizer(sess), true, !env.no_inline);
	if (env.debuginfod && symbolizer__set_debuginfod(session__symbolizer(sess), true))
		pr_warn("debuginfod: cannot start its client: debug files are not fetched\n");
	if (mode == OUT_LIVE)
		err = run_live(sess);
	else if (mode == OUT_BATCH)
		err = run_batch(sess);
	else if (mode == OUT_CONTINUOUS)
		err = run_continuous(sess);
	else
		err = run_quiet(sess);
	session__stop(sess);
	outs.duration_s = clock__mono_s() - session__attach_time(sess);
	ferr = outputs__write(sess, &outs);
	/* After the outputs: their symbolizing (symbols, lines, copies) is the run's too. */
	if (env.stats)
		session__print_stats(sess, stderr);
	if (env.off_cpu)
		session__print_offcpu_summary(sess, stderr);
	if (env.folded_path || env.pprof_path || env.svg_path || env.otlp_path)
		warn_budget(sess);
	err = err ? err : ferr;
cleanup:
	session__close(sess);
	return err ? 1 : 0;
}
