// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kcost -j, -n and -s (kcost.c's usage): the kernel cost per sample of a JIT
 * runtime's step, HotSpot's (bpf/hotspot.h) or V8's (bpf/v8.h), or of a
 * VM's walk after the native one (bpf/php.h, ruby.h, perl.h). For each
 * depth one process of the runtime spins at the bottom of that many calls
 * its optimising compiler compiled (not inlined into each other: each call
 * a frame of its own), sampled by the unwinder alone in two modes on the
 * same process, the order rotating: "off" (no settings for it: the walk
 * ends at, or steps through unnamed, its first frame of the runtime, as for
 * a process not attached) and "on" (its frames stepped and identified). One
 * line per repetition, depth and mode:
 *   jcost|v8cost|phpcost|rbcost|plcost rep=R frames=D mode=off|on runs=N \
 *                run_ns=N user_frames=N COUNTER=N COUNTER=N COUNTER=N stop=NAME
 * with the runtime's step counters (hs_interpreted, hs_compiled, hs_failed;
 * v8_interpreted, v8_optimized, v8_unread; the VMs' vm_samples, vm_frames
 * and vm_done: walks, frames sent, walks that reached the outermost frame).
 * A VM's script is run as the process itself (not compiled to anything, its
 * frames all of its interpreter): the depth is that many calls of one
 * function, and "off" is the native walk that ends in the VM's own loop.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "interp/hotspot.h"
#include "interp/v8.h"
#include "kcost.h"
#include "procs/procmaps.h"
#include "procs/proctrack.h"
#include "profile/perls.h"
#include "profile/phps.h"
#include "profile/profile.h"
#include "profile/rubies.h"

enum jit_mode { JIT_OFF, JIT_ON, JIT_MODES };
static const char *const jit_modes[JIT_MODES] = { "off", "on" };

/* A runtime as its lines name it: its settings map and the counters of its step. */
struct jit {
	const char *line;
	int (*procs_fd)(const struct profile *prof);
	const char *names[3];
	int stats[3];
};

static const struct jit hotspot_jit = {
	.line = "jcost",
	.procs_fd = profile__hs_procs_fd,
	.names = { "hs_interpreted", "hs_compiled", "hs_failed" },
	.stats = { SFBPF_STAT_HS_INTERPRETED, SFBPF_STAT_HS_COMPILED, SFBPF_STAT_HS_FAILED },
};

static const struct jit v8_jit = {
	.line = "v8cost",
	.procs_fd = profile__v8_procs_fd,
	.names = { "v8_interpreted", "v8_optimized", "v8_unread" },
	.stats = { SFBPF_STAT_V8_INTERPRETED, SFBPF_STAT_V8_OPTIMIZED, SFBPF_STAT_V8_UNREAD },
};

/* The VMs read after the native walk: kcost -s NAME,BIN,SCRIPT. */
struct vm {
	const char *name;
	const struct afterwalk_kind *kind;
	struct jit jit;
};

static const struct vm vms[] = {
	{ "php",
	  &php_kind,
	  { "phpcost",
	    profile__php_procs_fd,
	    { "vm_samples", "vm_frames", "vm_done" },
	    { SFBPF_STAT_PHP_SAMPLES, SFBPF_STAT_PHP_FRAMES,
	      SFBPF_STAT_PHP_STOP_BASE + SFBPF_PHP_STOP_DONE } } },
	{ "ruby",
	  &ruby_kind,
	  { "rbcost",
	    profile__rb_procs_fd,
	    { "vm_samples", "vm_frames", "vm_done" },
	    { SFBPF_STAT_RUBY_SAMPLES, SFBPF_STAT_RUBY_FRAMES,
	      SFBPF_STAT_RUBY_STOP_BASE + SFBPF_RB_STOP_DONE } } },
	{ "perl",
	  &perl_kind,
	  { "plcost",
	    profile__pl_procs_fd,
	    { "vm_samples", "vm_frames", "vm_done" },
	    { SFBPF_STAT_PERL_SAMPLES, SFBPF_STAT_PERL_FRAMES,
	      SFBPF_STAT_PERL_STOP_BASE + SFBPF_PL_STOP_DONE } } },
};

