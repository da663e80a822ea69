/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * V8's JavaScript frames in the native walk (docs/DESIGN-v8.md, "The BPF
 * walk"). V8 keeps frame pointers in every frame it builds (interpreter,
 * baseline and optimised code, builtins, entry and exit frames), so its
 * frames step by fp as any code without a table; what the step adds is the
 * frame's identity, read from V8's fixed frame slots (abi.h, struct
 * sfbpf_v8_proc): a JavaScript frame's slot under fp holds its context (a
 * tagged pointer) where V8's own frames hold a marker (a Smi); the slot
 * below it its JSFunction, whose SharedFunctionInfo names it; an
 * interpreted frame's bytecode array and offset lie further down. The
 * frame goes to userspace as identity, never as a name (abi.h: SFBPF_V8_*).
 *
 * A SharedFunctionInfo is read while its frame runs: the JSFunction on the
 * stack may be a young object a scavenge moves at any time, the function's
 * shared info is old and moves only when the collector compacts its page.
 * Userspace reads its names later and checks it is still one (its map's
 * type); an optimised frame's code is checked against the function the walk
 * saw (the check bits). Processes without settings pay one hash lookup a
 * sample.
 */
#ifndef SFBPF_V8_H
#define SFBPF_V8_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* sized by the loader */
	__type(key, __u32); /* tgid */
	__type(value, struct sfbpf_v8_proc);
} v8_procs SEC(".maps");

/*
 * The settings of the process walked, or NULL: none, or an earlier
 * process's. Looked up once a sample: a copy in the state serves its frames.
 */
static __always_inline const struct sfbpf_v8_proc *v8_proc(struct sfbpf_unwind_state *st,
							   const struct sfbpf_proc *proc)
{
	__u32 tgid = st->tgid;
	const struct sfbpf_v8_proc *v8;

	if (!st->v8_looked) {
		st->v8_looked = 1;
		v8 = bpf_map_lookup_elem(&v8_procs, &tgid);
		if (v8 && v8->start_ticks == proc->start_ticks) {
			st->v8 = *v8;
			st->v8_looked = 2;
		}
	}
	return st->v8_looked == 2 ? &st->v8 : NULL;
}

/* Whether addr is V8's code: 1, its builtins; 2, its JIT code; 0, neither. */
static __always_inline int v8_owns(const struct sfbpf_v8_proc *v8, __u64 addr)
{
	if ((addr >= v8->builtins[0].lo && addr < v8->builtins[0].hi) ||
	    (addr >= v8->builtins[1].lo && addr < v8->builtins[1].hi))
		return 1;
	return addr >= v8->jit.lo && addr < v8->jit.hi ? 2 : 0;
}

/* Whether addr, in no mapping with a table (idx: its mapping, or -1), is V8's JIT code. */
static __always_inline bool v8_code(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc,
				    int idx, __u64 addr)
{
	const struct sfbpf_v8_proc *v8;

	if (idx >= 0 && proc->maps[idx & (SFBPF_MAX_MAPPINGS - 1)].obj != SFBPF_OBJ_NONE)
		return false;
	v8 = v8_proc(st, proc);
	return v8 && v8_owns(v8, addr);
}

/* Whether st->pc's frame is V8's: its builtins (a mapping with a table) or JIT code. */
static __always_inline bool v8_wanted(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc)
{
	const struct sfbpf_v8_proc *v8 = v8_proc(st, proc);

	return v8 && v8_owns(v8, st->exact ? st->pc : st->pc - 1);
}

/* The instance type of the heap object at tagged pointer p, or -1: unreadable, no object. */
static __always_inline int v8_type(const struct sfbpf_v8_proc *v8, __u64 p, __u64 *scratch)
{
	__u16 type;

	if ((p & 3) != 1 || bpf_probe_read_user(scratch, 8, (void *)(p - 1)) ||
	    (*scratch & 3) != 1 ||
	    bpf_probe_read_user(&type, 2, (void *)(*scratch - 1 + v8->map_type)))
		return -1;
	return type;
}

/*
 * The identity of the frame at st->fp, whose code at st->pc is V8's (kind: 1
 * builtins, 2 JIT code): abi.h's SFBPF_V8_* forms, or the pc itself (V8's
 * own frames, a frame whose slots do not read as a function's).
 */
