// SPDX-License-Identifier: GPL-2.0-or-later
/* Lifecycle of the off-CPU BPF program: see offcpu.h and docs/DESIGN-offcpu.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "procs/cgroups.h"
#include "profile/offcpu.h"
#include "offcpu.skel.h"
#include "profile/profile.h"

#define VERIFIER_LOG_SIZE (64u << 10)
#define POLL_DEFAULT_MS 1000

struct offcpu {
	struct offcpu_bpf *skel;
	struct ring_buffer *rb;
	int nr_cpus;
	__u64 min_ns, max_ns;
	offcpu_sample_fn on_sample;
	void *ctx;
	char *log;
};

static const char *const state_names[SFBPF_STATE__COUNT] = {
	[SFBPF_STATE_RUNNING] = "running",
	[SFBPF_STATE_SLEEPING] = "sleeping",
	[SFBPF_STATE_DISK] = "disk",
	[SFBPF_STATE_OTHER] = "other",
};

static const char *const stat_names[SFBPF_OFFCPU_STAT__COUNT] = {
	[SFBPF_OFFCPU_STAT_SWITCHES] = "switches",
	[SFBPF_OFFCPU_STAT_BLOCKS] = "blocks",
	[SFBPF_OFFCPU_STAT_MAP_FULL] = "map-full",
	[SFBPF_OFFCPU_STAT_WAKEUPS] = "wakeups",
	[SFBPF_OFFCPU_STAT_SHORT] = "short",
	[SFBPF_OFFCPU_STAT_LONG] = "long",
	[SFBPF_OFFCPU_STAT_EXITS] = "exits",
};

const char *offcpu__state_name(enum sfbpf_offcpu_state state)
{
	return (unsigned int)state < SFBPF_STATE__COUNT ? state_names[state] : "unknown";
}

const char *offcpu__stat_name(enum sfbpf_offcpu_stat stat)
{
	return (unsigned int)stat < SFBPF_OFFCPU_STAT__COUNT ? stat_names[stat] : "unknown";
}

int offcpu__parse_states(const char *list, __u32 *mask)
{
	const char *p = list, *end;
	size_t len;
	int i;

	*mask = 0;
	while (*p) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len == 3 && !strncmp(p, "all", 3)) {
			*mask |= SFBPF_STATES_ALL;
		} else {
			for (i = 0; i < SFBPF_STATE__COUNT; i++)
				if (strlen(state_names[i]) == len && !strncmp(p, state_names[i], len))
					break;
			if (i == SFBPF_STATE__COUNT)
				return -EINVAL;
			*mask |= SFBPF_STATE_BIT(i);
		}
		if (!end)
			break;
		p = end + 1;
	}
	return *mask ? 0 : -EINVAL;
}

__u64 offcpu__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int check_opts(const struct offcpu_opts *o)
{
	if (o->max_frames > SFBPF_MAX_FRAMES) {
		fprintf(stderr, "sfbpf: at most %d user frames per stack\n", SFBPF_MAX_FRAMES);
		return -EINVAL;
	}
	if (!o->user_stacks && !o->kernel_stacks) {
		fprintf(stderr, "sfbpf: neither user nor kernel stacks requested\n");
		return -EINVAL;
	}
	if (o->max_ns && o->max_ns < o->min_ns) {
		fprintf(stderr, "sfbpf: the maximum off-CPU time is below the minimum\n");
		return -EINVAL;
	}
	if (o->states & ~SFBPF_STATES_ALL) {
		fprintf(stderr, "sfbpf: unknown thread states in the filter\n");
		return -EINVAL;
	}
	if (o->ringbuf_bytes &&
	    (o->ringbuf_bytes < 4096 || (o->ringbuf_bytes & (o->ringbuf_bytes - 1)))) {
		fprintf(stderr, "sfbpf: ring buffer size must be a power of two >= 4096\n");
		return -EINVAL;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "sfbpf: the kernel has no BTF (/sys/kernel/btf/vmlinux); "
				"it needs CONFIG_DEBUG_INFO_BTF=y\n");
		return -EOPNOTSUPP;
	}
	return 0;
}

static __u32 or_default(__u32 v, __u32 def)
{
	return v ? v : def;
}

/*
 * sched_switch gained its prev_state argument in 5.18: the state the scheduler
 * acted on. Reading prev->__state instead races with a waker on another CPU.
 */
