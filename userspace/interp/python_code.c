// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A code object's names, file and line table (python.h): read from the
 * process with process_vm_readv, or taken from the description the BPF walk
 * sent while the code object ran (struct sfbpf_py_code).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "interp/python.h"
#include "interp/python_int.h"

#define PY_MAX_LINETABLE (1u << 20)

/* Append code point c to buf as UTF-8, if it fits with the NUL. */
static size_t put_utf8(char *buf, size_t len, size_t at, uint32_t c)
{
	char tmp[4];
	size_t n;

	if (c < 0x80) {
		tmp[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		tmp[0] = (char)(0xc0 | c >> 6);
		tmp[1] = (char)(0x80 | (c & 63));
		n = 2;
	} else if (c < 0x10000) {
		tmp[0] = (char)(0xe0 | c >> 12);
		tmp[1] = (char)(0x80 | ((c >> 6) & 63));
		tmp[2] = (char)(0x80 | (c & 63));
		n = 3;
	} else {
		tmp[0] = (char)(0xf0 | (c >> 18 & 7));
		tmp[1] = (char)(0x80 | ((c >> 12) & 63));
		tmp[2] = (char)(0x80 | ((c >> 6) & 63));
		tmp[3] = (char)(0x80 | (c & 63));
		n = 4;
	}
	if (at + n >= len)
		return at;
	memcpy(buf + at, tmp, n);
	return at + n;
}

/*
 * A str object as UTF-8. Names and file names are compact strings: the
 * characters follow the object, one byte each when ASCII, else 1, 2 or 4
 * bytes (state's kind bits 2-4; compact bit 5, ASCII bit 6).
 */
/* n characters of kind bytes each (1, 2, 4) as UTF-8 into buf, cut to len. */
static void put_chars(const uint8_t *chars, size_t n, uint32_t kind, char *buf, size_t len)
{
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t c = kind == 1 ? chars[i] :
			     kind == 2 ? ((const uint16_t *)chars)[i] :
					 ((const uint32_t *)chars)[i];

		at = put_utf8(buf, len, at, c);
	}
	buf[at] = 0;
}

static int read_str(struct python *py, uint64_t s, char *buf, size_t len)
{
	const struct py_layout *l = &py->layout;
	uint32_t state, kind;
	int64_t n;
	uint8_t chars[1024];
	int err;

	buf[0] = 0;
	err = procmem__read(py->pid, s + l->str_state, &state, sizeof(state));
	if (!err)
		err = procmem__read(py->pid, s + l->str_length, &n, sizeof(n));
	if (err)
		return err;
	kind = (state >> 2) & 7;
	if (!(state & (1u << 5)) || n < 0 || (kind != 1 && kind != 2 && kind != 4))
		return -EPROTO;
	if ((uint64_t)n * kind > sizeof(chars))
		n = sizeof(chars) / kind;
	err = procmem__read(py->pid,
			    s + (state & (1u << 6) ? l->str_ascii_size : l->str_compact_size),
			    chars, (size_t)n * kind);
	if (err)
		return err;
	put_chars(chars, (size_t)n, kind, buf, len);
	return 0;
}

int python__code(struct python *py, uint64_t code, uint32_t stamp, struct python_code *out)
{
	const struct py_layout *l = &py->layout;
	uint64_t name_obj, file_obj, tab_obj, type;
	int64_t tab_len;
	int32_t first;
	int err;

	memset(out, 0, sizeof(*out));
	err = procmem__u64(py->pid, code + l->ob_type, &type);
	if (!err)
		err = procmem__u64(py->pid, code + l->code_linetable, &tab_obj);
	if (err)
		return err;
	/* Freed since the sample (and maybe reused): not the code object it ran. */
	if (type != py->code_type || (uint32_t)tab_obj != stamp)
		return -ESTALE;
	err = procmem__u64(py->pid,
			   code + (l->code_qualname != PY_NONE ? l->code_qualname : l->code_name),
			   &name_obj);
	if (!err)
		err = procmem__u64(py->pid, code + l->code_filename, &file_obj);
	if (!err)
		err = procmem__read(py->pid, code + l->code_firstlineno, &first, sizeof(first));
	if (!err)
		err = read_str(py, name_obj, out->name, sizeof(out->name));
	if (!err)
		err = read_str(py, file_obj, out->file, sizeof(out->file));
	if (!err)
		err = procmem__read(py->pid, tab_obj + l->bytes_size, &tab_len, sizeof(tab_len));
	if (err)
		return err;
	if (tab_len < 0 || tab_len > PY_MAX_LINETABLE)
		return -EPROTO;
	out->firstlineno = first;
	out->linetable = malloc((size_t)tab_len + 1);
	if (!out->linetable)
		return -ENOMEM;
	out->linetable_len = (size_t)tab_len;
	out->covered = INT64_MAX;
	err = procmem__read(py->pid, tab_obj + l->bytes_data, out->linetable, (size_t)tab_len);
	if (err)
		python__code_free(out);
	return err;
}

int python__code_lineno(const struct python *py, const struct python_code *c, int64_t lasti)
{
	if (lasti >= c->covered)
		return -ERANGE;
	return py_lines__line(py->layout.lines, c->linetable, c->linetable_len, c->firstlineno,
			      lasti);
}

void python__code_free(struct python_code *c)
{
	free(c->linetable);
	c->linetable = NULL;
	c->linetable_len = 0;
}

int python__code_line(struct python *py, const struct python_frame *fr, char *name, size_t name_len,
		      char *file, size_t file_len, int *line)
{
	const struct py_layout *l = &py->layout;
	struct python_code c;
	uint64_t tab_obj;
	int err;

	*line = 0;
	err = procmem__u64(py->pid, fr->code + l->code_linetable, &tab_obj);
	if (!err)
		err = python__code(py, fr->code, (uint32_t)tab_obj, &c);
	if (err == -ESTALE)
		err = -EPROTO;
	if (err)
		return err;
	snprintf(name, name_len, "%s", c.name);
	snprintf(file, file_len, "%s", c.file);
	*line = python__code_lineno(py, &c, fr->lasti);
	python__code_free(&c);
	return 0;
}

int python__code_captured(const struct python *py, const struct sfbpf_py_code *rec, size_t size,
			  struct python_code *out)
{
	size_t n = size - SFBPF_PY_CODE_HDR_SIZE;

	memset(out, 0, sizeof(*out));
	if (size < SFBPF_PY_CODE_HDR_SIZE || n > SFBPF_PY_TABLE_BYTES || n > rec->table_len ||
	    rec->name_len > SFBPF_PY_NAME_BYTES || rec->file_len > SFBPF_PY_FILE_BYTES)
		return -EINVAL;
	/* Not a code object (a layout wrong in a way the attach checks missed): [bad code]. */
	if (rec->type != py->code_type)
		return -EPROTO;
	/* A str the walk could not copy (not compact): read from the process, if it lives. */
	if (!rec->name_kind || !rec->file_kind)
		return -ENODATA;
	put_chars(rec->name, rec->name_len / rec->name_kind, rec->name_kind, out->name,
		  sizeof(out->name));
	put_chars(rec->file, rec->file_len / rec->file_kind, rec->file_kind, out->file,
		  sizeof(out->file));
	out->firstlineno = rec->firstlineno;
	out->linetable = malloc(n + 1);
	if (!out->linetable)
		return -ENOMEM;
	memcpy(out->linetable, rec->table, n);
	out->linetable_len = n;
	out->covered =
		n < rec->table_len ? py_lines__covered(py->layout.lines, rec->table, n) : INT64_MAX;
	return 0;
}
