// SPDX-License-Identifier: GPL-2.0-or-later
/* Process tracker (see proctrack.h). */
#include <bpf/bpf.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bpf/abi.h"
#include "tables/elfobj.h"
#include "procs/procmaps.h"
#include "procs/proctrack.h"
#include "procs/vdso.h"
#include "procs/jitcode.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/search.h"

struct proc_entry {
	int pid;
	uint64_t start_ticks;
	uint64_t stack_lo, stack_hi; /* its main thread's [stack] mapping; 0: none */
	uint64_t scanned_ns; /* when its stack was last scanned (note_truncated) */
	uint64_t signature; /* of the executable mappings; 0: rebuild at the next refresh */
	uint64_t read_ns; /* its map entry's (struct sfbpf_proc) */
	uint32_t nr_objs;
	uint32_t objs[SFBPF_MAX_MAPPINGS]; /* object references held */
	uint32_t nr_maps, nr_with_table;
};

struct proctrack {
	struct tables *tables;
	int procs_fd;
	struct proctrack_listener listener;
	struct hashmap procs; /* struct proc_entry *, by pid */
	size_t sweep_iter; /* where the next sweep starts (hashmap__next) */
	bool deferred; /* the build in progress left mappings for later */
	struct vdso_image vdso; /* read at the first [vdso] mapping met */
	int vdso_err; /* 1: not read yet; else why there is no image (0: there is) */
	struct jitcode *jit; /* JIT code's templates and regions; made at the first one */
	const struct jitcode_region *region; /* the process being built's (proctrack__set_jit) */
	int updating; /* update()s in progress (a listener's call may set a region) */
	int again; /* the PID whose region was set during one: built again after it */
	struct proctrack_stats stats;
	struct sfbpf_proc scratch; /* the map value being built (8 KiB+) */
	/* The last entry read back for note_truncated, and when (reused briefly). */
	struct sfbpf_proc looked;
	int looked_pid;
	uint64_t looked_ns;
	uint64_t *scan_buf; /* STACK_SCAN_BYTES, made at the first scan */
};

struct proctrack *proctrack__new(struct tables *tables, int procs_fd)
{
	struct proctrack *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	pt->tables = tables;
	pt->procs_fd = procs_fd;
	pt->vdso.fd = -1;
	pt->vdso_err = 1;
	return pt;
}

static uint32_t pid_hash(int pid)
{
	return (uint32_t)hash__mix64((uint64_t)pid);
}

static bool entry_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return ((const struct proc_entry *)HASHMAP_TO_PTR(val))->pid == *(const int *)key;
}

static struct proc_entry *find(const struct proctrack *pt, int pid)
{
	int64_t v = hashmap__find(&pt->procs, pid_hash(pid), entry_eq, NULL, &pid);

	return v < 0 ? NULL : HASHMAP_TO_PTR(v);
}

bool proctrack__has(const struct proctrack *pt, int pid)
{
	return find(pt, pid) != NULL;
}

int proctrack__for_each(const struct proctrack *pt, int (*fn)(void *ctx, int pid), void *ctx)
{
	size_t it = 0;
	uint64_t v;
	int ret;

	while (hashmap__next(&pt->procs, &it, &v)) {
		ret = fn(ctx, ((const struct proc_entry *)HASHMAP_TO_PTR(v))->pid);
		if (ret)
			return ret;
	}
	return 0;
}

static void release_objs(struct proctrack *pt, struct proc_entry *e)
{
	uint32_t i;

	for (i = 0; i < e->nr_objs; i++)
		tables__release(pt->tables, e->objs[i]);
	pt->stats.mappings -= e->nr_maps;
	pt->stats.mappings_with_table -= e->nr_with_table;
	e->nr_objs = e->nr_maps = e->nr_with_table = 0;
}

void proctrack__set_listener(struct proctrack *pt, const struct proctrack_listener *l)
{
	pt->listener = *l;
}

