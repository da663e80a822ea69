// SPDX-License-Identifier: GPL-2.0-or-later
/* cgroup v2 id -> path (see cgroups.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "procs/cgroups.h"
#include "util/arena.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

#define CACHE_GEN (CGROUPS_KEPT_MAX / 2) /* ids a generation holds */
#define FILEID_KERNFS 0xfe

struct cg_entry {
	uint64_t id;
	char *path; /* NULL: unknown */
};

/*
 * Two generations: ids go into the current one; when it is half full, the
 * previous one is dropped and the current one becomes it. An id looked up
 * there is copied into the current one. A container's path, noted at its
 * first sample (session.c), so survives at least CACHE_GEN new ids
 * before its profile is written: starting over at once would drop the paths
 * of containers removed since, which no longer resolve.
 */
struct cg_gen {
	struct hashmap index; /* id -> its position in e */
	struct cg_entry *e;
	size_t n, cap;
	/*
	 * The paths, freed with the generation at once: thousands of small
	 * strings freed at the same time would leave the heap in pieces.
	 */
	struct arena strings;
};

struct cgroups {
	char *mount;
	int mount_fd;
	struct cg_gen gen[2];
	unsigned int cur; /* gen[cur] current, gen[!cur] previous */
};

/* The cgroup2 mount point from /proc/self/mountinfo (field 5; fs type after " - "). */
static char *find_mount(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], point[PATH_MAX], *sep, *found = NULL;

	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1)
			found = strdup(point);
	}
	fclose(f);
	return found;
}

struct cgroups *cgroups__new(void)
{
	struct cgroups *cg = calloc(1, sizeof(*cg));

	if (!cg) {
		errno = ENOMEM;
		return NULL;
	}
	cg->mount = find_mount();
	if (!cg->mount) {
		free(cg);
		errno = ENOENT;
		return NULL;
	}
	cg->mount_fd = open(cg->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->mount_fd < 0) {
		free(cg->mount);
		free(cg);
		errno = ENOENT;
		return NULL;
	}
	return cg;
}

static void clear(struct cg_gen *g)
{
	g->n = 0;
	arena__free(&g->strings);
	hashmap__clear(&g->index);
}

static void gen_free(struct cg_gen *g)
{
	clear(g);
	hashmap__free(&g->index);
	free(g->e);
}

void cgroups__free(struct cgroups *cg)
{
	if (!cg)
		return;
	gen_free(&cg->gen[0]);
	gen_free(&cg->gen[1]);
	close(cg->mount_fd);
	free(cg->mount);
	free(cg);
}

const char *cgroups__mount(const struct cgroups *cg)
{
	return cg->mount;
}

/* dir relative to the mount ("/a/b"; "" for the root), or NULL if not under it. */
static const char *relative(const struct cgroups *cg, const char *dir)
{
	size_t mlen = strlen(cg->mount);

	if (strncmp(dir, cg->mount, mlen) || (dir[mlen] && dir[mlen] != '/'))
		return NULL;
	return dir + mlen;
}

int cgroups__pid_under(const struct cgroups *cg, int pid, const char *dir)
{
	const char *rel = relative(cg, dir);
	char path[64], line[4096];
	size_t len;
	int ret = -ESRCH;
	FILE *f;

	if (!rel)
		return -ENOENT;
	len = strlen(rel);
	while (len && rel[len - 1] == '/')
		len--;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 3;

		if (strncmp(line, "0::", 3))
			continue;
		p[strcspn(p, "\n")] = 0;
		ret = !strncmp(p, rel, len) && (p[len] == 0 || p[len] == '/');
		break;
	}
	fclose(f);
	return ret;
}

/* Opens the cgroup directory by id and reads its path back. */
static char *resolve(struct cgroups *cg, uint64_t id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh = { .handle_bytes = sizeof(uint64_t), .handle_type = FILEID_KERNFS } };
	char link[64], path[PATH_MAX];
	size_t mlen = strlen(cg->mount);
	ssize_t n;
	int fd;

	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(cg->mount_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	path[n] = 0;
	if (strncmp(path, cg->mount, mlen) || (path[mlen] && path[mlen] != '/'))
		return strdup(path); /* outside our view of the mount: as is */
	return strdup(path[mlen] ? path + mlen : "/");
}

