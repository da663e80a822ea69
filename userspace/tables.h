/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Map loader: owns the BPF table maps (rows, rules, objects, pages) and the
 * objects loaded into them. An object (executable or shared library) is
 * loaded once however many processes map it, keyed by its identity (build-id,
 * else device+inode+size+mtime), and reference-counted by the processes that
 * use it. Its table comes from its .sframe, else (none, or malformed) is
 * synthesized from its DWARF CFI (cfi.h). Objects without a usable table are
 * remembered too, so a file is parsed once. See docs/DESIGN.md, DESIGN-cfi.md.
 */
#ifndef SFBPF_TABLES_H
#define SFBPF_TABLES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "elfobj.h"

struct tables_opts {
	int rows_fd, rules_fd, objects_fd, pages_fd;
	uint32_t max_rows, max_rules, max_objects, max_pages;
	bool no_cfi; /* SFrame only: no tables synthesized from .eh_frame/.debug_frame */
	int verbose;
};

/* Identity of a file: build-id when it has one, else stat facts. */
struct obj_key {
	uint8_t len;
	uint8_t bytes[32];
};

void obj_key__from(struct obj_key *key, const struct elfobj_info *info, const struct stat *st);

struct tables_stats {
	uint32_t objects; /* with a table in the maps */
	uint32_t objects_without_table; /* no .sframe nor CFI, malformed, or over budget */
	uint32_t objects_rejected; /* malformed .sframe */
	uint32_t objects_over_budget;
	uint64_t rows_used, rows_capacity;
	uint64_t rules_used, rules_capacity;
	uint64_t pages_used, pages_capacity;
	uint64_t sframe_bytes; /* .sframe bytes the loaded tables came from */
	/* Where loaded tables came from (.eh_frame synthesis: see docs/DESIGN-cfi.md). */
	uint32_t objects_sframe, objects_eh_frame; /* eh_frame: synthesized from DWARF CFI */
	uint64_t rows_sframe, rows_eh_frame;
	uint64_t load_ns; /* time spent decoding, flattening and pushing */
};

struct tables;

struct tables *tables__new(const struct tables_opts *opts);
void tables__free(struct tables *t);

/*
 * Table of the object open at fd (whose identity is key; name is for messages).
 * Returns its object index (>= 0) with a reference taken, SFBPF_OBJ_NONE-style
 * -ENOENT when it has no usable table (also cached), or a negative errno.
 */
int64_t tables__acquire(struct tables *t, int fd, const struct obj_key *key, const char *name);
void tables__release(struct tables *t, uint32_t obj);
void tables__stats(const struct tables *t, struct tables_stats *out);

#endif /* SFBPF_TABLES_H */
