// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Function symbol table (see symtab.h): one array of fixed-size entries plus
 * one string pool, so a table of 500k symbols is two allocations. Building
 * it, the choice between names, lookups and JIT maps; reading an ELF
 * object's symbols into it is symtab_elf.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/demangle.h"
#include "symbols/symtab.h"
#include "symbols/symtab_int.h"
#include "util/hash.h"
#include "util/arena.h"
#include "util/hashmap.h"
#include "util/search.h"
#include "util/vec.h"

#define NESTED_LOOKBACK 8 /* symbols searched back for one enclosing addr */
#define NAME_MANGLED 0x80000000u /* in a finished symbol's name: demangled on first lookup */
#define NAME_IN_FILE 0x40000000u /* in a finished symbol's name: an offset in the file's strtab */
/* NAME_OFFSET (symtab_int.h): the rest of a finished symbol's name */
#define NAMES_MAX NAME_OFFSET /* string pool bytes: offsets leave room for the flags */
/*
 * Tables whose kept names reach this many bytes leave them in the file (a
 * node binary's are 7 MiB): each is read when its symbol is first hit.
 * Descriptors kept open for that, at most: beyond, names are copied.
 */
#define FILE_NAMES_MIN (512u << 10)
#define FILE_NAMES_FDS 64
#define FILE_NAME_MAX (64u << 10) /* longest name read from a file (C++ can be long) */

/* A symbol while the table is built: everything the choice between names needs. */
struct sym {
	uint64_t addr;
	uint64_t end; /* addr + size while building; exclusive end once sorted */
	/* In the ELF's string table (open until finished), or copied into made. */
	const char *name;
	uint32_t len; /* strlen(name), read once: name is not ours */
	uint32_t file_name; /* offset in the file's string table, or NO_FILE_NAME */
	uint32_t seq; /* insertion order, the last tie-break */
	uint8_t rank; /* binding as perf prefers it: 2 global, 1 local, 0 weak */
	bool mangled; /* demangled on first lookup */
	bool compat; /* a non-default symbol version: "cfree@GLIBC_2.2.5" */
};

/*
 * A symbol of the finished table: half the size, as a big C++ binary keeps
 * 150k of them for the whole run. Sizes are clamped to 4 GiB.
 */
struct fsym {
	uint64_t addr;
	uint32_t size;
	uint32_t name; /* offset in strs, or in the file with NAME_IN_FILE; | NAME_MANGLED */
};

/* A name as shown, made on first lookup (demangled, or read from the file), by symbol index. */
struct dname {
	uint32_t idx;
	char name[];
};

struct symtab {
	struct sym *syms; /* while building; freed by symtab__finish() */
	size_t count, cap;
	struct arena made; /* while building: the names not read from an ELF file */
	/* Once finished, the kept names (not left in the file), exactly sized. */
	char *strs;
	size_t strs_len;
	struct fsym *fsyms; /* once finished: sorted, one per address */
	size_t nfsyms;
	bool finished;
	/*
	 * Names as shown (struct dname *) by symbol index: most symbols of a
	 * large C++ library are never hit, and demangling all of them costs
	 * ~3 us each when the object is loaded; a big table's names stay in
	 * its file until hit.
	 */
	struct hashmap shown;
	/*
	 * The string table ELF names came from: its file (not ours while
	 * building: names_fd_owned once the names stay there) and place.
	 */
	int names_fd;
	bool names_fd_owned;
	uint64_t names_off, names_len;
	struct stat names_st; /* the file then: a file changed since answers no names */
	size_t file_names_min;
};

static int file_names_fds; /* names_fd owned by all tables */

static void release_names_fd(struct symtab *t)
{
	if (t->names_fd_owned) {
		close(t->names_fd);
		__atomic_fetch_sub(&file_names_fds, 1, __ATOMIC_RELAXED);
	}
	t->names_fd_owned = false;
	t->names_fd = -1;
}

struct symtab *symtab__new(void)
{
	struct symtab *t = calloc(1, sizeof(struct symtab));

	if (t) {
		t->names_fd = -1;
		t->file_names_min = FILE_NAMES_MIN;
	}
	return t;
}

void symtab__set_file_names_min(struct symtab *t, size_t bytes)
{
	t->file_names_min = bytes;
}

