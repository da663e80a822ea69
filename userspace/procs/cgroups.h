/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup v2 id -> path, for outputs: a sample carries its task's cgroup id
 * (bpf_get_current_cgroup_id(), the cgroup directory's inode number); the
 * resolver opens the directory by that id as a kernfs file handle
 * (open_by_handle_at on the cgroup2 mount, needs CAP_DAC_READ_SEARCH) and
 * reads its path back. Results are cached (ids are never reused); a cgroup
 * removed before it was resolved stays unknown, so the session resolves each
 * id when its first sample arrives.
 */
#ifndef SFBPF_CGROUPS_H
#define SFBPF_CGROUPS_H

#include <stdint.h>

struct cgroups;

/* NULL + errno: no cgroup2 mount (ENOENT), or out of memory. */
struct cgroups *cgroups__new(void);
void cgroups__free(struct cgroups *cg);

/*
 * The cgroup's path below the cgroup2 mount ("/" for the root,
 * "/system.slice/ssh.service"...), or NULL when unknown. Valid until the
 * next call (the cache drops its older half as it fills: copy it to keep it).
 * A path once resolved is kept for at least 2048 new ids after its last
 * lookup, even when its cgroup is removed meanwhile.
 */
const char *cgroups__path(struct cgroups *cg, uint64_t id);
/*
 * The path cache: ids kept (at most CGROUPS_KEPT_MAX, two generations) and
 * the heap bytes they take (the paths' arenas, the generations' arrays and indexes).
 */
#define CGROUPS_KEPT_MAX 4096
void cgroups__cache_stats(const struct cgroups *cg, uint64_t *ids, uint64_t *bytes);
/* Where the cgroup2 hierarchy is mounted ("/sys/fs/cgroup"). */
const char *cgroups__mount(const struct cgroups *cg);
/*
 * Whether pid is in the cgroup v2 directory dir (a path under the mount) or
 * below, from /proc/PID/cgroup. -ENOENT if dir is not under the mount,
 * -ESRCH if pid is gone.
 */
int cgroups__pid_under(const struct cgroups *cg, int pid, const char *dir);
/*
 * 0 if dir is a cgroup v2 directory; else prints why on stderr (with where
 * cgroup v2 is mounted, from cg if not NULL) and returns a negative errno.
 */
int cgroups__check_dir(const struct cgroups *cg, const char *dir);
/*
 * Puts the cgroup v2 directory dir at index 0 of a BPF_MAP_TYPE_CGROUP_ARRAY
 * (what bpf_current_task_under_cgroup() tests against). 0 or a negative
 * errno, said on stderr.
 */
int cgroups__set_target(int map_fd, const char *dir);

/*
 * What a cgroup v2 path says about its tasks, for labels: the container
 * runtime's id and the Kubernetes pod, from the names the runtimes give
 * their cgroups (cgroupfs and systemd drivers alike):
 *
 *   docker       /docker/ID, /system.slice/docker-ID.scope
 *   containerd   .../cri-containerd-ID.scope, /kubepods/.../podUID/ID,
 *                /NAMESPACE/ID (containerd's own cgroupfs layout)
 *   CRI-O        .../crio-ID.scope, .../crio-ID (not crio-conmon-ID: conmon)
 *   podman       .../libpod-ID.scope
 *   Kubernetes   .../kubepods-QOS-podUID_WITH_UNDERSCORES.slice, .../podUID
 *
 * ID is 64 lowercase hex digits. A pod UID is a UUID, reported with dashes.
 * Both come from the outermost component that names one, and nothing below
 * the container's own cgroup counts: a container with a delegated subtree
 * can create cgroups of any name there (another tenant's container id or pod
 * UID), not above it (docker in docker is labelled with the outer
 * container). The unit is the innermost systemd service outside containers
 * ("nginx" for .../nginx.service).
 */
struct cgroup_info {
	char container_id[65]; /* "" if none */
	char pod_uid[37]; /* "" if none */
	char unit[128]; /* "" if none */
};

/* Fills *out from path (NULL: all empty). Never fails: unknown forms give "". */
void cgroups_parse_path(const char *path, struct cgroup_info *out);

#endif /* SFBPF_CGROUPS_H */
