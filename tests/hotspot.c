// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prints what interp/hotspot.c reads of a running JVM from outside, for
 * tests/hotspot.test.
 *
 *   hotspot --tables PID   the JVM's vmStructs tables, one line an entry, in
 *                          the words of jhsdb clhsdb's vmstructsdump,
 *                          intConstant and longConstant:
 *                            type NAME SUPER|null OOP INT UNSIGNED SIZE
 *                            field TYPE NAME TYPESTRING false OFFSET 0x0
 *                            intConstant NAME VALUE / longConstant NAME VALUE
 *                          and each static as
 *                            static TYPE NAME ELF-VALUE (its address less the bias)
 *   hotspot --threads PID  every JavaThread, and the Java frames of those
 *                          stopped outside Java code, as jstack words them:
 *                            thread TID 0xJAVATHREAD STATE END NR_FRAMES
 *                            \tat CLASS.METHOD(FILE:LINE|FILE|Native Method|Unknown Source)[ *]
 *                          " *": a frame of compiled code (inlined or not)
 *                          END: call_stub, no_anchor, other_code, unreadable, limit
 *   hotspot --counters PID NAME...
 *                          the JVM's perf data counters NAME (jlongs, as jstat
 *                          reads them), found through vmStructs: "NAME VALUE"
 *
 * Exit status 1 when the process cannot be read (the error on stderr).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/hotspot.h"
#include "interp/hotspot_int.h"
#include "procs/procmem.h"
#include "util/log.h"

static const char *tf(bool b)
{
	return b ? "true" : "false";
}

/*
 * As the agent prints a type string: without a const of the whole ("const
 * char*", "HeapWord* const"), quoted when it has a space.
 */
static void put_type_string(const char *s)
{
	int n;

	if (!strncmp(s, "const ", 6))
		s += 6;
	n = (int)strlen(s);
	if (n > 6 && !strcmp(s + n - 6, " const"))
		n -= 6;
	printf(memchr(s, ' ', n) ? "\"%.*s\"" : "%.*s", n, s);
}

static void print_tables(const struct hotspot *hs)
{
	const struct hs_tables *t = hotspot__tables(hs);

	for (size_t i = 0; i < hs_tables__nr_types(t); i++) {
		const struct hs_type *ty = hs_tables__type_at(t, i);

		printf(strchr(ty->name, ' ') ? "type \"%s\"" : "type %s", ty->name);
		printf(" %s %s %s %s %" PRIu64 "\n", ty->super ? ty->super : "null", tf(ty->is_oop),
		       tf(ty->is_integer), tf(ty->is_unsigned), ty->size);
	}
	for (size_t i = 0; i < hs_tables__nr_fields(t); i++) {
		const struct hs_field *f = hs_tables__field_at(t, i);

		if (f->is_static) {
			printf("static %s %s 0x%" PRIx64 "\n", f->type, f->name,
			       f->address - hotspot__bias(hs));
			continue;
		}
		printf("field %s %s ", f->type, f->name);
		/* An unchecked field's type is not said: the agent's word for it. */
		put_type_string(f->type_string[0] ? f->type_string : "<opaque>");
		printf(" false %" PRIu64 " 0x0\n", f->offset);
	}
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < hs_tables__nr_consts(t, l); i++) {
			const struct hs_const *c = hs_tables__const_at(t, l, i);

			printf("%s %s %" PRId64 "\n", l ? "longConstant" : "intConstant", c->name,
			       c->value);
		}
}

static const char *const ends[] = {
	[HOTSPOT_END_CALL_STUB] = "call_stub",	 [HOTSPOT_END_NO_ANCHOR] = "no_anchor",
	[HOTSPOT_END_OTHER_CODE] = "other_code", [HOTSPOT_END_UNREADABLE] = "unreadable",
	[HOTSPOT_END_LIMIT] = "limit",
};

static int print_threads(struct hotspot *hs)
{
	struct hotspot_thread *threads;
	size_t nr;
	int err = hotspot__threads(hs, &threads, &nr);

	if (err)
		return err;
	for (size_t i = 0; i < nr; i++) {
		const struct hotspot_thread *t = &threads[i];

		printf("thread %" PRIu64 " 0x%016" PRIx64 " %" PRId64 " %s %u\n", t->tid,
		       t->java_thread, t->state, ends[t->end], t->nr_frames);
		for (uint32_t j = 0; j < t->nr_frames; j++) {
			const struct hotspot_frame *f = &t->frames[j];
			struct hotspot_method m;
			int line;

			if (hotspot__method(hs, f->method, &m)) {
				printf("\tat [unreadable Method 0x%" PRIx64 "]\n", f->method);
				continue;
			}
			printf("\tat %s.%s(", m.klass, m.name);
			line = hotspot__line(hs, &m, f->bci);
			if (f->kind == HOTSPOT_FRAME_NATIVE)
				printf("Native Method)");
			else if (!m.file[0])
				printf("Unknown Source)");
			else if (line < 0)
				printf("%s)", m.file);
			else
				printf("%s:%d)", m.file, line);
			printf(f->kind == HOTSPOT_FRAME_COMPILED ? " *\n" : "\n");
		}
	}
	hotspot__threads_free(threads, nr);
	return 0;
}

/* The perf data counters named in names (argv), one "NAME VALUE" line each. */
static int print_counters(const struct hotspot *hs, int pid, char **names, int nr)
{
	uint64_t addr, v;
	int err = 0;

	for (int i = 0; i < nr && !err; i++) {
		err = hs_perfdata__counter(pid, hotspot__tables(hs), names[i], &addr);
		if (!err)
			err = procmem__u64(pid, addr, &v);
		if (!err)
			printf("%s %" PRIu64 "\n", names[i], v);
	}
	return err;
}

int main(int argc, char **argv)
{
	struct hotspot *hs;
	int err;

	log__init(getenv("SFBPF_DEBUG") ? 2 : 0);
	if (argc < 3 ||
	    (strcmp(argv[1], "--tables") && strcmp(argv[1], "--threads") &&
	     strcmp(argv[1], "--counters")) ||
	    (argc != 3 && strcmp(argv[1], "--counters"))) {
		fprintf(stderr, "usage: hotspot --tables|--threads PID | --counters PID NAME...\n");
		return 2;
	}
	err = hotspot__attach(atoi(argv[2]), &hs);
	if (err) {
		fprintf(stderr, "hotspot: pid %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	if (!strcmp(argv[1], "--tables"))
		print_tables(hs);
	else if (!strcmp(argv[1], "--counters"))
		err = print_counters(hs, atoi(argv[2]), argv + 3, argc - 3);
	else
		err = print_threads(hs);
	hotspot__free(hs);
	if (err)
		fprintf(stderr, "hotspot: pid %s: %s: %s\n", argv[2], argv[1] + 2, strerror(-err));
	return err ? 1 : 0;
}
