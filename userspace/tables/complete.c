// SPDX-License-Identifier: GPL-2.0-or-later
/* Completing an object's table from all its sources (see complete.h). */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "tables/complete.h"
#include "tables/flatbuild.h"

/*
 * Functions no unwinder may step out of, by symbol name. Go marks them
 * TOPFRAME (runtime/asm_amd64.s) and its own traceback stops there:
 *
 * - runtime.goexit: every goroutine's entry function "returns" to goexit+1,
 *   planted by the runtime (gostartcallfn); above it is nothing. Go's
 *   .debug_frame describes it as an ordinary frame, so without this the walk
 *   goes on into whatever the stack holds.
 * - runtime.rt0_go: jumped to from the ELF entry point, with argc where a
 *   return address would be; runtime.mstart: the first function of a thread
 *   the runtime created with its own clone(). Both only when the Go runtime
 *   started the process and its threads itself: in a binary linked with libc
 *   (cgo: x_cgo_init present, or an interpreter) rt0_go is called by libc's
 *   main and mstart by pthread's thread start, whose frames are real.
 *
 * Go 1.17+ names assembly functions with an ".abi0" suffix.
 */
static const struct {
	const char *name;
	bool runtime_started; /* only when the runtime started the process itself */
} outermost_fns[] = {
	{ "runtime.goexit", false }, { "runtime.goexit.abi0", false },
	{ "runtime.rt0_go", true },  { "runtime.rt0_go.abi0", true },
	{ "runtime.mstart", true },  { "runtime.mstart.abi0", true },
};

#define NR_OUTERMOST_FNS (sizeof(outermost_fns) / sizeof(outermost_fns[0]))

/*
 * Go's runtime functions that move SP to another stack (the thread's g0 or
 * gsignal stack, another goroutine's) and call or jump on from there,
 * written in assembly (runtime/asm_amd64.s, sys_linux_amd64.s,
 * time_linux_amd64.s, race/asan/msan/libfuzzer_amd64.s): every function of
 * Debian's Go 1.19 runtime whose code loads RSP from a register or memory
 * (objdump), except rt0_go (outermost above) and clone (its child side calls
 * mstart, outermost). Their .debug_frame rows are written for the frame
 * before the switch (runtime.systemstack: CFA = SP + 8), so below a callee
 * on the new stack the rule reads the top of that stack: 0 ("complete",
 * wrongly) or a stale address. Go keeps frame pointers, and these functions
 * either leave rbp pointing into the first stack (frame size 0) or have
 * their own frame there: a gap row makes the unwinder step by rbp, back onto
 * the first stack (counted once per stack as fp-stack-switches), as
 * perf -g does. Names of later versions (walltime, vgetrandom1) are listed
 * too; a function wrongly listed only costs a frame-pointer step.
 *
 * Go 1.17+ names an assembly function NAME.abi0 and gives the plain NAME to
 * an ordinary wrapper, whose .debug_frame rows are right: the plain name is
 * taken only when no NAME.abi0 exists (older Go, or an ABIInternal function
 * such as runtime.mcall or time.now).
 */
static const struct {
	const char *name;
	size_t len;
} stack_switch_fns[] = {
/* clang-format off */
#define FN(n) { n, sizeof(n) - 1 }
	/* clang-format on */
	FN("runtime.systemstack"),
	FN("runtime.mcall"),
	FN("runtime.morestack"),
	FN("runtime.gogo"),
	FN("gogo"),
	FN("runtime.asmcgocall"),
	FN("runtime.asmcgocall_no_g"),
	FN("runtime.cgocallback"),
	FN("runtime.nanotime1"),
	FN("runtime.walltime"),
	FN("runtime.walltime1"),
	FN("runtime.vgetrandom1"),
	FN("time.now"),
	FN("runtime.callCgoMmap"),
	FN("runtime.callCgoMunmap"),
	FN("runtime.callCgoSigaction"),
	FN("runtime.sigfwd"),
	FN("racecall"),
	FN("asancall"),
	FN("msancall"),
	FN("runtime.libfuzzerCall4"),
	FN("runtime.libfuzzerCallTraceIntCmp"),
	FN("runtime.libfuzzerCallWithTwoByteBuffers"),
#undef FN
};

