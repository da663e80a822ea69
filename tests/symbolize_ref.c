// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The symbolizer, kallsyms and /proc/PID/maps against references: the
 * kernel's own kallsyms, perf script's names for the same samples, and
 * synthetic maps lines. Driven by tests/symbolize.test and
 * tests/symbolize_debug.test (the live helpers: tests/symbolize.c).
 *
 *   symbolize_ref ksym NAME HEXADDR [MODULE]
 *     ksyms__find(addr) and (addr + 1) must give NAME (and MODULE).
 *   symbolize_ref ksym-none HEXADDR       no kernel symbol covers addr
 *   symbolize_ref ksym-hidden FILE        all-zero kallsyms: EPERM
 *   symbolize_ref perf-compare PID FILE [ALIASES [PLTS]]
 *     Same names as perf script for PID's samples. ALIASES: "VADDR NAME
 *     COMPAT" lines of libc's functions; where perf shows a compat version
 *     (COMPAT 1), another name of that address (COMPAT 0) is right. PLTS:
 *     the PLT sections of PID's objects and their entries as objdump labels
 *     them ("section PATH START SIZE", "entry PATH START NAME"): samples in
 *     them are set aside from the comparison with perf (a few at most) and
 *     their names checked against objdump's.
 *   symbolize_ref procmaps                parser on synthetic and live input
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/ksyms.h"
#include "procs/procmaps.h"
#include "symbols/symbolize.h"
#include "testlib.h"

static const char *nz(const char *s)
{
	return s ? s : "(null)";
}

/* ---- kernel ------------------------------------------------------------------- */

static int run_ksym(const char *name, uint64_t addr, const char *module)
{
	struct ksyms *ks = ksyms__new();
	const struct ksym *k, *k1;

	if (!ks) {
		report(false, name, "ksyms__new: %s", strerror(errno));
		return 1;
	}
	k = ksyms__find(ks, addr);
	k1 = ksyms__find(ks, addr + 1);
	report(k && !strcmp(k->name, name) && k->addr == addr &&
		       !strcmp(nz(k->module), module ? module : "(null)"),
	       name, "got %s [%s] at %#" PRIx64, k ? k->name : "-", k ? nz(k->module) : "-",
	       k ? k->addr : 0);
	report(k1 && !strcmp(k1->name, name), "plus-one", "got %s", k1 ? k1->name : "-");
	ksyms__free(ks);
	return failures != 0;
}

static int run_ksym_none(uint64_t addr)
{
	struct ksyms *ks = ksyms__new();
	const struct ksym *k = ks ? ksyms__find(ks, addr) : NULL;

	report(ks && !k, "no-symbol", "got %s", k ? k->name : "-");
	ksyms__free(ks);
	return failures != 0;
}

static int run_ksym_hidden(const char *file)
{
	struct ksyms *ks = ksyms__new_from_file(file);

	report(!ks && errno == EPERM, "hidden-addresses-eperm", "errno %d", errno);
	ksyms__free(ks);
	return failures != 0;
}

/* ---- agreement with perf ------------------------------------------------------ */

/*
 * One line of `perf script -G -F ip,sym,dso`: "IP SYM (DSO)". SYM may hold
 * spaces (demangled C++); it ends at the last " (". Returns false if malformed.
 */
