// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The churn soak's load (scripts/soak_churn.sh): what a busy host does to a
 * profiler over a week, in modes of one program built twice from this file
 * (-g and -gz, both with -Wa,--gsframe and -Wl,--build-id=0x<TAG>, TAG below):
 *
 *   soak_churn exec SECS RATE DIR PROG_G PROG_Z CGROUP WAIT SPIN
 *       RATE times a second, a DISTINCT binary: a copy of PROG_G or PROG_Z
 *       (in turn) with its build-id rewritten to a serial number, written to
 *       DIR/chg-N or DIR/chz-N (the comm), exec'd as "run WAIT SPIN", deleted
 *       once it exited. Every third one starts in a new cgroup named like a
 *       container runtime's, under CGROUP ("-": none), in turn
 *         CGROUP/system.slice/docker-<64 hex>.scope
 *         CGROUP/kubepods.slice/kubepods-besteffort.slice/
 *             kubepods-besteffort-pod<uid>.slice/cri-containerd-<64 hex>.scope
 *       removed once its process exited; prints "container COMM CGROUP"
 *       (relative to CGROUP) for each. Prints "churn_execs N",
 *       "churn_containers N", "churn_failed N" at the end.
 *   soak_churn run WAIT SPIN
 *       sleeps WAIT s (off-CPU: the profiler learns of the new binary and
 *       loads its table meanwhile), then spins SPIN s of its CPU time in
 *       main;churn_a;churn_b;churn_hot
 *   soak_churn dlopen SECS RATE DIR LIB WAIT_MS ON_MS
 *       RATE times a second a DISTINCT copy of LIB (build-id rewritten, as
 *       above) in DIR: dlopen, WAIT_MS asleep, ON_MS of CPU spinning in its
 *       plugin_entry (main;churn_plugin;plugin_entry;plugin_inner;plugin_hot),
 *       dlclose, deleted. Prints "churn_dlopens N".
 *   soak_churn jit SECS EVERY LIFE
 *       every EVERY s a JIT-like child for LIFE s: each second it maps new
 *       code (a counting loop) at a new address, runs it for 20 ms of CPU
 *       (main;jit_loop;jit_child;jit_call;jit_gen_N) and adds it to its
 *       /tmp/perf-PID.map with 64 more symbols; every 8th second the map is
 *       rewritten from scratch (with every generation so far). The map is
 *       deleted 30 s after its process exited (when its last profile was
 *       written). Prints "jit_procs N" and "jit_rewrites N".
 *
 * The work is measured in CPU time (soak_loop.h cpu_now()), the rates and
 * lives in wall time. Every mode ends by itself after SECS; SIGTERM ends exec, dlopen and jit
 * early, as if SECS had passed: they wait for what they started, clean up and
 * print their counts.
 */
#define _GNU_SOURCE /* memmem */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "soak_loop.h"

#define NOIPA __attribute__((noipa))

/*
 * The build-id both programs and the library are linked with, rewritten per
 * copy; kept here inverted, so that this program's own bytes do not hold it.
 */
static const unsigned char tag_inverted[] = { 0xa3, 0xf5, 0x0f, 0xf2, 0x3b, 0xad, 0xe8,
					      0xc1, 0x64, 0x9e, 0x1d, 0xfb, 0x82, 0x77,
					      0xc5, 0x4a, 0xef, 0x90, 0x36, 0xd8 };
#define TAG_LEN 20

static volatile unsigned long sink;

/* ---- run: main;churn_a;churn_b;churn_hot -------------------------------------------- */

NOIPA static void churn_hot(double end)
{
	unsigned long i;

	do {
		for (i = 0; i < 20000; i++)
			sink++;
	} while (cpu_now() < end);
}

NOIPA static unsigned long churn_b(double end, unsigned long x)
{
	unsigned long p = x * 3, q = x ^ 5, r = x + 7;

	churn_hot(end);
	sink += p ^ q ^ r;
	return p + q + r;
}