static const struct vm *find_vm(const char *name)
{
	for (size_t i = 0; i < sizeof(vms) / sizeof(vms[0]); i++)
		if (name && !strcmp(vms[i].name, name))
			return &vms[i];
	return NULL;
}

bool vm_known(const char *name)
{
	return find_vm(name) != NULL;
}

/* pid's start time in clock ticks (/proc/PID/stat's 22nd field), or 0. */
static unsigned long long start_ticks(pid_t pid)
{
	unsigned long long v = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	if (!p || sscanf(p + 1,
			 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 &v) != 1)
		return 0;
	return v;
}

/*
 * The JVM's busiest thread (the one spinning: the launcher runs main in a
 * thread of its own, not the process's first), by its CPU time so far.
 */
static pid_t busiest_thread(pid_t pid)
{
	char dir[64], path[300];
	double best = -1, c;
	pid_t tid = -1;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%d/task/%s", (int)pid, e->d_name);
		c = cpu_secs_at(path);
		if (c > best) {
			best = c;
			tid = atoi(e->d_name);
		}
	}
	closedir(d);
	return tid;
}

/* One window of mode on the process pid (its event ev), cfg its settings: secs/2 of its CPU time.
 */
static int jit_window(struct bench *b, pid_t pid, int ev, const struct jit *j, const void *cfg,
		      enum jit_mode mode, int rep, int frames)
{
	int fd = j->procs_fd(b->prof);
	__u32 key = (__u32)pid;
	struct snap a, z;
	enum sfbpf_stop top = SFBPF_STOP_OUTERMOST;

	if (mode == JIT_ON ? bpf_map_update_elem(fd, &key, cfg, BPF_ANY) :
			     (bpf_map_delete_elem(fd, &key) && errno != ENOENT))
		return -1;
	if (sample_window(b, pid, ev, &a, &z, NULL, NULL, 5))
		return -1;
	for (int s = 0; s < SFBPF_STOP__COUNT; s++)
		if (z.v[SFBPF_STAT_STOP_BASE + s] - a.v[SFBPF_STAT_STOP_BASE + s] >
		    z.v[SFBPF_STAT_STOP_BASE + top] - a.v[SFBPF_STAT_STOP_BASE + top])
			top = (enum sfbpf_stop)s;
	printf("%s rep=%d frames=%d mode=%s runs=%llu run_ns=%llu user_frames=%llu", j->line, rep,
	       frames, jit_modes[mode], (unsigned long long)(z.runs - a.runs),
	       (unsigned long long)(z.run_ns - a.run_ns),
	       (unsigned long long)(z.v[SFBPF_STAT_FRAMES] - a.v[SFBPF_STAT_FRAMES]));
	for (int i = 0; i < 3; i++)
		printf(" %s=%llu", j->names[i],
		       (unsigned long long)(z.v[j->stats[i]] - a.v[j->stats[i]]));
	printf(" stop=%s\n", profile__stop_name(top));
	fflush(stdout);
	return 0;
}

/*
 * The runtime's process for one depth: argv (its last two the seconds and
 * the depth, filled in here) pinned to cpu, dying with us, once it ran warm
 * seconds of its CPU (start-up, the compiles of its warm-up, the descent),
 * its mappings read: its pid, or -1 (killed).
 */
