// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A counter of the JVM's perf data (what jstat reads, -XX:+UsePerfData, on
 * by default), found through the layout its vmStructs publish: the static
 * PerfMemory::_prologue points at a PerfDataPrologue, followed by entries
 * (PerfDataEntry), each with its name and its value at offsets of its own.
 * The memory is the process's (an anonymous or a file-backed mapping of
 * hsperfdata_USER/PID), read like the rest of it. Everything read is the
 * target's data: every offset and length is bounded by the prologue's used
 * bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp/hotspot_int.h"
#include "procs/procmem.h"
#include "util/log.h"

/* More than the default PerfDataMemorySize (64 KiB) allows, far less than a bad used could. */
#define PERFDATA_MAX_BYTES (4u << 20)

/* An integer member of type in the tables, of width bytes: its offset, or -1. */
static int64_t int_field(const struct hs_tables *t, const char *type, const char *name,
			 uint64_t width)
{
	const struct hs_field *f = hs_tables__field(t, type, name);
	const struct hs_type *ty = f && !f->is_static ? hs_tables__type(t, f->type_string) : NULL;

	if (!ty || ty->size != width || f->offset > 4096)
		return -1;
	return (int64_t)f->offset;
}

static int32_t int_at(const uint8_t *b, uint64_t off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

int hs_perfdata__counter(int pid, const struct hs_tables *t, const char *name, uint64_t *addr)
{
	const struct hs_field *pro = hs_tables__field(t, "PerfMemory", "_prologue");
	int64_t p_used = int_field(t, "PerfDataPrologue", "used", 4);
	int64_t p_entries = int_field(t, "PerfDataPrologue", "entry_offset", 4);
	int64_t p_nr = int_field(t, "PerfDataPrologue", "num_entries", 4);
	int64_t e_len = int_field(t, "PerfDataEntry", "entry_length", 4);
	int64_t e_name = int_field(t, "PerfDataEntry", "name_offset", 4);
	int64_t e_vec = int_field(t, "PerfDataEntry", "vector_length", 4);
	int64_t e_type = int_field(t, "PerfDataEntry", "data_type", 1);
	int64_t e_data = int_field(t, "PerfDataEntry", "data_offset", 4);
	const struct hs_type *ety = hs_tables__type(t, "PerfDataEntry");
	uint64_t base, hdr[8] = { 0 }, at, hdr_size = sizeof(hdr);
	size_t want = strlen(name) + 1;
	int32_t used, nr, len;
	uint8_t *buf;
	int err;

	*addr = 0;
	if (!pro || !pro->is_static || !pro->address || !ety || p_used < 0 || p_entries < 0 ||
	    p_nr < 0 || e_len < 0 || e_name < 0 || e_vec < 0 || e_type < 0 || e_data < 0 ||
	    (uint64_t)p_used + 4 > hdr_size || (uint64_t)p_entries + 4 > hdr_size ||
	    (uint64_t)p_nr + 4 > hdr_size || ety->size > 64)
		return -EPROTO;
	err = procmem__u64(pid, pro->address, &base);
	if (!err && !base)
		err = -ENOENT; /* -XX:-UsePerfData, or not yet made */
	if (!err)
		err = procmem__read(pid, base, hdr, sizeof(hdr));
	if (err)
		return err;
	used = int_at((uint8_t *)hdr, (uint64_t)p_used);
	if (used <= 0 || (uint32_t)used > PERFDATA_MAX_BYTES)
		return -EPROTO;
	buf = malloc((size_t)used);
	if (!buf)
		return -ENOMEM;
	err = procmem__read(pid, base, buf, (size_t)used);
	nr = int_at(buf, (uint64_t)p_nr);
	at = (uint64_t)int_at(buf, (uint64_t)p_entries);
	for (int32_t i = 0; !err && i < nr; i++, at += (uint64_t)len) {
		uint64_t n, d;

		if (at + ety->size > (uint64_t)used) {
			err = -EPROTO;
			break;
		}
		len = int_at(buf, at + (uint64_t)e_len);
		if (len < (int32_t)ety->size || at + (uint64_t)len > (uint64_t)used) {
			err = -EPROTO;
			break;
		}
		n = (uint64_t)int_at(buf, at + (uint64_t)e_name);
		d = (uint64_t)int_at(buf, at + (uint64_t)e_data);
		if (n + want > (uint64_t)len || memcmp(buf + at + n, name, want))
			continue;
		/* A jlong ('J'), not a vector, whole in the entry, aligned as the VM writes it. */
		if (buf[at + (uint64_t)e_type] != 'J' || int_at(buf, at + (uint64_t)e_vec) != 0 ||
		    d + 8 > (uint64_t)len || (base + at + d) % 8) {
			err = -EPROTO;
			break;
		}
		*addr = base + at + d;
		break;
	}
	free(buf);
	if (!err && !*addr)
		err = -ENOENT;
	if (err)
		pr_debug("hotspot: pid %d: perf data counter %s: %s\n", pid, name, strerror(-err));
	return err;
}
