// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a V8 frame runs, named (v8.h): a SharedFunctionInfo's function name
 * (its own, or the name V8 inferred for an anonymous function, as V8's
 * profiler shows it), its script's name, and the line of a position: an
 * interpreted frame's bytecode offset, or an optimised code object's pc,
 * through its source position table, whose entries also say which inlined
 * function a position is in and where that was called.
 *
 * Fields V8 does not publish are found where the objects show them, each
 * candidate checked by instance type: a BytecodeArray's position table (the
 * byte array among its fields whose entries read as a table of it), a
 * Code's instruction start (the field equal to its InstructionStream's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp/v8_int.h"
#include "procs/procmem.h"
#include "util/hash.h"
#include "util/vec.h"

/* Bytes of a position table read; a script's source read for its line ends. */
#define MAX_TABLE (1u << 20)
#define MAX_SOURCE (64u << 20)
/* How far back from a pc its code object's header may be. */
#define MAX_CODE_SCAN (1u << 20)
/* V8's SourcePosition: bit 0 external, script offset + 1 in 30 bits, inlining id + 1 in 16. */
#define POS_OFFSET(raw) ((int64_t)(((raw) >> 1) & 0x3fffffff) - 1)
#define POS_INLINING(raw) ((int64_t)(((raw) >> 31) & 0xffff) - 1)

static int64_t vlq(const uint8_t *p, size_t n, size_t *i, bool *ok)
{
	uint64_t bits = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*i >= n || shift > 63) {
			*ok = false;
			return 0;
		}
		b = p[(*i)++];
		bits |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return (int64_t)((bits >> 1) ^ (0 - (bits & 1)));
}

/*
 * A source position table (its bytes) read up to code offset target: the
 * position of the last entry at or before it into *raw. 1: found; 0: no
 * entry there; -1: the bytes are no table (an offset beyond limit, a
 * negative position, a cut entry).
 */
static int table_find(const uint8_t *p, size_t n, int64_t target, int64_t limit, uint64_t *raw)
{
	int64_t code = -1, pos = 0, d;
	size_t i = 0;
	bool ok = true, found = false;

	while (i < n) {
		d = vlq(p, n, &i, &ok);
		code += d >= 0 ? d : -(d + 1);
		pos += vlq(p, n, &i, &ok);
		if (!ok || code > limit || pos < 0)
			return -1;
		if (code <= target) {
			*raw = (uint64_t)pos;
			found = true;
		}
	}
	return found;
}

/* A ByteArray's bytes (tagged pointer ba) into *out (malloc'd), *n of them: 0 or an error. */
static int byte_array(struct v8 *v, uint64_t ba, uint8_t **out, size_t *n)
{
	uint16_t type;
	uint64_t w;
	int64_t len;

	*out = NULL;
	if (v8_type(v, ba, &type) || type != v->l.type_byte_array ||
	    v8_field(v, ba, v->l.fa_length, &w) || !v8_smi(w, &len) || len < 0 || len > MAX_TABLE)
		return -EINVAL;
	*n = (size_t)len;
	if (!len)
		return 0;
	*out = malloc((size_t)len);
	if (!*out)
		return -ENOMEM;
	if (procmem__read(v->pid, ba - 1 + v->l.fa_data, *out, (size_t)len)) {
		free(*out);
		*out = NULL;
		return -EFAULT;
	}
	return 0;
}

/*
 * The raw position of bytecode offset off in BytecodeArray ba: 1, 0 (no
 * entry; no table: V8 collects some lazily), -1 unreadable. The table's
 * field is the one byte array among the array's fields that reads as its
 * table (the handler table, the other, is usually empty); once one array
 * shows it alone, the process's arrays are read there.
 */
static int bytecode_position(struct v8 *v, uint64_t ba, uint32_t off, uint64_t *raw)
{
	const struct v8_layout *l = &v->l;
	uint16_t found = V8_NONE;
	uint64_t w, len_w;
	int64_t len;
	int hits = 0, r = 0;

	if (v8_field(v, ba, l->fa_length, &len_w) || !v8_smi(len_w, &len))
		return -1;
	for (uint16_t f = l->fa_length + 8; f + 8 <= l->ba_header; f += 8) {
		uint8_t *p;
		size_t n;
		uint64_t got = 0;
		int k;

		if (v->ba_spt != V8_NONE && f != v->ba_spt)
			continue;
		if (v8_field(v, ba, f, &w) || byte_array(v, w, &p, &n))
			continue;
		k = n ? table_find(p, n, off, len, &got) : -1;
		free(p);
		if (k < 0)
			continue;
		hits++;
		found = f;
		r = k;
		*raw = got;
	}
	if (hits == 1 && v->ba_spt == V8_NONE)
		v->ba_spt = found;
	return hits == 1 ? r : 0;
}

