// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tphold TRACEFS EVENT...: a second probe on each tracepoint sfbpf-top
 * attaches to, for a kernel guest's life (scripts/kernel-vm-init.sh runs it,
 * static, from the initramfs).
 *
 * A tracepoint with one probe calls it directly; with two or more, through
 * an iterator: its call site is a static call, rewritten with int3 when the
 * count goes from one to two or back, as its static branch is when it goes
 * from none to one. Under qemu's TCG another vCPU may still run that int3
 * once it is gone, and the guest panics ("Oops: int3" in the syscall exit
 * path, on 6.12 and 7.2). /init enables each event (ftrace's probe); this
 * opens a counting perf event on it on every CPU (perf's probe: syscall
 * events share one per direction). With two probes held, sfbpf's raw
 * tracepoint programs and perf-attached ones patch no kernel text.
 *
 * Opens everything, then forks: the parent exits 0 once every event is held
 * (1 if one could not be), the child keeps the descriptors open and sleeps.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long id_of(const char *tracefs, const char *event)
{
	char path[512];
	long id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%s/id", tracefs, event);
	f = fopen(path, "re");
	if (f && fscanf(f, "%ld", &id) != 1)
		id = -1;
	if (f)
		fclose(f);
	return id;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int held = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: tphold TRACEFS EVENT...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		struct perf_event_attr attr;
		long id = id_of(argv[1], argv[i]);

		if (id < 0) {
			fprintf(stderr, "tphold: no tracepoint %s\n", argv[i]);
			return 1;
		}
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = (unsigned long long)id;
		for (long cpu = 0; cpu < cpus; cpu++) {
			if (syscall(SYS_perf_event_open, &attr, -1, (int)cpu, -1, 0) < 0) {
				perror("tphold: perf_event_open");
				return 1;
			}
			held++;
		}
	}
	if (fork() > 0) {
		printf("tphold: %d events held\n", held);
		return 0;
	}
	for (;;)
		pause();
}
