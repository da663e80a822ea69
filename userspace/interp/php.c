// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attaching to PHP's Zend VM (php.h): the object exporting the executor
 * globals, its build ID's layout, and a frame's names read from the process.
 * Every read is bounded, every structure checked before it is believed.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/objfacts.h"
#include "interp/objsyms.h"
#include "interp/php.h"
#include "procs/procmaps.h"
#include "procs/procmem.h"
#include "procs/proctrack.h"
#include "tables/elfobj.h"
#include "util/log.h"

#include "interp/php_layouts.h"

#if defined(__x86_64__)
#define PHP_ARCH "x86_64"
#elif defined(__aarch64__)
#define PHP_ARCH "aarch64"
#endif

/* A function's first bytes read at once: every zend_function field the names need. */
#define FN_SPAN 256
/* A string longer than this is no name or path of a script: the read stops there. */
#define STR_MAX 4096
/* Shared mappings kept of a process (opcache's is one; a pool's may add a few). */
#define SHARED_MAX 8

/* A shared mapping: the same pages in every process that maps it there. */
struct shared_map {
	uint64_t lo, hi, inode;
	uint32_t dev_major, dev_minor;
};

struct php {
	int pid;
	const struct php_layout *l;
	uint64_t eg; /* executor_globals in the process */
	struct code_part eval[PHP_EVAL_PARTS];
	size_t nr_eval;
	char build_id[OBJFACTS_NOTE];
	char version[64];
	bool unsupported, zts;
	/* Where the VM's loop keeps its execute_data and opline (vm_registers()) */
	uint8_t fp_regnum, ip_regnum;
	uint64_t vm_lo, vm_hi; /* that loop's code */
	uint64_t ticks; /* its start, which a child's reader checks it by */
	struct shared_map own[SHARED_MAX]; /* its shared mappings at attach */
	size_t nr_own;
	/*
	 * Where its own read fails (it exited: a pool's worker recycled before
	 * its samples were read), what it shares with via (its parent, started
	 * at via_ticks) at the same addresses is read there: the same pages.
	 */
	int via;
	uint64_t via_ticks;
	struct shared_map through[SHARED_MAX];
	size_t nr_through;
};

/* The binaries of the php8.2-cli, -fpm and -cgi packages, and an embedding's libphp. */
static bool maybe_php(const struct procmaps *pm, const struct procmap *m)
{
	const char *b;

	if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO) || !(m->perms & PROCMAP_EXEC))
		return false;
	b = procmap__basename(m->path);
	return m == procmaps__exe(pm) || !strncmp(b, "php", 3) || !strncmp(b, "libphp", 6);
}

/* "API" 8 digits ",NTS" or ",TS", maybe ",debug": ZEND_MODULE_BUILD_ID (not the 9-digit
 * extension API's). */
