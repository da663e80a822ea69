/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup v2 id -> path, for outputs: a sample carries its task's cgroup id
 * (bpf_get_current_cgroup_id(), the cgroup directory's inode number); the
 * resolver opens the directory by that id as a kernfs file handle
 * (open_by_handle_at on the cgroup2 mount, needs CAP_DAC_READ_SEARCH) and
 * reads its path back. Results are cached (ids are never reused); a cgroup
 * removed before it was resolved stays unknown.
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
 * resolver is freed.
 */
const char *cgroups__path(struct cgroups *cg, uint64_t id);
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

#endif /* SFBPF_CGROUPS_H */