NOIPA static void churn_a(double end)
{
	sink += churn_b(end, sink);
}

/* ---- distinct copies ------------------------------------------------------------------ */

struct image {
	char *bytes;
	size_t len;
	size_t tag; /* offset of the build-id */
};

static int image_load(struct image *im, const char *path)
{
	FILE *f = fopen(path, "rb");
	char tag[TAG_LEN], *t;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET))
		goto fail;
	im->len = n;
	im->bytes = malloc(n);
	if (!im->bytes || fread(im->bytes, 1, n, f) != (size_t)n)
		goto fail;
	fclose(f);
	for (int i = 0; i < TAG_LEN; i++)
		tag[i] = ~tag_inverted[i];
	t = memmem(im->bytes, im->len, tag, TAG_LEN);
	/* Exactly one: another copy of the tag would stay the same in every copy. */
	if (!t || memmem(t + 1, im->len - (t + 1 - im->bytes), tag, TAG_LEN)) {
		fprintf(stderr, "soak_churn: %s: build-id tag not found once\n", path);
		return -1;
	}
	im->tag = t - im->bytes;
	return 0;
fail:
	fprintf(stderr, "soak_churn: %s: %s\n", path, strerror(errno));
	if (f)
		fclose(f);
	return -1;
}

/* Writes the image to PATH with build-id = TAG with the serial in its first 8 bytes. */
static int image_write(const struct image *im, const char *path, uint64_t serial, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	memcpy(im->bytes + im->tag, &serial, sizeof(serial));
	while (off < im->len && (n = write(fd, im->bytes + off, im->len - off)) > 0)
		off += n;
	if (close(fd) || off != im->len) {
		unlink(path);
		return -1;
	}
	return 0;
}

/* ---- exec: distinct binaries, some in containers --------------------------------------- */

#define MAX_LIVE 256

struct live {
	pid_t pid;
	char bin[512];
	char cg[1200]; /* the container's cgroup, removed after the process */
	char pod[1024]; /* its pod's cgroup, likewise (kubepods) */
};

static struct live live[MAX_LIVE];

static void hex(char *out, size_t n, uint64_t seed)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		out[i] = digits[seed >> 60];
	}
	out[n] = '\0';
}

/* The cgroup of container SERIAL under ROOT into L (mkdir'ed), or -1. */
static int container(struct live *l, const char *root, uint64_t serial)
{
	char id[65], uid[37];

	hex(id, 64, serial);
	if (serial % 2) {
		snprintf(l->cg, sizeof(l->cg), "%s/system.slice/docker-%s.scope", root, id);
		return mkdir(l->cg, 0755);
	}
	hex(uid, 36, ~serial);
	uid[8] = uid[13] = uid[18] = uid[23] = '_';
	snprintf(l->pod, sizeof(l->pod),
		 "%s/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod%s.slice",
		 root, uid);
	snprintf(l->cg, sizeof(l->cg), "%s/cri-containerd-%s.scope", l->pod, id);
	if (mkdir(l->pod, 0755))
		return -1;
	return mkdir(l->cg, 0755);
}

static void release(struct live *l)
{
	unlink(l->bin);
	/* rmdir fails while the kernel still counts the exited task: retried briefly. */
	for (int i = 0; l->cg[0] && i < 100 && rmdir(l->cg) && errno == EBUSY; i++)
		sleep_s(0.01);
	if (l->pod[0])
		rmdir(l->pod);
	memset(l, 0, sizeof(*l));
}

static void reap(int options)
{
	pid_t pid;
	int i;

	while ((pid = waitpid(-1, NULL, options)) > 0)
		for (i = 0; i < MAX_LIVE; i++)
			if (live[i].pid == pid)
				release(&live[i]);
}