#define NR_STACK_SWITCH_FNS (sizeof(stack_switch_fns) / sizeof(stack_switch_fns[0]))

/* Sections only the Go toolchain writes. */
static const char *const go_sections[] = { ".go.buildinfo", ".note.go.buildid" };

static const char *const plt_sections[] = { ".plt", ".plt.sec", ".plt.got" };

/* Whether the SHT_DYNAMIC section scn lists a DT_NEEDED library. */
static bool has_needed(Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = data && sh->sh_entsize ? data->d_size / sh->sh_entsize : 0;
	GElf_Dyn dyn;

	for (i = 0; i < n && gelf_getdyn(data, (int)i, &dyn) && dyn.d_tag != DT_NULL; i++)
		if (dyn.d_tag == DT_NEEDED)
			return true;
	return false;
}

/*
 * entry: e_entry of an object the kernel may start, 0 if none; program: a
 * program for sure (ET_EXEC, PT_INTERP), else a loader only without DT_NEEDED.
 */
static void read_sections(Elf *elf, struct complete_info *ci, Elf_Scn **symtab, Elf_Scn **dynsym,
			  uint64_t entry, bool program)
{
	Elf_Scn *scn = NULL;
	const char *name;
	size_t shstrndx, i;
	bool needed = false;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_size)
			*symtab = scn;
		if (sh.sh_type == SHT_DYNSYM && sh.sh_size)
			*dynsym = scn;
		if (sh.sh_type == SHT_DYNAMIC)
			needed |= has_needed(scn, &sh);
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		for (i = 0; name && i < sizeof(go_sections) / sizeof(go_sections[0]); i++)
			ci->go |= !strcmp(name, go_sections[i]);
		if (!(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size ||
		    sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		if (entry && entry >= sh.sh_addr && entry - sh.sh_addr < sh.sh_size)
			ci->entry = (struct complete_range){
				entry,
				entry + (sh.sh_addr + sh.sh_size - entry < COMPLETE_ENTRY_MAX ?
						 sh.sh_addr + sh.sh_size - entry :
						 COMPLETE_ENTRY_MAX)
			};
		for (i = 0; name && i < sizeof(plt_sections) / sizeof(plt_sections[0]); i++) {
			if (strcmp(name, plt_sections[i]) || ci->nr_plt == COMPLETE_MAX_PLT)
				continue;
			ci->plt[ci->nr_plt++] =
				(struct complete_range){ sh.sh_addr, sh.sh_addr + sh.sh_size };
			if (!strcmp(name, ".plt.got"))
				ci->plt_got = ci->plt[ci->nr_plt - 1];
		}
	}
	if (needed && !program)
		ci->entry = (struct complete_range){ 0, 0 };
}

/* Whether a program header names an interpreter: libc started the process. */
static bool has_interp(Elf *elf)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return true;
	return false;
}

/* A stack-switching function found in the symbols (stack_switch_fns). */
struct switch_hit {
	struct complete_range r;
	uint8_t fn; /* index in stack_switch_fns */
	bool abi0; /* named NAME.abi0 */
};

/* Index of name (".abi0" dropped, *abi0 set) in stack_switch_fns, or -1. */
static int stack_switch_fn(const char *name, bool *abi0)
{
	size_t len = strlen(name), i;

	*abi0 = len > 5 && !strcmp(name + len - 5, ".abi0");
	if (*abi0)
		len -= 5;
	for (i = 0; i < NR_STACK_SWITCH_FNS; i++)
		if (stack_switch_fns[i].len == len && !memcmp(name, stack_switch_fns[i].name, len))
			return (int)i;
	return -1;
}

/*
 * The hits that name an assembly body: NAME.abi0 where it exists, else NAME
 * (see stack_switch_fns).
 */
