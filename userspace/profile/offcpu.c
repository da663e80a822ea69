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

#include "profile/bpfprog.h"
#include "profile/offcpu.h"
#include "profile/pacmask.h"
#include "offcpu.skel.h"
#include "profile/profile.h"
#include "util/log.h"

#define POLL_DEFAULT_MS 1000
/* Records wake the reader at 1/16 of the ring (set_rodata); below, polls find them. */
#define POLL_LATENCY_MS 50

struct offcpu {
	struct offcpu_bpf *skel;
	struct bpf_program *prog; /* the sched_switch program loaded (bpfprog__sampler()) */
	struct ring_buffer *rb;
	int nr_cpus;
	__u64 min_ns, max_ns;
	offcpu_sample_fn on_sample;
	void (*on_py_code)(void *ctx, const struct sfbpf_py_code *c, size_t size);
	void *ctx;
	struct bpfprog_wake wake; /* offcpu__set_wake_fd(); epfd -1: none */
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
	[SFBPF_OFFCPU_STAT_EXITING] = "exiting",
	[SFBPF_OFFCPU_STAT_NO_FINISH] = "no-finish",
	[SFBPF_OFFCPU_STAT_UNSEEN] = "unseen-switch-ins",
	[SFBPF_OFFCPU_STAT_UNSEEN_LOST] = "unseen-lost",
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
				if (strlen(state_names[i]) == len &&
				    !strncmp(p, state_names[i], len))
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

static int check_opts(const struct offcpu_opts *o)
{
	int err;

	/* More than SFBPF_OFFCPU_MAX_FRAMES is kept to that (set_rodata): one -S serves both. */
	if (o->max_frames > SFBPF_MAX_FRAMES) {
		pr_warn("at most %d user frames per stack", SFBPF_MAX_FRAMES);
		return -EINVAL;
	}
	if (!o->user_stacks && !o->kernel_stacks) {
		pr_warn("neither user nor kernel stacks requested");
		return -EINVAL;
	}
	if (o->max_ns && o->max_ns < o->min_ns) {
		pr_warn("the maximum off-CPU time is below the minimum");
		return -EINVAL;
	}
	if (o->states & ~SFBPF_STATES_ALL) {
		pr_warn("unknown thread states in the filter");
		return -EINVAL;
	}
	err = bpfprog__check_ring_bytes(o->ringbuf_bytes);
	return err ? err : bpfprog__check_kernel();
}

static __u32 or_default(__u32 v, __u32 def)
{
	return v ? v : def;
}

static __u32 seg_shift(const struct offcpu_opts *o)
{
	return bpfprog__seg_shift(o->seg_shift);
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

/* Sizes or shares every map, loads, sets the cgroup filter. */
static int load(struct offcpu *oc, const struct offcpu_opts *o)
{
	struct offcpu_bpf *skel = oc->skel;
	const struct offcpu_shared_maps *sh = o->shared;
	/* The table spaces: arrays of segments (bpf/abi.h). */
	__u32 row_segs = SFBPF_SEGS(or_default(o->max_rows, PROFILE_DEFAULT_ROWS), seg_shift(o));
	__u32 page_segs = SFBPF_SEGS(or_default(o->max_pages, PROFILE_DEFAULT_PAGES), seg_shift(o));
	const struct bpfprog_map maps[] = {
		{ skel->maps.rows, row_segs, sh ? sh->rows : -1 },
		{ skel->maps.rules, or_default(o->max_rules, PROFILE_DEFAULT_RULES),
		  sh ? sh->rules : -1 },
		{ skel->maps.objects, or_default(o->max_objects, PROFILE_DEFAULT_OBJECTS),
		  sh ? sh->objects : -1 },
		{ skel->maps.pages, page_segs, sh ? sh->pages : -1 },
		{ skel->maps.procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS),
		  sh ? sh->procs : -1 },
		{ skel->maps.target_pids, or_default(o->max_pids, PROFILE_DEFAULT_PIDS),
		  sh ? sh->target_pids : -1 },
		{ skel->maps.py_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS),
		  sh ? sh->py_procs : -1 },
		{ skel->maps.hs_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS),
		  sh ? sh->hs_procs : -1 },
		{ skel->maps.v8_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS),
		  sh ? sh->v8_procs : -1 },
		{ skel->maps.php_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS),
		  sh ? sh->php_procs : -1 },
		{ skel->maps.rb_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS),
		  sh ? sh->rb_procs : -1 },
		{ skel->maps.pl_procs, or_default(o->max_procs, PROFILE_DEFAULT_PROCS),
		  sh ? sh->pl_procs : -1 },
		{ skel->maps.cpu_run, 1, sh ? sh->cpu_run : -1 },
		{ skel->maps.blocked, or_default(o->max_threads, OFFCPU_DEFAULT_THREADS), -1 },
		{ skel->maps.events, or_default(o->ringbuf_bytes, OFFCPU_DEFAULT_RINGBUF), -1 },
	};

	const struct bpfprog_load lo = {
		.what = "off-CPU",
		.prog = skel->progs.sfbpf_offcpu,
		.chained = skel->progs.sfbpf_offcpu_chained,
		.chain_link = skel->progs.sfbpf_offcpu_walk,
		.chain_finish = { skel->progs.sfbpf_offcpu_finish,
				  skel->progs.sfbpf_offcpu_finish_php,
				  skel->progs.sfbpf_offcpu_finish_ruby,
				  skel->progs.sfbpf_offcpu_finish_perl },
		.walk_chain = skel->maps.walk_chain,
		.maps = maps,
		.nr_maps = sizeof(maps) / sizeof(maps[0]),
		.cgroup_map = skel->maps.target_cgroup,
		.cgroup = o->cgroup,
		/* Shared table maps bring their segments' shape with them. */
		.seg_rows = sh ? NULL : skel->maps.rows,
		.seg_pages = skel->maps.pages,
		.seg_shift = seg_shift(o),
	};

	int err = bpfprog__load(skel->skeleton, &lo);

	oc->prog = bpfprog__sampler(&lo);
	return err;
}

