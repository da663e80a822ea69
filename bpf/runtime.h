/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The language runtimes in the BPF programs: the hooks a runtime's walk
 * fills (userspace's half, which detects, attaches and names: profile/
 * runtime.h). A runtime's frames are read in one of two places:
 *
 * Inside the native walk, for code that has no table: a JIT's code heaps
 * and an interpreter generated at start-up, in anonymous mappings. Its
 * frames step like native ones, each sent as an identity userspace names
 * (never a name). The hooks, called by unwind.h:
 *   runtime_code()          whether an address is a runtime's code; it needs
 *                           no known mapping (heaps commit code after the
 *                           loader read the maps), st->in_rt_code then
 *   runtime_frame_wanted()  whether st->pc's frame is a runtime's to step
 *   runtime_frame()         the step: st->next, the frame's identity in
 *                           st->rt_ip; UNWIND_NEXT, a stop reason, or
 *                           RUNTIME_NOT_MINE for the native step to take it;
 *                           told whether the frame is the leaf (its frame
 *                           may not be whole there), as the caller knows it
 *   runtime_frame_looped()  the same for the walk in bpf_loop(), called by
 *                           its callback before unwind_frame_looped(): the
 *                           verifier checks a global function once, and a
 *                           step inside the frame's call went past 512
 *                           bytes of stack (docs/DESIGN-hotspot.md)
 * HotSpot (hotspot.h), V8 (v8.h: its frames keep fp, the step adds their
 * identity). A process without a runtime's settings pays one hash lookup a
 * sample for each.
 *
 * After the native walk, for an interpreter whose frames live in the
 * thread's own state: the programs call its walk once the native and kernel
 * frames are in (profile_runtimes() in profile.bpf.c, offcpu_runtimes() in
 * offcpu.bpf.c), which appends them as slots after the kernel frames;
 * userspace puts them in place of the eval loop's native frames. CPython
 * (python.h: py_walk()), one hash lookup a sample for other processes.
 *
 * A new runtime is one of these: its header, its case in the hooks below or
 * in the programs' after-walk function, and its struct runtime_ops.
 */
#ifndef SFBPF_RUNTIME_H
#define SFBPF_RUNTIME_H

/* Not a stop reason: the frame is no runtime's; the native step (frame pointer) takes it. */
#define RUNTIME_NOT_MINE (SFBPF_STOP__COUNT + 1)

#include "hotspot.h"
#include "v8.h"

/*
 * V8's step is the looped walk's only (5.17 and later, bpf_loop()): a
 * global function the verifier checks once. Inlined into the chained
 * walker's frames it took that program past the verifier's million
 * instructions; there, V8's frames step by fp, as native code, and are
 * named in the chain's last link (v8.h: v8_remember(), v8_later_names()).
 */
static __always_inline int runtime_code(struct sfbpf_unwind_state *st,
					const struct sfbpf_proc *proc, int idx, __u64 addr,
					bool looped)
{
	/*
	 * The global functions' results as they are, or'd, never branched on
	 * here: a constant per branch doubled the states 6.1's verifier
	 * followed in the walk's frame, past its limit.
	 */
	if (!looped)
		return hotspot_code(st, proc, idx, addr);
	return hotspot_code_looped(st, proc, idx, addr) | v8_code_looped(st, proc, idx, addr);
}

/*
 * Whether st->pc's frame is a runtime's: in a mapping without a table
 * (HotSpot's code heaps, V8's JIT code), or, looped, in a table's gap
 * (V8's builtins, in node's own file).
 */
static __always_inline bool runtime_frame_wanted(struct sfbpf_unwind_state *st,
						 const struct sfbpf_proc *proc, bool looped)
{
	if (!looped)
		return hotspot_wanted(st, proc);
	/*
	 * A process known to have no V8 settings (looked up once a sample)
	 * pays no call a frame: the call cost kcost's walk 11 ns a frame
	 * (46 to 57).
	 */
	return hotspot_wanted(st, proc) | (st->v8_looked == 1 ? 0 : v8_wanted_looped(st, proc));
}

/* The chained walker, before each frame's step: what a runtime names later (v8.h). */
static __always_inline void runtime_frame_remember(struct sfbpf_unwind_state *st,
						   const struct sfbpf_proc *proc)
{
	v8_remember(st, proc);
}

/* The chained walker, before its first link's frames: a runtime's leaf it would miss (v8.h). */
static __always_inline void runtime_leaf_chained(struct sfbpf_unwind_state *st, __u64 *ips,
						 const struct sfbpf_proc *proc)
{
	v8_leaf_chained(st, ips, proc);
}

/* The chained walker's step (hotspot.h's). */
static __always_inline int runtime_frame(struct sfbpf_unwind_state *st,
					 const struct sfbpf_proc *proc, bool topmost)
{
	return hotspot_frame(st, proc, topmost);
}

static __always_inline int runtime_frame_looped(struct sfbpf_unwind_state *st,
						const struct sfbpf_proc *proc)
{
	int err = hotspot_frame_looped(st, proc);

	return err == RUNTIME_NOT_MINE ? v8_frame_looped(st, proc) : err;
}

#endif /* SFBPF_RUNTIME_H */
