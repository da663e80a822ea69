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
 * position of the last entry at or before it (INT64_MIN: the first entry)
 * into *raw. 1: found; 0: no entry there; -1: the bytes are no table (an
 * offset beyond limit, a negative position, a cut entry).
 */
int v8_table_find(const uint8_t *p, size_t n, int64_t target, int64_t limit, uint64_t *raw)
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
		if (code <= target || (target == INT64_MIN && !found)) {
			*raw = (uint64_t)pos;
			found = true;
		}
	}
	return found;
}

/* A ByteArray's bytes (tagged pointer ba) into *out (malloc'd), *n of them: 0 or an error. */
int v8_byte_array(struct v8 *v, uint64_t ba, uint8_t **out, size_t *n)
{
	uint16_t type;
	uint64_t w;
	int64_t len;

	*out = NULL;
	if (v8_type(v, ba, &type) || !v8_is_byte_array(v, type) ||
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

	if (v8_field(v, ba, l->ba_length, &len_w) || !v8_smi(len_w, &len))
		return -1;
	for (uint16_t f = l->ba_length + 8; f + 8 <= l->ba_header; f += 8) {
		uint8_t *p;
		size_t n;
		uint64_t got = 0;
		int k;

		if (v->ba_spt != V8_NONE && f != v->ba_spt)
			continue;
		if (v8_field(v, ba, f, &w) || v8_byte_array(v, w, &p, &n))
			continue;
		k = n ? v8_table_find(p, n, off == SFBPF_V8_OFF_NONE ? INT64_MIN : off, len, &got) :
			-1;
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

/* The BytecodeArray (tagged) inside object o, one of its first fields: 0 if none. */
static uint64_t bytecode_in(struct v8 *v, uint64_t o)
{
	uint16_t type;
	uint64_t w;

	for (uint16_t f = 8; f <= 64; f += 8)
		if (!v8_field(v, o, f, &w) && !v8_type(v, w, &type) &&
		    type == v->l.type_bytecode_array)
			return w;
	return 0;
}

/*
 * A function's bytecode (tagged; 0 none): its data, or baseline code's, or
 * (V8 12+, which publishes neither) the SharedFunctionInfo's field that holds
 * it, bare or in a wrapper (BytecodeWrapper, InterpreterData) or baseline
 * code, by type.
 */
static uint64_t bytecode_of(struct v8 *v, uint64_t sfi)
{
	const struct v8_layout *l = &v->l;
	uint16_t type;
	uint64_t fd;

	if (l->sfi_function_data != V8_NONE) {
		if (v8_field(v, sfi, l->sfi_function_data, &fd) || v8_type(v, fd, &type))
			return 0;
		/* Baseline code's: its field V8 publishes, else (V8 10) the one of its type. */
		if (type == l->type_code && l->code_bytecode == V8_NONE)
			return bytecode_in(v, fd);
		if (type == l->type_code &&
		    (v8_field(v, fd, l->code_bytecode, &fd) || v8_type(v, fd, &type)))
			return 0;
		if (type == l->type_interpreter_data)
			return bytecode_in(v, fd);
		return type == l->type_bytecode_array ? fd : 0;
	}
	for (uint16_t f = 8; f <= 64; f += 8) {
		if (v8_field(v, sfi, f, &fd) || v8_type(v, fd, &type))
			continue;
		if (type == l->type_bytecode_array)
			return fd;
		/* A wrapper, or baseline code: the bytecode it holds, by type. */
		if (type == l->type_bytecode_wrapper || type == l->type_interpreter_data ||
		    type == l->type_code)
			return bytecode_in(v, fd);
	}
	return 0;
}

int v8__function(struct v8 *v, uint64_t sfi, uint32_t off, struct v8_func *out)
{
	const struct v8_script *s;
	uint64_t sc, fd, raw;
	int err;

	err = function(v, sfi | 1, out, &sc);
	if (err || !sc)
		return err;
	/*
	 * Baseline code's frames keep no offset (its pc has it): they are named
	 * at the function's first position (its table's first entry), as V8's
	 * profiler names a function by where it begins.
	 */

	fd = bytecode_of(v, sfi | 1);
	if (!fd || bytecode_position(v, fd, off, &raw) != 1)
		return 0;
	s = script(v, sc);
	if (s)
		out->line = line_of(s, V8_POS_OFFSET(raw));
	return 0;
}

/* The function (tagged sfi) at script offset pos, into f: 0 or an error. */
int v8_function_at(struct v8 *v, uint64_t sfi, int64_t pos, struct v8_func *f)
{
	const struct v8_script *s;
	uint64_t sc;
	int err = function(v, sfi, f, &sc);

	if (!err && sc && (s = script(v, sc)))
		f->line = line_of(s, pos);
	return err;
}

int v8__function_key(struct v8 *v, uint64_t sfi, uint64_t *key)
{
	uint16_t type;

	if (v8_type(v, sfi | 1, &type) || type != v->l.type_sfi ||
	    v8_field(v, sfi | 1, v->l.sfi_name, key))
		return -ESTALE;
	return 0;
}