static bool tracepoint_has_prev_state(void)
{
	const struct btf_type *t;
	struct btf *btf;
	bool ok = false;
	int id;

	btf = btf__load_vmlinux_btf();
	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		t = t ? btf__type_by_id(btf, t->type) : NULL; /* pointer */
		t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
		/* (void *data, bool preempt, prev, next, unsigned int prev_state) */
		ok = t && btf_is_func_proto(t) && btf_vlen(t) >= 5;
	}
	btf__free(btf);
	return ok;
}

static int set_maps(struct offcpu_bpf *skel, const struct offcpu_opts *o)
{
	const struct offcpu_shared_maps *sh = o->shared;
	struct {
		struct bpf_map *map;
		__u32 n;
		int shared_fd;
	} maps[] = {
		{ skel->maps.rows, or_default(o->max_rows, PROFILE_DEFAULT_ROWS), sh ? sh->rows : -1 },
		{ skel->maps.rules, or_default(o->max_rules, PROFILE_DEFAULT_RULES),
		  sh ? sh->rules : -1 },
		{ skel->maps.objects, or_default(o->max_objects, PROFILE_DEFAULT_OBJECTS),
		  sh ? sh->objects : -1 },
		{ skel->maps.pages, or_default(o->max_pages, PROFILE_DEFAULT_PAGES),
		  sh ? sh->pages : -1 },
		{ skel->maps.procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS),
		  sh ? sh->procs : -1 },
		{ skel->maps.target_pids, or_default(o->max_pids, PROFILE_DEFAULT_PIDS),
		  sh ? sh->target_pids : -1 },
		{ skel->maps.blocked, or_default(o->max_threads, OFFCPU_DEFAULT_THREADS), -1 },
		{ skel->maps.events, or_default(o->ringbuf_bytes, OFFCPU_DEFAULT_RINGBUF), -1 },
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		/* A reused map takes its definition from the fd. */
		if (maps[i].shared_fd >= 0)
			err = bpf_map__reuse_fd(maps[i].map, maps[i].shared_fd);
		else
			err = bpf_map__set_max_entries(maps[i].map, maps[i].n);
		if (err) {
			fprintf(stderr, "sfbpf: %s map %s: %s\n",
				maps[i].shared_fd >= 0 ? "sharing" : "sizing",
				bpf_map__name(maps[i].map), strerror(-err));
			return err;
		}
	}
	return 0;
}

static void set_rodata(struct offcpu_bpf *skel, const struct offcpu_opts *o)
{
	struct offcpu_bpf__rodata *ro = skel->rodata;
	__u32 ring = or_default(o->ringbuf_bytes, OFFCPU_DEFAULT_RINGBUF);

	ro->max_user_frames = o->max_frames ? o->max_frames : SFBPF_MAX_FRAMES;
	ro->filter_pids = o->filter_pids;
	ro->filter_cgroup = o->cgroup != NULL;
	ro->user_stacks = o->user_stacks;
	ro->kernel_stacks = o->kernel_stacks;
	ro->state_mask = o->states ? o->states : SFBPF_STATES_BLOCKED;
	ro->min_ns = o->min_ns;
	ro->max_ns = o->max_ns ? o->max_ns : ~0ULL;
	ro->have_prev_state = tracepoint_has_prev_state();
	/*
	 * One wake-up per record would wake the reader on every context switch
	 * it reports (and the reader's own switches would feed the stream):
	 * wake it at 1/16 full, it polls with a timeout for the rest.
	 */
	ro->wakeup_bytes = ring / 16;
	ro->stamp_at_entry = o->with_cpu_samples;
	ro->sched_lo = o->sched_start;
	ro->sched_hi = o->sched_end;
}

static void print_verifier_stats(const char *log)
{
	const char *line = log, *end;

	while (line && *line) {
		end = strchr(line, '\n');
		if (!strncmp(line, "processed ", 10) || !strncmp(line, "verification time", 17))
			fprintf(stderr, "sfbpf: verifier (off-CPU): %.*s\n",
				end ? (int)(end - line) : (int)strlen(line), line);
		line = end ? end + 1 : NULL;
	}
}

