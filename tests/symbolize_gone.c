// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The symbolizer and a process gone before its samples were read, driven by
 * tests/symbolize_debug.test:
 *   symbolize_gone zombie HELPER   HELPER (tests/fixtures-sym/app.c) read
 *                                  alive, then sampled once it has exited,
 *                                  unreaped: its maps read empty, which is a
 *                                  process gone (named from the kernel's
 *                                  mappings), not a new image without any
 *   symbolize_gone tracked HELPER LIB SYM [control]
 *                                  HELPER read at its start, then LIB
 *                                  dlopen'ed and the maps read again as the
 *                                  process tracker does (procmaps__snapshot)
 *                                  and handed over (symbolizer__note_maps);
 *                                  its first sample in LIB read once it has
 *                                  exited and been reaped: named SYM. With
 *                                  control, no handover: [unknown] (what the
 *                                  check would see without it)
 *   symbolize_gone unseen HELPER PATH
 *                                  HELPER run to its end and reaped, never
 *                                  read: the kernel's mapping of its code,
 *                                  named PATH by the loader, names main
 *                                  from the file at PATH, opened then, if
 *                                  it is HELPER's very file; another file
 *                                  (a copy: another inode) names nothing
 * A program of its own beside tests/symbolize.c (files under 800 lines).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
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

