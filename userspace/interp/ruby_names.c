// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Naming Ruby's frames from the process (ruby.h's ruby__frame): an iseq's
 * label, path and line, a method's owner, a block's method, a C method's
 * name. Every read is bounded, every object checked by its type before it
 * is believed: a frame unreadable or gone is never another's name.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "interp/ruby.h"
#include "interp/ruby_int.h"
#include "procs/procmem.h"

#define STR_MAX 4096 /* a longer label or path is none of a script's: the read stops */
#define POSITIONS_MAX (1U << 24)

/*
 * The succinct table of an iseq's instruction positions (iseq.c's, the
 * same since 2.6): the rank of each position below IMM_POSITIONS packed in
 * 7 bits, 9 to a word; then blocks of 512 positions, each a rank, the
 * ranks of its 64-bit words (9 bits each) and the words.
 */
#define IMM_POSITIONS 54
#define IMM_WORDS (IMM_POSITIONS / 9)
#define SUCC_BLOCK_BYTES 80 /* unsigned rank; uint64_t word ranks; uint64_t bits[8] */
#define SUCC_BLOCK_RANKS 8
#define SUCC_BLOCK_BITS 16

int ruby_read_str(const struct ruby *r, uint64_t v, char *buf, size_t size)
{
	const struct ruby_layout *l = r->l;
	uint64_t flags, len, ptr;
	int err;

	buf[0] = '\0';
	if ((err = is_type(r, v, l->str.t_string, &flags)))
		return err;
	if (flags & l->str.noembed) {
		if ((err = rd(r, v + l->str.len, &len)) || (err = rd(r, v + l->str.ptr, &ptr)))
			return err;
	} else {
		ptr = v + l->str.ary;
		if (l->str.embed_len_mask)
			len = (flags & l->str.embed_len_mask) >> l->str.embed_len_shift;
		else if ((err = rd(r, v + l->str.len, &len)))
			return err;
	}
	if (len > STR_MAX)
		return -EINVAL;
	if (len >= size)
		len = size - 1;
	err = procmem__read(r->pid, ptr, buf, len);
	buf[err ? 0 : len] = '\0';
	return err;
}

/* An iseq's path: its pathobj, a String or an Array [path, realpath]. */
static int read_path(const struct ruby *r, uint64_t v, char *buf, size_t size)
{
	const struct ruby_layout *l = r->l;
	uint64_t flags, ptr, first;
	int err = is_type(r, v, l->ary.t_array, &flags);

	if (err == -ESTALE)
		return ruby_read_str(r, v, buf, size);
	if (err)
		return err;
	if (flags & l->ary.embed) {
		if (!((flags & l->ary.embed_len_mask) >> l->ary.embed_len_shift))
			return -ESTALE;
		ptr = v + l->ary.ary;
	} else if ((err = rd(r, v + l->ary.ptr, &ptr))) {
		return err;
	}
	if ((err = rd(r, ptr, &first)))
		return err;
	return ruby_read_str(r, first, buf, size);
}

/* The 1-based rank of position pos in the succinct table at t: entries at or below pos. */
static int succ_rank(const struct ruby *r, uint64_t t, uint32_t pos, uint32_t *rank)
{
	uint64_t word, ranks, bits, at;
	uint32_t base, i, b;
	int err;

	if (pos < IMM_POSITIONS) {
		if ((err = rd(r, t + (pos / 9) * 8, &word)))
			return err;
		*rank = (uint32_t)(word >> ((pos % 9) * 7)) & 0x7f;
		return 0;
	}
	i = (pos - IMM_POSITIONS) / 512;
	b = (pos - IMM_POSITIONS) % 512;
	at = t + IMM_WORDS * 8 + (uint64_t)i * SUCC_BLOCK_BYTES;
	if ((err = rd32(r, at, &base)) || (err = rd(r, at + SUCC_BLOCK_RANKS, &ranks)) ||
	    (err = rd(r, at + SUCC_BLOCK_BITS + (b / 64) * 8, &bits)))
		return err;
	*rank = base + (b / 64 ? (uint32_t)(ranks >> ((b / 64 - 1) * 9)) & 0x1ff : 0) +
		(uint32_t)__builtin_popcountll(bits << (63 - b % 64));
	return 0;
}

/*
 * The line of the instruction at pos (in words from the iseq's start) from
 * the body's instruction info: the last entry at or before it. 0: none.
 */
static uint32_t line_at(const struct ruby *r, uint64_t body, uint32_t pos)
{
	const struct ruby_layout *l = r->l;
	uint64_t entries, positions, succ;
	uint32_t size, idx = 0, lo, hi, at, line;

	if (rd32(r, body + l->body.insns_size, &size) || !size || size > POSITIONS_MAX ||
	    rd(r, body + l->body.insns_body, &entries) || !entries ||
	    rd(r, body + l->body.insns_positions, &positions) ||
	    rd(r, body + l->body.insns_succ, &succ))
		return 0;
	if (size > 1 && positions) {
		/* Sorted: the last position at or below pos. */
		for (lo = 0, hi = size; hi - lo > 1;) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (rd32(r, positions + (uint64_t)mid * 4, &at))
				return 0;
			if (at <= pos)
				lo = mid;
			else
				hi = mid;
		}
		idx = lo;
	} else if (size > 1 && succ) {
		if (succ_rank(r, succ, pos, &idx) || !idx || idx > size)
			return 0;
		idx--;
	}
	if (rd32(r, entries + (uint64_t)idx * l->insn_info.size + l->insn_info.line_no, &line))
		return 0;
	return line;
}

