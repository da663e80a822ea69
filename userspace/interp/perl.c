// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attaching to Perl (perl.h): the object exporting PL_curinterp, its API
 * version's layout, the code of its ops loop, and a frame's names read from
 * the process. Every read is bounded, every structure checked before it is
 * believed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/objfacts.h"
#include "interp/objsyms.h"
#include "interp/perl.h"
#include "interp/pthreadkey.h"
#include "procs/procmaps.h"
#include "procs/procmem.h"
#include "util/log.h"

#include "interp/perl_layouts.h"
#include "util/utf8.h"

#if defined(__x86_64__)
#define PERL_ARCH "x86_64"
#elif defined(__aarch64__)
#define PERL_ARCH "aarch64"
#endif

#define HEK_MAX 1024 /* a longer sub or package name is none: the read stops */
#define CX_MAX (1 << 22) /* contexts: a deeper stack is no stack */

struct perl {
	int pid;
	const struct perl_layout *l;
	uint64_t curinterp; /* PL_curinterp in the process */
	uint64_t thr_key; /* PL_thr_key in the process, 0 if none (a perl without ithreads) */
	uint16_t thr_slot; /* its value's offset from a thread's thread pointer, 0 if unknown */
	struct code_part eval[PERL_EVAL_PARTS];
	size_t nr_eval;
	char version[OBJFACTS_NOTE];
	bool unsupported;
};

/* perl, perl5.36.0, a libperl: objects named so. */
static bool maybe_perl(const struct procmaps *pm, const struct procmap *m)
{
	if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO) || !(m->perms & PROCMAP_EXEC))
		return false;
	return m == procmaps__exe(pm) || strstr(procmap__basename(m->path), "perl");
}

/* "v5." digits "." digits, alone: the API version XS modules are checked against. */
static bool is_api_version(const char *s, size_t left)
{
	size_t i = 3, dots = 0;

	if (left < 7 || memcmp(s, "v5.", 3))
		return false;
	for (; i < left && s[i]; i++) {
		if (s[i] == '.' && s[i - 1] != '.')
			dots++;
		else if (s[i] < '0' || s[i] > '9')
			return false;
	}
	return i < left && dots == 1 && s[i - 1] != '.' && i < 16;
}

enum perl_sym { SYM_CURINTERP, SYM_RUNOPS, SYM_THR_KEY, SYM_NR };

static const char *const sym_names[SYM_NR] = {
	[SYM_CURINTERP] = "PL_curinterp", /* the first interpreter: the main thread's */
	[SYM_RUNOPS] = "Perl_runops_standard", /* the ops loop: the native frame of each run */
	/* ithreads: the key each thread's interpreter is its value of (PERL_SET_CONTEXT) */
	[SYM_THR_KEY] = "PL_thr_key",
};

/* Many processes of one perl (a prefork server's): read once (objfacts.h). */
static struct objfacts_kind facts_kind = {
	.names = sym_names,
	.nr = SYM_NR,
	.key = SYM_CURINTERP,
	.eval = SYM_RUNOPS,
	.note_prefix = "v5.",
	.note_is = is_api_version,
};

_Static_assert(PERL_EVAL_PARTS <= OBJFACTS_PARTS, "objfacts holds every part");

static const struct perl_layout *layout_of(const char *api)
{
	for (size_t i = 0; i < sizeof(perl_layouts) / sizeof(perl_layouts[0]); i++)
		if (!strcmp(perl_layouts[i].api, api) && !strcmp(perl_layouts[i].arch, PERL_ARCH))
			return &perl_layouts[i];
	return NULL;
}

static int rd(const struct perl *p, uint64_t addr, uint64_t *v)
{
	return procmem__u64(p->pid, addr, v);
}

static int rd32(const struct perl *p, uint64_t addr, uint32_t *v)
{
	return procmem__read(p->pid, addr, v, sizeof(*v));
}

