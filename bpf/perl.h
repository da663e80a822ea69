/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Perl's frames at a sample (docs/DESIGN-perl.md): after the native walk,
 * the main interpreter's stacks of contexts, from the current context
 * outwards, each sub's, eval's and require's, then the program's own code,
 * sent as a CV and a COP in two slots after the kernel frames (abi.h,
 * struct sfbpf_pl_proc), as Python's are (python.h: the slots' helpers are
 * its). Userspace names them and puts them where the native frames of the
 * ops loop stand. Include after python.h.
 *
 * Each thread runs its own interpreter under ithreads (the threads module):
 * the value of PL_thr_key its thread-specific data holds, where userspace
 * found that slot (cfg.thr_slot, from the thread pointer); else the first
 * interpreter, PL_curinterp, the main thread's, alone. The program's own
 * code (main::RUNTIME) is the first interpreter's outermost frame; an
 * ithread's outermost is the sub it was started with.
 *
 * Like python.h, the loop state lives in the per-CPU scratch value: one
 * bpf_loop() callback per step on 5.17+, a bounded loop on the chained form.
 */
#ifndef SFBPF_PERL_H
#define SFBPF_PERL_H

#define PL_SPAN_MASK (SFBPF_PL_CX_SPAN - 1)

_Static_assert((SFBPF_PL_CX_SPAN & PL_SPAN_MASK) == 0, "context span: power of two");

/* Settings of processes running perl (abi.h); sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32); /* tgid */
	__type(value, struct sfbpf_pl_proc);
} pl_procs SEC(".maps");

/* One sample's Perl walk: lives in the per-CPU scratch value. */
struct pl_walk {
	struct sfbpf_pl_proc cfg; /* a copy: the map entry may change under the walk */
	__u64 si; /* the stack of contexts being read */
	__u64 cxstack; /* its contexts */
	__u64 cop; /* the statement the next frame sent is at */
	__s32 cxix; /* the next context to read, -1: this stack is done */
	__u32 n; /* Perl frames sent */
	__u32 max; /* frames that fit */
	__u8 stop; /* enum sfbpf_pl_stop */
	__u8 running; /* the interpreter runs the program's own code (PL_phase) */
	__u8 pad[2];
	__u64 interp; /* the interpreter walked */
	__u8 buf[SFBPF_PL_CX_SPAN + 8]; /* one context's bytes, + slack for the verifier */
};

static __always_inline __u64 pl_buf_u64(const struct pl_walk *w, __u32 off)
{
	return *(const __u64 *)&w->buf[off & (PL_SPAN_MASK & ~7)];
}

/* The stack of contexts at w->si: its contexts and its top. 0, or -1 if unreadable. */
static __always_inline int pl_enter_stack(struct pl_walk *w)
{
	if (py_read_u64(w->si + w->cfg.si_cxstack, &w->cxstack) ||
	    bpf_probe_read_user(&w->cxix, sizeof(w->cxix), (const void *)(w->si + w->cfg.si_cxix)))
		return -1;
	return 0;
}

/* The cop_seq of the frame's statement (w->cop), 0 if none or unreadable. */
static __always_inline __u32 pl_cop_seq(struct pl_walk *w)
{
	__u32 seq;

	if (!w->cop ||
	    bpf_probe_read_user(&seq, sizeof(seq), (const void *)(w->cop + w->cfg.cop_seq)))
		return 0;
	return seq;
}

/*
 * A frame into the next two slots: slot 0's CV, its statement's cop_seq
 * (a sub's) and ENTRY, slot 1's COP, kind and stamp.
 */
static __always_inline void pl_send(struct pl_walk *w, __u64 *slots, __u64 cv, __u64 seq,
				    bool entry, __u64 kind, __u64 stamp)
{
	__u32 i = py_slot(2 * w->n);

	slots[i] = (cv & SFBPF_PL_COP_MASK) | (seq & SFBPF_PL_SEQ_MASK) << SFBPF_PL_SEQ_SHIFT |
		   SFBPF_PY_TAG | (entry ? SFBPF_PY_ENTRY : 0);
	i = py_slot(2 * w->n + 1);
	slots[i] = (w->cop & SFBPF_PL_COP_MASK) | stamp << 48 | kind << SFBPF_PL_KIND_SHIFT;
	w->n++;
}

