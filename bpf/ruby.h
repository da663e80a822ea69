/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ruby's frames at a sample (docs/DESIGN-ruby.md): after the native walk,
 * the sampled thread found among the VM's ractors' threads by its TID, and
 * its execution context's control frames read from the current one
 * outwards, each running an instruction sequence sent as its iseq and pc in
 * two slots after the kernel frames (abi.h, struct sfbpf_rb_proc), as
 * Python's are (python.h: the slots' helpers are its). Userspace names them
 * and puts them where the native frames of the VM's loop stand. Include
 * after python.h.
 *
 * A thread found is walked whether it holds its ractor's lock (the GVL) or
 * waits for it: where a thread waits is what an off-CPU profile asks.
 *
 * Like python.h, the loop state lives in the per-CPU scratch value: one
 * bpf_loop() callback per step on 5.17+, a bounded loop on the chained form.
 */
#ifndef SFBPF_RUBY_H
#define SFBPF_RUBY_H

#define RB_SPAN_MASK (SFBPF_RB_CFP_SPAN - 1)
/* Threads looked at per sample, over every ractor: a process's first ones. */
#define RB_SEARCH_STEPS 64
#define RB_NT_OWN 0xffff /* th_nt: the TID is in the thread itself */

_Static_assert((SFBPF_RB_CFP_SPAN & RB_SPAN_MASK) == 0, "control frame span: power of two");

/* Settings of processes running Ruby (abi.h); sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32); /* tgid */
	__type(value, struct sfbpf_rb_proc);
} rb_procs SEC(".maps");

/* One sample's Ruby walk: lives in the per-CPU scratch value. */
struct rb_walk {
	struct sfbpf_rb_proc cfg; /* a copy: the map entry may change under the walk */
	__u64 want; /* the sampled thread's TID in its PID namespace */
	__u64 rhead, rnode; /* the VM's ractor list, and the ractor's node in it */
	__u64 thead, tnode; /* that ractor's thread list, and the thread's node in it */
	__u64 cfp, end; /* the next control frame, and the end of the VM stack */
	__u32 n; /* Ruby frames sent (slot pairs: an owner's too) */
	__u32 max; /* frames that fit */
	__u32 last; /* the last frame sent (not an owner) */
	__u32 owners; /* owners sent */
	__u8 found; /* the thread was found: the steps read frames */
	__u8 stop; /* enum sfbpf_rb_stop */
	__u8 leader; /* the sampled thread leads its process */
	__u8 pad[5];
	__u8 buf[SFBPF_RB_CFP_SPAN + 8]; /* one control frame's bytes, + slack for the verifier */
};

static __always_inline __u64 rb_buf_u64(const struct rb_walk *w, __u32 off)
{
	return *(const __u64 *)&w->buf[off & (RB_SPAN_MASK & ~7)];
}

/* The thread list of the ractor whose VM-list node is w->rnode: w->thead, w->tnode. */
static __always_inline int rb_enter_ractor(struct rb_walk *w)
{
	w->thead = w->rnode - w->cfg.ractor_vmlr_node + w->cfg.ractor_threads_set;
	return py_read_u64(w->thead, &w->tnode);
}

/*
 * One step of the search of the ractors' threads. Returns 0 to go on, 1 once
 * found (w->found: w->cfp and w->end set) or not (w->stop).
 */
