// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Kernel cost per sample: the SFrame unwinder (bpf/profile.bpf.c) against the
 * frame-pointer reference (bpf/fpwalk.bpf.c), from the kernel's own BPF run
 * time accounting (BPF_ENABLE_STATS: run_time_ns / run_cnt per program).
 *
 * For each depth, two copies of tests/bench/recurse spin at that depth at the
 * same time: one built with SFrame and no frame pointers, sampled by the
 * unwinder, and one built with frame pointers, sampled by fpwalk. Each has
 * its own per-task cpu-clock event, so a program runs only for the samples of
 * its own process (no filtered-out runs dilute the average). Both processes
 * are pinned to the same CPU, so they alternate on it under the same
 * conditions; this driver consumes the ring buffers from another CPU. The CPU
 * changes every repetition and the depth order rotates.
 *
 * Prints one line per repetition, depth and program:
 *   kcost rep=R frames=D prog=sframe|fp runs=N run_ns=N samples=N \
 *         user_frames=N stop=NAME received=N
 * (user_frames: total user frames unwound; stop: the most common stop reason).
 *
 * Usage: kcost [-d SECS] [-f HZ] [-r REPS] [-m MODE] SF_BIN FP_BIN FRAMES...
 *
 * MODE says how the unwinder finds the SFrame process's tables (prog= in the
 * lines): "sframe", its entry (the default); "vma", no entry, its files'
 * tables published by their identity, so each sample is walked with the
 * mappings found in the kernel (bpf/vmafind.h: bpf_find_vma() at the first
 * samples, the kept table after: a hit); "vmamiss", no entry and nothing
 * published: each sample looks its leaf's VMA up and finds no table for its
 * file (vma_miss_no_ident), the cost of a miss.
 *
 * With -y PYTHON,SCRIPT (tests/bench/pyrecurse.py), the Python walk instead
 * (bpf/python.h): for each depth one interpreter spins that many distinct
 * functions deep, sampled by the unwinder alone, in three modes measured in
 * turn on the same process: "off" (the walk without descriptions: the code
 * before them), "steady" (descriptions on, every code object described
 * already) and "cold" (descriptions on, the attach generation moved every
 * millisecond: each sample finds its code objects new, and describes up to
 * SFBPF_PY_DESCRIBE_MAX of them). One line per repetition, depth and mode:
 *   pycost rep=R frames=D mode=off|steady|cold runs=N run_ns=N py_samples=N \
 *          py_frames=N described=N later=N
 *
 * With -j JAVA,CLASSDIR (tests/bench/JRecurse.java) or -n NODE,SCRIPT
 * (tests/bench/v8recurse.js), the step of a JIT runtime, HotSpot's or V8's
 * (kcost_jit.c).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fpwalk.skel.h"
#include "kcost.h"
#include "profile/profile.h"
#include "profile/runtimes.h"
#include "procs/proctrack.h"
#include "maps/tables.h"

struct kcost_env env = { .secs = 2, .hz = 4999, .reps = 5, .mode = "sframe" };

static unsigned long long received_sf, received_fp;

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * CPU time pid has run (user + system), in seconds, or -1 once it is gone.
 * The windows below are in the processes' own CPU time, not in wall time: on
 * a busy machine two processes pinned to one CPU may get a small share of
 * it, and a wall-clock window then held no sample of one of them.
 */
