// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * OTLP profiles writer, the request (see otlp_int.h): the gathered builder
 * written in one pass with the wire writer, resource profiles first, then
 * the dictionary they index. Field numbers are those of proto/otlp/.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "output/otlp_int.h"
#include "output/pbwire.h"
#include "procs/cgroups.h"
#include "util/hash.h"

#define SCOPE_NAME "sfbpf"

static void packed(struct pbw *w, unsigned field, const int32_t *v, size_t n)
{
	size_t m, i;

	if (!n)
		return;
	m = pbw_begin(w, field);
	for (i = 0; i < n; i++)
		pbw_varint(w, (uint64_t)(int64_t)v[i]);
	pbw_end(w, m);
}

static void put_attr(struct pbw *w, const struct otlp_builder *b, const struct otlp_attr *a)
{
	size_t m = pbw_begin(w, 6), v; /* attribute_table */

	pbw_int(w, 1, a->key);
	v = pbw_begin(w, 2); /* AnyValue */
	if (a->is_int)
		pbw_uint_always(w, 3, (uint64_t)a->num);
	else
		pbw_str_always(w, 1, b->strs.strs[a->str]);
	pbw_end(w, v);
	pbw_end(w, m);
}

/* Lines innermost first: the last is the function the others were inlined into. */
static void put_location(struct pbw *w, const struct otlp_builder *b,
			 const struct otlp_location *lc)
{
	size_t m = pbw_begin(w, 2), l, i;

	pbw_int(w, 1, lc->mapping);
	pbw_uint(w, 2, lc->addr);
	for (i = 0; i < lc->n; i++) {
		const struct otlp_line *ln = &b->lines.v[lc->off + i];

		l = pbw_begin(w, 3);
		pbw_int(w, 1, ln->func);
		pbw_int(w, 2, ln->line);
		pbw_end(w, l);
	}
	packed(w, 4, &lc->type_attr, lc->type_attr ? 1 : 0);
	pbw_end(w, m);
}

static void put_dictionary(struct pbw *w, const struct otlp_builder *b)
{
	static const uint8_t zero_ids[24];
	size_t d = pbw_begin(w, 2), m, i;

	pbw_end(w, pbw_begin(w, 1)); /* mapping_table[0] = Mapping{} */
	for (i = 1; i < b->maps.n; i++) {
		const struct otlp_mapping *mp = &b->maps.v[i];

		m = pbw_begin(w, 1);
		pbw_uint(w, 1, mp->start);
		pbw_uint(w, 2, mp->limit);
		pbw_uint(w, 3, mp->offset);
		pbw_int(w, 4, mp->file);
		packed(w, 5, &mp->build_id_attr, mp->build_id_attr ? 1 : 0);
		pbw_end(w, m);
	}
	pbw_end(w, pbw_begin(w, 2)); /* location_table[0] */
	for (i = 1; i < b->locs.n; i++)
		put_location(w, b, &b->locs.v[i]);
	pbw_end(w, pbw_begin(w, 3)); /* function_table[0] */
	for (i = 1; i < b->funcs.n; i++) {
		const struct otlp_func *f = &b->funcs.v[i];

		m = pbw_begin(w, 3);
		pbw_int(w, 1, f->name);
		pbw_int(w, 2, f->name); /* no demangling: the system name is the name */
		pbw_int(w, 3, f->file);
		pbw_int(w, 4, f->start_line);
		pbw_end(w, m);
	}
	/* link_table[0]: the all-zero ids of their full lengths, as the schema advises. */
	m = pbw_begin(w, 4);
	pbw_bytes(w, 1, zero_ids, 16);
	pbw_bytes(w, 2, zero_ids, 8);
	pbw_end(w, m);
	for (i = 0; i < b->strs.n; i++)
		pbw_str_always(w, 5, b->strs.strs[i]);
	pbw_end(w, pbw_begin(w, 6)); /* attribute_table[0] */
	for (i = 1; i < b->attrs.n; i++)
		put_attr(w, b, &b->attrs.v[i]);
	pbw_end(w, pbw_begin(w, 7)); /* stack_table[0] */
	for (i = 1; i < b->stacks.n; i++) {
		m = pbw_begin(w, 7);
		packed(w, 1, b->stack_locs.v + b->stacks.v[i].off, b->stacks.v[i].n);
		pbw_end(w, m);
	}
	pbw_end(w, d);
}

static void kv_str(struct pbw *w, const char *key, const char *value)
{
	size_t m, v;
	char *clean;

	if (!value || !*value)
		return;
	clean = strtab_clean_dup(value);
	if (!clean) {
		w->err = -ENOMEM;
		return;
	}
	m = pbw_begin(w, 1); /* Resource.attributes */
	pbw_str(w, 1, key);
	v = pbw_begin(w, 2);
	pbw_str_always(w, 1, clean);
	pbw_end(w, v);
	pbw_end(w, m);
	free(clean);
}

static void kv_int(struct pbw *w, const char *key, int64_t value)
{
	size_t m = pbw_begin(w, 1), v;

	pbw_str(w, 1, key);
	v = pbw_begin(w, 2);
	pbw_uint_always(w, 3, (uint64_t)value);
	pbw_end(w, v);
	pbw_end(w, m);
}