/*
 * The method entry at me (a frame's ep[-2], SFBPF_RB_METHOD): an imemo_ment
 * whose definition is a Ruby method's; 0 and its iseq and owner, -ESTALE if
 * no such entry is there (the method redefined, the entry collected). Once
 * the frame's special variables are written ($~ by a regexp match, $_ by
 * gets), ep[-2] is their imemo_svar, which holds the entry in its stead.
 */
static int method_iseq(const struct ruby *r, uint64_t me, uint64_t *iseq, uint64_t *owner)
{
	const struct ruby_layout *l = r->l;
	uint64_t def;
	uint8_t type;
	int err = is_imemo(r, me, l->method.imemo_svar);

	if (!err)
		err = rd(r, me + l->method.svar_me, &me);
	if (err != -ESTALE && err)
		return err;
	if ((err = is_imemo(r, me, l->method.imemo_ment)))
		return err;
	if ((err = rd(r, me + l->method.def, &def)) || (err = rd(r, me + l->method.owner, owner)) ||
	    (err = procmem__read(r->pid, def + l->method.type_byte, &type, 1)))
		return err;
	if ((type & l->method.type_mask) != l->method.type_iseq)
		return -ESTALE;
	return rd(r, def + l->method.iseqptr, iseq);
}

/* A class's or module's path while it is permanent ("Net::HTTP"): 0, or -ESTALE (none). */
static int class_path(const struct ruby *r, uint64_t klass, char *buf, size_t size)
{
	const struct ruby_layout *l = r->l;
	uint64_t flags, path;
	uint8_t perm;
	int err = rd(r, klass, &flags);

	if (err)
		return err;
	if ((flags & 0x1f) != l->klass.t_class && (flags & 0x1f) != l->klass.t_module)
		return -ESTALE;
	if (!l->klass.classpath) {
		/* To 3.1: "__classpath__" is set once the path is permanent. */
		if (!r->id_classpath)
			return -ESTALE;
		err = ruby_class_ivar(r, klass, r->id_classpath, &path);
		return err ? err == -ENOENT ? -ESTALE : err : ruby_read_str(r, path, buf, size);
	}
	if ((err = procmem__read(r->pid, klass + l->klass.perm_byte, &perm, 1)) ||
	    (err = rd(r, klass + l->klass.classpath, &path)))
		return err;
	/* Anonymous, or named under an anonymous one: Ruby names no owner then. */
	if (!(perm & l->klass.perm_mask) || !path)
		return -ESTALE;
	return ruby_read_str(r, path, buf, size);
}

/*
 * The method's label qualified by its owner as Ruby 3.4's backtraces do:
 * "Calc#fib", "Calc.create" (a singleton method of a class or module), the
 * label alone where the owner has no permanent name. out->name is the label.
 */
static void qualify(const struct ruby *r, uint64_t owner, struct ruby_frame *out)
{
	const struct ruby_layout *l = r->l;
	char path[RUBY_NAME_BYTES], label[RUBY_NAME_BYTES];
	uint64_t flags, attached;
	char sep = '#';

	if (rd(r, owner, &flags))
		return;
	if (flags & l->klass.singleton) {
		if (l->klass.classpath ?
			    rd(r, owner + l->klass.attached, &attached) :
			    !r->id_attached || ruby_class_ivar(r, owner, r->id_attached, &attached))
			return;
		owner = attached;
		sep = '.';
	}
	if (class_path(r, owner, path, sizeof(path)) || !path[0])
		return;
	memcpy(label, out->name, sizeof(label));
	if ((size_t)snprintf(out->name, sizeof(out->name), "%s%c%s", path, sep, label) >=
	    sizeof(out->name))
		memcpy(out->name, label, sizeof(label)); /* too long: the label, never a cut name */
}

/*
 * A block named by its method's owner too, as 3.4 does ("block in
 * Calc#fib", "block (2 levels) in Calc.create"): me, the method entry of
 * the env the block was made in, believed only if it is a Ruby method's
 * whose iseq is the block's local iseq (the method its source is in), and
 * only where the block's label ends in " in " and that method's label.
 */
