// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A Java method's name, source file and line, read from the JVM's metadata
 * (Method → ConstMethod → ConstantPool → holder Klass and UTF-8 symbols),
 * the way the serviceability agent reads them. Every index is checked
 * against the pool's length and tag, every string against its bound.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "interp/hotspot.h"
#include "interp/hotspot_int.h"
#include "util/hash.h"
#include "util/utf8.h"
#include "procs/procmem.h"

#define HS_MAX_SYMBOL 1024 /* longer names are cut (a class name of a hidden class ~100) */
#define HS_MAX_LINE_PAIRS 65536

int hs_read_member(int pid, uint64_t base, struct hs_member m, uint64_t *v)
{
	uint8_t b[8];
	int err;

	*v = 0;
	if (m.off == HS_NONE)
		return -ENOENT;
	err = procmem__read(pid, base + m.off, b, m.width);
	if (err)
		return err;
	switch (m.width) {
	case 1:
		*v = b[0];
		break;
	case 2:
		*v = (uint64_t)b[0] | (uint64_t)b[1] << 8;
		break;
	case 4:
		*v = (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 |
		     (uint64_t)b[3] << 24;
		break;
	default:
		memcpy(v, b, 8);
	}
	return 0;
}

/*
 * Whether s reads as a symbol's text: modified UTF-8 (surrogates encoded one
 * by one allowed), no control character. A Method read after its class was
 * unloaded may lead to freed memory: its bytes are refused, not shown.
 */
static bool symbol_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8__seq_len(p);

		if (!n && p[0] == 0xed && (p[1] & 0xe0) == 0xa0 && (p[2] & 0xc0) == 0x80)
			n = 3; /* a surrogate, as modified UTF-8 writes characters past U+FFFF */
		if (!n || *p < 0x20 || *p == 0x7f)
			return false;
		p += n;
	}
	return true;
}

/* Symbol sym's bytes into buf (NUL-terminated, cut to size - 1): its length or an error. */
static long read_symbol(int pid, const struct hs_layout *l, uint64_t sym, char *buf, size_t size)
{
	uint64_t len;
	int err;

	err = hs_read_member(pid, sym, l->symbol_length, &len);
	if (err)
		return err;
	if (len > size - 1)
		len = size - 1;
	err = procmem__read(pid, sym + l->symbol_body.off, buf, len);
	if (err)
		return err;
	buf[len] = 0;
	if (memchr(buf, 0, len) || !symbol_text(buf))
		return -EPROTO; /* modified UTF-8 has no NUL byte */
	return (long)len;
}

/* The UTF-8 symbol in slot idx of the pool at cp: checked against its length and tag. */
static long pool_utf8(int pid, const struct hs_layout *l, uint64_t cp, uint64_t idx, char *buf,
		      size_t size)
{
	uint64_t len, tags, sym;
	uint8_t tag;
	int err;

	err = hs_read_member(pid, cp, l->pool_length, &len);
	if (!err && (idx == 0 || idx >= len))
		err = -EPROTO;
	if (!err)
		err = hs_read_member(pid, cp, l->pool_tags, &tags);
	if (!err)
		err = procmem__read(pid, tags + l->array_u1_data + idx, &tag, 1);
	if (!err && tag != l->tag_utf8)
		err = -EPROTO;
	if (!err)
		err = procmem__u64(pid, cp + l->pool_size + 8 * idx, &sym);
	if (err)
		return err;
	return read_symbol(pid, l, sym, buf, size);
}

/* What a Method's names are read from: its ConstMethod, pool, holder, holder's name, name's index.
 */
struct method_refs {
	uint64_t cm, cp, holder, klass_sym, name_idx;
};

static int method_refs(int pid, const struct hs_layout *l, uint64_t method, struct method_refs *r)
{
	int err = hs_read_member(pid, method, l->method_const, &r->cm);

	if (!err)
		err = hs_read_member(pid, r->cm, l->const_pool, &r->cp);
	if (!err)
		err = hs_read_member(pid, r->cp, l->pool_holder, &r->holder);
	if (!err)
		err = hs_read_member(pid, r->holder, l->klass_name, &r->klass_sym);
	if (!err)
		err = hs_read_member(pid, r->cm, l->const_name_index, &r->name_idx);
	return err;
}

