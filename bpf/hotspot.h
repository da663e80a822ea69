/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HotSpot's Java frames in the native walk (docs/DESIGN-hotspot.md, "The BPF
 * walk"). A JVM's code has no table: the template interpreter and the code
 * heaps are anonymous mappings, and compiled Java code keeps no frame
 * pointer. In a process with settings in hs_procs (abi.h), unwind_frame()
 * hands such a pc (runtime.h's hooks) to hotspot_step(), which steps the frame as HotSpot's own
 * stack walk does (frame::sender()):
 *   - the interpreter's code: its frame is linked by fp; its Method and
 *     bytecode pointer are in the frame's slots, its caller's sp (before
 *     any adapter extended it) in the sender-sp slot;
 *   - a code heap: the heap's segment map leads from the pc's segment back
 *     to its blob's first; a blob with a frame (an nmethod, a runtime stub)
 *     is stepped by its frame size, the caller's fp saved right below its
 *     return address; one without (the call stub, adapters) by fp, as any
 *     code without a table.
 * The frame goes to userspace as identity, never as a name: the Method and
 * bytecode index of an interpreted frame (abi.h, SFBPF_HS_INTERP), the pc
 * of a compiled one, whose nmethod userspace finds when it reads the sample.
 * Processes without settings pay one hash lookup per frame of code without
 * a table, which native processes rarely have.
 */
#ifndef SFBPF_HOTSPOT_H
#define SFBPF_HOTSPOT_H

/*
 * Segment-map hops: each goes back at most 254 segments, so 16 find the
 * start of any blob up to 4,064 segments (508 KiB at 128-byte segments).
 */
#define HS_MAX_HOPS 16
/* Words an intrinsic may have pushed in a compiled leaf (hotspot_compiled()). */
#define HS_LEAF_PUSHES 4
/* A compiled frame's size, bounded: larger ones do not read as frames. */
#define HS_MAX_FRAME (1ULL << 20)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* sized by the loader */
	__type(key, __u32); /* tgid */
	__type(value, struct sfbpf_hs_proc);
} hs_procs SEC(".maps");

/*
 * The settings of the process walked, or NULL: none, or an earlier
 * process's. Looked up once a sample: a copy in the state serves its frames.
 */
static __always_inline const struct sfbpf_hs_proc *hotspot_proc(struct sfbpf_unwind_state *st,
								const struct sfbpf_proc *proc)
{
	/* A key on the stack: 6.1 takes no other memory as a key in a global function. */
	__u32 tgid = st->tgid;
	const struct sfbpf_hs_proc *hs;

	if (!st->hs_looked) {
		st->hs_looked = 1;
		hs = bpf_map_lookup_elem(&hs_procs, &tgid);
		if (hs && hs->start_ticks == proc->start_ticks) {
			/*
			 * The classes unloaded so far, before any frame is
			 * read: userspace names an interpreted frame's Method
			 * only while that count is still this (abi.h). Read
			 * before the copy: the state's hs_looked stays what the
			 * compiler knows it is (a reload after the call lost the
			 * verifier the link between it and the pointer below).
			 */
			if (hs->unloads &&
			    !bpf_probe_read_user(&st->rt_epoch, 8, (void *)hs->unloads))
				st->rt_epoch |= SFBPF_RT_EPOCH_VALID;
			else
				st->rt_epoch = 0;
			st->hs = *hs;
			st->hs_looked = 2;
		}
	}
	return st->hs_looked == 2 ? &st->hs : NULL;
}

/*
 * The stack ends at a JVM's frame: why, for --stats (enum sfbpf_hs_stop),
 * and the stop reason the walk gives.
 */
static __always_inline int hotspot_stop(struct sfbpf_unwind_state *st, __u8 why, int stop)
{
	st->hs_stop = why;
	return stop;
}

/*
 * Whether addr is the JVM's code: the interpreter's, or a code heap's
 * reserved range. Code compiled since the loader read the mappings lies
 * in no mapping it knows (a heap commits more as it fills): the walk does
 * not need one for it.
 */
static __always_inline bool hotspot_owns(const struct sfbpf_hs_proc *hs, __u64 addr)
{
	__u32 k;

	if (addr >= hs->interp_lo && addr < hs->interp_hi)
		return true;
	for (k = 0; k < SFBPF_HS_MAX_HEAPS; k++) {
		if (k >= hs->nr_heaps)
			break;
		if (addr >= hs->heaps[k].lo && addr < hs->heaps[k].hi)
			return true;
	}
	return false;
}