void symtab__free(struct symtab *t)
{
	size_t it = 0;
	uint64_t v;

	if (!t)
		return;
	while (hashmap__next(&t->shown, &it, &v))
		free(HASHMAP_TO_PTR(v));
	hashmap__free(&t->shown);
	release_names_fd(t);
	free(t->syms);
	arena__free(&t->made);
	free(t->fsyms);
	free(t->strs);
	free(t);
}

/*
 * name is kept as it is (an ELF string table's, valid until symtab__finish())
 * or, with copy, copied: a big program's names are not copied while its table
 * is built.
 */
int symtab__add_sym(struct symtab *t, uint64_t addr, uint64_t size, const char *name, bool copy,
		    uint32_t file_name, enum symtab_bind bind, bool mangled, bool compat)
{
	size_t len = strlen(name);
	struct sym *sym;
	char *kept;

	if (t->finished)
		return -EINVAL;
	if (len >= NAMES_MAX)
		return -E2BIG;
	if (VEC_RESERVE(t->syms, t->cap, t->count + 1, 256))
		return -ENOMEM;
	if (copy) {
		kept = arena__alloc(&t->made, len + 1);
		if (!kept)
			return -ENOMEM;
		memcpy(kept, name, len + 1);
		name = kept;
	}
	sym = &t->syms[t->count];
	sym->addr = addr;
	sym->end = addr + size < addr ? UINT64_MAX : addr + size;
	sym->name = name;
	sym->len = (uint32_t)len;
	sym->file_name = file_name;
	sym->seq = t->count;
	sym->rank = bind;
	sym->mangled = mangled;
	sym->compat = compat;
	t->count++;
	return 0;
}

int symtab__add(struct symtab *t, uint64_t addr, uint64_t size, const char *name,
		enum symtab_bind bind)
{
	return symtab__add_sym(t, addr, size, name, true, NO_FILE_NAME, bind, false, false);
}

struct sym_order {
	bool latest_wins;
};

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * By address; at one address the best name first: never a compat symbol
 * version while another name is there (a non-default "name@VER" only serves
 * binaries linked against an old glibc: "cfree@GLIBC_2.2.5" is free()), then
 * perf's choose_best_symbol() order.
 */
