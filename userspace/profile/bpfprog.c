// SPDX-License-Identifier: GPL-2.0-or-later
/* The shared BPF program lifecycle: see bpfprog.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/abi.h"
#include "procs/cgroups.h"
#include "maps/segments.h"
#include "profile/bpfprog.h"
#include "util/log.h"
#include "util/clock.h"

int bpfprog__check_kernel(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_warn("the kernel has no BTF (/sys/kernel/btf/vmlinux); "
			"it needs CONFIG_DEBUG_INFO_BTF=y");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* libbpf's answer, 1 (has it), 0 (has not) or an error, as a yes only on 1. */
static bool has_helper(enum bpf_func_id helper)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, helper, NULL) == 1;
}

/*
 * Does a perf_event program that uses a hash map of these flags load? The
 * verifier checks the map's kind when the program names it: a program of one
 * instruction loading its address is enough.
 */
static bool perf_event_takes_hash(__u32 map_flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = map_flags);
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "sfbpf_probe", 4, 8, 1, &mopts), prog;
	struct bpf_insn insns[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM,
		  .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	if (map < 0)
		return false;
	prog = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "sfbpf_probe", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), NULL);
	close(map);
	if (prog < 0)
		return false;
	close(prog);
	return true;
}

/* CONFIG_KASAN doubles the kernel stacks; its functions are in kallsyms. */
static bool kernel_has_kasan(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool kasan = false;

	while (f && !kasan && fgets(line, sizeof(line), f))
		kasan = strstr(line, " kasan_init") || strstr(line, " __kasan_check_read");
	if (f)
		fclose(f);
	return kasan;
}

/* Is name in the comma-separated list in environment variable var (spaces allowed)? */
static bool listed(const char *var, const char *name)
{
	const char *p = getenv(var), *end;
	size_t len;

	while (p && *p) {
		p += strspn(p, ", ");
		end = p + strcspn(p, ", ");
		len = end - p;
		if (len == strlen(name) && !strncmp(p, name, len))
			return true;
		p = end;
	}
	return false;
}

/* A name in var that is not a feature: said once, not silently ignored. */
static void check_names(const char *var)
{
	static const char *const known[] = { "loop", "task_btf", "task_pt_regs", "no_prealloc",
					     "find_vma" };
	const char *p = getenv(var), *end;
	size_t i, len;

	while (p && *p) {
		p += strspn(p, ", ");
		end = p + strcspn(p, ", ");
		len = end - p;
		for (i = 0; len && i < sizeof(known) / sizeof(known[0]); i++)
			if (len == strlen(known[i]) && !strncmp(p, known[i], len))
				break;
		if (len && i == sizeof(known) / sizeof(known[0]))
			pr_warn("%s: no feature '%.*s' (known: loop, task_btf, task_pt_regs, "
				"no_prealloc, find_vma)",
				var, (int)len, p);
		p = end;
	}
}

static bool disabled(const char *name)
{
	return listed("SFBPF_DISABLE_FEATURES", name);
}

const struct bpfprog_kernel *bpfprog__kernel(void)
{
	static struct bpfprog_kernel k;
	static bool probed;
	long page = sysconf(_SC_PAGESIZE);

	if (probed)
		return &k;
	check_names("SFBPF_DISABLE_FEATURES");
	check_names("SFBPF_FORCE_FEATURES");
	k.loop = !disabled("loop") && has_helper(BPF_FUNC_loop);
	k.task_btf = !disabled("task_btf") && has_helper(BPF_FUNC_get_current_task_btf);
	/* bpf_task_pt_regs() takes a BTF task pointer. */
	k.task_pt_regs =
		k.task_btf && !disabled("task_pt_regs") && has_helper(BPF_FUNC_task_pt_regs);
	/*
	 * Before 6.1 a perf_event program takes only preallocated hash maps,
	 * and other tracing programs warn (a kernel WARN) for the others. Only
	 * a kernel that refuses the one and takes the other says no: a probe
	 * that fails for any other reason leaves the maps as they are.
	 */
	k.no_prealloc = disabled("no_prealloc") ? false :
						  perf_event_takes_hash(BPF_F_NO_PREALLOC) ||
							  !perf_event_takes_hash(0);
	/* The sampled task's VMAs, in the one-program walk (bpf/vmafind.h). */
	k.find_vma = k.loop && k.task_btf && !disabled("find_vma") && has_helper(BPF_FUNC_find_vma);
	/* Tests only: a feature the kernel lacks, to see the verifier refuse it. */
	k.loop |= listed("SFBPF_FORCE_FEATURES", "loop");
	k.task_pt_regs |= listed("SFBPF_FORCE_FEATURES", "task_pt_regs");
	/* x86-64: 16 KiB (32 with KASAN); AArch64: the same, or a page if larger. */
	k.thread_size = 16384;
	if (!k.task_pt_regs && kernel_has_kasan())
		k.thread_size *= 2;
	if (page > 0 && (__u64)page > k.thread_size)
		k.thread_size = page;
	if (k.loop)
		pr_info("unwinder: one program (bpf_loop), up to %d frames", SFBPF_MAX_FRAMES);
	else
		pr_info("unwinder: chained programs (no bpf_loop), up to %d frames",
			SFBPF_CHAIN_FRAMES * SFBPF_CHAIN_PROGS);
	pr_debug("kernel: task BTF %s, bpf_task_pt_regs %s (else THREAD_SIZE %llu), hash maps %s",
		 k.task_btf ? "yes" : "no", k.task_pt_regs ? "yes" : "no",
		 (unsigned long long)k.thread_size, k.no_prealloc ? "allocated" : "preallocated");
	probed = true; /* last (the main thread probes, before any loader thread runs) */
	return &k;
}

