// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * V8's code objects from a pc (v8.h: v8__code): the object whose
 * instructions hold it, and what optimised code runs there. V8 10.x keeps
 * a Code's instructions in the Code (its header's size published); 11 and
 * later in an InstructionStream, whose header points back at its Code,
 * which points at the instructions. The header is found by scanning back
 * from the pc for a word that is a map of the right instance type, and
 * believed only when the Code points at those very instructions.
 *
 * An optimised Code keeps its deoptimisation data: its function's
 * SharedFunctionInfo (behind a wrapper in 13.x), the functions inlined
 * into it (a literal array) and where each was inlined (a byte array of
 * positions); its source position table tells, for a pc, the script
 * position and which inlined function it is in. Where V8 does not publish
 * which field or element holds one of these (10.x, 12+), the first that is
 * of the right type is taken, on the first optimised code met, and kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp/v8_int.h"
#include "procs/procmem.h"

/* How far back from a pc its code object's header may be. */
#define MAX_CODE_SCAN (1u << 20)
/* Elements of a deoptimisation data array looked at when finding one. */
#define DEOPT_LOOK 12

/* A tagged reference to a function (strong, weak, or in a wrapper): its SharedFunctionInfo. */
static uint64_t shared_of(struct v8 *v, uint64_t w)
{
	uint16_t type;

	w &= ~2ULL; /* a weak reference */
	if (v8_type(v, w, &type))
		return 0;
	if (type == v->l.type_sfi)
		return w;
	if (type == v->l.type_sfi_wrapper && v->l.wrapper_shared != V8_NONE &&
	    !v8_field(v, w, v->l.wrapper_shared, &w) && !v8_type(v, w, &type) &&
	    type == v->l.type_sfi)
		return w;
	return 0;
}

/*
 * Whether code object c (tagged) starts its instructions at s: 10.x's
 * inline; else its field that points there (V8 11.3 does not publish it:
 * the first of its fields equal to s, on the first code object).
 */
static bool code_starts(struct v8 *v, uint64_t c, uint64_t s)
{
	uint64_t w[12];

	if (v->l.code_inline)
		return c - 1 + v->l.istream_header == s;
	if (v->code_start != V8_NONE)
		return !v8_field(v, c, v->code_start, &w[0]) && w[0] == s;
	if (procmem__read(v->pid, c - 1 + 8, w, sizeof(w)))
		return false;
	for (int i = 0; i < 12; i++)
		if (w[i] == s) {
			v->code_start = (uint16_t)(8 + 8 * i);
			return true;
		}
	return false;
}

/* The code object at a (untagged) whose map is m, if it is one: tagged, else 0. */
static uint64_t code_at(struct v8 *v, uint64_t a, uint64_t m)
{
	const struct v8_layout *l = &v->l;
	uint16_t type, want = l->code_inline ? l->type_code : l->type_istream;
	uint64_t c = 0;

	if ((m & 3) != 1 || (v->istream_map && m != v->istream_map))
		return 0;
	if (!v->istream_map &&
	    (procmem__read(v->pid, m - 1 + l->map_type, &type, 2) || type != want))
		return 0;
	if (l->code_inline)
		return a + 1;
	/* The stream's Code: a field of its header that is one. */
	for (uint64_t f = 8; f < l->istream_header && !c; f += 8) {
		uint64_t w;

		if (!procmem__u64(v->pid, a + f, &w) && !v8_type(v, w, &type) &&
		    type == l->type_code)
			c = w;
	}
	return c;
}

/* The code object whose instructions hold target: its instruction start, its Code. */
static int find_code(struct v8 *v, uint64_t target, uint64_t *start, uint64_t *code)
{
	const struct v8_layout *l = &v->l;
	uint64_t buf[4096 / 8], a, hdr = l->istream_header;

	if (hdr == V8_NONE || l->type_code == V8_NONE ||
	    (!l->code_inline && l->type_istream == V8_NONE) || target < hdr)
		return -ENOTSUP;
	/*
	 * A page at a time, back from target: a code page's first is its
	 * guard (unreadable), which a read across it would fail at.
	 */
	for (a = (target - hdr) & ~7ULL; a + MAX_CODE_SCAN > target;) {
		uint64_t base = a & ~(uint64_t)(sizeof(buf) - 1);

		if (procmem__read(v->pid, base, buf, a - base + 8))
			return -ENOENT;
		for (;; a -= 8) {
			uint64_t c = code_at(v, a, buf[(a - base) / 8]);

			if (c && code_starts(v, c, a + hdr)) {
				v->istream_map = buf[(a - base) / 8];
				*start = a + hdr;
				*code = c;
				return 0;
			}
			if (a == base)
				break;
		}
		if (!base)
			break;
		a = base - 8;
	}
	return -ENOENT;
}

/* Element i of fixed array a (tagged): 0, or an error (out of it, unreadable). */
static int element(struct v8 *v, uint64_t a, int64_t i, uint64_t *out)
{
	uint64_t w;
	int64_t n;

	if (i < 0 || v8_field(v, a, v->l.fa_length, &w) || !v8_smi(w, &n) || i >= n)
		return -EINVAL;
	return procmem__u64(v->pid, a - 1 + v->l.fa_data + 8 * (uint64_t)i, out);
}

