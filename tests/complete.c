// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The loader's choice between an object's unwind sources (tables/complete.h),
 * driven by tests/tables_realworld.test:
 *
 *   complete plt ELF...        in the PLT sections, the loader's table (built
 *       the way sfbpf-top builds it) has the CFI's rule wherever CFI has one,
 *       and CFA = SP + 8 throughout .plt.got (ld 2.44/2.47 write SP + 16 in
 *       .sframe there); fails if no PLT PC was checked.
 *   complete outermost ELF...  every byte of Go's runtime.goexit (found here
 *       from .symtab independently) has the outermost rule, the bytes around
 *       it do not; fails if the file has no such function.
 *   complete go ELF FN...      Go's stack-switching functions FN (the test
 *       finds them by disassembly: code that loads RSP from a register or
 *       memory) are gap rows at every byte, so the walk steps by rbp; and
 *       every row of an ordinary Go frame (main.*, CFA = SP + N, N >= 16)
 *       says rbp is saved at CFA - 16, which Go's .debug_frame omits.
 *   complete gapfill           synthetic tables: gaps and unsupported rows
 *       inside the SFrame rows' range (between functions, an FDE without
 *       FREs) are filled from CFI; SFrame rows win elsewhere; outermost
 *       ranges win over both.
 *   complete entry             synthetic tables: the code at a program's
 *       entry point, where no source has a rule, is outermost up to the next
 *       row with one; not where a source has a rule there, nor for a library.
 *   complete entry ELF...      prints "ENTRY END" where the loader's table
 *       has the outermost rule from the ELF's e_entry to END, or "ENTRY none".
 *   complete dump ELF          the loader's rows, for debugging.
 * Prints PASS/FAIL lines; exits 1 on a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tables/cfi.h"
#include "tables/complete.h"
#include "tables/flatbuild.h"
#include "tables/tableload.h"
#include "testlib.h"
#include "testload.h"

static const struct sfbpf_rule *rule_at(const struct flat_table *t, uint64_t pc)
{
	int64_t r = flat_table__lookup(t, (uint32_t)pc);

	return r < 0 ? &t->rules[SFBPF_RULE_GAP_ID] : &t->rules[t->rows[r].rule];
}

static void fmt(const struct sfbpf_rule *r, char *buf, size_t n)
{
	if (r->flags & SFBPF_RULE_GAP)
		snprintf(buf, n, "%s", r->flags & SFBPF_RULE_UNSUPPORTED ? "unsupported" : "gap");
	else if (r->ra_loc == SFBPF_LOC_UNDEFINED)
		snprintf(buf, n, "outermost");
	else
		snprintf(buf, n, "cfa=%s%+d ra_loc=%u ra_off=%d fp_loc=%u fp_off=%d flags=%#x",
			 r->cfa_reg == SFBPF_REG_SP ? "sp" :
			 r->cfa_reg == SFBPF_REG_FP ? "fp" :
						      "r?",
			 r->cfa_off, r->ra_loc, r->ra_off, r->fp_loc, r->fp_off, r->flags);
}

/* Executable sections named like name (exact), or every function named so. */
struct range {
	uint64_t lo, hi;
	char name[64];
};