void proctrack__remove(struct proctrack *pt, int pid)
{
	struct proc_entry *e = find(pt, pid);
	__u32 key = pid;

	procmaps__forget(pid);
	jitcode__forget(pt->jit, pid);
	if (!e)
		return;
	if (pt->listener.removed)
		pt->listener.removed(pt->listener.ctx, pid);
	bpf_map_delete_elem(pt->procs_fd, &key);
	release_objs(pt, e);
	hashmap__del(&pt->procs, pid_hash(pid), entry_eq, NULL, &pid);
	free(e);
	pt->stats.procs--;
}

void proctrack__free(struct proctrack *pt)
{
	size_t it = 0;
	uint64_t v;

	if (!pt)
		return;
	while (hashmap__next(&pt->procs, &it, &v)) {
		release_objs(pt, HASHMAP_TO_PTR(v));
		free(HASHMAP_TO_PTR(v));
	}
	hashmap__free(&pt->procs);
	vdso__close(&pt->vdso);
	jitcode__free(pt->jit);
	free(pt->scan_buf);
	free(pt);
}

/*
 * Field want (4 and up) of /proc/PID/stat, as a number: 0 or -errno; *state,
 * if asked, field 3 (R, S, Z...).
 */
static int stat_field(int pid, int want, uint64_t *out, char *state)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 && errno != ESRCH ? -errno : -ESRCH;
	buf[n] = 0;
	/* The command name may hold anything, ')' included: fields follow the last ')'. */
	p = strrchr(buf, ')');
	if (!p || !p[1] || !p[2])
		return -EINVAL;
	if (state)
		*state = p[2];
	/* Field 3 (state) follows ") ". */
	for (field = 2; field < want && p; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -EINVAL;
	*out = strtoull(p + 1, NULL, 10);
	return 0;
}

int proctrack_start_ticks(int pid, uint64_t *ticks)
{
	return stat_field(pid, 22, ticks, NULL); /* starttime */
}

bool proctrack_exited(int pid, uint64_t start_ticks)
{
	uint64_t ticks;
	char state = 0;

	/* A zombie's memory is gone too (X: being reaped). */
	return stat_field(pid, 22, &ticks, &state) || ticks != start_ticks || state == 'Z' ||
	       state == 'X';
}

int proctrack_parent(int pid, int *ppid)
{
	uint64_t v = 0;
	int err = stat_field(pid, 4, &v, NULL); /* ppid */

	*ppid = err || v > INT32_MAX ? 0 : (int)v;
	return err;
}

size_t proctrack_task_ids(int pid, uint64_t *ids, size_t max, uint64_t *leader)
{
	char path[64], line[256], self[16];
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	if (leader)
		*leader = 0;
	snprintf(self, sizeof(self), "%d", pid);
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && n < max && (d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/status", pid, d->d_name);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			char *last;

			if (strncmp(line, "NSpid:", 6))
				continue;
			last = strrchr(line, '\t');
			ids[n] = strtoull(last ? last + 1 : line + 6, NULL, 10);
			if (leader && !strcmp(d->d_name, self))
				*leader = ids[n];
			n++;
			break;
		}
		if (f)
			fclose(f);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* Takes the object reference a mapping's table needs. */
static void use_obj(struct proctrack *pt, int64_t obj, struct sfbpf_mapping *out,
		    struct proc_entry *e)
{
	if (obj == -EAGAIN) {
		pt->deferred = true;
		pt->stats.deferred++;
	}
	if (obj < 0)
		return;
	out->obj = (uint32_t)obj;
	e->objs[e->nr_objs++] = (uint32_t)obj;
	e->nr_with_table++;
}

/* The lowest ELF address of an executable segment (mm->start_code's, less the bias). */
static uint64_t text_vaddr(const struct elfobj_info *info)
{
	uint64_t low = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < info->nr_loads; i++)
		if ((info->loads[i].flags & PF_X) && info->loads[i].vaddr < low)
			low = info->loads[i].vaddr;
	return low;
}

