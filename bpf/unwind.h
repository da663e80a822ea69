/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The in-kernel user-stack walk: finds each frame's rule in the SFrame-derived
 * tables and applies it, or takes a frame-pointer step where no rule covers
 * the PC (see docs/DESIGN-unwinder.md, "One frame", for the decision table).
 * Include after vmlinux.h, bpf_helpers.h and abi.h; programs call it through
 * ustack.h. Returns nothing: why a stack ended is in the state's stop field.
 *
 * One bpf_loop() iteration per frame keeps the verifier's work independent of
 * the depth. Kernels without bpf_loop() (before 5.17) chain programs by tail
 * calls instead, each walking UNWIND_CHAIN_FRAMES frames (ustack.h). All loop
 * state lives in a map value (struct sfbpf_unwind_state), never on the stack:
 * the verifier sees its fields as unknown scalars, so the callback's states
 * converge at once instead of once per depth, and a chained program finds
 * the walk where the previous one left it.
 *
 * x86-64 and AArch64 (arch.h): the caller's SP is the CFA; the return
 * address is on the stack or, in AArch64's topmost frame, still in LR.
 */
#ifndef SFBPF_UNWIND_H
#define SFBPF_UNWIND_H

#include "unwind_maps.h"
#include "vmafind.h"

/* A frame-pointer step rejects frames further than this above SP... */
#define UNWIND_FP_MAX_GAP (8ULL << 20)
/*
 * ... unless it is a switch to another stack (Go's system stack, a runtime's
 * own stacks): allowed this many times per stack. A switch may go down as
 * well as up, so more would let a frame-pointer loop repeat.
 */
#define UNWIND_FP_SWITCHES 1
#define UNWIND_USER_PAGE 4096ULL
#define UNWIND_MAP_MASK (SFBPF_MAX_MAPPINGS - 1)
/* Not a stop reason: the caller's frame was found (SFBPF_STOP_OUTERMOST is 0). */
#define UNWIND_NEXT SFBPF_STOP__COUNT
/*
 * The program's user-frame capacity: the walk writes ips[0 .. UNWIND_MAX_FRAMES)
 * and the kernel stack may follow the last of them, so the array it is given
 * must hold UNWIND_MAX_FRAMES + SFBPF_MAX_KFRAMES entries. A program with
 * smaller records defines it before including this file (off-CPU keeps a
 * record per thread: offcpu_abi.h). A power of two: frame indexes are masked
 * with UNWIND_FRAME_MASK for the verifier, which then bounds every access by
 * the array's size whatever the depth. Frame counts, which may equal
 * UNWIND_MAX_FRAMES, are clamped instead (unwind_nr_frames).
 */
#ifndef UNWIND_MAX_FRAMES
#define UNWIND_MAX_FRAMES SFBPF_MAX_FRAMES
#endif
#define UNWIND_FRAME_MASK (UNWIND_MAX_FRAMES - 1)
/*
 * Frames per program of the chained walker (kernels without bpf_loop()): the
 * verifier follows each of them (about 20k instructions a frame), so its work
 * grows with this.
 */
#define UNWIND_CHAIN_FRAMES SFBPF_CHAIN_FRAMES
/* Kernel frame counts from bpf_get_stack() (at most SFBPF_MAX_KFRAMES), masked likewise. */
#define UNWIND_KFRAME_MASK 127

_Static_assert((SFBPF_MAX_MAPPINGS & UNWIND_MAP_MASK) == 0, "mappings: power of two");
_Static_assert((UNWIND_MAX_FRAMES & UNWIND_FRAME_MASK) == 0, "frames: power of two");
_Static_assert(UNWIND_MAX_FRAMES <= SFBPF_MAX_FRAMES, "more frames than a sample holds");
_Static_assert(SFBPF_MAX_KFRAMES <= UNWIND_KFRAME_MASK, "kernel frame mask too small");
_Static_assert(SFBPF_MAX_MAPPINGS <= (1 << SFBPF_MAP_SEARCH_STEPS), "mapping search too short");

/*
 * A frame count (at most UNWIND_MAX_FRAMES), bounded for the verifier. Not a
 * mask alone: a full stack's count, UNWIND_MAX_FRAMES itself, would become 0.
 * Not a plain min() either: the compiler compares a copy of n, and the
 * verifier learns nothing of the value used. The barrier keeps the mask,
 * which the compiler would otherwise drop as redundant after the test.
 */
static __always_inline __u32 unwind_nr_frames(__u32 n)
{
	if (n >= UNWIND_MAX_FRAMES)
		return UNWIND_MAX_FRAMES;
	barrier_var(n);
	return n & UNWIND_FRAME_MASK;
}

