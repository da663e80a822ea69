// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Arenas of JIT trampolines (procs/jitcode.h), driven by
 * tests/tables_realworld.test:
 *
 *   jitcode unit          CPython's x86-64 trampoline (with and without
 *       endbr64) and a frame-pointer variant decode into the expected rows;
 *       the ELF image the loader reads gives, through the loader's own table
 *       builder, the same rule at every byte of the copy (at the return
 *       address of the call: CFA = SP + 16, or rbp-based); periods are found
 *       and non-trampolines (no call, two calls, an unknown instruction, SP
 *       not restored, bytes not periodic) are refused. Arenas of this
 *       process resolve to one template per distinct code, whose table key
 *       is its memfd's identity (not a hash of the bytes, which a tenant's
 *       trampoline could be crafted to match): equal code shares it,
 *       different code never does.
 *   jitcode run VARIANT SECS   a workload as CPython -X perf builds it: a
 *       64 KiB anonymous arena filled with copies of the trampoline at a
 *       16-byte stride (VARIANT: cet, plain, fp), made read-execute, and a
 *       hot loop called through one copy (the 200th); with -O2 and no frame
 *       pointer in this program, only the arena's table gets the walk past it.
 * Prints PASS/FAIL lines; exits 1 on a failure.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "procs/jitcode.h"
#include "tables/flatten.h"
#include "tables/tableload.h"
#include "testlib.h"
#include "testload.h"

/* Python/asm_trampoline.S, x86-64, as CPython 3.12/3.13 assemble it. */
static const uint8_t tramp_cet[] = { 0xf3, 0x0f, 0x1e, 0xfa, /* endbr64 */
				     0x48, 0x83, 0xec, 0x08, /* sub $8,%rsp */
				     0xff, 0xd1, /* call *%rcx */
				     0x48, 0x83, 0xc4, 0x08, /* add $8,%rsp */
				     0xc3 };
static const uint8_t tramp_plain[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				       0x48, 0x83, 0xc4, 0x08, 0xc3 };
/* push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret (a frame-pointer build). */
static const uint8_t tramp_fp[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48,
				    0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3 };

static int failed;