static bool is_build_id(const char *s, size_t left)
{
	size_t i;

	if (left < 15 || memcmp(s, "API", 3))
		return false;
	for (i = 3; i < 11; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	if (s[11] != ',')
		return false;
	s += 12;
	left -= 12;
	if (left >= 4 && !memcmp(s, "NTS", 4))
		return true;
	if (left >= 3 && !memcmp(s, "TS", 3))
		return true;
	return (left >= 10 && !memcmp(s, "NTS,debug", 10)) ||
	       (left >= 9 && !memcmp(s, "TS,debug", 9));
}

enum php_sym { SYM_EG, SYM_EXECUTE_EX, SYM_EG_OFFSET, SYM_NR };

static const char *const sym_names[SYM_NR] = {
	[SYM_EG] = "executor_globals", /* an NTS build's */
	[SYM_EXECUTE_EX] = "execute_ex", /* the VM's loop: the native frame of each VM entry */
	[SYM_EG_OFFSET] = "executor_globals_offset", /* a ZTS build's: per thread */
};

#define PROLOGUE_BYTES 128 /* execute_ex's first instructions: where it loads its registers */

#if defined(__x86_64__)
/* A callee-saved register's DWARF number (a global register variable is one), or -1. */
static int callee_saved(x86_reg r)
{
	switch (r) {
	case X86_REG_RBX:
		return 3;
	case X86_REG_RBP:
		return 6;
	case X86_REG_R12:
	case X86_REG_R13:
	case X86_REG_R14:
	case X86_REG_R15:
		return 12 + (r - X86_REG_R12);
	default:
		return -1;
	}
}
#endif

/*
 * Where execute_ex keeps its execute_data and opline (objfacts_kind.code).
 * A GCC build of the hybrid VM holds both in global register variables
 * (Zend's ZEND_VM_FP_GLOBAL_REG, ZEND_VM_IP_GLOBAL_REG) and writes
 * EX(opline) back only where a handler may need it (SAVE_OPLINE): the
 * innermost frame's is stale while its handlers run. Read from the loop's
 * first instructions: its argument (rdi) moved into a callee-saved register
 * (fp); a callee-saved register loaded from the word at EX(opline)'s offset
 * of rdi or fp (ip); then a jump through the word ip points at (the
 * opline's handler). Believed only all three, in that order; x86-64 only.
 * f->code[0]: fp's DWARF number + 1, and ip's + 1 in its second byte; 0: none.
 */
static const struct php_layout *layout_of(const char *build_id);

static void vm_registers(Elf *elf, int fd, struct objfacts *f)
{
#if defined(__x86_64__)
	uint64_t fn = f->vals[SYM_EXECUTE_EX], n = f->sizes[SYM_EXECUTE_EX];
	const struct php_layout *l = layout_of(f->note);
	x86_reg fp = X86_REG_INVALID, ip = X86_REG_INVALID;
	cs_insn *insn = NULL;
	size_t count = 0;
	uint8_t *code;
	csh cs;

	if (n > PROLOGUE_BYTES)
		n = PROLOGUE_BYTES;
	if (!l || !fn || !n || !(code = codeparts__read(elf, fd, fn, fn + n)))
		return;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK) {
		cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
		count = cs_disasm(cs, code, n, fn, 0, &insn);
	}
	for (size_t i = 0; i < count; i++) {
		const cs_x86 *x = &insn[i].detail->x86;
		const cs_x86_op *a = &x->operands[0], *b = &x->operands[1];

		if (insn[i].id == X86_INS_MOV && x->op_count == 2 && a->type == X86_OP_REG &&
		    b->type == X86_OP_REG && b->reg == X86_REG_RDI && fp == X86_REG_INVALID &&
		    callee_saved(a->reg) >= 0) {
			fp = a->reg;
		} else if (insn[i].id == X86_INS_MOV && x->op_count == 2 && a->type == X86_OP_REG &&
			   b->type == X86_OP_MEM && b->size == 8 && fp != X86_REG_INVALID &&
			   ip == X86_REG_INVALID &&
			   (b->mem.base == X86_REG_RDI || b->mem.base == fp) &&
			   b->mem.index == X86_REG_INVALID && b->mem.disp == l->ed.opline &&
			   callee_saved(a->reg) >= 0 && a->reg != fp) {
			ip = a->reg;
		} else if (insn[i].id == X86_INS_JMP && x->op_count == 1 && a->type == X86_OP_MEM &&
			   ip != X86_REG_INVALID && a->mem.base == ip &&
			   a->mem.index == X86_REG_INVALID) {
			f->code[0] = (uint64_t)(callee_saved(fp) + 1) |
				     (uint64_t)(callee_saved(ip) + 1) << 8;
			break;
		}
	}
	if (count)
		cs_free(insn, count);
	cs_close(&cs);
	free(code);
#else
	(void)elf;
	(void)fd;
	(void)f;
#endif
}

/* A PHP-FPM pool is hundreds of processes of one binary: read once (objfacts.h). */
static struct objfacts_kind facts_kind = {
	.names = sym_names,
	.nr = SYM_NR,
	.key = SYM_EG,
	.eval = SYM_EXECUTE_EX,
	.note_prefix = "API",
	.note_is = is_build_id,
	.code = vm_registers,
};

_Static_assert(PHP_EVAL_PARTS <= OBJFACTS_PARTS, "objfacts holds every part");

static const struct php_layout *layout_of(const char *build_id)
{
	for (size_t i = 0; i < sizeof(php_layouts) / sizeof(php_layouts[0]); i++)
		if (!strcmp(php_layouts[i].build_id, build_id) &&
		    !strcmp(php_layouts[i].arch, PHP_ARCH))
			return &php_layouts[i];
	return NULL;
}