static int exec_loop(double secs, double rate, const char *dir, const char *prog_g,
		     const char *prog_z, const char *cgroot, const char *wait, const char *spin)
{
	struct image im[2];
	double t0 = now(), next = t0;
	unsigned long execs = 0, containers = 0, failed = 0;
	uint64_t serial = (uint64_t)getpid() << 32;
	char sub[1200];

	if (image_load(&im[0], prog_g) || image_load(&im[1], prog_z))
		return 1;
	if (strcmp(cgroot, "-")) {
		snprintf(sub, sizeof(sub), "%s/system.slice", cgroot);
		mkdir(sub, 0755);
		snprintf(sub, sizeof(sub), "%s/kubepods.slice", cgroot);
		mkdir(sub, 0755);
		snprintf(sub, sizeof(sub), "%s/kubepods.slice/kubepods-besteffort.slice", cgroot);
		mkdir(sub, 0755);
	}
	while (running(t0, secs)) {
		struct live *l = NULL;
		int i, z = execs % 2;
		char name[32];
		pid_t pid;

		reap(WNOHANG);
		for (i = 0; i < MAX_LIVE && !l; i++)
			if (!live[i].pid)
				l = &live[i];
		serial++;
		snprintf(name, sizeof(name), "ch%c-%llu", z ? 'z' : 'g',
			 (unsigned long long)(serial & 0xffffffffu));
		if (!l) {
			failed++;
			goto next;
		}
		snprintf(l->bin, sizeof(l->bin), "%s/%s", dir, name);
		if (image_write(&im[z], l->bin, serial, 0755)) {
			failed++;
			l->bin[0] = '\0';
			goto next;
		}
		if (strcmp(cgroot, "-") && execs % 3 == 2 && container(l, cgroot, serial)) {
			fprintf(stderr, "soak_churn: mkdir %s: %s\n", l->cg, strerror(errno));
			failed++;
			release(l);
			goto next;
		}
		pid = fork();
		if (pid == 0) {
			char procs[1300];
			FILE *f;

			if (l->cg[0]) {
				snprintf(procs, sizeof(procs), "%s/cgroup.procs", l->cg);
				f = fopen(procs, "w");
				if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
					_exit(126);
			}
			execl(l->bin, name, "run", wait, spin, (char *)NULL);
			_exit(127);
		}
		if (pid < 0) {
			failed++;
			release(l);
			goto next;
		}
		l->pid = pid;
		execs++;
		if (l->cg[0])
			printf("container %s %s\n", name, l->cg + strlen(cgroot));
		containers += l->cg[0] != '\0';
next:
		next += 1.0 / rate;
		sleep_s(next - now());
	}
	reap(0);
	printf("churn_execs %lu\nchurn_containers %lu\nchurn_failed %lu\n", execs, containers,
	       failed);
	return 0;
}

/* ---- dlopen: distinct libraries -------------------------------------------------------- */

static volatile sig_atomic_t plugin_stop;

static void on_alarm(int sig)
{
	(void)sig;
	plugin_stop = 1;
}

NOIPA static void churn_plugin(void (*entry)(volatile sig_atomic_t *))
{
	entry(&plugin_stop);
	sink++;
}

static int dlopen_loop(double secs, double rate, const char *dir, const char *lib, double wait_ms,
		       double on_ms)
{
	struct itimerval on = { .it_value = { 0, (long)(on_ms * 1000) } };
	void (*entry)(volatile sig_atomic_t *);
	uint64_t serial = (uint64_t)getpid() << 32;
	double t0 = now(), next = t0;
	unsigned long opened = 0;
	struct image im;
	char path[512];
	void *h;

	if (image_load(&im, lib))
		return 1;
	signal(SIGVTALRM, on_alarm);
	while (running(t0, secs)) {
		serial++;
		snprintf(path, sizeof(path), "%s/libchurn-%llu.so", dir,
			 (unsigned long long)(serial & 0xffffffffu));
		if (image_write(&im, path, serial, 0644))
			return 1;
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		entry = h ? (void (*)(volatile sig_atomic_t *))dlsym(h, "plugin_entry") : NULL;
		if (!entry) {
			fprintf(stderr, "soak_churn: %s\n", dlerror());
			unlink(path);
			return 1;
		}
		sleep_s(wait_ms / 1000);
		plugin_stop = 0;
		setitimer(ITIMER_VIRTUAL, &on, NULL); /* its CPU time, as cpu_now() */
		churn_plugin(entry);
		dlclose(h);
		unlink(path);
		opened++;
		next += 1.0 / rate;
		sleep_s(next - now());
	}
	printf("churn_dlopens %lu\n", opened);
	return 0;
}