/*
 * Index of the mapping containing addr, or -1. Tries hint first: consecutive
 * frames are often in the same object.
 */
static __always_inline int unwind_find_mapping(const struct sfbpf_proc *proc, __u64 addr,
					       __u32 hint)
{
	const struct sfbpf_mapping *m = &proc->maps[hint & UNWIND_MAP_MASK];
	__u32 n = proc->count, base = 0, half;
	__u64 start, below;
	int i;

	if (addr >= m->start && addr < m->end && hint < n)
		return hint & UNWIND_MAP_MASK;
	/*
	 * Reject rather than clamp a bad count: a clamped (constant) bound would
	 * make every search step constant, and the verifier would walk all paths.
	 */
	if (!n || n > SFBPF_MAX_MAPPINGS)
		return -1;
	/*
	 * The last mapping starting at or below addr, in [base, base + n).
	 * Without a branch on the comparison, as the row search: each step's
	 * two outcomes were two states to the verifier, and it followed the
	 * nine steps again for every state that reached a search (the chained
	 * walker inlines one per frame: 60 % of what it processed).
	 */
	for (i = 0; i < SFBPF_MAP_SEARCH_STEPS && n > 1; i++) {
		half = n >> 1;
		start = proc->maps[(base + half) & UNWIND_MAP_MASK].start;
		/* All ones when addr < start: the borrow of addr - start, exact for any two values.
		 */
		below = (__u64)((__s64)((~addr & start) | (~(addr ^ start) & (addr - start))) >>
				63);
		base += half & ~(__u32)below;
		n -= half;
	}
	m = &proc->maps[base & UNWIND_MAP_MASK];
	return addr >= m->start && addr < m->end ? (int)(base & UNWIND_MAP_MASK) : -1;
}

/*
 * unwind_find_mapping() as a global function, for the walk in bpf_loop()
 * (5.17 and later; the chained walker inlines it: 5.10 passes no pointer
 * but the context to a global function). The verifier checks its search
 * once, on its own: inlined, it followed the search's iterations again for
 * every state that reached one of its calls (with vmafind_held()'s loop,
 * three quarters of what it processed for sfbpf_profile). To it the result
 * is any int: every use masks it.
 */
__noinline int unwind_find_mapping_looped(const struct sfbpf_proc *proc, __u64 addr, __u32 hint)
{
	if (!proc)
		return -1;
	return unwind_find_mapping(proc, addr, hint);
}

/* Direct-mapped slot of the row cache for (object, ELF address). */
static __always_inline __u32 unwind_rcache_slot(__u32 obj_id, __u64 off)
{
	return ((off ^ ((__u64)obj_id << 40)) * 0x9e3779b97f4a7c15ULL) >> (64 - UNWIND_RCACHE_BITS);
}

/* Entry i of a table space (rows or pages), or NULL: its segment is missing. */
static __always_inline __u32 *unwind_space_entry(void *space, __u32 i)
{
	__u32 seg = i >> seg_shift, zero = 0, shift = seg_shift;
	__u32 *s;
	void *inner;

	if (shift > SFBPF_SEG_SHIFT_MAX)
		return NULL;
	inner = bpf_map_lookup_elem(space, &seg);
	if (!inner)
		return NULL;
	s = bpf_map_lookup_elem(inner, &zero);
	return s ? &s[i & ((1u << shift) - 1)] : NULL;
}

/* Row i of the row space, or NULL. */
static __always_inline const struct sfbpf_row *unwind_row(__u32 i)
{
	return (const struct sfbpf_row *)unwind_space_entry(&rows, i);
}

/* Entry i of the page space, or -1. */
static __always_inline long unwind_page(__u32 i)
{
	__u32 *p = unwind_space_entry(&pages, i);

	return p ? *p : -1;
}

/*
 * The row of obj covering ELF address off, as a cache entry (rule and the
 * part of its range inside off's page), or false: off outside the object's
 * rows. The page index narrows the search to the rows starting in off's page,
 * [pages[p], pages[p + 1]); if none starts at or before off, the row covering
 * off is the one before them. Rows of one page differ in their low 16 bits
 * only (a page is at most 64 KiB). Branch-free steps (they depend on the
 * range's length only): a binary search's branches are unpredictable by nature.
 */
static __always_inline bool unwind_search_rows(const struct sfbpf_object *obj, __u64 off,
					       struct sfbpf_rcache_entry *out)
{
	const struct sfbpf_row *row;
	__u32 shift = SFBPF_OBJ_PAGE_SHIFT(obj->flags), first, end, base, n, half, lo16;
	__u64 page, page_start, seg_start, before, lo, hi;
	long pg, pg2;
	int i;