/* objsyms__detect's test: the object at m exports the executor globals (its layout into ctx). */
static int is_php(int pid, const struct procmaps *pm, const struct procmap *m, void *ctx)
{
	struct php *p = ctx;
	struct objfacts f;
	uint64_t bias = 0;
	int fd, err;

	fd = procmap__open(pid, m);
	if (fd < 0)
		return fd;
	err = objfacts__get(&facts_kind, fd, &f);
	close(fd);
	if (!err)
		err = f.err;
	if (err)
		return err;
	if (!f.vals[SYM_EG]) {
		/* A ZTS build's globals live in each thread's storage. */
		p->zts |= f.vals[SYM_EG_OFFSET] != 0;
		return -ENOENT;
	}
	if (!f.note[0])
		return -ENOENT;
	snprintf(p->build_id, sizeof(p->build_id), "%s", f.note);
	if (!(p->l = layout_of(p->build_id))) {
		p->unsupported = true;
		return -ENOENT;
	}
	if (f.sizes[SYM_EG] != p->l->eg_size) {
		pr_info("php: pid %d: %s: executor_globals is %llu bytes, its build ID's headers "
			"say %u: refused",
			pid, m->path, (unsigned long long)f.sizes[SYM_EG], p->l->eg_size);
		return -EPROTO;
	}
	err = objsyms__bias(pm, m, &f.info, &bias);
	if (err)
		return err;
	p->nr_eval = f.nr_eval;
	for (size_t i = 0; i < p->nr_eval; i++) {
		p->eval[i].lo = f.eval[i].lo + bias;
		p->eval[i].hi = f.eval[i].hi + bias;
		/* Its registers are believed in the part execute_ex begins (not one split off). */
		if (f.code[0] && f.eval[i].lo <= f.vals[SYM_EXECUTE_EX] &&
		    f.vals[SYM_EXECUTE_EX] < f.eval[i].hi) {
			p->vm_lo = p->eval[i].lo;
			p->vm_hi = p->eval[i].hi;
			p->fp_regnum = (uint8_t)((f.code[0] & 0xff) - 1);
			p->ip_regnum = (uint8_t)((f.code[0] >> 8 & 0xff) - 1);
		}
	}
	p->eg = objsyms__interposed(pid, pm, m, "executor_globals", f.vals[SYM_EG] + bias);
	return 0;
}

/* pid's shared mappings, at most SHARED_MAX, into out: how many. */
static size_t shared_maps(int pid, struct shared_map *out)
{
	struct procmaps *pm = NULL;
	size_t n = 0;

	if (procmaps__read(pid, &pm))
		return 0;
	for (size_t i = 0; i < procmaps__count(pm) && n < SHARED_MAX; i++) {
		const struct procmap *m = procmaps__get(pm, i);

		if (m->perms & PROCMAP_SHARED)
			out[n++] = (struct shared_map){ m->start, m->end, m->inode, m->dev_major,
							m->dev_minor };
	}
	procmaps__free(pm);
	return n;
}

/* p's own shared mappings, and those of them its parent maps alike: read through it. */
static void note_shared(struct php *p)
{
	struct shared_map parent[SHARED_MAX];
	size_t n;
	int ppid;

	if (proctrack_start_ticks(p->pid, &p->ticks))
		return;
	p->nr_own = shared_maps(p->pid, p->own);
	if (!p->nr_own || proctrack_parent(p->pid, &ppid) || ppid <= 1 ||
	    proctrack_start_ticks(ppid, &p->via_ticks))
		return;
	n = shared_maps(ppid, parent);
	for (size_t i = 0; i < p->nr_own; i++)
		for (size_t j = 0; j < n; j++)
			if (!memcmp(&p->own[i], &parent[j], sizeof(parent[j])))
				p->through[p->nr_through++] = p->own[i];
	p->via = p->nr_through ? ppid : 0;
}