double cpu_secs_at(const char *proc_path)
{
	unsigned long long ut, st;
	char path[320], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/stat", proc_path);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	/* After the comm: state, 5 ints, flags and 4 fault counts, then utime and stime. */
	if (!p ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

double cpu_secs(pid_t pid)
{
	char p[16];

	snprintf(p, sizeof(p), "%d", (int)pid);
	return cpu_secs_at(p);
}

static int on_sf_sample(void *ctx, const struct sfbpf_sample *s, size_t size)
{
	(void)ctx;
	(void)s;
	(void)size;
	received_sf++;
	return 0;
}

static int on_fp_sample(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	received_fp++;
	return 0;
}

void pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(pid, sizeof(set), &set);
}

/*
 * Starts INTERP (NULL: none) SCRIPT_OR_BIN SECS FRAMES pinned to cpu (< 0:
 * anywhere), running for secs; it dies with us.
 */
static pid_t spawn_run(const char *interp, const char *bin, int secs, int frames, int cpu)
{
	char s[16], depth[16];
	pid_t pid;

	snprintf(s, sizeof(s), "%d", secs);
	snprintf(depth, sizeof(depth), "%d", frames);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (cpu >= 0)
			pin(0, cpu);
		if (interp)
			execl(interp, interp, bin, s, depth, (char *)NULL);
		else
			execl(bin, bin, s, depth, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Starts BIN spinning FRAMES deep on cpu. */
static pid_t spawn(const char *bin, int frames, int cpu)
{
	return spawn_run(NULL, bin, (int)(env.secs * SLOWEST) + 180, frames, cpu);
}

int open_event(pid_t pid, int prog_fd)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = env.hz,
		.freq = 1,
		.disabled = 1,
	};
	int fd;

	fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "kcost: perf_event_open(pid %d, %lu Hz): %s\n", pid, env.hz,
			strerror(errno));
		return -1;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
		fprintf(stderr, "kcost: PERF_EVENT_IOC_SET_BPF: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int sum_stats(int map_fd, __u64 out[SFBPF_STAT__COUNT])
{
	int ncpu = libbpf_num_possible_cpus(), i, j;
	struct sfbpf_stats *per;
	__u32 zero = 0;

	memset(out, 0, sizeof(__u64) * SFBPF_STAT__COUNT);
	per = calloc(ncpu, sizeof(*per));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &zero, per)) {
		free(per);
		return -errno;
	}
	for (i = 0; i < ncpu; i++)
		for (j = 0; j < SFBPF_STAT__COUNT; j++)
			out[j] += per[i].v[j];
	free(per);
	return 0;
}

int take(int prog_fd, int stats_fd, struct snap *s)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	s->run_ns = info.run_time_ns;
	s->runs = info.run_cnt;
	return sum_stats(stats_fd, s->v);
}

static void report(int rep, int frames, const char *prog, const struct snap *a,
		   const struct snap *b, unsigned long long received)
{
	int i, top = 0;
	__u64 best = 0, d;

	for (i = 0; i < SFBPF_STOP__COUNT; i++) {
		d = b->v[SFBPF_STAT_STOP_BASE + i] - a->v[SFBPF_STAT_STOP_BASE + i];
		if (d > best) {
			best = d;
			top = i;
		}
	}
	printf("kcost rep=%d frames=%d prog=%s runs=%llu run_ns=%llu samples=%llu "
	       "user_frames=%llu stop=%s received=%llu\n",
	       rep, frames, prog, (unsigned long long)(b->runs - a->runs),
	       (unsigned long long)(b->run_ns - a->run_ns),
	       (unsigned long long)(b->v[SFBPF_STAT_SAMPLES] - a->v[SFBPF_STAT_SAMPLES]),
	       (unsigned long long)(b->v[SFBPF_STAT_FRAMES] - a->v[SFBPF_STAT_FRAMES]),
	       profile__stop_name(top), received);
	fflush(stdout);
}

/* The unwinder's counter map: profile.h exports no fd for it, find it by name. */
static int find_stats_map(int prog_fd)
{
	struct bpf_prog_info pinfo;
	struct bpf_map_info minfo;
	__u32 map_ids[32], i, len;
	int fd;

	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.nr_map_ids = 32;
	pinfo.map_ids = (__u64)(unsigned long)map_ids;
	len = sizeof(pinfo);
	if (bpf_obj_get_info_by_fd(prog_fd, &pinfo, &len))
		return -1;
	for (i = 0; i < pinfo.nr_map_ids && i < 32; i++) {
		fd = bpf_map_get_fd_by_id(map_ids[i]);
		if (fd < 0)
			continue;
		memset(&minfo, 0, sizeof(minfo));
		len = sizeof(minfo);
		if (!bpf_obj_get_info_by_fd(fd, &minfo, &len) && !strcmp(minfo.name, "stats") &&
		    minfo.value_size == sizeof(struct sfbpf_stats))
			return fd;
		close(fd);
	}
	return -1;
}

