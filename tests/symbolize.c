// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Symbolizer, kallsyms and /proc/PID/maps tests, driven by tests/symbolize.test.
 *
 *   symbolize user --tag T --bin HELPER [--nm NMFILE] --libc-names a,b --libc-vaddr HEX
 *                  [--libc-funcs FILE] [--deleted] [--bad FILE]...
 *     Runs HELPER (it prints the runtime addresses of its functions, of libc's
 *     getpid, of a vdso function, of JIT code it registered in
 *     /tmp/perf-PID.map and of a heap block), then checks the symbolizer
 *     against them, before and after the process exits. NMFILE (nm output)
 *     gives the ELF addresses; --deleted unlinks HELPER before noting it.
 *     FILE lists every libc function ("VADDR NAME", sorted): all must resolve.
 *     --bad FILE: the helper maps FILE executable (corrupt ELF, garbage).
 *   symbolize ksym NAME HEXADDR [MODULE]
 *     ksyms__find(addr) and (addr + 1) must give NAME (and MODULE).
 *   symbolize ksym-none HEXADDR       no kernel symbol covers addr
 *   symbolize ksym-hidden FILE        all-zero kallsyms: EPERM
 *   symbolize perf-compare PID FILE   same names as perf script for PID's samples
 *   symbolize procmaps                parser on synthetic and live input
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksyms.h"
#include "procmaps.h"
#include "symbolize.h"

static int failures;
static const char *tag = "";

static void report(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s%s%s", ok ? "PASS" : "FAIL", tag, *tag ? "-" : "", name);
	if (!ok) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		failures++;
	}
	printf("\n");
	fflush(stdout);
}

static const char *nz(const char *s)
{
	return s ? s : "(null)";
}

/* ---- user space --------------------------------------------------------------- */

struct probe {
	char kind[16]; /* func, libc, vdso, jit, heap */
	char name[64];
	uint64_t addr;
};

struct helper {
	pid_t pid;
	FILE *out; /* its stdout */
	int in; /* its stdin: closing it makes it exit */
	struct probe probes[24];
	int n;
};