/*
 * Code c's deoptimisation data (tagged), its function's SharedFunctionInfo
 * (tagged): 0, or -ENOTSUP (no such data: a stub, baseline code). Finds the
 * fields and elements V8 does not publish on an optimised code: the first
 * field of the code that is a fixed array with a function in it, and the
 * position table the first byte array after it; in the data, the function
 * the first element that is one, the positions of inlining the first byte
 * array after it, the inlined functions the last array before it.
 */
static int deopt_data(struct v8 *v, uint64_t c, uint64_t *deopt, uint64_t *sfi)
{
	uint16_t type, f;
	uint64_t w;
	int16_t i;

	if (v->code_deopt == V8_NONE) {
		for (f = 8; f <= 40 && v->code_deopt == V8_NONE; f += 8)
			if (!v8_field(v, c, f, &w) && !v8_type(v, w, &type) &&
			    v8_is_fixed_array(v, type))
				for (i = 0; i < DEOPT_LOOK; i++)
					if (!element(v, w, i, sfi) && shared_of(v, *sfi)) {
						v->code_deopt = f;
						v->deopt_sfi = v->deopt_sfi < 0 ? i : v->deopt_sfi;
						break;
					}
		for (f = v->code_deopt + 8; v->code_deopt != V8_NONE && f <= 48; f += 8)
			if (!v8_field(v, c, f, &w) && !v8_type(v, w, &type) &&
			    v8_is_byte_array(v, type)) {
				v->code_spt = f;
				break;
			}
		if (v->code_deopt == V8_NONE || v->code_spt == V8_NONE) {
			v->code_deopt = v->code_spt = V8_NONE;
			return -ENOTSUP;
		}
	}
	if (v8_field(v, c, v->code_deopt, deopt) || v8_type(v, *deopt, &type) ||
	    !v8_is_fixed_array(v, type) || element(v, *deopt, v->deopt_sfi, &w) ||
	    !(*sfi = shared_of(v, w)))
		return -ENOTSUP;
	if (v->deopt_inlining < 0)
		for (i = v->deopt_sfi + 1; i < DEOPT_LOOK; i++)
			if (!element(v, *deopt, i, &w) && !v8_type(v, w, &type) &&
			    v8_is_byte_array(v, type)) {
				v->deopt_inlining = i;
				break;
			}
	if (v->deopt_literals < 0)
		for (i = v->deopt_sfi - 1; i >= 0; i--)
			if (!element(v, *deopt, i, &w) && (w & 3) == 1 && !v8_type(v, w, &type) &&
			    !v8_is_byte_array(v, type)) {
				v->deopt_literals = i;
				break;
			}
	return 0;
}

/* Inlining position id of deopt: the inlined function (tagged) and where it was called. */
static int inlined(struct v8 *v, uint64_t deopt, int64_t id, uint64_t *sfi, uint64_t *call)
{
	struct {
		uint64_t position;
		int32_t function;
		int32_t pad;
	} ip;
	uint64_t ips, lits, w;
	uint16_t type;
	int64_t n;

	if (element(v, deopt, v->deopt_inlining, &ips) || v8_type(v, ips, &type) ||
	    !v8_is_byte_array(v, type) || v8_field(v, ips, v->l.fa_length, &w) || !v8_smi(w, &n) ||
	    (uint64_t)(id + 1) * sizeof(ip) > (uint64_t)n ||
	    procmem__read(v->pid, ips - 1 + v->l.fa_data + (uint64_t)id * sizeof(ip), &ip,
			  sizeof(ip)) ||
	    element(v, deopt, v->deopt_literals, &lits) || element(v, lits, ip.function, &w) ||
	    !(*sfi = shared_of(v, w)))
		return -EPROTO;
	*call = ip.position;
	return 0;
}

int v8__code(struct v8 *v, uint64_t pc, bool leaf, struct v8_code_frames *out)
{
	uint64_t target = leaf ? pc : pc - 1, start, code, deopt, spt, raw = 0;
	uint8_t *p = NULL;
	size_t len = 0;
	int err, found;

	out->nr = 0;
	err = find_code(v, target, &start, &code);
	if (err)
		return err;
	out->code = code;
	out->start = start;
	err = deopt_data(v, code, &deopt, &out->sfi);
	if (err)
		return err;
	found = !v8_field(v, code, v->code_spt, &spt) && !v8_byte_array(v, spt, &p, &len) && len ?
			v8_table_find(p, len, (int64_t)(target - start), INT64_MAX, &raw) :
			0;
	free(p);
	if (found != 1) {
		/* No position here: the function alone. */
		if (v8_function_at(v, out->sfi, -1, &out->frames[0]))
			return -ESTALE;
		out->nr = 1;
		return 0;
	}
	while (out->nr < V8_MAX_INLINED) {
		uint64_t sfi = out->sfi, call = 0;
		int64_t id = V8_POS_INLINING(raw);

		/* An inlined function's position: it, then where it was called. */
		if (id >= 0 && (v->deopt_inlining < 0 || v->deopt_literals < 0 ||
				inlined(v, deopt, id, &sfi, &call)))
			return -EPROTO;
		err = v8_function_at(v, sfi, V8_POS_OFFSET(raw), &out->frames[out->nr]);
		if (err)
			return err;
		out->nr++;
		if (id < 0)
			break;
		raw = call;
	}
	return 0;
}

bool v8__code_is(struct v8 *v, uint64_t code, uint64_t start)
{
	uint16_t type;

	return !v8_type(v, code, &type) && type == v->l.type_code &&
	       (v->l.code_inline || v->code_start != V8_NONE) && code_starts(v, code, start);
}
