// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Container and pod labels a container cannot choose (issue 28), for
 * tests/tenant_cgroups.test:
 *
 *   tenant_cgroups parse
 *     Spoofed paths: a container that creates, in its delegated subtree, a
 *     cgroup named with another tenant's container id or pod UID keeps its
 *     own labels (cgroups_parse_path takes the outermost, and nothing below
 *     the container's cgroup); nor does a user's delegated subtree
 *     (user@UID.service) or a bare 64-digit name outside a runtime's parent
 *     give any.
 *   tenant_cgroups live DIR
 *     The same through the kernel: DIR/docker-A.scope/docker-B.scope made in
 *     cgroupfs (DIR a fresh directory under the cgroup2 mount), its id (the
 *     directory's inode) resolved by cgroups__path() as the profiler does
 *     for a sample, then labelled: container A. Then both removed (the
 *     container stopped) and 2048 other ids looked up: its path is still
 *     known (the cache once started over and dropped it: the profile
 *     written after a container stopped lost its labels).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procs/cgroups.h"
#include "testlib.h"

#define A64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define B64 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define UA "0d2c6a4e-1b3f-4c5d-8e9f-a0b1c2d3e4f5"
#define UA_ "0d2c6a4e_1b3f_4c5d_8e9f_a0b1c2d3e4f5"
#define UB "99999999-8888-4777-8666-555555555555"
#define UB_ "99999999_8888_4777_8666_555555555555"

static int parse(void)
{
	static const struct {
		const char *path, *id, *pod, *unit;
	} cases[] = {
		/* docker: a scope named with B's id inside A's. */
		{ "/system.slice/docker-" A64 ".scope/docker-" B64 ".scope", A64, "", "" },
		{ "/docker/" A64 "/" B64, A64, "", "" },
		/* Kubernetes, systemd driver: another pod's slice and container inside A's. */
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UA_
		  ".slice/cri-containerd-" A64 ".scope/kubepods-pod" UB_
		  ".slice/cri-containerd-" B64 ".scope",
		  A64, UA, "" },
		/* cgroupfs driver. */
		{ "/kubepods/besteffort/pod" UA "/" A64 "/pod" UB "/" B64, A64, UA, "" },
		/* Only a pod UID made below the container: the container's pod stays. */
		{ "/kubepods/pod" UA "/crio-" A64 "/pod" UB, A64, UA, "" },
		/* A host service's name made inside a container: not the container's unit. */
		{ "/system.slice/docker-" A64 ".scope/nginx.service", A64, "", "" },
		/*
		 * A user's delegated subtree (user@UID.service): any name may be
		 * made there, so neither container ids nor pod UIDs count.
		 */
		{ "/user.slice/user-1000.slice/user@1000.service/docker-" B64 ".scope", "", "",
		  "" },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/kubepods-burstable-pod" UB_
		  ".slice/cri-containerd-" B64 ".scope",
		  "", "", "" },
		{ "/user.slice/user-1000.slice/user@1000.service/kubepods/pod" UB "/" B64, "", "",
		  "" },
		{ "/user.slice/user-1000.slice/user@1000.service/docker/" B64, "", "", "" },
		/* A user's own units stay labelled. */
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/web.service", "", "",
		  "web" },
		/* A bare 64-digit name counts only under a runtime's parent. */
		{ "/" B64, "", "", "" },
		{ "/system.slice/" B64, "", "", "" },
		{ "/system.slice/cron.service/" B64, "", "", "cron" },
		{ "/system.slice/containerd.service/" B64, "", "", "containerd" },
		{ "/containerd/" A64, A64, "", "" },
		/* containerd's namespaces (cgroupfs): top-level, made by root only. */
		{ "/default/" A64, A64, "", "" },
		{ "/k8s.io/" A64 "/" B64, A64, "", "" },
		/* A UID that fails half-way leaves no partial label. */
		{ "/kubepods/pod0d2c6a4e-1b3f-4c5d-8e9f-a0b1c2d3e4fZ/" A64, A64, "", "" },
	};
	struct cgroup_info ci;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cgroups_parse_path(cases[i].path, &ci);
		report(!strcmp(ci.container_id, cases[i].id) && !strcmp(ci.pod_uid, cases[i].pod) &&
			       !strcmp(ci.unit, cases[i].unit),
		       "tenant-cgroups-spoofed", "%s: id '%s' pod '%s' unit '%s'", cases[i].path,
		       ci.container_id, ci.pod_uid, ci.unit);
	}
	printf("checked %zu paths\n", i);
	return failures ? 1 : 0;
}

static int live(const char *dir)
{
	char outer[2048], inner[4096];
	struct cgroup_info ci;
	struct cgroups *cg;
	const char *path;
	struct stat st;
	int err;

	snprintf(outer, sizeof(outer), "%s/docker-%s.scope", dir, A64);
	snprintf(inner, sizeof(inner), "%s/docker-%s.scope", outer, B64);
	cg = cgroups__new();
	if (!cg) {
		printf("SKIP: tenant-cgroups-live: no cgroup2 mount\n");
		return 0;
	}
	if (mkdir(outer, 0755) || mkdir(inner, 0755) || stat(inner, &st)) {
		err = errno;
		report(false, "tenant-cgroups-live", "mkdir %s: %s", inner, strerror(err));
		goto out;
	}
	path = cgroups__path(cg, st.st_ino);
	cgroups_parse_path(path, &ci);
	report(path && strstr(path, B64) && !strcmp(ci.container_id, A64), "tenant-cgroups-live",
	       "id %llu: path %s, container '%s'", (unsigned long long)st.st_ino,
	       path ? path : "(unknown)", ci.container_id);
	/*
	 * The container stops: its cgroups go before the profile holding its
	 * samples is written, and 2048 other ids come meanwhile (unknown ones:
	 * each takes a slot all the same). Its path is still the one noted.
	 */
	if (rmdir(inner) || rmdir(outer)) {
		err = errno;
		report(false, "tenant-cgroups-removed-kept", "rmdir: %s", strerror(err));
		goto out;
	}
	for (uint64_t i = 0; i < 2048; i++)
		cgroups__path(cg, (1ULL << 62) + i);
	path = cgroups__path(cg, st.st_ino);
	report(path && strstr(path, B64), "tenant-cgroups-removed-kept",
	       "removed cgroup %llu after 2048 other ids: path %s", (unsigned long long)st.st_ino,
	       path ? path : "(unknown)");
out:
	rmdir(inner);
	rmdir(outer);
	cgroups__free(cg);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "parse"))
		return parse();
	if (argc == 3 && !strcmp(argv[1], "live"))
		return live(argv[2]);
	fprintf(stderr, "usage: tenant_cgroups parse | live DIR\n");
	return 2;
}