static __always_inline long rb_search_step(struct rb_walk *w)
{
	__u64 th, nt, ec, stack, size;
	__u32 tid = 0;

	if (w->tnode == w->thead) { /* this ractor's threads are done: the next one's */
		if (py_read_u64(w->rnode, &w->rnode))
			goto unreadable;
		if (w->rnode == w->rhead) {
			w->stop = SFBPF_RB_STOP_NO_THREAD;
			return 1;
		}
		if (rb_enter_ractor(w))
			goto unreadable;
		return 0;
	}
	th = w->tnode - w->cfg.th_lt_node;
	if (w->cfg.th_nt == RB_NT_OWN) {
		if (bpf_probe_read_user(&tid, sizeof(tid), (const void *)(th + w->cfg.tid)))
			goto unreadable;
	} else if (py_read_u64(th + w->cfg.th_nt, &nt) ||
		   (nt &&
		    bpf_probe_read_user(&tid, sizeof(tid), (const void *)(nt + w->cfg.tid)))) {
		goto unreadable;
	}
	/* A forked process's leader has a TID its parent's thread had (abi.h: leader_tid). */
	if (tid != w->want && !(w->leader && tid && tid == w->cfg.leader_tid)) {
		if (py_read_u64(w->tnode, &w->tnode))
			goto unreadable;
		return 0;
	}
	if (py_read_u64(th + w->cfg.th_ec, &ec) || !ec ||
	    py_read_u64(ec + w->cfg.ec_cfp, &w->cfp) ||
	    py_read_u64(ec + w->cfg.ec_vm_stack, &stack) ||
	    py_read_u64(ec + w->cfg.ec_vm_stack_size, &size))
		goto unreadable;
	w->end = stack + size * 8;
	w->found = 1;
	return 1;
unreadable:
	w->stop = SFBPF_RB_STOP_READ;
	return 1;
}

/*
 * The method entry in me, a frame's ep[-2]: me itself, or once the frame's
 * special variables are written ($~ by a regexp match), the entry their
 * imemo_svar holds (vm_svar's cref_or_me). The svar is collected once the
 * call returns, long before userspace reads it: the entry is what is sent.
 */
static __always_inline __u64 rb_frame_me(const struct rb_walk *w, __u64 me)
{
	__u64 flags, inner;

	if (!w->cfg.svar_mask || py_read_u64(me, &flags) ||
	    (flags & w->cfg.svar_mask) != w->cfg.svar_flags ||
	    py_read_u64(me + w->cfg.svar_me, &inner))
		return me;
	return inner;
}

/*
 * The method entry of a block's frame at ep (flags: ep[0]), as Ruby finds
 * it (rb_vm_frame_method_entry()): in the first env, outwards, that is a
 * method's local env or a define_method block's own. 0: none within
 * SFBPF_RB_ENV_LEVELS, or unreadable. Userspace checks it is a method
 * entry, and the block's.
 */
static __always_inline __u64 rb_block_me(const struct rb_walk *w, __u64 ep, __u64 flags)
{
	__u64 me = 0;
	__u32 k;

	for (k = 0; k < SFBPF_RB_ENV_LEVELS; k++) {
		if (flags & w->cfg.env_me) {
			if (py_read_u64(ep - w->cfg.method_entries, &me) || !me)
				return 0;
			return rb_frame_me(w, me);
		}
		if (py_read_u64(ep - w->cfg.env_prev, &ep))
			return 0;
		ep &= ~3ULL; /* GC_GUARDED_PTR_REF */
		if (!ep || py_read_u64(ep, &flags))
			return 0;
	}
	return 0;
}

/*
 * A C method's frame at ep, where userspace names them (owners): its method entry and a stamp of
 * the entry's definition into the next slot pair (SFBPF_RB_CFUNC). Unreadable: not sent, its native
 * frames stand.
 */
static __always_inline void rb_cfunc(struct rb_walk *w, __u64 *slots, __u64 ep)
{
	__u64 me, def;
	__u32 i;

	if (py_read_u64(ep - w->cfg.method_entries, &me) || !me ||
	    py_read_u64(me + w->cfg.me_def, &def) || !def)
		return;
	i = py_slot(2 * w->n);
	slots[i] = (me & SFBPF_PY_ADDR_MASK) | SFBPF_PY_TAG | SFBPF_RB_CFUNC;
	i = py_slot(2 * w->n + 1);
	slots[i] = sfbpf_rb_stamp(def) << 48;
	w->last = w->n;
	w->n++;
}