/* Object table and load bias of one file-backed executable mapping. */
static void resolve_mapping(struct proctrack *pt, int pid, const struct procmap *m,
			    struct sfbpf_mapping *out, struct proc_entry *e)
{
	struct tables_src src = { .pid = pid, .start = m->start, .end = m->end };
	struct elfobj_info info;
	struct obj_key key;
	struct stat st;
	uint64_t vaddr;
	int64_t obj;
	int fd;

	fd = procmap__open(pid, m);
	if (fd < 0)
		return;
	if (fstat(fd, &st))
		goto cleanup;
	/*
	 * The key is what fstat says of the file opened (tables.h). It must be
	 * the file the maps line names, or the line's offset would be applied
	 * to another's segments (the range unmapped and mapped again since the
	 * maps were read). By inode: the device of an overlayfs file differs
	 * between the two on some kernels (the lower file's in the maps line).
	 */
	if (st.st_ino != m->inode) {
		pt->stats.mappings_replaced++;
		goto cleanup;
	}
	if (elfobj__read(fd, &info) || elfobj__offset_to_vaddr(&info, m->offset, &vaddr))
		goto cleanup;
	out->bias = m->start - vaddr;
	obj_key__from(&key, &info, &st, fd);
	obj = tables__acquire_src(pt->tables, fd, &key, m->path, &src);
	use_obj(pt, obj, out, e);
	if (obj >= 0)
		tables__publish_ident(pt->tables, (uint32_t)obj, &key, vaddr - m->offset,
				      text_vaddr(&info));
cleanup:
	close(fd);
}

/*
 * The vDSO: one image per boot (per ABI), read once from this process and
 * shared by every process whose [vdso] holds the same bytes (vdso.h).
 */
static void resolve_vdso(struct proctrack *pt, int pid, const struct procmap *m,
			 struct sfbpf_mapping *out, struct proc_entry *e)
{
	int64_t obj;

	if (pt->vdso_err == 1)
		pt->vdso_err = vdso__open_self(&pt->vdso);
	if (pt->vdso_err || vdso__same(&pt->vdso, pid, m->start, m->end))
		return;
	out->bias = m->start - pt->vdso.vaddr;
	/* Not reopened through the process: the memfd is passed at every acquire. */
	obj = tables__acquire_src(pt->tables, pt->vdso.fd, &pt->vdso.key, "[vdso]", NULL);
	use_obj(pt, obj, out, e);
	/* For processes exec'd before they are read: mapped at offset 0 (bpf/vmafind.h). */
	if (obj >= 0)
		tables__publish_ident(pt->tables, (uint32_t)obj, &pt->vdso.key, pt->vdso.vaddr, 0);
}

/*
 * Anonymous code: an arena of identical trampolines (CPython's perf
 * trampolines) gets its template's table, folded by the mapping's period
 * (jitcode.h); other JIT code keeps the frame-pointer fallback.
 */
static void resolve_jit(struct proctrack *pt, int pid, const struct procmap *m,
			struct sfbpf_mapping *out, struct proc_entry *e)
{
	const struct jitcode_region *r = pt->region;
	const struct jitcode_template *t;
	const char *name = "[jit-trampolines]";

	if (!pt->jit && !(pt->jit = jitcode__new()))
		return;
	if (r && m->start >= r->lo && m->end <= r->hi) {
		if (jitcode__shape(pt->jit, r->cfa_off, &t))
			return;
		name = r->name;
	} else if (jitcode__resolve(pt->jit, pid, m->start, m->end, &t)) {
		return;
	}
	out->bias = m->start - JITCODE_TEXT_VADDR;
	out->flags = jitcode__map_flags(t);
	use_obj(pt, tables__acquire_src(pt->tables, t->fd, &t->key, name, NULL), out, e);
	if (out->obj == SFBPF_OBJ_NONE)
		out->flags = 0;
}

static bool wanted(const struct procmap *m)
{
	return m->perms & PROCMAP_EXEC;
}

/* Anonymous memory of a runtime's JIT code region, executable now or not (jitcode.h). */
static bool in_region(const struct proctrack *pt, const struct procmap *m)
{
	const struct jitcode_region *r = pt->region;

	return r && (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)) == PROCMAP_F_ANON &&
	       m->start >= r->lo && m->end <= r->hi;
}