static pid_t jit_spawn(struct bench *b, const char **argv, int argc, int frames, int cpu,
		       double warm)
{
	char s[16], depth[16];
	pid_t pid;

	snprintf(s, sizeof(s), "%d", (int)(env.secs * 3 * SLOWEST) + 180);
	snprintf(depth, sizeof(depth), "%d", frames);
	argv[argc - 3] = s;
	argv[argc - 2] = depth;
	argv[argc - 1] = NULL;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (cpu >= 0)
			pin(0, cpu);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	if (run_both(NULL, pid, 0, pid, 0, warm, now() + 300) ||
	    proctrack__refresh(b->procs, pid) < 0) {
		fprintf(stderr, "kcost: %s exited\n", argv[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Off and on in turn (their order rotating) on pid, cfg its settings (NULL: none); pid ended. */
static int jit_measure(struct bench *b, const struct jit *j, pid_t pid, const void *cfg, int rep,
		       int frames)
{
	int ev = cfg ? open_event(busiest_thread(pid), b->sf_prog) : -1, err = -1, i;

	if (!cfg)
		fprintf(stderr, "kcost: pid %d: its runtime was not attached\n", (int)pid);
	for (i = 0; ev >= 0 && i < JIT_MODES; i++)
		if (jit_window(b, pid, ev, j, cfg, (enum jit_mode)((i + rep) % JIT_MODES), rep,
			       frames))
			break;
	err = ev >= 0 && i == JIT_MODES ? 0 : -1;
	if (ev >= 0)
		close(ev);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	proctrack__remove(b->procs, pid);
	return err;
}

/* One depth, one repetition on one JVM. */
int measure_java(struct bench *b, int rep, int frames, int cpu)
{
	/* rec not inlined into itself (C2 would fold every other call): a compiled frame a call. */
	const char *argv[] = { env.java,
			       "-XX:CompileCommand=quiet",
			       "-XX:CompileCommand=dontinline,JRecurse::rec",
			       "-cp",
			       env.java_cp,
			       "JRecurse",
			       NULL,
			       NULL,
			       NULL };
	struct sfbpf_hs_proc cfg;
	struct hotspot *hs = NULL;
	pid_t pid = jit_spawn(b, argv, sizeof(argv) / sizeof(argv[0]), frames, cpu, 3);
	bool ok;
	int err, tries;

	if (pid < 0)
		return -1;
	for (tries = 0; tries < 50 && hotspot__attach(pid, &hs); tries++)
		usleep(100000);
	ok = hs && !hotspot__bpf_settings(hs, &cfg);
	if (ok)
		cfg.start_ticks = start_ticks(pid);
	err = jit_measure(b, &hotspot_jit, pid, ok ? &cfg : NULL, rep, frames);
	hotspot__free(hs);
	return err;
}

/* One depth, one repetition on one node. */
int measure_node(struct bench *b, int rep, int frames, int cpu)
{
	/* rec not inlined into itself: an optimised frame a call. */
	const char *argv[] = { env.node, "--no-turbo-inlining", env.node_script, NULL, NULL, NULL };
	struct sfbpf_v8_proc cfg;
	struct procmaps *pm = NULL;
	struct v8 *v = NULL;
	pid_t pid = jit_spawn(b, argv, sizeof(argv) / sizeof(argv[0]), frames, cpu, 3);
	bool ok;
	int err, tries;

	if (pid < 0)
		return -1;
	for (tries = 0; tries < 50 && v8__attach(pid, &v); tries++)
		usleep(100000);
	ok = v && !procmaps__read(pid, &pm) && !v8__bpf_settings(v, pm, &cfg);
	if (ok)
		cfg.start_ticks = start_ticks(pid);
	err = jit_measure(b, &v8_jit, pid, ok ? &cfg : NULL, rep, frames);
	procmaps__free(pm);
	v8__free(v);
	return err;
}

/* One depth, one repetition on one process of a VM read after the native walk. */
int measure_vm(struct bench *b, int rep, int frames, int cpu)
{
	const struct vm *vm = find_vm(env.vm);
	const char *argv[] = { env.vm_bin, env.vm_script, NULL, NULL, NULL };
	uint8_t cfg[256] = { 0 };
	void *rt = NULL;
	pid_t pid;
	bool ok;
	int err, tries;

	if (!vm || vm->kind->settings_size > sizeof(cfg))
		return -1;
	/* No compiler to wait for: start-up and the descent. */
	pid = jit_spawn(b, argv, sizeof(argv) / sizeof(argv[0]), frames, cpu, 0.5);
	if (pid < 0)
		return -1;
	/* -EAGAIN while the VM starts; the attach the session would make, its settings. */
	for (tries = 0; tries < 50 && vm->kind->attach(pid, &rt) == -EAGAIN; tries++)
		usleep(100000);
	ok = rt && !vm->kind->settings(rt, cfg);
	if (ok)
		memcpy(cfg, &(uint64_t){ start_ticks(pid) }, sizeof(uint64_t));
	err = jit_measure(b, &vm->jit, pid, ok ? cfg : NULL, rep, frames);
	if (rt)
		vm->kind->free(rt);
	return err;
}
