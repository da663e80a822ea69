// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Source lines and inline chains from DWARF (see srcline.h).
 *
 * libdw's dwarf_getscopes() would find the chain too, but it visits every
 * top-level DIE of the unit for each address (all the types of a C++ unit);
 * here the functions' ranges are indexed once, and a lookup descends only
 * through the DIEs whose ranges hold the address.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/srcline.h"
#include "symbols/srcline_elf.h"
#include "util/clock.h"
#include "util/fileview.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/search.h"
#include "util/strset.h"
#include "util/vec.h"

/* Nesting of lexical blocks and inlined calls followed before giving up. */
#define MAX_NESTING 64
/* Namespaces followed when indexing functions (clang nests definitions in them). */
#define MAX_NS_DEPTH 8
/* Functions overlapping the address looked at, backwards from the last start before it. */
#define MAX_OVERLAP 8
/*
 * Pages of the file are given back after this many units indexed (the index
 * pass reads all of .debug_info), or once lookups took this many page faults
 * (the kernel maps up to 64 KiB around the page of each: 2 MiB). Lookups of
 * neighbouring addresses fault rarely (their unit's pages are in), scattered
 * ones up to hundreds of KiB each (a unit's DIEs and line table, references
 * into other units).
 */
#define INDEX_DROP_EVERY 64
#define LOOKUP_DROP_FAULTS 32
/* DWARF in use is closed once open this long, and reopened by the next lookup. */
#define DWARF_REOPEN_NS (60 * 1000000000ULL)
struct range {
	uint64_t lo, hi;
	Dwarf_Off die; /* the function's (or the unit's) DIE, in .debug_info */
};

struct span {
	uint64_t off, len;
};

struct answer {
	uint64_t addr;
	uint32_t first, n; /* frames[first .. first + n) */
};

struct srcline {
	int fd;
	int spill_fd; /* fd's copy with its compressed sections inflated, or -1 */
	uint64_t spill_bytes;
	bool no_spill; /* the copy could not be made: inflate in memory */
	bool tenant; /* someone other than root may write the file (tenant_file()): a copy */
	bool refused; /* its compressed sections claim too much: no DWARF (srcline_stats) */
	uint64_t inflate_bytes; /* what its kept compressed sections claim, inflated */
	struct fileview view; /* the file, mapped while libdw reads it (else read into memory) */
	/*
	 * The headers libelf reads in place: ELF, program, section (written by
	 * hide_unused(); the other two kept as a precaution).
	 */
	struct span written[3];
	bool droppable; /* written is known: the rest of view may be given back */
	bool touched; /* libdw read the view since its pages were last dropped */
	unsigned long faults; /* page faults taken by lookups since then */
	Elf *elf;
	Dwarf *dw; /* NULL while released */
	uint64_t opened_ns; /* when dw was opened (CLOCK_MONOTONIC) */
	/*
	 * The file shrank while mapped, or was changed in place (its identity
	 * below): its DWARF is not the object's any more.
	 */
	bool changed;
	struct stat id; /* the file when opened: device, inode, size, mtime, ctime */
	bool inflated; /* libdw inflated compressed sections into memory: costly to reopen */
	uint64_t used_ns; /* the DWARF last read (CLOCK_MONOTONIC) */
	bool indexed;
	struct range *funcs, *cus;
	size_t nfuncs, funcs_cap, ncus, cus_cap;
	struct answer *answers;
	size_t nanswers, answers_cap;
	struct hashmap answer_ix; /* by address -> index in answers */
	struct srcline_frame *frames;
	size_t nframes, frames_cap;
	struct strset strs; /* its file and function names */
};

int srcline__elf_has_dwarf(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			return 1;
	}
	return 0;
}

static void dwarf_close(struct srcline *sl)
{
	if (fileview__torn(&sl->view))
		sl->changed = true;
	if (sl->dw)
		dwarf_end(sl->dw);
	elf_end(sl->elf);
	fileview__unmap(&sl->view);
	sl->dw = NULL;
	sl->elf = NULL;
}

