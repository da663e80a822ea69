// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Symbolizer test program (tests/symbolize_debug.test). Prints the runtime
 * address of its functions as "func NAME ADDR" and libc's getpid as
 * "libc getpid ADDR", then "ready", then obeys
 * commands on stdin until EOF:
 *   exec PATH          execv(PATH): the same process becomes another program
 *   dlopen PATH SYM    load a library, print "func SYM ADDR" and "ready"
 *   hold PATH LEN      map LEN bytes of PATH read-only, print "map held ADDR"
 *   swap PATH          unmap the held range and map PATH executable at its
 *                      address, print "map code ADDR" (a range reused for code,
 *                      as a dlopen reuses the range ld.so.cache held)
 * Built with -DVARIANT=N, the code differs (a different build of "the same"
 * program, for debug files that must not match); with -DRENAME, function
 * names end in "_b" (another program, for exec and rewritten files).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef VARIANT
#define VARIANT 0
#endif

#ifdef RENAME
#define FN(name) name##_b
#else
#define FN(name) name
#endif
#define STR_(x) #x
#define STR(x) STR_(x)
#define sfbpf_static_one FN(sfbpf_static_one)
#define sfbpf_static_two FN(sfbpf_static_two)
#define sfbpf_global_one FN(sfbpf_global_one)

#define NOINLINE __attribute__((noinline))

NOINLINE static int sfbpf_static_one(int x)
{
	for (int i = 0; i < 8 + VARIANT; i++)
		x = x * 3 + i;
	return x;
}

NOINLINE static int sfbpf_static_two(int x)
{
	for (int i = 0; i < 5 + VARIANT; i++)
		x = x * 7 - i;
	return x + sfbpf_static_one(x);
}

NOINLINE int sfbpf_global_one(int x)
{
	return sfbpf_static_two(x) ^ VARIANT;
}

#if VARIANT
NOINLINE static int sfbpf_variant_only(int x)
{
	return sfbpf_static_one(x) * 11;
}
#endif

static void print_func(const char *name, void *addr)
{
	printf("func %s %p\n", name, addr);
}

static void *held;
static size_t held_len;

static void *map_file(const char *path, size_t len, int prot, void *at)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	void *p;

	if (fd < 0)
		return MAP_FAILED;
	if (!len)
		len = fstat(fd, &st) ? 0 : (size_t)st.st_size;
	p = len ? mmap(at, len, prot, MAP_PRIVATE | (at ? MAP_FIXED_NOREPLACE : 0), fd, 0)
		: MAP_FAILED;
	close(fd);
	return p;
}

static void command(char *line)
{
	char *argv[2] = { NULL, NULL }, *path, *sym;
	void *h;

	line[strcspn(line, "\n")] = '\0';
	if (!strncmp(line, "exec ", 5)) {
		argv[0] = line + 5;
		fflush(stdout);
		execv(argv[0], argv);
		printf("exec failed\n");
	} else if (!strncmp(line, "dlopen ", 7)) {
		path = strtok(line + 7, " ");
		sym = strtok(NULL, " ");
		h = path && sym ? dlopen(path, RTLD_NOW) : NULL;
		if (h)
			print_func(sym, dlsym(h, sym));
	} else if (!strncmp(line, "hold ", 5) && !held) {
		path = strtok(line + 5, " ");
		sym = strtok(NULL, " ");
		held_len = sym ? strtoul(sym, NULL, 0) : 0;
		held = path && held_len ? map_file(path, held_len, PROT_READ, NULL) : MAP_FAILED;
		if (held == MAP_FAILED)
			held = NULL;
		else
			printf("map held %p\n", held);
	} else if (!strncmp(line, "swap ", 5) && held) {
		munmap(held, held_len);
		h = map_file(line + 5, 0, PROT_READ | PROT_EXEC, held);
		if (h != MAP_FAILED)
			printf("map code %p\n", h);
		held = NULL;
	}
	printf("ready\n");
	fflush(stdout);
}

int main(void)
{
	char line[4096];

	print_func("main", (void *)main);
	print_func(STR(sfbpf_static_one), (void *)sfbpf_static_one);
	print_func(STR(sfbpf_static_two), (void *)sfbpf_static_two);
	print_func(STR(sfbpf_global_one), (void *)sfbpf_global_one);
#if VARIANT
	print_func("sfbpf_variant_only", (void *)sfbpf_variant_only);
#endif
	printf("libc getpid %p\n", (void *)getpid);
	printf("value %d\nready\n", sfbpf_global_one(3));
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		command(line);
	puts("bye");
	return 0;
}