static void keep_switch_hits(const struct switch_hit *hits, uint32_t nr, struct complete_info *ci)
{
	bool has_abi0[NR_STACK_SWITCH_FNS] = { false };
	uint32_t k;

	for (k = 0; k < nr; k++)
		has_abi0[hits[k].fn] |= hits[k].abi0;
	for (k = 0; k < nr && ci->nr_stack_switch < COMPLETE_MAX_STACK_SWITCH; k++)
		if (hits[k].abi0 || !has_abi0[hits[k].fn])
			ci->stack_switch[ci->nr_stack_switch++] = hits[k].r;
}

/*
 * The entry code ends where a function begins (or where the function holding
 * the entry ends): the gap after it may run on over code of functions that
 * have no CFI either (a Go binary without .debug_frame, musl's _start_c),
 * which are no first frame. A function of no size is a label in the entry
 * code itself (AArch64 glibc's _dl_start_user, right after the call to
 * _dl_start), not a bound.
 */
static void bound_entry(struct complete_info *ci, const GElf_Sym *sym)
{
	uint64_t start = ci->entry.start, end;
	unsigned type = GELF_ST_TYPE(sym->st_info);

	if (start >= ci->entry.end || (type != STT_FUNC && type != STT_GNU_IFUNC) ||
	    sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE || !sym->st_size)
		return;
	end = sym->st_value > start ? sym->st_value : 0;
	if (sym->st_value <= start && start - sym->st_value < sym->st_size)
		end = sym->st_value + sym->st_size;
	if (end > start && end < ci->entry.end)
		ci->entry.end = end;
}

static void read_symbols(Elf *elf, Elf_Scn *scn, struct complete_info *ci, bool runtime_started)
{
	struct complete_range found[COMPLETE_MAX_OUTERMOST], go_text = { 0, 0 };
	struct switch_hit hits[COMPLETE_MAX_STACK_SWITCH];
	uint8_t started[COMPLETE_MAX_OUTERMOST];
	Elf_Data *data = elf_getdata(scn, NULL), *strs;
	uint32_t nr = 0, nr_hits = 0, k;
	bool cgo = false, abi0, first[256] = { false };
	const char *name;
	size_t i, j, n;
	GElf_Shdr sh;
	GElf_Sym sym;
	int fn;

	if (!data || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return;
	/*
	 * The names read in place, not by elf_strptr() (which checks the
	 * whole string table's bounds each time: most of the time spent on
	 * gcc's cc1, 28k symbols); a name must end inside the table.
	 */
	strs = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
	if (!strs || !strs->d_buf || !strs->d_size)
		return;
	n = sh.sh_size / sh.sh_entsize;
	/* The first letters of every name looked for below. */
	first['x'] = first['r'] = true; /* x_cgo_init, runtime.* */
	for (j = 0; j < NR_OUTERMOST_FNS; j++)
		first[(uint8_t)outermost_fns[j].name[0]] = true;
	for (j = 0; j < NR_STACK_SWITCH_FNS; j++)
		first[(uint8_t)stack_switch_fns[j].name[0]] = true;
	for (i = 0; i < n; i++) {
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if (sym.st_name >= strs->d_size)
			continue;
		name = (const char *)strs->d_buf + sym.st_name;
		bound_entry(ci, &sym);
		/* A C++ program's 40k others are passed over without a comparison each. */
		if (!first[(uint8_t)name[0]] || !memchr(name, '\0', strs->d_size - sym.st_name))
			continue;
		if (!strcmp(name, "x_cgo_init"))
			cgo = true;
		if (!strcmp(name, "runtime.buildVersion"))
			ci->go = true;
		/* Where Go's linker put Go's code: cgo's C objects (external linking) are outside.
		 */
		if (!strcmp(name, "runtime.text") && sym.st_shndx != SHN_UNDEF)
			go_text.start = sym.st_value;
		if (!strcmp(name, "runtime.etext") && sym.st_shndx != SHN_UNDEF)
			go_text.end = sym.st_value;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_size || sym.st_value + sym.st_size < sym.st_value)
			continue;
		fn = stack_switch_fn(name, &abi0);
		if (fn >= 0 && nr_hits < COMPLETE_MAX_STACK_SWITCH)
			hits[nr_hits++] = (struct switch_hit){
				{ sym.st_value, sym.st_value + sym.st_size }, (uint8_t)fn, abi0
			};
		if (strncmp(name, "runtime.", 8))
			continue;
		for (j = 0; j < NR_OUTERMOST_FNS && nr < COMPLETE_MAX_OUTERMOST; j++)
			if (!strcmp(name, outermost_fns[j].name)) {
				found[nr] = (struct complete_range){ sym.st_value,
								     sym.st_value + sym.st_size };
				started[nr++] = outermost_fns[j].runtime_started;
			}
	}
	for (k = 0; k < nr; k++)
		if (!started[k] || (runtime_started && !cgo))
			ci->outermost[ci->nr_outermost++] = found[k];
	/* The names are Go's: elsewhere (a C program's "gogo") they mean nothing. */
	if (ci->go)
		keep_switch_hits(hits, nr_hits, ci);
	if (ci->go && go_text.start < go_text.end)
		ci->go_text = go_text;
}