static bool has_code(const struct procmaps *pm)
{
	size_t i, n = procmaps__count(pm);

	for (i = 0; i < n; i++)
		if (wanted(procmaps__get(pm, i)))
			return true;
	return false;
}

/* FNV-1a over what identifies the executable mappings; never 0. */
static uint64_t signature(const struct procmaps *pm)
{
	uint64_t h = 14695981039346656037ULL, v[4];
	size_t i, j, n = procmaps__count(pm);

	for (i = 0; i < n; i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if (!wanted(m))
			continue;
		v[0] = m->start, v[1] = m->end, v[2] = m->offset;
		v[3] = m->inode ^ ((uint64_t)m->dev_major << 40) ^ ((uint64_t)m->dev_minor << 20);
		for (j = 0; j < sizeof(v); j++)
			h = (h ^ ((const uint8_t *)v)[j]) * 1099511628211ULL;
	}
	return h ? h : 1;
}

static void build(struct proctrack *pt, int pid, const struct procmaps *pm, struct proc_entry *e)
{
	struct sfbpf_proc *p = &pt->scratch;
	size_t i, n = procmaps__count(pm);

	p->count = 0;
	for (i = 0; i < n; i++) {
		const struct procmap *m = procmaps__get(pm, i);
		struct sfbpf_mapping *out;

		if (!wanted(m) && !in_region(pt, m))
			continue;
		if (p->count == SFBPF_MAX_MAPPINGS) {
			pt->stats.mappings_dropped++;
			continue;
		}
		out = &p->maps[p->count++];
		*out = (struct sfbpf_mapping){ .start = m->start, .end = m->end,
					       .obj = SFBPF_OBJ_NONE };
		/* Other anonymous code (JIT): frame-pointer fallback. */
		if (m->flags & PROCMAP_F_VDSO)
			resolve_vdso(pt, pid, m, out, e);
		else if ((m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)) == PROCMAP_F_ANON)
			resolve_jit(pt, pid, m, out, e);
		else if (!(m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO)))
			resolve_mapping(pt, pid, m, out, e);
	}
	e->nr_maps = p->count;
	e->stack_lo = e->stack_hi = 0;
	for (i = 0; i < n; i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if ((m->flags & PROCMAP_F_PSEUDO) && !strcmp(m->path, "[stack]")) {
			e->stack_lo = m->start;
			e->stack_hi = m->end;
		}
	}
}

static struct proc_entry *get_entry(struct proctrack *pt, int pid)
{
	struct proc_entry *e = find(pt, pid);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->pid = pid;
	if (hashmap__add(&pt->procs, pid_hash(pid), HASHMAP_PTR(e))) {
		free(e);
		return NULL;
	}
	pt->stats.procs++;
	return e;
}

/*
 * An entry read again, unchanged: it holds what was mapped at read_ns too.
 * Dated so while the unwinder may still prefer the kernel's kept mappings
 * to it (abi.h, SFBPF_VMA_TRUST_NS), so that it serves again at once.
 */
static void restamp(struct proctrack *pt, int pid, struct proc_entry *e, uint64_t read_ns)
{
	struct sfbpf_proc *p = &pt->looked;
	__u32 key = pid;

	if (read_ns - e->read_ns >= SFBPF_VMA_TRUST_NS)
		return;
	pt->looked_pid = 0;
	if (bpf_map_lookup_elem(pt->procs_fd, &key, p) || p->start_ticks != e->start_ticks ||
	    p->read_ns != e->read_ns)
		return;
	p->read_ns = e->read_ns = read_ns;
	if (bpf_map_update_elem(pt->procs_fd, &key, p, BPF_EXIST))
		pt->stats.update_failed++;
}

