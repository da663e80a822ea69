// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sfbpf-top: samples every CPU, unwinds user stacks in the kernel from SFrame
 * tables, and writes what it saw. This file wires the modules together:
 * options → profile (BPF) → tables + proctrack (maps) → poll → aggregate →
 * symbolize → output.
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "folded.h"
#include "session.h"

#define MAX_TARGETS SESSION_MAX_PIDS

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
} env = { .freq = 99 };

const char *argp_program_version = "sfbpf-top 0.1";
static const char doc[] =
	"Profile CPUs with stacks unwound in the kernel from SFrame tables.\n"
	"\n"
	"USAGE: sfbpf-top [-p PID[,PID...]] [-F HZ] [-U|-K] [--folded FILE] [DURATION]\n"
	"\n"
	"EXAMPLES:\n"
	"    sfbpf-top                        # whole system until Ctrl-C\n"
	"    sfbpf-top -p 1234 -F 999 10      # one process at 999 Hz for 10 s\n"
	"    sfbpf-top --folded out.folded 30 # folded stacks for flamegraph.pl\n"
	"    sfbpf-top -U --folded - 5        # user stacks only, to stdout\n";

enum { OPT_FOLDED = 256, OPT_STATS };

static const struct argp_option options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Profile these processes only", 0 },
	{ "freq", 'F', "HZ", 0, "Sampling frequency per CPU (default 99)", 0 },
	{ "user", 'U', NULL, 0, "User stacks only", 0 },
	{ "kernel", 'K', NULL, 0, "Kernel stacks only", 0 },
	{ "folded", OPT_FOLDED, "FILE", 0, "Write folded stacks at exit (- for stdout)", 0 },
	{ "stats", OPT_STATS, NULL, 0, "Print sampling and unwinding counters at exit", 0 },
	{ "max-frames", 'S', "N", 0, "User frames per stack (default 127)", 0 },
	{ "verbose", 'v', NULL, 0, "More diagnostics (twice: libbpf/verifier output)", 0 },
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

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;

	switch (key) {
	case 'p':
		return parse_pids(arg, state);
	case 'F':
		env.freq = strtoul(arg, &end, 10);
		if (*end || env.freq == 0 || env.freq > 100000)
			argp_error(state, "invalid frequency: %s", arg);
		break;
	case 'U':
		env.user_only = true;
		break;
	case 'K':
		env.kernel_only = true;
		break;
	case OPT_FOLDED:
		env.folded_path = arg;
		break;
	case OPT_STATS:
		env.stats = true;
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
		if (env.user_only && env.kernel_only)
			argp_error(state, "-U and -K exclude each other");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static int check_privileges(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (geteuid() != 0) {
		fprintf(stderr, "sfbpf-top: needs root (CAP_BPF and CAP_PERFMON): run it with sudo\n");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "sfbpf-top: no kernel BTF at /sys/kernel/btf/vmlinux: "
				"a kernel built with CONFIG_DEBUG_INFO_BTF=y is required\n");
		return -ENOENT;
	}
	setrlimit(RLIMIT_MEMLOCK, &rl); /* older kernels charge BPF maps to memlock */
	return 0;
}

static void run_loop(struct session *s)
{
	double end = env.duration > 0 ? session_now() + env.duration : 0;
	int err;

	while (!exiting && (!end || session_now() < end)) {
		err = session__poll(s, 100);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "sfbpf-top: reading samples: %s\n", strerror(-err));
			break;
		}
	}
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
	o->verbose = env.verbose;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { options, parse_arg, "[DURATION]", doc, NULL, NULL, NULL };
	static struct session sess;
	struct folded_opts fopts = { 0 };
	struct session_opts sopts;
	int err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;
	if (check_privileges())
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fill_session_opts(&sopts);
	err = session__open(&sess, &sopts);
	if (err)
		goto cleanup;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "sfbpf-top: sampling at %lu Hz%s... Ctrl-C to end\n", env.freq,
			env.nr_pids ? "" : " system-wide");
	run_loop(&sess);
	session__stop(&sess);
	if (env.stats)
		session__print_stats(&sess, stderr);
	if (env.folded_path)
		err = folded__write(sess.agg, sess.sym, sess.ksyms, &fopts, env.folded_path);
cleanup:
	session__close(&sess);
	return err ? 1 : 0;
}