/* objsyms__detect's test: the object at m exports PL_curinterp (its layout into ctx). */
static int is_perl(int pid, const struct procmaps *pm, const struct procmap *m, void *ctx)
{
	struct perl *p = ctx;
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
	if (!f.vals[SYM_CURINTERP] || !f.note[0])
		return -ENOENT;
	snprintf(p->version, sizeof(p->version), "%s", f.note);
	if (!(p->l = layout_of(p->version))) {
		p->unsupported = true;
		return -ENOENT;
	}
	if (f.sizes[SYM_CURINTERP] != 8) {
		pr_info("perl: pid %d: %s: PL_curinterp is %llu bytes, no pointer: refused", pid,
			m->path, (unsigned long long)f.sizes[SYM_CURINTERP]);
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
	/* A program embedding it may have its own copies (objsyms.h). */
	p->curinterp =
		objsyms__interposed(pid, pm, m, "PL_curinterp", f.vals[SYM_CURINTERP] + bias);
	if (f.vals[SYM_THR_KEY] && f.sizes[SYM_THR_KEY] == sizeof(uint32_t))
		p->thr_key =
			objsyms__interposed(pid, pm, m, "PL_thr_key", f.vals[SYM_THR_KEY] + bias);
	return 0;
}

/*
 * Where each thread keeps its interpreter, for a perl with ithreads: the
 * slot of PL_thr_key's value (pthreadkey.h). Without it (no ithreads, a libc
 * not understood), the main thread's interpreter alone is walked.
 */
static void find_thr_slot(struct perl *p)
{
	uint64_t off = 0;
	uint32_t key;
	int err;

	if (!p->thr_key)
		return;
	err = rd32(p, p->thr_key, &key);
	if (!err)
		err = pthreadkey__slot(p->pid, key, &off);
	if (!err && off <= UINT16_MAX)
		p->thr_slot = (uint16_t)off;
	else
		pr_debug("perl: pid %d: no slot of PL_thr_key (%d): the main thread's interpreter "
			 "alone",
			 p->pid, err);
}

/*
 * The main interpreter's current stack of contexts, checked: its top at or
 * below its allocation's last, its contexts somewhere. -EAGAIN before perl
 * made them (an interpreter starting).
 */
static int check_interp(const struct perl *p)
{
	const struct perl_layout *l = p->l;
	uint64_t interp, si, cxstack, cop;
	uint32_t ix, max;
	int err;

	if ((err = rd(p, p->curinterp, &interp)))
		return err;
	if (!interp)
		return -EAGAIN;
	if ((err = rd(p, interp + l->interp.curstackinfo, &si)) ||
	    (err = rd(p, interp + l->interp.curcop, &cop)))
		return err;
	if (!si || !cop)
		return -EAGAIN;
	if ((err = rd(p, si + l->si.cxstack, &cxstack)) || (err = rd32(p, si + l->si.cxix, &ix)) ||
	    (err = rd32(p, si + l->si.cxmax, &max)))
		return err;
	if (!cxstack || (int32_t)max < 0 || max > CX_MAX || (int32_t)ix < -1 ||
	    (int32_t)ix > (int32_t)max)
		return -EPROTO;
	return 0;
}

int perl__attach(int pid, struct perl **out)
{
	struct perl *p = calloc(1, sizeof(*p));
	int err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	err = objsyms__detect(pid, "perl", maybe_perl, is_perl, p);
	if (err == -ENOENT && p->unsupported) {
		pr_info("perl: pid %d: Perl %s: no known layout, profiled as native code", pid,
			p->version);
		err = -ENOTSUP;
	}
	if (!err)
		err = check_interp(p);
	if (!err)
		find_thr_slot(p);
	if (err == -EPROTO)
		pr_info("perl: pid %d: its interpreter disagrees with Perl %s's layout: refused",
			pid, p->version);
	if (err) {
		free(p);
		return err;
	}
	*out = p;
	return 0;
}

void perl__object_stats(uint64_t *reads, uint64_t *hits)
{
	objfacts__stats(&facts_kind, reads, hits);
}

void perl__free(struct perl *p)
{
	free(p);
}

const char *perl__version(const struct perl *p)
{
	return p->version;
}

int perl__bpf_settings(const struct perl *p, struct sfbpf_pl_proc *cfg)
{
	const struct perl_layout *l = p->l;
	uint32_t span = 0;
	const uint16_t fields[] = { l->cx.type + 1U, l->cx.oldcop + 8U, l->cx.retop + 8U,
				    l->cx.cv + 8U, l->cx.u16 + 2U };

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] > span)
			span = fields[i];
	if (span >= SFBPF_PL_CX_SPAN || (l->cx.oldcop & 7) || (l->cx.retop & 7) || (l->cx.cv & 7) ||
	    (l->cx.u16 & 1) || !l->cx.size)
		return -ENOTSUP;
	memset(cfg, 0, sizeof(*cfg));
	cfg->curinterp = p->curinterp;
	cfg->thr_slot = p->thr_slot;
	cfg->interp_curcop = l->interp.curcop;
	cfg->interp_curstackinfo = l->interp.curstackinfo;
	cfg->interp_phase = l->interp.phase;
	cfg->phase_run = l->interp.phase_run;
	cfg->cop_seq = l->cop.seq;
	cfg->si_cxstack = l->si.cxstack;
	cfg->si_prev = l->si.prev;
	cfg->si_cxix = l->si.cxix;
	cfg->cx_span = (uint16_t)span;
	cfg->cx_size = l->cx.size;
	cfg->cx_type = l->cx.type;
	cfg->cx_oldcop = l->cx.oldcop;
	cfg->cx_retop = l->cx.retop;
	cfg->cx_cv = l->cx.cv;
	cfg->cx_u16 = l->cx.u16;
	cfg->type_mask = l->cxt.mask;
	cfg->t_sub = l->cxt.sub;
	cfg->t_format = l->cxt.format;
	cfg->t_eval = l->cxt.eval;
	cfg->multicall = l->cxt.multicall;
	cfg->evalblock = l->cxt.evalblock;
	cfg->old_op_shift = l->cxt.old_op_shift;
	cfg->op_require = l->cxt.op_require;
	return 0;
}

