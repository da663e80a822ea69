// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attaching to a V8 (v8.h): the object that publishes V8's metadata, its
 * layout (v8_layout.c), its code's ranges for the BPF step, and the reads
 * of heap objects every name is made of: a tagged pointer's instance type,
 * a string's characters (sequential, cons, sliced, thin, external). Every
 * read is bounded, every object checked by type before it is believed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/objsyms.h"
#include "interp/v8_int.h"
#include "procs/procmaps.h"
#include "procs/procmem.h"
#include "tables/elfobj.h"
#include "util/log.h"

/* node's executable, a versioned one (node18), N|Solid, or libnode as distributions ship it. */
static bool maybe_v8(const struct procmaps *pm, const struct procmap *m)
{
	const char *b;

	if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO) || !(m->perms & PROCMAP_EXEC))
		return false;
	b = procmap__basename(m->path);
	return m == procmaps__exe(pm) || !strncmp(b, "libnode.so", 10) || !strncmp(b, "node", 4) ||
	       !strncmp(b, "nsolid", 6);
}

/* objsyms__detect's test: the object at m publishes V8's metadata (its layout into ctx). */
static int is_v8(int pid, const struct procmaps *pm, const struct procmap *m, void *ctx)
{
	struct v8 *v = ctx;
	struct elfobj_info info;
	uint64_t lo = 0, hi = 0;
	Elf *elf;
	int fd, err;

	fd = procmap__open(pid, m);
	if (fd < 0)
		return fd;
	err = elfobj__read(fd, &info);
	elf_version(EV_CURRENT);
	elf = err ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!err)
		err = elf ? v8_layout__read(elf, &v->l, &lo, &hi) : -EINVAL;
	elf_end(elf);
	close(fd);
	if (!err)
		err = objsyms__bias(pm, m, &info, &v->bias);
	/* Said once detection ends (objsyms__detect reads it as not V8's). */
	if (err == -ENOTSUP)
		v->unsupported = true;
	if (err)
		return err;
	v->blob_lo = lo;
	v->blob_hi = hi;
	v->blob_off = 0;
	for (size_t i = 0; lo && i < info.nr_loads; i++) {
		const struct elfobj_load *ld = &info.loads[i];

		if (lo >= ld->vaddr && lo < ld->vaddr + ld->filesz)
			v->blob_off = ld->offset + (lo - ld->vaddr);
	}
	v->inode = m->inode;
	v->dev_major = m->dev_major;
	v->dev_minor = m->dev_minor;
	return 0;
}

int v8__attach(int pid, struct v8 **out)
{
	struct v8 *v = calloc(1, sizeof(*v));
	int err;

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->pid = pid;
	v->ba_spt = V8_NONE;
	err = objsyms__detect(pid, "v8", maybe_v8, is_v8, v);
	if (err == -ENOENT && v->unsupported)
		err = -ENOTSUP;
	if (err) {
		free(v);
		return err;
	}
	v->code_start = v->l.code_start;
	v->code_deopt = v->l.code_deopt;
	v->code_spt = v->l.code_spt;
	v->deopt_sfi = v->l.deopt_sfi;
	v->deopt_literals = v->l.deopt_literals;
	v->deopt_inlining = v->l.deopt_inlining;
	snprintf(v->version, sizeof(v->version), "%d.%d.%d.%d", v->l.version[0], v->l.version[1],
		 v->l.version[2], v->l.version[3]);
	*out = v;
	return 0;
}

void v8__free(struct v8 *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nr_sc; i++)
		free(v->sc[i].ends);
	free(v->sc);
	hashmap__free(&v->scripts);
	free(v);
}

const char *v8__version(const struct v8 *v)
{
	return v->version;
}

/*
 * The builtins where the process runs them: in the object's text, and in
 * the copy V8 maps next to its JIT code (short builtin calls), a second
 * mapping of the same file at the blob's offset. Then the JIT code: the
 * hull of the anonymous executable mappings, with the reservation that
 * follows the last (its code space grows into it after this reading).
 */