static void qualify_block(const struct ruby *r, uint64_t body, uint64_t me, struct ruby_frame *out)
{
	const struct ruby_layout *l = r->l;
	uint64_t miseq, owner, local, mbody, label;
	char prefix[RUBY_NAME_BYTES];
	struct ruby_frame m;
	size_t n, ln;

	memset(&m, 0, sizeof(m));
	if (!l->body.local_iseq || method_iseq(r, me, &miseq, &owner) ||
	    rd(r, body + l->body.local_iseq, &local) || local != miseq ||
	    iseq_body(r, miseq, &mbody) || rd(r, mbody + l->body.label, &label) ||
	    ruby_read_str(r, label, m.name, sizeof(m.name)))
		return;
	n = strlen(out->name);
	ln = strlen(m.name);
	if (!ln || n < ln + 4 || strcmp(out->name + n - ln, m.name) ||
	    memcmp(out->name + n - ln - 4, " in ", 4))
		return;
	memcpy(prefix, out->name, n - ln);
	prefix[n - ln] = '\0';
	qualify(r, owner, &m);
	if (!strcmp(m.name, out->name + n - ln)) /* no owner named */
		return;
	/* Too long: the label as it was, never a cut name. */
	if ((size_t)snprintf(m.file, sizeof(m.file), "%s%s", prefix, m.name) < sizeof(out->name))
		memcpy(out->name, m.file, sizeof(out->name));
}

/*
 * A C method's frame (SFBPF_RB_CFUNC): its method entry me, whose
 * definition's stamp the walk sent, named as stackprof and Ruby's
 * backtraces name it ("Array#sort_by", "Kernel#sleep", "Process.pid"), its
 * file "<cfunc>" as stackprof's. -ESTALE when another entry or definition
 * is there now, or it is no C method's; -EPROTO when its name is no ID's.
 */
static int cfunc_frame(const struct ruby *r, uint64_t me, uint16_t stamp, struct ruby_frame *out)
{
	const struct ruby_layout *l = r->l;
	uint64_t def, owner, id;
	uint8_t type;
	int err;

	if (!r->ids || !l->method.original_id)
		return -EPROTO;
	if ((err = is_imemo(r, me, l->method.imemo_ment)) ||
	    (err = rd(r, me + l->method.def, &def)) || (err = rd(r, me + l->method.owner, &owner)))
		return err;
	if (!def || sfbpf_rb_stamp(def) != stamp)
		return -ESTALE;
	if ((err = procmem__read(r->pid, def + l->method.type_byte, &type, 1)) ||
	    (err = rd(r, def + l->method.original_id, &id)))
		return err;
	if ((type & l->method.type_mask) != l->method.type_cfunc)
		return -ESTALE;
	/* A C method's ID is never freed: one the table lacks is no ID. */
	if ((err = ruby_id_name(r, id, out->name, sizeof(out->name))))
		return err == -ENOENT ? -EPROTO : err;
	if (!out->name[0])
		return -EPROTO;
	snprintf(out->file, sizeof(out->file), "<cfunc>");
	qualify(r, owner, out);
	return 0;
}

int ruby__frame(const struct ruby *r, uint64_t iseq, uint64_t pc, uint16_t stamp, uint64_t block_me,
		struct ruby_frame *out)
{
	const struct ruby_layout *l = r->l;
	uint64_t body, label, pathobj, enc, first = 0, owner = 0;
	uint32_t size, line, type;
	int err;

	memset(out, 0, sizeof(*out));
	if (iseq & SFBPF_RB_CFUNC)
		return cfunc_frame(r, iseq & SFBPF_RB_PC_MASK, stamp, out);
	if (iseq & SFBPF_RB_METHOD) {
		/* Sent only where the layout names owners. */
		if (!l->method.me_cref)
			return -EPROTO;
		if ((err = method_iseq(r, iseq & SFBPF_RB_PC_MASK, &iseq, &owner)))
			return err;
	}
	if ((err = iseq_body(r, iseq, &body)))
		return err;
	/* Another iseq at its address since the sample: not the one it saw. */
	if (sfbpf_rb_stamp(body) != stamp)
		return -ESTALE;
	if ((err = rd(r, body + l->body.label, &label)) ||
	    (err = rd(r, body + l->body.pathobj, &pathobj)) ||
	    (err = rd(r, body + l->body.iseq_encoded, &enc)) ||
	    (err = rd32(r, body + l->body.iseq_size, &size)) ||
	    (err = procmem__read(r->pid, body + l->body.first_lineno, &first,
				 l->body.lineno_fixnum ? 8 : 4)))
		return err;
	if ((err = ruby_read_str(r, label, out->name, sizeof(out->name))) ||
	    (err = read_path(r, pathobj, out->file, sizeof(out->file))))
		return err == -ESTALE ? -EPROTO : err;
	if (owner)
		qualify(r, owner, out);
	else if (block_me && !rd32(r, body + l->body.type, &type) && type == l->body.type_block)
		qualify_block(r, body, block_me, out);
	/* A Fixnum's value is its word shifted right by one, its low bit the tag. */
	out->firstline = (uint32_t)(l->body.lineno_fixnum ? first >> 1 : first);
	out->line = out->firstline;
	/* pc is the next instruction's: the one running is before it (as Ruby's own backtraces). */
	if (pc > enc && pc <= enc + (uint64_t)size * 8 && !((pc - enc) % 8)) {
		line = line_at(r, body, (uint32_t)((pc - enc) / 8) - 1);
		if (line)
			out->line = line;
	}
	return 0;
}