/*
 * Whether addr, in no mapping with a table (idx: its mapping, or -1), is a
 * JVM's code: then the walk goes on there without a mapping.
 */
static __always_inline bool hotspot_code(struct sfbpf_unwind_state *st,
					 const struct sfbpf_proc *proc, int idx, __u64 addr)
{
	const struct sfbpf_hs_proc *hs;

	if (idx >= 0 && proc->maps[idx & (SFBPF_MAX_MAPPINGS - 1)].obj != SFBPF_OBJ_NONE)
		return false;
	hs = hotspot_proc(st, proc);
	return hs && hotspot_owns(hs, addr);
}

/*
 * Whether ra may be a return address: in code (a known mapping's, or the
 * JVM's), right after a call (x86-64: call rel32, or call r/m64 of 2, 3, 6
 * or 7 bytes), or anywhere in the interpreter: it pushes its return
 * addresses and jumps. c: 8 bytes of scratch.
 */
static __always_inline bool hotspot_is_return(const struct sfbpf_proc *proc,
					      const struct sfbpf_hs_proc *hs, __u64 ra, __u8 *c)
{
	if (ra - 1 >= hs->interp_lo && ra - 1 < hs->interp_hi)
		return true;
	if (unwind_find_mapping(proc, ra - 1, 0) < 0 && !hotspot_owns(hs, ra - 1))
		return false;
#if defined(__TARGET_ARCH_x86)
	if (bpf_probe_read_user(c, 8, (void *)(ra - 8)))
		return false;
	return c[3] == 0xe8 || (c[6] == 0xff && (c[7] & 0x38) == 0x10) ||
	       (c[5] == 0xff && (c[6] & 0x38) == 0x10) || (c[2] == 0xff && (c[3] & 0x38) == 0x10) ||
	       (c[1] == 0xff && (c[2] & 0x38) == 0x10);
#else
	/* No call decoder for this architecture yet: being in code is all that is checked. */
	(void)c;
	return true;
#endif
}

/*
 * An interpreted frame at fp: its identity into *ip, its caller into next.
 * A leaf (topmost) may be a frame the interpreter is still building: a slot
 * below sp is not pushed yet and holds what an earlier frame left there (a
 * Method long freed, another class's): no identity is taken from it, the
 * frame is the interpreter's pc.
 */
static __always_inline int hotspot_interpreted(struct sfbpf_unwind_state *st,
					       const struct sfbpf_hs_proc *hs, bool topmost,
					       struct sfbpf_unwind_frame *next, __u64 *ip)
{
	__u64 fp = st->fp, *t = st->tmp, bci = SFBPF_HS_BCI_NONE, method, bcp, sender_sp, cm;

	if (!fp || (fp & 7) || fp < st->sp || fp - st->sp > UNWIND_FP_MAX_GAP)
		return hotspot_stop(st, SFBPF_HS_STOP_INTERP_LINK, SFBPF_STOP_FP_CHAIN);
	/* The slots below fp first: the window extends upwards from a miss. */
	if (unwind_read(st, fp + 8 * (__s64)hs->interp_bcp_slot, &t[0], 1) ||
	    unwind_read(st, fp + 8 * (__s64)hs->interp_method_slot, &t[1], 1) ||
	    unwind_read(st, fp + 8 * (__s64)hs->interp_sender_sp_slot, &t[2], 1) ||
	    unwind_read(st, fp, &t[3], 2))
		return hotspot_stop(st, SFBPF_HS_STOP_READ, SFBPF_STOP_READ);
	bcp = t[0];
	method = t[1];
	if (topmost && fp + 8 * (__s64)hs->interp_sender_sp_slot < st->sp)
		t[2] = 0;
	if (topmost && fp + 8 * (__s64)hs->interp_method_slot < st->sp)
		goto step;
	if (topmost && fp + 8 * (__s64)hs->interp_bcp_slot < st->sp)
		bcp = 0;
	/*
	 * A native method has no bytecode (code size 0): its bcp slot may hold
	 * what a register held when its first call linked it. Anything else
	 * outside the method's bytecodes is not a position either.
	 */
	t[5] = 0;
	t[6] = 0;
	if (!(method & 7) && !bpf_probe_read_user(&t[5], 8, (void *)(method + hs->method_const)) &&
	    !bpf_probe_read_user(&t[6], 2, (void *)(t[5] + hs->const_code_size))) {
		cm = t[5] + hs->const_size;
		if (bcp >= cm && bcp - cm < t[6])
			bci = bcp - cm;
	}
	*ip = SFBPF_HS_INTERP | bci << SFBPF_HS_BCI_SHIFT | ((method >> 3) & SFBPF_HS_METHOD_MASK);
step:
	next->fp = t[3];
	next->pc = arch_strip_ra(t[4]);
	/* The caller's own sp, unless the slot reads as no sp above this frame. */
	sender_sp = t[2];
	next->sp = fp + 16;
	if (sender_sp >= fp + 16 && sender_sp - (fp + 16) <= UNWIND_FP_MAX_GAP && !(sender_sp & 7))
		next->sp = sender_sp;
	next->exact = false;
	st->hs_interpreted++;
	return UNWIND_NEXT;
}