static const char *nz(const char *s)
{
	return s ? s : "(null)";
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* run_zombie()'s kernel: one mapping of the program's code, where nothing was read. */
struct fake_kernel {
	struct symbolizer_kmap map;
	int pid, asked;
	uint64_t exec_id;
};

static size_t fake_kmaps(void *ctx, int pid, const struct symbolizer_image *image,
			 struct symbolizer_kmap *out, size_t max)
{
	struct fake_kernel *k = ctx;

	k->asked++;
	if (pid != k->pid || image->exec_id != k->exec_id || !max)
		return 0;
	out[0] = k->map;
	return 1;
}

/* A zombie's (or an exiting process's) maps read empty, but it has exited, not exec'd. */
static bool zombie(int pid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 500; i++) {
		f = fopen(path, "r");
		rp = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		if (f)
			fclose(f);
		if (rp && rp[1] == ' ' && rp[2] == 'Z')
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * The kernel's mapping of h's code (bin's file), as the loader would name it
 * path, placed at at (0: where h has it), and main's address there in *ip:
 * true, or false if main or its mapping was not found.
 */
static bool main_kmap(const struct helper *h, const char *bin, const char *path, uint64_t at,
		      struct symbolizer_kmap *out, uint64_t *ip)
{
	const struct probe *pmain = probe_by_name(h, "main");
	const struct procmap *code = NULL;
	struct procmaps *pm = NULL;
	struct stat sb;

	if (pmain && !procmaps__read(h->pid, &pm))
		for (size_t i = 0; i < procmaps__count(pm); i++)
			if (procmaps__get(pm, i)->start <= pmain->addr &&
			    pmain->addr < procmaps__get(pm, i)->end)
				code = procmaps__get(pm, i);
	if (code && !stat(bin, &sb)) {
		if (!at)
			at = code->start;
		*out = (struct symbolizer_kmap){
			.start = at,
			.end = at + code->end - code->start,
			.offset = code->offset,
			.st = { sb.st_dev, sb.st_ino, sb.st_size,
				sb.st_mtim.tv_sec * 1000000000ull + sb.st_mtim.tv_nsec,
				sb.st_ctim.tv_sec * 1000000000ull + sb.st_ctim.tv_nsec },
			.path = path
		};
		*ip = at + (pmain->addr - code->start);
	}
	procmaps__free(pm);
	return code && *ip;
}

/*
 * A process read alive, then sampled once it has exited, unreaped: its maps
 * read empty. That is a process gone, named from the kernel's mappings (a
 * code mapping no read saw), not a new image without mappings.
 */
static int run_zombie(const char *bin)
{
	struct symbolizer *s = symbolizer__new();
	struct symbolizer_image image = { .start_ticks = 1, .exec_id = 7 };
	char *argv[] = { (char *)bin, NULL };
	struct fake_kernel k = { .exec_id = 7 };
	struct symbolizer_stats st;
	struct helper h = {};
	struct sym_info si;
	uint64_t ip = 0;
	int err;

	err = s ? helper__start(&h, argv) : -ENOMEM;
	/* Far from every mapping a read saw: only the kernel's mapping holds it. */
	if (err || !main_kmap(&h, bin, bin, 0x100000000000ull, &k.map, &ip)) {
		report(false, "start", "err %d, main or its mapping not found", err);
		return 1;
	}
	k.pid = h.pid;
	symbolizer__set_kernel_maps(s, fake_kmaps, &k);
	err = symbolizer__note_exec(s, h.pid, mono_ns(), &image, true);
	report(!err, "noted", "err %d", err);
	kill(h.pid, SIGKILL);
	if (!zombie(h.pid)) {
		report(false, "exited", "pid %d never became a zombie", h.pid);
		return 1;
	}
	symbolizer__note_sample(s, h.pid, mono_ns(), &ip, 1);
	report(k.asked == 1, "kernel-asked", "the kernel's mappings asked for %d times", k.asked);
	err = symbolizer__user(s, h.pid, ip, &si);
	report(!err && si.name && !strcmp(si.name, "main") && si.offset == 0, "named",
	       "err %d got %s+%" PRIu64 " in %s", err, nz(si.name), si.offset, nz(si.module));
	symbolizer__stats(s, &st);
	report(st.kernel_named == 1, "kernel-named", "kernel_named %" PRIu64, st.kernel_named);
	helper__stop(&h); /* reaped */
	symbolizer__free(s);
	return failures != 0;
}

/*
 * The tracker's read of a process (its libraries mapped after the first
 * read) handed to the symbolizer while the process lives: a frame there
 * first sampled just before the exit, and read after it, is named.
 */
static int run_tracked(const char *bin, const char *lib, const char *sym, bool control)
{
	struct symbolizer *s = symbolizer__new();
	char *argv[] = { (char *)bin, NULL }, cmd[4200];
	struct procmaps *pm = NULL;
	const struct probe *pl;
	struct helper h = {};
	struct sym_info si;
	uint64_t ip;
	int err;

	err = s ? helper__start(&h, argv) : -ENOMEM;
	if (!err)
		err = symbolizer__note_pid(s, h.pid);
	snprintf(cmd, sizeof(cmd), "dlopen %s %s\n", lib, sym);
	if (!err)
		err = helper__command(&h, cmd);
	pl = err ? NULL : probe_by_name(&h, sym);
	if (!pl) {
		report(false, "dlopen", "err %d", err);
		return 1;
	}
	ip = pl->addr;
	err = procmaps__snapshot(h.pid, 0, &pm);
	if (!control)
		err = err ? err : symbolizer__note_maps(s, h.pid, pm);
	report(!err, "handed", "err %d", err);
	procmaps__free(pm);
	helper__stop(&h); /* exited and reaped: no read can find its maps now */
	procmaps__forget(h.pid);
	symbolizer__note_sample(s, h.pid, mono_ns(), &ip, 1);
	err = symbolizer__user(s, h.pid, ip, &si);
	if (control)
		report(err || !si.name, "unnamed", "err %d got %s in %s", err, nz(si.name),
		       nz(si.module));
	else
		report(!err && si.name && !strcmp(si.name, sym) && si.offset == 0, "named",
		       "err %d got %s+%" PRIu64 " in %s", err, nz(si.name), si.offset,
		       nz(si.module));
	symbolizer__free(s);
	return failures != 0;
}

/*
 * A process no read saw, gone before its sample is read, whose file no
 * other process read alive mapped (the cache has no object for it): named
 * from the file at the loader's path, if that is still exactly the file the
 * kernel identified; a path that leads to another file names nothing.
 */
static int run_unseen(const char *bin, const char *path)
{
	struct symbolizer_image image = { .start_ticks = 1, .exec_id = 9 };
	struct fake_kernel k = { .exec_id = 9 };
	char *argv[] = { (char *)bin, NULL };
	bool same = !strcmp(bin, path);
	struct symbolizer_stats st;
	struct symbolizer *s = NULL;
	struct helper h = {};
	struct sym_info si;
	uint64_t ip = 0;
	bool found;
	int err;

	err = helper__start(&h, argv);
	found = !err && main_kmap(&h, bin, path, 0, &k.map, &ip);
	k.pid = h.pid;
	if (!err)
		helper__stop(&h); /* exited and reaped: nothing can read its maps */
	procmaps__forget(k.pid);
	if (!found) {
		report(false, "start", "err %d, main or its mapping not found", err);
		return 1;
	}
	/* A new symbolizer: no object of bin in its cache. */
	s = symbolizer__new();
	if (!s) {
		report(false, "symbolizer", "out of memory");
		return 1;
	}
	symbolizer__set_kernel_maps(s, fake_kmaps, &k);
	err = symbolizer__note_exec(s, k.pid, mono_ns(), &image, false);
	symbolizer__note_sample(s, k.pid, mono_ns(), &ip, 1);
	report(k.asked >= 1, "kernel-asked", "the kernel's mappings asked for %d times", k.asked);
	err = err ? err : symbolizer__user(s, k.pid, ip, &si);
	symbolizer__stats(s, &st);
	if (same) {
		report(!err && si.name && !strcmp(si.name, "main") && si.offset == 0, "named",
		       "err %d got %s+%" PRIu64 " in %s", err, nz(si.name), si.offset,
		       nz(si.module));
		report(st.kernel_named == 1, "kernel-named", "kernel_named %" PRIu64,
		       st.kernel_named);
	} else {
		report(err || !si.name, "unnamed", "err %d got %s in %s (from %s)", err,
		       nz(si.name), nz(si.module), path);
		report(st.kernel_named == 0, "kernel-unnamed", "kernel_named %" PRIu64,
		       st.kernel_named);
	}
	symbolizer__free(s);
	return failures != 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "unseen"))
		return run_unseen(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "zombie"))
		return run_zombie(argv[2]);
	if ((argc == 5 || (argc == 6 && !strcmp(argv[5], "control"))) &&
	    !strcmp(argv[1], "tracked"))
		return run_tracked(argv[2], argv[3], argv[4], argc == 6);
	fprintf(stderr, "usage: see the comment at the top of tests/symbolize_gone.c\n");
	return 2;
}
