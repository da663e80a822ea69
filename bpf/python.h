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
 * Then each code object of the sample not described yet (the py_codes LRU
 * hash, behind a per-CPU filter) is described to userspace: its names, first
 * line and line table, in the ring buffer before the sample (struct
 * sfbpf_py_code), at most SFBPF_PY_DESCRIBE_MAX a sample, innermost first:
 * a module's body is freed as soon as its import ends, before userspace
 * reads the sample, so its name is taken while the frame runs it.
 *
 * Like unwind.h, all loop state lives in the per-CPU scratch value: one
 * bpf_loop() callback per step on 5.17+, bounded loops on the chained form.
 * Returns nothing: the outcome is in the walk state's stop and n. The
 * program defines PY_RING, the ring its samples go to, or has `events`.
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

#ifndef PY_RING
#define PY_RING events
#endif
/* Per-CPU filter of code objects described: a hit costs no map lookup. */
#define PY_SEEN_SLOTS 512

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

/*
 * Code objects described to userspace, per attach generation: a hit means
 * userspace holds the description. LRU: a code object evicted is described
 * again when next met (its description arrives twice, harmlessly).
 */
struct py_code_key {
	__u64 code;
	__u32 stamp;
	__u32 gen;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct py_code_key);
	__type(value, __u32);
} py_codes SEC(".maps");

/* The description being built, and the filter in front of py_codes. */
struct py_desc {
	__u64 seen[PY_SEEN_SLOTS]; /* py_code_hash() of keys found in or added to py_codes */
	struct sfbpf_py_code rec;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_desc);
} py_desc SEC(".maps");

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
	__u32 tgid;
	__u32 nr_new, later, failed; /* code objects to describe, left for later, failed */
	__u64 desc_prev; /* the code object the describe pass looked at last */
	struct py_code_key fresh[SFBPF_PY_DESCRIBE_MAX]; /* the ones to describe */
	__u8 stop; /* enum sfbpf_py_stop */
	__u8 found;
	__u8 pad[2];
	__u8 buf[SFBPF_PY_FRAME_SPAN + 8]; /* one frame's bytes, + slack for the verifier */
};

struct py_walk_ctx {
	struct py_walk *w;
	__u64 *slots; /* the sample's first Python slot */
	struct py_desc *d;
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
	if (c->owner_cstack != 0xff && py_buf_u8(w, c->frame_owner) >= c->owner_cstack) {
		/* The eval call that pushed this shim runs the frames just sent. */
		if (n)
			slots[py_slot(2 * (n - 1))] |= SFBPF_PY_ENTRY;
		return 0;
	}
	code = py_buf_u64(w, c->frame_code) & ~SFBPF_PY_REF_TAG_BITS;
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
 * n (1 to cap, a power of two) as it is, in a form every verifier bounds at
 * the helper call that takes it: 6.1's loses the bounds of a value the
 * compiler spills and reloads between the test and the call.
 */
static __always_inline __u32 py_bound(__u32 n, __u32 cap)
{
	barrier_var(n);
	return ((n - 1) & (cap - 1)) + 1;
}

/*
 * The characters of str object obj into dst (cap bytes at most, whole
 * characters): *len bytes of *kind bytes each; kind 0: not a compact str
 * (userspace reads it from the process then).
 */
static __always_inline void py_str(const struct sfbpf_py_proc *c, __u64 obj, __u8 *dst, __u32 cap,
				   __u16 *len, __u8 *kind)
{
	__u32 state, k, n;
	__s64 chars;

	*len = 0;
	*kind = 0;
	if (py_read_u64(obj + c->str_length, (__u64 *)&chars) ||
	    bpf_probe_read_user(&state, sizeof(state), (const void *)(obj + c->str_state)))
		return;
	k = (state >> 2) & 7;
	if (!(state & (1u << 5)) || (k != 1 && k != 2 && k != 4) || chars < 0)
		return;
	n = chars > cap ? cap : (__u32)chars * k;
	if (n > cap)
		n = cap;
	n &= ~(k - 1); /* whole characters */
	obj += (state & (1u << 6)) ? c->str_ascii_data : c->str_compact_data;
	if (n && bpf_probe_read_user(dst, py_bound(n, cap), (const void *)obj))
		return;
	*len = n;
	*kind = k;
}

/* Code object (code, stamp) described to userspace, before the sample. 0 or -1. */
static __always_inline int py_describe_code(struct py_walk *w, struct py_desc *d, __u64 code,
					    __u32 stamp)
{
	const struct sfbpf_py_proc *c = &w->cfg;
	struct sfbpf_py_code *r = &d->rec;
	__u64 tab, name, file;
	__s64 size;
	__u32 n;

	/* Still the code object the frame ran: the stamp is its line table's. */
	if (py_read_u64(code + c->code_stamp, &tab) || (__u32)tab != stamp ||
	    py_read_u64(code + c->ob_type, &r->type) || py_read_u64(code + c->code_name, &name) ||
	    py_read_u64(code + c->code_filename, &file) ||
	    bpf_probe_read_user(&r->firstlineno, sizeof(r->firstlineno),
				(const void *)(code + c->code_firstlineno)) ||
	    py_read_u64(tab + c->bytes_size, (__u64 *)&size) || size < 0)
		return -1;
	r->magic = SFBPF_PY_CODE_MAGIC;
	r->code = code;
	r->stamp = stamp;
	r->pid = w->tgid;
	r->gen = c->gen;
	r->table_len = size > 0x7fffffff ? 0x7fffffff : (__u32)size;
	py_str(c, name, r->name, SFBPF_PY_NAME_BYTES, &r->name_len, &r->name_kind);
	py_str(c, file, r->file, SFBPF_PY_FILE_BYTES, &r->file_len, &r->file_kind);
	n = r->table_len > SFBPF_PY_TABLE_BYTES ? SFBPF_PY_TABLE_BYTES : r->table_len;
	if (n) {
		n = py_bound(n, SFBPF_PY_TABLE_BYTES);
		if (bpf_probe_read_user(r->table, n, (const void *)(tab + c->bytes_data)))
			return -1;
	}
	/* The sample after it wakes the reader, as its ring's rule says. */
	if (bpf_ringbuf_output(&PY_RING, r,
			       SFBPF_PY_CODE_HDR_SIZE + (n ? py_bound(n, SFBPF_PY_TABLE_BYTES) : 0),
			       BPF_RB_NO_WAKEUP))
		return -1;
	return 0;
}

static __always_inline __u64 py_code_hash(__u64 code, __u32 stamp, __u32 gen)
{
	__u64 h = (code ^ ((__u64)stamp << 32) ^ gen) * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 31);
}