struct ends {
	uint32_t *e;
	size_t nr, cap;
	uint64_t at;
};

static int put_ends(void *ctx, const void *chars, size_t n, bool wide)
{
	struct ends *e = ctx;

	for (size_t i = 0; i < n; i++, e->at++) {
		uint16_t c = wide ? ((const uint16_t *)chars)[i] : ((const uint8_t *)chars)[i];

		if (c != '\n')
			continue;
		if (VEC_RESERVE(e->e, e->cap, e->nr + 1, 256))
			return -ENOMEM;
		e->e[e->nr++] = (uint32_t)e->at;
	}
	return 0;
}

static bool script_eq(const void *ctx, uint64_t val, const void *key)
{
	return ((const struct v8 *)ctx)->sc[val].addr == *(const uint64_t *)key;
}

/*
 * Script sc (tagged): its cached name and line ends, read once (its
 * line_ends when V8 computed them, else from its source's newlines), and
 * checked at each use: still a Script, with the same source.
 */
static const struct v8_script *script(struct v8 *v, uint64_t sc)
{
	const struct v8_layout *l = &v->l;
	uint32_t h = (uint32_t)hash__mix64(sc);
	struct v8_script s = { .addr = sc };
	struct ends e = { 0 };
	uint64_t name, len;
	uint16_t type;
	int64_t i;

	if (v8_type(v, sc, &type) || type != l->type_script ||
	    v8_field(v, sc, l->script_source, &s.source))
		return NULL;
	i = hashmap__find(&v->scripts, h, script_eq, v, &sc);
	if (i >= 0 && v->sc[i].source == s.source)
		return &v->sc[i];
	if (v8_field(v, sc, l->script_name, &name) || v8_string(v, name, s.file, sizeof(s.file)))
		s.file[0] = 0;
	if (v8_chars(v, s.source, put_ends, &e, MAX_SOURCE, &len)) {
		free(e.e);
		e = (struct ends){ 0 };
	} else if (!VEC_RESERVE(e.e, e.cap, e.nr + 1, 256)) {
		e.e[e.nr++] = (uint32_t)len; /* the last line ends with the source */
	}
	s.ends = e.e;
	s.nr = (uint32_t)e.nr;
	if (i >= 0) {
		free(v->sc[i].ends);
		v->sc[i] = s;
		return &v->sc[i];
	}
	if (VEC_RESERVE(v->sc, v->sc_cap, v->nr_sc + 1, 64) ||
	    hashmap__add(&v->scripts, h, v->nr_sc)) {
		free(s.ends);
		return NULL;
	}
	v->sc[v->nr_sc] = s;
	return &v->sc[v->nr_sc++];
}