static int setup(struct bench *b)
{
	struct profile_opts popts = {
		.user_stacks = true,
		.kernel_stacks = true,
		.skip_idle = true,
		.on_sample = on_sf_sample,
	};
	struct tables_opts topts = {
		.max_rows = PROFILE_DEFAULT_ROWS,
		.max_rules = PROFILE_DEFAULT_RULES,
		.max_objects = PROFILE_DEFAULT_OBJECTS,
		.max_pages = PROFILE_DEFAULT_PAGES,
	};
	b->prof = profile__new(&popts);
	if (!b->prof) {
		fprintf(stderr, "kcost: cannot load the unwinder: %s\n", strerror(errno));
		return -1;
	}
	topts.rows_fd = profile__rows_fd(b->prof);
	topts.rules_fd = profile__rules_fd(b->prof);
	topts.objects_fd = profile__objects_fd(b->prof);
	topts.pages_fd = profile__pages_fd(b->prof);
	topts.idents_fd = profile__idents_fd(b->prof); /* -m vma: tables by their files' identity */
	b->tables = tables__new(&topts);
	b->procs = b->tables ? proctrack__new(b->tables, profile__procs_fd(b->prof)) : NULL;
	if (!b->procs)
		return -1;
	b->sf_prog = profile__prog_fd(b->prof);
	b->sf_stats = find_stats_map(b->sf_prog);
	if (b->sf_stats < 0) {
		fprintf(stderr, "kcost: the unwinder has no stats map\n");
		return -1;
	}
	if (env.java || env.node || env.vm)
		return 0; /* attached by measure_java(), measure_node(), measure_vm(): two modes */
	if (env.python) {
		struct runtime_host host = { .prof = b->prof };
		struct proctrack_listener l;

		b->runtimes = runtimes__new(&host);
		if (!b->runtimes)
			return -1;
		l = runtimes__listener(b->runtimes);
		proctrack__set_listener(b->procs, &l);
		return 0; /* no frame-pointer reference: one program, three modes */
	}

	b->fp = fpwalk_bpf__open();
	if (!b->fp)
		return -1;
	b->fp->rodata->skip_idle = true;
	if (fpwalk_bpf__load(b->fp)) {
		fprintf(stderr, "kcost: cannot load fpwalk\n");
		return -1;
	}
	b->fp_prog = bpf_program__fd(b->fp->progs.sfbpf_fpwalk);
	b->fp_stats = bpf_map__fd(b->fp->maps.stats);
	b->fp_rb = ring_buffer__new(bpf_map__fd(b->fp->maps.events), on_fp_sample, NULL, NULL);
	return b->fp_rb ? 0 : -1;
}

/* Until both have run secs of CPU beyond base_*, or deadline (wall); -1 if one is gone. */
int run_both(struct bench *b, pid_t a, double base_a, pid_t c, double base_c, double secs,
	     double deadline)
{
	double ca, cc;

	for (;;) {
		ca = cpu_secs(a);
		cc = cpu_secs(c);
		if (ca < 0 || cc < 0)
			return -1;
		if ((ca - base_a >= secs && cc - base_c >= secs) || now() >= deadline)
			return 0;
		if (b) {
			profile__poll(b->prof, 5);
			ring_buffer__poll(b->fp_rb, 5);
		} else {
			usleep(5000);
		}
	}
}

