/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runtimes read after the native walk (runtime.h): PHP, Ruby, Perl and
 * CPython, whose frames live in the thread's own state. A process runs at
 * most one of them; its walk appends that runtime's frames after the kernel
 * frames. The looped form (5.17 and later) tries each in turn in its one
 * program. The chained form (5.10 to 5.16) finishes a sample in a last link
 * of the runtime's own (ustack.h: USTACK_CHAIN_FINISH + enum rt_after), so
 * each runtime's walk is verified alone within the verifier's million
 * instructions (one link for all four took 831k of them, and Ruby's walk
 * named neither C methods nor blocks' owners there).
 * Include after python.h, php.h, ruby.h and perl.h.
 */
#ifndef SFBPF_AFTERWALK_H
#define SFBPF_AFTERWALK_H

/* An after-walk runtime; CPython's last link also names a chained walk's V8 frames. */
enum rt_after {
	RT_AFTER_PY,
	RT_AFTER_PHP,
	RT_AFTER_RB,
	RT_AFTER_PL,
	RT_AFTER__COUNT,
};

#define RT_AFTER_ALL ((1U << RT_AFTER__COUNT) - 1)

_Static_assert(USTACK_CHAIN_FINISH + RT_AFTER__COUNT == USTACK_CHAIN_LINKS,
	       "one last link per after-walk runtime");
_Static_assert(RT_AFTER__COUNT == SFBPF_CHAIN_FINISHES, "the loader links every last link");

/* One sample's after-walks: in the per-CPU scratch value. */
struct rt_walks {
	struct py_walk py;
	struct php_walk php;
	struct rb_walk rb;
	struct pl_walk pl;
	__u32 kind; /* the chained form's: rt_after_kind() at the sample's start */
	__u32 pad;
};

/*
 * The after-walk runtime whose settings tgid has (CPython's: also none),
 * for the chained form's last link: a lookup for each runtime before the
 * one found, paid on 5.10 to 5.16 only, in the chain's first program. In
 * the links, a choice of constants before the tail call took 5.10's
 * verifier past its limit on the walk's link (each a state of its own).
 */
static __always_inline void rt_after_kind(struct rt_walks *w, __u32 tgid)
{
	w->kind = RT_AFTER_PY;
	if (bpf_map_lookup_elem(&php_procs, &tgid))
		w->kind = RT_AFTER_PHP;
	else if (bpf_map_lookup_elem(&rb_procs, &tgid))
		w->kind = RT_AFTER_RB;
	else if (bpf_map_lookup_elem(&pl_procs, &tgid))
		w->kind = RT_AFTER_PL;
}

/*
 * The walk_chain slot of the sample's last link: its runtime's, CPython's
 * where the walk met V8 frames (named there; the looped form's after-walk
 * puts V8 first too).
 */
static __always_inline __u32 rt_after_link(const struct rt_walks *w,
					   const struct sfbpf_unwind_state *st)
{
	__u32 kind = w->kind;

	if (st->v8_nwords || st->v8_nlater)
		kind = RT_AFTER_PY;
	return USTACK_CHAIN_FINISH + kind;
}

/*
 * The frames of the runtimes in kinds (a mask of 1 << enum rt_after, a
 * constant: the others are not compiled in) of task's thread (tgid, tid)
 * into slots[0 ..), at most max: how many. st and leaf_pc: the sample's
 * user registers and pc, for PHP's leaf (NULL, 0: none). chained: the
 * walks' bounded loops instead of bpf_loop().
 */
static __always_inline __u32 rt_after_walk(struct rt_walks *w, __u64 *slots,
					   struct task_struct *task, __u32 tgid, __u32 tid,
					   __u32 max, __u8 *flags, struct sfbpf_stats *cnt,
					   bool chained, const struct sfbpf_unwind_state *st,
					   __u64 leaf_pc, __u32 kinds)
{
	int n;

	if (kinds & (1U << RT_AFTER_PHP)) {
		n = php_walk(&w->php, slots, task, tgid, tid, max, flags, cnt, chained, st,
			     leaf_pc);
		if (n >= 0)
			return n;
	}
	if (kinds & (1U << RT_AFTER_RB)) {
		n = rb_walk(&w->rb, slots, task, tgid, max, flags, cnt, chained);
		if (n >= 0)
			return n;
	}
	if (kinds & (1U << RT_AFTER_PL)) {
		n = pl_walk(&w->pl, slots, task, tgid, tid, max, flags, cnt, chained);
		if (n >= 0)
			return n;
	}
	if (kinds & (1U << RT_AFTER_PY))
		return py_walk(&w->py, slots, task, tgid, tid, max, cnt, chained);
	return 0;
}

#endif /* SFBPF_AFTERWALK_H */