size_t perl__eval_parts(const struct perl *p, const struct code_part **parts)
{
	*parts = p->eval;
	return p->nr_eval;
}

/* The SV at sv, of type want: its body (sv_any) and flags. -ESTALE if another type. */
static int sv_of(const struct perl *p, uint64_t sv, uint32_t want, uint64_t *body, uint32_t *flags)
{
	const struct perl_layout *l = p->l;
	int err;

	if ((err = rd(p, sv + l->sv.any, body)) || (err = rd32(p, sv + l->sv.flags, flags)))
		return err;
	return (*flags & l->sv.type_mask) == want && *body ? 0 : -ESTALE;
}

/* The HEK at hek into buf (size bytes, NUL added): 0 or an error. */
static int read_hek(const struct perl *p, uint64_t hek, char *buf, size_t size)
{
	uint32_t len;
	int err;

	buf[0] = '\0';
	if (!hek)
		return -ESTALE;
	if ((err = rd32(p, hek + p->l->hek.len, &len)))
		return err;
	if ((int32_t)len < 0 || len > HEK_MAX)
		return -EINVAL;
	if (len >= size)
		return -ENAMETOOLONG; /* never a cut name */
	err = procmem__read(p->pid, hek + p->l->hek.key, buf, len);
	buf[err ? 0 : len] = '\0';
	return err;
}

/* A stash's name (HvNAME) into buf: 0, or -ESTALE if stash is no named stash. */
static int stash_name(const struct perl *p, uint64_t stash, char *buf, size_t size)
{
	const struct perl_layout *l = p->l;
	uint64_t body, hek;
	uint32_t flags, count;
	int err;

	buf[0] = '\0';
	if (!stash)
		return -ESTALE;
	if ((err = sv_of(p, stash, l->sv.pvhv, &body, &flags)))
		return err;
	if (!(flags & l->sv.ook))
		return -ESTALE; /* no aux part: no name */
	if ((err = rd(p, body + l->xhv.name, &hek)) ||
	    (err = rd32(p, body + l->xhv.name_count, &count)))
		return err;
	/* Several names: an array of HEKs, the stash's own name first. */
	if (count && (err = rd(p, hek, &hek)))
		return err;
	return read_hek(p, hek, buf, size);
}