static bool id_eq(const void *ctx, uint64_t val, const void *key)
{
	return ((const struct cg_gen *)ctx)->e[val].id == *(const uint64_t *)key;
}

/* id's entry in g, or NULL. */
static struct cg_entry *find(struct cg_gen *g, uint64_t id)
{
	int64_t v = hashmap__find(&g->index, (uint32_t)hash__mix64(id), id_eq, g, &id);

	return v >= 0 ? &g->e[v] : NULL;
}

const char *cgroups__path(struct cgroups *cg, uint64_t id)
{
	struct cg_gen *g = &cg->gen[cg->cur];
	struct cg_entry *e, *old;
	char *path, *found;
	const char *from;
	size_t len;

	if (!id)
		return NULL;
	e = find(g, id);
	if (e)
		return e->path;
	if (g->n >= CACHE_GEN) {
		cg->cur = !cg->cur;
		clear(&cg->gen[cg->cur]);
		return cgroups__path(cg, id);
	}
	old = find(&cg->gen[!cg->cur], id);
	/* Known to the previous generation: its path, even if gone since. */
	found = old && old->path ? NULL : resolve(cg, id);
	from = old && old->path ? old->path : found;
	len = from ? strlen(from) + 1 : 0;
	path = from ? arena__alloc(&g->strings, len) : NULL;
	if (path)
		memcpy(path, from, len);
	free(found);
	if ((from && !path) || VEC_RESERVE(g->e, g->cap, g->n + 1, 64) ||
	    hashmap__add(&g->index, (uint32_t)hash__mix64(id), g->n))
		return NULL; /* unknown this time: asked again next time */
	g->e[g->n++] = (struct cg_entry){ id, path };
	return path;
}

void cgroups__cache_stats(const struct cgroups *cg, uint64_t *ids, uint64_t *bytes)
{
	unsigned int i;

	*ids = *bytes = 0;
	for (i = 0; cg && i < 2; i++) {
		const struct cg_gen *g = &cg->gen[i];

		*ids += g->n;
		*bytes += arena__bytes(&g->strings) + g->cap * sizeof(*g->e) +
			  hashmap__bytes(&g->index);
	}
}

int cgroups__check_dir(const struct cgroups *cg, const char *dir)
{
	struct statfs sfs;

	if (statfs(dir, &sfs)) {
		pr_warn("--cgroup %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (sfs.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	/* Hybrid systems mount v1 controllers at /sys/fs/cgroup: point at v2. */
	pr_warn("--cgroup %s: not a cgroup v2 directory (cgroup v2 is %s%s)", dir,
		cg ? "mounted at " : "not mounted", cg ? cgroups__mount(cg) : "");
	return -ENOTDIR;
}

int cgroups__set_target(int map_fd, const char *dir)
{
	__u32 zero = 0;
	int fd, err = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("cgroup %s: %s", dir, strerror(-err));
		return err;
	}
	/* The array holds its own reference to the cgroup: fd can go. */
	if (bpf_map_update_elem(map_fd, &zero, &fd, BPF_ANY)) {
		err = -errno;
		pr_warn("cgroup %s: %s (a cgroup v2 directory?)", dir, strerror(-err));
	}
	close(fd);
	return err;
}

/* ---- labels from paths ------------------------------------------------------------- */

static bool hex_run(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool component_is(const char *s, size_t n, const char *name)
{
	return n == strlen(name) && !memcmp(s, name, n);
}

/*
 * A runtime's parent of bare container ids (cgroupfs drivers: "/docker/ID");
 * bare ids are also taken anywhere below kubepods ("/kubepods/besteffort/podUID/ID")
 * and right below a top-level cgroup other than systemd's slices (containerd's
 * namespaces: "/default/ID", "/k8s.io/ID"), which only root can create.
 * Anywhere else a 64-digit name is just a name anyone with a subtree may pick.
 */
static bool runtime_parent(const char *s, size_t n)
{
	return component_is(s, n, "docker") || component_is(s, n, "containerd") ||
	       component_is(s, n, "crio") || component_is(s, n, "libpod");
}

/*
 * A 64-digit container id as the whole of [s, s + n), after a runtime's
 * prefix, or bare when bare_ok (under a runtime's parent).
 */
static bool container_id(const char *s, size_t n, bool bare_ok, char out[65])
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",
						"libpod-", "containerd-",     "" };
	size_t i, pl;

	if (n > 6 && !memcmp(s + n - 6, ".scope", 6))
		n -= 6;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		pl = strlen(prefixes[i]);
		if (!pl && !bare_ok)
			continue;
		if (n == pl + 64 && !memcmp(s, prefixes[i], pl) && hex_run(s + pl, 64)) {
			memcpy(out, s + pl, 64);
			out[64] = '\0';
			return true;
		}
	}
	return false;
}