	if (off < obj->pc_min || shift > 16)
		return false;
	page = (off - obj->pc_min) >> shift;
	if (page + 1 >= obj->page_count)
		return false;
	pg = unwind_page(obj->page_start + (__u32)page);
	pg2 = unwind_page(obj->page_start + (__u32)page + 1);
	if (pg < 0 || pg2 < 0 || pg2 > obj->row_count || pg2 < pg)
		return false;
	first = pg;
	end = pg2;
	page_start = obj->pc_min + (page << shift);
	/* Where the 64 KiB of code that page is part of starts: what pc_lo counts from. */
	seg_start = obj->pc_min + ((page << shift) & ~0xffffULL);
	lo16 = (off - obj->pc_min) & 0xffff;
	/* Invariant: the answer is in [base, base + n); base may be the row before the page. */
	base = first ? first - 1 : 0;
	n = end - base;
	for (i = 0; i < SFBPF_SEARCH_STEPS && n > 1; i++) {
		half = n >> 1;
		row = unwind_row(obj->row_start + base + half);
		if (!row)
			return false;
		/* All ones when the row starts after off. */
		before = (__u64)((__s64)((__u64)lo16 - row->pc_lo) >> 63);
		base += half & ~(__u32)before;
		n -= half;
	}
	if (!n)
		return false; /* an empty page with no row before it */
	row = unwind_row(obj->row_start + base);
	if (!row)
		return false;
	out->rule = row->rule;
	if (base < first)
		lo = page_start; /* the row started in an earlier page */
	else if (row->pc_lo <= lo16)
		lo = seg_start + row->pc_lo;
	else
		return false; /* off lies before the object's first row */
	hi = page_start + (1ULL << shift);
	if (base + 1 < end) {
		row = unwind_row(obj->row_start + base + 1);
		if (!row)
			return false;
		hi = seg_start + row->pc_lo;
	}
	/* A page is at most 64 KiB: only the last address of a full one does not fit. */
	out->lo = lo;
	out->len = hi - lo > 0xffff ? 0xffff : hi - lo;
	return true;
}

/*
 * The rule covering ELF address off in object obj_id, or NULL: a gap row, a
 * gap rule, or off outside the object's rows (code without unwind info). A
 * per-CPU cache remembers the rows found by (object, address): profiles hit
 * the same return addresses again and again. An entry names the table's
 * generation, so a slot's new table never gets an old table's rows.
 */
static __always_inline const struct sfbpf_rule *unwind_find_rule(struct sfbpf_unwind_state *st,
								 const struct sfbpf_object *obj,
								 __u32 obj_id, __u64 off)
{
	struct sfbpf_rcache_entry *c;
	const struct sfbpf_rule *rule;
	__u32 key;

	c = &st->rcache[unwind_rcache_slot(obj_id, off) & (UNWIND_RCACHE - 1)];
	if (c->obj != obj_id || c->gen != obj->gen || off - c->lo >= c->len) {
		if (!unwind_search_rows(obj, off, c)) {
			c->len = 0;
			return NULL;
		}
		c->obj = obj_id;
		c->gen = obj->gen;
	}
	if (c->rule == SFBPF_RULE_GAP_ID)
		return NULL;
	key = c->rule;
	rule = bpf_map_lookup_elem(&rules, &key);
	return rule && !(rule->flags & SFBPF_RULE_GAP) ? rule : NULL;
}

/* Where a frame's value of the tracked register is, when not at a user address. */
#define UNWIND_XREG_LIVE 0 /* no callee saved it: still in the task's pt_regs */
#define UNWIND_XREG_LOST 1 /* a callee may have changed it, and no rule said where it went */

/*
 * Value of a rule's base register. SP and FP are tracked in every frame, and
 * so is the tracked callee-saved register (arch.h, ARCH_DWARF_XREG) where the
 * frames below said where they saved it; any other register, the link
 * register included, only has a known value in the topmost frame (pt_regs).
 */
static __always_inline bool unwind_reg(const struct sfbpf_unwind_state *st, __u8 reg, __u8 regnum,
				       bool topmost, __u64 *val)
{
	int idx;

	if (reg == SFBPF_REG_SP) {
		*val = st->sp;
		return true;
	}
	if (reg == SFBPF_REG_FP) {
		*val = st->fp;
		return true;
	}
	idx = arch_ptregs_index(reg, regnum);
	if (idx < 0)
		return false;
	if (!topmost) {
		if (reg != SFBPF_REG_OTHER || regnum != ARCH_DWARF_XREG ||
		    st->xreg_at == UNWIND_XREG_LOST)
			return false;
		if (st->xreg_at != UNWIND_XREG_LIVE)
			return !bpf_probe_read_user(val, sizeof(*val), (void *)st->xreg_at);
	}
	return !bpf_probe_read_kernel(val, sizeof(*val), (void *)(st->regs + idx * 8));
}