/*
 * One context: a sub's, format's, eval's or require's sent, any other
 * passed (a loop, a block); past a stack's bottom, the stack it was pushed
 * from, or the program's own code at the end. Returns 0 to go on, 1 once
 * w->stop is set.
 */
static __always_inline long pl_frame_step(struct pl_walk *w, __u64 *slots)
{
	__u32 span = w->cfg.cx_span & PL_SPAN_MASK;
	__u64 cx, cv, body = 0, kind, main = 0;
	__u8 type, t;
	bool entry;
	__u32 i;

	if (w->n >= w->max) {
		w->stop = SFBPF_PL_STOP_DEPTH;
		return 1;
	}
	if (w->cxix < 0) {
		if (py_read_u64(w->si + w->cfg.si_prev, &w->si)) {
			w->stop = SFBPF_PL_STOP_READ;
			return 1;
		}
		if (!w->si) {
			/*
			 * The first interpreter's bottom is the program's own code,
			 * while it runs: compiled (a BEGIN block, a use) or ended (END,
			 * DESTROY), no run of the ops loop holds it.
			 */
			if (w->running &&
			    (!w->cfg.thr_slot ||
			     (!py_read_u64(w->cfg.curinterp, &main) && main == w->interp)))
				pl_send(w, slots, 0, 0, true, SFBPF_PL_KIND_MAIN, 0);
			w->stop = SFBPF_PL_STOP_DONE;
			return 1;
		}
		if (pl_enter_stack(w)) {
			w->stop = SFBPF_PL_STOP_READ;
			return 1;
		}
		return 0;
	}
	cx = w->cxstack + (__u64)w->cxix * w->cfg.cx_size;
	if (!span || bpf_probe_read_user(w->buf, span, (const void *)cx)) {
		w->stop = SFBPF_PL_STOP_READ;
		return 1;
	}
	w->cxix--;
	type = w->buf[w->cfg.cx_type & PL_SPAN_MASK];
	t = type & w->cfg.type_mask;
	if (t == w->cfg.t_sub || t == w->cfg.t_format) {
		cv = pl_buf_u64(w, w->cfg.cx_cv);
		if (!cv)
			return 0; /* being pushed: no sub yet */
		if (py_read_u64(cv, &body)) {
			w->stop = SFBPF_PL_STOP_READ;
			return 1;
		}
		/*
		 * Entered and at no statement of its own yet: the interpreter's is
		 * still the caller's. Sent with no COP: userspace takes the sub's first.
		 */
		if (!w->n && w->cop == pl_buf_u64(w, w->cfg.cx_oldcop))
			w->cop = 0;
		pl_send(w, slots, cv, pl_cop_seq(w),
			!pl_buf_u64(w, w->cfg.cx_retop) || (type & w->cfg.multicall),
			SFBPF_PL_KIND_SUB, sfbpf_pl_stamp(body));
	} else if (t == w->cfg.t_eval) {
		kind = (*(__u16 *)&w->buf[w->cfg.cx_u16 & (PL_SPAN_MASK & ~1)] >>
			w->cfg.old_op_shift) == w->cfg.op_require ?
			       SFBPF_PL_KIND_REQUIRE :
			       SFBPF_PL_KIND_EVAL;
		entry = !pl_buf_u64(w, w->cfg.cx_retop);
		/*
		 * An eval block with no op to return to is call_sv()'s G_EVAL (an
		 * ithread's start, an XS callback): one run of the ops loop holds
		 * it and the sub it calls, whose frame (the one sent last) is no
		 * run's first then.
		 */
		if (entry && (type & w->cfg.evalblock) && w->n) {
			i = py_slot(2 * (w->n - 1));
			slots[i] &= ~SFBPF_PY_ENTRY;
		}
		/* Its code is freed once it has run: the COP stamped by its cop_seq. */
		pl_send(w, slots, 0, 0, entry, kind, pl_cop_seq(w) & 0x3fff);
	} else {
		return 0;
	}
	/* The frame outside it is at the statement that called it. */
	w->cop = pl_buf_u64(w, w->cfg.cx_oldcop);
	return 0;
}