static int cmp_sym(const void *a, const void *b, void *ctx)
{
	const struct sym *x = a, *y = b;
	const struct sym_order *o = ctx;
	const char *xn = x->name, *yn = y->name;
	bool xs = x->end > x->addr, ys = y->end > y->addr;
	size_t xl, yl;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (o->latest_wins && x->seq != y->seq) /* a JIT re-emitted code here */
		return x->seq > y->seq ? -1 : 1;
	if (x->compat != y->compat)
		return x->compat ? 1 : -1;
	if (xs != ys)
		return xs ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (underscores(xn) != underscores(yn))
		return underscores(xn) < underscores(yn) ? -1 : 1;
	xl = x->len;
	yl = y->len;
	if (xl != yl)
		return xl > yl ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Do the kept names (file_bytes of them from the file) stay in the file? Then
 * the table owns a descriptor of it, within FILE_NAMES_FDS for all tables.
 */
static bool keep_names_in_file(struct symtab *t, size_t file_bytes)
{
	int fd;

	if (t->names_fd < 0 || !file_bytes || file_bytes < t->file_names_min)
		return false;
	if (__atomic_fetch_add(&file_names_fds, 1, __ATOMIC_RELAXED) >= FILE_NAMES_FDS) {
		__atomic_fetch_sub(&file_names_fds, 1, __ATOMIC_RELAXED);
		return false;
	}
	fd = fcntl(t->names_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0 || fstat(fd, &t->names_st)) {
		if (fd >= 0)
			close(fd);
		__atomic_fetch_sub(&file_names_fds, 1, __ATOMIC_RELAXED);
		return false;
	}
	t->names_fd = fd;
	t->names_fd_owned = true;
	return true;
}

/*
 * The finished table: one struct fsym per kept symbol, and a string pool of
 * their names alone (a .symtab names many aliases), or of the names made
 * here only when the others stay in the file. The build arrays go.
 */
static int compact(struct symtab *t, size_t n)
{
	size_t i, len = 0, file_bytes = 0;
	struct fsym *fs;
	bool in_file;
	char *strs;

	for (i = 0; i < n; i++) {
		/* A name too long to read back (FILE_NAME_MAX) is copied. */
		if (t->syms[i].file_name != NO_FILE_NAME && t->syms[i].len < FILE_NAME_MAX)
			file_bytes += t->syms[i].len + 1;
		len += t->syms[i].len + 1;
	}
	in_file = keep_names_in_file(t, file_bytes);
	if (in_file)
		len -= file_bytes;
	fs = len <= NAMES_MAX ? malloc((n ? n : 1) * sizeof(*fs)) : NULL;
	strs = fs ? malloc(len ? len : 1) : NULL;
	if (!strs) {
		free(fs);
		release_names_fd(t);
		return len > NAMES_MAX ? -E2BIG : -ENOMEM;
	}
	for (i = 0, len = 0; i < n; i++) {
		const struct sym *sym = &t->syms[i];
		uint64_t size = sym->end - sym->addr;
		uint32_t name = (uint32_t)len | (sym->mangled ? NAME_MANGLED : 0);

		if (in_file && sym->file_name != NO_FILE_NAME && sym->len < FILE_NAME_MAX) {
			name = sym->file_name | NAME_IN_FILE | (sym->mangled ? NAME_MANGLED : 0);
		} else {
			memcpy(strs + len, sym->name, sym->len);
			strs[len + sym->len] = '\0';
			len += sym->len + 1;
		}
		fs[i] = (struct fsym){ sym->addr, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
				       name };
	}
	if (!in_file)
		t->names_fd = -1; /* the caller's, and not needed */
	free(t->syms);
	arena__free(&t->made);
	t->syms = NULL;
	t->count = t->cap = 0;
	t->strs = strs;
	t->strs_len = len;
	t->fsyms = fs;
	t->nfsyms = n;
	return 0;
}

/* Sort, keep the best symbol per address, extend size-0 symbols to the next. */
void symtab__finish(struct symtab *t, bool latest_wins)
{
	struct sym_order o = { latest_wins };
	size_t i, n = 0;

	if (t->finished)
		return;
	t->finished = true;
	if (t->count)
		qsort_r(t->syms, t->count, sizeof(*t->syms), cmp_sym, &o);
	for (i = 0; i < t->count; i++) {
		if (n && t->syms[n - 1].addr == t->syms[i].addr)
			continue;
		t->syms[n++] = t->syms[i];
	}
	for (i = 0; i < n; i++) {
		struct sym *sym = &t->syms[i];

		if (sym->end != sym->addr)
			continue;
		sym->end = i + 1 < n ? sym[1].addr : ((sym->addr + 4095) & ~4095ULL) + 4096;
	}
	if (compact(t, n)) {
		/* No memory for the compact copy: an empty table rather than none. */
		free(t->syms);
		arena__free(&t->made);
		t->syms = NULL;
		t->count = t->cap = 0;
	}
}

static bool dname_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return ((const struct dname *)HASHMAP_TO_PTR(val))->idx == *(const uint32_t *)key;
}

/*
 * The name at off in the file's string table, read (malloc'd), or NULL when
 * the file changed since the table was built (its size or mtime) or the name
 * cannot be read whole.
 */
static char *read_name(const struct symtab *t, uint32_t off)
{
	size_t len = 0, size = 0, room;
	char *buf = NULL;
	struct stat st;
	ssize_t got;

	/* Rewritten in place (a library reinstalled over itself): not the names we chose. */
	if (fstat(t->names_fd, &st) || st.st_size != t->names_st.st_size ||
	    st.st_mtim.tv_sec != t->names_st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != t->names_st.st_mtim.tv_nsec)
		return NULL;

	while (off < t->names_len && len < FILE_NAME_MAX) {
		/* Room for 256 bytes more at least, and the NUL. */
		if (VEC_RESERVE(buf, size, len + 257, 257))
			break;
		room = size - 1 - len;
		if (room > t->names_len - off - len)
			room = t->names_len - off - len;
		got = pread(t->names_fd, buf + len, room, (off_t)(t->names_off + off + len));
		if (got <= 0)
			break;
		buf[len + got] = '\0';
		if (strlen(buf + len) < (size_t)got)
			return buf;
		len += got;
	}
	free(buf);
	return NULL;
}