int v8__bpf_settings(struct v8 *v, const struct procmaps *pm, struct sfbpf_v8_proc *cfg)
{
	const struct v8_layout *l = &v->l;
	uint64_t size = v->blob_hi - v->blob_lo;

	memset(cfg, 0, sizeof(*cfg));
	cfg->fp_context = l->fp_context;
	cfg->fp_function = l->fp_function;
	cfg->fp_bytecode_array = l->fp_bytecode_array;
	cfg->fp_bytecode_offset = l->fp_bytecode_offset;
	cfg->function_shared = l->jsf_shared;
	cfg->map_type = l->map_type;
	cfg->bytecode_array_type = l->type_bytecode_array;
	/* The offset's Smi counts from the array's tagged pointer. */
	cfg->bytecode_header = l->ba_header - 1;
	/*
	 * V8's register codes are the machine's: on x86-64 DWARF numbers them
	 * alike from r8 on (r9, r12 here); on AArch64 alike throughout.
	 */
	cfg->reg_bytecode_array = cfg->reg_bytecode_offset = 0xff;
#if defined(__x86_64__)
	if (l->reg_bytecode_array >= 8 && l->reg_bytecode_array <= 15 &&
	    l->reg_bytecode_offset >= 8 && l->reg_bytecode_offset <= 15) {
#else
	if (l->reg_bytecode_array >= 0 && l->reg_bytecode_array <= 30 &&
	    l->reg_bytecode_offset >= 0 && l->reg_bytecode_offset <= 30) {
#endif
		cfg->reg_bytecode_array = (uint8_t)l->reg_bytecode_array;
		cfg->reg_bytecode_offset = (uint8_t)l->reg_bytecode_offset;
	}
	if (v->blob_lo) {
		cfg->builtins[0].lo = v->blob_lo + v->bias;
		cfg->builtins[0].hi = v->blob_hi + v->bias;
		for (size_t i = 0; i < procmaps__count(pm); i++) {
			const struct procmap *m = procmaps__get(pm, i);
			uint64_t at;

			if (m->inode != v->inode || m->dev_major != v->dev_major ||
			    m->dev_minor != v->dev_minor || !(m->perms & PROCMAP_EXEC) ||
			    v->blob_off < m->offset ||
			    v->blob_off >= m->offset + (m->end - m->start))
				continue;
			at = m->start + (v->blob_off - m->offset);
			if (at != cfg->builtins[0].lo) {
				cfg->builtins[1].lo = at;
				cfg->builtins[1].hi = at + size;
			}
		}
	}
	for (size_t i = 0; i < procmaps__count(pm); i++) {
		const struct procmap *m = procmaps__get(pm, i);
		uint64_t hi = m->end;

		if (!(m->flags & PROCMAP_F_ANON) || (m->flags & PROCMAP_F_PSEUDO) ||
		    !(m->perms & PROCMAP_EXEC))
			continue;
		while (i + 1 < procmaps__count(pm)) {
			const struct procmap *n = procmaps__get(pm, i + 1);

			if (n->start != hi || !(n->flags & PROCMAP_F_ANON) ||
			    (n->flags & PROCMAP_F_PSEUDO) || n->perms & PROCMAP_WRITE)
				break;
			hi = n->end;
			i++;
		}
		if (!cfg->jit.lo || m->start < cfg->jit.lo)
			cfg->jit.lo = m->start;
		if (hi > cfg->jit.hi)
			cfg->jit.hi = hi;
	}
	return 0;
}

/* The instance type of tagged pointer p: 0, or an error (not a heap object, unreadable). */
int v8_type(struct v8 *v, uint64_t p, uint16_t *type)
{
	uint64_t map;

	if ((p & 3) != 1 || procmem__u64(v->pid, p - 1 + v->l.map, &map) || (map & 3) != 1)
		return -EINVAL;
	return procmem__read(v->pid, map - 1 + v->l.map_type, type, 2);
}

/* The tagged field at off of the object at tagged pointer p. */
int v8_field(struct v8 *v, uint64_t p, uint16_t off, uint64_t *out)
{
	if ((p & 3) != 1 || off == V8_NONE)
		return -EINVAL;
	return procmem__u64(v->pid, p - 1 + off, out);
}

/* A Smi's value (upper half): whether w is one. */
bool v8_smi(uint64_t w, int64_t *out)
{
	if (w & 1)
		return false;
	*out = (int64_t)w >> 32;
	return true;
}

/*
 * The characters of string s from start, count of them, to fn in chunks
 * (one byte or two each, *wide says): 0, or an error (not a string, a kind
 * not read, unreadable). depth bounds cons and sliced strings' chains.
 */
typedef int (*v8_chars_fn)(void *ctx, const void *chars, size_t n, bool wide);

static int chars(struct v8 *v, uint64_t s, uint64_t start, uint64_t count, int depth,
		 v8_chars_fn fn, void *ctx)
{
	const struct v8_layout *l = &v->l;
	uint16_t type, repr;
	uint64_t p, q;
	int32_t len;
	int64_t off;
	bool wide;
	char buf[4096];
	int err;

	if (depth > 32 || v8_type(v, s, &type) || type >= l->first_nonstring ||
	    procmem__read(v->pid, s - 1 + l->str_length, &len, 4) || len < 0 ||
	    start + count > (uint64_t)len)
		return -EINVAL;
	repr = type & l->str_repr_mask;
	wide = (type & l->str_enc_mask) != l->str_one_byte;
	if (repr == l->str_cons) {
		int32_t flen;

		if (v8_field(v, s, l->cons_first, &p) || v8_field(v, s, l->cons_second, &q) ||
		    procmem__read(v->pid, p - 1 + l->str_length, &flen, 4) || flen < 0)
			return -EINVAL;
		if (start < (uint64_t)flen) {
			uint64_t n =
				count < (uint64_t)flen - start ? count : (uint64_t)flen - start;

			err = chars(v, p, start, n, depth + 1, fn, ctx);
			if (err)
				return err;
			start += n;
			count -= n;
		}
		return count ? chars(v, q, start - (uint64_t)flen, count, depth + 1, fn, ctx) : 0;
	}
	if (repr == l->str_thin)
		return v8_field(v, s, l->thin_actual, &p) ?
			       -EINVAL :
			       chars(v, p, start, count, depth + 1, fn, ctx);
	if (repr == l->str_sliced) {
		if (v8_field(v, s, l->sliced_parent, &p) || v8_field(v, s, l->sliced_offset, &q) ||
		    !v8_smi(q, &off) || off < 0)
			return -EINVAL;
		return chars(v, p, start + (uint64_t)off, count, depth + 1, fn, ctx);
	}
	if (repr == l->str_seq) {
		p = s - 1 + (wide ? l->seq2_chars : l->seq_chars);
	} else if (repr == l->str_ext && l->ext_resource != V8_NONE) {
		/*
		 * An external string's data pointer, cached after its resource
		 * (V8's kResourceDataOffset); the uncached kinds (bit 4 of the
		 * type) have none.
		 */
		if ((type & 0x10) || procmem__u64(v->pid, s - 1 + l->ext_resource + 8, &p) || !p)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	p += start << wide;
	while (count) {
		size_t n = count << wide < sizeof(buf) ? count << wide : sizeof(buf);

		if (procmem__read(v->pid, p, buf, n))
			return -EFAULT;
		err = fn(ctx, buf, n >> wide, wide);
		if (err)
			return err;
		p += n;
		count -= n >> wide;
	}
	return 0;
}

int v8_chars(struct v8 *v, uint64_t s, v8_chars_fn fn, void *ctx, uint64_t max, uint64_t *len)
{
	int32_t n;

	if ((s & 3) != 1 || procmem__read(v->pid, s - 1 + v->l.str_length, &n, 4) || n < 0)
		return -EINVAL;
	*len = (uint64_t)n;
	return chars(v, s, 0, (uint64_t)n < max ? (uint64_t)n : max, 0, fn, ctx);
}

struct utf8 {
	char *out;
	size_t size, len;
};

static int put_utf8(void *ctx, const void *chars, size_t n, bool wide)
{
	struct utf8 *u = ctx;

	for (size_t i = 0; i < n; i++) {
		uint32_t c = wide ? ((const uint16_t *)chars)[i] : ((const uint8_t *)chars)[i];
		char e[3];
		size_t k;

		/* Latin-1 and the BMP; a surrogate half is shown as '?'. */
		if (c < 0x80) {
			e[0] = (char)(c ? c : '?');
			k = 1;
		} else if (c < 0x800) {
			e[0] = (char)(0xc0 | c >> 6);
			e[1] = (char)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c >= 0xd800 && c < 0xe000) {
			e[0] = '?';
			k = 1;
		} else {
			e[0] = (char)(0xe0 | c >> 12);
			e[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			e[2] = (char)(0x80 | (c & 0x3f));
			k = 3;
		}
		if (u->len + k >= u->size)
			return 0;
		memcpy(u->out + u->len, e, k);
		u->len += k;
	}
	return 0;
}

/* String s as UTF-8 into out (size bytes; cut to fit): 0, or an error (not a string). */
int v8_string(struct v8 *v, uint64_t s, char *out, size_t size)
{
	struct utf8 u = { .out = out, .size = size };
	uint64_t len;
	int err;

	out[0] = 0;
	err = v8_chars(v, s, put_utf8, &u, size, &len);
	out[u.len] = 0;
	return err;
}
