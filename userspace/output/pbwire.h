/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Protocol buffers wire format, written by hand into a growing buffer: for
 * messages whose generated code would bring a whole schema tree into the
 * build (OTLP, see otlp.h). Fields follow proto3: a scalar equal to its
 * default (0, "") is not written unless the caller says so.
 *
 * A nested message is bracketed: pbw_begin() writes its tag and returns a
 * mark, pbw_end() inserts the exact length before the body (the body moves
 * by the length's few bytes), so nothing is measured twice.
 *
 * Errors stick: after a failed allocation every call does nothing and
 * w->err is -ENOMEM; check it once at the end. pbw_free() releases the buffer.
 */
#ifndef SFBPF_PBWIRE_H
#define SFBPF_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

struct pbw {
	uint8_t *buf;
	size_t len, cap;
	int err;
};

void pbw_varint(struct pbw *w, uint64_t v);
void pbw_tag(struct pbw *w, unsigned field, unsigned wire_type);
/* varint fields (uint32/uint64/int32/int64/bool); written only when v != 0 */
void pbw_uint(struct pbw *w, unsigned field, uint64_t v);
void pbw_int(struct pbw *w, unsigned field, int64_t v);
/* A varint field written even when 0 (an element of a repeated field). */
void pbw_uint_always(struct pbw *w, unsigned field, uint64_t v);
void pbw_fixed64(struct pbw *w, unsigned field, uint64_t v);
void pbw_bytes(struct pbw *w, unsigned field, const void *data, size_t n);
/* A string field; written only when s is not empty. */
void pbw_str(struct pbw *w, unsigned field, const char *s);
/* A string field written even when empty (a repeated string's element). */
void pbw_str_always(struct pbw *w, unsigned field, const char *s);
/* Nested message or packed repeated scalars: begin, write the body, end with the mark. */
size_t pbw_begin(struct pbw *w, unsigned field);
void pbw_end(struct pbw *w, size_t mark);
void pbw_free(struct pbw *w);

#endif /* SFBPF_PBWIRE_H */