/* One depth, one repetition: both processes side by side on one CPU. */
static int measure(struct bench *b, int rep, int frames, int cpu)
{
	struct snap sf0, sf1, fp0, fp1;
	pid_t sf_pid, fp_pid;
	int sf_ev = -1, fp_ev = -1, err = -1;
	unsigned long long sf_recv, fp_recv;

	sf_pid = spawn(env.sf_bin, frames, cpu);
	fp_pid = spawn(env.fp_bin, frames, cpu);
	if (sf_pid < 0 || fp_pid < 0)
		goto out;
	/* Exec, dynamic linking, descent: 0.1 s of each one's CPU (0.2 s of wall time, idle). */
	if (run_both(NULL, sf_pid, 0, fp_pid, 0, 0.1, now() + 120)) {
		fprintf(stderr, "kcost: a recurse process exited\n");
		goto out;
	}
	err = strcmp(env.mode, "vmamiss") ? proctrack__refresh(b->procs, sf_pid) : 0;
	if (err < 0) {
		fprintf(stderr, "kcost: loading tables of %s: %s\n", env.sf_bin, strerror(-err));
		goto out;
	}
	/* vma: the tables and their files' identities stay published, the entry goes. */
	if (!strcmp(env.mode, "vma")) {
		__u32 key = (__u32)sf_pid;

		if (bpf_map_delete_elem(profile__procs_fd(b->prof), &key)) {
			fprintf(stderr, "kcost: dropping the entry of %d: %s\n", sf_pid,
				strerror(errno));
			goto out;
		}
	}
	err = -1;
	sf_ev = open_event(sf_pid, b->sf_prog);
	fp_ev = open_event(fp_pid, b->fp_prog);
	if (sf_ev < 0 || fp_ev < 0)
		goto out;
	if (take(b->sf_prog, b->sf_stats, &sf0) || take(b->fp_prog, b->fp_stats, &fp0))
		goto out;
	sf_recv = received_sf;
	fp_recv = received_fp;
	ioctl(sf_ev, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fp_ev, PERF_EVENT_IOC_ENABLE, 0);
	/* SECS of wall time on an idle CPU: half of it each, in CPU time. */
	if (run_both(b, sf_pid, cpu_secs(sf_pid), fp_pid, cpu_secs(fp_pid), env.secs / 2,
		     now() + env.secs * SLOWEST)) {
		fprintf(stderr, "kcost: a recurse process exited\n");
		goto out;
	}
	ioctl(sf_ev, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fp_ev, PERF_EVENT_IOC_DISABLE, 0);
	profile__poll(b->prof, 0);
	ring_buffer__consume(b->fp_rb);
	if (take(b->sf_prog, b->sf_stats, &sf1) || take(b->fp_prog, b->fp_stats, &fp1))
		goto out;
	report(rep, frames, env.mode, &sf0, &sf1, received_sf - sf_recv);
	report(rep, frames, "fp", &fp0, &fp1, received_fp - fp_recv);
	err = 0;
out:
	if (sf_ev >= 0)
		close(sf_ev);
	if (fp_ev >= 0)
		close(fp_ev);
	if (sf_pid > 0) {
		kill(sf_pid, SIGKILL);
		waitpid(sf_pid, NULL, 0);
		proctrack__remove(b->procs, sf_pid);
	}
	if (fp_pid > 0) {
		kill(fp_pid, SIGKILL);
		waitpid(fp_pid, NULL, 0);
	}
	return err;
}

/* Starts the Python workload FRAMES functions deep on cpu. */
static pid_t spawn_py(int frames, int cpu)
{
	return spawn_run(env.python, env.py_script, (int)(env.secs * 3 * SLOWEST) + 180, frames,
			 cpu);
}

enum py_mode { PY_OFF, PY_STEADY, PY_COLD, PY_MODES };
static const char *const py_modes[PY_MODES] = { "off", "steady", "cold" };

/* pid's Python settings with describe on or off; cold: a new generation too. */
static int py_set(struct bench *b, pid_t pid, bool describe, bool new_gen)
{
	struct sfbpf_py_proc cfg;
	__u32 key = (__u32)pid;
	int fd = profile__py_procs_fd(b->prof);

	if (bpf_map_lookup_elem(fd, &key, &cfg))
		return -errno;
	cfg.describe = describe;
	cfg.gen += new_gen;
	return bpf_map_update_elem(fd, &key, &cfg, BPF_EXIST) ? -errno : 0;
}