int complete__read_fd(int fd, struct complete_info *ci)
{
	Elf_Scn *symtab = NULL, *dynsym = NULL;
	bool started, interp;
	GElf_Ehdr eh;
	Elf *elf;

	memset(ci, 0, sizeof(*ci));
	elf_version(EV_CURRENT);
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -EINVAL;
	}
	started = gelf_getehdr(elf, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN);
	interp = has_interp(elf);
	read_sections(elf, ci, &symtab, &dynsym, started ? eh.e_entry : 0,
		      interp || (started && eh.e_type == ET_EXEC));
	if (symtab || dynsym)
		read_symbols(elf, symtab ? symtab : dynsym, ci, !interp);
	elf_end(elf);
	return 0;
}

/*
 * One source, walked in PC order: the rule in force at the last boundary. A
 * source may come in parts one after the other, each with rule ids of its
 * own (a CFI table walked in chunks: cfi.h), each ending in a gap row.
 */
struct cursor {
	const struct flat_table *t; /* the current part */
	const struct flat_table *const *parts;
	uint32_t nr_parts, part;
	uint32_t i, rule;
	int64_t *ids; /* the part's rule ids in the new table, + 1 (0: not yet) */
	int64_t *go_ids; /* the same with go_frame_rule applied (cfi in Go's text only) */
	uint32_t nr_ids; /* room in both: the most rules of a part, + 1 */
};

static void cursor_init(struct cursor *c, const struct flat_table *const *parts, uint32_t n)
{
	uint32_t k;

	*c = (struct cursor){ .parts = parts, .nr_parts = n, .nr_ids = 1 };
	c->t = n ? parts[0] : NULL;
	for (k = 0; k < n; k++)
		if (parts[k]->nr_rules + 1 > c->nr_ids)
			c->nr_ids = parts[k]->nr_rules + 1;
}

static uint64_t cursor_next(const struct cursor *c)
{
	uint32_t k;

	if (!c->t)
		return UINT64_MAX;
	if (c->i < c->t->nr_rows)
		return c->t->rows[c->i].pc_off;
	for (k = c->part + 1; k < c->nr_parts; k++)
		if (c->parts[k]->nr_rows)
			return c->parts[k]->rows[0].pc_off;
	return UINT64_MAX;
}

static void cursor_advance(struct cursor *c, uint64_t pc)
{
	for (;;) {
		while (c->t && c->i < c->t->nr_rows && c->t->rows[c->i].pc_off <= pc)
			c->rule = c->t->rows[c->i++].rule;
		if (!c->t || c->i < c->t->nr_rows || c->part + 1 >= c->nr_parts ||
		    (c->parts[c->part + 1]->nr_rows && c->parts[c->part + 1]->rows[0].pc_off > pc))
			return;
		/* The next part, its own rule ids: the one before ended in a gap (id 0 in all). */
		c->t = c->parts[++c->part];
		c->i = 0;
		c->rule = SFBPF_RULE_GAP_ID;
		memset(c->ids, 0, c->nr_ids * sizeof(*c->ids));
		memset(c->go_ids, 0, c->nr_ids * sizeof(*c->go_ids));
	}
}