/*
 * Reads nwords (1 or 2) user words at addr through the stack window.
 * Returns 0 or -1. Stack slots are 8-byte aligned; a misaligned
 * address (garbage, most likely) is read directly.
 */
static __always_inline int unwind_read(struct sfbpf_unwind_state *st, __u64 addr, __u64 *out,
				       __u32 nwords)
{
	__u64 off = addr - st->win_base, len = nwords * 8, chunk;

	if (addr & 7)
		return bpf_probe_read_user(out, len, (void *)addr) ? -1 : 0;
	if (off > UNWIND_WINDOW - 16 || off + len > st->win_len) {
		chunk = UNWIND_USER_PAGE - (addr & (UNWIND_USER_PAGE - 1));
		if (chunk > UNWIND_WINDOW)
			chunk = UNWIND_WINDOW;
		if (chunk < len) /* the second word is on the next page */
			return bpf_probe_read_user(out, len, (void *)addr) ? -1 : 0;
		if (bpf_probe_read_user(st->win, chunk, (void *)addr)) {
			st->win_len = 0;
			return -1;
		}
		st->win_base = addr;
		st->win_len = chunk;
		off = 0;
	}
	/*
	 * off <= UNWIND_WINDOW - 16 here; the mask only informs the verifier.
	 * The barrier keeps it: without, clang folds it into off & -8, which
	 * 6.12's verifier cannot bound after the window refill joins.
	 */
	off >>= 3;
	barrier_var(off);
	off &= UNWIND_WINDOW / 8 - 1;
	out[0] = st->win[off];
	if (nwords > 1)
		out[1] = st->win[off + 1];
	return 0;
}

/*
 * Applies the SFrame rule for the current frame. Returns UNWIND_NEXT with the
 * caller's frame in next, or why the stack ends here (enum sfbpf_stop).
 */
static __always_inline int unwind_by_rule(struct sfbpf_unwind_state *st, const struct sfbpf_rule *r,
					  bool topmost, struct sfbpf_unwind_frame *next)
{
	__u64 cfa, ra_addr, fp_addr = 0, *words = st->tmp;
	__u8 flags = r->flags;
	bool ra_deref = flags & SFBPF_RULE_RA_DEREF;
	bool fp_deref = flags & SFBPF_RULE_FP_DEREF;
	/* RA still in the link register: the CFA may be SP itself (a leaf's entry). */
	bool ra_lr = ARCH_HAS_LR && r->ra_loc == SFBPF_LOC_SAME;

	if (flags & SFBPF_RULE_UNSUPPORTED)
		return SFBPF_STOP_UNSUPPORTED;
	if ((flags & SFBPF_RULE_TOPMOST_ONLY) && !topmost)
		return SFBPF_STOP_BAD_RULE;
	/* The outermost frame's CFA may be meaningless: do not compute it. */
	if (r->ra_loc == SFBPF_LOC_UNDEFINED)
		return SFBPF_STOP_OUTERMOST;

	if (!unwind_reg(st, r->cfa_reg, r->cfa_regnum, topmost, &cfa))
		return SFBPF_STOP_BAD_RULE;
	cfa += (__s64)r->cfa_off;
	if ((flags & SFBPF_RULE_CFA_DEREF) && unwind_read(st, cfa, &cfa, 1))
		return SFBPF_STOP_READ;
	/* A signal frame may switch stacks (sigaltstack); anything else must go up. */
	if ((cfa < st->sp || (cfa == st->sp && !ra_lr)) && !(flags & SFBPF_RULE_SIGNAL))
		return SFBPF_STOP_CFA_ORDER;

	switch (r->ra_loc) {
	case SFBPF_LOC_CFA:
		ra_addr = cfa;
		break;
	case SFBPF_LOC_REG:
		/* No regnum for RA in the rule: only SP/FP-based RA rules. */
		if (!unwind_reg(st, r->ra_reg, 0xff, topmost, &ra_addr))
			return SFBPF_STOP_BAD_RULE;
		break;
	default: /* SAME: RA still in the link register, known in the topmost frame only */
		if (!ra_lr || !unwind_reg(st, SFBPF_REG_RA, 0xff, topmost, &ra_addr))
			return SFBPF_STOP_BAD_RULE;
		break;
	}
	ra_addr += (__s64)r->ra_off;

	next->fp = st->fp;
	fp_deref = fp_deref && (r->fp_loc == SFBPF_LOC_CFA || r->fp_loc == SFBPF_LOC_REG);
	if (r->fp_loc == SFBPF_LOC_CFA) {
		fp_addr = cfa + (__s64)r->fp_off;
		next->fp = fp_addr;
	} else if (r->fp_loc == SFBPF_LOC_REG) {
		if (!unwind_reg(st, r->fp_reg, 0xff, topmost, &fp_addr))
			return SFBPF_STOP_BAD_RULE;
		fp_addr += (__s64)r->fp_off;
		next->fp = fp_addr;
	}

	/* Saved FP right below RA (every frame-pointer prologue): one read for both. */
	if (ra_deref && fp_deref && fp_addr + 8 == ra_addr) {
		if (unwind_read(st, fp_addr, words, 2))
			return SFBPF_STOP_READ;
		next->fp = words[0];
		next->pc = words[1];
	} else {
		/* Lower address first: the window extends upwards from a miss. */
		if (fp_deref && fp_addr < ra_addr && unwind_read(st, fp_addr, &next->fp, 1))
			return SFBPF_STOP_READ;
		next->pc = ra_addr;
		if (ra_deref && unwind_read(st, ra_addr, &next->pc, 1))
			return SFBPF_STOP_READ;
		if (fp_deref && fp_addr >= ra_addr && unwind_read(st, fp_addr, &next->fp, 1))
			return SFBPF_STOP_READ;
	}
	next->pc = arch_strip_ra(next->pc);
	next->sp = cfa;
	if (r->xreg_off8 == SFBPF_XREG_LOST)
		next->xreg_at = UNWIND_XREG_LOST;
	else if (r->xreg_off8 < 0)
		next->xreg_at = cfa + (__s64)r->xreg_off8 * 8;
	else
		next->xreg_at = st->xreg_at;
	/* The caller of a signal frame was interrupted: its pc is exact. */
	next->exact = flags & SFBPF_RULE_SIGNAL;
	return UNWIND_NEXT;
}