int sample_window(struct bench *b, pid_t pid, int ev, struct snap *a, struct snap *z,
		  int (*each)(void *ctx), void *ctx, int poll_ms)
{
	double base = cpu_secs(pid), deadline = now() + env.secs * SLOWEST, c;

	if (take(b->sf_prog, b->sf_stats, a))
		return -1;
	ioctl(ev, PERF_EVENT_IOC_ENABLE, 0);
	for (;;) {
		c = cpu_secs(pid);
		if (c < 0)
			return -1;
		if (c - base >= env.secs / 2 || now() >= deadline)
			break;
		if (each && each(ctx))
			return -1;
		profile__poll(b->prof, poll_ms);
	}
	ioctl(ev, PERF_EVENT_IOC_DISABLE, 0);
	profile__poll(b->prof, 0);
	return take(b->sf_prog, b->sf_stats, z);
}

struct py_cold {
	struct bench *b;
	pid_t pid;
};

/* PY_COLD: the attach generation moved, every code object new to the walk. */
static int py_new_gen(void *ctx)
{
	struct py_cold *c = ctx;

	return py_set(c->b, c->pid, true, true);
}

/* One window of mode on pid (its event ev): secs/2 of its CPU time. */
static int py_window(struct bench *b, pid_t pid, int ev, enum py_mode mode, int rep, int frames)
{
	struct py_cold cold = { b, pid };
	struct snap a, z;

	if (py_set(b, pid, mode != PY_OFF, false))
		return -1;
	if (mode == PY_STEADY) { /* every code object described before the window */
		ioctl(ev, PERF_EVENT_IOC_ENABLE, 0);
		usleep(50000);
		ioctl(ev, PERF_EVENT_IOC_DISABLE, 0);
		profile__poll(b->prof, 0);
	}
	if (sample_window(b, pid, ev, &a, &z, mode == PY_COLD ? py_new_gen : NULL, &cold, 1))
		return -1;
	printf("pycost rep=%d frames=%d mode=%s runs=%llu run_ns=%llu py_samples=%llu "
	       "py_frames=%llu described=%llu later=%llu\n",
	       rep, frames, py_modes[mode], (unsigned long long)(z.runs - a.runs),
	       (unsigned long long)(z.run_ns - a.run_ns),
	       (unsigned long long)(z.v[SFBPF_STAT_PY_SAMPLES] - a.v[SFBPF_STAT_PY_SAMPLES]),
	       (unsigned long long)(z.v[SFBPF_STAT_PY_FRAMES] - a.v[SFBPF_STAT_PY_FRAMES]),
	       (unsigned long long)(z.v[SFBPF_STAT_PY_DESCRIBED] - a.v[SFBPF_STAT_PY_DESCRIBED]),
	       (unsigned long long)(z.v[SFBPF_STAT_PY_DESCRIBE_LATER] -
				    a.v[SFBPF_STAT_PY_DESCRIBE_LATER]));
	fflush(stdout);
	return 0;
}

