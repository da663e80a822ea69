// SPDX-License-Identifier: GPL-2.0-or-later
/* Protocol buffers wire format writer (see pbwire.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/pbwire.h"
#include "util/vec.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

static uint8_t *room(struct pbw *w, size_t n)
{
	if (w->err)
		return NULL;
	if (VEC_RESERVE(w->buf, w->cap, w->len + n, 4096)) {
		w->err = -ENOMEM;
		return NULL;
	}
	return w->buf + w->len;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p = (uint8_t)v;
}

void pbw_varint(struct pbw *w, uint64_t v)
{
	uint8_t *p = room(w, 10);

	if (!p)
		return;
	put_varint(p, v);
	w->len += varint_len(v);
}

void pbw_tag(struct pbw *w, unsigned field, unsigned wire_type)
{
	pbw_varint(w, (uint64_t)field << 3 | wire_type);
}

void pbw_uint_always(struct pbw *w, unsigned field, uint64_t v)
{
	pbw_tag(w, field, WT_VARINT);
	pbw_varint(w, v);
}

void pbw_uint(struct pbw *w, unsigned field, uint64_t v)
{
	if (v)
		pbw_uint_always(w, field, v);
}

/* int32 and int64 alike: a negative value is its 64-bit two's complement. */
void pbw_int(struct pbw *w, unsigned field, int64_t v)
{
	pbw_uint(w, field, (uint64_t)v);
}

void pbw_fixed64(struct pbw *w, unsigned field, uint64_t v)
{
	uint8_t *p;
	int i;

	if (!v)
		return;
	pbw_tag(w, field, WT_I64);
	p = room(w, 8);
	if (!p)
		return;
	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	w->len += 8;
}

void pbw_bytes(struct pbw *w, unsigned field, const void *data, size_t n)
{
	uint8_t *p;

	pbw_tag(w, field, WT_LEN);
	pbw_varint(w, n);
	p = room(w, n);
	if (!p || !n)
		return;
	memcpy(p, data, n);
	w->len += n;
}

void pbw_str_always(struct pbw *w, unsigned field, const char *s)
{
	pbw_bytes(w, field, s, strlen(s));
}

void pbw_str(struct pbw *w, unsigned field, const char *s)
{
	if (s && *s)
		pbw_str_always(w, field, s);
}

size_t pbw_begin(struct pbw *w, unsigned field)
{
	pbw_tag(w, field, WT_LEN);
	return w->len;
}

void pbw_end(struct pbw *w, size_t mark)
{
	size_t body = w->len - mark, k = varint_len(body);

	if (!room(w, k))
		return;
	memmove(w->buf + mark + k, w->buf + mark, body);
	put_varint(w->buf + mark, body);
	w->len += k;
}

void pbw_free(struct pbw *w)
{
	free(w->buf);
	*w = (struct pbw){ 0 };
}