/* [off, off + len) within the view (a hostile header may point anywhere). */
static struct span clamp(const struct srcline *sl, uint64_t off, uint64_t len)
{
	if (off > sl->view.len)
		off = sl->view.len;
	return (struct span){ off, len < sl->view.len - off ? len : sl->view.len - off };
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Where the view may have been written, in file order: libelf reads the
 * headers of a mapped image in place, so hide_unused()'s section headers are
 * private copies of those pages, and giving them back would undo it.
 */
static void note_headers(struct srcline *sl)
{
	size_t shnum;
	GElf_Ehdr eh;

	sl->droppable = sl->view.base && sl->elf && gelf_getehdr(sl->elf, &eh) &&
			!elf_getshdrnum(sl->elf, &shnum);
	if (!sl->droppable)
		return;
	sl->written[0] = clamp(sl, 0, eh.e_ehsize);
	sl->written[1] = clamp(sl, eh.e_phoff, (uint64_t)eh.e_phnum * eh.e_phentsize);
	/* libelf steps through them by its own size, whatever e_shentsize says. */
	sl->written[2] = clamp(sl, eh.e_shoff,
			       (uint64_t)shnum * (gelf_getclass(sl->elf) == ELFCLASS32 ?
							  sizeof(Elf32_Shdr) :
							  sizeof(Elf64_Shdr)));
	qsort(sl->written, 3, sizeof(sl->written[0]), cmp_span);
}

/*
 * Give back the pages of the file that libdw touched (and the kernel's
 * fault-around mapped with them): all but the headers' are never written
 * through the view, so they read the same at the next touch, from the page
 * cache. libdw's own state (units, abbreviations, line tables) stays.
 */
static void drop_pages(struct srcline *sl)
{
	const struct span *w = sl->written;
	uint64_t from = 0, lo, hi;
	unsigned int i;

	sl->touched = false;
	sl->faults = 0;
	if (!sl->view.base || !sl->droppable)
		return;
	for (i = 0; i <= 3; i++) {
		lo = i < 3 ? w[i].off : sl->view.len;
		hi = i < 3 ? w[i].off + w[i].len : sl->view.len;
		/* Rounded inward by fileview__drop(): a page holding a header is kept. */
		if (lo > from)
			fileview__drop(&sl->view, from, lo - from);
		if (hi > from)
			from = hi;
	}
}

/*
 * libdw finds the unit of a DIE by reading every unit header before it,
 * the first time: one page each (and the 64 KiB the kernel maps around it),
 * all of .debug_info for a lookup near its end. Read them all here instead,
 * giving the pages back as it goes; libdw keeps a few hundred bytes a unit,
 * as it would once the last unit was looked up.
 */
static void intern_units(struct srcline *sl)
{
	unsigned int n = 0;
	Dwarf_CU *cu = NULL;

	if (!sl->droppable)
		return;
	while (dwarf_get_units(sl->dw, cu, &cu, NULL, NULL, NULL, NULL) == 0) {
		if (++n % INDEX_DROP_EVERY == 0)
			drop_pages(sl);
	}
	drop_pages(sl);
}

/*
 * Was the file written since it was opened (cp over it, a build, a hostile
 * owner)? Its size, mtime or ctime tell (ctime moves with every write, and
 * nobody can set it back); the bytes are then not the object's, whatever
 * libdw would make of them. One change to ctime is not a write: the last
 * link gone (the file deleted, renamed over by a package upgrade) with size
 * and mtime as they were. Short-lived programs are deleted after they exit
 * and before their profile is written; their lines were lost to this (88 %
 * of them, in the churn soak). The new ctime is then the one judged. Any
 * other move of the link count is no excuse: an owner can write in place,
 * put the mtime back and make (or remove) a hard link, and no new process
 * can map a file with no name.
 */
static bool file_changed(struct srcline *sl)
{
	struct stat st;
	bool ctime_moved;

	if (sl->changed)
		return true;
	if (fstat(sl->fd, &st) || st.st_dev != sl->id.st_dev || st.st_ino != sl->id.st_ino ||
	    st.st_size != sl->id.st_size || st.st_mtim.tv_sec != sl->id.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != sl->id.st_mtim.tv_nsec) {
		sl->changed = true;
		return true;
	}
	ctime_moved = st.st_ctim.tv_sec != sl->id.st_ctim.tv_sec ||
		      st.st_ctim.tv_nsec != sl->id.st_ctim.tv_nsec;
	if (ctime_moved && (st.st_nlink || !sl->id.st_nlink))
		sl->changed = true;
	else if (ctime_moved)
		sl->id = st;
	return sl->changed;
}

/*
 * libdw over the file: 0, or -ENODATA. Mapped (fileview.h: a truncation
 * reads zeros, never SIGBUS), libdw's sections cost only the pages a lookup
 * touches, where read into memory they would cost the whole .debug_* (the
 * copy is the fallback). Compressed sections go to a spill() copy first.
 */
/*
 * Our own copy of the file, its compressed sections inflated (srcline_elf.h):
 * 0, or no copy (no_spill: read in memory instead), and refused when the
 * copy's claims, judged again, are a bomb (no DWARF, not inflated in memory).
 */
static int spill(struct srcline *sl, uint64_t inflate_bytes)
{
	int fd = srcline_elf_spill(sl->fd, inflate_bytes, &sl->spill_bytes);

	sl->refused = fd == -EFBIG;
	sl->no_spill = fd < 0;
	sl->spill_fd = fd < 0 ? -1 : fd;
	return fd < 0 ? fd : 0;
}

static int dwarf_open(struct srcline *sl)
{
	int fd;
	bool private_read;

	if (sl->dw)
		return 0;
	if (sl->refused || file_changed(sl))
		return -ENODATA;
	/*
	 * A file someone other than root may write is never parsed where its
	 * owner can change it under libelf and libdw (a rewrite is only seen
	 * after the parse, by file_changed()): it is copied first, its claims
	 * judged on the copy; with no room for a copy, read into memory.
	 */
	if (sl->tenant && sl->spill_fd < 0 && !sl->no_spill) {
		if (!spill(sl, 0))
			srcline_elf_count_tenant_copy();
		if (sl->refused)
			return -ENODATA;
	}
	fd = sl->spill_fd >= 0 ? sl->spill_fd : sl->fd;
	/*
	 * Compressed sections (or a tenant's file) and no copy of ours (no spill
	 * file, or no room): libdw inflates them from what it reads, which must
	 * then be our memory, not a mapping of a file its owner can rewrite while
	 * zlib and libelf parse it. Read privately, within the in-memory cap.
	 */
	private_read = sl->no_spill && sl->spill_fd < 0;
	if (!private_read && !fileview__map(fd, &sl->view))
		sl->elf = elf_memory(sl->view.base, sl->view.len);
	else
		sl->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (sl->elf && srcline_elf_prepare(fd, sl->elf, private_read, &sl->inflate_bytes))
		sl->refused = true;
	sl->inflated = sl->inflate_bytes > 0;
	/*
	 * What libdw will inflate into our memory: all of it where there is no
	 * copy, else what the copy left compressed (.zdebug_*). Not that much.
	 */
	if (!sl->refused && sl->inflated && (sl->spill_fd >= 0 || sl->no_spill) &&
	    srcline_elf_fits_memory(sl->inflate_bytes))
		sl->refused = true;
	if (sl->refused) {
		dwarf_close(sl);
		return -ENODATA;
	}
	note_headers(sl);
	if (sl->inflated && sl->spill_fd < 0 && !sl->no_spill) {
		dwarf_close(sl);
		spill(sl, sl->inflate_bytes);
		return dwarf_open(sl);
	}
	sl->dw = sl->elf ? dwarf_begin_elf(sl->elf, DWARF_C_READ, NULL) : NULL;
	if (!sl->dw) {
		dwarf_close(sl);
		return -ENODATA;
	}
	sl->opened_ns = clock__mono_ns();
	intern_units(sl);
	return 0;
}

/*
 * Did the file shrink or change while libdw read it? Then nothing read may be
 * kept: what libdw parsed may be the new bytes, or half of each.
 */
static bool dwarf_torn(struct srcline *sl)
{
	if (!fileview__torn(&sl->view) && !file_changed(sl))
		return false;
	sl->changed = true;
	dwarf_close(sl);
	return true;
}

/* statfs f_type of the filesystems container images live on (linux/magic.h, fs/fuse). */
#define OVERLAY_MAGIC 0x794c7630
#define FUSE_MAGIC 0x65735546

/*
 * Whether someone other than the host's root may rewrite the file while it
 * is parsed: its owner is not root, its group or others may write it, or it
 * lies in a container's layers (overlayfs; fuse-overlayfs for rootless
 * ones), where the container's root, root on the host too in a rootful
 * one, may rewrite a root-owned file of its writable layer in place. Its
 * lower layers are read-only, but an open file does not say which layer it
 * is in: every file there is taken as the tenant's. Files on any other
 * filesystem that a container reaches (volumes, images on btrfs, zfs or
 * device-mapper) are told by who maps them, not by the file: the caller's
 * tenant flag (srcline__new(), srcline__set_tenant()).
 */
static bool tenant_file(int fd, const struct stat *st)
{
	struct statfs fs;

	if (st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	return !fstatfs(fd, &fs) && ((unsigned long)fs.f_type == OVERLAY_MAGIC ||
				     (unsigned long)fs.f_type == FUSE_MAGIC);
}

struct srcline *srcline__new(int fd, const struct stat *id, bool tenant)
{
	struct srcline *sl = calloc(1, sizeof(*sl));

	if (!sl) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	sl->fd = fd;
	sl->spill_fd = -1;
	if (id)
		sl->id = *id;
	if (!id && fstat(fd, &sl->id)) {
		srcline__free(sl);
		errno = ENODATA;
		return NULL;
	}
	sl->tenant = tenant || tenant_file(fd, &sl->id);
	if (dwarf_open(sl)) {
		srcline__free(sl);
		errno = ENODATA;
		return NULL;
	}
	return sl;
}

void srcline__set_tenant(struct srcline *sl)
{
	if (!sl || sl->tenant)
		return;
	sl->tenant = true;
	/* Open in place (no copy of ours, nor read into memory): closed; the next lookup copies. */
	if (sl->spill_fd < 0 && !sl->no_spill)
		dwarf_close(sl);
}

void srcline__release(struct srcline *sl, uint64_t unused_since_ns)
{
	if (!sl || !sl->dw)
		return;
	/*
	 * In use for long, libdw's state for every unit looked up (abbreviations,
	 * line tables) goes too, now and then, where reopening inflates nothing:
	 * a reopen costs a scan of the unit headers (intern_units()), not their
	 * memory for the whole run.
	 */
	if (sl->used_ns < unused_since_ns ||
	    (sl->view.base && !sl->inflated && clock__mono_ns() - sl->opened_ns >= DWARF_REOPEN_NS))
		dwarf_close(sl);
	else if (sl->touched)
		drop_pages(sl);
}

void srcline__free(struct srcline *sl)
{
	if (!sl)
		return;
	dwarf_close(sl);
	close(sl->fd);
	if (sl->spill_fd >= 0) {
		close(sl->spill_fd);
		srcline_elf_unspill(sl->spill_bytes);
	}
	free(sl->funcs);
	free(sl->cus);
	free(sl->answers);
	free(sl->frames);
	hashmap__free(&sl->answer_ix);
	strset__free(&sl->strs);
	free(sl);
}

size_t srcline__cached(const struct srcline *sl)
{
	return sl ? sl->nanswers : 0;
}

size_t srcline__functions(const struct srcline *sl)
{
	return sl ? sl->nfuncs : 0;
}

uint64_t srcline__bytes(const struct srcline *sl)
{
	if (!sl)
		return 0;
	return sizeof(*sl) + sl->funcs_cap * sizeof(*sl->funcs) + sl->cus_cap * sizeof(*sl->cus) +
	       srcline__answer_bytes(sl) + arena__bytes(&sl->strs.arena) +
	       hashmap__bytes(&sl->strs.map);
}

uint64_t srcline__answer_bytes(const struct srcline *sl)
{
	if (!sl)
		return 0;
	return sl->answers_cap * sizeof(*sl->answers) + sl->frames_cap * sizeof(*sl->frames) +
	       hashmap__bytes(&sl->answer_ix);
}

void srcline__forget_answers(struct srcline *sl)
{
	free(sl->answers);
	free(sl->frames);
	hashmap__free(&sl->answer_ix);
	sl->answers = NULL;
	sl->frames = NULL;
	sl->nanswers = sl->answers_cap = sl->nframes = sl->frames_cap = 0;
}

uint64_t srcline__spilled(const struct srcline *sl)
{
	return sl ? sl->spill_bytes : 0;
}

/* ---- strings -------------------------------------------------------------------- */

/*
 * A source path as addr2line prints it: relative names (DWARF 5 file entries
 * in the compilation directory) joined to the unit's DW_AT_comp_dir.
 */
static const char *src_path(struct srcline *sl, Dwarf_Die *cudie, const char *name)
{
	Dwarf_Attribute a;
	const char *dir;
	char *joined;

	if (!name || name[0] == '/' || !dwarf_attr(cudie, DW_AT_comp_dir, &a) ||
	    !(dir = dwarf_formstring(&a)) || asprintf(&joined, "%s/%s", dir, name) < 0)
		return strset__intern(&sl->strs, name);
	name = strset__intern(&sl->strs, joined);
	free(joined);
	return name;
}

/* The function's name as perf shows it: demangled linkage name, else DW_AT_name. */
static const char *die_function(struct srcline *sl, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *link = NULL, *name;
	char *d;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		link = dwarf_formstring(&a);
	if (link && (d = demangle(link))) {
		name = strset__intern(&sl->strs, d);
		free(d);
		return name;
	}
	/* A C++ linkage name that does not demangle still names the function exactly. */
	name = dwarf_diename(die);
	return strset__intern(&sl->strs, name ? name : link);
}

/* ---- index ---------------------------------------------------------------------- */

static int add_ranges(struct range **arr, size_t *n, size_t *cap, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (vec__reserve(arr, cap, *n + 1, sizeof(**arr), 256))
			return -ENOMEM;
		(*arr)[(*n)++] = (struct range){ lo, hi, dwarf_dieoffset(die) };
	}
	return 0;
}

/* The functions with code among die's children, and in namespaces below it. */
static int index_children(struct srcline *sl, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;
	int err = 0;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			err = add_ranges(&sl->funcs, &sl->nfuncs, &sl->funcs_cap, &child);
			break;
		case DW_TAG_namespace:
			if (depth < MAX_NS_DEPTH)
				err = index_children(sl, &child, depth + 1);
			break;
		default:
			break;
		}
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int build_index(struct srcline *sl)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	unsigned int units = 0;
	uint8_t type;
	int err = 0;

