/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Written by scripts/ruby/layouts.sh from the headers of each Ruby below
 * (its -dev package's MJIT header to 3.2, its source package's VM headers
 * from 3.3), compiled into scripts/ruby/layout.c: the layout the walk
 * reads, by the version the library says it is. Do not edit;
 * tests/rbprofile.test checks the rows against the headers installed.
 */
// clang-format off
static const struct ruby_layout ruby_layouts[] = {
	{ "3.1.2", "x86_64",
	  .vm = { .ractor_set = 8, .main_ractor = 32, .at_exit = 1112 },
	  .ractor = { .threads_set = 304, .vmlr_node = 568 },
	  .th = { .lt_node = 0, .ec = 40, .nt = 65535, .tid = 88 },
	  .ec = { .vm_stack = 0, .vm_stack_size = 8, .cfp = 16 },
	  .cfp = { .size = 64, .pc = 0, .iseq = 16, .ep = 32 },
	  .frame = { .magic_mask = 0x7fff0001, .method = 0x11110001, .block = 0x22220001, .class_ = 0x33330001, .top = 0x44440001, .cfunc = 0x55550001, .ifunc = 0x66660001, .eval = 0x77770001, .rescue = 0x78880001, .dummy = 0x79990001, .finish = 0x20, .cframe = 0x80, .bmethod = 0x40, .env_local = 0x2, .specval = 8 },
	  .iseq = { .body = 16, .t_imemo = 0x1a, .imemo_iseq = 7, .imemo_shift = 12 },
	  .body = { .type = 0, .iseq_size = 4, .iseq_encoded = 8, .pathobj = 64, .label = 80, .first_lineno = 88, .insns_body = 120, .insns_positions = 128, .insns_size = 136, .insns_succ = 144, .lineno_fixnum = 1, .local_iseq = 176, .type_block = 2 },
	  .method = { .me_cref = 16, .imemo_ment = 6, .def = 16, .owner = 32, .type_byte = 0, .type_mask = 0xf, .type_iseq = 0, .iseqptr = 8, .imemo_svar = 2, .svar_me = 8, .type_cfunc = 1, .original_id = 32 },
	  .id = { .scope_shift = 4, .last_op = 0xa9 },
	  .klass = { .t_class = 0x2, .t_module = 0x3, .singleton = 0x1000, .ext = 24, .iv_tbl = 8, .st_start = 32, .st_bound = 40, .st_entries = 48 },
	  .insn_info = { .size = 12, .line_no = 0 },
	  .str = { .t_string = 0x5, .noembed = 0x2000, .embed_len_mask = 0x7c000, .embed_len_shift = 14, .len = 16, .ptr = 24, .ary = 16 },
	  .ary = { .t_array = 0x7, .embed = 0x2000, .embed_len_mask = 0x18000, .embed_len_shift = 15, .len = 16, .ptr = 32, .ary = 16 } },
	{ "3.3.8", "x86_64",
	  .vm = { .ractor_set = 8, .main_ractor = 32, .at_exit = 1312 },
	  .ractor = { .threads_set = 256, .vmlr_node = 432 },
	  .th = { .lt_node = 0, .ec = 48, .nt = 40, .tid = 24 },
	  .ec = { .vm_stack = 0, .vm_stack_size = 8, .cfp = 16 },
	  .cfp = { .size = 56, .pc = 0, .iseq = 16, .ep = 32 },
	  .frame = { .magic_mask = 0x7fff0001, .method = 0x11110001, .block = 0x22220001, .class_ = 0x33330001, .top = 0x44440001, .cfunc = 0x55550001, .ifunc = 0x66660001, .eval = 0x77770001, .rescue = 0x78880001, .dummy = 0x79990001, .finish = 0x20, .cframe = 0x80, .bmethod = 0x40, .env_local = 0x2, .specval = 8 },
	  .iseq = { .body = 16, .t_imemo = 0x1a, .imemo_iseq = 7, .imemo_shift = 12 },
	  .body = { .type = 0, .iseq_size = 4, .iseq_encoded = 8, .pathobj = 64, .label = 80, .first_lineno = 88, .insns_body = 112, .insns_positions = 120, .insns_size = 128, .insns_succ = 136, .lineno_fixnum = 0, .local_iseq = 168, .type_block = 2 },
	  .method = { .me_cref = 16, .imemo_ment = 6, .def = 16, .owner = 32, .type_byte = 0, .type_mask = 0xf, .type_iseq = 0, .iseqptr = 8, .imemo_svar = 2, .svar_me = 8, .type_cfunc = 1, .original_id = 32 },
	  .id = { .scope_shift = 4, .last_op = 0xa9 },
	  .klass = { .t_class = 0x2, .t_module = 0x3, .singleton = 0x1000, .classpath = 152, .attached = 128, .perm_byte = 149, .perm_mask = 0x1 },
	  .insn_info = { .size = 12, .line_no = 0 },
	  .str = { .t_string = 0x5, .noembed = 0x2000, .embed_len_mask = 0, .embed_len_shift = 0, .len = 16, .ptr = 24, .ary = 24 },
	  .ary = { .t_array = 0x7, .embed = 0x2000, .embed_len_mask = 0x3f8000, .embed_len_shift = 15, .len = 16, .ptr = 32, .ary = 16 } },
};
// clang-format on