/* Builds and writes pid's entry, then drops the references of the old one. */
static int update(struct proctrack *pt, int pid, bool if_changed)
{
	struct procmaps *pm = NULL;
	struct proc_entry *e, old;
	uint64_t ticks = 0, sig, read_ns;
	__u32 key = pid;
	int err;

	/*
	 * Before the maps: if the PID is reused in between, the entry is stale,
	 * not wrong; code mapped after read_ns may be missing from it (abi.h).
	 */
	read_ns = clock__mono_ns();
	err = proctrack_start_ticks(pid, &ticks);
	if (!err)
		err = procmaps__snapshot(pid, 0, &pm); /* read now, kept for the symbolizer */
	/* Kernel threads (and zombies) have no user code: no entry, no 8 KiB. */
	if (!err && !has_code(pm))
		err = -ENOEXEC;
	if (err) {
		procmaps__free(pm);
		proctrack__remove(pt, pid);
		return err;
	}
	sig = signature(pm);
	e = find(pt, pid);
	if (if_changed && e && e->signature == sig && e->start_ticks == ticks) {
		pt->stats.unchanged++;
		restamp(pt, pid, e, read_ns);
		if (pt->listener.updated)
			pt->listener.updated(pt->listener.ctx, pid, ticks, pm);
		procmaps__free(pm);
		return PROCTRACK_UNCHANGED;
	}
	e = get_entry(pt, pid);
	if (!e) {
		procmaps__free(pm);
		return -ENOMEM;
	}
	/* Acquire the new objects before releasing the old ones: shared ones stay loaded. */
	old = *e;
	e->nr_objs = e->nr_maps = e->nr_with_table = 0;
	pt->deferred = false;
	pt->region = jitcode__region(pt->jit, pid, ticks);
	build(pt, pid, pm, e);
	pt->region = NULL;
	e->start_ticks = pt->scratch.start_ticks = ticks;
	e->read_ns = pt->scratch.read_ns = read_ns;
	e->signature = pt->deferred ? 0 : sig;
	pt->stats.mappings += e->nr_maps;
	pt->stats.mappings_with_table += e->nr_with_table;
	pt->stats.refreshes++;
	pt->scratch.generation++;
	err = bpf_map_update_elem(pt->procs_fd, &key, &pt->scratch, BPF_ANY) ? -errno : 0;
	release_objs(pt, &old);
	if (!err && pt->listener.updated)
		pt->listener.updated(pt->listener.ctx, pid, ticks, pm);
	procmaps__free(pm);
	if (err) {
		pt->stats.update_failed++;
		proctrack__remove(pt, pid);
		return err;
	}
	return pt->deferred ? PROCTRACK_INCOMPLETE : PROCTRACK_UPDATED;
}

int proctrack__adopt(struct proctrack *pt, int pid, uint64_t start_ticks)
{
	struct sfbpf_proc *p = &pt->looked; /* a buffer here: scratch holds the generation */
	struct proc_entry *e, old;
	bool withdrawn = false;
	__u32 key = pid, i;

	pt->looked_pid = 0;
	if (bpf_map_lookup_elem(pt->procs_fd, &key, p) || p->start_ticks != start_ticks ||
	    p->count > SFBPF_MAX_MAPPINGS)
		return -ENOENT;
	e = get_entry(pt, pid);
	if (!e)
		return -ENOMEM;
	/* An entry the loader had for an earlier process with this PID goes (a missed exit). */
	old = *e;
	e->nr_objs = e->nr_with_table = 0;
	for (i = 0; i < p->count; i++) {
		struct sfbpf_mapping *m = &p->maps[i];

		if (m->obj == SFBPF_OBJ_NONE)
			continue;
		if (tables__hold(pt->tables, m->obj)) {
			m->obj = SFBPF_OBJ_NONE;
			withdrawn = true;
			continue;
		}
		e->objs[e->nr_objs++] = m->obj;
		e->nr_with_table++;
	}
	if (withdrawn) {
		pt->stats.adopt_withdrawn++;
		p->generation = ++pt->scratch.generation;
		if (bpf_map_update_elem(pt->procs_fd, &key, p, BPF_EXIST))
			pt->stats.update_failed++;
	}
	e->start_ticks = start_ticks;
	e->read_ns = p->read_ns;
	e->signature = 0; /* its first refresh reads it whole */
	e->stack_lo = e->stack_hi = 0;
	e->nr_maps = p->count;
	pt->stats.mappings += e->nr_maps;
	pt->stats.mappings_with_table += e->nr_with_table;
	pt->stats.adopted++;
	release_objs(pt, &old);
	return 0;
}

