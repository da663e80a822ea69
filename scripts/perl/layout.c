// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prints one row of userspace/interp/perl_layouts.h: the offsets the walk
 * reads, as this Perl's own headers lay them out (its CORE directory, which
 * Debian ships with the interpreter's library, compiled with its $Config
 * ccflags by scripts/perl/layouts.sh). The key is the API version string
 * every XS module is checked against ("v5.36.0"), and the architecture.
 */
#include "EXTERN.h"
#include "perl.h"

#include <stdio.h>

#define OFF(type, field) ((unsigned)__builtin_offsetof(type, field))

#ifndef USE_ITHREADS
#error "a Perl without ithreads keeps its interpreter in globals: not supported"
#endif

/* How far CxOLD_OP_TYPE() shifts an eval's blk_u16: found by asking it. */
static unsigned old_op_shift(void)
{
	PERL_CONTEXT cx;

	for (unsigned s = 0; s < 16; s++) {
		cx.blk_u16 = (U16)(1u << s);
		if (CxOLD_OP_TYPE(&cx) == 1)
			return s;
	}
	return 0xff;
}

/* Where an op's 9-bit op_type field lies (a bit-field): the byte its bits start in, the shift. */
static void op_type_at(unsigned *byte, unsigned *shift)
{
	union {
		OP op;
		unsigned char b[sizeof(OP)];
	} u;
	unsigned i;
	U32 v = 0;

	memset(&u, 0, sizeof(u));
	u.op.op_type = (1u << 9) - 1;
	for (i = 0; i < sizeof(u.b) && !u.b[i]; i++)
		;
	memcpy(&v, &u.b[i], i + 4 <= sizeof(u.b) ? 4 : sizeof(u.b) - i);
	*byte = i;
	*shift = (unsigned)__builtin_ctz(v);
}

int main(void)
{
	unsigned byte, shift;

	printf("\t{ \"v%d.%d.%d\", \"%s\",\n", PERL_REVISION, PERL_VERSION, PERL_SUBVERSION,
	       ARCH_S);
	printf("\t  .interp = { .curcop = %u, .curstackinfo = %u, .phase = %u, .phase_run = %u },\n",
	       OFF(struct interpreter, Icurcop), OFF(struct interpreter, Icurstackinfo),
	       OFF(struct interpreter, Iphase), (unsigned)PERL_PHASE_RUN);
	printf("\t  .si = { .cxstack = %u, .prev = %u, .cxix = %u, .cxmax = %u },\n",
	       OFF(PERL_SI, si_cxstack), OFF(PERL_SI, si_prev), OFF(PERL_SI, si_cxix),
	       OFF(PERL_SI, si_cxmax));
	printf("\t  .cx = { .size = %u, .type = %u, .oldcop = %u, .retop = %u, .cv = %u,"
	       " .u16 = %u },\n",
	       (unsigned)sizeof(PERL_CONTEXT), OFF(PERL_CONTEXT, cx_type),
	       OFF(PERL_CONTEXT, blk_oldcop), OFF(PERL_CONTEXT, blk_sub.retop),
	       OFF(PERL_CONTEXT, blk_sub.cv), OFF(PERL_CONTEXT, blk_u16));
	printf("\t  .cxt = { .mask = %#x, .sub = %u, .format = %u, .eval = %u, .multicall = %#x,"
	       " .evalblock = %#x, .old_op_shift = %u, .op_require = %u },\n",
	       (unsigned)CXTYPEMASK, (unsigned)CXt_SUB, (unsigned)CXt_FORMAT, (unsigned)CXt_EVAL,
	       (unsigned)CXp_MULTICALL, (unsigned)CXp_EVALBLOCK, old_op_shift(),
	       (unsigned)OP_REQUIRE);
	printf("\t  .cop = { .line = %u, .file = %u, .seq = %u },\n", OFF(COP, cop_line),
	       OFF(COP, cop_file), OFF(COP, cop_seq));
	printf("\t  .sv = { .any = %u, .flags = %u, .u = %u, .type_mask = %#x, .pvcv = %u,"
	       " .pvgv = %u, .pvhv = %u, .ook = %#x },\n",
	       OFF(SV, sv_any), OFF(SV, sv_flags), OFF(SV, sv_u), (unsigned)SVTYPEMASK,
	       (unsigned)SVt_PVCV, (unsigned)SVt_PVGV, (unsigned)SVt_PVHV, (unsigned)SVf_OOK);
	printf("\t  .xcv = { .stash = %u, .gv = %u, .file = %u, .flags = %u, .named = %#x,"
	       " .start = %u },\n",
	       OFF(XPVCV, xcv_stash), OFF(XPVCV, xcv_gv_u), OFF(XPVCV, xcv_file),
	       OFF(XPVCV, xcv_flags), (unsigned)CVf_NAMED, OFF(XPVCV, xcv_start_u));
	op_type_at(&byte, &shift);
	printf("\t  .op = { .type = %u, .type_shift = %u, .type_mask = %#x, .nextstate = %u,"
	       " .dbstate = %u },\n",
	       byte, shift, (unsigned)((1u << 9) - 1), (unsigned)OP_NEXTSTATE,
	       (unsigned)OP_DBSTATE);
	printf("\t  .xgv = { .namehek = %u, .stash = %u },\n", OFF(XPVGV, xiv_u.xivu_namehek),
	       OFF(XPVGV, xnv_u.xgv_stash));
	printf("\t  .xhv = { .name = %u, .name_count = %u },\n",
	       OFF(struct xpvhv_with_aux, xhv_aux.xhv_name_u),
	       OFF(struct xpvhv_with_aux, xhv_aux.xhv_name_count));
	printf("\t  .hek = { .len = %u, .key = %u } },\n", OFF(HEK, hek_len), OFF(HEK, hek_key));
	return 0;
}
