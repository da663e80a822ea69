/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPython's frames at a sample (docs/DESIGN-python.md): after the native
 * walk, the sampled thread's PyThreadState is found (a per-thread cache,
 * else the interpreters' thread lists), then its chain of frames is read
 * innermost first, each frame's code object and instruction sent as two
 * slots after the kernel frames (abi.h, SFBPF_PY_*). Userspace names them
 * and puts them where the native eval frames stand. Include after
 * vmlinux.h, bpf_helpers.h, bpf_core_read.h and abi.h.
 *
 * Why after the native walk and not inside it: unwind_frame() stays as it
 * is (processes without Python pay one hash lookup per sample and nothing
 * per frame), the verifier sees the two walks apart, and which native frame
 * runs which Python frames needs the symbol of the eval loop, which
 * userspace has. Both walks read a thread the sample has stopped, so they
 * see one state of it.
 *
 * Like unwind.h, all loop state lives in the per-CPU scratch value: one
 * bpf_loop() callback per step on 5.17+, bounded loops on the chained form.
 * Returns nothing: the outcome is in the walk state's stop and n.
 */
#ifndef SFBPF_PYTHON_H
#define SFBPF_PYTHON_H

#define PY_SPAN_MASK (SFBPF_PY_FRAME_SPAN - 1)
/*
 * Python frames a sample of this program holds (a power of two): a program
 * with smaller records defines it before including this file (off-CPU).
 * Its slots are indexed with PY_SLOT_MASK from the first Python slot,
 * whose index the caller bounds: the verifier then bounds every write.
 */
#ifndef PY_PROG_FRAMES
#define PY_PROG_FRAMES SFBPF_PY_MAX_FRAMES
#endif
#define PY_SLOT_MASK (2 * PY_PROG_FRAMES - 1)
/* Frame steps per walk: frames sent, plus the C-stack shims skipped. */
#define PY_FRAME_STEPS (PY_PROG_FRAMES + PY_PROG_FRAMES / 4)

_Static_assert((PY_PROG_FRAMES & (PY_PROG_FRAMES - 1)) == 0, "Python frames: power of two");
_Static_assert(PY_PROG_FRAMES <= SFBPF_PY_MAX_FRAMES, "more Python frames than a sample holds");

_Static_assert((SFBPF_PY_FRAME_SPAN & PY_SPAN_MASK) == 0, "frame span: power of two");

/* Settings of processes running CPython (abi.h); sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32); /* tgid */
	__type(value, struct sfbpf_py_proc);
} py_procs SEC(".maps");

/* A thread's PyThreadState, found once, checked at every use. */
struct py_thread {
	__u64 tstate;
	__u32 tgid; /* the process it was found in (TIDs are reused) */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* TID, as the initial PID namespace sees it */
	__type(value, struct py_thread);
} py_threads SEC(".maps");

/* One sample's Python walk: lives in the per-CPU scratch value. */
struct py_walk {
	struct sfbpf_py_proc cfg; /* a copy: the map entry may change under the walk */
	__u64 want; /* the thread's id as its thread states store it */
	__u64 interp; /* thread search: the interpreter whose list is walked */
	__u64 tstate; /* the search's cursor, then the thread's state */
	__u64 frame; /* the next frame to read */
	__u64 last_code, last_stamp; /* the code object read last, and its stamp */
	__u32 n; /* Python frames sent */
	__u32 max; /* frames that fit */
	__u8 stop; /* enum sfbpf_py_stop */
	__u8 found;
	__u8 pad[2];
	__u8 buf[SFBPF_PY_FRAME_SPAN + 8]; /* one frame's bytes, + slack for the verifier */
};

struct py_walk_ctx {
	struct py_walk *w;
	__u64 *slots; /* the sample's first Python slot */
};

/* A field of the frame read into w->buf (offsets are below SFBPF_PY_FRAME_SPAN). */
static __always_inline __u64 py_buf_u64(const struct py_walk *w, __u32 off)
{
	return *(const __u64 *)&w->buf[off & PY_SPAN_MASK];
}

static __always_inline __u8 py_buf_u8(const struct py_walk *w, __u32 off)
{
	return w->buf[off & PY_SPAN_MASK];
}

/*
 * Slot i of the Python frames (below 2 * w->max, checked by the caller),
 * bounded for the verifier: the compiler may test a copy of i, the mask
 * (kept by the barrier) bounds the one used.
 */
static __always_inline __u32 py_slot(__u32 i)
{
	barrier_var(i);
	return i & PY_SLOT_MASK;
}

static __always_inline int py_read_u64(__u64 addr, __u64 *v)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/* The task's TID in its own PID namespace: what CPython stores from 3.11. */
static __always_inline __u64 py_ns_tid(struct task_struct *task)
{
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	int nr = 0;

	bpf_core_read(&nr, sizeof(nr), &pid->numbers[level].nr);
	return (__u32)nr;
}