/* update(), then the process whose JIT region a listener set meanwhile built again. */
static int update_again(struct proctrack *pt, int pid, bool if_changed)
{
	int ret, again, r;

	pt->updating++;
	ret = update(pt, pid, if_changed);
	pt->updating--;
	if (!pt->updating && pt->again) {
		again = pt->again;
		pt->again = 0;
		r = update_again(pt, again, false);
		ret = again == pid ? r : ret;
	}
	return ret;
}

int proctrack__refresh(struct proctrack *pt, int pid)
{
	return update_again(pt, pid, false);
}

int proctrack__refresh_if_changed(struct proctrack *pt, int pid)
{
	return update_again(pt, pid, true);
}

int proctrack__set_jit(struct proctrack *pt, int pid, uint64_t start_ticks,
		       const struct jitcode_region *r)
{
	struct proc_entry *e = find(pt, pid);
	int err;

	if (!pt->jit && !(pt->jit = jitcode__new()))
		return -ENOMEM;
	err = r ? jitcode__set_region(pt->jit, pid, start_ticks, r) : 0;
	if (!r)
		jitcode__forget(pt->jit, pid);
	if (err || !e || e->start_ticks != start_ticks)
		return err; /* its entry, when built, will have it */
	if (pt->updating) {
		pt->again = pid;
		return 0;
	}
	err = update_again(pt, pid, false);
	return err < 0 ? err : 0;
}

int proctrack__scan_filtered(struct proctrack *pt, bool (*want)(void *ctx, int pid), void *ctx)
{
	struct dirent *de;
	DIR *dir = opendir("/proc");
	int pid, n = 0;

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid = atoi(de->d_name);
		if (pid <= 0 || pid == getpid() || (want && !want(ctx, pid)))
			continue;
		if (proctrack__refresh(pt, pid) >= 0)
			n++;
	}
	closedir(dir);
	return n;
}

int proctrack__scan(struct proctrack *pt)
{
	return proctrack__scan_filtered(pt, NULL, NULL);
}

int proctrack__sweep(struct proctrack *pt, uint32_t max)
{
	int pids[PROCTRACK_SWEEP_MAX], removed = 0;
	uint32_t n = 0, i;
	uint64_t ticks, v;

	/*
	 * Resuming where the last call stopped: the entries whose process is
	 * gone (or whose PID was reused) first noted, then removed, which
	 * moves others in the map.
	 */
	if (max > sizeof(pids) / sizeof(pids[0]))
		max = sizeof(pids) / sizeof(pids[0]);
	while (n < max) {
		const struct proc_entry *e;

		if (!hashmap__next(&pt->procs, &pt->sweep_iter, &v)) {
			pt->sweep_iter = 0;
			break;
		}
		e = HASHMAP_TO_PTR(v);
		n++;
		if (proctrack_start_ticks(e->pid, &ticks) || ticks != e->start_ticks)
			pids[removed++] = e->pid;
	}
	for (i = 0; i < (uint32_t)removed; i++) {
		proctrack__remove(pt, pids[i]);
		pt->stats.swept++;
	}
	return removed;
}

/* A burst of samples of one process reads its entry once. */
#define LOOKED_FRESH_NS 10000000ULL

/* The mapping of pid's entry holding pc, or NULL. */
static const struct sfbpf_mapping *find_mapping(const struct sfbpf_proc *p, uint64_t pc)
{
	uint32_t n = p->count < SFBPF_MAX_MAPPINGS ? p->count : SFBPF_MAX_MAPPINGS;
	size_t i = SEARCH_UPTO(p->maps, n, start, pc);

	return i && pc < p->maps[i - 1].end ? &p->maps[i - 1] : NULL;
}