static int helper__start(struct helper *h, char *const argv[])
{
	int to[2], from[2];
	char line[256];

	if (pipe(to) || pipe(from))
		return -errno;
	h->pid = fork();
	if (h->pid < 0)
		return -errno;
	if (h->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	h->in = to[1];
	h->out = fdopen(from[0], "r");
	while (h->out && fgets(line, sizeof(line), h->out)) {
		struct probe *p = &h->probes[h->n];

		if (strncmp(line, "ready", 5) == 0)
			return 0;
		if (h->n < 24 &&
		    sscanf(line, "%15s %63s %" SCNx64, p->kind, p->name, &p->addr) == 3)
			h->n++;
	}
	return -EIO;
}

static void helper__stop(struct helper *h)
{
	int st;

	close(h->in);
	waitpid(h->pid, &st, 0);
	if (h->out)
		fclose(h->out);
}

static const struct probe *probe(const struct helper *h, const char *kind, const char *name)
{
	int i;

	for (i = 0; i < h->n; i++) {
		if (!strcmp(h->probes[i].kind, kind) && (!name || !strcmp(h->probes[i].name, name)))
			return &h->probes[i];
	}
	return NULL;
}

/* ELF address of name according to nm, or 0. */
static uint64_t nm_addr(const char *nmfile, const char *name)
{
	char line[512], sym[256], type;
	uint64_t addr, found = 0;
	FILE *f;

	if (!nmfile || !(f = fopen(nmfile, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, sym) == 3 &&
		    !strcmp(sym, name))
			found = addr;
	}
	fclose(f);
	return found;
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

struct user_args {
	const char *bin, *nm, *libc_names, *libc_funcs;
	char *argv[8]; /* helper command: bin, then files it maps executable */
	int argc;
	uint64_t libc_vaddr;
	bool deleted;
};

/* One function probe: exact name at offset 0 and 7, the expected module and ELF address. */
static void check_func(struct symbolizer *s, const struct helper *h, const struct probe *p,
		       const struct user_args *a, const char *when)
{
	const char *base = strrchr(a->bin, '/') ? strrchr(a->bin, '/') + 1 : a->bin;
	uint64_t want_elf = nm_addr(a->nm, p->name);
	struct sym_info si, si7;
	char name[128];
	int err;

	err = symbolizer__user(s, h->pid, p->addr, &si);
	symbolizer__user(s, h->pid, p->addr + 7, &si7);
	snprintf(name, sizeof(name), "%s-%s", p->name, when);
	if (!a->nm) { /* stripped: no symbol for non-exported functions, module still known */
		report(!err && si.mapped && !si.name && !strcmp(nz(si.module), base), name,
		       "err %d name %s module %s", err, nz(si.name), nz(si.module));
		return;
	}
	report(!err && si.name && !strcmp(si.name, p->name) && si.offset == 0 &&
		       !strcmp(nz(si.module), base) && si.elf_addr == want_elf,
	       name,
	       "err %d got %s+%" PRIu64 " in %s elf %#" PRIx64 ", want %s in %s elf %#" PRIx64,
	       err, nz(si.name), si.offset, nz(si.module), si.elf_addr, p->name, base, want_elf);
	snprintf(name, sizeof(name), "%s-offset-%s", p->name, when);
	report(si7.name && !strcmp(si7.name, p->name) && si7.offset == 7, name, "got %s+%" PRIu64,
	       nz(si7.name), si7.offset);
}

static void check_all(struct symbolizer *s, const struct helper *h, const struct user_args *a,
		      const char *when)
{
	static const char *funcs[] = { "sfbpf_global_func", "sfbpf_static_func", "main" };
	const struct probe *p;
	struct sym_info si;
	char name[64];
	unsigned i;
	int err;

	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		p = probe(h, "func", funcs[i]);
		if (p)
			check_func(s, h, p, a, when);
		else
			report(false, funcs[i], "helper did not print it");
	}

	p = probe(h, "libc", "getpid");
	err = p ? symbolizer__user(s, h->pid, p->addr, &si) : -1;
	snprintf(name, sizeof(name), "libc-getpid-%s", when);
	report(!err && si.name && in_list(a->libc_names, si.name) && si.offset == 0 &&
		       !strcmp(nz(si.module), "libc.so.6") && si.elf_addr == a->libc_vaddr,
	       name,
	       "err %d got %s+%" PRIu64 " in %s elf %#" PRIx64 ", want one of %s elf %#" PRIx64,
	       err, nz(si.name), si.offset, nz(si.module), si.elf_addr, a->libc_names,
	       a->libc_vaddr);

	p = probe(h, "vdso", NULL);
	err = p ? symbolizer__user(s, h->pid, p->addr, &si) : -1;
	snprintf(name, sizeof(name), "vdso-%s", when);
	/* dlsym gave __vdso_X; X is its weak alias at the same address. */
	report(!err && si.name && p &&
		       (!strcmp(si.name, p->name) ||
			!strcmp(si.name, p->name + strlen("__vdso_"))) &&
		       si.offset == 0 &&
		       !strcmp(nz(si.module), "[vdso]"),
	       name, "err %d got %s+%" PRIu64 " in %s, want %s", err, nz(si.name), si.offset,
	       nz(si.module), p ? p->name : "?");

	p = probe(h, "jit", NULL);
	err = p ? symbolizer__user(s, h->pid, p->addr + 4, &si) : -1;
	snprintf(name, sizeof(name), "jit-perf-map-%s", when);
	report(!err && si.name && !strcmp(si.name, p->name) && si.offset == 4 &&
		       !strcmp(nz(si.module), "[anon]"),
	       name, "err %d got %s+%" PRIu64 " in %s", err, nz(si.name), si.offset,
	       nz(si.module));

	p = probe(h, "heap", NULL);
	err = p ? symbolizer__user(s, h->pid, p->addr, &si) : -1;
	snprintf(name, sizeof(name), "heap-module-%s", when);
	report(!err && si.mapped && !si.name && !strcmp(nz(si.module), "[heap]"), name,
	       "err %d got %s in %s", err, nz(si.name), nz(si.module));

	/* Garbage files mapped executable: a module, no crash, no bogus symbol. */
	for (i = 0; i < (unsigned)h->n; i++) {
		const char *base;

		p = &h->probes[i];
		if (strcmp(p->kind, "bad"))
			continue;
		base = strrchr(p->name, '/') ? strrchr(p->name, '/') + 1 : p->name;
		err = symbolizer__user(s, h->pid, p->addr + 64, &si);
		snprintf(name, sizeof(name), "bad-elf-%s-%s", base, when);
		report(!err && si.mapped && !strcmp(nz(si.module), base), name,
		       "err %d module %s name %s", err, nz(si.module), nz(si.name));
	}

	err = symbolizer__user(s, h->pid, 0x1000, &si);
	snprintf(name, sizeof(name), "unmapped-%s", when);
	report(err == -ENOENT && !si.mapped && !si.name && !si.module, name,
	       "err %d mapped %d module %s", err, si.mapped, nz(si.module));
}

/*
 * Every function of libc (FILE: "VADDR NAME" lines from readelf, sorted by
 * VADDR) must symbolize, at its runtime address, to a name defined there.
 */
static void check_libc_all(struct symbolizer *s, const struct helper *h,
			   const struct user_args *a)
{
	const struct probe *p = probe(h, "libc", "getpid");
	char line[512], name[256], names[4096] = ",", prev_names[4096];
	uint64_t bias, vaddr, prev = UINT64_MAX;
	size_t checked = 0, bad = 0;
	struct sym_info si;
	FILE *f;

	f = a->libc_funcs ? fopen(a->libc_funcs, "r") : NULL;
	if (!f || !p) {
		report(false, "libc-all-functions", "no function list");
		return;
	}
	bias = p->addr - a->libc_vaddr;
	for (;;) {
		bool more = fgets(line, sizeof(line), f) &&
			    sscanf(line, "%" SCNx64 " %255s", &vaddr, name) == 2;

		if (prev != UINT64_MAX && (!more || vaddr != prev)) {
			/* All names at prev are known: check it. */
			snprintf(prev_names, sizeof(prev_names), "%s", names);
			symbolizer__user(s, h->pid, bias + prev, &si);
			checked++;
			if (!si.name || si.offset || !in_list(prev_names + 1, si.name)) {
				if (bad++ < 3)
					printf("# %#" PRIx64 ": got %s+%" PRIu64
					       ", want one of %s\n",
					       prev, nz(si.name), si.offset, prev_names + 1);
			}
			names[1] = '\0';
		}
		if (!more)
			break;
		if (strlen(names) + strlen(name) + 2 < sizeof(names)) {
			if (names[1])
				strcat(names, ",");
			strcat(names, name);
		}
		prev = vaddr;
	}
	fclose(f);
	report(checked > 100 && !bad, "libc-all-functions", "%zu of %zu addresses wrong", bad,
	       checked);
}

static int run_user(const struct user_args *a)
{
	struct symbolizer *s = symbolizer__new();
	struct helper h = {};
	struct sym_info si;
	char path[64];
	int err;

	err = s ? helper__start(&h, (char *const *)a->argv) : -ENOMEM;
	if (err) {
		report(false, "helper-start", "%d", err);
		return 1;
	}
	if (a->deleted)
		report(unlink(a->bin) == 0, "unlink-binary", "%s", strerror(errno));
	report(symbolizer__note_pid(s, h.pid) == 0, "note-pid", "");
	check_all(s, &h, a, "live");
	check_libc_all(s, &h, a);

	helper__stop(&h);
	snprintf(path, sizeof(path), "/proc/%d", h.pid);
	report(access(path, F_OK) != 0, "helper-exited", "%s still exists", path);
	check_all(s, &h, a, "exited");

	symbolizer__forget_pid(s, h.pid);
	err = symbolizer__user(s, h.pid, probe(&h, "func", "main")->addr, &si);
	report(err == -ENOENT && !si.mapped, "forgotten-pid", "err %d module %s", err,
	       nz(si.module));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", h.pid);
	unlink(path);
	symbolizer__free(s);
	return failures != 0;
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
 * FILE is `perf script -G -F ip,sym,dso` of a live PID: "IP SYM (DSO)" lines.
 * Each IP must symbolize to perf's name (versions "@..." stripped), or to no
 * name where perf used debug info we do not read yet. A different name is wrong.
 */
static int run_perf_compare(int pid, const char *file)
{
	struct symbolizer *s = symbolizer__new();
	struct ksyms *ks = ksyms__new();
	size_t total = 0, same = 0, less = 0, wrong = 0;
	char line[1024], want[512];
	FILE *f = fopen(file, "r");
	uint64_t ip;

	while (f && s && fgets(line, sizeof(line), f)) {
		const char *got = NULL;
		struct sym_info si;

		if (sscanf(line, "%" SCNx64 " %511s", &ip, want) != 2)
			continue;
		want[strcspn(want, "@")] = '\0';
		if (ip >= 0xffff800000000000ULL) {
			const struct ksym *k = ks ? ksyms__find(ks, ip) : NULL;

			got = k ? k->name : NULL;
		} else if (symbolizer__user(s, pid, ip, &si) == 0) {
			got = si.name;
		}
		total++;
		if (got ? !strcmp(got, want) : !strcmp(want, "[unknown]")) {
			same++;
		} else if (!got) {
			less++;
		} else if (wrong++ < 5) {
			printf("# %#" PRIx64 ": perf %s, we %s\n", ip, want, got);
		}
	}
	if (f)
		fclose(f);
	printf("# %zu samples: %zu same as perf, %zu unnamed (perf used debug info), %zu wrong\n",
	       total, same, less, wrong);
	report(total > 50 && !wrong, "agrees-with-perf", "%zu of %zu names differ", wrong, total);
	report(total > 50 && same * 2 > total, "mostly-named", "only %zu of %zu", same, total);
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

	report(procmaps__parse(synthetic, sizeof(synthetic) - 1, &pm) == 0, "parse", "");
	report(procmaps__count(pm) == 6, "count", "%zu", procmaps__count(pm));
	m = procmaps__get(pm, 0);
	report(m && m->start == 0x400000 && m->end == 0x452000 &&
		       m->perms == (PROCMAP_READ | PROCMAP_EXEC) &&
		       m->dev_major == 8 && m->dev_minor == 2 && m->inode == 173521 &&
		       !strcmp(m->path, "/usr/bin/dbus-daemon") && !m->flags,
	       "fields", "");
	m = procmaps__find(pm, 0x7f0000000800);
	report(m && (m->flags & PROCMAP_F_DELETED) && (m->perms & PROCMAP_SHARED) &&
		       m->offset == 0x2000 && !strcmp(m->path, "/tmp/with space"),
	       "deleted-and-spaces", "path '%s'", m ? m->path : "-");
	m = procmaps__find(pm, 0x7ffd5ad64000);
	report(m && (m->flags & PROCMAP_F_VDSO) && (m->flags & PROCMAP_F_ANON), "vdso", "");
	m = procmaps__find(pm, 0x7f0000002000);
	report(m && m->flags == PROCMAP_F_ANON && !m->path[0], "anonymous", "");
	m = procmaps__find(pm, 0x7f0000004fff);
	report(m && (m->flags & PROCMAP_F_PSEUDO) && !strcmp(m->path, "[anon:jit cache]"),
	       "named-anon", "");
	report(!procmaps__find(pm, 0x7f0000001000) && !procmaps__find(pm, 0x3fffff), "gaps", "");
	report(procmaps__get(pm, 1)->start == 0x651000, "sorted", "");
	procmaps__free(pm);

	pm = NULL;
	report(procmaps__parse("0-1000 r-xp 0 0:0 0\nzzz\n", 24, &pm) == -EINVAL && !pm,
	       "malformed", "");
	report(procmaps__read(0x7ffffff0, &pm) == -ESRCH, "no-such-process", "");

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
	report(m && (m->perms & PROCMAP_EXEC) && strstr(m->path, "symbolize"), "self-text", "");
	procmaps__free(pm);
	free(text);
	return failures != 0;
}

int main(int argc, char **argv)
{
	struct user_args a = {};
	int i;

	if (argc >= 2 && !strcmp(argv[1], "user")) {
		for (i = 2; i < argc; i++) {
			const char *v = i + 1 < argc ? argv[i + 1] : NULL;

			if (!strcmp(argv[i], "--deleted"))
				a.deleted = true;
			else if (!v)
				return 2;
			else if (!strcmp(argv[i], "--tag"))
				tag = v, i++;
			else if (!strcmp(argv[i], "--bin"))
				a.bin = v, i++;
			else if (!strcmp(argv[i], "--bad") && a.argc < 6)
				a.argv[1 + a.argc++] = (char *)v, i++;
			else if (!strcmp(argv[i], "--nm"))
				a.nm = v, i++;
			else if (!strcmp(argv[i], "--libc-names"))
				a.libc_names = v, i++;
			else if (!strcmp(argv[i], "--libc-funcs"))
				a.libc_funcs = v, i++;
			else if (!strcmp(argv[i], "--libc-vaddr"))
				a.libc_vaddr = strtoull(v, NULL, 16), i++;
			else
				return 2;
		}
		if (!a.bin || !a.libc_names)
			return 2;
		a.argv[0] = (char *)a.bin;
		return run_user(&a);
	}
	if (argc >= 4 && !strcmp(argv[1], "ksym"))
		return run_ksym(argv[2], strtoull(argv[3], NULL, 16), argc > 4 ? argv[4] : NULL);
	if (argc == 3 && !strcmp(argv[1], "ksym-none"))
		return run_ksym_none(strtoull(argv[2], NULL, 16));
	if (argc == 3 && !strcmp(argv[1], "ksym-hidden"))
		return run_ksym_hidden(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "perf-compare"))
		return run_perf_compare(atoi(argv[2]), argv[3]);
	if (argc == 2 && !strcmp(argv[1], "procmaps"))
		return run_procmaps();
	fprintf(stderr, "usage: see the comment at the top of tests/symbolize.c\n");
	return 2;
}