int bpfprog__check_ring_bytes(__u32 bytes)
{
	if (bytes && (bytes < 4096 || (bytes & (bytes - 1)))) {
		pr_warn("ring buffer size must be a power of two >= 4096");
		return -EINVAL;
	}
	return 0;
}

int bpfprog__nr_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	if (n <= 0) {
		n = n ? n : -EINVAL;
		pr_warn("cannot count CPUs: %s", strerror(-n));
	}
	return n;
}

bool bpfprog__fall_back(void)
{
	struct bpfprog_kernel *k = (struct bpfprog_kernel *)bpfprog__kernel();

	if (!k->find_vma)
		return false;
	k->find_vma = false;
	pr_warn("the kernel's verifier found the unwinder too large with bpf_find_vma's lookups: "
		"profiling without them (a process younger than its read waits for it)");
	return true;
}

int bpfprog__opened(const void *skel, int nr_cpus, const char *what)
{
	int err = errno;

	if (nr_cpus <= 0)
		return nr_cpus ? nr_cpus : -EINVAL; /* bpfprog__nr_cpus() said why */
	if (skel)
		return 0;
	pr_warn("opening the %s BPF object: %s", what, strerror(err));
	return -err;
}

__u32 bpfprog__seg_shift(__u32 requested)
{
	if (!requested || requested > SFBPF_SEG_SHIFT_MAX)
		return SFBPF_SEG_SHIFT_MAX;
	return requested < SFBPF_SEG_SHIFT_MIN ? SFBPF_SEG_SHIFT_MIN : requested;
}

