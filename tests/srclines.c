// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Source-line resolver driver, for tests/srclines.test.
 *
 *   srclines resolve FILE [DEBUGFILE]
 *     Reads ELF addresses (hex, one a line) on stdin and prints, for each,
 *     what `addr2line -a -f -i -e FILE` prints: the address as 0x%016x, then
 *     a function line and a "file:line" line per frame, innermost first
 *     ("??" and "??:0" when unknown). DEBUGFILE: the file holding the DWARF,
 *     if not FILE. Ends with "# cached N functions M" on stderr. With
 *     SRCLINES_RELEASE=1 in the environment, the DWARF is released after
 *     every lookup (srcline__release()): each new address reopens it; with
 *     SRCLINES_RELEASE=inuse, released as still in use (kept open, the file's
 *     pages given back). Then "# resident KB, at most KB": the pages of the
 *     DWARF file (or of its inflated copy) mapped in at the end, and (with
 *     SRCLINES_RESIDENT=1 in the environment) the most after any lookup.
 *     Also "# mapped at most N": the most mappings of FILE itself (not a
 *     copy) while its DWARF was open. SRCLINES_SPILL_BUDGET=BYTES: the spill
 *     budget (srcline__set_spill_budget()).
 *   srclines truncate FILE [NEWFILE]
 *     FILE is rewritten in place while its DWARF is open (cp over it, a
 *     build): looks up the first address on stdin, truncates FILE to 4 KiB
 *     (or copies NEWFILE over it, as cp does: same inode, new bytes), then
 *     looks up the others. The process must live (a mapped page past the
 *     new end raises SIGBUS: util/fileview.h); prints "first N" (frames of
 *     the first address), "after-truncate ANSWERED FAILED" (new addresses
 *     after the truncation) and "first-again N" (the cached answer).
 *   srclines kept FILE [NEWFILE [--keep-mtime [--link]] | --unlink]
 *     The symbol cache's way (symcache.h): FILE mapped here and loaded, its
 *     DWARF descriptor kept; with NEWFILE, FILE is then rewritten in place
 *     (cp) before the first lookup of the ELF addresses on stdin, and with
 *     --keep-mtime its mtime put back (only the ctime tells), with --link
 *     then a hard link made (FILE.link: the link count moves too); with --unlink,
 *     FILE is deleted instead (as a short program's binary after it exits);
 *     prints "answered N" (addresses with lines).
 *   srclines kept FILE --tenant-later
 *     FILE's lines looked up as a host process maps it (first half of the
 *     addresses), then as a process whose root is not the host's maps it too
 *     (symcache__file()'s tenant: a volume in a container) and the other
 *     half; prints "answered N" and "tenant-copies BEFORE AFTER" (copies
 *     made before and after the tenant came) and "mapped-after N" (mappings
 *     of FILE itself beyond the test's own once the tenant came: 0).
 *   srclines spill FILE [NEWFILE]
 *     The spill step alone (srcline_elf.h): FILE's compressed sections are
 *     judged, then (with NEWFILE) FILE is written with NEWFILE's bytes in
 *     place, as its owner may between the judgement and the copy, then
 *     FILE is spilled; prints "judged CLAIMED", "spill RESULT BYTES" (the
 *     descriptor or a negative errno, the copy's size) and the refusals.
 *   srclines bench NAME FILE [DEBUGFILE]
 *     Times the resolver on the addresses on stdin: the first lookup (it
 *     indexes the DWARF), every new address after it, and the same
 *     addresses again (cached); one "srcline" line for scripts/bench.sh.
 *   srclines sym [--debuginfod] [--no-inline] PID PATH VADDR...
 *     The symbolizer's answers (symbolize.h) for the ELF addresses VADDR of
 *     PATH as process PID maps it (PIE or not: through the mapping of file
 *     offset 0), printed the same way; the function of the last frame is the
 *     symbol's name. --debuginfod: fetch missing debug files.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "procs/procmaps.h"
#include "symbols/srcline.h"
#include "symbols/srcline_elf.h"
#include "symbols/symcache.h"
#include "symbols/symbolize.h"
#include "util/clock.h"

/*
 * KB of our mappings of the file fd opens, or of an unlinked copy of it
 * (srcline's inflated copy): what the DWARF's pages cost our RSS.
 */
static unsigned long resident_kb(int fd)
{
	unsigned long kb = 0, lo, hi, ino, v;
	bool counted = false;
	char line[512];
	struct stat st;
	FILE *f;

	if (fstat(fd, &st) || !(f = fopen("/proc/self/smaps", "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %*x %*s %lu", &lo, &hi, &ino) == 3)
			counted = strchr(line, '/') &&
				  (ino == st.st_ino || strstr(line, "(deleted)"));
		else if (counted && sscanf(line, "Rss: %lu kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

/* Mappings of the file fd opens (its device and inode, not a copy): what libdw may read in place.
 */
static int mappings_of(int fd)
{
	unsigned int maj, min;
	unsigned long ino;
	char line[512];
	struct stat st;
	int n = 0;
	FILE *f;

	if (fstat(fd, &st) || !(f = fopen("/proc/self/maps", "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		n += sscanf(line, "%*x-%*x %*s %*x %x:%x %lu", &maj, &min, &ino) == 3 &&
		     ino == st.st_ino && makedev(maj, min) == st.st_dev;
	fclose(f);
	return n;
}

/* What srclines refused so far (srcline.h), on stderr. */
static void print_refused(void)
{
	struct srcline_stats ss;

	srcline__stats(&ss);
	fprintf(stderr,
		"# refused ratio %" PRIu64 " size %" PRIu64 " memory %" PRIu64
		" spill_full %" PRIu64 "\n",
		ss.refused_ratio, ss.refused_size, ss.refused_memory, ss.spill_full);
}

static int resolve(const char *path)
{
	const char *rel = getenv("SRCLINES_RELEASE");
	bool release = rel && !strcmp(rel, "1"), in_use = rel && !strcmp(rel, "inuse");
	bool watch = getenv("SRCLINES_RESIDENT") != NULL;
	const char *spill = getenv("SRCLINES_SPILL_BUDGET");
	unsigned long most = 0, kb;
	const struct srcline_frame *f;
	struct srcline *sl;
	int fd, n, i, mapped = 0;
	char buf[128];

	if (spill)
		srcline__set_spill_budget(strtoull(spill, NULL, 10));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	sl = srcline__new(fd, NULL, false);
	if (!sl) {
		fprintf(stderr, "%s: no DWARF: %s\n", path, strerror(errno));
		print_refused();
		return 1;
	}
	while (fgets(buf, sizeof(buf), stdin)) {
		uint64_t addr = strtoull(buf, NULL, 16);

		printf("0x%016" PRIx64 "\n", addr);
		n = srcline__find(sl, addr, &f);
		if (release)
			srcline__release(sl, UINT64_MAX);
		else if (in_use)
			srcline__release(sl, 0); /* still in use: its pages given back */
		kb = watch ? resident_kb(fd) : 0;
		if (kb > most)
			most = kb;
		i = mappings_of(fd);
		if (i > mapped)
			mapped = i;
		if (n <= 0) {
			printf("??\n??:0\n");
			continue;
		}
		for (i = 0; i < n; i++)
			printf("%s\n%s:%u\n", f[i].function ? f[i].function : "??",
			       f[i].file ? f[i].file : "??", f[i].line);
	}
	fprintf(stderr, "# cached %zu functions %zu spilled %" PRIu64 "\n", srcline__cached(sl),
		srcline__functions(sl), srcline__spilled(sl));
	fprintf(stderr, "# resident %lu KB, at most %lu KB\n", resident_kb(fd), most);
	fprintf(stderr, "# heap %" PRIu64 " bytes\n", srcline__bytes(sl));
	fprintf(stderr, "# mapped at most %d\n", mapped);
	print_refused();
	srcline__free(sl);
	return 0;
}

/* cp FROM PATH: PATH truncated and written with FROM's bytes, in place. */
static int copy_over(const char *from, const char *path)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	char buf[65536];
	ssize_t n = -1;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return n == 0 ? 0 : -1;
}

static int truncated(const char *path, const char *from)
{
	const struct srcline_frame *f;
	int fd, n, first, answered = 0, failed = 0;
	struct srcline *sl;
	uint64_t addr0;
	char buf[128];

	fd = open(path, O_RDONLY | O_CLOEXEC);
	sl = fd >= 0 ? srcline__new(fd, NULL, false) : NULL;
	if (!sl || !fgets(buf, sizeof(buf), stdin)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	addr0 = strtoull(buf, NULL, 16);
	first = srcline__find(sl, addr0, &f);
	printf("first %d\n", first);
	fflush(stdout);
	if (from ? copy_over(from, path) : truncate(path, 4096)) {
		perror(path);
		return 1;
	}
	while (fgets(buf, sizeof(buf), stdin)) {
		n = srcline__find(sl, strtoull(buf, NULL, 16), &f);
		if (n > 0)
			answered++;
		else
			failed++;
	}
	printf("after-truncate %d %d\n", answered, failed);
	printf("first-again %d\n", srcline__find(sl, addr0, &f));
	srcline__free(sl);
	return 0;
}

/*
 * The symbol cache's path: PATH mapped here and loaded (its DWARF descriptor
 * kept), then, with NEWFILE, rewritten in place before the first lookup.
 */
static int kept(const char *path, const char *from, bool keep_mtime, bool link_it)
{
	bool tenant_later = from && !strcmp(from, "--tenant-later");
	struct srcline_stats before, after;
	int lines = 0, mapped_after = 0, n;
	char link_path[4096];
	struct symcache *c = symcache__new();
	const struct srcline_frame *f;
	const struct procmap *m = NULL;
	struct procmaps *pm = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), answered = 0;
	struct symobj *o = NULL;
	struct stat st;
	char buf[128];
	void *map;
	size_t i;

	if (!c || fd < 0 || fstat(fd, &st) ||
	    (map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED ||
	    procmaps__read(getpid(), &pm))
		return 1;
	for (i = 0; i < procmaps__count(pm) && !m; i++)
		if (procmaps__get(pm, i)->inode == st.st_ino && !procmaps__get(pm, i)->offset)
			m = procmaps__get(pm, i);
	o = m ? symcache__file(c, getpid(), 0, false, m) : NULL;
	if (tenant_later) {
		/* Its addresses: the host's process asks for the first half. */
		char addrs[4096][32];

		while (lines < 4096 && fgets(addrs[lines], sizeof(addrs[0]), stdin))
			lines++;
		for (int j = 0; o && j < lines / 2; j++)
			answered += symcache__lines(c, o, strtoull(addrs[j], NULL, 16), &f) > 0;
		srcline__stats(&before);
		/* A process in a container maps the same file (a volume): the same object. */
		if (o && symcache__file(c, getpid(), 0, true, m) != o)
			o = NULL;
		else if (o)
			symcache__put(c, o);
		for (int j = lines / 2; o && j < lines; j++) {
			answered += symcache__lines(c, o, strtoull(addrs[j], NULL, 16), &f) > 0;
			n = mappings_of(fd) - 1; /* the test's own mapping */
			if (n > mapped_after)
				mapped_after = n;
		}
		srcline__stats(&after);
		if (o) {
			printf("answered %d\ntenant-copies %" PRIu64 " %" PRIu64
			       "\nmapped-after %d\n",
			       answered, before.tenant_copies, after.tenant_copies, mapped_after);
			goto out;
		}
	} else if (from && !strcmp(from, "--unlink")) {
		if (unlink(path))
			o = NULL;
	} else if (from) {
		const struct timespec times[2] = { st.st_atim, st.st_mtim };

		snprintf(link_path, sizeof(link_path), "%s.link", path);
		if (copy_over(from, path) || (keep_mtime && utimensat(AT_FDCWD, path, times, 0)) ||
		    (link_it && link(path, link_path)))
			o = NULL;
	}
	if (!o) {
		fprintf(stderr, "%s: not loaded or not rewritten\n", path);
		return 1;
	}
	while (fgets(buf, sizeof(buf), stdin))
		answered += symcache__lines(c, o, strtoull(buf, NULL, 16), &f) > 0;
	printf("answered %d\n", answered);
out:
	symcache__put(c, o);
	procmaps__free(pm);
	symcache__free(c);
	munmap(map, st.st_size);
	close(fd);
	return 0;
}

static int spill(const char *path, const char *from)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), out;
	uint64_t claimed = 0, bytes = 0;
	Elf *elf;

	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!elf || srcline_elf_prepare(fd, elf, false, &claimed)) {
		fprintf(stderr, "%s: not judged fit to spill\n", path);
		return 1;
	}
	elf_end(elf);
	printf("judged %" PRIu64 "\n", claimed);
	if (from && copy_over(from, path)) {
		perror(path);
		return 1;
	}
	out = srcline_elf_spill(fd, claimed, &bytes);
	printf("spill %d %" PRIu64 "\n", out, bytes);
	print_refused();
	if (out >= 0) {
		close(out);
		srcline_elf_unspill(bytes);
	}
	close(fd);
	return 0;
}

static int bench(const char *name, const char *path)
{
	const struct srcline_frame *f;
	uint64_t *addrs = NULL, t0, t1, t2, t3, frames = 0;
	size_t n = 0, cap = 0, i;
	struct srcline *sl;
	char buf[128];
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	while (fgets(buf, sizeof(buf), stdin)) {
		if (n == cap &&
		    !(addrs = realloc(addrs, (cap = cap ? 2 * cap : 4096) * sizeof(*addrs))))
			return 1;
		addrs[n++] = strtoull(buf, NULL, 16);
	}
	t0 = clock__mono_ns();
	sl = fd >= 0 ? srcline__new(fd, NULL, false) : NULL;
	if (!sl || !n) {
		fprintf(stderr, "%s: no DWARF or no addresses\n", path);
		return 1;
	}
	srcline__find(sl, addrs[0], &f);
	t1 = clock__mono_ns();
	for (i = 1; i < n; i++) {
		r = srcline__find(sl, addrs[i], &f);
		frames += r > 0 ? r : 0;
	}
	t2 = clock__mono_ns();
	for (i = 0; i < n; i++)
		srcline__find(sl, addrs[i], &f);
	t3 = clock__mono_ns();
	printf("srcline object=%s addrs=%zu functions=%zu index_ms=%.1f new_ns=%.0f cached_ns=%.0f "
	       "frames_per_addr=%.2f\n",
	       name, n, srcline__functions(sl), (t1 - t0) / 1e6,
	       n > 1 ? (double)(t2 - t1) / (n - 1) : 0, (double)(t3 - t2) / n,
	       n > 1 ? (double)frames / (n - 1) : 0);
	srcline__free(sl);
	free(addrs);
	return 0;
}

/* Where PATH's file offset 0 is mapped in pid, minus the ELF address it holds. */
static int load_bias(int pid, const char *path, uint64_t *bias)
{
	uint64_t vaddr0 = 0;
	char maps[64], line[4096], cmd[4200];
	FILE *f;
	int found = -1;

	/* The ELF address of offset 0: the first PT_LOAD's p_vaddr (0 for PIE). */
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' | awk '$1==\"LOAD\"{print $3; exit}'", path);
	f = popen(cmd, "r");
	if (f && fgets(line, sizeof(line), f))
		vaddr0 = strtoull(line, NULL, 16);
	if (f)
		pclose(f);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	while (f && found && fgets(line, sizeof(line), f)) {
		uint64_t start, off;
		char *p = strchr(line, '/');

		if (!p || sscanf(line, "%" SCNx64 "-%*x %*s %" SCNx64, &start, &off) != 2)
			continue;
		p[strcspn(p, "\n")] = 0;
		if (off == 0 && !strcmp(p, path)) {
			*bias = start - vaddr0;
			found = 0;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static int sym(int argc, char **argv)
{
	struct symbolizer *s = symbolizer__new();
	bool debuginfod = false, inlines = true;
	uint64_t bias;
	int i = 0, pid;
	size_t k;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		debuginfod |= !strcmp(argv[i], "--debuginfod");
		inlines &= !!strcmp(argv[i], "--no-inline");
	}
	if (!s || argc - i < 2)
		return 2;
	pid = atoi(argv[i]);
	symbolizer__set_lines(s, true, inlines);
	if (debuginfod && symbolizer__set_debuginfod(s, true))
		return 1;
	if (load_bias(pid, argv[i + 1], &bias)) {
		fprintf(stderr, "%s is not mapped by %d\n", argv[i + 1], pid);
		return 1;
	}
	symbolizer__note_pid(s, pid);
	for (i += 2; i < argc; i++) {
		uint64_t addr = strtoull(argv[i], NULL, 16);
		struct sym_info si;

		printf("0x%016" PRIx64 "\n", addr);
		if (symbolizer__user(s, pid, addr + bias, &si) || !si.nr_lines) {
			printf("%s\n??:0\n", si.name ? si.name : "??");
			continue;
		}
		for (k = 0; k < si.nr_lines; k++) {
			const struct srcline_frame *f = &si.lines[k];
			const char *name = f->function;

			if (k + 1 == si.nr_lines && si.name)
				name = si.name;
			printf("%s\n%s:%u\n", name ? name : "??", f->file ? f->file : "??",
			       f->line);
		}
	}
	symbolizer__free(s);
	return 0;
}

int main(int argc, char **argv)
{
	elf_version(EV_CURRENT);
	if (argc >= 3 && !strcmp(argv[1], "resolve"))
		return resolve(argc > 3 ? argv[3] : argv[2]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "truncate"))
		return truncated(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc >= 3 && argc <= 6 && !strcmp(argv[1], "kept"))
		return kept(argv[2], argc >= 4 ? argv[3] : NULL,
			    argc >= 5 && !strcmp(argv[4], "--keep-mtime"),
			    argc == 6 && !strcmp(argv[5], "--link"));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "spill"))
		return spill(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc >= 4 && !strcmp(argv[1], "bench"))
		return bench(argv[2], argc > 4 ? argv[4] : argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "sym"))
		return sym(argc - 2, argv + 2);
	fprintf(stderr, "usage: srclines resolve FILE [DEBUGFILE] < addresses\n"
			"       srclines sym [--debuginfod] [--no-inline] PID PATH VADDR...\n");
	return 2;
}
