/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PHP's Zend VM in a process (issue #46, docs/DESIGN-php.md): the object
 * that runs it (php, php-fpm, php-cgi, or a libphp a host program maps),
 * found by the executor_globals it exports; its layout from the headers of
 * the build ID it carries (the string PHP checks every extension against,
 * "API20220829,NTS": php_layouts.h, written by scripts/php/layouts.sh);
 * the BPF walk's settings; a frame's function and line, read from the
 * process while it lives.
 *
 * Checked before it is believed: the executor globals' size in the symbol
 * table against the headers' (a binary whose build ID lies is refused); a
 * frame's function by its type, its opline inside its opcodes.
 * ZTS builds (executor globals per thread) are not supported: -ENOTSUP.
 */
#ifndef SFBPF_INTERP_PHP_H
#define SFBPF_INTERP_PHP_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "interp/codeparts.h"

/* One PHP build's layout (php_layouts.h): offsets in bytes, flags as its headers define them. */
struct php_layout {
	const char *build_id; /* ZEND_MODULE_BUILD_ID */
	const char *arch; /* "x86_64", "aarch64" */
	const char *version; /* PHP_MAJOR_VERSION.PHP_MINOR_VERSION, for messages */
	uint32_t eg_size; /* sizeof(zend_executor_globals) */
	uint32_t eg_current_execute_data;
	struct {
		uint16_t opline, func, call_info, prev;
	} ed; /* zend_execute_data; call_info: This.u1.type_info */
	struct {
		uint16_t type, fn_flags, function_name, scope, filename, line_start, opcodes, last;
	} fn; /* zend_function: common.*, op_array.* */
	uint16_t op_size, op_lineno; /* zend_op */
	uint16_t str_len, str_val; /* zend_string */
	uint16_t ce_name; /* zend_class_entry */
	uint32_t call_top, acc_closure;
	uint8_t internal_function, user_function, eval_code;
};

#define PHP_EVAL_PARTS 8
#define PHP_NAME_BYTES 256
#define PHP_FILE_BYTES 512

struct php;

/* An internal function's file: PHP's own traces say "[internal function]". */
#define PHP_INTERNAL_FILE "<internal>"

/*
 * A frame's function as PHP's users know it: Class::method, function,
 * {closure}, {main}, {eval}, an internal function (usort, PDO::query) at
 * PHP_INTERNAL_FILE, line 0.
 */
struct php_frame {
	char name[PHP_NAME_BYTES];
	char file[PHP_FILE_BYTES];
	uint32_t firstline, line;
};

/*
 * The PHP that pid runs: 0 and *out, or -ENOENT (none), -ENOTSUP (a build
 * with no known layout, or ZTS), -EPROTO (its symbols disagree with its
 * build ID's layout), or a read error.
 */
int php__attach(int pid, struct php **out);
/*
 * A reader of pid, forked by parent's process, made from parent's without
 * reading pid (it may be gone): for its samples, what the fork shared
 * (opcache's shared memory: the op arrays, their strings) is read through
 * the parent once pid's own read fails. 0 and *out, or -ENOMEM.
 */
int php__inherit(const struct php *parent, int pid, struct php **out);
void php__free(struct php *p);
/* Object files read, and found in the cache, for every attach (objfacts.h). */
void php__object_stats(uint64_t *reads, uint64_t *hits);
/* "8.2 (API20220829,NTS)" */
const char *php__version(const struct php *p);
int php__bpf_settings(const struct php *p, struct sfbpf_php_proc *cfg);
/* The native code of execute_ex (the VM's loop): its parts, process addresses. */
size_t php__eval_parts(const struct php *p, const struct code_part **parts);
/*
 * The frame of function func at opline, stamped stamp (the walk's slots):
 * 0, or -ESTALE (func is no function now, or another one: freed), or a
 * read error. The line is the opline's when it lies in func's opcodes, else
 * the function's first.
 */
int php__frame(const struct php *p, uint64_t func, uint64_t opline, uint16_t stamp,
	       struct php_frame *out);

#endif /* SFBPF_INTERP_PHP_H */