/*
 * Return addresses into code being loaded, read from the process's stack:
 * the frames its thread is in (and was in lately, below its stack pointer)
 * all at once, where a sample names one frame a round (the first without a
 * row). A word that only looks like one asks for the rows of a real FDE:
 * more rows built, never a wrong one. The main thread's [stack] only, from
 * its top (where main and its callers are), at most every STACK_SCAN_NS:
 * a compiler's middle frames (its passes) change within tens of
 * milliseconds, and a scan (256 KiB read, one look a word) costs about a
 * tenth of a millisecond; at 50 ms, cc1's partial tables completed no stack
 * before its whole table came. Read from the top down, at most
 * STACK_SCAN_MAX_PCS words without a row a scan: the frames live now
 * before the stale ones below them (cc1's scans asked for 50-150 PCs, each
 * a round of its partial table's walk).
 */
#define STACK_SCAN_BYTES (256u << 10)
#define STACK_SCAN_NS 10000000ULL
#define STACK_SCAN_MAX_PCS 128

static void scan_stack(struct proctrack *pt, struct proc_entry *e)
{
	uint64_t size = e->stack_hi - e->stack_lo, w;
	const struct sfbpf_mapping *m;
	struct iovec local, remote;
	uint32_t i, asked = 0;
	ssize_t got;

	if (!pt->scan_buf && !(pt->scan_buf = malloc(STACK_SCAN_BYTES)))
		return;
	if (size > STACK_SCAN_BYTES)
		size = STACK_SCAN_BYTES;
	local = (struct iovec){ pt->scan_buf, size };
	remote = (struct iovec){ (void *)(uintptr_t)(e->stack_hi - size), size };
	got = process_vm_readv(e->pid, &local, 1, &remote, 1, 0);
	if (got <= 0)
		return;
	pt->stats.stack_scans++;
	/* From the top down: the frames live now first, then the stale ones below them. */
	for (i = got / 8; i-- > 0 && asked < STACK_SCAN_MAX_PCS;) {
		w = pt->scan_buf[i];
		m = find_mapping(&pt->looked, w);
		if (!m || m->obj == SFBPF_OBJ_NONE || (m->flags & SFBPF_MAP_PERIOD_MASK))
			continue;
		asked += tables__want_pc(pt->tables, m->obj, w - 1 - m->bias) > 0;
	}
	pt->stats.stack_scan_pcs += asked;
}

void proctrack__note_truncated(struct proctrack *pt, int pid, int tid, const uint64_t *ips,
			       uint32_t n)
{
	const struct sfbpf_mapping *m;
	struct proc_entry *e;
	uint64_t now, pc;
	__u32 key = pid;
	uint32_t i;

	if (!n || !tables__partial_wanted(pt->tables) || !(e = find(pt, pid)))
		return;
	/*
	 * The BPF entry holds each mapping's slot and bias as the walk saw
	 * them. Read back at most every LOOKED_FRESH_NS per process: a mapping
	 * replaced meanwhile only asks for the wrong rows of a real object.
	 */
	now = clock__mono_ns();
	if (pid != pt->looked_pid || now - pt->looked_ns > LOOKED_FRESH_NS) {
		pt->looked_pid = 0;
		if (bpf_map_lookup_elem(pt->procs_fd, &key, &pt->looked))
			return;
		pt->looked_pid = pid;
		pt->looked_ns = now;
	}
	for (i = 0; i < n; i++) {
		/* A return address is the instruction after the call: its caller's is before. */
		pc = i ? ips[i] - 1 : ips[i];
		m = find_mapping(&pt->looked, pc);
		if (!m || m->obj == SFBPF_OBJ_NONE || (m->flags & SFBPF_MAP_PERIOD_MASK))
			continue;
		/* Frames past the first without a row came from the frame-pointer chain. */
		if (tables__want_pc(pt->tables, m->obj, pc - m->bias))
			break;
	}
	if (i < n && tid == pid && e->stack_hi && now - e->scanned_ns >= STACK_SCAN_NS) {
		e->scanned_ns = now;
		scan_stack(pt, e);
	}
}

void proctrack__stats(const struct proctrack *pt, struct proctrack_stats *out)
{
	*out = pt->stats;
}
