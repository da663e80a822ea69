// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * runtime__splice_after() (profile/runtime.h), the splice of every runtime
 * whose frames the BPF walk sends after the native ones (CPython, PHP,
 * Ruby, Perl): each native frame of the eval loop takes its run of the
 * runtime's frames; runs no eval frame took go outermost where the native
 * walk was cut short (their eval frames are in what was not read) or has
 * no eval frame (the loop's code unknown), and at the leaf where it is
 * whole (the innermost runs, pushed and their loop not yet entered: a block
 * rb_yield is setting up). JIT code's frames take runs too, but one the loop
 * called (an eval frame the nearest outside it, no entry frame between: Ruby's
 * YJIT entered from vm_exec_core through vm_sendish) is one run with it.
 * Driven by tests/splice.test.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TEST_PREFIX "splice-"
#include "testlib.h"
#include "bpf/abi.h"
#include "interp/frame_names.h"
#include "profile/runtime.h"

/*
 * Native pcs: the eval loop's code is [EVAL, EVAL + 0x100), JIT code's
 * [JIT, JIT + 0x100), the function where runs begin [ENTRY, ENTRY + 0x100).
 */
#define EVAL 0x5000
#define JIT 0x7000
#define ENTRY 0x9000
#define NATIVE(n) (0x1000 + (n)*0x10)
#define RT(k) (frame_names__ip(100 + (k))) /* the runtime's frame k (innermost 0) */

static int in_eval(const void *ctx, uint64_t pc)
{
	(void)ctx;
	if (pc >= EVAL && pc < EVAL + 0x100)
		return RUNTIME_EVAL_LOOP;
	if (pc >= JIT && pc < JIT + 0x100)
		return RUNTIME_EVAL_JIT;
	return pc >= ENTRY && pc < ENTRY + 0x100 ? RUNTIME_EVAL_ENTRY : 0;
}

static struct sfbpf_sample in, out;

/*
 * One case: native frames (leaf first: an eval frame's pc is EVAL + 1, a
 * return address), the runtime's runs (their sizes, innermost first), the
 * native walk's stop; out's user frames must be want (leaf first).
 */
static void one(const char *name, const uint64_t *natives, uint32_t nn, const uint32_t *runs,
		uint32_t nr, uint8_t stop, const uint64_t *want, uint32_t nw, bool want_left)
{
	uint64_t ids[32];
	bool entry[32], left, was_short;
	uint32_t npy = 0, i, r;
	char got[512] = "", exp[512] = "";

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	memcpy(in.ips, natives, nn * sizeof(*natives));
	in.nr_user = (uint16_t)nn;
	in.stop = stop;
	for (r = 0; r < nr; r++)
		for (i = 0; i < runs[r]; i++, npy++) {
			ids[npy] = 100 + npy;
			entry[npy] = i + 1 == runs[r];
		}
	in.nr_py = (uint16_t)npy;
	runtime__splice_after(&in, &out, ids, entry, npy, in_eval, NULL, &left, &was_short);
	for (i = 0; i < out.nr_user; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), " %#llx",
			 (unsigned long long)out.ips[i]);
	for (i = 0; i < nw; i++)
		snprintf(exp + strlen(exp), sizeof(exp) - strlen(exp), " %#llx",
			 (unsigned long long)want[i]);
	report(!strcmp(got, exp) && left == want_left, name, "got%s (left %d), want%s (left %d)",
	       got, left, exp, want_left);
}