static bool record_fits(const struct sfbpf_offcpu_sample *r, size_t size)
{
	return size >= SFBPF_OFFCPU_HDR_SIZE && r->s.nr_user <= SFBPF_MAX_FRAMES &&
	       r->s.nr_kernel <= SFBPF_MAX_KFRAMES &&
	       SFBPF_OFFCPU_HDR_SIZE + ((size_t)r->s.nr_user + r->s.nr_kernel) * sizeof(__u64) <=
		       size;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct offcpu *o = ctx;
	const struct sfbpf_offcpu_sample *r = data;

	if (!record_fits(r, size))
		return 0; /* cannot happen with a matching BPF object: ignore */
	return o->on_sample ? o->on_sample(o->ctx, r, size) : 0;
}

struct offcpu *offcpu__new(const struct offcpu_opts *opts)
{
	struct offcpu *o;
	int err;

	err = check_opts(opts);
	if (err) {
		errno = -err;
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		errno = ENOMEM;
		return NULL;
	}
	o->on_sample = opts->on_sample;
	o->ctx = opts->ctx;
	o->min_ns = opts->min_ns;
	o->max_ns = opts->max_ns ? opts->max_ns : ~0ULL;
	o->nr_cpus = libbpf_num_possible_cpus();
	if (o->nr_cpus <= 0) {
		err = o->nr_cpus ? o->nr_cpus : -EINVAL;
		fprintf(stderr, "sfbpf: cannot count CPUs: %s\n", strerror(-err));
		goto cleanup;
	}

	o->skel = offcpu_bpf__open();
	if (!o->skel) {
		err = -errno;
		fprintf(stderr, "sfbpf: opening the off-CPU BPF object: %s\n", strerror(-err));
		goto cleanup;
	}
	set_rodata(o->skel, opts);
	err = set_maps(o->skel, opts);
	if (err)
		goto cleanup;
	if (opts->verbose >= 2) {
		o->log = calloc(1, VERIFIER_LOG_SIZE);
		if (!o->log) {
			err = -ENOMEM;
			goto cleanup;
		}
		bpf_program__set_log_buf(o->skel->progs.sfbpf_offcpu, o->log, VERIFIER_LOG_SIZE);
		bpf_program__set_log_level(o->skel->progs.sfbpf_offcpu, 4 /* BPF_LOG_STATS */);
	}
	err = offcpu_bpf__load(o->skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			fprintf(stderr, "sfbpf: loading the off-CPU BPF program: %s; run as root "
					"(or with CAP_BPF and CAP_PERFMON)\n", strerror(-err));
		else
			fprintf(stderr, "sfbpf: loading the off-CPU BPF program: %s\n",
				strerror(-err));
		goto cleanup;
	}
	if (o->log)
		print_verifier_stats(o->log);
	if (opts->cgroup) {
		err = cgroups__set_target(bpf_map__fd(o->skel->maps.target_cgroup), opts->cgroup);
		if (err)
			goto cleanup;
	}
	o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.events), on_event, o, NULL);
	if (!o->rb) {
		err = -errno;
		fprintf(stderr, "sfbpf: creating the off-CPU ring buffer: %s\n", strerror(-err));
		goto cleanup;
	}
	return o;

cleanup:
	offcpu__free(o);
	errno = -err;
	return NULL;
}

int offcpu__attach(struct offcpu *o)
{
	int err;

	/* Exits first: no entry may outlive its thread once switches are traced. */
	o->skel->links.sfbpf_offcpu_exit =
		bpf_program__attach_raw_tracepoint(o->skel->progs.sfbpf_offcpu_exit,
						   "sched_process_exit");
	if (!o->skel->links.sfbpf_offcpu_exit) {
		err = -errno;
		fprintf(stderr, "sfbpf: attaching to sched_process_exit: %s\n", strerror(-err));
		return err;
	}
	o->skel->links.sfbpf_offcpu =
		bpf_program__attach_raw_tracepoint(o->skel->progs.sfbpf_offcpu, "sched_switch");
	if (!o->skel->links.sfbpf_offcpu) {
		err = -errno;
		fprintf(stderr, "sfbpf: attaching to sched_switch: %s\n", strerror(-err));
		offcpu__detach(o);
		return err;
	}
	return 0;
}