/* The name to show for fsyms[i]: demangled or read from the file once, on first use. */
static const char *sym_name(struct symtab *t, size_t i)
{
	struct fsym *sym = &t->fsyms[i];
	bool in_file = sym->name & NAME_IN_FILE;
	uint32_t idx = (uint32_t)i, h = (uint32_t)hash__mix64(i), off = sym->name & NAME_OFFSET;
	char *raw, *d = NULL;
	struct dname *dn;
	const char *show;
	int64_t found;
	size_t len;

	if (!(sym->name & (NAME_MANGLED | NAME_IN_FILE)))
		return t->strs + off;
	found = hashmap__find(&t->shown, h, dname_eq, NULL, &idx);
	if (found >= 0) {
		dn = HASHMAP_TO_PTR(found);
		return dn->name[0] ? dn->name : NULL;
	}
	raw = in_file ? read_name(t, off) : t->strs + off;
	if (!raw) {
		/* Remembered as "" (no name): not read again at every lookup. */
		dn = malloc(sizeof(*dn) + 1);
		if (dn) {
			dn->idx = idx;
			dn->name[0] = '\0';
			if (hashmap__add(&t->shown, h, HASHMAP_PTR(dn)))
				free(dn);
		}
		return NULL;
	}
	if (sym->name & NAME_MANGLED)
		d = demangle(raw);
	if (!d && !in_file) {
		/* Not mangled after all: shown raw from now on. */
		sym->name &= ~NAME_MANGLED;
		return raw;
	}
	show = d ? d : raw;
	len = strlen(show);
	dn = malloc(sizeof(*dn) + len + 1);
	if (dn) {
		dn->idx = idx;
		memcpy(dn->name, show, len + 1);
	}
	free(d);
	if (in_file)
		free(raw);
	if (!dn || hashmap__add(&t->shown, h, HASHMAP_PTR(dn))) {
		/* No memory: the pooled name raw, else none. */
		free(dn);
		return in_file ? NULL : t->strs + off;
	}
	return dn->name;
}

const char *symtab__find(struct symtab *t, uint64_t addr, uint64_t *offset)
{
	const struct fsym *sym;
	size_t lo, i;

	if (!t)
		return NULL;
	lo = SEARCH_UPTO(t->fsyms, t->nfsyms, addr, addr);
	/* The nearest preceding symbol, or one enclosing it (nested symbols). */
	for (i = lo; i > 0 && lo - i < NESTED_LOOKBACK; i--) {
		sym = &t->fsyms[i - 1];
		if (addr - sym->addr < sym->size) {
			*offset = addr - sym->addr;
			return sym_name(t, i - 1);
		}
	}
	return NULL;
}

size_t symtab__count(const struct symtab *t)
{
	return !t ? 0 : t->finished ? t->nfsyms : t->count;
}

/* A symbol named from that table: the table's one file of names is the first one used. */
bool symtab__claim_names(struct symtab *t, int fd, uint64_t off, uint64_t len)
{
	if (t->names_fd < 0) {
		t->names_fd = fd;
		t->names_off = off;
		t->names_len = len;
	}
	return t->names_fd == fd && t->names_off == off && t->names_len == len;
}

/* ---- perf maps ---------------------------------------------------------------- */

int symtab__add_perf_map(struct symtab *t, FILE *f)
{
	char line[SYMTAB_PERF_MAP_MAX_LINE], *end, *name;
	uint64_t start, size, total = 0;
	bool partial = false;
	int err = 0;

	/* The file is the process's to write: bound what it can make us read. */
	while (!err && total < SYMTAB_PERF_MAP_MAX_BYTES && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		bool skip = partial;

		total += len;
		/* An overlong line is skipped whole, in as many chunks as it takes. */
		partial = len == sizeof(line) - 1 && line[len - 1] != '\n';
		if (skip || partial)
			continue;
		start = strtoull(line, &end, 16);
		if (end == line || *end != ' ')
			continue;
		size = strtoull(end + 1, &name, 16);
		if (name == end + 1 || *name != ' ')
			continue;
		name++;
		name[strcspn(name, "\r\n")] = '\0';
		if (*name) /* perf does not demangle these either */
			err = symtab__add(t, start, size, name, SYMTAB_BIND_GLOBAL);
	}
	return err;
}