static bool parse_perf_line(char *line, uint64_t *ip, char **sym)
{
	char *end, *dso;

	*ip = strtoull(line, &end, 16);
	if (end == line)
		return false;
	end += strspn(end, " \t");
	dso = strstr(end, " (");
	while (dso && strstr(dso + 1, " ("))
		dso = strstr(dso + 1, " (");
	if (!dso || dso == end)
		return false;
	*dso = '\0';
	*sym = end;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Does ALIASES (see run_perf_compare) list name at vaddr, as a compat version if compat? */
static bool alias_is(const char *aliases, uint64_t vaddr, const char *name, int compat)
{
	char line[512], n[256];
	bool found = false;
	uint64_t a;
	int c;
	FILE *f;

	if (!aliases || !(f = fopen(aliases, "r")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		found = sscanf(line, "%" SCNx64 " %255s %d", &a, n, &c) == 3 && a == vaddr &&
			c == compat && !strcmp(n, name);
	}
	fclose(f);
	return found;
}

/* PLT sections and entries of a process's objects, from objdump (PLTS). */
struct plt_label {
	bool section; /* a section [start, start + size), else an entry at start */
	char path[256];
	uint64_t start, size;
	char name[256];
};

struct plt_ref {
	struct plt_label *v;
	size_t n;
};

static int load_plt_ref(const char *file, struct plt_ref *r)
{
	char line[1024], kind[16], path[256];
	struct plt_label *l, *grown;
	unsigned long long a, b;
	size_t cap = 0;
	int pos;
	FILE *f = fopen(file, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%15s %255s %llx %n", kind, path, &a, &pos) < 3)
			continue;
		if (r->n == cap) {
			cap = cap ? 2 * cap : 256;
			grown = realloc(r->v, cap * sizeof(*grown));
			if (!grown)
				break;
			r->v = grown;
		}
		l = &r->v[r->n];
		memset(l, 0, sizeof(*l));
		snprintf(l->path, sizeof(l->path), "%s", path);
		l->start = a;
		if (!strcmp(kind, "section") && sscanf(line + pos, "%llx", &b) == 1) {
			l->section = true;
			l->size = b;
		} else if (!strcmp(kind, "entry")) {
			snprintf(l->name, sizeof(l->name), "%s", line + pos);
		} else {
			continue;
		}
		r->n++;
	}
	fclose(f);
	return 0;
}

/*
 * If vaddr of path lies in one of its PLT sections: true, with the name
 * objdump labels its entry with in *name ("" where no "NAME@plt" entry covers
 * it: the PLT header, a label like "x@plt-0x10").
 */
static bool plt_lookup(const struct plt_ref *r, const char *path, uint64_t vaddr, const char **name)
{
	const struct plt_label *sec = NULL, *best = NULL;
	size_t i;

	for (i = 0; i < r->n && !sec; i++)
		if (r->v[i].section && !strcmp(r->v[i].path, path) && vaddr >= r->v[i].start &&
		    vaddr < r->v[i].start + r->v[i].size)
			sec = &r->v[i];
	if (!sec)
		return false;
	for (i = 0; i < r->n; i++) {
		const struct plt_label *l = &r->v[i];

		if (!l->section && !strcmp(l->path, path) && l->start >= sec->start &&
		    l->start <= vaddr && (!best || l->start > best->start))
			best = l;
	}
	*name = best && ends_with(best->name, "@plt") ? best->name : "";
	return true;
}

/*
 * FILE is `perf script -G -F ip,sym,dso` of a live PID. Each IP must
 * symbolize to perf's name, exactly (perf and we read the same debug files).
 * Exceptions:
 *  - in a PLT section (PLTS), perf is no reference: perf before 6.2 names .plt
 *    entries by .rela.plt order, which is not PLT order (libc), or "_init",
 *    and .plt.got entries not at all ("[unknown]"). Those samples are set
 *    aside, and each of our names there must be objdump's label of the entry
 *    (none where objdump labels no entry). What is set aside is bounded by
 *    what perf says of it, not by its share of the samples (which the CPU's
 *    caches and a busy neighbour move: 5 % was once exceeded under load):
 *    perf must name each such sample as a PLT stub ("NAME@plt"), "_init" or
 *    "[unknown]", never a function, so a wrong section range cannot hide
 *    real mismatches; and at most a quarter may be set aside
 *    (PLT_ASIDE_MAX), so that perf judges most names.
 *  - where perf shows a compat symbol version of libc (ALIASES), we show
 *    another name of the same address on purpose (symtab.h).
 */
#define PLT_ASIDE_MAX(total) ((total) / 4)

static bool perf_names_plt(const char *want)
{
	return ends_with(want, "@plt") || !strcmp(want, "_init") || !strcmp(want, "[unknown]");
}

static int run_perf_compare(int pid, const char *file, const char *aliases, const char *plts)
{
	struct symbolizer *s = symbolizer__new();
	struct ksyms *ks = ksyms__new();
	size_t total = 0, same = 0, less = 0, wrong = 0, plt = 0, plt_wrong = 0, plt_func = 0;
	size_t compat = 0;
	struct plt_ref pref = {};
	FILE *f = fopen(file, "r");
	char line[1024], *want;
	const char *ref;
	uint64_t ip;
	int err;

	if (plts && (err = load_plt_ref(plts, &pref)))
		report(false, "plt-reference", "%s: %s", plts, strerror(-err));

	while (f && s && fgets(line, sizeof(line), f)) {
		const char *got = NULL;
		struct sym_info si = {};

		line[strcspn(line, "\n")] = '\0';
		if (!parse_perf_line(line, &ip, &want))
			continue;
		if (ip >= 0xffff800000000000ULL) {
			const struct ksym *k = ks ? ksyms__find(ks, ip) : NULL;

			got = k ? k->name : NULL;
		} else if (symbolizer__user(s, pid, ip, &si) == 0) {
			got = si.name;
		}
		total++;
		if (si.path && si.mapped && plt_lookup(&pref, si.path, si.elf_addr, &ref)) {
			/* Set aside from perf's names: judged against objdump's label. */
			plt++;
			if (!perf_names_plt(want) && plt_func++ < 5)
				printf("# %#" PRIx64 " (%s %#" PRIx64 ", PLT): perf names a "
				       "function there, %s\n",
				       ip, si.path, si.elf_addr, want);
			if (*ref ? !got || strcmp(got, ref) : got && ends_with(got, "@plt")) {
				if (plt_wrong++ < 5)
					printf("# %#" PRIx64 " (%s %#" PRIx64 ", PLT): objdump %s, "
					       "we %s (perf %s)\n",
					       ip, si.path, si.elf_addr, *ref ? ref : "no entry",
					       got ? got : "nothing", want);
			} else if (plt <= 3) {
				printf("# %#" PRIx64 " (%s %#" PRIx64 ", PLT): objdump and we %s "
				       "(perf %s)\n",
				       ip, si.path, si.elf_addr, got ? got : "nothing", want);
			}
		} else if (got ? !strcmp(got, want) : !strcmp(want, "[unknown]")) {
			same++;
		} else if (got && si.module && !strcmp(si.module, "libc.so.6") &&
			   alias_is(aliases, si.elf_addr - si.offset, want, 1) &&
			   alias_is(aliases, si.elf_addr - si.offset, got, 0)) {
			if (compat++ < 3)
				printf("# %#" PRIx64 ": perf %s, we %s (not a compat version)\n",
				       ip, want, got);
		} else if (!got) {
			less++;
			if (less <= 5)
				printf("# %#" PRIx64 ": perf %s, we nothing\n", ip, want);
		} else if (wrong++ < 5) {
			printf("# %#" PRIx64 ": perf %s, we %s\n", ip, want, got);
		}
	}
	if (f)
		fclose(f);
	printf("# %zu samples: %zu same as perf, %zu in PLT sections (set aside, %zu named "
	       "unlike objdump), %zu named for perf's compat version, %zu unnamed, %zu wrong\n",
	       total, same, plt, plt_wrong, compat, less, wrong);
	report(total - plt > 50 && !wrong && !less, "agrees-with-perf", "%zu of %zu names differ",
	       wrong + less, total - plt);
	if (plts) {
		report(plt <= PLT_ASIDE_MAX(total), "plt-set-aside-bounded",
		       "%zu of %zu samples in PLT sections, at most %zu may be set aside", plt,
		       total, (size_t)PLT_ASIDE_MAX(total));
		report(pref.n > 0 && !plt_func, "plt-set-aside-are-stubs",
		       "%zu of %zu samples set aside in PLT sections are functions to perf (%zu "
		       "labels in %s)",
		       plt_func, plt, pref.n, plts);
		report(!plt_wrong, "plt-names-as-objdump", "%zu of %zu PLT samples", plt_wrong,
		       plt);
	}
	report(total > 50 && same * 2 > total, "mostly-named", "only %zu of %zu", same, total);
	free(pref.v);
	symbolizer__free(s);
	ksyms__free(ks);
	return failures != 0;
}

/* ---- /proc/PID/maps ----------------------------------------------------------- */

static const char synthetic[] =
	"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
	"7f0000000000-7f0000001000 r-xs 00002000 fd:01 42     /tmp/with space (deleted)\n"
	"00651000-00652000 rw-p 00051000 08:02 173521      /usr/bin/dbus-daemon\n"
	"7ffd5ad63000-7ffd5ad65000 r-xp 00000000 00:00 0                          [vdso]\n"
	"7f0000002000-7f0000003000 rwxp 00000000 00:00 0\n"
	"7f0000004000-7f0000005000 r--p 00000000 00:00 0   [anon:jit cache]";

static int run_procmaps(void)
{
	struct procmaps *pm = NULL;
	const struct procmap *m;
	char *text = NULL;
	size_t cap = 0, len = 0, n = 0;
	char buf[4096];
	FILE *f;
	int err;

	report(procmaps__parse(synthetic, sizeof(synthetic) - 1, &pm) == 0, "parse",
	       "procmaps__parse failed");
	report(procmaps__count(pm) == 6, "count", "%zu", procmaps__count(pm));
	m = procmaps__get(pm, 0);
	report(m && m->start == 0x400000 && m->end == 0x452000 &&
		       m->perms == (PROCMAP_READ | PROCMAP_EXEC) && m->dev_major == 8 &&
		       m->dev_minor == 2 && m->inode == 173521 &&
		       !strcmp(m->path, "/usr/bin/dbus-daemon") && !m->flags,
	       "fields", "a mapping's fields differ");
	m = procmaps__find(pm, 0x7f0000000800);
	report(m && (m->flags & PROCMAP_F_DELETED) && (m->perms & PROCMAP_SHARED) &&
		       m->offset == 0x2000 && !strcmp(m->path, "/tmp/with space"),
	       "deleted-and-spaces", "path '%s'", m ? m->path : "-");
	m = procmaps__find(pm, 0x7ffd5ad64000);
	report(m && (m->flags & PROCMAP_F_VDSO) && (m->flags & PROCMAP_F_ANON), "vdso",
	       "[vdso] not flagged vDSO and anonymous");
	m = procmaps__find(pm, 0x7f0000002000);
	report(m && m->flags == PROCMAP_F_ANON && !m->path[0], "anonymous",
	       "not an anonymous mapping without a path");
	m = procmaps__find(pm, 0x7f0000004fff);
	report(m && (m->flags & PROCMAP_F_PSEUDO) && !strcmp(m->path, "[anon:jit cache]"),
	       "named-anon", "not a named anonymous mapping");
	report(!procmaps__find(pm, 0x7f0000001000) && !procmaps__find(pm, 0x3fffff), "gaps",
	       "an address in a gap finds a mapping");
	report(procmaps__get(pm, 1)->start == 0x651000, "sorted", "not sorted by start");
	procmaps__free(pm);

	pm = NULL;
	report(procmaps__parse("0-1000 r-xp 0 0:0 0\nzzz\n", 24, &pm) == -EINVAL && !pm,
	       "malformed", "a malformed line accepted");
	report(procmaps__read(0x7ffffff0, &pm) == -ESRCH, "no-such-process", "not -ESRCH");

	/* Live: the parser must see every line cat-like reading sees. */
	f = fopen("/proc/self/maps", "r");
	while (f && (len = fread(buf, 1, sizeof(buf), f)) > 0) {
		text = realloc(text, cap + len);
		memcpy(text + cap, buf, len);
		cap += len;
	}
	if (f)
		fclose(f);
	for (len = 0; len < cap; len++)
		n += text[len] == '\n';
	pm = NULL;
	err = procmaps__parse(text, cap, &pm);
	report(!err && procmaps__count(pm) == n, "self-maps", "err %d, %zu vs %zu lines", err,
	       procmaps__count(pm), n);
	m = procmaps__find(pm, (uint64_t)(uintptr_t)&run_procmaps);
	report(m && (m->perms & PROCMAP_EXEC) && strstr(m->path, "symbolize"), "self-text",
	       "no executable mapping of this program");
	procmaps__free(pm);
	free(text);
	return failures != 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "ksym"))
		return run_ksym(argv[2], strtoull(argv[3], NULL, 16), argc > 4 ? argv[4] : NULL);
	if (argc == 3 && !strcmp(argv[1], "ksym-none"))
		return run_ksym_none(strtoull(argv[2], NULL, 16));
	if (argc == 3 && !strcmp(argv[1], "ksym-hidden"))
		return run_ksym_hidden(argv[2]);
	if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "perf-compare"))
		return run_perf_compare(atoi(argv[2]), argv[3], argc >= 5 ? argv[4] : NULL,
					argc == 6 ? argv[5] : NULL);
	if (argc == 2 && !strcmp(argv[1], "procmaps"))
		return run_procmaps();
	fprintf(stderr, "usage: see the comment at the top of tests/symbolize_ref.c\n");
	return 2;
}