/*
 * Frame i's code object: noted in w->fresh unless userspace has it (the
 * filter, then py_codes). 0 to go on, 1 past the frames. The descriptions
 * are made after this pass: the verifier sees their reads once per
 * description, not once per frame.
 */
static __always_inline long py_scan_step(struct py_walk *w, struct py_desc *d, __u64 *slots,
					 __u32 i)
{
	struct py_code_key key = {};
	__u64 h;
	__u32 k;

	if (i >= w->n || i >= PY_PROG_FRAMES)
		return 1;
	key.code = slots[py_slot(2 * i)] & SFBPF_PY_ADDR_MASK;
	key.stamp = slots[py_slot(2 * i + 1)] >> 32;
	key.gen = w->cfg.gen;
	if (key.code == w->desc_prev)
		return 0;
	w->desc_prev = key.code;
	h = py_code_hash(key.code, key.stamp, key.gen);
	k = h & (PY_SEEN_SLOTS - 1);
	if (d->seen[k] == h)
		return 0;
	if (bpf_map_lookup_elem(&py_codes, &key)) {
		d->seen[k & (PY_SEEN_SLOTS - 1)] = h;
		return 0;
	}
	k = w->nr_new;
	if (k >= SFBPF_PY_DESCRIBE_MAX) {
		w->later++;
		return 0;
	}
	w->nr_new = k + 1;
	barrier_var(k);
	w->fresh[k & (SFBPF_PY_DESCRIBE_MAX - 1)] = key;
	return 0;
}

static long py_scan_cb(__u32 index, void *arg)
{
	struct py_walk_ctx *c = arg;

	return py_scan_step(c->w, c->d, c->slots, index);
}

/* The j-th code object noted by the scan, described and remembered. 0 to go on, 1 past them. */
static __always_inline long py_describe_step(struct py_walk *w, struct py_desc *d, __u32 j)
{
	struct py_code_key key;
	__u32 one = 1;
	__u64 h;

	if (j >= w->nr_new || j >= SFBPF_PY_DESCRIBE_MAX)
		return 1;
	barrier_var(j); /* the mask bounds the copy used, not only the one tested */
	key = w->fresh[j & (SFBPF_PY_DESCRIBE_MAX - 1)];
	if (py_describe_code(w, d, key.code, key.stamp)) {
		w->failed++;
		return 0;
	}
	bpf_map_update_elem(&py_codes, &key, &one, BPF_ANY);
	h = py_code_hash(key.code, key.stamp, key.gen);
	d->seen[h & (PY_SEEN_SLOTS - 1)] = h;
	return 0;
}

static long py_describe_cb(__u32 index, void *arg)
{
	struct py_walk_ctx *c = arg;

	return py_describe_step(c->w, c->d, index);
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
	__u32 i, stop, zero = 0;

	if (!cfg || (cfg->start_ticks && cfg->start_ticks != unwind_start_ticks(task)))
		return 0;
	cnt->v[SFBPF_STAT_PY_SAMPLES]++;
	__builtin_memcpy(&w->cfg, cfg, sizeof(w->cfg));
	w->want = w->cfg.tid_kind == SFBPF_PY_TID_NATIVE ? py_ns_tid(task) : py_pthread_self(task);
	w->stop = SFBPF_PY_STOP_NO_THREAD;
	w->found = 0;
	w->n = 0;
	w->last_code = 0;
	w->tgid = tgid;
	w->nr_new = w->later = w->failed = 0;
	w->desc_prev = 0;
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
	ctx.d = bpf_map_lookup_elem(&py_desc, &zero);
	if (ctx.d && w->n && w->cfg.describe) {
		if (chained) {
			for (i = 0; i < PY_PROG_FRAMES; i++)
				if (py_scan_step(w, ctx.d, slots, i))
					break;
			for (i = 0; i < SFBPF_PY_DESCRIBE_MAX; i++)
				if (py_describe_step(w, ctx.d, i))
					break;
		} else {
			bpf_loop(PY_PROG_FRAMES, py_scan_cb, &ctx, 0);
			bpf_loop(SFBPF_PY_DESCRIBE_MAX, py_describe_cb, &ctx, 0);
		}
		cnt->v[SFBPF_STAT_PY_DESCRIBED] += w->nr_new - w->failed;
		cnt->v[SFBPF_STAT_PY_DESCRIBE_LATER] += w->later;
		cnt->v[SFBPF_STAT_PY_DESCRIBE_FAILED] += w->failed;
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
