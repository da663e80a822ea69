// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Symbolizer tests on live helper processes, driven by tests/symbolize.test
 * (against kallsyms, perf and synthetic maps: tests/symbolize_ref.c).
 *
 *   symbolize user --tag T --bin HELPER [--nm NMFILE] --libc-names a,b --libc-vaddr HEX
 *                  [--libc-funcs FILE] [--libc-best FILE] [--deleted] [--bad FILE]...
 *     Runs HELPER (it prints the runtime addresses of its functions, of libc's
 *     getpid, of a vdso function, of JIT code it registered in
 *     /tmp/perf-PID.map and of a heap block), then checks the symbolizer
 *     against them, before and after the process exits. NMFILE (nm output)
 *     gives the ELF addresses; --deleted unlinks HELPER before noting it.
 *     FILE lists every libc function ("VADDR NAME", sorted): all must resolve.
 *     --libc-best: an expectation file (check_expect_file) of the one name
 *     each libc address with aliases must get.
 *     --bad FILE: the helper maps FILE executable (corrupt ELF, garbage).
 *   symbolize expect [--tag T] [--debug-dirs DIRS] [--innermost] --bin HELPER [--arg A]...
 *                    (--base PROBE=HEXVADDR --expect FILE)...
 *     Runs HELPER (tests/fixtures-sym/app.c protocol), notes it, lets it exit,
 *     then checks each expectation FILE (see check_expect_file) with the load
 *     bias of the helper's PROBE, whose ELF address is HEXVADDR.
 *     --innermost: HELPER starts the real helper in a PID namespace (unshare
 *     --fork): note its innermost descendant, which prints "nspid PID N".
 *   symbolize exec A B event|sample|refresh   A execs B: names by sample time
 *   symbolize dlopen HELPER LIB SYM   a library loaded after the snapshot
 *   symbolize rewrite BIN OTHER [keep-mtime]  BIN rewritten in place with OTHER's bytes
 *                                     (its mtime put back after: OTHER of BIN's size)
 *   symbolize reuse HELPER DATA CODE  a range read as DATA's holds CODE now
 * With SFBPF_TEST_DEFER=1 in the environment, every symbolizer reads a file's
 * symbols after its snapshot, as a session's does (symbolizer__set_defer()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procs/procmaps.h"
#include "symbols/symbolize.h"
#include "testlib.h"
#include "symbolize_helper.h"

/* --tag T: every check named "T-NAME". */
static void set_tag(const char *t)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s-", t);
	test_tag = *t ? buf : "";
}

static const char *nz(const char *s)
{
	return s ? s : "(null)";
}

/* ---- user space --------------------------------------------------------------- */

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
	const char *bin, *nm, *libc_names, *libc_funcs, *libc_best;
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
	       "err %d got %s+%" PRIu64 " in %s elf %#" PRIx64 ", want %s in %s elf %#" PRIx64, err,
	       nz(si.name), si.offset, nz(si.module), si.elf_addr, p->name, base, want_elf);
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
		       si.offset == 0 && !strcmp(nz(si.module), "[vdso]"),
	       name, "err %d got %s+%" PRIu64 " in %s, want %s", err, nz(si.name), si.offset,
	       nz(si.module), p ? p->name : "?");

	p = probe(h, "jit", NULL);
	err = p ? symbolizer__user(s, h->pid, p->addr + 4, &si) : -1;
	snprintf(name, sizeof(name), "jit-perf-map-%s", when);
	report(!err && si.name && !strcmp(si.name, p->name) && si.offset == 4 &&
		       !strcmp(nz(si.module), "[anon]"),
	       name, "err %d got %s+%" PRIu64 " in %s", err, nz(si.name), si.offset, nz(si.module));

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
static void check_libc_all(struct symbolizer *s, const struct helper *h, const struct user_args *a)
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

static void check_expect_file(struct symbolizer *s, int pid, uint64_t bias, const char *file,
			      const char *when);

/* Does SFBPF_TEST_DEFER ask for deferred symbols (the comment at the top)? */
static bool deferred(void)
{
	const char *defer = getenv("SFBPF_TEST_DEFER");

	return defer && !strcmp(defer, "1");
}

static struct symbolizer *new_symbolizer(void)
{
	struct symbolizer *s = symbolizer__new();

	if (s && deferred())
		symbolizer__set_defer(s, true);
	return s;
}