	sl->indexed = true;
	while (!err && dwarf_get_units(sl->dw, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		/* Type and partial units (dwz) hold no code of their own. */
		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;
		err = add_ranges(&sl->cus, &sl->ncus, &sl->cus_cap, &cudie);
		if (!err)
			err = index_children(sl, &cudie, 0);
		if (++units % INDEX_DROP_EVERY == 0)
			drop_pages(sl);
	}
	if (sl->nfuncs)
		qsort(sl->funcs, sl->nfuncs, sizeof(*sl->funcs), cmp_range);
	if (sl->ncus)
		qsort(sl->cus, sl->ncus, sizeof(*sl->cus), cmp_range);
	return err;
}

/* The range holding addr: the last starting at or before it that covers it, or NULL. */
static const struct range *find_range(const struct range *r, size_t n, uint64_t addr)
{
	size_t lo = SEARCH_UPTO(r, n, lo, addr), i;

	/* Ranges rarely overlap (nested functions); look back a little for one that holds addr. */
	for (i = lo; i > 0 && lo - i < MAX_OVERLAP; i--) {
		if (addr < r[i - 1].hi)
			return &r[i - 1];
	}
	return NULL;
}

/* ---- lookup --------------------------------------------------------------------- */

struct chain {
	Dwarf_Die die[SRCLINE_MAX_DEPTH]; /* inlined calls, outermost first */
	int n;
};

static void chain_push(struct chain *c, Dwarf_Die *die)
{
	if (c->n == SRCLINE_MAX_DEPTH) {
		memmove(c->die, c->die + 1, sizeof(c->die[0]) * (SRCLINE_MAX_DEPTH - 1));
		c->n--;
	}
	c->die[c->n++] = *die;
}

static bool has_code_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* Follow the DIEs below die whose code holds addr, recording inlined calls. */
static bool descend(Dwarf_Die *die, uint64_t addr, struct chain *c, int depth)
{
	Dwarf_Die child;

	if (depth >= MAX_NESTING || dwarf_child(die, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (dwarf_haspc(&child, addr) > 0) {
			if (tag == DW_TAG_inlined_subroutine)
				chain_push(c, &child);
			descend(&child, addr, c, depth + 1);
			return true;
		}
		/* A block without code of its own may still hold calls that have. */
		if (tag != DW_TAG_inlined_subroutine && !has_code_attrs(&child) &&
		    descend(&child, addr, c, depth + 1))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static uint32_t die_udata(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &w) || w > UINT32_MAX)
		return 0;
	return (uint32_t)w;
}

/* The call site of an inlined call: its file (index in the unit's file table) and line. */
static void call_site(struct srcline *sl, Dwarf_Die *cudie, Dwarf_Die *call,
		      struct srcline_frame *f)
{
	Dwarf_Files *files;
	size_t nfiles;
	uint32_t idx = die_udata(call, DW_AT_call_file);

	f->line = die_udata(call, DW_AT_call_line);
	if (dwarf_hasattr(call, DW_AT_call_file) &&
	    dwarf_getsrcfiles(cudie, &files, &nfiles) == 0 && idx < nfiles)
		f->file = src_path(sl, cudie, dwarf_filesrc(files, idx, NULL, NULL));
}

static void decl(struct srcline *sl, Dwarf_Die *cudie, Dwarf_Die *die, struct srcline_frame *f)
{
	int line = 0;

	f->function = die_function(sl, die);
	f->decl_file = src_path(sl, cudie, dwarf_decl_file(die));
	if (dwarf_decl_line(die, &line) == 0 && line > 0)
		f->decl_line = (uint32_t)line;
}

/* The line table's row for addr, in the unit cudie. */
static void table_line(struct srcline *sl, Dwarf_Die *cudie, uint64_t addr, struct srcline_frame *f)
{
	Dwarf_Line *l = dwarf_getsrc_die(cudie, addr);
	int line = 0;

	if (!l)
		return;
	f->file = src_path(sl, cudie, dwarf_linesrc(l, NULL, NULL));
	if (dwarf_lineno(l, &line) == 0 && line > 0)
		f->line = (uint32_t)line;
}

/* Resolve addr into out[] (innermost first): how many frames. */
static int resolve(struct srcline *sl, uint64_t addr, struct srcline_frame *out)
{
	const struct range *r = find_range(sl->funcs, sl->nfuncs, addr);
	Dwarf_Die fn, cudie;
	struct chain c = { .n = 0 };
	int i, n = 0;

	if (!r || !dwarf_offdie(sl->dw, r->die, &fn) || !dwarf_diecu(&fn, &cudie, NULL, NULL)) {
		/* No function: assembly, or code the DWARF only has lines for. */
		r = find_range(sl->cus, sl->ncus, addr);
		if (!r || !dwarf_offdie(sl->dw, r->die, &cudie))
			return 0;
		memset(out, 0, sizeof(*out));
		table_line(sl, &cudie, addr, out);
		return out->line ? 1 : 0;
	}
	descend(&fn, addr, &c, 0);
	memset(out, 0, sizeof(*out) * (c.n + 1));
	table_line(sl, &cudie, addr, &out[n]);
	for (i = c.n - 1; i >= 0; i--) {
		decl(sl, &cudie, &c.die[i], &out[n]);
		call_site(sl, &cudie, &c.die[i], &out[++n]);
	}
	decl(sl, &cudie, &fn, &out[n]);
	return n + 1;
}

static bool answer_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct srcline *sl = ctx;

	return sl->answers[val].addr == *(const uint64_t *)key;
}

/* Page faults this thread took so far (the file's pages mapped in, among others). */
static unsigned long thread_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : (unsigned long)(ru.ru_minflt + ru.ru_majflt);
}