/*
 * Go's .debug_frame says where the CFA and the return address are, never
 * where rbp is saved, so a walk through Go frames by those rows keeps the
 * topmost frame's rbp: the frame-pointer step of a gap row further up (the
 * stack-switching functions) would restart the chain from the top. Go's
 * frame layout fixes it (cmd/internal/obj/x86, every Go version with frame
 * pointers, 1.7+): a frame with anything below its return address holds the
 * caller's rbp right below it, at CFA - 16, stored by the prologue's first
 * instructions and reloaded in the epilogue. The row of such a frame, CFA =
 * SP + N with N >= 16, gets "rbp at CFA - 16"; at the one instruction
 * between the prologue's SP adjustment and the store the slot is not yet
 * written, which only matters for a sample there whose walk later takes a
 * frame-pointer step. A frame of 8 (return address only) saved nothing.
 */
static struct sfbpf_rule go_frame_rule(const struct sfbpf_rule *r)
{
	struct sfbpf_rule g = *r;

	if (r->cfa_reg == SFBPF_REG_SP && r->cfa_off >= 16 && r->ra_loc == SFBPF_LOC_CFA &&
	    r->ra_off == -8 && r->fp_loc == SFBPF_LOC_SAME && r->flags == SFBPF_RULE_RA_DEREF) {
		g.fp_loc = SFBPF_LOC_CFA;
		g.fp_off = -16;
		g.flags |= SFBPF_RULE_FP_DEREF;
	}
	return g;
}

/* The new table's id for the cursor's current rule; go: with Go's frame layout. */
static int64_t cursor_id(struct flat_builder *b, struct cursor *c, bool go)
{
	int64_t *ids = go ? c->go_ids : c->ids, id;
	struct sfbpf_rule g;

	if (!c->t || c->rule == SFBPF_RULE_GAP_ID || c->rule >= c->t->nr_rules)
		return SFBPF_RULE_GAP_ID;
	if (ids[c->rule])
		return ids[c->rule] - 1;
	g = go ? go_frame_rule(&c->t->rules[c->rule]) : c->t->rules[c->rule];
	id = flat_builder__rule(b, &g);
	if (id >= 0)
		ids[c->rule] = id + 1;
	return id;
}

static bool in_range(const struct complete_range *r, uint32_t n, uint64_t pc)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (pc >= r[i].start && pc < r[i].end)
			return true;
	return false;
}

/* The boundaries of ci's ranges, sorted: where the choice of source may change. */
static uint32_t range_points(const struct complete_info *ci, uint64_t *pts)
{
	uint32_t n = 0, i, j;
	uint64_t v;

	for (i = 0; ci && i < ci->nr_plt; i++) {
		pts[n++] = ci->plt[i].start;
		pts[n++] = ci->plt[i].end;
	}
	for (i = 0; ci && i < ci->nr_outermost; i++) {
		pts[n++] = ci->outermost[i].start;
		pts[n++] = ci->outermost[i].end;
	}
	for (i = 0; ci && i < ci->nr_stack_switch; i++) {
		pts[n++] = ci->stack_switch[i].start;
		pts[n++] = ci->stack_switch[i].end;
	}
	if (ci && ci->go_text.start < ci->go_text.end) {
		pts[n++] = ci->go_text.start;
		pts[n++] = ci->go_text.end;
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && pts[j - 1] > pts[j]; j--)
			v = pts[j], pts[j] = pts[j - 1], pts[j - 1] = v;
	return n;
}

struct merge {
	const struct complete_info *ci;
	struct cursor s, c;
	int64_t outermost_id, plt_got_id; /* -1 until a row needs them */
	/* Which of ci's ranges hold the current PC: that changes only at range_points. */
	bool outermost, stack_switch, plt, go_text;
};