/*
 * The executable's file name as the symbolizer's snapshot saw it while the
 * process ran, else the comm. Not /proc/PID/exe now: by the time a profile
 * is written the PID may be another program's.
 */
static void exe_name(const struct otlp_builder *b, const struct otlp_resource *r, char *buf,
		     size_t size)
{
	const char *path = b->strs.strs[r->exe ? r->exe : r->comm], *base;
	size_t n = strlen(path);

	if (r->exe && n > 10 && !strcmp(path + n - 10, " (deleted)"))
		n -= 10;
	base = r->exe ? memrchr(path, '/', n) : NULL;
	base = base ? base + 1 : path;
	n -= base - path;
	snprintf(buf, size, "%.*s", (int)(n < size - 1 ? n : size - 1), base);
}

static void put_resource(struct pbw *w, const struct otlp_builder *b, const struct otlp_resource *r)
{
	const struct pprof_opts *po = &b->o.po;
	const char *cg = NULL;
	struct cgroup_info ci;
	char exe[256], svc[300];
	size_t m;

	if (po->cgroup_path && r->cgroup_id)
		cg = po->cgroup_path(po->cgroup_ctx, r->cgroup_id);
	cgroups_parse_path(cg, &ci);
	exe_name(b, r, exe, sizeof(exe));
	if (ci.unit[0])
		snprintf(svc, sizeof(svc), "%s", ci.unit);
	else
		snprintf(svc, sizeof(svc), "unknown_service:%s", exe);
	m = pbw_begin(w, 1); /* Resource */
	kv_str(w, "host.name", b->o.hostname);
	kv_str(w, "service.name", svc);
	if (r->pid) /* the idle task is no process */
		kv_int(w, "process.pid", r->pid);
	kv_str(w, "process.executable.name", exe);
	kv_str(w, "container.id", ci.container_id);
	kv_str(w, "k8s.pod.uid", ci.pod_uid);
	for (size_t i = 0; i < po->nr_labels; i++)
		kv_str(w, po->labels[i].key, po->labels[i].value);
	pbw_end(w, m);
}

static void put_profile(struct pbw *w, const struct otlp_builder *b, const struct otlp_resource *r)
{
	const struct pprof_opts *po = &b->o.po;
	uint8_t id[16];
	size_t m, t, s;
	int32_t i;

	if (getrandom(id, sizeof(id), GRND_NONBLOCK) != sizeof(id)) {
		uint64_t x = hash__mix64((uint64_t)clock() ^ (uint64_t)getpid() << 32 ^
					 (uint64_t)(uintptr_t)r);

		memcpy(id, &x, 8);
		x = hash__mix64(x + (uint64_t)po->time_nanos);
		memcpy(id + 8, &x, 8);
	}
	m = pbw_begin(w, 2); /* ScopeProfiles.profiles */
	t = pbw_begin(w, 1); /* sample_type */
	pbw_int(w, 1, po->value_from_weight ? b->s_type : b->s_samples);
	pbw_int(w, 2, po->value_from_weight ? b->s_unit : b->s_count);
	pbw_end(w, t);
	for (i = r->first; i >= 0; i = b->samples.v[i].next) {
		const struct otlp_sample *sm = &b->samples.v[i];

		s = pbw_begin(w, 2);
		pbw_int(w, 1, sm->stack);
		packed(w, 2, &sm->thread_attr, sm->thread_attr ? 1 : 0);
		t = pbw_begin(w, 4); /* values, packed */
		pbw_varint(w, (uint64_t)sm->value);
		pbw_end(w, t);
		pbw_end(w, s);
	}
	pbw_fixed64(w, 3, (uint64_t)po->time_nanos);
	pbw_uint(w, 4, (uint64_t)po->duration_nanos);
	if (b->period) {
		t = pbw_begin(w, 5);
		pbw_int(w, 1, b->s_type);
		pbw_int(w, 2, b->s_unit);
		pbw_end(w, t);
		pbw_int(w, 6, b->period);
	}
	pbw_bytes(w, 7, id, sizeof(id));
	pbw_end(w, m);
}

void otlp_put_request(struct pbw *w, const struct otlp_builder *b)
{
	size_t rp, sp, sc, i;

	for (i = 0; i < b->res.n; i++) {
		rp = pbw_begin(w, 1); /* resource_profiles */
		put_resource(w, b, &b->res.v[i]);
		sp = pbw_begin(w, 2); /* scope_profiles */
		sc = pbw_begin(w, 1);
		pbw_str(w, 1, SCOPE_NAME);
		pbw_end(w, sc);
		put_profile(w, b, &b->res.v[i]);
		pbw_end(w, sp);
		pbw_end(w, rp);
	}
	put_dictionary(w, b);
}

/* ---- compression --------------------------------------------------------------------- */

int otlp_gzip(const void *data, size_t size, void **out, size_t *out_size)
{
	z_stream z = {};
	uLong bound;
	void *buf;
	int ret;

	/* windowBits 15 + 16: a gzip header and trailer, as Content-Encoding: gzip wants. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&z, size) + 32;
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = size;
	z.next_out = buf;
	z.avail_out = bound;
	ret = deflate(&z, Z_FINISH);
	*out_size = z.total_out;
	deflateEnd(&z);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	return 0;
}