static int set_maps(const struct bpfprog_map *maps, size_t n)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		/* A reused map takes its definition from the fd. */
		if (maps[i].reuse_fd >= 0)
			err = bpf_map__reuse_fd(maps[i].map, maps[i].reuse_fd);
		else
			err = bpf_map__set_max_entries(maps[i].map, maps[i].entries);
		if (err) {
			pr_warn("%s map %s: %s", maps[i].reuse_fd >= 0 ? "sharing" : "sizing",
				bpf_map__name(maps[i].map), strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * Before 6.1, tracing programs take only preallocated hash maps: the ones
 * made here lose BPF_F_NO_PREALLOC there (a shared map comes as it was made).
 */
static int preallocate(const struct bpfprog_map *maps, size_t n)
{
	size_t i;
	int err;

	if (bpfprog__kernel()->no_prealloc)
		return 0;
	for (i = 0; i < n; i++) {
		__u32 flags = bpf_map__map_flags(maps[i].map);

		if (maps[i].reuse_fd >= 0 || bpf_map__type(maps[i].map) != BPF_MAP_TYPE_HASH ||
		    !(flags & BPF_F_NO_PREALLOC))
			continue;
		err = bpf_map__set_map_flags(maps[i].map, flags & ~BPF_F_NO_PREALLOC);
		if (err) {
			pr_warn("preallocating map %s: %s", bpf_map__name(maps[i].map),
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * Loads the sampling program's form the kernel runs, not the other: a
 * program that calls bpf_loop() does not load without it, and the chained
 * form is only the fallback.
 */
static int choose_form(const struct bpfprog_load *o)
{
	bool loop = bpfprog__kernel()->loop;
	int err = 0, i;

	if (!o->chained)
		return 0;
	err = bpf_program__set_autoload(o->prog, loop);
	if (!err)
		err = bpf_program__set_autoload(o->chained, !loop);
	if (!err)
		err = bpf_program__set_autoload(o->chain_link, !loop);
	for (i = 0; !err && i < SFBPF_CHAIN_FINISHES; i++)
		if (o->chain_finish[i])
			err = bpf_program__set_autoload(o->chain_finish[i], !loop);
	if (err)
		pr_warn("choosing the %s program's form: %s", o->what, strerror(-err));
	return err;
}

/*
 * The chained form's next links: the walker in slot 0 of walk_chain, the
 * last link in slot 1 (bpf/ustack.h, USTACK_CHAIN_*).
 */
static int link_chain(const struct bpfprog_load *o)
{
	struct bpf_program *link;
	__u32 slot;
	int fd;

	if (!o->chained || bpfprog__kernel()->loop)
		return 0;
	for (slot = 0; slot <= SFBPF_CHAIN_FINISHES; slot++) {
		link = slot ? o->chain_finish[slot - 1] : o->chain_link;
		if (!link)
			continue;
		fd = bpf_program__fd(link);
		if (bpf_map_update_elem(bpf_map__fd(o->walk_chain), &slot, &fd, BPF_ANY)) {
			pr_warn("linking the %s walker's chain: %s", o->what, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

struct bpf_program *bpfprog__sampler(const struct bpfprog_load *o)
{
	return o->chained && !bpfprog__kernel()->loop ? o->chained : o->prog;
}

/* With -vv, the verifier's log of what is loaded: util/log.c keeps its statistics. */
static void log_verifier(const struct bpfprog_load *o)
{
	struct bpf_program *progs[] = { o->prog, o->chained, o->chain_link };
	size_t i;

	if (log__level() < LOG_DEBUG)
		return;
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (progs[i])
			bpf_program__set_log_level(progs[i], 1 | 4 /* BPF_LOG_STATS */);
	for (i = 0; i < SFBPF_CHAIN_FINISHES; i++)
		if (o->chain_finish[i])
			bpf_program__set_log_level(o->chain_finish[i], 1 | 4);
}

/*
 * A segment of 1 << shift entries made here, the table spaces' inner map
 * template: its fd, to be closed once loaded, or a negative errno.
 */
static int seg_template(struct bpf_map *rows, struct bpf_map *pages, __u32 shift)
{
	/*
	 * Not bpf_map__set_value_size() on libbpf's own inner map: libbpf 1.5
	 * dereferences the (absent) object of an inner map there and crashes.
	 */
	int fd = segspace__new_segment(shift), err;

	if (fd < 0) {
		pr_warn("table segments of %u entries: %s", 1u << shift, strerror(-fd));
		return fd;
	}
	err = bpf_map__set_inner_map_fd(rows, fd);
	if (!err)
		err = bpf_map__set_inner_map_fd(pages, fd);
	if (err) {
		pr_warn("table segments of %u entries: %s", 1u << shift, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

int bpfprog__load(struct bpf_object_skeleton *skel, const struct bpfprog_load *o)
{
	const char *vlog;
	int err, tmpl = -1;

	err = set_maps(o->maps, o->nr_maps);
	if (!err)
		err = preallocate(o->maps, o->nr_maps);
	if (!err)
		err = choose_form(o);
	if (err)
		return err;
	log_verifier(o);
	if (o->seg_rows) {
		tmpl = seg_template(o->seg_rows, o->seg_pages, o->seg_shift);
		if (tmpl < 0)
			return tmpl;
	}
	log__verifier_reset();
	err = bpf_object__load_skeleton(skel);
	vlog = log__verifier_path();
	if (err && (vlog || err == -EACCES))
		/* EACCES is the verifier's answer, to root too: not a privilege problem. */
		pr_warn("loading the %s BPF program: the kernel's verifier refused it (%s)%s%s",
			o->what, strerror(-err), vlog ? "; its whole log: " : "", vlog ? vlog : "");
	else if (err == -EPERM)
		pr_warn("loading the %s BPF program: %s; run as root "
			"(or with CAP_BPF and CAP_PERFMON)",
			o->what, strerror(-err));
	else if (err)
		pr_warn("loading the %s BPF program: %s", o->what, strerror(-err));
	if (tmpl >= 0)
		close(tmpl);
	if (!err)
		err = link_chain(o);
	if (!err && o->cgroup)
		err = cgroups__set_target(bpf_map__fd(o->cgroup_map), o->cgroup);
	return err;
}

int bpfprog__attach_raw_tp(struct bpf_program *prog, const char *tp, struct bpf_link **link)
{
	int err;

	*link = bpf_program__attach_raw_tracepoint(prog, tp);
	if (!*link) {
		err = -errno;
		pr_warn("attaching to %s: %s", tp, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * Where tracepoints' ids are: tracefs, on /sys/kernel/tracing or (older
 * hosts) under debugfs. An init that mounts neither (a minimal VM, a
 * container given /sys without its submounts) leaves the syscall tracepoints
 * unreachable, though the kernel has them: mount tracefs where the kernel
 * made its mount point, as perf does, rather than lose the program. libbpf
 * reads the same places (debugfs's first, when it exists).
 */
static const char *tracefs_events(int *err)
{
	static const char *const dirs[] = { "/sys/kernel/debug/tracing/events",
					    "/sys/kernel/tracing/events" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!access(dirs[i], F_OK))
			return dirs[i];
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL)) {
		*err = -errno;
		return NULL;
	}
	pr_info("mounted tracefs on /sys/kernel/tracing (no mount of it before)");
	return dirs[1];
}

int bpfprog__attach_tracepoint(struct bpf_program *prog, const char *category, const char *name,
			       struct bpf_link **link)
{
	const char *events;
	char path[256];
	int err = 0;

	*link = NULL;
	events = tracefs_events(&err);
	if (!events) {
		pr_warn("no tracefs, and mounting it on /sys/kernel/tracing failed: %s",
			strerror(-err));
		return err;
	}
	snprintf(path, sizeof(path), "%s/%s/%s/id", events, category, name);
	if (access(path, R_OK)) {
		err = -errno;
		pr_warn("no tracepoint %s:%s in this kernel (%s: %s)", category, name, path,
			strerror(-err));
		return err;
	}
	*link = bpf_program__attach_tracepoint(prog, category, name);
	if (!*link) {
		err = -errno;
		pr_warn("attaching to %s:%s: %s", category, name, strerror(-err));
		return err;
	}
	return 0;
}

struct ring_buffer *bpfprog__ring_new(int map_fd, ring_buffer_sample_fn fn, void *ctx,
				      const char *what)
{
	struct ring_buffer *rb = ring_buffer__new(map_fd, fn, ctx, NULL);

	if (!rb)
		pr_warn("creating the %s ring buffer: %s", what, strerror(errno));
	return rb;
}

int bpfprog__wake_init(struct bpfprog_wake *w, struct ring_buffer *rb, int wake_fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd < 0)
		return -errno;
	ev.data.fd = ring_buffer__epoll_fd(rb);
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) == 0) {
		ev.data.fd = wake_fd;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, wake_fd, &ev) == 0) {
			w->epfd = epfd;
			w->fd = wake_fd;
			return 0;
		}
	}
	close(epfd);
	return -errno;
}

void bpfprog__wake_fini(struct bpfprog_wake *w)
{
	if (w->epfd >= 0)
		close(w->epfd);
	w->epfd = w->fd = -1;
}

/*
 * Waits up to wait ms for the ring (its records are read by the caller's
 * ring_buffer__consume()) or, with w, for w's eventfd (drained: *woken).
 * Returns what ring_buffer__poll() does: records read, or a negative errno.
 */
static int wait_ring(struct ring_buffer *rb, const struct bpfprog_wake *w, int wait, bool *woken)
{
	struct epoll_event ev[2];
	uint64_t v;
	int n, i;

	if (!w || w->epfd < 0)
		return ring_buffer__poll(rb, wait);
	n = epoll_wait(w->epfd, ev, 2, wait);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		if (ev[i].data.fd != w->fd)
			continue;
		while (read(w->fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			;
		*woken = true;
	}
	return 0;
}

int bpfprog__poll_wake(struct ring_buffer *rb, const struct bpfprog_wake *w, int timeout_ms,
		       int latency_ms)
{
	long long end = timeout_ms > 0 ? clock__mono_ms() + timeout_ms : 0, left;
	int n, m, wait = timeout_ms;
	bool woken = false;

	for (;;) {
		if (wait < 0 || wait > latency_ms)
			wait = latency_ms;
		n = wait_ring(rb, w, wait, &woken);
		if (n < 0)
			return n;
		m = ring_buffer__consume(rb);
		if (m < 0)
			return m;
		if (n + m || !timeout_ms || woken)
			return n + m;
		if (timeout_ms > 0) {
			left = end - clock__mono_ms();
			if (left <= 0)
				return 0;
			wait = (int)left;
		} else {
			wait = -1;
		}
	}
}

int bpfprog__sum_percpu(int map_fd, int nr_cpus, __u64 *out, size_t n, const char *what)
{
	__u64 *percpu;
	__u32 zero = 0;
	size_t i;
	int cpu, err;

	memset(out, 0, n * sizeof(*out));
	/* Per-CPU values are laid out 8-byte aligned, n counters each. */
	percpu = calloc((size_t)nr_cpus * n, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	err = bpf_map_lookup_elem(map_fd, &zero, percpu);
	if (err) {
		err = -errno;
		pr_warn("reading %s counters: %s", what, strerror(-err));
	} else {
		for (cpu = 0; cpu < nr_cpus; cpu++)
			for (i = 0; i < n; i++)
				out[i] += percpu[(size_t)cpu * n + i];
	}
	free(percpu);
	return err;
}
