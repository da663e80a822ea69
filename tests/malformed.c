// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Malformed-input corpus for the SFrame decoder (issue 2).
 *
 * 1. Builds valid V1/V2/V3 sections (both byte orders, AMD64/AArch64/s390x)
 *    with tests/sframe_builder.h and proves they decode to what was written.
 * 2. Breaks each of them in one specific way per case and expects the
 *    specific enum sframe_errcode (and an offset near the broken field).
 * 3. Truncates built and real sections (files named on the command line) at
 *    every byte and flips random bytes: the decoder must reject every short
 *    prefix and never crash; whatever it accepts must satisfy its invariants.
 *
 * Every input is copied into an exactly-sized malloc'd buffer, so ASan sees
 * any read past the end. Output: PASS/FAIL/SKIP lines for tests/run.sh.
 *
 * Usage: malformed [--flips N] [--seed S] [NAME=FILE[@SECTION_ADDR]]...
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sframe/sframe.h"
#include "tables/flatten.h"
#include "sframe_builder.h"

#define SECT_ADDR 0x400000ULL
#define NO_RANGE SIZE_MAX
#define CURRENT_LEN 320
#define CHILD_FAILED 42 /* a child's exit status when it reported a FAIL */

#include "testlib.h"

/* What the child is decoding right now; shared, so the parent can name a crash. */
static char *current;

/*
 * Run fn in a child process, so that a sanitizer report or a signal fails
 * this group (naming the input being decoded) and the other groups still run.
 */