static void find_zones(struct merge *m, uint64_t pc)
{
	const struct complete_info *ci = m->ci;

	m->outermost = ci && in_range(ci->outermost, ci->nr_outermost, pc);
	m->stack_switch = ci && in_range(ci->stack_switch, ci->nr_stack_switch, pc);
	m->plt = ci && in_range(ci->plt, ci->nr_plt, pc);
	m->go_text = ci && in_range(&ci->go_text, 1, pc);
}

/* Whether rule id of t describes something (not even an unsupported row). */
static bool usable(const struct flat_table *t, uint32_t id)
{
	return id != SFBPF_RULE_GAP_ID && id < t->nr_rules &&
	       !(t->rules[id].flags & SFBPF_RULE_GAP);
}

/* The outermost rule as the CFI translation writes it (cfi_rule.c). */
static const struct sfbpf_rule outermost_rule = { .ra_loc = SFBPF_LOC_UNDEFINED };
/* A jump reached by a call: the return address is on top of the stack. */
static const struct sfbpf_rule jump_stub_rule = {
	.cfa_reg = SFBPF_REG_SP,
	.cfa_off = 8,
	.ra_loc = SFBPF_LOC_CFA,
	.ra_off = -8,
	.fp_loc = SFBPF_LOC_SAME,
	.flags = SFBPF_RULE_RA_DEREF,
};

static int64_t own_rule(struct flat_builder *b, int64_t *id, const struct sfbpf_rule *r)
{
	if (*id < 0)
		*id = flat_builder__rule(b, r);
	return *id;
}

/* The rule at pc (in the zones find_zones found), by the order complete.h gives. */
static int64_t choose(struct flat_builder *b, struct merge *m, uint64_t pc)
{
	if (m->outermost)
		return own_rule(b, &m->outermost_id, &outermost_rule);
	if (m->stack_switch)
		return SFBPF_RULE_GAP_ID;
	if (m->plt && m->c.t && usable(m->c.t, m->c.rule))
		return cursor_id(b, &m->c, m->go_text);
	if (m->plt && in_range(&m->ci->plt_got, 1, pc))
		return own_rule(b, &m->plt_got_id, &jump_stub_rule);
	if (m->s.t && usable(m->s.t, m->s.rule))
		return cursor_id(b, &m->s, false);
	if (m->c.t && usable(m->c.t, m->c.rule))
		return cursor_id(b, &m->c, m->go_text);
	/* Neither has a rule: an unsupported row (the walk says why it stopped) over a gap. */
	if (m->s.t && m->s.rule != SFBPF_RULE_GAP_ID)
		return cursor_id(b, &m->s, false);
	return cursor_id(b, &m->c, m->go_text);
}

/*
 * The common case, row after row, outside every range, each row the choice
 * choose() would make, until limit (the other source's next row or a range
 * boundary): .sframe rows with usable rules (stops at the first without),
 * or, for a table of CFI rows alone, every row whatever its rule (cc1's
 * 480k rows: an array lookup each). go: Go's frame layout (CFI in Go's text).
 */