/* A CV's Package::name into out->name. */
static int cv_name(const struct perl *p, uint64_t body, struct perl_frame *out)
{
	const struct perl_layout *l = p->l;
	uint64_t gv_or_hek, stash, gbody, hek;
	uint32_t cvflags, gflags;
	char pkg[PERL_NAME_BYTES], sub[PERL_NAME_BYTES];
	int err;

	if ((err = rd(p, body + l->xcv.gv, &gv_or_hek)) ||
	    (err = rd32(p, body + l->xcv.flags, &cvflags)))
		return err;
	if (cvflags & l->xcv.named) {
		/* A lexical (my sub) or a sub named without a glob: the name and CvSTASH. */
		hek = gv_or_hek;
		if ((err = rd(p, body + l->xcv.stash, &stash)))
			return err;
	} else {
		if ((err = sv_of(p, gv_or_hek, l->sv.pvgv, &gbody, &gflags)) ||
		    (err = rd(p, gbody + l->xgv.namehek, &hek)) ||
		    (err = rd(p, gbody + l->xgv.stash, &stash)))
			return err;
	}
	if ((err = read_hek(p, hek, sub, sizeof(sub))))
		return err;
	err = stash_name(p, stash, pkg, sizeof(pkg));
	if (err && err != -ENAMETOOLONG)
		return err;
	/* Too long with its package: the sub's own name, never a cut one. */
	if (err ||
	    (size_t)snprintf(out->name, sizeof(out->name), "%s::%s", pkg, sub) >= sizeof(out->name))
		memcpy(out->name, sub, sizeof(out->name));
	return 0;
}

/*
 * A sub just entered: its first statement's COP, if its first op is one (a
 * nextstate, a dbstate under the debugger), else 0.
 */
static uint64_t first_cop(const struct perl *p, uint64_t body)
{
	const struct perl_layout *l = p->l;
	uint64_t op;
	uint32_t bits, type;

	if (rd(p, body + l->xcv.start, &op) || !op || rd32(p, op + l->op.type, &bits))
		return 0;
	type = (bits >> l->op.type_shift) & l->op.type_mask;
	return type == l->op.nextstate || type == l->op.dbstate ? op : 0;
}

/*
 * Whether file names a file the process can still reach, or code no file
 * holds ("(eval 12)", "-e", a program on stdin, an @INC hook's "/loader/0x...").
 * A statement read after its code was freed may hold a freed name that is
 * still printable: seen once in 5,163 samples of a module's test suite, an
 * END block at "k]杕U" as the interpreter was destroyed.
 */
static bool file_reachable(int pid, const char *file)
{
	char path[64 + PERL_FILE_BYTES];

	if (file[0] == '(' || !strcmp(file, "-e") || !strcmp(file, "-") ||
	    !strncmp(file, "/loader/0x", 10))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/%s/%s", pid, file[0] == '/' ? "root" : "cwd", file);
	return !access(path, F_OK);
}

/* The COP at cop, checked (a statement's op, a printable file name): its file and line. */
static int read_cop(const struct perl *p, uint64_t cop, struct perl_frame *out)
{
	const struct perl_layout *l = p->l;
	uint64_t file;
	uint32_t bits, type, line;
	long len;
	int err;

	if (!cop)
		return -EPROTO;
	if ((err = rd32(p, cop + l->op.type, &bits)))
		return err;
	type = (bits >> l->op.type_shift) & l->op.type_mask;
	if (type != l->op.nextstate && type != l->op.dbstate)
		return -EPROTO;
	if ((err = rd32(p, cop + l->cop.line, &line)) || (err = rd(p, cop + l->cop.file, &file)))
		return err;
	len = procmem__str(p->pid, file, out->file, sizeof(out->file));
	if (len <= 0)
		return len ? (int)len : -EPROTO;
	/* Text, or memory that is no longer a file's name. */
	for (long i = 0; i < len;) {
		size_t n = utf8__seq_len((const unsigned char *)out->file + i);

		if (!n || (unsigned char)out->file[i] < 0x20 || out->file[i] == 0x7f)
			return -EPROTO;
		i += (long)n;
	}
	if (!file_reachable(p->pid, out->file))
		return -ESTALE;
	out->line = line;
	return 0;
}