static int find(const char *path, bool symbols, const char *const *names, struct range *out,
		int max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0, k;
	Elf_Scn *scn = NULL;
	Elf_Data *d;
	const char *nm;
	size_t shstrndx, i;
	GElf_Shdr sh;
	GElf_Sym s;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn)) && n < max) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (!symbols) {
			nm = elf_strptr(elf, shstrndx, sh.sh_name);
			for (k = 0; nm && names[k] && n < max; k++)
				if (!strcmp(nm, names[k])) {
					out[n] = (struct range){ sh.sh_addr,
								 sh.sh_addr + sh.sh_size, "" };
					snprintf(out[n++].name, sizeof(out->name), "%s", nm);
				}
			continue;
		}
		if (sh.sh_type != SHT_SYMTAB || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize && n < max; i++) {
			if (!gelf_getsym(d, (int)i, &s) ||
			    !(nm = elf_strptr(elf, sh.sh_link, s.st_name)))
				continue;
			for (k = 0; names[k] && n < max; k++)
				if (!strcmp(nm, names[k]) && s.st_size) {
					out[n] = (struct range){ s.st_value, s.st_value + s.st_size,
								 "" };
					snprintf(out[n++].name, sizeof(out->name), "%s", nm);
				}
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

static int plt_file(const char *path)
{
	static const char *const plts[] = { ".plt", ".plt.sec", ".plt.got", NULL };
	struct flat_table *lt = NULL, *ct = NULL;
	const struct sfbpf_rule *l, *c;
	unsigned long checked = 0, cfi = 0, got = 0;
	struct range r[8];
	char b1[128], b2[128];
	int n = find(path, false, plts, r, 8), i, ret = -1;
	uint64_t pc;

	if (testload_path(NULL, path, &lt) || cfi__flatten_path(path, &ct, NULL)) {
		test_fail("complete plt %s: no table", path);
		goto out;
	}
	for (i = 0; i < n; i++)
		for (pc = r[i].lo; pc < r[i].hi; pc++, checked++) {
			l = rule_at(lt, pc);
			c = rule_at(ct, pc);
			if (!(c->flags & SFBPF_RULE_GAP)) {
				cfi++;
				if (memcmp(l, c, sizeof(*l)))
					goto bad;
			}
			if (!strcmp(r[i].name, ".plt.got")) {
				got++;
				if (l->cfa_reg != SFBPF_REG_SP || l->cfa_off != 8 ||
				    l->ra_loc != SFBPF_LOC_CFA || l->ra_off != -8)
					goto bad;
			}
		}
	if (!checked || !got) {
		test_fail("complete plt %s: %s", path, checked ? "no .plt.got" : "no PLT");
		goto out;
	}
	test_pass("complete plt %s: %lu PLT bytes, %lu with CFI rows (taken), %lu in .plt.got "
		  "(CFA = SP + 8)",
		  path, checked, cfi, got);
	ret = 0;
	goto out;
bad:
	fmt(l, b1, sizeof(b1));
	fmt(c, b2, sizeof(b2));
	test_fail("complete plt %s: at %#llx (%s) the loader has %s; CFI %s", path,
		  (unsigned long long)pc, r[i].name, b1, b2);
out:
	flat_table__free(lt);
	flat_table__free(ct);
	return ret;
}

static int outermost_file(const char *path)
{
	static const char *const fns[] = { "runtime.goexit", "runtime.goexit.abi0", NULL };
	struct flat_table *lt = NULL;
	struct range r[4];
	char b[128];
	int n = find(path, true, fns, r, 4), i, ret = -1;
	uint64_t pc;

	if (n <= 0) {
		test_fail("complete outermost %s: no runtime.goexit in .symtab", path);
		return -1;
	}
	if (testload_path(NULL, path, &lt)) {
		test_fail("complete outermost %s: no table", path);
		return -1;
	}
	for (i = 0; i < n; i++) {
		for (pc = r[i].lo; pc < r[i].hi; pc++)
			if (rule_at(lt, pc)->ra_loc != SFBPF_LOC_UNDEFINED)
				goto bad;
		pc = r[i].lo - 1;
		if (rule_at(lt, pc)->ra_loc == SFBPF_LOC_UNDEFINED)
			goto bad;
		pc = r[i].hi;
		if (rule_at(lt, pc)->ra_loc == SFBPF_LOC_UNDEFINED)
			goto bad;
		test_pass("complete outermost %s: %s [%#llx, %#llx) outermost, its neighbours "
			  "not",
			  path, r[i].name, (unsigned long long)r[i].lo,
			  (unsigned long long)r[i].hi);
	}
	ret = 0;
	goto out;
bad:
	fmt(rule_at(lt, pc), b, sizeof(b));
	test_fail("complete outermost %s: %s [%#llx, %#llx): at %#llx the loader has %s", path,
		  r[i].name, (unsigned long long)r[i].lo, (unsigned long long)r[i].hi,
		  (unsigned long long)pc, b);
out:
	flat_table__free(lt);
	return ret;
}

/* Every row of the functions named main.* with a frame tracks rbp at CFA - 16. */
static int go_frames(const char *path, const struct flat_table *lt)
{
	static const char *const fns[] = { "main.main", "main.spin", "main.churn", "main.clock",
					   NULL };
	const struct sfbpf_rule *r;
	unsigned long framed = 0;
	struct range f[8];
	char b[128];
	int n = find(path, true, fns, f, 8), i;
	uint64_t pc;

	for (i = 0; i < n; i++)
		for (pc = f[i].lo; pc < f[i].hi; pc++) {
			r = rule_at(lt, pc);
			if (r->flags & SFBPF_RULE_GAP || r->cfa_reg != SFBPF_REG_SP ||
			    r->cfa_off < 16)
				continue;
			framed++;
			if (r->fp_loc != SFBPF_LOC_CFA || r->fp_off != -16 ||
			    !(r->flags & SFBPF_RULE_FP_DEREF)) {
				fmt(r, b, sizeof(b));
				test_fail("complete go %s: %s at %#llx: %s, want rbp at CFA-16",
					  path, f[i].name, (unsigned long long)pc, b);
				return -1;
			}
		}
	if (!framed) {
		test_fail("complete go %s: no main.* function with a frame", path);
		return -1;
	}
	test_pass("complete go %s: %lu bytes of main.* frames say rbp is at CFA-16", path, framed);
	return 0;
}

/* argv: ELF, then the stack-switching functions to check. */
static int go_file(int argc, char **argv)
{
	const char *path = argv[0];
	struct flat_table *lt = NULL;
	struct range r[64];
	const char *names[64];
	char b[128];
	int n, i, nn = 0, ret = -1;
	uint64_t pc, bytes = 0;

	for (i = 1; i < argc && nn < 63; i++)
		names[nn++] = argv[i];
	names[nn] = NULL;
	n = find(path, true, names, r, 64);
	if (n < nn) {
		test_fail("complete go %s: %d of %d functions found in .symtab", path, n, nn);
		return -1;
	}
	if (testload_path(NULL, path, &lt)) {
		test_fail("complete go %s: no table", path);
		return -1;
	}
	for (i = 0; i < n; i++)
		for (pc = r[i].lo; pc < r[i].hi; pc++, bytes++)
			if (!(rule_at(lt, pc)->flags & SFBPF_RULE_GAP)) {
				fmt(rule_at(lt, pc), b, sizeof(b));
				test_fail("complete go %s: %s [%#llx, %#llx) switches stacks, at "
					  "%#llx the loader has %s, want a gap",
					  path, r[i].name, (unsigned long long)r[i].lo,
					  (unsigned long long)r[i].hi, (unsigned long long)pc, b);
				goto out;
			}
	test_pass("complete go %s: %d stack-switching functions (%llu bytes) are gap rows", path, n,
		  (unsigned long long)bytes);
	ret = go_frames(path, lt);
out:
	flat_table__free(lt);
	return ret;
}

/* A table from (pc, rule) pairs; rule NULL: a gap. */
struct spec {
	uint64_t pc;
	const struct sfbpf_rule *rule;
};

static struct flat_table *make(const struct spec *s, int n)
{
	struct flat_builder b;
	struct flat_table *t = NULL;
	int64_t id;
	int i;

	if (flat_builder__init(&b))
		return NULL;
	for (i = 0; i < n; i++) {
		id = s[i].rule ? flat_builder__rule(&b, s[i].rule) : SFBPF_RULE_GAP_ID;
		if (id < 0 || flat_builder__row(&b, s[i].pc, (uint32_t)id)) {
			flat_builder__abort(&b);
			return NULL;
		}
	}
	return flat_builder__finish(&b, &t) ? NULL : t;
}

static int gapfill(void)
{
	static const struct sfbpf_rule a = {
		.cfa_off = 16, .ra_loc = SFBPF_LOC_CFA, .ra_off = -8, .flags = SFBPF_RULE_RA_DEREF
	};
	static const struct sfbpf_rule c = {
		.cfa_off = 24, .ra_loc = SFBPF_LOC_CFA, .ra_off = -8, .flags = SFBPF_RULE_RA_DEREF
	};
	static const struct sfbpf_rule unsup = { .flags = SFBPF_RULE_GAP | SFBPF_RULE_UNSUPPORTED };
	/* SFrame: f1 [0x1000, 0x1010), a gap (an FDE without FREs) to 0x1020, an
	 * unsupported row to 0x1030, f3 to 0x1040; the end. */
	const struct spec s[] = { { 0x1000, &a },
				  { 0x1010, NULL },
				  { 0x1020, &unsup },
				  { 0x1030, &a },
				  { 0x1040, NULL } };
	/* CFI describes everything from 0x0f00 to 0x1100 with rule c. */
	const struct spec cf[] = { { 0x0f00, &c }, { 0x1100, NULL } };
	const struct {
		uint64_t pc;
		const struct sfbpf_rule *want;
	} expect[] = {
		{ 0x0f00, &c }, { 0x1000, &a }, { 0x100f, &a }, { 0x1010, &c },	  { 0x101f, &c },
		{ 0x1020, &c }, { 0x1030, &a }, { 0x1040, &c }, { 0x1050, NULL }, { 0x1060, &c },
	};
	struct complete_info ci = { .nr_outermost = 1, .outermost = { { 0x1050, 0x1058 } } };
	struct flat_table *st = make(s, 5), *ct = make(cf, 2), *m = NULL;
	const struct sfbpf_rule *got;
	char b1[128], b2[128];
	size_t i;
	int ret = -1;

	if (st) {
		/* The decoder's counters of the .sframe source carry over to the merge. */
		st->nr_fdes = 4;
		st->nr_reserved_fdes = 2;
		st->nr_unsupported_fres = 1;
	}
	if (!st || !ct || complete__merge(st, ct, &ci, &m)) {
		test_fail("complete gapfill: cannot build the tables");
		goto out;
	}
	if (m->nr_fdes != 4 || m->nr_reserved_fdes != 2 || m->nr_unsupported_fres != 1) {
		test_fail("complete gapfill: counters %u FDEs, %u reserved, %u unsupported FREs, "
			  "want 4, 2, 1",
			  m->nr_fdes, m->nr_reserved_fdes, m->nr_unsupported_fres);
		goto out;
	}
	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		got = rule_at(m, expect[i].pc);
		if (expect[i].want ? !memcmp(got, expect[i].want, sizeof(*got)) :
				     got->ra_loc == SFBPF_LOC_UNDEFINED)
			continue;
		fmt(got, b1, sizeof(b1));
		if (expect[i].want)
			fmt(expect[i].want, b2, sizeof(b2));
		test_fail("complete gapfill: at %#llx: %s, want %s",
			  (unsigned long long)expect[i].pc, b1, expect[i].want ? b2 : "outermost");
		goto out;
	}
	test_pass("complete gapfill: gaps and unsupported rows inside .sframe's range filled "
		  "from CFI, SFrame rows kept, outermost range over both");
	ret = 0;
out:
	flat_table__free(st);
	flat_table__free(ct);
	flat_table__free(m);
	return ret;
}