/*
 * No rule for this PC (no table for its object, or none for this address):
 * one frame-pointer step, with rbp (AArch64: x29) as it is, as the kernel's
 * frame-pointer walk does (a frameless function hides its caller): the frame
 * record at FP holds the caller's FP and the return address (AArch64: x29
 * and x30, saved by stp x29, x30). Sets *switched when the
 * saved frame lies on another stack. The caller's return address is checked
 * against the mappings afterwards.
 */
static __always_inline int unwind_by_fp(struct sfbpf_unwind_state *st, bool topmost,
					struct sfbpf_unwind_frame *next, bool *switched)
{
	__u64 fp = st->fp, *words = st->tmp;

	/*
	 * The psABI marks the deepest frame with rbp 0 (_start and thread
	 * entries clear it). Trusted only as a link read from the chain: the
	 * callee saved 0 as its caller's frame. A zero rbp passed through
	 * frameless code, or in the topmost frame, may be any register value.
	 */
	if (!fp)
		return !topmost && st->fp_linked ? SFBPF_STOP_OUTERMOST : SFBPF_STOP_FP_CHAIN;
	if (fp & 7)
		return SFBPF_STOP_FP_CHAIN;
	/* fp >= sp: the caller's CFA (fp + 16) lies strictly above this frame's. */
	*switched = fp < st->sp || fp - st->sp > UNWIND_FP_MAX_GAP;
	if (*switched && st->switches >= UNWIND_FP_SWITCHES)
		return SFBPF_STOP_FP_CHAIN;
	if (unwind_read(st, fp, words, 2))
		return SFBPF_STOP_READ;
	next->fp = words[0];
	next->pc = arch_strip_ra(words[1]);
	next->sp = fp + 16;
	next->exact = false;
	return UNWIND_NEXT;
}

/* Counts a frame in obj_id for the loader's eviction order; runs of one object count once. */
static __always_inline void unwind_count_hit(struct sfbpf_unwind_state *st, __u32 obj_id)
{
	__u64 *hits;

	if (obj_id == st->last_obj)
		return;
	st->last_obj = obj_id;
	hits = bpf_map_lookup_elem(&obj_hits, &obj_id);
	if (hits)
		__sync_fetch_and_add(hits, 1);
}

/*
 * The table of mapping m's object, or NULL: no object, a slot out of range, or
 * a slot without rows (loading, over budget: remembered in st->obj_flags for
 * the counters).
 */