/* "pod" + a UUID, with dashes (cgroupfs) or underscores (systemd), ending [s, s + n). */
static bool pod_uid(const char *s, size_t n, char out[37])
{
	static const unsigned dash_at[] = { 8, 13, 18, 23 };
	const char *p;
	size_t i, d = 0;
	char uid[37];

	if (n > 6 && !memcmp(s + n - 6, ".slice", 6))
		n -= 6;
	if (n < 39 || memcmp(s + n - 39, "pod", 3))
		return false;
	/* The whole component ("pod" + UID) or after the slice's "-" ("kubepods-burstable-"). */
	if (n > 39 && s[n - 40] != '-')
		return false;
	p = s + n - 36;
	for (i = 0; i < 36; i++) {
		if (d < 4 && i == dash_at[d]) {
			if (p[i] != '-' && p[i] != '_')
				return false;
			uid[i] = '-';
			d++;
		} else if (hex_run(p + i, 1)) {
			uid[i] = p[i];
		} else {
			return false;
		}
	}
	/* Only a whole UID: a component that fails half-way leaves out as it was. */
	uid[36] = '\0';
	memcpy(out, uid, sizeof(uid));
	return true;
}

void cgroups_parse_path(const char *path, struct cgroup_info *out)
{
	const char *c, *end;
	bool parent_rt = false, kube = false, user_tree = false, ns_parent = false;
	size_t n, depth = 0;

	memset(out, 0, sizeof(*out));
	for (c = path; c && *c; c = end) {
		while (*c == '/')
			c++;
		end = strchrnul(c, '/');
		n = end - c;
		if (!n)
			break;
		/*
		 * "user@UID.service" is a user's manager: the user may create any
		 * name below it (systemd delegates that subtree), so no container or
		 * pod label is taken at or below it (rootless containers included);
		 * units there are the user's own.
		 */
		if (n > 13 && !memcmp(c, "user@", 5) && !memcmp(c + n - 8, ".service", 8)) {
			user_tree = true;
			continue;
		}
		/*
		 * Below its container's cgroup a container may create any name (a
		 * delegated subtree): another tenant's container id or pod UID. The
		 * outermost container id is the runtime's, and labels stop there.
		 */
		if (!user_tree &&
		    container_id(c, n, parent_rt || kube || ns_parent, out->container_id))
			break;
		ns_parent = depth++ == 0 && !(n > 6 && !memcmp(c + n - 6, ".slice", 6));
		parent_rt = runtime_parent(c, n);
		kube = kube || (n >= 8 && !memcmp(c, "kubepods", 8));
		/* Outermost too: the pod's cgroup is made by the kubelet, above the containers. */
		if (!user_tree && !out->pod_uid[0] && pod_uid(c, n, out->pod_uid))
			continue;
		if (n > 8 && n - 8 < sizeof(out->unit) && !memcmp(c + n - 8, ".service", 8)) {
			memcpy(out->unit, c, n - 8);
			out->unit[n - 8] = '\0';
		}
	}
}
