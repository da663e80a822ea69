// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attaching to PHP's Zend VM (php.h): the object exporting the executor
 * globals, its build ID's layout, and a frame's names read from the process.
 * Every read is bounded, every structure checked before it is believed.
 */
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

struct php {
	int pid;
	const struct php_layout *l;
	uint64_t eg; /* executor_globals in the process */
	struct code_part eval[PHP_EVAL_PARTS];
	size_t nr_eval;
	char build_id[OBJFACTS_NOTE];
	char version[64];
	bool unsupported, zts;
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

/* A PHP-FPM pool is hundreds of processes of one binary: read once (objfacts.h). */
static struct objfacts_kind facts_kind = {
	.names = sym_names,
	.nr = SYM_NR,
	.key = SYM_EG,
	.eval = SYM_EXECUTE_EX,
	.note_prefix = "API",
	.note_is = is_build_id,
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
	}
	p->eg = f.vals[SYM_EG] + bias;
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
	    l->fn.scope + 8 > SFBPF_PHP_FN_SPAN)
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
	cfg->user_function = l->user_function;
	cfg->eval_code = l->eval_code;
	cfg->internal_function = l->internal_function;
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

/* The zend_string at addr into buf (size bytes, NUL added): 0 or an error. */
static int read_str(const struct php *p, uint64_t addr, char *buf, size_t size)
{
	uint64_t len;
	int err;

	buf[0] = '\0';
	err = procmem__u64(p->pid, addr + p->l->str_len, &len);
	if (err)
		return err;
	if (len > STR_MAX)
		return -EINVAL;
	if (len >= size)
		len = size - 1;
	err = procmem__read(p->pid, addr + p->l->str_val, buf, len);
	buf[err ? 0 : len] = '\0';
	return err;
}

int php__frame(const struct php *p, uint64_t func, uint64_t opline, uint16_t stamp,
	       struct php_frame *out)
{
	const struct php_layout *l = p->l;
	uint8_t fn[FN_SPAN];
	uint64_t name, scope, file, opcodes, cname;
	uint32_t flags, last;
	char cls[PHP_NAME_BYTES / 2 - 2], fname[PHP_NAME_BYTES / 2];
	int err;

	uint32_t span = 0;

	memset(out, 0, sizeof(*out));
	/* As far as the last field: a function at a mapping's end is read whole. */
	for (size_t i = 0; i < sizeof(l->fn) / sizeof(uint16_t); i++)
		if (((const uint16_t *)&l->fn)[i] + 8U > span)
			span = ((const uint16_t *)&l->fn)[i] + 8U;
	if (span > sizeof(fn) || l->fn.type >= SFBPF_PHP_FN_SPAN ||
	    l->fn.fn_flags + 4U > SFBPF_PHP_FN_SPAN ||
	    l->fn.function_name + 8U > SFBPF_PHP_FN_SPAN || l->fn.scope + 8U > SFBPF_PHP_FN_SPAN)
		return -EINVAL;
	/* The common part first: an internal function's struct is shorter than an op array. */
	err = procmem__read(p->pid, func, fn, SFBPF_PHP_FN_SPAN);
	if (err)
		return err;
	if (fn[l->fn.type] != l->user_function && fn[l->fn.type] != l->eval_code &&
	    fn[l->fn.type] != l->internal_function)
		return -ESTALE;
	if (fn[l->fn.type] != l->internal_function && (err = procmem__read(p->pid, func, fn, span)))
		return err;
	flags = u32_at(fn, l->fn.fn_flags);
	name = u64_at(fn, l->fn.function_name);
	scope = u64_at(fn, l->fn.scope);
	file = u64_at(fn, l->fn.filename);
	opcodes = u64_at(fn, l->fn.opcodes);
	last = u32_at(fn, l->fn.last);
	/* Another function at its address since the sample: not the one it saw. */
	if (sfbpf_php_stamp(name, scope) != stamp)
		return -ESTALE;
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
		    ((err = procmem__u64(p->pid, scope + l->ce_name, &cname)) ||
		     (err = read_str(p, cname, cls, sizeof(cls)))))
			return err;
		snprintf(out->name, sizeof(out->name), "%s%s%s", cls, cls[0] ? "::" : "", fname);
	}
	if (opcodes && opline >= opcodes && opline < opcodes + (uint64_t)last * l->op_size &&
	    !((opline - opcodes) % l->op_size)) {
		uint32_t line;

		if (!procmem__read(p->pid, opline + l->op_lineno, &line, sizeof(line)))
			out->line = line;
	}
	return 0;
}
