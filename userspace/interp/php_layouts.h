/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Written by scripts/php/layouts.sh from the headers of each PHP below
 * (its -dev package), compiled into scripts/php/layout.c: the layout the
 * walk reads, by the build ID PHP checks extensions against. Do not edit;
 * tests/phpprofile.test checks the rows against the headers installed.
 */
// clang-format off
static const struct php_layout php_layouts[] = {
	{ .build_id = "API20220829,NTS", .arch = "x86_64", .version = "8.2",
	  .eg_size = 1800, .eg_current_execute_data = 488,
	  .ed = { .opline = 0, .func = 24, .call_info = 40, .prev = 48 },
	  .fn = { .type = 0, .fn_flags = 4, .function_name = 8, .scope = 16,
		  .filename = 152, .line_start = 160, .opcodes = 88, .last = 80 },
	  .op_size = 32, .op_lineno = 24, .str_len = 16, .str_val = 24, .ce_name = 8,
	  .call_top = 0x20000, .acc_closure = 0x400000, .internal_function = 1,
	  .user_function = 2, .eval_code = 4 },
	{ .build_id = "API20240924,NTS", .arch = "x86_64", .version = "8.4",
	  .eg_size = 1984, .eg_current_execute_data = 488,
	  .ed = { .opline = 0, .func = 24, .call_info = 40, .prev = 48 },
	  .fn = { .type = 0, .fn_flags = 4, .function_name = 8, .scope = 16,
		  .filename = 168, .line_start = 176, .opcodes = 104, .last = 96 },
	  .op_size = 32, .op_lineno = 24, .str_len = 16, .str_val = 24, .ce_name = 8,
	  .call_top = 0x20000, .acc_closure = 0x400000, .internal_function = 1,
	  .user_function = 2, .eval_code = 4 },
};
// clang-format on