/*
 * One control frame: sent if it runs an iseq, or (with owners, where the
 * settings ask) if a C method's; passed otherwise (a C function's
 * VM_FRAME_FLAG_FINISH then marks the frame sent before it); a block's,
 * with owners, followed by its method entry (SFBPF_RT_OWNER). Returns 0 to
 * go on, 1 once w->stop is set.
 */
static __always_inline long rb_frame_step(struct rb_walk *w, __u64 *slots, bool owners)
{
	__u64 cfp = w->cfp, iseq, pc, ep, flags = 0, body = 0, magic, me = 0, owner = 0;
	__u32 i;

	if (cfp >= w->end || !cfp) {
		w->stop = SFBPF_RB_STOP_DONE;
		return 1;
	}
	if (w->n >= w->max) {
		w->stop = SFBPF_RB_STOP_DEPTH;
		return 1;
	}
	if (bpf_probe_read_user(w->buf, SFBPF_RB_CFP_SPAN, (const void *)cfp)) {
		w->stop = SFBPF_RB_STOP_READ;
		return 1;
	}
	pc = rb_buf_u64(w, w->cfg.cfp_pc);
	iseq = rb_buf_u64(w, w->cfg.cfp_iseq);
	ep = rb_buf_u64(w, w->cfg.cfp_ep);
	if (!ep || py_read_u64(ep, &flags)) {
		w->stop = SFBPF_RB_STOP_READ;
		return 1;
	}
	magic = flags & w->cfg.magic_mask;
	if (!iseq || magic == w->cfg.magic_cfunc || magic == w->cfg.magic_ifunc ||
	    magic == w->cfg.magic_dummy) {
		if ((flags & w->cfg.flag_finish) && w->n) {
			i = py_slot(2 * w->last);
			slots[i] |= SFBPF_PY_ENTRY;
		}
		if (owners && w->cfg.me_def && w->cfg.method_entries && magic == w->cfg.magic_cfunc)
			rb_cfunc(w, slots, ep);
	} else {
		if (py_read_u64(iseq + w->cfg.iseq_body, &body)) {
			w->stop = SFBPF_RB_STOP_READ;
			return 1;
		}
		/* A method's entry, where its owner is named: the iseq is its. */
		if (w->cfg.method_entries && magic == w->cfg.magic_method &&
		    !py_read_u64(ep - w->cfg.method_entries, &me) && me)
			iseq = (rb_frame_me(w, me) & SFBPF_PY_ADDR_MASK) | SFBPF_RB_METHOD;
		/* A block's owner: where a slot pair is left for it after the frame. */
		if (owners && w->cfg.method_entries && magic == w->cfg.magic_block &&
		    w->n + 1 < w->max)
			owner = rb_block_me(w, ep, flags);
		i = py_slot(2 * w->n);
		slots[i] = (iseq & SFBPF_PY_ADDR_MASK) | SFBPF_PY_TAG |
			   (flags & w->cfg.flag_finish ? SFBPF_PY_ENTRY : 0);
		i = py_slot(2 * w->n + 1);
		slots[i] = (pc & SFBPF_RB_PC_MASK) | sfbpf_rb_stamp(body) << 48;
		w->last = w->n;
		w->n++;
		if (owner) {
			i = py_slot(2 * w->n);
			slots[i] = (owner & SFBPF_PY_ADDR_MASK) | SFBPF_PY_TAG | SFBPF_RT_OWNER;
			i = py_slot(2 * w->n + 1);
			slots[i] = 0;
			w->n++;
			w->owners++;
		}
	}
	w->cfp = cfp + w->cfg.cfp_size;
	return 0;
}

/* bpf_loop()'s context: a pointer on the stack, to the walk in the scratch value. */
struct rb_walk_ctx {
	struct rb_walk *w;
	__u64 *slots; /* the sample's first slot after the kernel frames */
};

