// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The layout sfbpf reads PHP's frames with, from the headers of one exact
 * PHP (its -dev package): compiled against them, it prints one row of
 * userspace/interp/php_layouts.h (struct php_layout, interp/php.h), keyed on
 * the build ID PHP itself checks every extension against
 * (ZEND_MODULE_BUILD_ID, "API20220829,NTS"): extensions reach these same
 * structures through these headers, so a binary that carries that ID lays
 * them out as they say. scripts/php/layouts.sh builds and runs it.
 */
#include <stddef.h>
#include <stdio.h>

#include "php.h"
#include "zend_modules.h"

#define OFF(type, field) ((unsigned)offsetof(type, field))

int main(void)
{
#if defined(__x86_64__)
	const char *arch = "x86_64";
#elif defined(__aarch64__)
	const char *arch = "aarch64";
#else
#error "an architecture sfbpf does not profile"
#endif
	/* The minor version only: a release's fixes keep its build ID and layout. */
	printf("\t{ .build_id = \"%s\", .arch = \"%s\", .version = \"%d.%d\",\n",
	       ZEND_MODULE_BUILD_ID, arch, PHP_MAJOR_VERSION, PHP_MINOR_VERSION);
	printf("\t  .eg_size = %u, .eg_current_execute_data = %u,\n",
	       (unsigned)sizeof(zend_executor_globals),
	       OFF(zend_executor_globals, current_execute_data));
	printf("\t  .ed = { .opline = %u, .func = %u, .call_info = %u, .prev = %u },\n",
	       OFF(zend_execute_data, opline), OFF(zend_execute_data, func),
	       OFF(zend_execute_data, This) + OFF(zval, u1.type_info),
	       OFF(zend_execute_data, prev_execute_data));
	printf("\t  .fn = { .type = %u, .fn_flags = %u, .function_name = %u, .scope = %u,\n"
	       "\t\t  .filename = %u, .line_start = %u, .opcodes = %u, .last = %u },\n",
	       OFF(zend_function, type), OFF(zend_function, common.fn_flags),
	       OFF(zend_function, common.function_name), OFF(zend_function, common.scope),
	       OFF(zend_function, op_array.filename), OFF(zend_function, op_array.line_start),
	       OFF(zend_function, op_array.opcodes), OFF(zend_function, op_array.last));
	printf("\t  .op_size = %u, .op_lineno = %u, .str_len = %u, .str_val = %u, .ce_name = %u,\n",
	       (unsigned)sizeof(zend_op), OFF(zend_op, lineno), OFF(zend_string, len),
	       OFF(zend_string, val), OFF(zend_class_entry, name));
	printf("\t  .call_top = 0x%x, .acc_closure = 0x%x, .internal_function = %u,\n"
	       "\t  .user_function = %u, .eval_code = %u },\n",
	       (unsigned)ZEND_CALL_TOP, (unsigned)ZEND_ACC_CLOSURE,
	       (unsigned)ZEND_INTERNAL_FUNCTION, (unsigned)ZEND_USER_FUNCTION,
	       (unsigned)ZEND_EVAL_CODE);
	return 0;
}
