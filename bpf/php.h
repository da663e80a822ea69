/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PHP's frames at a sample (docs/DESIGN-php.md): after the native walk, the
 * Zend VM's chain of execute_data, from the executor globals' current one
 * outwards, each frame of user code sent as its function and opline in two
 * slots after the kernel frames (abi.h, struct sfbpf_php_proc), as Python's
 * are (python.h: the slots' helpers are its). Userspace names them and puts
 * them where the native execute_ex frames stand. Include after python.h.
 *
 * An NTS build's executor globals are one per process, the main thread's:
 * its other threads (an extension's) run no PHP, and are not walked.
 *
 * Like python.h, the loop state lives in the per-CPU scratch value: one
 * bpf_loop() callback per step on 5.17+, a bounded loop on the chained form.
 */
#ifndef SFBPF_PHP_H
#define SFBPF_PHP_H

#define PHP_SPAN_MASK (SFBPF_PHP_ED_SPAN - 1)

_Static_assert((SFBPF_PHP_ED_SPAN & PHP_SPAN_MASK) == 0, "execute_data span: power of two");

/* Settings of processes running PHP (abi.h); sized by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32); /* tgid */
	__type(value, struct sfbpf_php_proc);
} php_procs SEC(".maps");

/* One sample's PHP walk: lives in the per-CPU scratch value. */
struct php_walk {
	struct sfbpf_php_proc cfg; /* a copy: the map entry may change under the walk */
	__u64 ed; /* the next execute_data to read */
	/* The current execute_data, and its opline from a register (0: none) */
	__u64 leaf_ed, leaf_opline;
	__u32 n; /* PHP frames sent */
	__u32 max; /* frames that fit */
	__u8 stop; /* enum sfbpf_php_stop */
	__u8 pad[7];
	__u8 buf[SFBPF_PHP_ED_SPAN + 8]; /* one execute_data's bytes, + slack for the verifier */
	__u8 fn[SFBPF_PHP_FN_SPAN + 8]; /* its function's first bytes */
};

#define PHP_FN_MASK (SFBPF_PHP_FN_SPAN - 1)

static __always_inline __u64 php_buf_u64(const struct php_walk *w, __u32 off)
{
	return *(const __u64 *)&w->buf[off & PHP_SPAN_MASK];
}

static __always_inline __u32 php_buf_u32(const struct php_walk *w, __u32 off)
{
	return *(const __u32 *)&w->buf[off & PHP_SPAN_MASK];
}

/*
 * One execute_data: its function's frame sent (user code: a function, a
 * script's body, eval'd code; an internal function), else passed (a frame
 * without one: a VM entry's dummy call frame). Returns 0 to go on, 1 once
 * w->stop is set.
 */
static __always_inline long php_frame_step(struct php_walk *w, __u64 *slots)
{
	__u64 ed = w->ed, func, entry, stamp, opline, name, file[2] = {}, str[2] = {};
	__u8 type;
	bool hashed;
	__u32 i;

	if (!ed) {
		w->stop = SFBPF_PHP_STOP_DONE;
		return 1;
	}
	if (w->n >= w->max) {
		w->stop = SFBPF_PHP_STOP_DEPTH;
		return 1;
	}
	if (bpf_probe_read_user(w->buf, SFBPF_PHP_ED_SPAN, (const void *)ed)) {
		w->stop = SFBPF_PHP_STOP_READ;
		return 1;
	}
	func = php_buf_u64(w, w->cfg.ed_func);
	if (func) {
		if (bpf_probe_read_user(w->fn, SFBPF_PHP_FN_SPAN, (const void *)func)) {
			w->stop = SFBPF_PHP_STOP_READ;
			return 1;
		}
		type = w->fn[w->cfg.fn_type & PHP_FN_MASK];
		if (type == w->cfg.user_function || type == w->cfg.eval_code ||
		    type == w->cfg.internal_function) {
			name = *(__u64 *)&w->fn[w->cfg.fn_name & PHP_FN_MASK];
			/*
			 * A file's code or a closure: its file and lines, its name's
			 * string (the file's, if none) too (abi.h).
			 */
			hashed = type != w->cfg.internal_function &&
				 (!name || (*(__u32 *)&w->fn[w->cfg.fn_flags & PHP_FN_MASK] &
					    w->cfg.acc_closure));
			if (hashed &&
			    (bpf_probe_read_user(file, sizeof(file),
						 (const void *)(func + w->cfg.fn_filename)) ||
			     bpf_probe_read_user(
				     str, sizeof(str),
				     (const void *)((name ? name : file[0]) + w->cfg.str_hash))))
				file[0] = file[1] = str[0] = str[1] = 0;
			stamp = sfbpf_php_stamp(
				php_stamp_key(name, file[0], file[1], str[0], str[1], hashed),
				*(__u64 *)&w->fn[w->cfg.fn_scope & PHP_FN_MASK]);
			entry = php_buf_u32(w, w->cfg.ed_call_info) & w->cfg.call_top ?
					SFBPF_PY_ENTRY :
					0;
			i = py_slot(2 * w->n);
			slots[i] = (func & SFBPF_PY_ADDR_MASK) | SFBPF_PY_TAG | entry;
			opline = php_buf_u64(w, w->cfg.ed_opline);
			if (ed == w->leaf_ed && w->leaf_opline)
				opline = w->leaf_opline;
			i = py_slot(2 * w->n + 1);
			slots[i] = (opline & SFBPF_PHP_OPLINE_MASK) | stamp << 48;
			w->n++;
		}
	}
	w->ed = php_buf_u64(w, w->cfg.ed_prev);
	return 0;
}

/* bpf_loop()'s context: a pointer on the stack, to the walk in the scratch value. */
struct php_walk_ctx {
	struct php_walk *w;
	__u64 *slots; /* the sample's first slot after the kernel frames */
};

static long php_frame_cb(__u32 index, void *arg)
{
	struct php_walk_ctx *c = arg;

	(void)index;
	return php_frame_step(c->w, c->slots);
}

/*
 * The innermost frame's opline where the VM's loop keeps it in a register
 * (struct sfbpf_php_proc): believed while the sample's user pc (leaf_pc) is
 * in the loop's code and its execute_data register holds the current one;
 * userspace checks it is one of the function's oplines. st: the user
 * walk's registers (NULL: none, off-CPU, where the thread is in a syscall).
 */
static __always_inline void php_leaf_opline(struct php_walk *w, const struct sfbpf_unwind_state *st,
					    __u64 leaf_pc)
{
	__u64 fp, ip;

	w->leaf_ed = w->ed;
	w->leaf_opline = 0;
	if (st && leaf_pc >= w->cfg.vm_lo && leaf_pc < w->cfg.vm_hi &&
	    unwind_reg(st, SFBPF_REG_OTHER, w->cfg.fp_regnum, true, &fp) && fp == w->ed &&
	    unwind_reg(st, SFBPF_REG_OTHER, w->cfg.ip_regnum, true, &ip))
		w->leaf_opline = ip;
}

/*
 * The PHP frames of task's thread (tgid, tid) into slots[0 ..): at most max
 * of them (two slots each; max <= PY_PROG_FRAMES). Returns the number sent,
 * *flags told (SFBPF_SAMPLE_PHP); -1 for a process without PHP settings, at
 * the cost of one lookup: its Python walk is next. chained: kernels without
 * bpf_loop() (a bounded loop instead). st and leaf_pc: the sample's user
 * registers and pc (php_leaf_opline()). Counts in cnt.
 */
static __always_inline int php_walk(struct php_walk *w, __u64 *slots, struct task_struct *task,
				    __u32 tgid, __u32 tid, __u32 max, __u8 *flags,
				    struct sfbpf_stats *cnt, bool chained,
				    const struct sfbpf_unwind_state *st, __u64 leaf_pc)
{
	const struct sfbpf_php_proc *cfg = bpf_map_lookup_elem(&php_procs, &tgid);
	struct php_walk_ctx ctx = { .w = w, .slots = slots };
	__u32 i, stop;

	if (!cfg || (cfg->start_ticks && cfg->start_ticks != unwind_start_ticks(task)))
		return -1;
	if (tid != tgid)
		return 0;
	cnt->v[SFBPF_STAT_PHP_SAMPLES]++;
	__builtin_memcpy(&w->cfg, cfg, sizeof(w->cfg));
	w->n = 0;
	w->max = max > PY_PROG_FRAMES ? PY_PROG_FRAMES : max;
	w->ed = 0;
	/* What stands when the steps run out first (internal frames between user ones). */
	w->stop = SFBPF_PHP_STOP_DEPTH;
	if (py_read_u64(w->cfg.current_execute_data, &w->ed))
		w->stop = SFBPF_PHP_STOP_READ;
	else if (!w->ed)
		w->stop = SFBPF_PHP_STOP_IDLE;
	if (w->stop == SFBPF_PHP_STOP_DEPTH) {
		php_leaf_opline(w, st, leaf_pc);
		if (chained)
			for (i = 0; i < PY_FRAME_STEPS; i++) {
				if (php_frame_step(w, slots))
					break;
			}
		else
			bpf_loop(PY_FRAME_STEPS, php_frame_cb, &ctx, 0);
	}
	stop = w->stop;
	if (stop >= SFBPF_PHP_STOP__COUNT)
		stop = SFBPF_PHP_STOP_READ;
	stop += SFBPF_STAT_PHP_STOP_BASE;
	barrier_var(stop);
	if (stop < SFBPF_STAT__COUNT)
		cnt->v[stop]++;
	cnt->v[SFBPF_STAT_PHP_FRAMES] += w->n;
	if (w->n)
		*flags |= SFBPF_SAMPLE_PHP;
	return w->n > PY_PROG_FRAMES ? PY_PROG_FRAMES : w->n;
}

#endif /* SFBPF_PHP_H */