/* ---- jit: perf maps written and rewritten ---------------------------------------------- */

/*
 * A counting loop, returning when its argument reaches 0, in a frame of its
 * own as JITs make theirs (frame pointer pushed and set): code without a
 * table is walked by its frame pointer.
 */
#if defined(__x86_64__)
static const unsigned char jit_code[] = {
	0x55, /* push %rbp */
	0x48, 0x89, 0xe5, /* mov %rsp,%rbp */
	0x48, 0x89, 0xf8, /* mov %rdi,%rax */
	0x48, 0xff, 0xc8, /* 1: dec %rax */
	0x75, 0xfb, /* jnz 1b */
	0x5d, /* pop %rbp */
	0xc3, /* ret */
};
#elif defined(__aarch64__)
static const uint32_t jit_code[] = {
	0xa9bf7bfd, /* stp x29, x30, [sp, #-16]! */
	0x910003fd, /* mov x29, sp */
	0xf1000400, /* 1: subs x0, x0, #1 */
	0x54ffffe1, /* b.ne 1b */
	0xa8c17bfd, /* ldp x29, x30, [sp], #16 */
	0xd65f03c0, /* ret */
};
#else
#error "soak_churn: no JIT code for this architecture"
#endif

NOIPA static void jit_call(void (*fn)(unsigned long), double end)
{
	do
		fn(100000);
	while (cpu_now() < end);
	sink++;
}

/* One generation's lines: its code, run, and 64 symbols of code never run (what a map costs). */
static void jit_lines(FILE *f, unsigned long gen, const void *code)
{
	fprintf(f, "%lx %zx jit_gen_%lu\n", (unsigned long)code, sizeof(jit_code), gen);
	for (int i = 0; i < 64; i++)
		fprintf(f, "%lx 40 jit_stub_%lu_%d\n", 0x7e0000000000UL + gen * 4096 + i * 64, gen,
			i);
}

#define JIT_MAX_GENS 256

