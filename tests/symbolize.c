// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Symbolizer, kallsyms and /proc/PID/maps tests, driven by tests/symbolize.test.
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
 *   symbolize ksym NAME HEXADDR [MODULE]
 *     ksyms__find(addr) and (addr + 1) must give NAME (and MODULE).
 *   symbolize ksym-none HEXADDR       no kernel symbol covers addr
 *   symbolize ksym-hidden FILE        all-zero kallsyms: EPERM
 *   symbolize perf-compare PID FILE [ALIASES [PLTS]]
 *     Same names as perf script for PID's samples. ALIASES: "VADDR NAME
 *     COMPAT" lines of libc's functions; where perf shows a compat version
 *     (COMPAT 1), another name of that address (COMPAT 0) is right. PLTS:
 *     the PLT sections of PID's objects and their entries as objdump labels
 *     them ("section PATH START SIZE", "entry PATH START NAME"): samples in
 *     them are set aside from the comparison with perf (a few at most) and
 *     their names checked against objdump's.
 *   symbolize procmaps                parser on synthetic and live input
 *   symbolize expect [--tag T] [--debug-dirs DIRS] [--innermost] --bin HELPER [--arg A]...
 *                    (--base PROBE=HEXVADDR --expect FILE)...
 *     Runs HELPER (tests/fixtures-sym/app.c protocol), notes it, lets it exit,
 *     then checks each expectation FILE (see check_expect_file) with the load
 *     bias of the helper's PROBE, whose ELF address is HEXVADDR.
 *     --innermost: HELPER starts the real helper in a PID namespace (unshare
 *     --fork): note its innermost descendant, which prints "nspid PID N".
 *   symbolize exec A B event|sample|refresh   A execs B: names by sample time
 *   symbolize dlopen HELPER LIB SYM   a library loaded after the snapshot
 *   symbolize rewrite BIN OTHER       BIN rewritten in place with OTHER's bytes
 *   symbolize reuse HELPER DATA CODE  a range read as DATA's holds CODE now
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

#include "symbols/ksyms.h"
#include "procs/procmaps.h"
#include "symbols/symbolize.h"
#include "testlib.h"

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

#define MAX_PROBES 32

struct probe {
	char kind[16]; /* func, libc, vdso, jit, heap */
	char name[64];
	uint64_t addr;
};

struct helper {
	pid_t pid;
	FILE *out; /* its stdout */
	int in; /* its stdin: closing it makes it exit */
	struct probe probes[MAX_PROBES];
	int n;
};

/* Collect "KIND NAME ADDR" lines until "ready". */
static int helper__wait_ready(struct helper *h)
{
	char line[256];

	while (h->out && fgets(line, sizeof(line), h->out)) {
		struct probe *p = &h->probes[h->n];

		if (strncmp(line, "ready", 5) == 0)
			return 0;
		if (h->n < MAX_PROBES &&
		    sscanf(line, "%15s %63s %" SCNx64, p->kind, p->name, &p->addr) == 3)
			h->n++;
	}
	return -EIO;
}

static int helper__start(struct helper *h, char *const argv[])
{
	int to[2], from[2];

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
	return helper__wait_ready(h);
}

/* Send a command line to the helper; its probes are appended to h->probes. */
static int helper__command(struct helper *h, const char *cmd)
{
	size_t len = strlen(cmd);

	if (write(h->in, cmd, len) != (ssize_t)len)
		return -EIO;
	return helper__wait_ready(h);
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

static const struct probe *probe_by_name(const struct helper *h, const char *name)
{
	int i;

	for (i = h->n - 1; i >= 0; i--) {
		if (!strcmp(h->probes[i].name, name))
			return &h->probes[i];
	}
	return NULL;
}

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
	struct symbolizer *s = symbolizer__new();
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
	struct symbolizer *s = symbolizer__new();
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
		err = symbolizer__note_exec(s, h.pid, before + 1);
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
	struct symbolizer *s = symbolizer__new();
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
	struct symbolizer *s = symbolizer__new();
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
 * BIN is run, then overwritten in place with OTHER's bytes (same inode) and
 * run again: the cached object must not serve the new program, and the first
 * process, gone but remembered, keeps its names.
 */
static int run_rewrite(const char *bin, const char *other)
{
	struct symbolizer *s = symbolizer__new();
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
	stat(bin, &st2);
	report(!err && st1.st_ino == st2.st_ino, "same-inode", "err %d", err);
	if (!err)
		err = helper__start(&h2, argv);
	if (!err)
		err = symbolizer__note_pid(s, h2.pid);
	if (err) {
		report(false, "rewrite", "err %d", err);
		return 1;
	}
	check_probes(s, &h2, 0, h2.n, UINT64_MAX, "rewritten");
	check_probes(s, &h1, 0, h1.n, UINT64_MAX, "original");
	helper__stop(&h2);
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
	if (argc == 4 && !strcmp(argv[1], "rewrite"))
		return run_rewrite(argv[2], argv[3]);
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
	fprintf(stderr, "usage: see the comment at the top of tests/symbolize.c\n");
	return 2;
}