/* The entry rule (complete_info.entry) on synthetic tables: three cases. */
static int entry_unit(void)
{
	static const struct sfbpf_rule a = {
		.cfa_off = 16, .ra_loc = SFBPF_LOC_CFA, .ra_off = -8, .flags = SFBPF_RULE_RA_DEREF
	};
	/* CFI: f1 [0x1000, 0x1010), a gap to 0x1040, f2 to 0x1080, a gap to the end. */
	const struct spec cf[] = {
		{ 0x1000, &a }, { 0x1010, NULL }, { 0x1040, &a }, { 0x1080, NULL }
	};
	const struct {
		const char *what;
		uint64_t entry; /* 0: a library */
		uint64_t pc;
		bool outermost;
	} expect[] = {
		{ "program, entry in a gap", 0x1020, 0x1020, true },
		{ "program, entry in a gap", 0x1020, 0x103f, true },
		{ "program, entry in a gap", 0x1020, 0x101f, false },
		{ "program, entry in a gap", 0x1020, 0x1040, false },
		{ "program, entry in a gap", 0x1020, 0x1080, false },
		{ "program, entry in a function", 0x1008, 0x1008, false },
		{ "program, entry in a function", 0x1008, 0x1020, false },
		{ "library", 0, 0x1020, false },
	};
	struct flat_table *ct = make(cf, 4), *m;
	struct complete_info ci;
	size_t i;
	int ret = 0;

	for (i = 0; ct && i < sizeof(expect) / sizeof(expect[0]); i++) {
		memset(&ci, 0, sizeof(ci));
		if (expect[i].entry)
			ci.entry = (struct complete_range){ expect[i].entry, 0x2000 };
		m = NULL;
		if (complete__merge(NULL, ct, &ci, &m)) {
			test_fail("complete entry: %s: no table", expect[i].what);
			ret = -1;
			continue;
		}
		if ((rule_at(m, expect[i].pc)->ra_loc == SFBPF_LOC_UNDEFINED) !=
		    expect[i].outermost) {
			test_fail("complete entry: %s (%#llx): at %#llx %s, want %s",
				  expect[i].what, (unsigned long long)expect[i].entry,
				  (unsigned long long)expect[i].pc,
				  expect[i].outermost ? "not outermost" : "outermost",
				  expect[i].outermost ? "outermost" : "not");
			ret = -1;
		}
		flat_table__free(m);
	}
	if (!ct) {
		test_fail("complete entry: cannot build the table");
		ret = -1;
	} else if (!ret) {
		test_pass(
			"complete entry: a program's entry in a gap is outermost to the next row; "
			"not when a function's rows cover it, nor in a library");
	}
	flat_table__free(ct);
	return ret;
}