/* Whether the COP at cop still has the cop_seq stamp the sample saw (its mask's bits), not 0. */
static bool stamp_holds(const struct perl *p, uint64_t cop, uint32_t stamp, uint32_t mask)
{
	uint32_t seq;

	return stamp && !rd32(p, cop + p->l->cop.seq, &seq) && (seq & mask) == stamp;
}

/*
 * Whether the CV at cv is still the sub a frame's slots stamp (word), its
 * body at body, and its first statement first (0: not used).
 */
static bool sub_holds(const struct perl *p, uint64_t cv, uint64_t body, uint64_t word,
		      uint64_t first)
{
	uint64_t now;
	uint32_t flags;

	return !sv_of(p, cv, p->l->sv.pvcv, &now, &flags) && now == body &&
	       sfbpf_pl_stamp(now) == ((word >> 48) & 0x3fff) &&
	       (!first || first_cop(p, now) == first);
}

int perl__frame(const struct perl *p, uint64_t cv, uint64_t word, struct perl_frame *out)
{
	const struct perl_layout *l = p->l;
	uint64_t cop = word & SFBPF_PL_COP_MASK, kind = word >> SFBPF_PL_KIND_SHIFT, body = 0;
	uint64_t first = 0;
	uint32_t flags, stamp = (word >> 48) & 0x3fff, mask = 0x3fff;
	bool stamped;
	int err;

	memset(out, 0, sizeof(*out));
	/* A sub's statement is stamped in its CV's slot (abi.h): 12 bits. */
	if (kind == SFBPF_PL_KIND_SUB) {
		stamp = (cv >> SFBPF_PL_SEQ_SHIFT) & SFBPF_PL_SEQ_MASK;
		mask = SFBPF_PL_SEQ_MASK;
	}
	cv &= SFBPF_PL_COP_MASK;
	if (kind == SFBPF_PL_KIND_SUB) {
		if ((err = sv_of(p, cv, l->sv.pvcv, &body, &flags)))
			return err;
		/* Another CV at its address since the sample: not the one it saw. */
		if (sfbpf_pl_stamp(body) != ((word >> 48) & 0x3fff))
			return -ESTALE;
		if ((err = cv_name(p, body, out)))
			return err == -ESTALE ? -EPROTO : err;
		if (!cop)
			first = cop = first_cop(p, body);
	} else {
		snprintf(out->name, sizeof(out->name), "%s",
			 kind == SFBPF_PL_KIND_EVAL    ? "(eval)" :
			 kind == SFBPF_PL_KIND_REQUIRE ? "(require)" :
							 "main::RUNTIME");
	}
	/*
	 * The statement's file and line, if the COP is still one: a required
	 * file's or an eval's code is freed once it has run, its memory reused
	 * (by another statement too: the stamp of its cop_seq tells). The stamp
	 * is read before and after the statement, as a seqlock's reader does:
	 * an op is zeroed before it is filled (Perl_Slab_Alloc), so a statement
	 * written while it was read changed its stamp, and 0 is no stamp.
	 */
	stamped = kind != SFBPF_PL_KIND_MAIN && (word & SFBPF_PL_COP_MASK);
	if (stamped && !stamp_holds(p, cop, stamp, mask))
		err = -ESTALE;
	else if (!(err = read_cop(p, cop, out)) && stamped && !stamp_holds(p, cop, stamp, mask))
		err = -ESTALE;
	/*
	 * The sub read again, as its statement was: freed meanwhile (the
	 * interpreter's destruction frees END blocks' subs as their samples are
	 * read), its name and first statement were another's memory.
	 */
	if (kind == SFBPF_PL_KIND_SUB && !sub_holds(p, cv, body, word, first))
		return -ESTALE;
	if (err == -ESTALE && (kind == SFBPF_PL_KIND_SUB || kind == SFBPF_PL_KIND_MAIN)) {
		/* Its statement is another's now, or no file's: the frame named alone. */
		out->file[0] = '\0';
		out->line = 0;
		return 0;
	}
	if (err && kind != SFBPF_PL_KIND_SUB && kind != SFBPF_PL_KIND_MAIN) {
		/* The frame is an eval's or a require's all the same: its name alone. */
		out->file[0] = '\0';
		out->line = 0;
		return 0;
	}
	return err;
}