int main(void)
{
	/* Two runs, two eval frames: each run in place of its eval frame. */
	const uint64_t two[] = { NATIVE(1), EVAL + 1, NATIVE(2), NATIVE(3), EVAL + 1, NATIVE(4) };
	const uint32_t runs2[] = { 2, 1 };
	const uint64_t want2[] = {
		NATIVE(1), RT(0), RT(1), NATIVE(2), NATIVE(3), RT(2), NATIVE(4)
	};
	/* A third run, pushed, its loop not entered: at the leaf of a whole walk. */
	const uint32_t runs3[] = { 1, 2, 1 };
	const uint64_t want3[] = { RT(0),     NATIVE(1), RT(1), RT(2),
				   NATIVE(2), NATIVE(3), RT(3), NATIVE(4) };
	/* The same where the walk was cut short: the outermost run goes outermost. */
	const uint64_t want3cut[] = { NATIVE(1), RT(0), NATIVE(2), NATIVE(3),
				      RT(1),	 RT(2), NATIVE(4), RT(3) };
	/* A run short: the outer eval frame keeps its native frame. */
	const uint32_t runs1[] = { 2 };
	const uint64_t want1[] = { NATIVE(1), RT(0),	RT(1),	  NATIVE(2),
				   NATIVE(3), EVAL + 1, NATIVE(4) };
	/* No eval frame (its loop not found), the walk whole: outermost, as said. */
	const uint64_t none[] = { NATIVE(1), NATIVE(2) };
	const uint64_t wantnone[] = { NATIVE(1), NATIVE(2), RT(0), RT(1), RT(2) };

	one("runs-in-their-eval-frames", two, 6, runs2, 2, SFBPF_STOP_OUTERMOST, want2, 7, false);
	one("runs-in-their-eval-frames-cut", two, 6, runs2, 2, SFBPF_STOP_READ, want2, 7, false);
	one("pushed-run-at-the-leaf", two, 6, runs3, 3, SFBPF_STOP_OUTERMOST, want3, 8, false);
	one("cut-walk-run-outermost", two, 6, runs3, 3, SFBPF_STOP_READ, want3cut, 8, true);
	one("eval-frame-without-run", two, 6, runs1, 1, SFBPF_STOP_OUTERMOST, want1, 7, false);
	one("no-eval-frame-whole", none, 2, runs2, 2, SFBPF_STOP_OUTERMOST, wantnone, 5, true);

	/* A JIT frame called by the loop: one run, in the loop frame's place; the JIT frame goes.
	 */
	const uint64_t jit_in[] = { NATIVE(1), JIT + 1, EVAL + 1, NATIVE(4) };
	const uint32_t jit_in_runs[] = { 3 };
	const uint64_t want_jit_in[] = { NATIVE(1), RT(0), RT(1), RT(2), NATIVE(4) };
	/* The same at the leaf (the pc itself, no return address). */
	const uint64_t jit_leaf[] = { JIT, EVAL + 1, NATIVE(4) };
	const uint32_t jit_leaf_runs[] = { 2 };
	const uint64_t want_jit_leaf[] = { RT(0), RT(1), NATIVE(4) };
	/* Called through a helper of the loop's (vm_sendish): it goes too. */
	const uint64_t jit_helper[] = { NATIVE(1), JIT + 1, NATIVE(2), EVAL + 1, ENTRY + 1 };
	const uint64_t want_jit_helper[] = { NATIVE(1), RT(0), RT(1), RT(2), ENTRY + 1 };
	/* A JIT frame the entry called (a run beginning in JIT code): a run of its own. */
	const uint64_t jit_own[] = {
		NATIVE(1), JIT + 1, ENTRY + 1, NATIVE(3), EVAL + 1, NATIVE(4)
	};
	const uint64_t want_jit_own[] = { NATIVE(1), RT(0), RT(1),    ENTRY + 1,
					  NATIVE(3), RT(2), NATIVE(4) };
	/* The loop called by a JIT frame directly: two runs (only JIT inside loop is one). */
	const uint64_t loop_in_jit[] = { EVAL + 1, JIT + 1, NATIVE(4) };
	const uint32_t runs11[] = { 1, 1 };
	const uint64_t want_loop_in_jit[] = { RT(0), RT(1), NATIVE(4) };

	one("jit-inside-eval-one-run", jit_in, 4, jit_in_runs, 1, SFBPF_STOP_OUTERMOST, want_jit_in,
	    5, false);
	one("jit-leaf-inside-eval", jit_leaf, 3, jit_leaf_runs, 1, SFBPF_STOP_OUTERMOST,
	    want_jit_leaf, 3, false);
	one("jit-through-helper-one-run", jit_helper, 5, jit_in_runs, 1, SFBPF_STOP_OUTERMOST,
	    want_jit_helper, 5, false);
	one("jit-own-run", jit_own, 6, runs2, 2, SFBPF_STOP_OUTERMOST, want_jit_own, 7, false);
	one("eval-inside-jit-two-runs", loop_in_jit, 3, runs11, 2, SFBPF_STOP_OUTERMOST,
	    want_loop_in_jit, 3, false);
	return failures ? 1 : 0;
}