static __always_inline __u64 v8_ident(struct sfbpf_unwind_state *st, const struct sfbpf_v8_proc *v8,
				      int kind, bool topmost)
{
	__u64 fp = st->fp, *t = st->tmp, sfi, off = SFBPF_V8_OFF_NONE;
	__s64 smi;

	/* A leaf whose frame is not built yet: its slots are below sp. */
	if (!fp || (fp & 7) || fp < st->sp || fp - st->sp > UNWIND_FP_MAX_GAP ||
	    (topmost && fp + v8->fp_function < st->sp))
		goto other;
	/*
	 * The lowest slot first: the window extends upwards from a miss. An
	 * optimised leaf's frame may end above the bytecode slots (a small
	 * function's pushes nothing past its function and argument count).
	 */
	t[2] = 0;
	t[3] = 0;
	if (!(topmost && fp + v8->fp_bytecode_offset < st->sp) &&
	    (unwind_read(st, fp + v8->fp_bytecode_offset, &t[2], 1) ||
	     unwind_read(st, fp + v8->fp_bytecode_array, &t[3], 1)))
		goto unread;
	if (unwind_read(st, fp + v8->fp_function, &t[4], 1) ||
	    unwind_read(st, fp + v8->fp_context, &t[5], 1))
		goto unread;
	/* A Smi marker: one of V8's own frames (entry, exit, stub, internal). */
	if (!(t[5] & 1) || (t[4] & 3) != 1)
		goto other;
	if (bpf_probe_read_user(&sfi, 8, (void *)(t[4] - 1 + v8->function_shared)) ||
	    (sfi & 3) != 1)
		goto unread;
	if (v8_type(v8, t[3], &t[6]) != v8->bytecode_array_type) {
		/* A builtin's own frame (Array.prototype.sort's): its pc names it. */
		if (kind == 1)
			goto other;
		st->v8_optimized++;
		return SFBPF_V8_CODE | sfbpf_v8_check(sfi) << SFBPF_V8_CHECK_SHIFT |
		       (st->pc & SFBPF_V8_PC_MASK);
	}
	if (kind == 1) {
		/* The interpreter: the offset as a Smi (upper half), past the array's header. */
		smi = (__s64)t[2] >> 32;
		if (!(t[2] & 0xffffffffULL) && smi >= v8->bytecode_header &&
		    smi - v8->bytecode_header < (__s64)SFBPF_V8_OFF_NONE)
			off = smi - v8->bytecode_header;
		/*
		 * A leaf in a bytecode handler: the live offset is in the
		 * interpreter's register while its array register still
		 * holds this frame's array (a handler may have reused them).
		 */
		if (topmost && v8->reg_bytecode_array != 0xff &&
		    unwind_reg(st, SFBPF_REG_OTHER, v8->reg_bytecode_array, true, &t[6]) &&
		    t[6] == t[3] &&
		    unwind_reg(st, SFBPF_REG_OTHER, v8->reg_bytecode_offset, true, &t[7]) &&
		    t[7] >= v8->bytecode_header && t[7] - v8->bytecode_header < SFBPF_V8_OFF_NONE)
			off = t[7] - v8->bytecode_header;
		st->v8_interpreted++;
	} else {
		/*
		 * JIT code with the array: baseline code (its pc has the
		 * offset), or optimised code entered in this very frame (OSR),
		 * which keeps the frame's slots and may hold functions inlined
		 * in it. Only the code at pc tells: its pc, the function and
		 * array in the sample's words beside it.
		 */
		st->v8_baseline++;
		smi = st->v8_nwords;
		if (smi < SFBPF_V8_WORDS_MAX) {
			st->v8_words[smi & (SFBPF_V8_WORDS_MAX - 1)][0] = sfi;
			st->v8_words[smi & (SFBPF_V8_WORDS_MAX - 1)][1] = t[3];
			st->v8_nwords = smi + 1;
			return SFBPF_V8_JIT | (__u64)smi << SFBPF_V8_CHECK_SHIFT |
			       (st->pc & SFBPF_V8_PC_MASK);
		}
	}
	return SFBPF_V8_JS | off << SFBPF_V8_OFF_SHIFT | ((sfi >> 3) & SFBPF_V8_SFI_MASK);
unread:
	st->v8_unread++;
	return st->pc;
other:
	st->v8_other++;
	return st->pc;
}

#if defined(__TARGET_ARCH_x86)
/*
 * Where a JIT leaf's return address is when its frame is not built, from
 * the 48 bytes c around its pc (c[16] at pc): sp, sp + 8, or 0 (built).
 */
static __always_inline __u64 v8_edge(const __u8 *c, __u64 sp)
{
	int i;

	if (c[15] == 0x55 && c[16] == 0x48 && c[17] == 0x89 && c[18] == 0xe5)
		return sp + 8;
	if (c[13] == 0x48 && c[14] == 0x8b && c[15] == 0xe5 && c[16] == 0x5d)
		return sp + 8;
	for (i = 0; i < 26; i++)
		if (c[16 + i] == 0x55 && c[17 + i] == 0x48 && c[18 + i] == 0x89 &&
		    c[19 + i] == 0xe5)
			return sp;
	for (i = 0; i < 13; i++)
		if (c[i] == 0x48 && c[i + 1] == 0x8b && c[i + 2] == 0xe5 && c[i + 3] == 0x5d)
			return sp;
	return 0;
}
#endif