/* "ENTRY END": the loader's outermost rows from e_entry on, or "ENTRY none". */
static int entry_file(const char *path)
{
	struct flat_table *t = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	uint64_t pc, entry = 0;
	GElf_Ehdr eh;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (elf && gelf_getehdr(elf, &eh))
		entry = eh.e_entry;
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (!entry) {
		printf("0 none\n");
		return 0;
	}
	err = testload_path(NULL, path, &t);
	if (err) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return -1;
	}
	for (pc = entry; rule_at(t, pc)->ra_loc == SFBPF_LOC_UNDEFINED && pc - entry < 1 << 20;)
		pc++;
	if (pc == entry)
		printf("%#llx none\n", (unsigned long long)entry);
	else
		printf("%#llx %#llx\n", (unsigned long long)entry, (unsigned long long)pc);
	flat_table__free(t);
	return 0;
}

static int dump_file(const char *path)
{
	struct flat_table *t = NULL;
	char b[128];
	uint32_t i;
	int err = testload_path(NULL, path, &t);

	if (err) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return -1;
	}
	for (i = 0; i < t->nr_rows; i++) {
		fmt(&t->rules[t->rows[i].rule], b, sizeof(b));
		printf("%08x %s\n", t->rows[i].pc_off, b);
	}
	flat_table__free(t);
	return 0;
}

int main(int argc, char **argv)
{
	int (*fn)(const char *) = NULL;
	int i, failed = 0;

	if (argc == 2 && !strcmp(argv[1], "gapfill"))
		return gapfill() ? 1 : 0;
	if (argc == 2 && !strcmp(argv[1], "entry"))
		return entry_unit() ? 1 : 0;
	if (argc >= 4 && !strcmp(argv[1], "go"))
		return go_file(argc - 2, argv + 2) ? 1 : 0;
	if (argc >= 2 && !strcmp(argv[1], "plt"))
		fn = plt_file;
	else if (argc >= 2 && !strcmp(argv[1], "outermost"))
		fn = outermost_file;
	else if (argc >= 2 && !strcmp(argv[1], "dump"))
		fn = dump_file;
	else if (argc >= 2 && !strcmp(argv[1], "entry"))
		fn = entry_file;
	if (!fn || argc < 3) {
		fprintf(stderr,
			"usage: %s plt|outermost|entry|dump ELF...\n       %s go ELF FN...\n       %s "
			"gapfill|entry\n",
			argv[0], argv[0], argv[0]);
		return 2;
	}
	for (i = 2; i < argc; i++)
		failed |= fn(argv[i]) != 0;
	return failed;
}