static __always_inline const struct sfbpf_object *unwind_object(struct sfbpf_unwind_state *st,
								const struct sfbpf_mapping *m)
{
	const struct sfbpf_object *obj;
	__u32 obj_id = m->obj;

	if (obj_id == SFBPF_OBJ_NONE)
		return NULL;
	unwind_count_hit(st, obj_id);
	obj = bpf_map_lookup_elem(&objects, &obj_id);
	if (obj && (obj->flags & SFBPF_OBJ_F_NO_ROWS)) {
		st->obj_flags |= obj->flags;
		return NULL;
	}
	return obj;
}

/*
 * Why a frame-pointer step ended the stack: in a table's gap, the table had no
 * row where the walk needed one (no-row); elsewhere the chain broke (fp-chain).
 */
static __always_inline int unwind_fp_stop(int err, bool gap)
{
	return err == SFBPF_STOP_FP_CHAIN && gap ? SFBPF_STOP_NO_ROW : err;
}

/*
 * The ELF address of pc in mapping m: pc - bias, folded onto the mapping's
 * first copy of its code when it repeats with a period (SFBPF_MAP_PERIOD_MASK).
 */
static __always_inline __u64 unwind_map_off(const struct sfbpf_mapping *m, __u64 pc)
{
	__u64 period = m->flags & SFBPF_MAP_PERIOD_MASK;
	__u64 off = pc - m->bias;

	if (period)
		off -= (pc - m->start) / period * period;
	return off;
}

/* The frames a walk writes, as one type: the size of a global function's argument. */
struct unwind_ips {
	__u64 ip[UNWIND_MAX_FRAMES];
};

/* The runtimes' steps inside this walk (they use the reads above). */
#include "runtime.h"

/*
 * One frame: emits the current frame into ips, then steps to its caller by
 * the PC's rule or, without one, by a runtime's frame layout (runtime.h:
 * a JVM's code) or the frame pointer (the decision table is in
 * docs/DESIGN-unwinder.md). Returns 0 to go on, 1 once st->stop is set.
 */
static __always_inline long unwind_frame(struct sfbpf_unwind_state *st, __u64 *ips,
					 const struct sfbpf_proc *proc, bool vma)
{
	const struct sfbpf_mapping *m;
	const struct sfbpf_object *obj;
	const struct sfbpf_rule *rule = NULL;
	/* In the state, not on the stack: the looped walk's calls share 512 bytes. */
	struct sfbpf_unwind_frame *next = &st->next;
	__u32 n = st->n;
	bool topmost = n == 0, switched = false, rt = false, in_rt;
	__u64 lookup;
	int err, idx;

	if (n >= st->max || n >= UNWIND_MAX_FRAMES) {
		err = SFBPF_STOP_DEPTH;
		goto stop;
	}
	ips[n & UNWIND_FRAME_MASK] = st->pc;
	st->n = n + 1;
	next->exact = false;

	lookup = st->exact ? st->pc : st->pc - 1;
	/* A runtime's code (runtime.h) is in no mapping with a table, and maybe in none known. */
	obj = NULL;
	if (!st->in_rt_code) {
		m = &proc->maps[st->map & UNWIND_MAP_MASK];
		obj = unwind_object(st, m);
		if (obj)
			rule = unwind_find_rule(st, obj, m->obj, unwind_map_off(m, lookup));
	}
	/*
	 * Past an AArch64 frame-pointer step, SP is only a lower bound (arch.h):
	 * an SP-based rule would find the wrong CFA. The frame record serves.
	 */
	if (rule && !ARCH_FP_STEP_EXACT_SP && st->fp_linked && rule->cfa_reg != SFBPF_REG_FP &&
	    rule->ra_loc != SFBPF_LOC_UNDEFINED)
		rule = NULL;
	err = RUNTIME_NOT_MINE;
	if (rule) {
		err = unwind_by_rule(st, rule, topmost, next);
	} else if (!obj && runtime_frame_wanted(st, proc, vma)) {
		/* The looped walk's callback took the step before (unwind_step()). */
		err = vma ? st->rt_err : runtime_frame(st, proc, topmost);
		rt = err == UNWIND_NEXT;
		if (rt)
			ips[n & UNWIND_FRAME_MASK] = st->rt_ip;
	}
	if (!rule && err == RUNTIME_NOT_MINE)
		err = unwind_fp_stop(unwind_by_fp(st, topmost, next, &switched), obj);
	if (err != UNWIND_NEXT)
		goto stop;
	/*
	 * Go, musl and other runtimes end their chains with a zero return
	 * address. Where a rule said where RA is, that is the end. Read
	 * through rbp (a table's gap, or code without a table) it counts only
	 * if rbp was a link of the chain: frameless code (a JIT's trampolines
	 * and stubs) leaves any value in rbp, and a guess ends nothing.
	 */
	if (!next->pc) {
		err = (rule || st->fp_linked) && !rt ? SFBPF_STOP_OUTERMOST :
						       unwind_fp_stop(SFBPF_STOP_FP_CHAIN, obj);
		goto stop;
	}

	/* Only a return address inside a known executable mapping becomes a frame. */
	lookup = next->exact ? next->pc : next->pc - 1;
	/* A table of VMAs found in the kernel grows as the walk meets them (vmafind.h). */
	if (vma && have_find_vma && st->vma_walk)
		idx = vmafind_find(st, (struct sfbpf_proc *)proc, lookup);
	else if (vma)
		idx = unwind_find_mapping_looped(proc, lookup, st->map);
	else
		idx = unwind_find_mapping(proc, lookup, st->map);
	in_rt = (rt || idx < 0) && runtime_code(st, proc, idx, lookup, vma);
	if (idx < 0 && !in_rt) {
		err = rule || rt ? SFBPF_STOP_NO_MAPPING : unwind_fp_stop(SFBPF_STOP_FP_CHAIN, obj);
		st->miss_addr = next->pc;
		goto stop;
	}
	if (n + 1 >= st->max) {
		err = SFBPF_STOP_DEPTH;
		goto stop;
	}
	st->pc = next->pc;
	st->sp = next->sp;
	st->fp = next->fp;
	/* A frame stepped by no rule may have changed the register, saying nothing. */
	st->xreg_at = rule ? next->xreg_at : UNWIND_XREG_LOST;
	st->exact = next->exact;
	st->in_rt_code = in_rt;
	if (!in_rt)
		st->map = idx;
	/* A runtime frame's saved fp may be any register's value: JIT code keeps no chain. */
	st->fp_linked = !rule && !rt;
	if (!rule && !rt) {
		st->fp_frames++;
		st->gap_frames += obj != NULL;
		st->switches += switched;
	}
	return 0;
stop:
	st->stop = err;
	return 1;
}