/* The 1-based line of script offset pos: 0 when not known. */
static uint32_t line_of(const struct v8_script *s, int64_t pos)
{
	uint32_t lo = 0, hi = s->nr;

	if (pos < 0 || !s->nr || pos > s->ends[s->nr - 1])
		return 0;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (s->ends[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1;
}

/*
 * A function's name from its ScopeInfo (tagged si): past the context
 * locals' names and infos, the function's own name, or, where that is
 * empty, the name V8 inferred for it ("Module._compile"); "" when none.
 */
static void scope_name(struct v8 *v, uint64_t si, char *out, size_t size)
{
	const struct v8_layout *l = &v->l;
	uint64_t w[6];
	uint16_t type;
	int64_t n;

	out[0] = 0;
	if (l->si_ncontextlocals == V8_NONE || l->si_first_vars == V8_NONE ||
	    procmem__u64(v->pid, si - 1 + 8 + 8 * (uint64_t)l->si_ncontextlocals, &w[0]) ||
	    !v8_smi(w[0], &n) || n < 0 || n >= 75)
		return;
	if (procmem__read(v->pid, si - 1 + 8 + 8 * ((uint64_t)l->si_first_vars + 2 * (uint64_t)n),
			  w, sizeof(w)))
		return;
	for (int i = 0; i < 6; i++) {
		if ((w[i] & 3) != 1)
			continue; /* a Smi: a slot's index, a position */
		if (v8_type(v, w[i], &type) || type >= l->first_nonstring) {
			if (type == l->type_oddball)
				continue; /* undefined: no inferred name */
			return; /* past the names: the outer scope */
		}
		if (!v8_string(v, w[i], out, size) && out[0])
			return;
	}
	out[0] = 0;
}

/* sfi (tagged)'s name and script (*sc, tagged; 0 none) into f: 0, -ESTALE not a function's. */
static int function(struct v8 *v, uint64_t sfi, struct v8_func *f, uint64_t *sc)
{
	const struct v8_layout *l = &v->l;
	uint64_t w;
	uint16_t type;
	const struct v8_script *s;

	memset(f, 0, sizeof(*f));
	*sc = 0;
	if (v8_type(v, sfi, &type) || type != l->type_sfi)
		return -ESTALE;
	if (!v8_field(v, sfi, l->sfi_name, &w) && !v8_type(v, w, &type)) {
		if (type < l->first_nonstring)
			v8_string(v, w, f->name, sizeof(f->name));
		else if (type == l->type_scope_info)
			scope_name(v, w, f->name, sizeof(f->name));
	}
	if (!f->name[0])
		strcpy(f->name, "(anonymous)");
	if (!v8_field(v, sfi, l->sfi_script, &w)) {
		s = script(v, w);
		if (s) {
			*sc = w;
			strcpy(f->file, s->file);
		}
	}
	return 0;
}

int v8__function(struct v8 *v, uint64_t sfi, uint32_t off, struct v8_func *out)
{
	const struct v8_layout *l = &v->l;
	const struct v8_script *s;
	uint64_t sc, fd, raw;
	uint16_t type;
	int err;

	err = function(v, sfi | 1, out, &sc);
	if (err || off == SFBPF_V8_OFF_NONE || !sc)
		return err;
	/* Its bytecode: the function's data, or baseline code's. */
	if (v8_field(v, sfi | 1, l->sfi_function_data, &fd) || v8_type(v, fd, &type))
		return 0;
	if (type == l->type_code && l->code_bytecode != V8_NONE &&
	    (v8_field(v, fd, l->code_bytecode, &fd) || v8_type(v, fd, &type)))
		return 0;
	if (type != l->type_bytecode_array || bytecode_position(v, fd, off, &raw) != 1)
		return 0;
	s = script(v, sc);
	if (s)
		out->line = line_of(s, POS_OFFSET(raw));
	return 0;
}

/* The function (tagged sfi) at script offset pos, into f: 0 or an error. */
static int function_at(struct v8 *v, uint64_t sfi, int64_t pos, struct v8_func *f)
{
	const struct v8_script *s;
	uint64_t sc;
	int err = function(v, sfi, f, &sc);

	if (!err && sc && (s = script(v, sc)))
		f->line = line_of(s, pos);
	return err;
}

/*
 * Whether code object c (tagged) starts its instructions at s: its field
 * that points there, found on the first code object (V8 11.3 does not
 * publish it) as the one of its first fields equal to s.
 */
static bool code_starts(struct v8 *v, uint64_t c, uint64_t s)
{
	uint64_t w[12];

	if (v->code_start)
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

/* The InstructionStream whose instructions hold target: its instruction start, its Code. */
static int find_code(struct v8 *v, uint64_t target, uint64_t *start, uint64_t *code)
{
	const struct v8_layout *l = &v->l;
	uint64_t buf[512], a, hdr = l->istream_header;
	uint16_t type;

	if (l->type_istream == V8_NONE || hdr == V8_NONE || l->type_code == V8_NONE)
		return -ENOTSUP;
	for (a = (target - hdr) & ~7ULL; a + MAX_CODE_SCAN > target;) {
		uint64_t base = a >= sizeof(buf) - 8 ? a - (sizeof(buf) - 8) : 0;

		if (procmem__read(v->pid, base, buf, a - base + 8))
			return -ENOENT;
		for (;; a -= 8) {
			uint64_t m = buf[(a - base) / 8], s = a + hdr, c = 0;

			if ((m & 3) == 1 &&
			    (m == v->istream_map ||
			     (!v->istream_map &&
			      !procmem__read(v->pid, m - 1 + l->map_type, &type, 2) &&
			      type == l->type_istream))) {
				/* The code object: a field of the stream's header that is one. */
				for (uint64_t f = 8; f < hdr && !c; f += 8) {
					uint64_t w;

					if (!procmem__u64(v->pid, a + f, &w) &&
					    !v8_type(v, w, &type) && type == l->type_code)
						c = w;
				}
				if (c && code_starts(v, c, s)) {
					v->istream_map = m;
					*start = s;
					*code = c;
					return 0;
				}
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

int v8__code(struct v8 *v, uint64_t pc, bool leaf, struct v8_code_frames *out)
{
	const struct v8_layout *l = &v->l;
	uint64_t target = leaf ? pc : pc - 1, start, code, deopt, spt, raw = 0, w;
	int64_t n, pos, inl;
	uint16_t type;
	uint8_t *p = NULL;
	size_t len = 0;
	int err, found;

	out->nr = 0;
	err = find_code(v, target, &start, &code);
	if (err)
		return err;
	out->code = code;
	out->start = start;
	/* Optimised code keeps its deoptimisation data: its function, inlined ones. */
	if (l->code_deopt == V8_NONE || l->code_spt == V8_NONE || l->deopt_sfi < 0 ||
	    v8_field(v, code, l->code_deopt, &deopt) || v8_type(v, deopt, &type) ||
	    type != l->type_fixed_array || v8_field(v, deopt, l->fa_length, &w) || !v8_smi(w, &n) ||
	    n <= l->deopt_sfi || v8_field(v, deopt, l->fa_data + 8 * l->deopt_sfi, &out->sfi))
		return -ENOTSUP;
	found = !v8_field(v, code, l->code_spt, &spt) && !byte_array(v, spt, &p, &len) && len ?
			table_find(p, len, (int64_t)(target - start), INT64_MAX, &raw) :
			0;
	free(p);
	if (found != 1) {
		/* No position here: the function alone. */
		if (function_at(v, out->sfi, -1, &out->frames[0]))
			return -ESTALE;
		out->nr = 1;
		return 0;
	}
	for (;;) {
		uint64_t sfi = out->sfi;
		struct {
			uint64_t position;
			int32_t function;
			int32_t pad;
		} ip;

		pos = POS_OFFSET(raw);
		inl = POS_INLINING(raw);
		if (inl >= 0) {
			/* An inlined function's position: it, then where it was called. */
			uint64_t ips, lits;

			if (l->deopt_inlining < 0 || l->deopt_literals < 0 ||
			    n <= l->deopt_inlining || n <= l->deopt_literals ||
			    v8_field(v, deopt, l->fa_data + 8 * l->deopt_inlining, &ips) ||
			    v8_type(v, ips, &type) || type != l->type_byte_array ||
			    v8_field(v, ips, l->fa_length, &w) || !v8_smi(w, &n) ||
			    (uint64_t)inl * sizeof(ip) + sizeof(ip) > (uint64_t)n ||
			    procmem__read(v->pid, ips - 1 + l->fa_data + (uint64_t)inl * sizeof(ip),
					  &ip, sizeof(ip)) ||
			    ip.function < 0 ||
			    v8_field(v, deopt, l->fa_data + 8 * l->deopt_literals, &lits) ||
			    v8_field(v, lits, l->fa_data + 8 * (uint64_t)ip.function, &sfi))
				return -EPROTO;
			sfi &= ~2ULL; /* a weak reference */
			raw = ip.position;
			/* Read again: the inlining table's length reused n. */
			if (v8_field(v, deopt, l->fa_length, &w) || !v8_smi(w, &n))
				return -EPROTO;
		}
		if (out->nr >= V8_MAX_INLINED)
			return 0;
		err = function_at(v, sfi, pos, &out->frames[out->nr]);
		if (err)
			return err;
		out->nr++;
		if (inl < 0)
			return 0;
	}
}

int v8__function_key(struct v8 *v, uint64_t sfi, uint64_t *key)
{
	uint16_t type;

	if (v8_type(v, sfi | 1, &type) || type != v->l.type_sfi ||
	    v8_field(v, sfi | 1, v->l.sfi_name, key))
		return -ESTALE;
	return 0;
}

bool v8__code_is(struct v8 *v, uint64_t code, uint64_t start)
{
	uint16_t type;

	return !v8_type(v, code, &type) && type == v->l.type_code && v->code_start &&
	       code_starts(v, code, start);
}