int php__inherit(const struct php *parent, int pid, struct php **out)
{
	struct php *p = malloc(sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	/* The same image, its memory a copy of the parent's at the fork: the same facts. */
	*p = *parent;
	p->pid = pid;
	p->ticks = 0;
	p->via = parent->ticks ? parent->pid : 0;
	p->via_ticks = parent->ticks;
	memcpy(p->through, parent->own, sizeof(p->through));
	p->nr_through = parent->nr_own;
	*out = p;
	return 0;
}

int php__attach(int pid, struct php **out)
{
	struct php *p = calloc(1, sizeof(*p));
	int err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	err = objsyms__detect(pid, "php", maybe_php, is_php, p);
	if (err == -ENOENT && (p->unsupported || p->zts)) {
		pr_info("php: pid %d: %s%s: no known layout, profiled as native code", pid,
			p->zts ? "a ZTS build" : "build ", p->zts ? "" : p->build_id);
		err = -ENOTSUP;
	}
	if (err) {
		free(p);
		return err;
	}
	snprintf(p->version, sizeof(p->version), "%s (%s)", p->l->version, p->build_id);
	note_shared(p);
	*out = p;
	return 0;
}

void php__object_stats(uint64_t *reads, uint64_t *hits)
{
	objfacts__stats(&facts_kind, reads, hits);
}

void php__free(struct php *p)
{
	free(p);
}

const char *php__version(const struct php *p)
{
	return p->version;
}

int php__bpf_settings(const struct php *p, struct sfbpf_php_proc *cfg)
{
	const struct php_layout *l = p->l;

	if (l->ed.opline + 8 > SFBPF_PHP_ED_SPAN || l->ed.func + 8 > SFBPF_PHP_ED_SPAN ||
	    l->ed.call_info + 4 > SFBPF_PHP_ED_SPAN || l->ed.prev + 8 > SFBPF_PHP_ED_SPAN ||
	    l->fn.type + 1 > SFBPF_PHP_FN_SPAN || l->fn.function_name + 8 > SFBPF_PHP_FN_SPAN ||
	    l->fn.scope + 8 > SFBPF_PHP_FN_SPAN || l->fn.fn_flags + 4 > SFBPF_PHP_FN_SPAN ||
	    l->fn.line_start != l->fn.filename + 8)
		return -ENOTSUP;
	memset(cfg, 0, sizeof(*cfg));
	cfg->current_execute_data = p->eg + l->eg_current_execute_data;
	cfg->call_top = l->call_top;
	cfg->ed_opline = l->ed.opline;
	cfg->ed_func = l->ed.func;
	cfg->ed_call_info = l->ed.call_info;
	cfg->ed_prev = l->ed.prev;
	cfg->fn_type = l->fn.type;
	cfg->fn_name = l->fn.function_name;
	cfg->fn_scope = l->fn.scope;
	cfg->fn_flags = l->fn.fn_flags;
	cfg->fn_filename = l->fn.filename;
	cfg->str_hash = l->str_len - 8; /* zend_string: gc, h, len, val */
	cfg->acc_closure = l->acc_closure;
	cfg->user_function = l->user_function;
	cfg->eval_code = l->eval_code;
	cfg->internal_function = l->internal_function;
	cfg->fp_regnum = cfg->ip_regnum = SFBPF_PHP_NO_REG;
	if (p->vm_hi) {
		cfg->fp_regnum = p->fp_regnum;
		cfg->ip_regnum = p->ip_regnum;
		cfg->vm_lo = p->vm_lo;
		cfg->vm_hi = p->vm_hi;
	}
	return 0;
}

size_t php__eval_parts(const struct php *p, const struct code_part **parts)
{
	*parts = p->eval;
	return p->nr_eval;
}

static uint64_t u64_at(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t u32_at(const uint8_t *b, uint32_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/*
 * len bytes at addr in p's process; where that read fails, from the process
 * p reads through (its parent) if they lie in a mapping the two share there
 * and that process is still the one it was (its start).
 */
static int php_read(const struct php *p, uint64_t addr, void *buf, size_t len)
{
	int err = procmem__read(p->pid, addr, buf, len);
	uint64_t ticks;
	size_t i;

	if (!err || !p->via)
		return err;
	for (i = 0; i < p->nr_through; i++)
		if (addr >= p->through[i].lo && addr + len <= p->through[i].hi)
			break;
	if (i == p->nr_through || proctrack_start_ticks(p->via, &ticks) || ticks != p->via_ticks)
		return err;
	return procmem__read(p->via, addr, buf, len) ? err : 0;
}

/* zend_string's type in its zend_refcounted_h (Zend/zend_types.h: IS_STRING, GC_TYPE_MASK). */
#define ZSTR_TYPE 6
#define ZSTR_TYPE_MASK 0xfu

/*
 * Zend's hash of a string (zend_inline_hash_func(), Zend/zend_string.h):
 * DJB's times 33, over char, which is signed on x86-64 and unsigned on
 * AArch64; never 0, its top bit set.
 */
static uint64_t zstr_hash(const char *s, size_t len)
{
	uint64_t h = 5381;

	for (size_t i = 0; i < len; i++)
#if defined(__x86_64__)
		h = h * 33 + (uint64_t)(int64_t)(signed char)s[i];
#else
		h = h * 33 + (uint8_t)s[i];
#endif
	return h | 0x8000000000000000ull;
}

/*
 * The zend_string at addr into buf (size bytes, NUL added): 0 or an error.
 * A freed function's fields, the stamp with them, can outlive its name,
 * whose memory another string or object takes: -EINVAL where no string is
 * there (its type), -ESTALE where another one is (its hash, once computed,
 * is not its bytes': an interned string's always is, as every name and
 * file a compiled function holds).
 */
static int read_str(const struct php *p, uint64_t addr, char *buf, size_t size)
{
	uint8_t head[32];
	uint64_t len, h;
	uint32_t type;
	int err;

	buf[0] = '\0';
	if (p->l->str_len + 8U > sizeof(head))
		return -EINVAL;
	/* zend_refcounted_h (refcount, type_info), h, len: up to len, at once. */
	err = php_read(p, addr, head, p->l->str_len + 8U);
	if (err)
		return err;
	memcpy(&type, head + 4, sizeof(type));
	memcpy(&h, head + p->l->str_len - 8, sizeof(h));
	memcpy(&len, head + p->l->str_len, sizeof(len));
	if ((type & ZSTR_TYPE_MASK) != ZSTR_TYPE)
		return -EINVAL;
	if (len > STR_MAX)
		return -EINVAL;
	if (len >= size) {
		/* Cut: the hash is checked over the whole string, read here once. */
		char *all = malloc(len);

		err = all ? php_read(p, addr + p->l->str_val, all, len) : -ENOMEM;
		if (!err && h && zstr_hash(all, len) != h)
			err = -ESTALE;
		if (!err)
			memcpy(buf, all, size - 1);
		free(all);
		buf[err ? 0 : size - 1] = '\0';
		return err;
	}
	err = php_read(p, addr + p->l->str_val, buf, len);
	if (!err && h && zstr_hash(buf, len) != h)
		err = -ESTALE;
	buf[err ? 0 : len] = '\0';
	return err;
}

/*
 * The bytes of the function at func (span of them for user code: as far as
 * its last field used) and its stamp (abi.h: slot 1), as the BPF walk made
 * it: 0, -ESTALE if no function is there, or the read's error.
 */
static int fn_read(const struct php *p, uint64_t func, uint8_t *fn, uint32_t span, uint16_t *stamp)
{
	const struct php_layout *l = p->l;
	uint64_t name, file, str[2] = { 0, 0 };
	bool hashed;
	int err;

	/* The common part first: an internal function's struct is shorter than an op array. */
	err = php_read(p, func, fn, SFBPF_PHP_FN_SPAN);
	if (err)
		return err;
	if (fn[l->fn.type] != l->user_function && fn[l->fn.type] != l->eval_code &&
	    fn[l->fn.type] != l->internal_function)
		return -ESTALE;
	if (fn[l->fn.type] != l->internal_function && (err = php_read(p, func, fn, span)))
		return err;
	name = u64_at(fn, l->fn.function_name);
	file = u64_at(fn, l->fn.filename);
	/* A file's code, a closure: their strings' too (abi.h, slot 1). */
	hashed = fn[l->fn.type] != l->internal_function &&
		 (!name || (u32_at(fn, l->fn.fn_flags) & l->acc_closure));
	if (hashed && php_read(p, (name ? name : file) + l->str_len - 8, str, sizeof(str)))
		return -ESTALE;
	*stamp = (uint16_t)sfbpf_php_stamp(php_stamp_key(name, hashed ? file : 0,
							 hashed ? u64_at(fn, l->fn.line_start) : 0,
							 str[0], str[1], hashed),
					   u64_at(fn, l->fn.scope));
	return 0;
}

int php__frame(const struct php *p, uint64_t func, uint64_t opline, uint16_t stamp,
	       struct php_frame *out)
{
	const struct php_layout *l = p->l;
	uint8_t fn[FN_SPAN], again[FN_SPAN];
	uint64_t name, scope, file, opcodes, cname;
	uint32_t flags, last, span = 0;
	char cls[PHP_NAME_BYTES / 2 - 2], fname[PHP_NAME_BYTES / 2];
	uint16_t now;
	int err;

	memset(out, 0, sizeof(*out));
	/* An internal function's struct is read only as far as SFBPF_PHP_FN_SPAN. */
	memset(fn, 0, sizeof(fn));
	memset(again, 0, sizeof(again));
	/* As far as the last field: a function at a mapping's end is read whole. */
	for (size_t i = 0; i < sizeof(l->fn) / sizeof(uint16_t); i++)
		if (((const uint16_t *)&l->fn)[i] + 8U > span)
			span = ((const uint16_t *)&l->fn)[i] + 8U;
	if (span > sizeof(fn) || l->fn.type >= SFBPF_PHP_FN_SPAN ||
	    l->fn.fn_flags + 4U > SFBPF_PHP_FN_SPAN ||
	    l->fn.function_name + 8U > SFBPF_PHP_FN_SPAN || l->fn.scope + 8U > SFBPF_PHP_FN_SPAN)
		return -EINVAL;
	/* Another function at its address since the sample: not the one it saw. */
	if ((err = fn_read(p, func, fn, span, &now)))
		return err;
	if (now != stamp)
		return -ESTALE;
	flags = u32_at(fn, l->fn.fn_flags);
	name = u64_at(fn, l->fn.function_name);
	scope = u64_at(fn, l->fn.scope);
	file = u64_at(fn, l->fn.filename);
	opcodes = u64_at(fn, l->fn.opcodes);
	last = u32_at(fn, l->fn.last);
	if (fn[l->fn.type] == l->internal_function) {
		/* An extension's (or the engine's): no file, no line; as PHP's traces say it. */
		snprintf(out->file, sizeof(out->file), "%s", PHP_INTERNAL_FILE);
		file = opcodes = last = 0;
	} else {
		out->firstline = u32_at(fn, l->fn.line_start);
		out->line = out->firstline;
	}
	if (file && (err = read_str(p, file, out->file, sizeof(out->file))))
		return err;
	if (fn[l->fn.type] == l->eval_code) {
		snprintf(out->name, sizeof(out->name), "{eval}");
	} else if (!name) {
		/* A file's own code: the script run, or one it included. */
		snprintf(out->name, sizeof(out->name), "{main}");
	} else {
		if ((err = read_str(p, name, fname, sizeof(fname))))
			return err;
		cls[0] = '\0';
		/* A closure's scope is the class it was made in: PHP names it {closure}. */
		if (scope && !(flags & l->acc_closure) &&
		    ((err = php_read(p, scope + l->ce_name, &cname, sizeof(cname))) ||
		     (err = read_str(p, cname, cls, sizeof(cls)))))
			return err;
		snprintf(out->name, sizeof(out->name), "%s%s%s", cls, cls[0] ? "::" : "", fname);
	}
	if (opcodes && opline >= opcodes && opline < opcodes + (uint64_t)last * l->op_size &&
	    !((opline - opcodes) % l->op_size)) {
		uint32_t line;

		if (!php_read(p, opline + l->op_lineno, &line, sizeof(line)))
			out->line = line;
	}
	/*
	 * The process ran on while this was read: an included file's code freed
	 * and the next one's compiled in its place, its oplines written over
	 * the line just read. The function must be the same after, as a seqlock's
	 * reader checks (its oplines are the same while it is).
	 */
	if (fn_read(p, func, again, span, &now) || now != stamp ||
	    again[l->fn.type] != fn[l->fn.type] ||
	    (opcodes &&
	     (u64_at(again, l->fn.opcodes) != opcodes || u32_at(again, l->fn.last) != last)))
		return -ESTALE;
	return 0;
}