static int run(struct flat_builder *b, struct cursor *c, bool usable_only, bool go, uint64_t limit)
{
	const struct flat_table *t = c->t;
	const struct flat_row *row;
	int64_t id;
	int err;

	for (; c->i < t->nr_rows; c->i++) {
		row = &t->rows[c->i];
		if (row->pc_off >= limit || (usable_only && !usable(t, row->rule)))
			break;
		c->rule = row->rule;
		id = cursor_id(b, c, go);
		err = id < 0 ? (int)id : flat_builder__row(b, row->pc_off, (uint32_t)id);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Whether parts (one after the other) have a usable rule at pc; *next is
 * lowered to their first row after pc with one.
 */
static bool usable_at(const struct flat_table *const *parts, uint32_t n, uint64_t pc,
		      uint64_t *next)
{
	uint32_t k, lo, hi, mid, i;
	bool at = false;

	for (k = 0; k < n; k++) {
		const struct flat_table *t = parts[k];

		for (lo = 0, hi = t->nr_rows; lo < hi;) {
			mid = lo + (hi - lo) / 2;
			if (t->rows[mid].pc_off <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo) /* a later part's rows replace an earlier one's */
			at = usable(t, t->rows[lo - 1].rule);
		for (i = lo; i < t->nr_rows; i++)
			if (usable(t, t->rows[i].rule)) {
				if (t->rows[i].pc_off < *next)
					*next = t->rows[i].pc_off;
				break;
			}
	}
	return at;
}

/*
 * ci with its entry code (complete_info.entry) among the outermost
 * functions, in *with, when no source has a rule at the entry point: from
 * there to the first row with one. Else ci.
 */
static const struct complete_info *with_entry(const struct flat_table *sframe,
					      const struct flat_table *const *cfi, uint32_t nr_cfi,
					      const struct complete_info *ci,
					      struct complete_info *with)
{
	uint64_t end;

	if (!ci || ci->entry.start >= ci->entry.end || ci->nr_outermost >= COMPLETE_MAX_OUTERMOST)
		return ci;
	end = ci->entry.end;
	if ((sframe && usable_at(&sframe, 1, ci->entry.start, &end)) ||
	    usable_at(cfi, nr_cfi, ci->entry.start, &end))
		return ci;
	*with = *ci;
	with->outermost[with->nr_outermost++] = (struct complete_range){ ci->entry.start, end };
	return with;
}

static int64_t *new_ids(const struct cursor *c)
{
	return calloc(c->nr_ids, sizeof(int64_t));
}

int complete__merge(const struct flat_table *sframe, const struct flat_table *cfi,
		    const struct complete_info *ci, struct flat_table **out)
{
	return complete__merge_parts(sframe, cfi ? &cfi : NULL, cfi ? 1 : 0, ci, out);
}

int complete__merge_parts(const struct flat_table *sframe, const struct flat_table *const *cfi,
			  uint32_t nr_cfi, const struct complete_info *ci, struct flat_table **out)
{
	uint64_t pts[2 *
		     (COMPLETE_MAX_PLT + COMPLETE_MAX_OUTERMOST + COMPLETE_MAX_STACK_SWITCH + 1)];
	uint64_t pc, next;
	struct merge m = { .outermost_id = -1, .plt_got_id = -1 };
	struct complete_info with;
	uint32_t nr_pts, p = 0, zones_p = UINT32_MAX, k;
	struct flat_builder b;
	/* The counts of the primary source (of parts, the first's: cfi_index__join()). */
	const struct flat_table *meta = sframe ? sframe : nr_cfi ? cfi[0] : NULL;
	uint64_t rows = sframe ? sframe->nr_rows : 0;
	int64_t id;
	int err;

	*out = NULL;
	if (!sframe && !nr_cfi && (!ci || !ci->nr_outermost))
		return -ENOENT;
	ci = m.ci = with_entry(sframe, cfi, nr_cfi, ci, &with);
	cursor_init(&m.s, sframe ? &sframe : NULL, sframe ? 1 : 0);
	cursor_init(&m.c, cfi, nr_cfi);
	for (k = 0; k < nr_cfi; k++)
		rows += cfi[k]->nr_rows;
	nr_pts = range_points(ci, pts);
	m.s.ids = new_ids(&m.s);
	m.c.ids = new_ids(&m.c);
	m.c.go_ids = new_ids(&m.c);
	err = -ENOMEM;
	if (!m.s.ids || !m.c.ids || !m.c.go_ids || (err = flat_builder__init(&b)))
		goto cleanup;
	/* At most a row a source row and two a range boundary: never grown (copied) on the way. */
	err = flat_builder__reserve(&b, rows + 2ull * nr_pts + 2);
	if (err) {
		flat_builder__abort(&b);
		goto cleanup;
	}
	/* Every boundary of every source, in order; each holds its rule until its next one. */
	for (pc = 0; !err;) {
		if (m.s.t && zones_p == p && !m.outermost && !m.stack_switch && !m.plt) {
			next = cursor_next(&m.c);
			if (p < nr_pts && pts[p] < next)
				next = pts[p];
			err = run(&b, &m.s, true, false, next);
			if (err)
				break;
		} else if (!m.s.t && m.c.t && zones_p == p && !m.outermost && !m.stack_switch &&
			   !m.plt) {
			next = p < nr_pts ? pts[p] : UINT64_MAX;
			err = run(&b, &m.c, false, m.go_text, next);
			if (err)
				break;
		}
		next = cursor_next(&m.s);
		if (cursor_next(&m.c) < next)
			next = cursor_next(&m.c);
		if (p < nr_pts && pts[p] < next)
			next = pts[p];
		if (next == UINT64_MAX)
			break;
		pc = next;
		cursor_advance(&m.s, pc);
		cursor_advance(&m.c, pc);
		while (p < nr_pts && pts[p] <= pc)
			p++;
		if (p != zones_p) { /* a range starts or ends here */
			find_zones(&m, pc);
			zones_p = p;
		}
		id = choose(&b, &m, pc);
		err = id < 0 ? (int)id : flat_builder__row(&b, pc, (uint32_t)id);
	}
	if (err) {
		flat_builder__abort(&b);
		goto cleanup;
	}
	/* What the primary source's decoder counted (flattable.h): all of it, not a subset. */
	if (meta)
		flat_table__copy_counts(b.t, meta);
	err = flat_builder__finish(&b, out);
cleanup:
	free(m.s.ids);
	free(m.c.ids);
	free(m.c.go_ids);
	return err;
}

/* Appends [lo, hi) to the sorted ranges out[0 .. *n), joining it to the last if they meet. */
static void add_range(struct cfi_range *out, uint32_t *n, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return;
	if (*n && lo <= out[*n - 1].hi) {
		if (hi > out[*n - 1].hi)
			out[*n - 1].hi = hi;
		return;
	}
	out[(*n)++] = (struct cfi_range){ lo, hi };
}

int complete__cfi_ranges(const struct flat_table *sframe, const struct complete_info *ci,
			 struct cfi_range **out, uint32_t *nr)
{
	struct complete_range plt[COMPLETE_MAX_PLT], v;
	uint32_t nr_plt = ci ? ci->nr_plt : 0, i, j, k, n = 0, n_open = 0;
	struct cfi_range *open, *r;
	uint64_t lo = 0;
	bool in_open = true; /* before the first row: no rule */

	*out = NULL;
	*nr = 0;
	/* Where sframe has no usable rule, in row order: at most one range per row, plus one. */
	open = malloc(((size_t)sframe->nr_rows + 1) * sizeof(*open));
	r = malloc(((size_t)sframe->nr_rows + 1 + nr_plt) * sizeof(*r));
	if (!open || !r) {
		free(open);
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < sframe->nr_rows; i++) {
		const struct flat_row *row = &sframe->rows[i];
		bool u = usable(sframe, row->rule);

		if (in_open && u)
			add_range(open, &n_open, lo, row->pc_off);
		else if (!in_open && !u)
			lo = row->pc_off;
		in_open = !u;
	}
	if (in_open)
		add_range(open, &n_open, lo, UINT64_MAX);
	/* The PLT sections, sorted (at most COMPLETE_MAX_PLT), merged in. */
	for (i = 0; i < nr_plt; i++) {
		for (v = ci->plt[i], j = i; j > 0 && plt[j - 1].start > v.start; j--)
			plt[j] = plt[j - 1];
		plt[j] = v;
	}
	for (i = 0, k = 0; i < n_open || k < nr_plt;) {
		if (k < nr_plt && (i == n_open || plt[k].start < open[i].lo)) {
			add_range(r, &n, plt[k].start, plt[k].end);
			k++;
		} else {
			add_range(r, &n, open[i].lo, open[i].hi);
			i++;
		}
	}
	free(open);
	*out = r;
	*nr = n;
	return 0;
}