/*
 * A compiled leaf stopped where its frame is not whole, told by the code at
 * pc (HotSpot's x86-64 prologue and epilogue, the same for C1, C2 and
 * stubs: push rbp, sub rsp / add rsp, pop rbp, the return poll, ret):
 * 0, the return address at sp (before push rbp, after pop rbp); 1, the
 * saved fp at sp and the return address above it (between push rbp and
 * sub rsp, at pop rbp); -1, the frame is whole (the body). prologue: pc is
 * before the frame-complete offset. c: 16 bytes of scratch.
 */
static __always_inline int hotspot_edge(__u64 pc, bool prologue, __u8 *c)
{
#if !defined(__TARGET_ARCH_x86)
	/* AArch64's edges (the return address still in lr) are not told yet: the body's rule. */
	return -1;
#endif
	/* The 8 bytes before pc too: the return poll's compare before its jump. */
	if (bpf_probe_read_user(c, 12, (void *)(pc - 8)))
		return -1;
	if (c[8] == 0xc3) /* ret */
		return 0;
	if (c[8] == 0x5d) /* pop rbp */
		return 1;
	/* cmp rsp, [r15 + disp]: the return poll, after pop rbp */
	if (c[8] == 0x49 && c[9] == 0x3b && (c[10] == 0x67 || c[10] == 0xa7))
		return 0;
	/* ja to the poll's stub, right after that compare (disp8 or disp32) */
	if (c[8] == 0x0f && c[9] == 0x87 &&
	    ((c[4] == 0x49 && c[5] == 0x3b && c[6] == 0x67) ||
	     (c[1] == 0x49 && c[2] == 0x3b && c[3] == 0xa7)))
		return 0;
	if (!prologue)
		return -1;
	/* sub rsp, imm: fp pushed, the frame not yet allocated */
	if (c[8] == 0x48 && (c[9] == 0x83 || c[9] == 0x81) && c[10] == 0xec)
		return 1;
	return 0;
}

/*
 * A pc in code heap h: the blob holding it, then its frame. RUNTIME_NOT_MINE for
 * a blob without a frame of its own; a stop reason where the heap does not
 * read as one.
 */
