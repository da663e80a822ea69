// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Instruction → line, from a code object's table, in each of the three forms
 * CPython has used (docs/DESIGN-python.md, "Lines"). Pure functions over a
 * copy of the table: a malformed table (the object was freed and reused)
 * gives a wrong line or 0, never a read past its end.
 */
#include "interp/python_int.h"

/* 3.9 co_lnotab: (address delta, signed line delta) byte pairs. */
static int lines_lnotab(const uint8_t *tab, size_t len, int line, int64_t addr)
{
	int64_t at = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		at += tab[i];
		if (at > addr)
			break;
		line += (int8_t)tab[i + 1];
	}
	return line;
}

/*
 * 3.10 co_linetable: each pair covers the next tab[i] bytes of bytecode, with
 * the line moved by the signed tab[i + 1] (-128: these bytes have no line).
 */
static int lines_310(const uint8_t *tab, size_t len, int line, int64_t addr)
{
	int64_t start = 0;
	size_t i;

	if (addr < 0)
		return line;
	for (i = 0; i + 1 < len; i += 2) {
		int64_t end = start + tab[i];
		int delta = (int8_t)tab[i + 1];
		int here = line;

		if (delta == -128)
			here = 0;
		else
			here = line += delta;
		if (addr >= start && addr < end)
			return here;
		start = end;
	}
	return 0;
}

/* Unsigned varint of the 3.11 location table: 6 bits a byte, bit 6 = more. */
static uint64_t loc_varint(const uint8_t *tab, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (*i < len && shift < 64) {
		uint8_t b = tab[(*i)++];

		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int64_t loc_svarint(const uint8_t *tab, size_t len, size_t *i)
{
	uint64_t v = loc_varint(tab, len, i);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/*
 * 3.11+ location table: an entry starts with a byte with bit 7 set, bits 3-6
 * its kind, bits 0-2 the code units it covers minus one. Kind 15: no
 * location; 14: long form (line delta, end line, columns); 13: line delta
 * only; 10-12: line delta kind - 10 and two column bytes; 0-9: same line,
 * one column byte.
 */
static int lines_locations(const uint8_t *tab, size_t len, int line, int64_t addr)
{
	int64_t start = 0;
	size_t i = 0;

	if (addr < 0)
		return line;
	while (i < len) {
		uint8_t b = tab[i++];
		unsigned int kind = (b >> 3) & 15;
		int64_t end = start + 2 * ((b & 7) + 1);
		int here;

		if (!(b & 128))
			return 0; /* not an entry's first byte: a damaged table */
		switch (kind) {
		case 15:
			break;
		case 14:
			line += (int)loc_svarint(tab, len, &i);
			loc_varint(tab, len, &i);
			loc_varint(tab, len, &i);
			loc_varint(tab, len, &i);
			break;
		case 13:
			line += (int)loc_svarint(tab, len, &i);
			break;
		case 12:
		case 11:
		case 10:
			line += (int)kind - 10;
			i += 2;
			break;
		default:
			i += 1;
		}
		here = kind == 15 ? 0 : line;
		if (addr >= start && addr < end)
			return here;
		start = end;
	}
	return 0;
}

int py_lines__line(enum py_lines kind, const uint8_t *tab, size_t len, int firstlineno,
		   int64_t addr)
{
	switch (kind) {
	case PY_LINES_LNOTAB:
		return lines_lnotab(tab, len, firstlineno, addr);
	case PY_LINES_310:
		return lines_310(tab, len, firstlineno, addr);
	case PY_LINES_LOCATIONS:
		return lines_locations(tab, len, firstlineno, addr);
	}
	return 0;
}

/* Bytes of a 3.11+ location entry starting at tab[i] (its first byte's kind says). */
static size_t loc_entry_len(const uint8_t *tab, size_t len, size_t i)
{
	size_t at = i + 1;
	unsigned int kind = (tab[i] >> 3) & 15, varints = kind == 14 ? 4 : kind == 13 ? 1 : 0;

	if (kind >= 10 && kind <= 12)
		return 3;
	if (kind < 10)
		return 2;
	while (varints && at < len)
		varints -= !(tab[at++] & 64);
	return varints ? len + 1 - i : at - i; /* cut: past the end */
}

int64_t py_lines__covered(enum py_lines kind, const uint8_t *tab, size_t len)
{
	int64_t at = 0;
	size_t i, n;

	if (kind != PY_LINES_LOCATIONS) {
		/*
		 * Pairs: an address's line is known once a pair starting
		 * past it is in the table (3.9), or the pair covering it (3.10).
		 */
		for (i = 0; i + 1 < len; i += 2)
			at += tab[i];
		return at;
	}
	for (i = 0; i < len && (tab[i] & 128); i += n) {
		n = loc_entry_len(tab, len, i);
		if (i + n > len)
			break;
		at += 2 * ((tab[i] & 7) + 1);
	}
	return at;
}