/* pthread_self() of the task: its thread pointer (3.9/3.10's thread_id). */
static __always_inline __u64 py_pthread_self(struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(task, thread.fsbase);
#else
	(void)task;
	return 0; /* AArch64: tpidr_el0 less the libc's TCB size, not known here */
#endif
}

/* The thread state at w->tstate is the sampled thread's. 0: yes, 1: no, -1: unreadable. */
static __always_inline int py_tstate_is(const struct py_walk *w, __u64 ts)
{
	__u64 id;

	if (py_read_u64(ts + w->cfg.tstate_tid, &id))
		return -1;
	return id == w->want ? 0 : 1;
}

/*
 * One step of the search of the interpreters' thread lists. Returns 0 to go
 * on, 1 once found (w->found) or not (w->stop).
 */
static __always_inline long py_search_step(struct py_walk *w)
{
	__u64 ts = w->tstate;
	int r;

	if (!ts) { /* this interpreter's list is done: the next one's */
		if (!w->interp || py_read_u64(w->interp + w->cfg.interp_next, &w->interp)) {
			w->stop = SFBPF_PY_STOP_NO_THREAD;
			return 1;
		}
		if (w->interp && py_read_u64(w->interp + w->cfg.interp_threads_head, &w->tstate)) {
			w->stop = SFBPF_PY_STOP_READ;
			return 1;
		}
		if (!w->interp) {
			w->stop = SFBPF_PY_STOP_NO_THREAD;
			return 1;
		}
		return 0;
	}
	r = py_tstate_is(w, ts);
	if (r < 0) {
		w->stop = SFBPF_PY_STOP_READ;
		return 1;
	}
	if (!r) {
		w->found = 1;
		return 1;
	}
	if (py_read_u64(ts + w->cfg.tstate_next, &w->tstate)) {
		w->stop = SFBPF_PY_STOP_READ;
		return 1;
	}
	return 0;
}

static long py_search_cb(__u32 index, void *arg)
{
	struct py_walk_ctx *c = arg;

	(void)index;
	return py_search_step(c->w);
}

/*
 * One frame: sent (code object, instruction, stamp), or skipped (a C-stack
 * shim, which marks the frame before it as its eval call's outermost).
 * Returns 0 to go on, 1 once w->stop is set.
 */
static __always_inline long py_frame_step(struct py_walk *w, __u64 *slots)
{
	const struct sfbpf_py_proc *c = &w->cfg;
	__u64 f = w->frame, code, ptr, stamp, entry;
	__u32 span = c->frame_span, n = w->n;
	__s64 lasti;

	if (!f) {
		w->stop = SFBPF_PY_STOP_DONE;
		return 1;
	}
	if (n >= w->max || n >= PY_PROG_FRAMES) {
		w->stop = SFBPF_PY_STOP_DEPTH;
		return 1;
	}
	if (span > SFBPF_PY_FRAME_SPAN || span < 8 ||
	    bpf_probe_read_user(w->buf, span & (2 * SFBPF_PY_FRAME_SPAN - 1), (const void *)f)) {
		w->stop = SFBPF_PY_STOP_READ;
		return 1;
	}
	w->frame = py_buf_u64(w, c->frame_previous);
	if (c->owner_cstack != 0xff && py_buf_u8(w, c->frame_owner) == c->owner_cstack) {
		/* The eval call that pushed this shim runs the frames just sent. */
		if (n)
			slots[py_slot(2 * (n - 1))] |= SFBPF_PY_ENTRY;
		return 0;
	}
	code = py_buf_u64(w, c->frame_code);
	if (c->instr == SFBPF_PY_INSTR_PTR) {
		ptr = py_buf_u64(w, c->frame_instr);
		lasti = (__s64)(ptr - (code + c->code_adaptive));
		/* 3.11 marks each eval call's outermost frame itself. */
		entry = c->frame_is_entry != SFBPF_PY_NO_FIELD && py_buf_u8(w, c->frame_is_entry);
	} else {
		lasti = (__s32)py_buf_u64(w, c->frame_instr);
		if (c->instr == SFBPF_PY_LASTI_UNITS)
			lasti *= 2;
		entry = 1; /* before 3.11 every frame has an eval call of its own */
	}
	/*
	 * Not started yet (its first instruction not run): Python's own
	 * tracebacks leave it out, but its eval call already runs (a frame
	 * is linked into the chain by the eval loop itself): sent at its
	 * start, so that its call's native frame finds it. Garbage skipped.
	 */
	if (lasti > 0x7fffffff || lasti < -2)
		return 0;
	if (lasti < 0)
		lasti = 0;
	/* Recursion runs one code object frame after frame: its stamp read once. */
	if (code == w->last_code) {
		stamp = w->last_stamp;
	} else if (py_read_u64(code + c->code_stamp, &stamp)) {
		w->stop = SFBPF_PY_STOP_READ;
		return 1;
	} else {
		w->last_code = code;
		w->last_stamp = stamp;
	}
	slots[py_slot(2 * n)] =
		(code & SFBPF_PY_ADDR_MASK) | SFBPF_PY_TAG | (entry ? SFBPF_PY_ENTRY : 0);
	slots[py_slot(2 * n + 1)] = stamp << 32 | (__u32)lasti;
	w->n = n + 1;
	return 0;
}