#define CHECK(cond, fmt, ...)                                           \
	do {                                                            \
		if (!(cond)) {                                          \
			test_fail("jitcode unit: " fmt, ##__VA_ARGS__); \
			failed = 1;                                     \
			return -1;                                      \
		}                                                       \
	} while (0)

static void fill(struct jitcode_template *t, const uint8_t *code, size_t n, uint32_t period)
{
	memset(t, 0, sizeof(*t));
	t->period = period;
	memcpy(t->bytes, code, n);
}

/* The loader's table for t's image: the same builder sfbpf-top runs. */
static int loader_table(const struct jitcode_template *t, struct flat_table **out)
{
	uint8_t img[3 * JITCODE_TEXT_VADDR];
	int len = jitcode__image(t, img, sizeof(img)), fd, err;

	*out = NULL;
	if (len < 0)
		return len;
	fd = memfd_create("jitcode-test", MFD_CLOEXEC);
	if (fd < 0)
		return -EIO;
	err = write(fd, img, (size_t)len) == len ? testload_fd(NULL, fd, "image", out) : -EIO;
	close(fd);
	return err;
}

/*
 * Every byte of the copy: the loader's rule equals the decoder's row, and
 * the rule at the call's return address (what the walk looks up, minus 1:
 * the call's last byte) is want_cfa_off from want_fp ? rbp : rsp.
 */
static int check_variant(const char *name, const uint8_t *code, size_t n, uint32_t call_end,
			 int32_t want_cfa_off, int want_fp)
{
	struct jitcode_template t;
	struct flat_table *ft = NULL;
	const struct jitcode_row *row = NULL;
	const struct sfbpf_rule *r;
	uint32_t off, i;
	int64_t k;
	int err;

	fill(&t, code, n, 16);
	CHECK(!jitcode__decode(&t), "%s: not decoded", name);
	CHECK(t.code_len == n, "%s: code length %u, want %zu", name, t.code_len, n);
	err = loader_table(&t, &ft);
	CHECK(!err && ft, "%s: no table from the image: %s", name, strerror(-err));
	for (off = 0; off < t.period; off++) {
		for (i = 0; i < t.nr_rows && t.rows[i].off <= off; i++)
			row = &t.rows[i];
		k = flat_table__lookup(ft, JITCODE_TEXT_VADDR + off);
		CHECK(k >= 0, "%s: no row at +%u", name, off);
		r = &ft->rules[ft->rows[k].rule];
		CHECK(!(r->flags & SFBPF_RULE_GAP) && r->cfa_off == row->cfa_off &&
			      r->cfa_reg == (row->cfa_fp ? SFBPF_REG_FP : SFBPF_REG_SP) &&
			      r->ra_loc == SFBPF_LOC_CFA && r->ra_off == -8 &&
			      (row->fp_off ?
				       r->fp_loc == SFBPF_LOC_CFA && r->fp_off == row->fp_off :
				       r->fp_loc == SFBPF_LOC_SAME),
		      "%s: at +%u the loader's rule (cfa %s%+d, fp_loc %u %+d) is not the decoder's "
		      "(cfa %s%+d, fp %+d)",
		      name, off, r->cfa_reg == SFBPF_REG_FP ? "rbp" : "rsp", r->cfa_off, r->fp_loc,
		      r->fp_off, row->cfa_fp ? "rbp" : "rsp", row->cfa_off, row->fp_off);
		if (off == call_end - 1)
			CHECK(r->cfa_off == want_cfa_off &&
				      r->cfa_reg == (want_fp ? SFBPF_REG_FP : SFBPF_REG_SP),
			      "%s: at the call's return address CFA is %s%+d, want %s%+d", name,
			      r->cfa_reg == SFBPF_REG_FP ? "rbp" : "rsp", r->cfa_off,
			      want_fp ? "rbp" : "rsp", want_cfa_off);
	}
	flat_table__free(ft);
	test_pass("jitcode unit: %s: %u rows, the loader's table agrees at every byte; CFA "
		  "%s%+d at the return address",
		  name, t.nr_rows, want_fp ? "rbp" : "rsp", want_cfa_off);
	return 0;
}

static int refused(const char *name, const uint8_t *code, size_t n)
{
	struct jitcode_template t;

	fill(&t, code, n, 16);
	CHECK(jitcode__decode(&t) == -ENOENT, "%s: decoded, want refused", name);
	return 0;
}

static uint8_t *arena_of(const uint8_t *code, size_t n)
{
	size_t size = 16 * 4096, i;
	uint8_t *arena =
		mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (arena == MAP_FAILED)
		return NULL;
	for (i = 0; i < size; i += 16)
		memcpy(arena + i, code, n);
	return mprotect(arena, size, PROT_READ | PROT_EXEC) ? NULL : arena;
}

static bool same_key(const struct obj_key *a, const struct obj_key *b)
{
	return a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

/* The three arenas' templates: cet, plain, cet again. */
static int keys_of(struct jitcode *jc, uint8_t *const arena[3])
{
	const struct jitcode_template *t[3] = { 0 };
	struct obj_key own;
	struct stat st;
	int i;

	for (i = 0; i < 3; i++)
		CHECK(arena[i] && !jitcode__resolve(jc, getpid(), (uintptr_t)arena[i],
						    (uintptr_t)arena[i] + 16 * 4096, &t[i]),
		      "arena %d not resolved", i);
	CHECK(t[0] == t[2] && t[0] != t[1], "templates: cet %p, plain %p, cet again %p",
	      (const void *)t[0], (const void *)t[1], (const void *)t[2]);
	CHECK(!same_key(&t[0]->key, &t[1]->key), "two templates, one table key");
	for (i = 0; i < 2; i++) {
		CHECK(!fstat(t[i]->fd, &st), "fstat: %s", strerror(errno));
		obj_key__from(&own, NULL, &st, t[i]->fd);
		CHECK(same_key(&t[i]->key, &own) && !t[i]->key.hint_len,
		      "template %d: its key is not its memfd's identity", i);
	}
	return 0;
}

static int keys(void)
{
	uint8_t *arena[3] = { arena_of(tramp_cet, sizeof(tramp_cet)),
			      arena_of(tramp_plain, sizeof(tramp_plain)),
			      arena_of(tramp_cet, sizeof(tramp_cet)) };
	struct jitcode *jc = jitcode__new();
	int i, err = jc ? keys_of(jc, arena) : -1;

	jitcode__free(jc);
	for (i = 0; i < 3; i++)
		if (arena[i])
			munmap(arena[i], 16 * 4096);
	return err;
}

/*
 * A runtime's shape (jitcode__shape(): Ruby 3.1's YJIT, CFA rsp+32): the
 * loader's table says so at every byte of the copy; one template per
 * shape; an arena of zeros with its period is no trampoline for all that;
 * a region is its process's (start time) until forgotten.
 */
static int shapes(void)
{
	const struct jitcode_template *t = NULL, *again = NULL, *other = NULL, *zeros = NULL;
	const struct jitcode_region yjit = { 0x10000, 0x20000, 32, "[test-shape]" };
	struct jitcode *jc = jitcode__new();
	struct flat_table *ft = NULL;
	const struct sfbpf_rule *r;
	uint8_t *arena;
	uint32_t off;
	int64_t k;

	CHECK(jc && !jitcode__shape(jc, 32, &t) && t, "no shape template");
	CHECK(!jitcode__shape(jc, 32, &again) && again == t, "a second template of one shape");
	CHECK(!jitcode__shape(jc, 48, &other) && other != t, "two shapes, one template");
	CHECK(jitcode__shape(jc, 12, &other) == -EINVAL, "a CFA offset not of whole words taken");
	CHECK(!loader_table(t, &ft) && ft, "no table from the shape's image");
	for (off = 0; off < t->period; off++) {
		k = flat_table__lookup(ft, JITCODE_TEXT_VADDR + off);
		CHECK(k >= 0, "shape: no row at +%u", off);
		r = &ft->rules[ft->rows[k].rule];
		CHECK(!(r->flags & SFBPF_RULE_GAP) && r->cfa_reg == SFBPF_REG_SP &&
			      r->cfa_off == 32 && r->ra_loc == SFBPF_LOC_CFA && r->ra_off == -8 &&
			      r->fp_loc == SFBPF_LOC_SAME,
		      "shape: at +%u the loader's rule is cfa %s%+d, ra %u %+d, fp %u", off,
		      r->cfa_reg == SFBPF_REG_FP ? "rbp" : "rsp", r->cfa_off, r->ra_loc, r->ra_off,
		      r->fp_loc);
	}
	flat_table__free(ft);
	arena = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(arena != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(jitcode__resolve(jc, getpid(), (uintptr_t)arena, (uintptr_t)arena + 4096, &zeros) ==
			      -ENOENT &&
		      !zeros,
	      "a page of zeros resolved as a trampoline arena");
	munmap(arena, 4096);
	CHECK(!jitcode__set_region(jc, 77, 1000, &yjit), "region not set");
	CHECK(jitcode__region(jc, 77, 1000) && jitcode__region(jc, 77, 1000)->cfa_off == 32,
	      "region not found");
	CHECK(!jitcode__region(jc, 77, 1001) && !jitcode__region(jc, 78, 1000),
	      "a region found for another process");
	jitcode__forget(jc, 77);
	CHECK(!jitcode__region(jc, 77, 1000), "a region found once forgotten");
	CHECK(!jitcode__set_region(jc, 77, 1000, &yjit), "region not set again");
	jitcode__free(jc);
	test_pass("jitcode unit: a shape's table is CFA rsp+32, the caller's rbp kept, at every "
		  "byte; one template per shape; a page of zeros no arena; regions by process");
	return 0;
}

static int unit(void)
{
	static const uint8_t no_call[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	static const uint8_t two_calls[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0xff,
					     0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	static const uint8_t unknown[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0x48, 0x8b,
					   0x04, 0x24, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	static const uint8_t unbalanced[] = { 0x48, 0x83, 0xec, 0x10, 0xff, 0xd1,
					      0x48, 0x83, 0xc4, 0x08, 0xc3 };
	uint8_t buf[4096];
	size_t i;

	check_variant("cet", tramp_cet, sizeof(tramp_cet), 10, 16, 0);
	check_variant("plain", tramp_plain, sizeof(tramp_plain), 6, 16, 0);
	check_variant("fp", tramp_fp, sizeof(tramp_fp), 10, 16, 1);
	refused("no call", no_call, sizeof(no_call));
	refused("two calls", two_calls, sizeof(two_calls));
	refused("unknown instruction", unknown, sizeof(unknown));
	refused("SP not restored", unbalanced, sizeof(unbalanced));

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i % 16 < sizeof(tramp_cet) ? tramp_cet[i % 16] : 0;
	CHECK(jitcode__period(buf, sizeof(buf)) == 16, "period of a 16-byte arena: %d",
	      jitcode__period(buf, sizeof(buf)));
	buf[4000] ^= 1;
	CHECK(jitcode__period(buf, sizeof(buf)) == -ENOENT, "a changed byte still periodic");
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i % 32 < sizeof(tramp_cet) ? tramp_cet[i % 32] : 0xcc;
	CHECK(jitcode__period(buf, sizeof(buf)) == 32, "period of a 32-byte arena: %d",
	      jitcode__period(buf, sizeof(buf)));
	keys();
	shapes();
	if (!failed)
		test_pass("jitcode unit: periods found (16, 32), a changed byte breaks them; "
			  "non-trampolines refused; 3 arenas, 2 templates, keyed by their memfds");
	return failed;
}

/* ---- the workload */

typedef long (*tramp_fn)(long a, long b, long c, long (*fn)(long, long, long));

__attribute__((noinline)) static long hot(long a, long b, long c)
{
	volatile long s = 0;
	long i;

	for (i = 0; i < 200000; i++)
		s += (i ^ a) * b + c;
	return s;
}

__attribute__((noinline)) static long through(tramp_fn t, long n)
{
	long s = 0, i;

	for (i = 0; i < n; i++)
		s += t(i, 3, 5, hot);
	return s;
}

static int run(const char *variant, int secs)
{
	const uint8_t *code = !strcmp(variant, "plain") ? tramp_plain :
			      !strcmp(variant, "fp")	? tramp_fp :
							  tramp_cet;
	size_t n = !strcmp(variant, "plain") ? sizeof(tramp_plain) :
		   !strcmp(variant, "fp")    ? sizeof(tramp_fp) :
					       sizeof(tramp_cet);
	size_t size = 16 * 4096, i;
	uint8_t *arena =
		mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile long s = 0;
	time_t end = time(NULL) + secs;

	if (arena == MAP_FAILED)
		return 1;
	for (i = 0; i < size; i += 16)
		memcpy(arena + i, code, n);
	if (mprotect(arena, size, PROT_READ | PROT_EXEC))
		return 1;
	while (time(NULL) < end)
		s += through((tramp_fn)(void *)(arena + 200 * 16), 50);
	return s == 42;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "unit"))
		return unit() ? 1 : 0;
	if (argc == 4 && !strcmp(argv[1], "run"))
		return run(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: %s unit | run cet|plain|fp SECS\n", argv[0]);
	return 2;
}