/* A new walk: no frames, nothing met yet. */
static __always_inline void unwind_reset(struct sfbpf_unwind_state *st)
{
	st->n = 0;
	st->fp_frames = 0;
	st->gap_frames = 0;
	st->switches = 0;
	st->fp_linked = 0;
	st->xreg_at = UNWIND_XREG_LIVE;
	st->win_len = 0;
	st->exact = 1;
	st->obj_flags = 0;
	st->last_obj = SFBPF_OBJ_NONE;
	st->miss_addr = 0;
	st->leaf_miss = 0;
	st->vma_walk = 0;
	st->vma_found = 0;
	st->vma_miss = 0;
	st->vma_looked = 0;
	st->hs_interpreted = 0;
	st->hs_compiled = 0;
	st->hs_stop = 0;
	st->in_rt_code = 0;
	st->hs_looked = 0;
	st->v8_looked = 0;
	st->v8_nwords = 0;
	st->v8_nlater = 0;
	st->v8_later_lost = 0;
	st->v8_interpreted = 0;
	st->v8_baseline = 0;
	st->v8_optimized = 0;
	st->v8_other = 0;
	st->v8_unread = 0;
	st->rt_epoch = 0;
	st->stop = SFBPF_STOP_DEPTH;
}

/*
 * Prepares the walk of the user stack described by st (reset, then pc, sp,
 * fp, regs, max set; pc not 0) into ips[0 .. st->n). Returns true when frames
 * are to be walked (unwind_frame() until it says stop); false with st->stop
 * set when the stack ends before its first step.
 */