static __always_inline int
hotspot_compiled(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc,
		 const struct sfbpf_hs_proc *hs, const struct sfbpf_hs_heap *h, __u64 lookup,
		 bool topmost, struct sfbpf_unwind_frame *next, __u64 *ip)
{
	__u64 *t = st->tmp, i, blob, code, cfa = 0;
	__u8 *hb = st->hs_blob;
	__s32 size, frame_size, complete;
	__u32 shift = h->shift;
	int k, edge;

	if (shift < 4 || shift > 20)
		return hotspot_stop(st, SFBPF_HS_STOP_BAD_BLOB, SFBPF_STOP_READ);
	i = (lookup - h->lo) >> shift;
	/* Each segment's byte: 0 the first of a block, 0xff free, else how far back to go. */
	for (k = 0; k < HS_MAX_HOPS; k++) {
		t[7] = 0;
		if (bpf_probe_read_user(&t[7], 1, (void *)(h->segmap + i)))
			return hotspot_stop(st, SFBPF_HS_STOP_READ, SFBPF_STOP_READ);
		if (!t[7] || t[7] == 0xff || t[7] > i)
			break;
		i -= t[7];
	}
	if (t[7])
		return hotspot_stop(st, SFBPF_HS_STOP_NO_BLOB, SFBPF_STOP_NO_ROW);
	blob = h->lo + (i << shift) + hs->block_size;
	/* One read for the header's fields (the loader checked they lie in it, aligned). */
	if (bpf_probe_read_user(hb, SFBPF_HS_BLOB_SPAN, (void *)blob))
		return hotspot_stop(st, SFBPF_HS_STOP_READ, SFBPF_STOP_READ);
	size = *(__s32 *)&hb[hs->blob_size & (SFBPF_HS_BLOB_SPAN - 4)];
	frame_size = *(__s32 *)&hb[hs->blob_frame_size & (SFBPF_HS_BLOB_SPAN - 4)];
	if (hs->complete_width == 2)
		complete = *(__s16 *)&hb[hs->blob_frame_complete & (SFBPF_HS_BLOB_SPAN - 2)];
	else
		complete = *(__s32 *)&hb[hs->blob_frame_complete & (SFBPF_HS_BLOB_SPAN - 4)];
	if (size <= 0 || lookup >= blob + size)
		return hotspot_stop(st, SFBPF_HS_STOP_NO_BLOB, SFBPF_STOP_NO_ROW);
	if (frame_size <= 0) {
		/*
		 * A stub with no frame of its own (arraycopy's, adapters): a
		 * frame-pointer step, but a leaf stopped before its enter (or
		 * after its leave) still has the return address at sp.
		 */
		if (!topmost || unwind_read(st, st->sp, &t[5], 1) ||
		    !hotspot_is_return(proc, hs, arch_strip_ra(t[5]), (__u8 *)&t[6]))
			return RUNTIME_NOT_MINE;
		next->fp = st->fp;
		next->pc = arch_strip_ra(t[5]);
		next->sp = st->sp + 8;
		next->exact = false;
		st->hs_compiled++;
		return UNWIND_NEXT;
	}
	if ((__u64)frame_size * 8 > HS_MAX_FRAME)
		return hotspot_stop(st, SFBPF_HS_STOP_BAD_BLOB, SFBPF_STOP_NO_ROW);
	if (hs->code_offset)
		code = blob + *(__u32 *)&hb[hs->blob_code & (SFBPF_HS_BLOB_SPAN - 4)];
	else
		code = *(__u64 *)&hb[hs->blob_code & (SFBPF_HS_BLOB_SPAN - 8)];
	/*
	 * A leaf in a blob whose frame-complete offset is "never safe" (the
	 * handlers of safepoint polls, deoptimization, exceptions: HotSpot's
	 * own walk never starts in one) may be pushing or popping the
	 * registers it saves, its return slot still a placeholder: its frame
	 * size says nothing of sp then, and a word found above it would be a
	 * stale return address, a wrong caller. Before the edges too: its
	 * registers' pops read as an epilogue's pop rbp, and at its entry (the
	 * poll's signal handler jumps there, nothing pushed) sp holds the
	 * Java frame's word, not a return address.
	 */
	if (topmost && complete < 0)
		return hotspot_stop(st, SFBPF_HS_STOP_NEVER_SAFE, SFBPF_STOP_NO_MAPPING);
	edge = topmost ? hotspot_edge(lookup, complete > 0 && lookup < code + complete,
				      (__u8 *)&t[4]) :
			 -1;
	/*
	 * What the code at pc says is checked too: C2 may give rbp to an
	 * intrinsic, whose pop rbp inside the body reads as the epilogue's.
	 */
	if (edge >= 0) {
		if (unwind_read(st, st->sp, &t[4], 2))
			return hotspot_stop(st, SFBPF_HS_STOP_READ, SFBPF_STOP_READ);
		t[3] = edge ? t[5] : t[4];
		if (hotspot_is_return(proc, hs, arch_strip_ra(t[3]), (__u8 *)&t[6])) {
			next->fp = edge ? t[4] : st->fp;
			next->pc = t[3];
			next->sp = st->sp + (edge ? 16 : 8);
			goto found;
		}
	}
	/*
	 * Stopped in the body, sp is the frame's own, except inside the few
	 * intrinsics that push a word or more (string_compare keeps a length
	 * there): a leaf is taken with the first of up to HS_LEAF_PUSHES words
	 * more whose return address is code right after a call.
	 */
	for (k = 0; k <= HS_LEAF_PUSHES; k++) {
		cfa = st->sp + 8 * ((__u64)frame_size + k);
		if (unwind_read(st, cfa - 16, &t[4], 2))
			return hotspot_stop(st, SFBPF_HS_STOP_READ, SFBPF_STOP_READ);
		if (!topmost || hotspot_is_return(proc, hs, arch_strip_ra(t[5]), (__u8 *)&t[6]))
			break;
	}
	if (k > HS_LEAF_PUSHES)
		return hotspot_stop(st, SFBPF_HS_STOP_NO_CALLER, SFBPF_STOP_NO_MAPPING);
	next->fp = t[4];
	next->pc = t[5];
	next->sp = cfa;
found:
	next->pc = arch_strip_ra(next->pc);
	next->exact = false;
	st->hs_compiled++;
	/*
	 * Which compilation ran here (a blob with a frame: an nmethod, or a
	 * runtime stub, whose id userspace does not judge): a flushed
	 * nmethod's successor at this pc has another.
	 */
	if (hs->nm_compile_id && *ip <= SFBPF_HS_PC_MASK &&
	    !bpf_probe_read_user(&t[7], 4, (void *)(blob + hs->nm_compile_id)))
		*ip |= SFBPF_HS_COMPILED | (t[7] & SFBPF_HS_ID_MASK) << SFBPF_HS_ID_SHIFT |
		       (topmost ? SFBPF_HS_EXACT : 0);
	return UNWIND_NEXT;
}

