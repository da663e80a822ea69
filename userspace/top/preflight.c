// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Can this system run the profiler? Checked before anything is loaded, one
 * clear line per problem saying what to do about it (see preflight.h).
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "top/preflight.h"

/* What the maps take at their default sizes, with room to spare. */
#define MEMLOCK_NEEDED (128ULL << 20)

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The run being checked (set by preflight__run). */
static int *pf_pids;
static int pf_nr_pids;
static unsigned long pf_freq;

/* ---- can this system run us? One line per problem, saying what to do. ---- */

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return true; /* unknown: let the kernel decide */
	return ma > major || (ma == major && mi >= minor);
}

static long read_sysctl(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static bool cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/* Effective capabilities, not the uid: sudo, setcap and containers differ. */
static int check_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};
	bool admin, bpf, perfmon;
	char missing[64];

	if (syscall(SYS_capget, &hdr, d))
		return 0; /* cannot tell: the BPF syscall will */
	admin = cap_effective(d, CAP_SYS_ADMIN);
	bpf = admin || cap_effective(d, CAP_BPF);
	perfmon = admin || cap_effective(d, CAP_PERFMON);
	if (bpf && perfmon) {
		if (!admin && !cap_effective(d, CAP_SYSLOG))
			fprintf(stderr, "sfbpf-top: without CAP_SYSLOG kernel frames show as "
					"[unknown] (kernel addresses are hidden)\n");
		return 0;
	}
	snprintf(missing, sizeof(missing), "%s%s%s", bpf ? "" : "CAP_BPF",
		 !bpf && !perfmon ? " and " : "", perfmon ? "" : "CAP_PERFMON");
	if (geteuid() != 0)
		fprintf(stderr, "sfbpf-top: needs root, or the CAP_BPF and CAP_PERFMON "
				"capabilities (%s missing): run it with sudo\n", missing);
	else
		fprintf(stderr, "sfbpf-top: running as root but without %s (a container?): grant "
				"them (e.g. docker run --cap-add BPF --cap-add PERFMON) or run "
				"it privileged\n", missing);
	return -EPERM;
}

/*
 * What every form of the unwinder needs (docs/DESIGN-unwinder.md, "Kernels"):
 * BTF, the BPF ring buffer (5.8) and user-memory reads (5.5). Older kernels
 * than 5.10 are not tested; what they lack is named, one line.
 */
static int check_kernel(void)
{
	const char *missing = NULL;
	struct utsname u;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "sfbpf-top: no kernel BTF at /sys/kernel/btf/vmlinux: "
				"a kernel built with CONFIG_DEBUG_INFO_BTF=y is required\n");
		return -ENOENT;
	}
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 0)
		missing = "the BPF ring buffer (Linux 5.8)";
	else if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_probe_read_user,
					 NULL) == 0)
		missing = "bpf_probe_read_user (Linux 5.5)";
	if (!missing)
		return 0;
	uname(&u);
	fprintf(stderr, "sfbpf-top: Linux %s is too old: the unwinder needs %s; "
			"5.10 is the oldest kernel tested\n", u.release, missing);
	return -EOPNOTSUPP;
}

/* Before 5.11 BPF maps are charged to RLIMIT_MEMLOCK; later to the memory cgroup. */
static int raise_memlock(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (!setrlimit(RLIMIT_MEMLOCK, &rl) || getrlimit(RLIMIT_MEMLOCK, &rl))
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= MEMLOCK_NEEDED ||
	    kernel_at_least(5, 11))
		return 0;
	fprintf(stderr, "sfbpf-top: the locked-memory limit is %llu KiB and cannot be raised; "
			"the BPF maps need about %llu MiB: run as root, or raise it (ulimit -l "
			"unlimited; LimitMEMLOCK=infinity for a systemd service)\n",
		(unsigned long long)rl.rlim_cur >> 10, MEMLOCK_NEEDED >> 20);
	return -EPERM;
}

static void perf_event_error(int err)
{
	long paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");
	long max_rate = read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate");

	if ((err == EACCES || err == EPERM) && paranoid > 2)
		fprintf(stderr, "sfbpf-top: the kernel refuses perf events "
				"(kernel.perf_event_paranoid = %ld): run as root, or lower it "
				"with sysctl kernel.perf_event_paranoid=2\n", paranoid);
	else if (err == EACCES || err == EPERM)
		fprintf(stderr, "sfbpf-top: the kernel refuses perf events: %s "
				"(kernel.perf_event_paranoid = %ld; a seccomp filter or a "
				"security module?): run as root outside such a sandbox\n",
			strerror(err), paranoid);
	else if (err == EINVAL && max_rate > 0 && pf_freq > (unsigned long)max_rate)
		fprintf(stderr, "sfbpf-top: -F %lu is above kernel.perf_event_max_sample_rate "
				"(%ld): use a lower -F, or sysctl "
				"kernel.perf_event_max_sample_rate=%lu\n", pf_freq, max_rate,
			pf_freq);
	else if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP)
		fprintf(stderr, "sfbpf-top: no cpu-clock perf event (%s): a kernel with "
				"CONFIG_PERF_EVENTS is required\n", strerror(err));
	else
		fprintf(stderr, "sfbpf-top: cannot open a cpu-clock perf event: %s\n",
			strerror(err));
}

/* The event the profiler attaches to, opened once here to explain a refusal. */
static int check_perf_event(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = pf_freq,
		.disabled = 1,
	};
	int cpu = sched_getcpu(), fd;

	fd = syscall(SYS_perf_event_open, &a, -1, cpu < 0 ? 0 : cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	perf_event_error(errno);
	return -errno;
}

/* Tgid of pid from /proc (pid itself, or its process when pid is a thread). */
static int tgid_of(int pid)
{
	char path[64], line[128];
	int tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return tgid;
}

static int check_pids(void)
{
	int i, tgid;

	for (i = 0; i < pf_nr_pids; i++) {
		if (kill(pf_pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "sfbpf-top: no process with PID %d\n", pf_pids[i]);
			return -ESRCH;
		}
		tgid = tgid_of(pf_pids[i]);
		if (tgid > 0 && tgid != pf_pids[i]) {
			fprintf(stderr, "sfbpf-top: %d is a thread of process %d: profiling "
					"process %d\n", pf_pids[i], tgid, tgid);
			pf_pids[i] = tgid;
		}
	}
	return 0;
}

int preflight__run(int *pids, int nr_pids, unsigned long freq)
{
	int err;

	pf_pids = pids;
	pf_nr_pids = nr_pids;
	pf_freq = freq;
	err = check_caps();
	if (!err)
		err = check_kernel();
	if (!err)
		err = raise_memlock();
	if (!err)
		err = check_perf_event();
	if (!err)
		err = check_pids();
	return err;
}