static int run_user(const struct user_args *a)
{
	struct symbolizer *s = new_symbolizer();
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
	report(symbolizer__note_pid(s, h.pid) == 0, "note-pid", "symbolizer__note_pid failed");
	check_all(s, &h, a, "live");
	check_libc_all(s, &h, a);
	if (a->libc_best && probe(&h, "libc", "getpid"))
		check_expect_file(s, h.pid, probe(&h, "libc", "getpid")->addr - a->libc_vaddr,
				  a->libc_best, "live");

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

/* ---- debug files, demangling, PLT: expectation files ------------------------ */

/*
 * An expectation file has one line per address, tab-separated:
 *   VADDR NAME [NAME...]   addr resolves, at offset 0, to one of the NAMEs
 *   VADDR -                no name at all (the symbol is only in a debug file
 *                          that must not be used)
 * VADDR is hex, in the ELF address space of the object whose runtime load
 * bias is given by a helper probe: bias = probe address - base vaddr.
 */
static void check_expect_file(struct symbolizer *s, int pid, uint64_t bias, const char *file,
			      const char *when)
{
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	char line[8192], name[256], *names, *tok, *save;
	size_t checked = 0, bad = 0;
	FILE *f = fopen(file, "r");
	struct sym_info si;
	uint64_t vaddr;
	bool ok;

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		vaddr = strtoull(line, &names, 16);
		if (names == line || *names != '\t')
			continue;
		symbolizer__user(s, pid, bias + vaddr, &si);
		checked++;
		if (!strcmp(names + 1, "-")) {
			ok = !si.name;
		} else {
			ok = false;
			for (tok = strtok_r(names + 1, "\t", &save); tok && !ok;
			     tok = strtok_r(NULL, "\t", &save))
				ok = si.name && !strcmp(si.name, tok) && si.offset == 0;
		}
		if (!ok && bad++ < 5)
			printf("# %s: %#" PRIx64 ": got %s+%" PRIu64 ", want %s\n", base, vaddr,
			       nz(si.name), si.offset, names + 1);
	}
	if (f)
		fclose(f);
	snprintf(name, sizeof(name), "%s-%s", base, when);
	report(f && checked && !bad, name, "%zu of %zu addresses wrong%s", bad, checked,
	       f ? "" : " (no file)");
}

#define MAX_EXPECT 16

struct expect_args {
	char *argv[12]; /* helper command */
	int argc;
	bool innermost; /* note the helper's innermost descendant: unshare --fork's child */
	const char *debug_dirs;
	const char *files[MAX_EXPECT], *probes[MAX_EXPECT];
	uint64_t vaddrs[MAX_EXPECT];
	int n;
};

/* Follow pid's only child down while there is exactly one (unshare --fork, chroot). */
static int innermost(int pid)
{
	int depth, child, other, n;
	char path[96];
	FILE *f;

	for (depth = 0; depth < 8; depth++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
		f = fopen(path, "r");
		if (!f)
			break;
		n = fscanf(f, "%d %d", &child, &other);
		fclose(f);
		if (n != 1)
			break;
		pid = child;
	}
	return pid;
}

/* The last field of the NSpid: line of /proc/PID/status: pid as its own namespace sees it. */
static int own_nspid(int pid)
{
	char path[64], line[256], *last;
	int nspid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		line[strcspn(line, "\n")] = '\0';
		last = strrchr(line, '\t');
		nspid = atoi(last ? last + 1 : line + 6);
	}
	if (f)
		fclose(f);
	return nspid;
}

static int run_expect(const struct expect_args *a)
{
	struct symbolizer *s = new_symbolizer();
	struct helper h = {};
	const struct probe *p;
	int i, err, pid;

	err = s ? helper__start(&h, (char *const *)a->argv) : -ENOMEM;
	if (!err && a->debug_dirs)
		err = symbolizer__set_debug_dirs(s, a->debug_dirs);
	if (err) {
		report(false, "helper-start", "%d", err);
		return 1;
	}
	pid = h.pid;
	if (a->innermost) {
		pid = innermost(h.pid);
		p = probe_by_name(&h, "PID");
		/* The process we note is the helper, in a PID namespace of its own. */
		report(p && pid != h.pid && (int)p->addr == own_nspid(pid) && (int)p->addr != pid,
		       "own-pid-namespace", "helper %d, innermost %d, NSpid %d, it says %d", h.pid,
		       pid, own_nspid(pid), p ? (int)p->addr : -1);
	}
	report(symbolizer__note_pid(s, pid) == 0, "note-pid", "symbolizer__note_pid failed");
	helper__stop(&h); /* objects were loaded by note_pid: they must serve after exit */
	for (i = 0; i < a->n; i++) {
		p = probe_by_name(&h, a->probes[i]);
		if (!p) {
			report(false, a->files[i], "helper printed no %s", a->probes[i]);
			continue;
		}
		check_expect_file(s, pid, p->addr - a->vaddrs[i], a->files[i], "exited");
	}
	symbolizer__free(s);
	return failures != 0;
}