/*
 * The step of the frame at st->pc, the leaf if topmost: its identity into
 * st->rt_ip, its caller (the frame-pointer step) into st->next;
 * RUNTIME_NOT_MINE without settings or outside V8's code.
 */
static __always_inline int v8_frame(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc,
				    bool topmost)
{
	const struct sfbpf_v8_proc *v8 = v8_proc(st, proc);
	bool switched = false;
	__u64 at = 0;
	int kind;

	(void)at;
	if (!v8)
		return RUNTIME_NOT_MINE;
	kind = v8_owns(v8, st->exact ? st->pc : st->pc - 1);
	if (!kind)
		return RUNTIME_NOT_MINE;
#if defined(__TARGET_ARCH_x86)
	/*
	 * A leaf in JIT code before its prologue's push rbp; mov rbp, rsp
	 * (55 48 89 e5: optimised code first checks whether it was
	 * deoptimised), or past its epilogue's mov rsp, rbp; pop rbp
	 * (48 8b e5 5d): its frame is not built, fp is its caller's, and its
	 * return address is at sp (at sp + 8 between the two instructions).
	 */
	if (topmost && kind == 2 && !bpf_probe_read_user(st->tmp, 48, (void *)(st->pc - 16)))
		at = v8_edge((const __u8 *)st->tmp, st->sp);
	if (at && !unwind_read(st, at, &st->tmp[7], 1) && v8_owns(v8, st->tmp[7] - 1)) {
		st->v8_optimized++;
		st->rt_ip = SFBPF_V8_CODE | SFBPF_V8_UNCHECKED << SFBPF_V8_CHECK_SHIFT |
			    (st->pc & SFBPF_V8_PC_MASK);
		st->next.pc = st->tmp[7];
		st->next.sp = at + 8;
		st->next.fp = st->fp;
		st->next.exact = false;
		return UNWIND_NEXT;
	}
#endif
	st->rt_ip = v8_ident(st, v8, kind, topmost);
#if defined(__TARGET_ARCH_x86)
	/*
	 * A leaf in a builtin that builds no frame (StringAdd, NumberToString
	 * called from optimised code): fp is still its caller's, whose return
	 * address is the word at sp. Stepped through fp, that caller would be
	 * lost; a word at sp in V8's JIT code can only be that return address.
	 */
	if (topmost && kind == 1 && st->rt_ip == st->pc &&
	    !unwind_read(st, st->sp, &st->tmp[7], 1) && v8_owns(v8, st->tmp[7] - 1) == 2) {
		st->next.pc = st->tmp[7];
		st->next.sp = st->sp + 8;
		st->next.fp = st->fp;
		st->next.exact = false;
		return UNWIND_NEXT;
	}
#endif
	return unwind_by_fp(st, topmost, &st->next, &switched);
}

/*
 * The chained walk (kernels without bpf_loop()): V8's step inlined in each of
 * a link's frames took it past the verifier's million instructions. There
 * V8's frames step by fp, as native code (V8 builds every frame with one),
 * and the walk only remembers where each was (this, before the step); the
 * chain's last link, whose budget is its own, reads their identities
 * (v8_later_names()). The stack is still the one walked: the same sample,
 * its thread stopped. Not in there: the leaf whose frame is not built yet
 * (v8_frame()'s edges), stepped by fp, as before.
 */
static __always_inline void v8_remember(struct sfbpf_unwind_state *st,
					const struct sfbpf_proc *proc)
{
	const struct sfbpf_v8_proc *v8;
	__u32 k;

	if (st->v8_looked == 1 || st->n >= st->max)
		return;
	v8 = v8_proc(st, proc);
	if (!v8 || !v8_owns(v8, st->exact ? st->pc : st->pc - 1))
		return;
	k = st->v8_nlater;
	if (k >= UNWIND_V8_LATER) {
		st->v8_later_lost++;
		return;
	}
	st->v8_later[k].pc = st->pc;
	st->v8_later[k].sp = st->sp;
	st->v8_later[k].fp = st->fp;
	st->v8_later[k].n = st->n;
	st->v8_later[k].exact = st->exact;
	st->v8_nlater = k + 1;
}