static long rb_search_cb(__u32 index, void *arg)
{
	struct rb_walk_ctx *c = arg;

	(void)index;
	return rb_search_step(c->w);
}

static long rb_frame_cb(__u32 index, void *arg)
{
	struct rb_walk_ctx *c = arg;

	(void)index;
	return rb_frame_step(c->w, c->slots, true);
}

/*
 * The Ruby frames of task's thread (tgid, tid) into slots[0 ..): at most max
 * of them (two slots each; max <= PY_PROG_FRAMES). Returns the number sent,
 * *flags told (SFBPF_SAMPLE_RUBY); -1 for a process without Ruby settings,
 * at the cost of one lookup. chained: kernels without bpf_loop() (bounded
 * loops instead). Counts in cnt.
 */
static __always_inline int rb_walk(struct rb_walk *w, __u64 *slots, struct task_struct *task,
				   __u32 tgid, __u32 max, __u8 *flags, struct sfbpf_stats *cnt,
				   bool chained)
{
	const struct sfbpf_rb_proc *cfg = bpf_map_lookup_elem(&rb_procs, &tgid);
	struct rb_walk_ctx ctx = { .w = w, .slots = slots };
	__u64 vm;
	__u32 i, stop;

	if (!cfg || (cfg->start_ticks && cfg->start_ticks != unwind_start_ticks(task)))
		return -1;
	cnt->v[SFBPF_STAT_RUBY_SAMPLES]++;
	__builtin_memcpy(&w->cfg, cfg, sizeof(w->cfg));
	w->n = 0;
	w->last = 0;
	w->owners = 0;
	w->max = max > PY_PROG_FRAMES ? PY_PROG_FRAMES : max;
	w->found = 0;
	w->want = py_ns_tid(task);
	w->leader = (__u32)BPF_CORE_READ(task, pid) == tgid;
	/* What stands when the steps run out first. */
	w->stop = SFBPF_RB_STOP_DEPTH;
	if (py_read_u64(w->cfg.vm_ptr, &vm) || !vm) {
		w->stop = SFBPF_RB_STOP_READ;
		goto out;
	}
	w->rhead = vm + w->cfg.vm_ractor_set;
	if (py_read_u64(w->rhead, &w->rnode)) {
		w->stop = SFBPF_RB_STOP_READ;
		goto out;
	}
	if (w->rnode == w->rhead) {
		w->stop = SFBPF_RB_STOP_NO_THREAD;
		goto out;
	}
	if (rb_enter_ractor(w)) {
		w->stop = SFBPF_RB_STOP_READ;
		goto out;
	}
	/* Chained, the walk is a last link of its own (afterwalk.h): the same bounds. */
	if (chained) {
		for (i = 0; i < RB_SEARCH_STEPS; i++) {
			if (rb_search_step(w))
				break;
		}
		if (w->found)
			for (i = 0; i < PY_FRAME_STEPS; i++) {
				if (rb_frame_step(w, slots, true))
					break;
			}
	} else {
		bpf_loop(RB_SEARCH_STEPS, rb_search_cb, &ctx, 0);
		if (w->found)
			bpf_loop(PY_FRAME_STEPS, rb_frame_cb, &ctx, 0);
	}
out:
	stop = w->stop;
	if (stop >= SFBPF_RB_STOP__COUNT)
		stop = SFBPF_RB_STOP_READ;
	stop += SFBPF_STAT_RUBY_STOP_BASE;
	barrier_var(stop);
	if (stop < SFBPF_STAT__COUNT)
		cnt->v[stop]++;
	cnt->v[SFBPF_STAT_RUBY_FRAMES] += w->n - w->owners;
	if (w->n)
		*flags |= SFBPF_SAMPLE_RUBY;
	return w->n > PY_PROG_FRAMES ? PY_PROG_FRAMES : w->n;
}

#endif /* SFBPF_RUBY_H */