static void set_rodata(struct offcpu_bpf *skel, const struct offcpu_opts *o)
{
	struct offcpu_bpf__rodata *ro = skel->rodata;
	__u32 ring = or_default(o->ringbuf_bytes, OFFCPU_DEFAULT_RINGBUF);

	ro->max_user_frames = o->max_frames && o->max_frames < SFBPF_OFFCPU_MAX_FRAMES ?
				      o->max_frames :
				      SFBPF_OFFCPU_MAX_FRAMES;
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
	ro->seg_shift = seg_shift(o);
	bpfprog__set_kernel_rodata(ro);
#ifdef __aarch64__
	{ /* the PAC bits the unwinder strips from return addresses (bpf/arch.h) */
		uint64_t pac;

		if (!pacmask__user(&pac))
			ro->user_pac_mask = pac;
	}
#endif
}

static bool record_fits(const struct sfbpf_offcpu_sample *r, size_t size)
{
	return size >= SFBPF_OFFCPU_HDR_SIZE && r->s.nr_user <= SFBPF_OFFCPU_MAX_FRAMES &&
	       r->s.nr_kernel <= SFBPF_MAX_KFRAMES && r->s.nr_py <= SFBPF_OFFCPU_PY_FRAMES &&
	       SFBPF_OFFCPU_HDR_SIZE + ((size_t)r->s.nr_user + r->s.nr_kernel + 2 * r->s.nr_py) *
					       sizeof(__u64) <=
		       size;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct offcpu *o = ctx;
	const struct sfbpf_offcpu_sample *r = data;

	if (size >= SFBPF_PY_CODE_HDR_SIZE && *(const __u64 *)data == SFBPF_PY_CODE_MAGIC) {
		if (o->on_py_code)
			o->on_py_code(o->ctx, data, size);
		return 0;
	}
	if (!record_fits(r, size))
		return 0; /* cannot happen with a matching BPF object: ignore */
	return o->on_sample ? o->on_sample(o->ctx, r, size) : 0;
}

struct offcpu *offcpu__new(const struct offcpu_opts *opts)
{
	struct offcpu *o;
	int err;