/* ---- exec, dlopen and rewritten files: generations and object identity ----- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Probes [from, to) of h must resolve to their own name at time_ns. */
static void check_probes(struct symbolizer *s, const struct helper *h, int from, int to,
			 uint64_t time_ns, const char *what)
{
	struct sym_info si;
	char name[128];
	int i, err;

	for (i = from; i < to; i++) {
		const struct probe *p = &h->probes[i];

		if (strcmp(p->kind, "func"))
			continue;
		err = symbolizer__user_at(s, h->pid, time_ns, p->addr, &si);
		snprintf(name, sizeof(name), "%s-%s", what, p->name);
		report(!err && si.name && !strcmp(si.name, p->name) && si.offset == 0, name,
		       "err %d got %s+%" PRIu64 " in %s", err, nz(si.name), si.offset,
		       nz(si.module));
	}
}

/*
 * HOW: "event" (symbolizer__note_exec), "sample" (symbolizer__note_sample of
 * the new program's PC) or "refresh" (symbolizer__refresh_pid, then lookups
 * without a time). A's functions must keep their names for samples taken
 * before the exec, B's must get theirs after, even where addresses collide.
 */
static int run_exec(const char *a, const char *b, const char *how)
{
	struct symbolizer *s = new_symbolizer();
	char *argv[] = { (char *)a, NULL }, cmd[4200];
	struct helper h = {};
	uint64_t before, after, ip;
	int n_a, err;

	err = s ? helper__start(&h, argv) : -ENOMEM;
	if (!err)
		err = symbolizer__note_pid(s, h.pid);
	n_a = h.n;
	before = mono_ns();
	usleep(30000); /* past the re-read rate limit */
	snprintf(cmd, sizeof(cmd), "exec %s\n", b);
	if (!err)
		err = helper__command(&h, cmd);
	after = mono_ns();
	if (err || h.n == n_a || !probe_by_name(&h, "main")) {
		report(false, "exec", "err %d, %d probes after exec", err, h.n - n_a);
		return 1;
	}
	ip = probe_by_name(&h, "main")->addr;
	if (!strcmp(how, "event"))
		err = symbolizer__note_exec(s, h.pid, before + 1, NULL, true);
	else if (!strcmp(how, "sample"))
		err = symbolizer__note_sample(s, h.pid, after, &ip, 1);
	else
		err = symbolizer__refresh_pid(s, h.pid);
	report(!err, "noted", "err %d", err);
	if (!strcmp(how, "refresh"))
		after = UINT64_MAX; /* the refresh started the generation just now */
	check_probes(s, &h, 0, n_a, before, "before-exec");
	check_probes(s, &h, n_a, h.n, after, "after-exec");
	helper__stop(&h);
	check_probes(s, &h, 0, n_a, before, "exited-before-exec");
	check_probes(s, &h, n_a, h.n, after, "exited-after-exec");
	symbolizer__free(s);
	return failures != 0;
}