/*
 * One step of a frame of the JVM's code, the frame's own entry in *ip
 * rewritten for an interpreted one. Returns UNWIND_NEXT with the caller in
 * next, RUNTIME_NOT_MINE (not the JVM's code, or a blob without a frame: a
 * frame-pointer step serves), or why the stack ends here.
 */
static __always_inline int hotspot_step(struct sfbpf_unwind_state *st,
					const struct sfbpf_proc *proc,
					const struct sfbpf_hs_proc *hs, bool topmost,
					struct sfbpf_unwind_frame *next, __u64 *ip)
{
	__u64 lookup = st->exact ? st->pc : st->pc - 1;
	__u32 k;

	if (lookup >= hs->interp_lo && lookup < hs->interp_hi)
		return hotspot_interpreted(st, hs, topmost, next, ip);
	for (k = 0; k < SFBPF_HS_MAX_HEAPS; k++) {
		const struct sfbpf_hs_heap *h = &hs->heaps[k];

		if (k >= hs->nr_heaps)
			break;
		if (lookup < h->lo || lookup >= h->hi)
			continue;
		return hotspot_compiled(st, proc, hs, h, lookup, topmost, next, ip);
	}
	return RUNTIME_NOT_MINE;
}

/*
 * Whether the frame at st->pc is stepped here: in a JVM's code, or in a
 * mapping without an object (no table: anonymous code, where a JVM's is).
 */
static __always_inline bool hotspot_wanted(const struct sfbpf_unwind_state *st,
					   const struct sfbpf_proc *proc)
{
	return st->in_rt_code ||
	       proc->maps[st->map & (SFBPF_MAX_MAPPINGS - 1)].obj == SFBPF_OBJ_NONE;
}

/*
 * The step of the frame at st->pc, the leaf if topmost: its entry into
 * st->rt_ip, its caller into st->next; hotspot_step()'s values,
 * RUNTIME_NOT_MINE without settings. The caller says which frame it is:
 * inside unwind_frame() (the chained walk) st->n already counts it. A
 * frame a signal interrupted (st->exact past the leaf: a JFR or profiler
 * signal's handler above it) is stepped as a leaf: stopped anywhere, in
 * its prologue or inside an intrinsic's pushes, its frame may not be whole.
 */
static __always_inline int hotspot_frame(struct sfbpf_unwind_state *st,
					 const struct sfbpf_proc *proc, bool topmost)
{
	const struct sfbpf_hs_proc *hs = hotspot_proc(st, proc);

	if (!hs)
		return RUNTIME_NOT_MINE;
	st->rt_ip = st->pc;
	return hotspot_step(st, proc, hs, topmost || st->exact, &st->next, &st->rt_ip);
}

/*
 * The same, and hotspot_code(), as global functions for the walk in
 * bpf_loop(): the verifier checks each once, on its own (inlined, 6.1's
 * followed their paths times the frame's others past its limit). The
 * loop's callback takes the step before unwind_frame_looped(), not inside
 * it: four calls deep, 6.1 found their stacks over 512 bytes together.
 * The chained walker inlines them (5.10 passes no pointer but the context
 * to a global function).
 */
__noinline int hotspot_frame_looped(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc)
{
	if (!st || !proc)
		return RUNTIME_NOT_MINE;
	/* Before unwind_frame_looped() emits the frame: st->n is its index. */
	return hotspot_frame(st, proc, st->n == 0);
}

__noinline int hotspot_code_looped(struct sfbpf_unwind_state *st, const struct sfbpf_proc *proc,
				   int idx, __u64 addr)
{
	if (!st || !proc)
		return 0;
	return hotspot_code(st, proc, idx, addr);
}

#endif /* SFBPF_HOTSPOT_H */