NOIPA static int jit_child(double life, unsigned long *rewrites)
{
	static void *codes[JIT_MAX_GENS];
	double t0 = now();
	char map[64];
	unsigned long gen = 0, g;
	void *code = NULL;
	long page = sysconf(_SC_PAGESIZE);
	FILE *f = NULL;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", getpid());
	while (!terminated && now() - t0 < life && gen < JIT_MAX_GENS) {
		void *prev = code;

		/* A new address each time: the hint moves past the last one. */
		code = mmap(prev ? (char *)prev + 16 * page : NULL, page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (code == MAP_FAILED)
			return 1;
		memcpy(code, jit_code, sizeof(jit_code));
		__builtin___clear_cache((char *)code, (char *)code + sizeof(jit_code));
		if (mprotect(code, page, PROT_READ | PROT_EXEC))
			return 1;
		if (prev)
			munmap(prev, page);
		codes[gen] = code;
		/*
		 * Appended, and every 8th time rewritten from scratch: with every
		 * generation, as a JIT's map names all code it ran (samples of old
		 * code are named after it, at the profile's end).
		 */
		if (gen % 8 == 0) {
			if (f)
				fclose(f);
			f = fopen(map, "w");
			if (!f)
				return 1;
			(*rewrites)++;
			for (g = 0; g < gen; g++)
				jit_lines(f, g, codes[g]);
		}
		jit_lines(f, gen, code);
		fflush(f);
		jit_call((void (*)(unsigned long))code, cpu_now() + 0.02);
		gen++;
		sleep_s(t0 + gen - now());
	}
	if (f)
		fclose(f);
	return 0;
}

#define JIT_MAX_KIDS 64
#define JIT_MAP_LINGER 30 /* s a map stays after its process: its last profile is written */

static void jit_unlink(pid_t pid)
{
	char map[64];

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
	unlink(map);
}

static int jit_loop(double secs, double every, double life)
{
	struct {
		pid_t pid;
		double gone; /* when it exited, or 0 */
	} kids[JIT_MAX_KIDS] = { 0 };
	double t0 = now(), next = t0;
	unsigned long procs = 0, rewrites = 0;
	int pipefd[2], i;
	pid_t pid;

	/* Children report their rewrites through a pipe: one unsigned long each. */
	if (pipe(pipefd))
		return 1;
	while (running(t0, secs)) {
		if (now() >= next) {
			for (i = 0; i < JIT_MAX_KIDS && kids[i].pid; i++)
				;
			pid = i < JIT_MAX_KIDS ? fork() : -1;
			if (pid == 0) {
				unsigned long n = 0;
				int rc;

				close(pipefd[0]);
				rc = jit_child(life, &n);
				if (write(pipefd[1], &n, sizeof(n)) != sizeof(n))
					rc = 1;
				_exit(rc);
			}
			if (pid > 0) {
				kids[i].pid = pid;
				kids[i].gone = 0;
				procs++;
			}
			next += every;
		}
		while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
			for (i = 0; i < JIT_MAX_KIDS; i++)
				if (kids[i].pid == pid)
					kids[i].gone = now();
		for (i = 0; i < JIT_MAX_KIDS; i++)
			if (kids[i].gone && now() - kids[i].gone > JIT_MAP_LINGER) {
				jit_unlink(kids[i].pid);
				kids[i].pid = 0;
				kids[i].gone = 0;
			}
		sleep_s(0.1);
	}
	/* The children end at LIFE, or now (only those not waited for yet: still ours). */
	close(pipefd[1]);
	for (i = 0; i < JIT_MAX_KIDS; i++)
		if (kids[i].pid && !kids[i].gone)
			kill(kids[i].pid, SIGTERM);
	while (waitpid(-1, NULL, 0) > 0)
		;
	for (i = 0; i < JIT_MAX_KIDS; i++)
		if (kids[i].pid)
			jit_unlink(kids[i].pid);
	for (unsigned long n; read(pipefd[0], &n, sizeof(n)) == sizeof(n);)
		rewrites += n;
	printf("jit_procs %lu\njit_rewrites %lu\n", procs, rewrites);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "exec") || !strcmp(mode, "dlopen") || !strcmp(mode, "jit"))
		signal(SIGTERM, on_term);
	if (!strcmp(mode, "run") && argc == 4) {
		sleep_s(atof(argv[2]));
		churn_a(cpu_now() + atof(argv[3]));
		return 0;
	}
	if (!strcmp(mode, "exec") && argc == 10)
		return exec_loop(atof(argv[2]), atof(argv[3]), argv[4], argv[5], argv[6], argv[7],
				 argv[8], argv[9]);
	if (!strcmp(mode, "dlopen") && argc == 8)
		return dlopen_loop(atof(argv[2]), atof(argv[3]), argv[4], argv[5], atof(argv[6]),
				   atof(argv[7]));
	if (!strcmp(mode, "jit") && argc == 5)
		return jit_loop(atof(argv[2]), atof(argv[3]), atof(argv[4]));
	fprintf(stderr, "usage: see scripts/soak_churn.c\n");
	return 2;
}