/* bpf_loop()'s context: a pointer on the stack, to the walk in the scratch value. */
struct pl_walk_ctx {
	struct pl_walk *w;
	__u64 *slots; /* the sample's first slot after the kernel frames */
};

static long pl_frame_cb(__u32 index, void *arg)
{
	struct pl_walk_ctx *c = arg;

	(void)index;
	return pl_frame_step(c->w, c->slots);
}

/*
 * The Perl frames of task's thread (tgid, tid) into slots[0 ..): at most max
 * of them (two slots each; max <= PY_PROG_FRAMES). Returns the number sent,
 * *flags told (SFBPF_SAMPLE_PERL); -1 for a process without Perl settings,
 * at the cost of one lookup. chained: kernels without bpf_loop() (a bounded
 * loop instead). Counts in cnt.
 */
static __always_inline int pl_walk(struct pl_walk *w, __u64 *slots, struct task_struct *task,
				   __u32 tgid, __u32 tid, __u32 max, __u8 *flags,
				   struct sfbpf_stats *cnt, bool chained)
{
	const struct sfbpf_pl_proc *cfg = bpf_map_lookup_elem(&pl_procs, &tgid);
	struct pl_walk_ctx ctx = { .w = w, .slots = slots };
	__u64 interp = 0;
	__u32 i, stop, phase = 0;

	if (!cfg || (cfg->start_ticks && cfg->start_ticks != unwind_start_ticks(task)))
		return -1;
	if (cfg->thr_slot) {
		/* This thread's interpreter: none, a thread that runs no Perl. */
		__u64 tp = py_pthread_self(task);

		if (!tp || py_read_u64(tp + cfg->thr_slot, &interp) || !interp)
			return 0;
	} else if (tid != tgid) {
		return 0;
	}
	cnt->v[SFBPF_STAT_PERL_SAMPLES]++;
	__builtin_memcpy(&w->cfg, cfg, sizeof(w->cfg));
	w->n = 0;
	w->max = max > PY_PROG_FRAMES ? PY_PROG_FRAMES : max;
	/* What stands when the steps run out first. */
	w->stop = SFBPF_PL_STOP_DEPTH;
	w->si = 0;
	if (!interp && py_read_u64(w->cfg.curinterp, &interp))
		w->stop = SFBPF_PL_STOP_READ;
	else if (!(w->interp = interp) ||
		 py_read_u64(interp + w->cfg.interp_curstackinfo, &w->si) ||
		 py_read_u64(interp + w->cfg.interp_curcop, &w->cop) || !w->si || !w->cop)
		w->stop = SFBPF_PL_STOP_IDLE;
	else if (pl_enter_stack(w))
		w->stop = SFBPF_PL_STOP_READ;
	else if (bpf_probe_read_user(&phase, sizeof(phase),
				     (const void *)(interp + w->cfg.interp_phase)))
		w->stop = SFBPF_PL_STOP_READ;
	else {
		w->running = phase == w->cfg.phase_run;
		/* Chained, the walk is a last link of its own (afterwalk.h): the same bound. */
		if (chained)
			for (i = 0; i < PY_FRAME_STEPS; i++) {
				if (pl_frame_step(w, slots))
					break;
			}
		else
			bpf_loop(PY_FRAME_STEPS, pl_frame_cb, &ctx, 0);
	}
	stop = w->stop;
	if (stop >= SFBPF_PL_STOP__COUNT)
		stop = SFBPF_PL_STOP_READ;
	stop += SFBPF_STAT_PERL_STOP_BASE;
	barrier_var(stop);
	if (stop < SFBPF_STAT__COUNT)
		cnt->v[stop]++;
	cnt->v[SFBPF_STAT_PERL_FRAMES] += w->n;
	if (w->n)
		*flags |= SFBPF_SAMPLE_PERL;
	return w->n > PY_PROG_FRAMES ? PY_PROG_FRAMES : w->n;
}

#endif /* SFBPF_PERL_H */