/* One depth, one repetition: the three modes in turn (their order rotating) on one process. */
static int measure_py(struct bench *b, int rep, int frames, int cpu)
{
	pid_t pid = spawn_py(frames, cpu);
	int ev = -1, err = -1, i;

	if (pid < 0)
		return -1;
	/* Start-up and the descent: 0.3 s of its CPU, then its tables and its interpreter. */
	if (run_both(NULL, pid, 0, pid, 0, 0.3, now() + 120)) {
		fprintf(stderr, "kcost: the Python workload exited\n");
		goto out;
	}
	if (proctrack__refresh(b->procs, pid) < 0)
		goto out;
	if (!runtimes__attached(b->runtimes, pid)) {
		fprintf(stderr, "kcost: %s: its CPython was not attached\n", env.python);
		goto out;
	}
	ev = open_event(pid, b->sf_prog);
	if (ev < 0)
		goto out;
	for (i = 0; i < PY_MODES; i++)
		if (py_window(b, pid, ev, (enum py_mode)((i + rep) % PY_MODES), rep, frames))
			goto out;
	err = 0;
out:
	if (ev >= 0)
		close(ev);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	proctrack__remove(b->procs, pid);
	return err;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: kcost [-d SECS] [-f HZ] [-r REPS] [-m sframe|vma|vmamiss] SF_BIN "
		"FP_BIN FRAMES...\n"
		"       kcost [-d SECS] [-f HZ] [-r REPS] -y PYTHON,SCRIPT FRAMES...\n"
		"       kcost [-d SECS] [-f HZ] [-r REPS] -j JAVA,CLASSDIR FRAMES...\n"
		"       kcost [-d SECS] [-f HZ] [-r REPS] -n NODE,SCRIPT FRAMES...\n"
		"       kcost [-d SECS] [-f HZ] [-r REPS] -s php|ruby|perl,BIN,SCRIPT FRAMES...\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct bench b = { 0 };
	int opt, i, rep, stats_fd, ncpu, err = 0;

	while ((opt = getopt(argc, argv, "d:f:j:m:n:r:s:y:")) != -1) {
		switch (opt) {
		case 'm':
			if (strcmp(optarg, "sframe") && strcmp(optarg, "vma") &&
			    strcmp(optarg, "vmamiss"))
				return usage();
			env.mode = optarg;
			break;
		case 'y':
			env.python = optarg;
			env.py_script = strchr(optarg, ',');
			if (!env.py_script)
				return usage();
			*(char *)env.py_script++ = 0;
			break;
		case 'j':
			env.java = optarg;
			env.java_cp = strchr(optarg, ',');
			if (!env.java_cp)
				return usage();
			*(char *)env.java_cp++ = 0;
			break;
		case 'n':
			env.node = optarg;
			env.node_script = strchr(optarg, ',');
			if (!env.node_script)
				return usage();
			*(char *)env.node_script++ = 0;
			break;
		case 's':
			env.vm = optarg;
			env.vm_bin = strchr(optarg, ',');
			env.vm_script = env.vm_bin ? strchr(env.vm_bin + 1, ',') : NULL;
			if (!env.vm_script)
				return usage();
			*(char *)env.vm_bin++ = 0;
			*(char *)env.vm_script++ = 0;
			if (!vm_known(env.vm))
				return usage();
			break;
		case 'd':
			env.secs = atof(optarg);
			break;
		case 'f':
			env.hz = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			env.reps = atoi(optarg);
			break;
		default:
			return usage();
		}
	}
	if (argc - optind < (env.python || env.java || env.node || env.vm ? 1 : 3) ||
	    env.secs <= 0 || !env.hz || env.reps <= 0)
		return usage();
	if (!env.python && !env.java && !env.node && !env.vm) {
		env.sf_bin = argv[optind++];
		env.fp_bin = argv[optind++];
	}
	for (; optind < argc && env.nr_depths < MAX_DEPTHS; optind++)
		env.depths[env.nr_depths++] = atoi(argv[optind]);

	/* Run-time accounting for as long as this fd is open, then as it was. */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "kcost: BPF_ENABLE_STATS: %s (needs root)\n", strerror(-stats_fd));
		return 1;
	}
	if (setup(&b)) {
		err = 1;
		goto out;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (rep = 0; rep < env.reps && !err; rep++) {
		int cpu = ncpu > 1 ? rep % ncpu : -1;

		/* This driver consumes the ring buffers on the other CPU. */
		if (cpu >= 0)
			pin(0, (cpu + 1) % ncpu);
		for (i = 0; i < env.nr_depths && !err; i++) {
			int d = env.depths[(i + rep) % env.nr_depths];

			if (env.vm     ? measure_vm(&b, rep, d, cpu) :
			    env.java   ? measure_java(&b, rep, d, cpu) :
			    env.node   ? measure_node(&b, rep, d, cpu) :
			    env.python ? measure_py(&b, rep, d, cpu) :
					 measure(&b, rep, d, cpu))
				err = 1;
		}
	}
out:
	runtimes__free(b.runtimes);
	ring_buffer__free(b.fp_rb);
	fpwalk_bpf__destroy(b.fp);
	proctrack__free(b.procs);
	tables__free(b.tables);
	profile__free(b.prof);
	close(stats_fd);
	return err;
}
