/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Written by scripts/perl/layouts.sh from the headers of each Perl below
 * (its CORE directory, with its $Config ccflags), compiled into
 * scripts/perl/layout.c: the layout the walk reads, by the API version
 * string every XS module is checked against. Do not edit;
 * tests/plprofile.test checks the rows against the headers installed.
 */
// clang-format off
static const struct perl_layout perl_layouts[] = {
	{ "v5.36.0", "x86_64",
	  .interp = { .curcop = 208, .curstackinfo = 224, .phase = 2512, .phase_run = 4 },
	  .si = { .cxstack = 8, .prev = 16, .cxix = 32, .cxmax = 36 },
	  .cx = { .size = 104, .type = 0, .oldcop = 16, .retop = 48, .cv = 72, .u16 = 2 },
	  .cxt = { .mask = 0xf, .sub = 9, .format = 10, .eval = 11, .multicall = 0x10, .evalblock = 0x40, .old_op_shift = 7, .op_require = 342 },
	  .cop = { .line = 36, .file = 48, .seq = 60 },
	  .sv = { .any = 0, .flags = 12, .u = 16, .type_mask = 0xff, .pvcv = 13, .pvgv = 9, .pvhv = 12, .ook = 0x2000000 },
	  .xcv = { .stash = 32, .gv = 56, .file = 64, .flags = 92, .named = 0x8000, .start = 40 },
	  .op = { .type = 32, .type_shift = 0, .type_mask = 0x1ff, .nextstate = 195, .dbstate = 196 },
	  .xgv = { .namehek = 32, .stash = 40 },
	  .xhv = { .name = 32, .name_count = 60 },
	  .hek = { .len = 4, .key = 8 } },
	{ "v5.40.1", "x86_64",
	  .interp = { .curcop = 208, .curstackinfo = 224, .phase = 2216, .phase_run = 4 },
	  .si = { .cxstack = 8, .prev = 16, .cxix = 32, .cxmax = 36 },
	  .cx = { .size = 104, .type = 0, .oldcop = 16, .retop = 48, .cv = 72, .u16 = 2 },
	  .cxt = { .mask = 0xf, .sub = 9, .format = 10, .eval = 11, .multicall = 0x10, .evalblock = 0x40, .old_op_shift = 7, .op_require = 345 },
	  .cop = { .line = 36, .file = 48, .seq = 60 },
	  .sv = { .any = 0, .flags = 12, .u = 16, .type_mask = 0xff, .pvcv = 13, .pvgv = 9, .pvhv = 12, .ook = 0x2000000 },
	  .xcv = { .stash = 32, .gv = 56, .file = 64, .flags = 92, .named = 0x8000, .start = 40 },
	  .op = { .type = 32, .type_shift = 0, .type_mask = 0x1ff, .nextstate = 198, .dbstate = 199 },
	  .xgv = { .namehek = 32, .stash = 40 },
	  .xhv = { .name = 32, .name_count = 60 },
	  .hek = { .len = 4, .key = 8 } },
	{ "v5.42.3", "x86_64",
	  .interp = { .curcop = 208, .curstackinfo = 224, .phase = 2216, .phase_run = 4 },
	  .si = { .cxstack = 8, .prev = 16, .cxix = 32, .cxmax = 36 },
	  .cx = { .size = 104, .type = 0, .oldcop = 16, .retop = 48, .cv = 72, .u16 = 2 },
	  .cxt = { .mask = 0xf, .sub = 9, .format = 10, .eval = 11, .multicall = 0x10, .evalblock = 0x40, .old_op_shift = 7, .op_require = 349 },
	  .cop = { .line = 36, .file = 48, .seq = 60 },
	  .sv = { .any = 0, .flags = 12, .u = 16, .type_mask = 0xff, .pvcv = 13, .pvgv = 9, .pvhv = 12, .ook = 0x2000000 },
	  .xcv = { .stash = 32, .gv = 56, .file = 64, .flags = 92, .named = 0x8000, .start = 40 },
	  .op = { .type = 32, .type_shift = 0, .type_mask = 0x1ff, .nextstate = 202, .dbstate = 203 },
	  .xgv = { .namehek = 32, .stash = 40 },
	  .xhv = { .name = 32, .name_count = 60 },
	  .hek = { .len = 4, .key = 8 } },
};
// clang-format on