/* A library loaded after the snapshot: a sample in it re-reads the maps. */
static int run_dlopen(const char *bin, const char *lib, const char *sym)
{
	struct symbolizer *s = new_symbolizer();
	char *argv[] = { (char *)bin, NULL }, cmd[4200];
	struct helper h = {};
	uint64_t t0, t1, ip;
	struct sym_info si;
	int n0, err;

	err = s ? helper__start(&h, argv) : -ENOMEM;
	if (!err)
		err = symbolizer__note_pid(s, h.pid);
	n0 = h.n;
	t0 = mono_ns();
	usleep(30000);
	snprintf(cmd, sizeof(cmd), "dlopen %s %s\n", lib, sym);
	if (!err)
		err = helper__command(&h, cmd);
	t1 = mono_ns();
	if (err || !probe_by_name(&h, sym)) {
		report(false, "dlopen", "err %d", err);
		return 1;
	}
	ip = probe_by_name(&h, sym)->addr;
	report(symbolizer__note_sample(s, h.pid, t1, &ip, 1) == 0, "note-sample",
	       "symbolizer__note_sample failed");
	helper__stop(&h);
	check_probes(s, &h, n0, h.n, t1, "after-dlopen");
	/* Nothing was unmapped: the maps were merged, earlier samples see the library too. */
	check_probes(s, &h, n0, h.n, t0, "merged");
	check_probes(s, &h, 0, n0, t1, "program");
	symbolizer__user(s, h.pid, ip, &si);
	report(si.module && strstr(lib, si.module), "library-module", "module %s", nz(si.module));
	symbolizer__free(s);
	return failures != 0;
}

/*
 * A range that held data when the maps were read holds code now (ld.so.cache,
 * then a dlopen'ed library at its address): a sample there re-reads the maps
 * and gets the code's module, not the data's.
 */
static int run_reuse(const char *bin, const char *data, const char *code)
{
	struct symbolizer *s = new_symbolizer();
	char *argv[] = { (char *)bin, NULL }, cmd[4200];
	const struct probe *held, *mapped;
	struct helper h = {};
	struct sym_info si;
	uint64_t ip;
	int err;

	err = s ? helper__start(&h, argv) : -ENOMEM;
	snprintf(cmd, sizeof(cmd), "hold %s %d\n", data, 1 << 20);
	if (!err)
		err = helper__command(&h, cmd);
	held = probe_by_name(&h, "held");
	if (!err && held)
		err = symbolizer__note_pid(s, h.pid);
	if (err || !held) {
		report(false, "hold", "err %d, held %p", err, (const void *)held);
		return 1;
	}
	symbolizer__user(s, h.pid, held->addr, &si);
	report(si.module && strstr(data, si.module), "data-before", "module %s", nz(si.module));
	usleep(30000); /* more than the 10 ms between two reads for a leaf that missed */
	snprintf(cmd, sizeof(cmd), "swap %s\n", code);
	err = helper__command(&h, cmd);
	mapped = probe_by_name(&h, "code");
	if (err || !mapped || mapped->addr != held->addr) {
		report(false, "swap", "err %d, code at %#" PRIx64 ", held at %#" PRIx64, err,
		       mapped ? mapped->addr : 0, held->addr);
		helper__stop(&h);
		return 1;
	}
	ip = mapped->addr + 64;
	report(symbolizer__note_sample(s, h.pid, mono_ns(), &ip, 1) == 0, "note-sample",
	       "symbolizer__note_sample failed");
	helper__stop(&h);
	symbolizer__user(s, h.pid, ip, &si);
	report(si.module && strstr(code, si.module), "code-module", "module %s", nz(si.module));
	symbolizer__free(s);
	return failures != 0;
}

static int copy_into(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_TRUNC);
	ssize_t r = 0;

	while (in >= 0 && out >= 0 && (r = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, r) != r) {
			r = -1;
			break;
		}
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in < 0 || out < 0 || r < 0 ? -1 : 0;
}

/*
 * Deferred, the first process's symbols were not read before its file was
 * rewritten: they are none, counted, never the new program's.
 */
static void check_unread(struct symbolizer *s, const struct helper *h)
{
	struct symbolizer_stats st;
	struct sym_info si;
	char name[128];
	int i, err;

	for (i = 0; i < h->n; i++) {
		const struct probe *p = &h->probes[i];

		if (strcmp(p->kind, "func"))
			continue;
		err = symbolizer__user_at(s, h->pid, UINT64_MAX, p->addr, &si);
		snprintf(name, sizeof(name), "original-unread-%s", p->name);
		report(!err && !si.name, name, "err %d got %s+%" PRIu64 " in %s", err, nz(si.name),
		       si.offset, nz(si.module));
	}
	symbolizer__stats(s, &st);
	report(st.objs.changed_unread == 1, "changed-unread", "counted %" PRIu64,
	       st.objs.changed_unread);
}

/*
 * BIN is run, then overwritten in place with OTHER's bytes (same inode) and
 * run again: the cached object must not serve the new program, and the first
 * process, gone but remembered, keeps its names. keep_mtime: BIN's mtime is
 * put back after the rewrite (OTHER of BIN's size): only ctime tells.
 */