int srcline__find(struct srcline *sl, uint64_t addr, const struct srcline_frame **frames)
{
	unsigned long faults;
	uint32_t h = (uint32_t)hash__mix64(addr);
	struct answer *a;
	int64_t ix;
	int n;

	*frames = NULL;
	ix = hashmap__find(&sl->answer_ix, h, answer_eq, sl, &addr);
	if (ix < 0) {
		/* Open or not, libdw would read the file's bytes now. */
		if (dwarf_torn(sl) || dwarf_open(sl))
			return -ENODATA;
		sl->used_ns = clock__mono_ns();
		if (!sl->indexed) {
			if (build_index(sl))
				return -ENOMEM;
			/*
			 * The index visited every unit: libdw keeps each one's
			 * abbreviations and more (MiBs for a big library) that
			 * lookups, a few units each, do not need. Start afresh.
			 */
			dwarf_close(sl);
			if (dwarf_open(sl))
				return -ENODATA;
		}
		/* Small at first: hundreds of objects are kept, most asked a few addresses. */
		if (VEC_RESERVE(sl->frames, sl->frames_cap, sl->nframes + SRCLINE_MAX_DEPTH + 1,
				2 * SRCLINE_MAX_DEPTH) ||
		    VEC_RESERVE(sl->answers, sl->answers_cap, sl->nanswers + 1, 16))
			return -ENOMEM;
		faults = thread_faults();
		sl->touched = true; /* the index pass and a reopen gave theirs back */
		n = resolve(sl, addr, sl->frames + sl->nframes);
		if (dwarf_torn(sl))
			return -ENODATA;
		sl->faults += thread_faults() - faults;
		if (sl->faults >= LOOKUP_DROP_FAULTS)
			drop_pages(sl);
		sl->answers[sl->nanswers] = (struct answer){ addr, (uint32_t)sl->nframes, n };
		if (hashmap__add(&sl->answer_ix, h, sl->nanswers))
			return -ENOMEM;
		ix = sl->nanswers++;
		sl->nframes += n;
	}
	a = &sl->answers[ix];
	*frames = a->n ? sl->frames + a->first : NULL;
	return a->n;
}