#if defined(__TARGET_ARCH_x86)
/*
 * The chained walk's leaf, before its first link's frames: in JIT code
 * before its prologue or past its epilogue (v8_edge()), its frame not
 * built, fp is its caller's, which the fp step would miss (v8_frame()'s
 * edge, here once a sample rather than in every frame of the links). It is
 * emitted here as the looped step sends it, and the walk goes on from the
 * return address at sp (or sp + 8), in a known mapping.
 */
static __always_inline void v8_leaf_chained(struct sfbpf_unwind_state *st, __u64 *ips,
					    const struct sfbpf_proc *proc)
{
	const struct sfbpf_v8_proc *v8;
	__u64 at;
	int idx;

	if (st->n || !st->exact || st->max < 2)
		return;
	v8 = v8_proc(st, proc);
	if (!v8 || v8_owns(v8, st->pc) != 2 ||
	    bpf_probe_read_user(st->tmp, 48, (void *)(st->pc - 16)))
		return;
	at = v8_edge((const __u8 *)st->tmp, st->sp);
	if (!at || unwind_read(st, at, &st->tmp[7], 1) || !v8_owns(v8, st->tmp[7] - 1))
		return;
	idx = unwind_find_mapping(proc, st->tmp[7] - 1, st->map);
	if (idx < 0)
		return;
	ips[0] = SFBPF_V8_CODE | SFBPF_V8_UNCHECKED << SFBPF_V8_CHECK_SHIFT |
		 (st->pc & SFBPF_V8_PC_MASK);
	st->v8_optimized++;
	st->n = 1;
	st->pc = st->tmp[7];
	st->sp = at + 8;
	st->xreg_at = UNWIND_XREG_LOST; /* optimized code says nothing of rbx */
	st->exact = 0;
	st->map = idx;
}
#else
static __always_inline void v8_leaf_chained(struct sfbpf_unwind_state *st, __u64 *ips,
					    const struct sfbpf_proc *proc)
{
	(void)st;
	(void)ips;
	(void)proc;
}
#endif

/*
 * The identities of the frames v8_remember() kept, in place of their pcs
 * in ips (nu frames): the walk's state is spent, so st's pc, sp and fp are
 * the frame's again, one after the other.
 */
static __always_inline void v8_later_names(struct sfbpf_unwind_state *st, __u64 *ips, __u32 nu)
{
	const struct sfbpf_v8_later *f;
	__u32 i, k = st->v8_nlater, n;
	int kind;

	if (st->v8_looked != 2)
		return;
	/* The walk's end counted the frames of before (the leaf's edge): these are new. */
	st->v8_optimized = 0;
	for (i = 0; i < UNWIND_V8_LATER && i < k; i++) {
		f = &st->v8_later[i];
		n = f->n;
		if (n >= nu || n >= UNWIND_MAX_FRAMES || ips[n & UNWIND_FRAME_MASK] != f->pc)
			continue;
		st->pc = f->pc;
		st->sp = f->sp;
		st->fp = f->fp;
		st->exact = f->exact;
		kind = v8_owns(&st->v8, st->exact ? st->pc : st->pc - 1);
		if (kind)
			ips[n & UNWIND_FRAME_MASK] = v8_ident(st, &st->v8, kind, n == 0);
	}
}

/*
 * The sample's V8 words (SFBPF_V8_JIT frames' functions) into out, room
 * entries of two slots at most, after its kernel frames: how many, the
 * sample's flags saying whose they are.
 */
static __always_inline __u32 v8_words_out(const struct sfbpf_unwind_state *st, __u64 *out,
					  __u32 room, __u8 *flags)
{
	__u32 n = st->v8_nwords, i;

	if (n > room)
		n = room;
	for (i = 0; i < SFBPF_V8_WORDS_MAX && i < n; i++) {
		out[2 * i] = st->v8_words[i][0];
		out[2 * i + 1] = st->v8_words[i][1];
	}
	if (i)
		*flags |= SFBPF_SAMPLE_V8_WORDS;
	return i;
}

/*
 * The step, the test of a frame and of a code address, as global functions
 * for the walk in bpf_loop() (hotspot.h's reasons): the verifier checks
 * each once. Inlined in the walk's frame, 6.1's verifier followed the
 * ranges' loop past its million instructions.
 */
__noinline int v8_frame_looped(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc)
{
	if (!st || !proc)
		return RUNTIME_NOT_MINE;
	return v8_frame(st, proc, st->n == 0);
}

__noinline int v8_wanted_looped(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc)
{
	if (!st || !proc)
		return 0;
	return v8_wanted(st, proc);
}

__noinline int v8_code_looped(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc, int idx,
			      __u64 addr)
{
	if (!st || !proc)
		return 0;
	return v8_code(st, proc, idx, addr);
}

#endif /* SFBPF_V8_H */
