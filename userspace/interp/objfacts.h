/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a runtime's object file tells of it, read once per file: its
 * segments, the symbols the runtime publishes, its eval loop's code parts
 * (codeparts.h) and one fact of the runtime's own (PHP's build ID). A host
 * runs many processes of a few interpreters (a PHP-FPM pool: hundreds of one
 * binary; a CPython starting up, attached again until its first thread
 * exists), and each read is the symbol tables and a decode of the eval
 * loop: 8-30 ms. Kept by the file's identity (what fstat says of the file
 * opened: device, inode, size, mtime and ctime, so that a file written in
 * place is another entry), where it holds: the boot, or an image's file's
 * mount (util/fileident.h). Addresses are the file's (not yet biased).
 * Thread-safe.
 */
#ifndef SFBPF_INTERP_OBJFACTS_H
#define SFBPF_INTERP_OBJFACTS_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "interp/codeparts.h"
#include "tables/elfobj.h"

#define OBJFACTS_SYMS 8
#define OBJFACTS_PARTS 8
#define OBJFACTS_NOTE 48

struct objfacts;

/* What one runtime asks of its objects; its counters. One static instance per runtime. */
struct objfacts_kind {
	const char *const *names; /* the symbols, at most OBJFACTS_SYMS */
	size_t nr;
	/* The eval loop's parts are decoded where names[key] and names[eval] are defined. */
	int key, eval;
	/*
	 * The runtime's own fact of the object: a string of its read-only data
	 * that begins with note_prefix and that note_is accepts (s, the bytes
	 * left in its section), the first one (PHP's build ID, Perl's API
	 * version). NULL: none.
	 */
	const char *note_prefix;
	bool (*note_is)(const char *s, size_t left);
	/*
	 * What the runtime reads of its own code, where names[key] is defined
	 * (its facts so far in f): words of its own into f->code. NULL: none.
	 */
	void (*code)(Elf *elf, int fd, struct objfacts *f);
	uint64_t reads, hits; /* under the cache's lock */
};

struct objfacts {
	struct stat id;
	uint64_t scope; /* fileident__scope(): where the identity holds */
	uint64_t used; /* LRU: the cache's clock when last found */
	const struct objfacts_kind *kind;
	int err; /* elfobj__read's, or 0 */
	struct elfobj_info info;
	uint64_t vals[OBJFACTS_SYMS], sizes[OBJFACTS_SYMS]; /* 0 where undefined */
	struct code_part eval[OBJFACTS_PARTS];
	size_t nr_eval;
	char note[OBJFACTS_NOTE];
	uint64_t code[2]; /* the kind's code() words */
};

/* The facts kind asks of the file open at fd: from the cache, else read (and kept). 0 or errno. */
int objfacts__get(struct objfacts_kind *kind, int fd, struct objfacts *out);

/* kind's files read, and found in the cache. */
void objfacts__stats(const struct objfacts_kind *kind, uint64_t *reads, uint64_t *hits);

#endif /* SFBPF_INTERP_OBJFACTS_H */