static long py_frame_cb(__u32 index, void *arg)
{
	struct py_walk_ctx *c = arg;

	(void)index;
	return py_frame_step(c->w, c->slots);
}

/*
 * The Python frames of task's thread (tgid, tid) into slots[0 ..): at most
 * max of them (two slots each; max <= PY_PROG_FRAMES). Returns the number
 * sent; with a process without Python settings, 0 at the cost of one
 * lookup. chained: kernels without bpf_loop() (bounded loops instead).
 * Counts in cnt.
 */
static __always_inline __u32 py_walk(struct py_walk *w, __u64 *slots, struct task_struct *task,
				     __u32 tgid, __u32 tid, __u32 max, struct sfbpf_stats *cnt,
				     bool chained)
{
	struct py_walk_ctx ctx = { .w = w, .slots = slots };
	const struct sfbpf_py_proc *cfg = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_thread *cached, fresh = {};
	__u64 f = 0;
	__u32 i, stop;

	if (!cfg || (cfg->start_ticks && cfg->start_ticks != unwind_start_ticks(task)))
		return 0;
	cnt->v[SFBPF_STAT_PY_SAMPLES]++;
	__builtin_memcpy(&w->cfg, cfg, sizeof(w->cfg));
	w->want = w->cfg.tid_kind == SFBPF_PY_TID_NATIVE ? py_ns_tid(task) : py_pthread_self(task);
	w->stop = SFBPF_PY_STOP_NO_THREAD;
	w->found = 0;
	w->n = 0;
	w->last_code = 0;
	w->max = max > PY_PROG_FRAMES ? PY_PROG_FRAMES : max;

	cached = bpf_map_lookup_elem(&py_threads, &tid);
	if (cached && cached->tgid == tgid && !py_tstate_is(w, cached->tstate)) {
		w->tstate = cached->tstate;
		w->found = 1;
	} else if (w->want) {
		w->interp = 0;
		w->tstate = 0;
		if (py_read_u64(w->cfg.runtime + w->cfg.runtime_interp_head, &w->interp) ||
		    !w->interp || py_read_u64(w->interp + w->cfg.interp_threads_head, &w->tstate)) {
			w->interp = 0;
			w->tstate = 0;
		}
		if (chained) {
			for (i = 0; i < SFBPF_PY_THREAD_STEPS; i++)
				if (py_search_step(w))
					break;
		} else {
			bpf_loop(SFBPF_PY_THREAD_STEPS, py_search_cb, &ctx, 0);
		}
		if (w->found) {
			fresh.tstate = w->tstate;
			fresh.tgid = tgid;
			bpf_map_update_elem(&py_threads, &tid, &fresh, BPF_ANY);
		}
	}
	if (w->found) {
		if (py_read_u64(w->tstate + w->cfg.tstate_frame, &f) ||
		    (f && w->cfg.cframe_frame != SFBPF_PY_NO_FIELD &&
		     py_read_u64(f + w->cfg.cframe_frame, &f))) {
			w->stop = SFBPF_PY_STOP_READ;
		} else {
			w->frame = f;
			w->stop = SFBPF_PY_STOP_DEPTH;
			if (chained) {
				for (i = 0; i < PY_FRAME_STEPS; i++)
					if (py_frame_step(w, slots))
						break;
			} else {
				bpf_loop(PY_FRAME_STEPS, py_frame_cb, &ctx, 0);
			}
		}
	}
	stop = w->stop;
	if (stop >= SFBPF_PY_STOP__COUNT)
		stop = SFBPF_PY_STOP_READ;
	stop += SFBPF_STAT_PY_STOP_BASE;
	barrier_var(stop);
	if (stop < SFBPF_STAT__COUNT)
		cnt->v[stop]++;
	cnt->v[SFBPF_STAT_PY_FRAMES] += w->n;
	return w->n > PY_PROG_FRAMES ? PY_PROG_FRAMES : w->n;
}

#endif /* SFBPF_PYTHON_H */