static int run_rewrite(const char *bin, const char *other, bool keep_mtime)
{
	struct symbolizer *s = new_symbolizer();
	char *argv[] = { (char *)bin, NULL };
	struct helper h1 = {}, h2 = {};
	struct stat st1, st2;
	int err;

	err = s ? helper__start(&h1, argv) : -ENOMEM;
	if (!err)
		err = symbolizer__note_pid(s, h1.pid);
	helper__stop(&h1);
	stat(bin, &st1);
	if (!err)
		err = copy_into(other, bin);
	if (!err && keep_mtime) {
		const struct timespec times[2] = { st1.st_atim, st1.st_mtim };

		err = utimensat(AT_FDCWD, bin, times, 0) ? -errno : 0;
	}
	stat(bin, &st2);
	report(!err && st1.st_ino == st2.st_ino, "same-inode", "err %d", err);
	if (keep_mtime)
		report(st1.st_size == st2.st_size && st1.st_mtim.tv_sec == st2.st_mtim.tv_sec &&
			       st1.st_mtim.tv_nsec == st2.st_mtim.tv_nsec,
		       "same-size-and-mtime", "size %lld -> %lld, mtime moved %d",
		       (long long)st1.st_size, (long long)st2.st_size,
		       st1.st_mtim.tv_nsec != st2.st_mtim.tv_nsec);
	if (!err)
		err = helper__start(&h2, argv);
	if (!err)
		err = symbolizer__note_pid(s, h2.pid);
	if (err) {
		report(false, "rewrite", "err %d", err);
		return 1;
	}
	check_probes(s, &h2, 0, h2.n, UINT64_MAX, "rewritten");
	if (deferred())
		check_unread(s, &h1);
	else
		check_probes(s, &h1, 0, h1.n, UINT64_MAX, "original");
	helper__stop(&h2);
	symbolizer__free(s);
	return failures != 0;
}

/* expect [--tag T] [--debug-dirs D] --bin B [--arg A]... (--base PROBE=HEX --expect FILE)... */
static int parse_expect(int argc, char **argv)
{
	struct expect_args a = {};
	const char *probe = "main";
	uint64_t vaddr = 0;
	char *eq;
	int i;

	for (i = 2; i + 1 < argc; i += 2) {
		const char *o = argv[i], *v = argv[i + 1];

		if (!strcmp(o, "--innermost")) {
			a.innermost = true;
			i--;
		} else if (!strcmp(o, "--tag"))
			set_tag(v);
		else if (!strcmp(o, "--debug-dirs"))
			a.debug_dirs = v;
		else if (!strcmp(o, "--bin") && !a.argc)
			a.argv[a.argc++] = (char *)v;
		else if (!strcmp(o, "--arg") && a.argc && a.argc < 11)
			a.argv[a.argc++] = (char *)v;
		else if (!strcmp(o, "--base") && (eq = strchr(argv[i + 1], '=')))
			*eq = '\0', probe = v, vaddr = strtoull(eq + 1, NULL, 16);
		else if (!strcmp(o, "--expect") && a.n < MAX_EXPECT)
			a.probes[a.n] = probe, a.vaddrs[a.n] = vaddr, a.files[a.n++] = v;
		else
			return 2;
	}
	if (i == argc - 1 && !strcmp(argv[i], "--innermost"))
		a.innermost = true, i++;
	if (i != argc || !a.argc)
		return 2;
	return run_expect(&a);
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
				set_tag(v), i++;
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
			else if (!strcmp(argv[i], "--libc-best"))
				a.libc_best = v, i++;
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
	if (argc >= 2 && !strcmp(argv[1], "expect"))
		return parse_expect(argc, argv);
	if (argc == 5 && !strcmp(argv[1], "exec"))
		return run_exec(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "dlopen"))
		return run_dlopen(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "reuse"))
		return run_reuse(argv[2], argv[3], argv[4]);
	if ((argc == 4 || (argc == 5 && !strcmp(argv[4], "keep-mtime"))) &&
	    !strcmp(argv[1], "rewrite"))
		return run_rewrite(argv[2], argv[3], argc == 5);
	fprintf(stderr, "usage: see the comment at the top of tests/symbolize.c\n");
	return 2;
}