static __always_inline bool unwind_begin(struct sfbpf_unwind_state *st, __u64 *ips,
					 const struct sfbpf_proc *proc, bool vma)
{
	struct sfbpf_unwind_frame next = {};
	bool switched = false;
	int idx;

	/* A table of VMAs found in the kernel is in the order they were met: searched in full. */
	if (vma && have_find_vma && st->vma_walk)
		idx = vmafind_find(st, (struct sfbpf_proc *)proc, st->pc);
	else if (vma)
		idx = unwind_find_mapping_looped(proc, st->pc, 0);
	else
		idx = unwind_find_mapping(proc, st->pc, 0);

	/* A runtime's code needs no mapping (runtime.h): its leaf may be newer than the table. */
	if (idx < 0 && runtime_code(st, proc, idx, st->pc, vma)) {
		st->in_rt_code = 1;
		idx = 0;
	}
	if (idx >= 0) {
		st->map = idx;
		st->proc_gen = proc->generation;
		st->stop = SFBPF_STOP_DEPTH;
		return true;
	}
	/* Still report where the sample hit. */
	ips[0] = st->pc;
	st->n = 1;
	st->stop = SFBPF_STOP_NO_MAPPING;
	st->miss_addr = st->pc;
	/*
	 * Code mapped since the loader last read the process's mappings (a
	 * JIT's new code, run for milliseconds before the refresh the report
	 * asks for) hides the whole stack. One frame-pointer step, as the
	 * kernel's walk takes it (a frameless leaf hides its caller), finds
	 * the caller; kept only if its return address lands in a known
	 * mapping, where tables take over again (row 0 of DESIGN-unwinder.md).
	 */
	if (st->max < 2 || unwind_by_fp(st, true, &next, &switched) != UNWIND_NEXT || !next.pc)
		return false;
	if (vma && have_find_vma && st->vma_walk)
		idx = vmafind_find(st, (struct sfbpf_proc *)proc, next.pc - 1);
	else if (vma)
		idx = unwind_find_mapping_looped(proc, next.pc - 1, 0);
	else
		idx = unwind_find_mapping(proc, next.pc - 1, 0);
	if (idx < 0)
		return false;
	st->leaf_miss = st->pc;
	st->miss_addr = 0;
	st->pc = next.pc;
	st->sp = next.sp;
	st->fp = next.fp;
	st->xreg_at = UNWIND_XREG_LOST;
	st->exact = 0;
	st->map = idx;
	st->fp_linked = 1;
	st->fp_frames++;
	st->switches += switched;
	st->proc_gen = proc->generation;
	st->stop = SFBPF_STOP_DEPTH;
	return true;
}

/*
 * unwind_frame() for the walk in bpf_loop() (5.17 and later), as a global
 * function: the verifier checks it once, on its own, rather than again for
 * each state the loop's iterations reach; 7.x's verifier followed those past
 * its limit (docs/DESIGN-unwinder.md, "What the verifier sees"). To it, each
 * argument may be NULL. The chained walker inlines unwind_frame(): 5.10
 * passes no pointer but the context to a global function.
 */
__noinline int unwind_frame_looped(struct sfbpf_unwind_state *st, struct unwind_ips *ips,
				   const struct sfbpf_proc *proc)
{
	if (!st || !ips || !proc)
		return 1;
	return unwind_frame(st, ips->ip, proc, true);
}

/* bpf_loop() callback: one frame (0: go on, 1: the walk ended). */
static long unwind_step(__u32 index, void *arg)
{
	struct sfbpf_unwind_ctx *c = arg;
	struct sfbpf_unwind_state *st = c->st;
	__u64 pc = st->pc;
	__u32 n = st->n;
	bool wanted;
	long stop;

	(void)index;
	/* A frame of a runtime's code, maybe: its step first, a call of its own (runtime.h). */
	wanted = runtime_frame_wanted(st, c->proc, true);
	if (wanted)
		st->rt_err = runtime_frame_looped(st, c->proc);
	stop = unwind_frame_looped(st, (struct unwind_ips *)c->ips, c->proc);
	/*
	 * Code in a table's gap that a runtime's step named (V8's builtins,
	 * running the interpreter's frames, in node's own file): stepped by fp
	 * as the gap's frames are, its identity in place of its pc. Here, not
	 * in the frame's step: one more path there took 6.1's verifier past
	 * its limit.
	 */
	if (wanted && st->rt_err == UNWIND_NEXT && st->rt_ip != pc && n < UNWIND_MAX_FRAMES &&
	    c->ips[n & UNWIND_FRAME_MASK] == pc)
		c->ips[n & UNWIND_FRAME_MASK] = st->rt_ip;
	return stop ? 1 : 0;
}

/*
 * Up to UNWIND_CHAIN_FRAMES frames of a walk begun by unwind_begin(), for the
 * chained walker of kernels without bpf_loop() (ustack.h): a bounded loop the
 * verifier follows frame by frame. Returns true once the stack has ended
 * (st->stop set), false when the caller is to go on in another program.
 */
static __always_inline bool unwind_frames(struct sfbpf_unwind_state *st, __u64 *ips,
					  const struct sfbpf_proc *proc)
{
	int i;

	for (i = 0; i < UNWIND_CHAIN_FRAMES; i++) {
		runtime_frame_remember(st, proc);
		if (unwind_frame(st, ips, proc, false))
			return true;
	}
	return false;
}

#endif /* SFBPF_UNWIND_H */
