// SPDX-License-Identifier: GPL-2.0-or-later
/* The shared BPF program lifecycle: see bpfprog.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/abi.h"
#include "procs/cgroups.h"
#include "tables/segments.h"
#include "profile/bpfprog.h"
#include "util/log.h"
#include "util/clock.h"

#define VERIFIER_LOG_SIZE (64u << 10)

int bpfprog__check_kernel(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_warn("the kernel has no BTF (/sys/kernel/btf/vmlinux); "
			"it needs CONFIG_DEBUG_INFO_BTF=y");
		return -EOPNOTSUPP;
	}
	return 0;
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

/* Prints the verifier's statistics lines ("processed N insns ..."). */
static void print_verifier_stats(const char *log, const char *what)
{
	const char *line = log, *end;

	while (line && *line) {
		end = strchr(line, '\n');
		if (!strncmp(line, "processed ", 10) || !strncmp(line, "verification time", 17))
			pr_debug("verifier (%s): %.*s", what,
				 end ? (int)(end - line) : (int)strlen(line), line);
		line = end ? end + 1 : NULL;
	}
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
	struct bpf_program *prog = o->prog;
	int err, tmpl = -1;
	char *log = NULL;

	err = set_maps(o->maps, o->nr_maps);
	if (err)
		return err;
	if (log__level() >= LOG_DEBUG) {
		log = calloc(1, VERIFIER_LOG_SIZE);
		if (!log)
			return -ENOMEM;
		bpf_program__set_log_buf(prog, log, VERIFIER_LOG_SIZE);
		bpf_program__set_log_level(prog, 4 /* BPF_LOG_STATS */);
	}
	if (o->seg_rows) {
		tmpl = seg_template(o->seg_rows, o->seg_pages, o->seg_shift);
		if (tmpl < 0) {
			free(log);
			return tmpl;
		}
	}
	err = bpf_object__load_skeleton(skel);
	if (err == -EPERM || err == -EACCES)
		pr_warn("loading the %s BPF program: %s; run as root "
			"(or with CAP_BPF and CAP_PERFMON)",
			o->what, strerror(-err));
	else if (err)
		pr_warn("loading the %s BPF program: %s", o->what, strerror(-err));
	else if (log)
		print_verifier_stats(log, o->what);
	/* The kernel copied what it wrote; the program must not keep the buffer. */
	if (log)
		bpf_program__set_log_buf(prog, NULL, 0);
	free(log);
	if (tmpl >= 0)
		close(tmpl);
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

struct ring_buffer *bpfprog__ring_new(int map_fd, ring_buffer_sample_fn fn, void *ctx,
				      const char *what)
{
	struct ring_buffer *rb = ring_buffer__new(map_fd, fn, ctx, NULL);

	if (!rb)
		pr_warn("creating the %s ring buffer: %s", what, strerror(errno));
	return rb;
}

int bpfprog__poll(struct ring_buffer *rb, int timeout_ms, int latency_ms)
{
	long long end = timeout_ms > 0 ? clock__mono_ms() + timeout_ms : 0, left;
	int n, m, wait = timeout_ms;

	for (;;) {
		if (wait < 0 || wait > latency_ms)
			wait = latency_ms;
		n = ring_buffer__poll(rb, wait);
		if (n < 0)
			return n;
		m = ring_buffer__consume(rb);
		if (m < 0)
			return m;
		if (n + m || !timeout_ms)
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
