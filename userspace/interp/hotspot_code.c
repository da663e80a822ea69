// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A JVM's compiled code read from outside (docs/research/hotspot.md, sections
 * 2, 3 and 7): which blob of the code cache a pc is in (each heap's segment
 * map leads from any segment back to its block's first), a compiled frame's
 * size, and the methods a compiled pc stands for, inlined ones included (the
 * nmethod's PcDesc for the pc and the chain of scopes it names). Every read
 * is bounded and checked: a pc that does not lead to a blob holding it is
 * not compiled code.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "interp/hotspot_int.h"
#include "procs/procmem.h"

#define HS_MAX_HOPS 256 /* a segment map hop is at most 254 segments: 8 MiB at 128 bytes */
#define HS_MAX_PC_DESCS (1u << 16)
#define HS_MAX_SCOPES 64

int hs_code__heaps(int pid, const struct hs_layout *l, struct hs_code *c)
{
	uint64_t array, len, data, heaps[HS_MAX_HEAPS];
	int err;

	c->nr = 0;
	err = procmem__u64(pid, l->code_heaps, &array);
	if (!err && !array)
		return -EAGAIN;
	if (!err)
		err = hs_read_member(pid, array, l->array_len, &len);
	if (!err)
		err = hs_read_member(pid, array, l->array_data, &data);
	if (!err && (!len || len > HS_MAX_HEAPS))
		err = -EPROTO;
	if (!err)
		err = procmem__read(pid, data, heaps, len * sizeof(heaps[0]));
	for (uint64_t i = 0; !err && i < len; i++) {
		struct hs_heap *h = &c->heaps[c->nr];
		uint64_t shift;

		err = hs_read_member(pid, heaps[i], l->heap_low, &h->lo);
		if (!err)
			err = hs_read_member(pid, heaps[i], l->heap_high, &h->hi);
		if (!err)
			err = hs_read_member(pid, heaps[i], l->heap_reserved_high, &h->reserved_hi);
		if (!err)
			err = hs_read_member(pid, heaps[i], l->heap_segmap, &h->segmap);
		if (!err)
			err = hs_read_member(pid, heaps[i], l->heap_log2_segment, &shift);
		if (!err && (shift < 4 || shift > 20 || h->hi < h->lo || h->reserved_hi < h->hi))
			err = -EPROTO;
		h->shift = (uint32_t)shift;
		c->nr += !err;
	}
	return err;
}

int hs_code__blob(int pid, const struct hs_layout *l, const struct hs_code *c, uint64_t pc,
		  uint64_t *blob)
{
	const struct hs_heap *h = NULL;
	uint64_t i, block, used, size;
	int err;

	for (size_t k = 0; k < c->nr && !h; k++)
		if (pc >= c->heaps[k].lo && pc < c->heaps[k].hi)
			h = &c->heaps[k];
	if (!h)
		return -ENOENT;
	/* Each segment's byte: 0 the first of a block, 0xff free, else how far back to go. */
	i = (pc - h->lo) >> h->shift;
	for (int hops = 0;; hops++) {
		uint8_t b;

		if (hops == HS_MAX_HOPS)
			return -EPROTO;
		err = procmem__read(pid, h->segmap + i, &b, 1);
		if (err)
			return err;
		if (b == 0xff)
			return -ENOENT;
		if (!b)
			break;
		if (b > i)
			return -EPROTO;
		i -= b;
	}
	block = h->lo + (i << h->shift);
	err = hs_read_member(pid, block, l->block_used, &used);
	if (!err && !used)
		return -ENOENT; /* a free block */
	*blob = block + l->block_size;
	if (!err)
		err = hs_read_member(pid, *blob, l->blob_size, &size);
	if (err)
		return err;
	if (pc >= *blob + (uint32_t)size)
		return -ENOENT;
	return 0;
}

int hs_code__code_begin(int pid, const struct hs_layout *l, uint64_t blob, uint64_t *begin)
{
	uint64_t off;
	int err;

	if (l->blob_code_begin.off != HS_NONE)
		return hs_read_member(pid, blob, l->blob_code_begin, begin);
	err = hs_read_member(pid, blob, l->blob_code_offset, &off);
	*begin = blob + (uint32_t)off;
	return err;
}

enum hs_blob_kind hs_code__kind(int pid, const struct hs_layout *l, uint64_t blob)
{
	uint64_t kind, name;
	char buf[16];

	if (l->blob_kind.off != HS_NONE) {
		if (hs_read_member(pid, blob, l->blob_kind, &kind) ||
		    (int64_t)kind != l->kind_nmethod)
			return HS_BLOB_OTHER;
	}
	/* Before 23 the name tells; after, it tells a JNI wrapper from the rest. */
	if (hs_read_member(pid, blob, l->blob_name, &name) ||
	    procmem__str(pid, name, buf, sizeof(buf)) < 0)
		return HS_BLOB_OTHER;
	if (!strcmp(buf, "native nmethod"))
		return HS_BLOB_NATIVE_WRAPPER;
	if (!strcmp(buf, "nmethod") || l->blob_kind.off != HS_NONE)
		return HS_BLOB_NMETHOD;
	return HS_BLOB_OTHER;
}

/* Where an nmethod's PcDescs, scopes and metadata are, in its version's form. */
static int debug_info(int pid, const struct hs_layout *l, uint64_t nm, uint64_t *pcs,
		      uint64_t *pcs_end, uint64_t *scopes, uint64_t *metadata)
{
	uint64_t a, b, base;
	int err;

	if (l->nm_immutable_data.off == HS_NONE) {
		err = hs_read_member(pid, nm, l->nm_scopes_pcs_offset, &a);
		if (!err)
			err = hs_read_member(pid, nm, l->nm_dependencies_offset, &b);
		if (!err)
			err = hs_read_member(pid, nm, l->nm_scopes_data_begin, scopes);
		*pcs = nm + (uint32_t)a;
		*pcs_end = nm + (uint32_t)b;
		if (!err)
			err = hs_read_member(pid, nm, l->nm_metadata_offset, &a);
		*metadata = nm + (uint32_t)a;
		return err;
	}
	err = hs_read_member(pid, nm, l->nm_immutable_data, &base);
	if (!err)
		err = hs_read_member(pid, nm, l->nm_scopes_pcs_offset, &a);
	if (!err)
		err = hs_read_member(pid, nm, l->nm_scopes_data_offset, &b);
	*pcs = base + (uint32_t)a;
	*pcs_end = base + (uint32_t)b;
	*scopes = *pcs_end;
	if (!err)
		err = hs_read_member(pid, nm, l->blob_mutable_data, &base);
	if (!err)
		err = hs_read_member(pid, nm, l->blob_relocation_size, &a);
	*metadata = base + (uint32_t)a;
	return err;
}

/*
 * The scope decode offset of the PcDesc at exactly pc_offset (near: the
 * first after it, as HotSpot's own samplers take a stopped pc's, with
 * pc_desc_near(pc + 1)); 0 for none. PcDescs are sorted by pc offset.
 */
static int find_pc_desc(int pid, const struct hs_layout *l, uint64_t pcs, uint64_t pcs_end,
			int64_t pc_offset, bool near, uint32_t *scope)
{
	uint64_t n, stride = l->pc_desc_size;
	uint8_t *buf;
	int err;

	*scope = 0;
	if (pcs_end < pcs || stride < 8 || stride > 64)
		return -EPROTO;
	n = (pcs_end - pcs) / stride;
	if (n > HS_MAX_PC_DESCS)
		return -EPROTO;
	buf = malloc(n * stride + 1);
	if (!buf)
		return -ENOMEM;
	err = procmem__read(pid, pcs, buf, n * stride);
	for (uint64_t i = 0; !err && i < n; i++) {
		int32_t off;
		uint32_t sc;

		memcpy(&off, buf + i * stride + l->pc_desc_pc_offset.off, 4);
		memcpy(&sc, buf + i * stride + l->pc_desc_scope.off, 4);
		if ((!near && off == pc_offset) || (near && off > pc_offset)) {
			*scope = sc;
			break;
		}
	}
	free(buf);
	return err;
}

static int scopes(int pid, const struct hs_layout *l, uint64_t nm, uint64_t pc, bool near,
		  struct hs_scope *out, uint32_t max, uint32_t *nr)
{
	uint64_t pcs, pcs_end, scopes, metadata, begin, root, at;
	uint32_t decode, prev = UINT32_MAX;
	int err;

	*nr = 0;
	err = hs_code__code_begin(pid, l, nm, &begin);
	if (!err)
		err = debug_info(pid, l, nm, &pcs, &pcs_end, &scopes, &metadata);
	if (!err)
		err = hs_read_member(pid, nm, l->nm_method, &root);
	if (!err)
		err = find_pc_desc(pid, l, pcs, pcs_end, (int64_t)(pc - begin), near, &decode);
	if (err)
		return err;
	/* No scope recorded (serialized_null): the nmethod's own method, bci unknown. */
	if (!decode) {
		out[(*nr)++] = (struct hs_scope){ root, -1 };
		return 0;
	}
	while (decode && *nr < max && *nr < HS_MAX_SCOPES) {
		uint32_t sender, index, bci;
		uint64_t method;

		/* Senders are written before the scopes they call: offsets only fall. */
		if (decode >= prev)
			return -EPROTO;
		prev = decode;
		at = scopes + decode;
		err = hs_unsigned5(pid, &at, l->unsigned5_x, &sender);
		if (!err)
			err = hs_unsigned5(pid, &at, l->unsigned5_x, &index);
		if (!err)
			err = hs_unsigned5(pid, &at, l->unsigned5_x, &bci);
		if (!err && !index)
			err = -EPROTO;
		if (!err)
			err = procmem__u64(pid, metadata + 8 * (uint64_t)(index - 1), &method);
		if (err)
			return err;
		out[(*nr)++] = (struct hs_scope){ method,
						  (int32_t)bci + (int32_t)l->invocation_entry_bci };
		decode = sender;
	}
	return 0;
}

int hs_code__scopes(int pid, const struct hs_layout *l, uint64_t nm, uint64_t pc,
		    struct hs_scope *out, uint32_t max, uint32_t *nr)
{
	return scopes(pid, l, nm, pc, false, out, max, nr);
}

int hs_code__scopes_near(int pid, const struct hs_layout *l, uint64_t nm, uint64_t pc,
			 struct hs_scope *out, uint32_t max, uint32_t *nr)
{
	return scopes(pid, l, nm, pc, true, out, max, nr);
}