void offcpu__detach(struct offcpu *o)
{
	bpf_link__destroy(o->skel->links.sfbpf_offcpu);
	o->skel->links.sfbpf_offcpu = NULL;
	bpf_link__destroy(o->skel->links.sfbpf_offcpu_exit);
	o->skel->links.sfbpf_offcpu_exit = NULL;
}

int offcpu__poll(struct offcpu *o, int timeout_ms)
{
	int n, m;

	n = ring_buffer__poll(o->rb, timeout_ms < 0 ? POLL_DEFAULT_MS : timeout_ms);
	if (n < 0)
		return n;
	/* Records below the wake-up threshold raised no event: read them too. */
	m = ring_buffer__consume(o->rb);
	if (m < 0)
		return m;
	return n + m;
}

int offcpu__for_each_blocked(struct offcpu *o, __u64 end_ns, offcpu_sample_fn fn, void *ctx)
{
	int fd = bpf_map__fd(o->skel->maps.blocked), n = 0, err;
	struct sfbpf_offcpu_sample *r;
	__u32 key, next;
	void *prev = NULL;
	__u64 delta;
	size_t size;

	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, r) || !r->start_ns || r->start_ns > end_ns)
			continue;
		delta = end_ns - r->start_ns;
		if (delta < o->min_ns || delta > o->max_ns)
			continue;
		r->end_ns = end_ns;
		r->s.time_ns = end_ns;
		r->s.weight = delta / 1000 > 0xffffffffULL ? 0xffffffffU : (__u32)(delta / 1000);
		size = SFBPF_OFFCPU_HDR_SIZE + ((size_t)r->s.nr_user + r->s.nr_kernel) * 8;
		if (!record_fits(r, size))
			continue;
		err = fn(ctx, r, size);
		if (err) {
			free(r);
			return err;
		}
		n++;
	}
	free(r);
	return n;
}

int offcpu__stats(struct offcpu *o, struct sfbpf_offcpu_stats *out)
{
	struct sfbpf_offcpu_stats *percpu;
	__u32 zero = 0;
	int cpu, i, err;

	memset(out, 0, sizeof(*out));
	percpu = calloc(o->nr_cpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(o->skel->maps.stats), &zero, percpu);
	if (err) {
		err = -errno;
		fprintf(stderr, "sfbpf: reading off-CPU counters: %s\n", strerror(-err));
		goto cleanup;
	}
	for (cpu = 0; cpu < o->nr_cpus; cpu++) {
		for (i = 0; i < SFBPF_STAT__COUNT; i++)
			out->unwind.v[i] += percpu[cpu].unwind.v[i];
		for (i = 0; i < SFBPF_OFFCPU_STAT__COUNT; i++)
			out->v[i] += percpu[cpu].v[i];
	}
cleanup:
	free(percpu);
	return err;
}

int offcpu__rows_fd(const struct offcpu *o)
{
	return bpf_map__fd(o->skel->maps.rows);
}

int offcpu__rules_fd(const struct offcpu *o)
{
	return bpf_map__fd(o->skel->maps.rules);
}

int offcpu__objects_fd(const struct offcpu *o)
{
	return bpf_map__fd(o->skel->maps.objects);
}

int offcpu__pages_fd(const struct offcpu *o)
{
	return bpf_map__fd(o->skel->maps.pages);
}

int offcpu__procs_fd(const struct offcpu *o)
{
	return bpf_map__fd(o->skel->maps.procs);
}

int offcpu__target_pids_fd(const struct offcpu *o)
{
	return bpf_map__fd(o->skel->maps.target_pids);
}

int offcpu__prog_fd(const struct offcpu *o)
{
	return bpf_program__fd(o->skel->progs.sfbpf_offcpu);
}

void offcpu__free(struct offcpu *o)
{
	if (!o)
		return;
	if (o->skel)
		offcpu__detach(o);
	ring_buffer__free(o->rb);
	offcpu_bpf__destroy(o->skel);
	free(o->log);
	free(o);
}
