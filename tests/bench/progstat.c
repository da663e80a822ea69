// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reads, from outside, the counters of the unwinder a running sfbpf-top holds:
 * its perf_event program's run count and run time (kernel BPF statistics)
 * and the program's own per-CPU counters (the "stats" map, enum sfbpf_stat),
 * summed over CPUs. The throughput benchmark reads them at both ends of a
 * timed window, so that what happens while sfbpf-top starts or exits does
 * not count. Prints one line:
 *   progstat runs=N run_ns=N samples=N emitted=N drops=N
 *
 * Usage: progstat PID
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "profile/profile.h"

/* ID of the (first) perf_event program among PID's fds, from /proc/PID/fdinfo. */
static int find_prog(int pid, __u32 *id)
{
	char path[320], line[128];
	unsigned int type, pid_id;
	struct dirent *de;
	bool perf_event;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		perf_event = false;
		pid_id = 0;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "prog_type: %u", &type) == 1)
				perf_event = type == BPF_PROG_TYPE_PERF_EVENT;
			sscanf(line, "prog_id: %u", &pid_id);
		}
		fclose(f);
		if (perf_event && pid_id) {
			*id = pid_id;
			closedir(d);
			return 0;
		}
	}
	closedir(d);
	return -ENOENT;
}

int main(int argc, char **argv)
{
	__u64 sum[SFBPF_STAT__COUNT] = { 0 };
	struct bpf_prog_info info;
	struct bpf_map_info minfo;
	__u32 id = 0, map_ids[32], len, i, zero = 0;
	int prog_fd, map_fd = -1, ncpu, c, j;
	struct sfbpf_stats *per;

	if (argc != 2) {
		fprintf(stderr, "usage: progstat PID\n");
		return 2;
	}
	if (find_prog(atoi(argv[1]), &id)) {
		fprintf(stderr, "progstat: process %s holds no perf_event program\n", argv[1]);
		return 1;
	}
	prog_fd = bpf_prog_get_fd_by_id(id);
	if (prog_fd < 0)
		return 1;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = 32;
	info.map_ids = (__u64)(unsigned long)map_ids;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return 1;
	for (i = 0; i < info.nr_map_ids && i < 32 && map_fd < 0; i++) {
		map_fd = bpf_map_get_fd_by_id(map_ids[i]);
		if (map_fd < 0)
			continue;
		memset(&minfo, 0, sizeof(minfo));
		len = sizeof(minfo);
		if (bpf_obj_get_info_by_fd(map_fd, &minfo, &len) || strcmp(minfo.name, "stats") ||
		    minfo.value_size != sizeof(struct sfbpf_stats)) {
			close(map_fd);
			map_fd = -1;
		}
	}
	if (map_fd < 0) {
		fprintf(stderr, "progstat: the program has no stats map of this build's layout\n");
		return 1;
	}
	ncpu = libbpf_num_possible_cpus();
	per = calloc(ncpu, sizeof(*per));
	if (!per || bpf_map_lookup_elem(map_fd, &zero, per))
		return 1;
	for (c = 0; c < ncpu; c++)
		for (j = 0; j < SFBPF_STAT__COUNT; j++)
			sum[j] += per[c].v[j];
	printf("progstat runs=%llu run_ns=%llu samples=%llu emitted=%llu drops=%llu\n",
	       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
	       (unsigned long long)sum[SFBPF_STAT_SAMPLES],
	       (unsigned long long)sum[SFBPF_STAT_EMITTED],
	       (unsigned long long)sum[SFBPF_STAT_RB_DROPS]);
	free(per);
	return 0;
}