/*
 * What names a Method, as addresses: its ConstMethod, its holder's name
 * Symbol and its own name's, mixed into one key. A class unloaded and
 * another loaded may put their Method and ConstMethod at the same
 * addresses (metaspace reuses a loader's freed blocks, equal sizes alike);
 * the Symbols of other names are elsewhere.
 */
int hs_method_key(int pid, const struct hs_layout *l, uint64_t method, uint64_t *key)
{
	struct method_refs r;
	uint64_t name_sym;
	int err = method_refs(pid, l, method, &r);

	if (!err)
		err = procmem__u64(pid, r.cp + l->pool_size + 8 * r.name_idx, &name_sym);
	if (err)
		return err;
	*key = r.cm ^ hash__mix64(r.klass_sym) ^ hash__mix64(name_sym + 1);
	return 0;
}

int hs_method_name(int pid, const struct hs_layout *l, uint64_t method, struct hotspot_method *out)
{
	struct method_refs r;
	uint64_t idx;
	char *p;
	int err;

	memset(out, 0, sizeof(*out));
	err = method_refs(pid, l, method, &r);
	if (!err && read_symbol(pid, l, r.klass_sym, out->klass, sizeof(out->klass)) < 0)
		err = -EPROTO;
	if (!err && pool_utf8(pid, l, r.cp, r.name_idx, out->name, sizeof(out->name)) < 0)
		err = -EPROTO;
	if (err)
		return err;
	/*
	 * Internal form to the Java language's: java/lang/Thread → java.lang.Thread,
	 * and a hidden class's suffix as the JVM prints it: Main$$Lambda$3+0x1a28 →
	 * Main$$Lambda$3/0x1a28 (Klass::external_name).
	 */
	for (p = out->klass; *p; p++)
		if (*p == '/')
			*p = '.';
	p = strrchr(out->klass, '+');
	if (p && !strncmp(p, "+0x", 3))
		*p = '/';
	if (l->pool_source_file.off != HS_NONE)
		err = hs_read_member(pid, r.cp, l->pool_source_file, &idx);
	else
		err = hs_read_member(pid, r.holder, l->klass_source_file, &idx);
	if (!err && idx)
		pool_utf8(pid, l, r.cp, idx, out->file, sizeof(out->file));
	out->const_method = r.cm;
	return 0;
}

/*
 * HotSpot's compressed integers (UNSIGNED5 in JDK 20+, where byte 0 is never
 * used and each byte is stored plus one; Pack200's before): x is that one.
 */
int hs_unsigned5(int pid, uint64_t *at, unsigned int x, uint32_t *v)
{
	uint32_t sum = 0;
	uint8_t b;

	for (int i = 0; i < 5; i++) {
		if (procmem__read(pid, (*at)++, &b, 1))
			return -EFAULT;
		if (b < x)
			return -EPROTO;
		sum += (uint32_t)(b - x) << (6 * i);
		if (b < 192 + x || i == 4)
			break;
	}
	*v = sum;
	return 0;
}

static int32_t zigzag(uint32_t v)
{
	return (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
}

int hs_method_line(int pid, const struct hs_layout *l, uint64_t cm, int bci)
{
	uint64_t flags, code_size, at;
	int32_t pc = 0, line = 0, best = -1, best_pc = -1;

	if (bci < 0 || hs_read_member(pid, cm, l->const_flags, &flags) ||
	    !(flags & (uint64_t)l->flag_has_lines) ||
	    hs_read_member(pid, cm, l->const_code_size, &code_size))
		return -1;
	/* The table follows the bytecodes (ConstMethod::compressed_linenumber_table). */
	at = cm + l->const_size + code_size;
	for (int n = 0; n < HS_MAX_LINE_PAIRS; n++) {
		uint8_t b;
		uint32_t d1, d2;

		if (procmem__read(pid, at++, &b, 1) || !b)
			break;
		if (b == 0xff) {
			if (hs_unsigned5(pid, &at, l->unsigned5_x, &d1) ||
			    hs_unsigned5(pid, &at, l->unsigned5_x, &d2))
				break;
			pc += zigzag(d1);
			line += zigzag(d2);
		} else {
			pc += b >> 3;
			line += b & 7;
		}
		/* An exact bci wins; else the last entry before it (Method::line_number_from_bci).
		 */
		if (pc == bci)
			return line;
		if (pc < bci && pc >= best_pc) {
			best_pc = pc;
			best = line;
		}
	}
	return best;
}