static void isolated(const char *group, void (*fn)(const void *), const void *arg)
{
	pid_t pid;
	int st;

	fflush(stdout);
	fflush(stderr);
	snprintf(current, CURRENT_LEN, "%s", group);
	pid = fork();
	if (pid == 0) {
		failures = 0;
		fn(arg);
		fflush(stdout);
		_exit(failures ? CHILD_FAILED : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		report(false, group, "cannot run a child: %s", strerror(errno));
		return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_FAILED) {
		failures++;
		return;
	}
	report(false, current, "crashed (%s %d; sanitizer report on stderr)",
	       WIFSIGNALED(st) ? "signal" : "exit status",
	       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* ---- base sections ---- */

struct config {
	const char *name;
	uint8_t version;
	uint8_t abi;
	bool big_endian;
	uint8_t flags;
};

#define AMD64 SFRAME_ABI_AMD64_ENDIAN_LITTLE
#define A64LE SFRAME_ABI_AARCH64_ENDIAN_LITTLE
#define A64BE SFRAME_ABI_AARCH64_ENDIAN_BIG
#define S390X SFRAME_ABI_S390X_ENDIAN_BIG
#define SORTED SFRAME_F_FDE_SORTED
#define PCREL SFRAME_F_FDE_FUNC_START_PCREL

static const struct config configs[] = {
	{ "v1-amd64", 1, AMD64, false, SORTED },
	{ "v1-aarch64-be", 1, A64BE, true, SORTED | SFRAME_F_FRAME_POINTER },
	{ "v2-amd64", 2, AMD64, false, SORTED },
	{ "v2-pcrel-amd64", 2, AMD64, false, SORTED | PCREL },
	{ "v2-pcrel-aarch64-le", 2, A64LE, false, SORTED | PCREL },
	{ "v2-pcrel-s390x", 2, S390X, true, SORTED | PCREL },
	{ "v3-amd64", 3, AMD64, false, SORTED | PCREL },
	{ "v3-nopcrel-amd64", 3, AMD64, false, SORTED },
	{ "v3-aarch64-le", 3, A64LE, false, SORTED | PCREL },
	{ "v3-aarch64-be", 3, A64BE, true, SORTED | PCREL },
	{ "v3-s390x", 3, S390X, true, SORTED | PCREL },
};

#include "malformed_cases.h"

struct case_arg {
	const struct config *c;
	const struct mcase *mc;
};

static void run_case(const void *arg)
{
	const struct config *c = ((const struct case_arg *)arg)->c;
	const struct mcase *mc = ((const struct case_arg *)arg)->mc;
	static struct mut m; /* large: keep off the stack */
	char why[200] = "";
	struct sfb_result r;
	const char *got;
	bool ok;

	snprintf(current, CURRENT_LEN, "%s/%s", c->name, mc->name);
	sfb_standard(&m.s, c->version, c->abi, c->big_endian, c->flags);
	rebuild(&m);
	m.addr = SECT_ADDR;
	m.lo = NO_RANGE;
	m.arg = mc->arg;
	if (!mc->apply(&m))
		return;
	r = sfb_decode(m.o.buf, m.o.size, m.addr, mc->want == OK ? &m.s : NULL, &m.o, why,
		       sizeof(why));
	got = r.rc ? sframe_errcode__name(r.err.code) : "none";
	ok = mc->want == OK || mc->want == OK_ANY;
	if (r.broken)
		report(false, current, "accepted but %s", r.broken);
	else if (ok || r.err.code != mc->want)
		report(ok && !r.rc, current, "expected %s got %s (offset %" PRIu64 ": %s)",
		       ok ? "none" : sframe_errcode__name(mc->want), got, r.err.offset, r.err.msg);
	else if (m.lo != NO_RANGE && (r.err.offset < m.lo || r.err.offset > m.hi))
		report(false, current, "%s at offset %" PRIu64 ", expected %zu..%zu (%s)", got,
		       r.err.offset, m.lo, m.hi, r.err.msg);
	else
		report(true, current, NULL);
}

/* ---- flexible-FDE register numbers past 8 bits ---- */

/*
 * A V3 flexible FRE whose CFA is based on DWARF register regnum (control
 * words up to 32 bits hold 29 bits of it). The decoder must keep the number
 * whole, and the flattener must not narrow it into the rule's 8-bit
 * cfa_regnum (65543 would become 7, the stack pointer): such a rule is
 * SFBPF_RULE_UNSUPPORTED.
 */
static void flex_regnum(const void *arg)
{
	uint32_t regnum = *(const uint32_t *)arg;
	static struct mut m;
	struct sframe_decoder *d = NULL;
	struct flat_table *t = NULL;
	const struct sfbpf_rule *rule;
	struct sframe_error err;
	struct sframe_fde f;
	struct sframe_fre fre;
	struct sfb_func *fn;
	int64_t row;

	snprintf(current, CURRENT_LEN, "flex-cfa-regnum-%u", regnum);
	sfb_standard(&m.s, 3, AMD64, false, SORTED | PCREL);
	fn = &m.s.funcs[last(&m)];
	fn->fres[1].size_code = SFRAME_FRE_DATAWORD_4B;
	fn->fres[1].words[0] = (int32_t)(regnum << 3 | 1);
	rebuild(&m);
	if (sframe_decoder__new(m.o.buf, m.o.size, SECT_ADDR, &d, &err)) {
		report(false, current, "rejected: %s", err.msg);
		return;
	}
	sframe_decoder__fde(d, last(&m), &f);
	if (sframe_decoder__find_fre(d, &f, f.func_start + fn->fres[1].start, &fre) ||
	    fre.cfa.regnum != regnum ||
	    fre.cfa.base != (regnum == 7 ? SFRAME_BASE_SP : SFRAME_BASE_REG)) {
		report(false, current, "decoded CFA register %u base %u", fre.cfa.regnum,
		       fre.cfa.base);
		goto out;
	}
	if (flat_table__from_sframe(d, &t)) {
		report(false, current, "flatten failed");
		goto out;
	}
	row = flat_table__lookup(t, (uint32_t)(f.func_start + fn->fres[1].start));
	rule = row >= 0 ? &t->rules[t->rows[row].rule] : NULL;
	if (!rule)
		report(false, current, "no row");
	else if (regnum > 255)
		report((rule->flags & SFBPF_RULE_UNSUPPORTED) && t->nr_unsupported_fres == 1,
		       current, "rule flags %#x cfa_reg %u cfa_regnum %u (%u unsupported)",
		       rule->flags, rule->cfa_reg, rule->cfa_regnum, t->nr_unsupported_fres);
	else
		report(!(rule->flags & SFBPF_RULE_UNSUPPORTED) && rule->cfa_regnum == regnum &&
			       rule->cfa_reg == SFBPF_REG_OTHER && !t->nr_unsupported_fres,
		       current, "rule flags %#x cfa_reg %u cfa_regnum %u", rule->flags,
		       rule->cfa_reg, rule->cfa_regnum);
out:
	flat_table__free(t);
	sframe_decoder__free(d);
}

/* ---- truncation and random corruption of whole sections ---- */

struct input {
	char name[128];
	const uint8_t *buf;
	size_t size;
	uint64_t addr;
	unsigned int flips;
	uint64_t seed;
};

/* The whole section must decode, and what it yields must be sane. */
static void decode_whole(const void *arg)
{
	const struct input *in = arg;
	struct sfb_result r;

	snprintf(current, CURRENT_LEN, "real/%s", in->name);
	r = sfb_decode(in->buf, in->size, in->addr, NULL, NULL, NULL, 0);
	if (r.rc)
		report(false, current, "%zu-byte section rejected: %s at %" PRIu64 ": %s",
		       in->size, sframe_errcode__name(r.err.code), r.err.offset, r.err.msg);
	else
		report(!r.broken, current, "accepted but %s", r.broken);
}

/* Every prefix shorter than the section must be rejected, with an error code. */
static void truncate_all(const void *arg)
{
	const struct input *in = arg;
	struct sfb_tally t = { 0 };
	size_t first_bad = SIZE_MAX;

	for (size_t len = 0; len < in->size; len++) {
		struct sfb_result r;

		snprintf(current, CURRENT_LEN, "truncate/%s: prefix %zu", in->name, len);
		r = sfb_decode(in->buf, len, in->addr, NULL, NULL, NULL, 0);
		sfb_tally_add(&t, &r);
		if ((!r.rc || sfb_bad_rejection(&r)) && first_bad == SIZE_MAX)
			first_bad = len;
	}
	snprintf(current, CURRENT_LEN, "truncate/%s", in->name);
	if (first_bad != SIZE_MAX)
		report(false, current, "prefix of %zu bytes not rejected properly (%u of %u "
		       "prefixes accepted)", first_bad, t.accepted, t.n);
	else
		printf("PASS: %s: %u prefixes rejected (%s)\n", current, t.n, sfb_tally_str(&t));
}

/* Seeded corruption: decode or reject with a code, never crash, never accept nonsense. */
static void flip_all(const void *arg)
{
	const struct input *in = arg;
	uint8_t *work = malloc(in->size ? in->size : 1);
	uint64_t rng = in->seed ^ 0x9e3779b97f4a7c15ULL;
	struct sfb_reasons rs = { 0 };
	struct sfb_tally t = { 0 };
	char desc[96];

	for (const char *p = in->name; *p; p++)
		rng = (rng ^ (uint8_t)*p) * 0x100000001b3ULL;
	for (unsigned int i = 0; i < in->flips && in->size; i++) {
		struct sfb_result r;

		memcpy(work, in->buf, in->size);
		sfb_corrupt(work, in->size, &rng, desc, sizeof(desc));
		snprintf(current, CURRENT_LEN, "flips/%s: mutant %u:%s", in->name, i, desc);
		r = sfb_decode(work, in->size, in->addr, NULL, NULL, NULL, 0);
		sfb_tally_add(&t, &r);
		if (r.broken || sfb_bad_rejection(&r))
			sfb_reasons_add(&rs, r.broken ? r.broken : "rejected without an error code",
				    current + strlen("flips/"));
	}
	free(work);
	snprintf(current, CURRENT_LEN, "flips/%s", in->name);
	if (rs.total)
		report(false, current, "%u of %u mutants mishandled (%s); first: %s", rs.total,
		       t.n, sfb_reasons_str(&rs), rs.first);
	else
		printf("PASS: %s: %u mutants, %u decoded, rejected: %s\n", current, t.n,
		       t.accepted, sfb_tally_str(&t));
}

static void sweep(const struct input *in, bool whole)
{
	char group[CURRENT_LEN];

	if (whole) {
		snprintf(group, sizeof(group), "real/%s", in->name);
		isolated(group, decode_whole, in);
	}
	snprintf(group, sizeof(group), "truncate/%s", in->name);
	isolated(group, truncate_all, in);
	snprintf(group, sizeof(group), "flips/%s", in->name);
	isolated(group, flip_all, in);
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		*size = (size_t)len;
		buf = malloc(*size ? *size : 1);
		if (buf && fread(buf, 1, *size, f) != *size) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* NAME=FILE[@ADDR]: a real section, its address as in the ELF file. */
static void run_real(const char *arg, unsigned int flips, uint64_t seed)
{
	struct input in = { .flips = flips, .seed = seed };
	const char *eq = strchr(arg, '='), *at_sign;
	char path[512];
	uint8_t *buf;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(in.name)) {
		report(false, arg, "argument is not NAME=FILE[@ADDR]");
		return;
	}
	snprintf(in.name, sizeof(in.name), "%.*s", (int)(eq - arg), arg);
	snprintf(path, sizeof(path), "%s", eq + 1);
	at_sign = strrchr(eq + 1, '@');
	if (at_sign) {
		path[at_sign - eq - 1] = 0;
		in.addr = strtoull(at_sign + 1, NULL, 0);
	}
	buf = read_file(path, &in.size);
	if (!buf) {
		report(false, in.name, "cannot read %s", path);
		return;
	}
	in.buf = buf;
	sweep(&in, true);
	free(buf);
}

static const uint32_t flex_regnums[] = { 16, 255, 256, 300, 65536 + 7, (1u << 29) - 1 };

int main(int argc, char **argv)
{
	unsigned int flips = 3000;
	uint64_t seed = 1;
	int i = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	current = mmap(NULL, CURRENT_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (current == MAP_FAILED)
		return 2;
	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--flips"))
			flips = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else
			return fprintf(stderr, "unknown option %s\n", argv[i]), 2;
	}
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		static struct mut m;
		struct input in = { .addr = SECT_ADDR, .flips = flips / 10, .seed = seed };

		for (size_t k = 0; k < sizeof(mcases) / sizeof(mcases[0]); k++) {
			struct case_arg ca = { &configs[c], &mcases[k] };
			char group[CURRENT_LEN];

			snprintf(group, sizeof(group), "%s/%s", configs[c].name, mcases[k].name);
			isolated(group, run_case, &ca);
		}
		sfb_standard(&m.s, configs[c].version, configs[c].abi, configs[c].big_endian,
			     configs[c].flags);
		rebuild(&m);
		snprintf(in.name, sizeof(in.name), "built-%s", configs[c].name);
		in.buf = m.o.buf;
		in.size = m.o.size;
		sweep(&in, false);
	}
	for (size_t k = 0; k < sizeof(flex_regnums) / sizeof(flex_regnums[0]); k++)
		isolated("flex-cfa-regnum", flex_regnum, &flex_regnums[k]);
	for (; i < argc; i++)
		run_real(argv[i], flips, seed);
	return failures ? 1 : 0;
}