	err = check_opts(opts);
	o = err ? NULL : calloc(1, sizeof(*o));
	if (!o) {
		errno = err ? -err : ENOMEM;
		return NULL;
	}
	o->wake.epfd = o->wake.fd = -1;
	o->on_sample = opts->on_sample;
	o->on_py_code = opts->on_py_code;
	o->ctx = opts->ctx;
	o->min_ns = opts->min_ns;
	o->max_ns = opts->max_ns ? opts->max_ns : ~0ULL;
	/* Per-CPU values are sized by the possible CPUs: count them first. */
	o->nr_cpus = bpfprog__nr_cpus();
	o->skel = o->nr_cpus > 0 ? offcpu_bpf__open() : NULL;
	err = bpfprog__opened(o->skel, o->nr_cpus, "off-CPU");
	if (err)
		goto cleanup;
	set_rodata(o->skel, opts);
	err = load(o, opts);
	if (err)
		goto cleanup;
	o->rb = bpfprog__ring_new(bpf_map__fd(o->skel->maps.events), on_event, o, "off-CPU");
	if (!o->rb) {
		err = -errno;
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
	err = bpfprog__attach_raw_tp(o->skel->progs.sfbpf_offcpu_exit, "sched_process_exit",
				     &o->skel->links.sfbpf_offcpu_exit);
	if (err)
		return err;
	err = bpfprog__attach_raw_tp(o->prog, "sched_switch", &o->skel->links.sfbpf_offcpu);
	if (err)
		offcpu__detach(o);
	return err;
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
	return bpfprog__poll_wake(o->rb, &o->wake, timeout_ms < 0 ? POLL_DEFAULT_MS : timeout_ms,
				  POLL_LATENCY_MS);
}

int offcpu__set_wake_fd(struct offcpu *o, int fd)
{
	bpfprog__wake_fini(&o->wake);
	return fd >= 0 ? bpfprog__wake_init(&o->wake, o->rb, fd) : 0;
}

int offcpu__for_each_blocked(struct offcpu *o, __u64 end_ns, offcpu_sample_fn fn, void *ctx)
{
	int fd = bpf_map__fd(o->skel->maps.blocked), n = 0, err;
	struct sfbpf_offcpu_sample *r;
	__u32 key, next;
	void *prev = NULL;
	__u64 delta;
	size_t size;

	r = malloc(sizeof(*r)); /* the map holds its first SFBPF_OFFCPU_REC_SIZE bytes */
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
		size = SFBPF_OFFCPU_HDR_SIZE +
		       ((size_t)r->s.nr_user + r->s.nr_kernel + 2 * r->s.nr_py) * 8;
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
	/* The unwinder's counters, then the off-CPU ones: all __u64. */
	_Static_assert(sizeof(*out) ==
			       sizeof(__u64) * (SFBPF_STAT__COUNT + SFBPF_OFFCPU_STAT__COUNT),
		       "struct sfbpf_offcpu_stats is a plain array of counters");
	return bpfprog__sum_percpu(bpf_map__fd(o->skel->maps.stats), o->nr_cpus, (__u64 *)out,
				   sizeof(*out) / sizeof(__u64), "off-CPU");
}

void offcpu__maps(const struct offcpu *o, struct offcpu_shared_maps *out)
{
	*out = (struct offcpu_shared_maps){
		.rows = bpf_map__fd(o->skel->maps.rows),
		.rules = bpf_map__fd(o->skel->maps.rules),
		.objects = bpf_map__fd(o->skel->maps.objects),
		.pages = bpf_map__fd(o->skel->maps.pages),
		.procs = bpf_map__fd(o->skel->maps.procs),
		.py_procs = bpf_map__fd(o->skel->maps.py_procs),
		.hs_procs = bpf_map__fd(o->skel->maps.hs_procs),
		.v8_procs = bpf_map__fd(o->skel->maps.v8_procs),
		.php_procs = bpf_map__fd(o->skel->maps.php_procs),
		.rb_procs = bpf_map__fd(o->skel->maps.rb_procs),
		.pl_procs = bpf_map__fd(o->skel->maps.pl_procs),
		.target_pids = bpf_map__fd(o->skel->maps.target_pids),
		.cpu_run = bpf_map__fd(o->skel->maps.cpu_run),
	};
}

int offcpu__prog_fd(const struct offcpu *o)
{
	return bpf_program__fd(o->prog);
}

void offcpu__free(struct offcpu *o)
{
	if (!o)
		return;
	if (o->skel)
		offcpu__detach(o);
	bpfprog__wake_fini(&o->wake);
	ring_buffer__free(o->rb);
	offcpu_bpf__destroy(o->skel);
	free(o);
}
