// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attaching to a CPython process from outside and walking its threads'
 * frames (python.h). Every read is one process_vm_readv of the target: no
 * ptrace, nothing stopped.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "interp/codeparts.h"
#include "interp/objfacts.h"
#include "interp/objsyms.h"
#include "interp/python.h"
#include "interp/python_int.h"
#include "procs/procmaps.h"
#include "procs/proctrack.h"
#include "tables/elfobj.h"
#include "util/fileident.h"
#include "util/hash.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "util/vec.h"

#define PY_MAX_INTERPS 64
#define PY_MAX_THREADS 4096
#define PY_MAX_FRAMES 1024

/* The symbols an interpreter object is recognised and versioned by. */
enum py_sym {
	SYM_RUNTIME, /* _PyRuntime: the object is the interpreter */
	SYM_VERSION, /* Py_Version (3.11+): PY_VERSION_HEX */
	SYM_CODE_TYPE, /* PyCode_Type: what every code object's type is */
	SYM_ITER_SEND, /* PyIter_Send: new in 3.10 */
	SYM_FRAME_GET_CODE, /* PyFrame_GetCode: new in 3.9 */
	SYM_EVAL, /* _PyEval_EvalFrameDefault: the native frame of each eval call */
	SYM_NR,
};

static const char *const sym_names[SYM_NR] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_VERSION] = "Py_Version",
	[SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_ITER_SEND] = "PyIter_Send",
	[SYM_FRAME_GET_CODE] = "PyFrame_GetCode",
	[SYM_EVAL] = "_PyEval_EvalFrameDefault",
};

/* What find_interpreter() learns of the interpreter's object: addresses in the process. */
struct interp_syms {
	uint64_t addrs[SYM_NR], sizes[SYM_NR];
	struct code_part eval[PY_EVAL_PARTS]; /* the eval loop's code (codeparts.h) */
	size_t nr_eval;
};

/* Its objects' facts, read once per file (objfacts.h). */
static struct objfacts_kind facts_kind = {
	.names = sym_names,
	.nr = SYM_NR,
	.key = SYM_RUNTIME,
	.eval = SYM_EVAL,
};

_Static_assert(SYM_NR <= OBJFACTS_SYMS, "objfacts holds every symbol");
_Static_assert(PY_EVAL_PARTS <= OBJFACTS_PARTS, "objfacts holds every part");

/*
 * Programs that embed CPython linked in statically, under a name that does
 * not say python: their executable exports _PyRuntime (an extension module
 * links against the interpreter's symbols, so an embedder exports them).
 * Every process's executable is asked, so the answer is kept by the file's
 * identity, EXPORTS_KEPT files at most (then forgotten all at once).
 */
#define EXPORTS_KEPT 4096

/* A file's identity as same_file() compares it: 56 bytes an entry, not a struct stat's 152. */
struct exports_entry {
	uint64_t dev, ino, size, mtime_ns, ctime_ns, scope;
	bool runtime;
};

static struct exports_entry exports_entry(const struct stat *st, uint64_t scope, bool runtime)
{
	return (struct exports_entry){
		(uint64_t)st->st_dev,
		(uint64_t)st->st_ino,
		(uint64_t)st->st_size,
		(uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec,
		(uint64_t)st->st_ctim.tv_sec * 1000000000ULL + (uint64_t)st->st_ctim.tv_nsec,
		scope,
		runtime,
	};
}

static struct {
	pthread_mutex_t lock;
	struct hashmap index; /* identity -> position in e */
	struct exports_entry *e;
	size_t n, cap;
} exports = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t identity_hash(const struct stat *st)
{
	uint64_t w[4] = { st->st_dev, st->st_ino, (uint64_t)st->st_size,
			  (uint64_t)st->st_ctim.tv_sec << 30 ^ (uint64_t)st->st_ctim.tv_nsec };

	return (uint32_t)hash__bytes(w, sizeof(w));
}

static bool exports_eq(const void *ctx, uint64_t val, const void *key)
{
	const struct exports_entry *a = &exports.e[val], *b = key;

	(void)ctx;
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns && a->scope == b->scope;
}

/* _PyRuntime among the defined dynamic symbols of elf. */
static bool dynsym_runtime(Elf *elf)
{
	uint64_t vals[SYM_NR] = { 0 }, sizes[SYM_NR];

	objsyms__find(elf, sym_names, SYM_NR, vals, sizes, true);
	return vals[SYM_RUNTIME] != 0;
}

bool python__embeds(int pid, const struct procmap *m)
{
	struct exports_entry id;
	bool runtime = false, known = false;
	uint64_t scope;
	struct stat st;
	int64_t v;
	Elf *elf;
	int fd;

	fd = procmap__open(pid, m);
	if (fd < 0)
		return false;
	if (fstat(fd, &st)) {
		close(fd);
		return false;
	}
	/* An author's identity holds within its mount, or nowhere (util/fileident.h). */
	scope = fileident__scope(fd, &st);
	pthread_mutex_lock(&exports.lock);
	id = exports_entry(&st, scope, false);
	v = scope ? hashmap__find(&exports.index, identity_hash(&st), exports_eq, NULL, &id) : -1;
	if (v >= 0) {
		runtime = exports.e[v].runtime;
		known = true;
	}
	pthread_mutex_unlock(&exports.lock);
	if (known) {
		close(fd);
		return runtime;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	runtime = elf && dynsym_runtime(elf);
	elf_end(elf);
	close(fd);
	if (!scope)
		return runtime;
	pthread_mutex_lock(&exports.lock);
	if (exports.n == EXPORTS_KEPT) {
		exports.n = 0;
		hashmap__clear(&exports.index);
	}
	if (!VEC_RESERVE(exports.e, exports.cap, exports.n + 1, 64) &&
	    !hashmap__add(&exports.index, identity_hash(&st), exports.n))
		exports.e[exports.n++] = exports_entry(&st, scope, runtime);
	pthread_mutex_unlock(&exports.lock);
	return runtime;
}

void python__object_stats(uint64_t *reads, uint64_t *hits)
{
	objfacts__stats(&facts_kind, reads, hits);
}

/*
 * The object mapped at m defines _PyRuntime: its symbols' addresses in the
 * process (0 for those it lacks). 0, -ENOENT (not the interpreter), or an
 * error opening or reading it.
 */
static int object_syms(int pid, const struct procmaps *pm, const struct procmap *m,
		       struct interp_syms *out)
{
	struct objfacts f;
	uint64_t bias = 0;
	int fd, err, k;

	fd = procmap__open(pid, m);
	if (fd < 0)
		return fd;
	err = objfacts__get(&facts_kind, fd, &f);
	close(fd);
	if (!err)
		err = f.err;
	if (err)
		return err;
	if (!f.vals[SYM_RUNTIME])
		return -ENOENT;
	err = objsyms__bias(pm, m, &f.info, &bias);
	if (err)
		return err;
	for (k = 0; k < SYM_NR; k++) {
		out->addrs[k] = f.vals[k] ? f.vals[k] + bias : 0;
		out->sizes[k] = f.sizes[k];
	}
	/* A program embedding it may have its own copy (objsyms.h). */
	out->addrs[SYM_RUNTIME] =
		objsyms__interposed(pid, pm, m, sym_names[SYM_RUNTIME], out->addrs[SYM_RUNTIME]);
	for (out->nr_eval = 0; out->nr_eval < f.nr_eval; out->nr_eval++) {
		out->eval[out->nr_eval].lo = f.eval[out->nr_eval].lo + bias;
		out->eval[out->nr_eval].hi = f.eval[out->nr_eval].hi + bias;
	}
	return 0;
}

/*
 * Which mappings may hold the interpreter: the executable (a static python,
 * or a program embedding it) and any object whose name says python
 * (libpython3.N.so, python3.N under another directory).
 */
static bool maybe_python(const struct procmaps *pm, const struct procmap *m)
{
	const char *base = procmap__basename(m->path);

	if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO))
		return false;
	return m == procmaps__exe(pm) || strstr(base, "python");
}

/* objsyms__detect's test: the object at m defines _PyRuntime (its symbols into ctx). */
static int is_python(int pid, const struct procmaps *pm, const struct procmap *m, void *ctx)
{
	memset(ctx, 0, sizeof(struct interp_syms));
	return object_syms(pid, pm, m, ctx);
}

static int find_interpreter(int pid, struct interp_syms *out)
{
	return objsyms__detect(pid, "python", maybe_python, is_python, out);
}

/* The version from Py_Version, or for 3.9/3.10 from the API they added. */
static int find_version(struct python *py, const uint64_t addrs[SYM_NR], unsigned int *minor)
{
	uint32_t hex;

	if (addrs[SYM_VERSION]) {
		int err = procmem__read(py->pid, addrs[SYM_VERSION], &hex, sizeof(hex));

		if (err)
			return err;
		if ((hex >> 24) != 3)
			return -ENOTSUP;
		*minor = (hex >> 16) & 0xff;
		snprintf(py->version, sizeof(py->version), "3.%u.%u", *minor, (hex >> 8) & 0xff);
		return 0;
	}
	if (addrs[SYM_ITER_SEND])
		*minor = 10;
	else if (addrs[SYM_FRAME_GET_CODE])
		*minor = 9;
	else
		return -ENOTSUP;
	snprintf(py->version, sizeof(py->version), "3.%u", *minor);
	return 0;
}

static int find_layout(struct python *py, unsigned int minor)
{
	const struct py_layout *l = py_layout__builtin(minor);
	uint8_t buf[PY_DEBUG_OFFSETS_LEN];
	int err;

	if (l) {
		py->layout = *l;
		py->src = PYTHON_LAYOUT_BUILTIN;
		return 0;
	}
	if (minor < 13)
		return -ENOTSUP;
	err = procmem__read(py->pid, py->runtime, buf, sizeof(buf));
	if (err)
		return err;
	err = py_layout__from_debug_offsets(buf, sizeof(buf), &py->layout);
	if (err)
		return err;
	if (((py->layout.hexversion >> 16) & 0xff) != minor)
		return -EPROTO;
	py->src = PYTHON_LAYOUT_DEBUG_OFFSETS;
	return 0;
}

/* The first walk: judges the layout on what it reads (python_checks). */
static int check_layout(struct python *py)
{
	struct python_checks *c = &py->checks;
	struct python_thread *threads;
	size_t nr;
	int err;

	uint64_t tids[PY_MAX_THREADS];
	size_t ntids = proctrack_task_ids(py->pid, tids, PY_MAX_THREADS, NULL);

	err = python__threads(py, &threads, &nr);
	if (err)
		return err;
	for (size_t i = 0; i < nr; i++) {
		for (size_t j = 0; py->layout.tstate_native_id != PY_NONE && j < ntids; j++) {
			if (tids[j] == threads[i].native_id) {
				c->threads_task++;
				break;
			}
		}
		c->codes += threads[i].nr_frames + threads[i].untyped;
		c->codes_typed += threads[i].nr_frames;
	}
	python__threads_free(threads, nr);
	/* Every thread state must point back at its interpreter; from 3.11 carry a
	 * TID of the process (a thread exiting may be gone from /proc already:
	 * most, not all); and most frames must hold code objects (a frame read
	 * while its thread pops it may hold anything: not all). */
	/* None yet: the interpreter is still starting up (seen at its exec). */
	if (!c->threads)
		return -EAGAIN;
	if (c->threads_interp != c->threads)
		return -EPROTO;
	if (py->layout.tstate_native_id != PY_NONE && 2 * c->threads_task < c->threads)
		return -EPROTO;
	if (2 * c->codes_typed < c->codes)
		return -EPROTO;
	return 0;
}

int python__attach(int pid, struct python **out)
{
	struct interp_syms syms;
	const uint64_t *addrs = syms.addrs;
	struct python *py;
	unsigned int minor = 0;
	int err;

	*out = NULL;
	err = find_interpreter(pid, &syms);
	if (err)
		return err;
	if (!addrs[SYM_CODE_TYPE])
		return -ENOTSUP;
	py = calloc(1, sizeof(*py));
	if (!py)
		return -ENOMEM;
	py->pid = pid;
	py->runtime = addrs[SYM_RUNTIME];
	py->code_type = addrs[SYM_CODE_TYPE];
	memcpy(py->eval, syms.eval, syms.nr_eval * sizeof(syms.eval[0]));
	py->nr_eval = syms.nr_eval;
	err = find_version(py, addrs, &minor);
	if (!err)
		err = find_layout(py, minor);
	if (err == -ENOTSUP)
		pr_info("python: pid %d: CPython %s has no known layout\n", pid,
			py->version[0] ? py->version : "before 3.9");
	if (!err)
		err = check_layout(py);
	if (err) {
		free(py);
		return err;
	}
	*out = py;
	return 0;
}

void python__free(struct python *py)
{
	free(py);
}

const char *python__version(const struct python *py)
{
	return py->version;
}

enum python_layout_src python__layout_src(const struct python *py)
{
	return py->src;
}

const struct python_checks *python__checks(const struct python *py)
{
	return &py->checks;
}

void python__print_layout(const struct python *py, FILE *f)
{
	py_layout__print(&py->layout, f);
}

enum frame_kind { FRAME_CODE, FRAME_SHIM, FRAME_UNTYPED };

/* The frame's code object, if it is one, and its instruction's byte offset. */
static int frame_read(struct python *py, uint64_t f, struct python_frame *fr, enum frame_kind *kind)
{
	const struct py_layout *l = &py->layout;
	uint64_t code, type, instr;
	int32_t lasti;
	uint8_t owner, entry;
	int err;

	*kind = FRAME_SHIM;
	if (l->frame_owner != PY_NONE && l->owner_cstack != PY_NONE) {
		err = procmem__read(py->pid, f + l->frame_owner, &owner, 1);
		if (err || owner >= l->owner_cstack)
			return err;
	}
	err = procmem__u64(py->pid, f + l->frame_code, &code);
	code &= ~SFBPF_PY_REF_TAG_BITS; /* 3.14+: a tagged reference */
	if (!err)
		err = procmem__u64(py->pid, code + l->ob_type, &type);
	if (err)
		return err;
	if (type != py->code_type) {
		*kind = FRAME_UNTYPED;
		return 0;
	}
	fr->code = code;
	/* Before 3.11 each frame object is run by a call of its own. */
	fr->entry = l->instr != PY_INSTR_POINTER;
	if (l->frame_is_entry != PY_NONE) {
		err = procmem__read(py->pid, f + l->frame_is_entry, &entry, 1);
		if (err)
			return err;
		fr->entry = entry;
	}
	if (l->instr == PY_INSTR_POINTER) {
		err = procmem__u64(py->pid, f + l->frame_instr, &instr);
		if (err)
			return err;
		/* Before its first instruction (3.11/3.12: one unit before) the frame
		 * is incomplete: Python's own tracebacks leave it out too. */
		fr->lasti = (int64_t)(instr - (code + l->code_adaptive));
		*kind = fr->lasti < 0 ? FRAME_SHIM : FRAME_CODE;
		return 0;
	}
	err = procmem__read(py->pid, f + l->frame_instr, &lasti, sizeof(lasti));
	if (err)
		return err;
	fr->lasti = lasti < 0 ? -1 : l->instr == PY_INSTR_LASTI_UNITS ? 2 * (int64_t)lasti : lasti;
	*kind = FRAME_CODE;
	return 0;
}

static int thread_read(struct python *py, uint64_t ts, uint64_t interp, struct python_thread *t)
{
	const struct py_layout *l = &py->layout;
	size_t cap = 0;
	uint64_t f, back;
	int err;

	memset(t, 0, sizeof(*t));
	t->tstate = ts;
	err = procmem__u64(py->pid, ts + l->tstate_interp, &back);
	if (!err && back == interp)
		py->checks.threads_interp++;
	py->checks.threads++;
	if (!err)
		err = procmem__u64(py->pid, ts + l->tstate_thread_id, &t->thread_id);
	if (!err && l->tstate_native_id != PY_NONE)
		err = procmem__u64(py->pid, ts + l->tstate_native_id, &t->native_id);
	if (!err)
		err = procmem__u64(py->pid, ts + l->tstate_frame, &f);
	if (!err && f && l->cframe_frame != PY_NONE)
		err = procmem__u64(py->pid, f + l->cframe_frame, &f);
	if (err)
		return err;
	for (int n = 0; f && n < PY_MAX_FRAMES; n++) {
		struct python_frame fr;
		enum frame_kind kind;

		err = frame_read(py, f, &fr, &kind);
		if (err)
			break; /* the thread moved on: keep what was read */
		if (kind == FRAME_UNTYPED) {
			t->untyped++;
		} else if (kind == FRAME_SHIM) {
			/* 3.12+: the eval call that pushed this shim runs the
			 * frames above it, down to the one just taken. */
			t->shims++;
			if (l->owner_cstack != PY_NONE && t->nr_frames)
				t->frames[t->nr_frames - 1].entry = true;
		} else {
			if (VEC_RESERVE(t->frames, cap, t->nr_frames + 1, 16))
				return -ENOMEM;
			t->frames[t->nr_frames++] = fr;
		}
		if (procmem__u64(py->pid, f + l->frame_previous, &f))
			break;
	}
	return 0;
}

int python__threads(struct python *py, struct python_thread **threads, size_t *nr)
{
	const struct py_layout *l = &py->layout;
	struct python_thread *out = NULL;
	size_t n = 0, cap = 0;
	uint64_t interp, ts;
	int err, ni;

	py->checks.threads = 0;
	py->checks.threads_interp = 0;
	err = procmem__u64(py->pid, py->runtime + l->runtime_interp_head, &interp);
	for (ni = 0; !err && interp && ni < PY_MAX_INTERPS; ni++) {
		err = procmem__u64(py->pid, interp + l->interp_threads_head, &ts);
		while (!err && ts && n < PY_MAX_THREADS) {
			if (VEC_RESERVE(out, cap, n + 1, 8)) {
				err = -ENOMEM;
				break;
			}
			err = thread_read(py, ts, interp, &out[n]);
			if (err)
				break;
			n++;
			err = procmem__u64(py->pid, ts + l->tstate_next, &ts);
		}
		if (!err)
			err = procmem__u64(py->pid, interp + l->interp_next, &interp);
	}
	if (err) {
		python__threads_free(out, n);
		return err;
	}
	*threads = out;
	*nr = n;
	return 0;
}

void python__threads_free(struct python_thread *threads, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(threads[i].frames);
	free(threads);
}

size_t python__eval_parts(const struct python *py, const struct code_part **parts)
{
	*parts = py->eval;
	return py->nr_eval;
}

/* An offset as the BPF settings hold it, or false: too big, or a frame field past the span. */
static bool bpf_off(uint32_t v, uint32_t limit, __u16 *out)
{
	if (v == PY_NONE) {
		*out = SFBPF_PY_NO_FIELD;
		return true;
	}
	*out = (__u16)v;
	return v < limit;
}

int python__bpf_settings(const struct python *py, struct sfbpf_py_proc *out)
{
	const struct py_layout *l = &py->layout;
	uint32_t span = 0, frame[] = { l->frame_previous, l->frame_code, l->frame_instr,
				       l->frame_owner, l->frame_is_entry };
	bool ok = true;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->runtime = py->runtime;
	out->hexversion = l->hexversion;
	out->instr = l->instr == PY_INSTR_LASTI_BYTES ? SFBPF_PY_LASTI_BYTES :
		     l->instr == PY_INSTR_LASTI_UNITS ? SFBPF_PY_LASTI_UNITS :
							SFBPF_PY_INSTR_PTR;
	out->tid_kind = l->tstate_native_id != PY_NONE ? SFBPF_PY_TID_NATIVE : SFBPF_PY_TID_PTHREAD;
	out->owner_cstack = l->owner_cstack != PY_NONE ? (uint8_t)l->owner_cstack : 0xff;
	out->describe = 1;
	/* Every frame field the walk reads lies in one read of the frame's first bytes. */
	for (i = 0; i < sizeof(frame) / sizeof(frame[0]); i++)
		if (frame[i] != PY_NONE && frame[i] + 8 > span)
			span = frame[i] + 8;
	out->frame_span = span;
	ok &= span >= 8 && span <= SFBPF_PY_FRAME_SPAN;
	ok &= bpf_off(l->runtime_interp_head, 0xffff, &out->runtime_interp_head);
	ok &= bpf_off(l->interp_next, 0xffff, &out->interp_next);
	ok &= bpf_off(l->interp_threads_head, 0xffff, &out->interp_threads_head);
	ok &= bpf_off(l->tstate_next, 0xffff, &out->tstate_next);
	ok &= bpf_off(l->tstate_frame, 0xffff, &out->tstate_frame);
	ok &= bpf_off(l->cframe_frame, 0xffff, &out->cframe_frame);
	ok &= bpf_off(l->tstate_native_id != PY_NONE ? l->tstate_native_id : l->tstate_thread_id,
		      0xffff, &out->tstate_tid);
	ok &= bpf_off(l->frame_previous, span, &out->frame_previous);
	ok &= bpf_off(l->frame_code, span, &out->frame_code);
	ok &= bpf_off(l->frame_instr, span, &out->frame_instr);
	ok &= bpf_off(l->frame_owner, span, &out->frame_owner);
	ok &= bpf_off(l->frame_is_entry, span, &out->frame_is_entry);
	ok &= bpf_off(l->code_linetable, 0xffff, &out->code_stamp);
	ok &= bpf_off(l->code_adaptive, 0xffff, &out->code_adaptive);
	ok &= bpf_off(l->code_qualname != PY_NONE ? l->code_qualname : l->code_name, 0xffff,
		      &out->code_name);
	ok &= bpf_off(l->code_filename, 0xffff, &out->code_filename);
	ok &= bpf_off(l->code_firstlineno, 0xffff, &out->code_firstlineno);
	ok &= bpf_off(l->ob_type, 0xffff, &out->ob_type);
	ok &= bpf_off(l->bytes_size, 0xffff, &out->bytes_size);
	ok &= bpf_off(l->bytes_data, 0xffff, &out->bytes_data);
	ok &= bpf_off(l->str_length, 0xffff, &out->str_length);
	ok &= bpf_off(l->str_state, 0xffff, &out->str_state);
	ok &= bpf_off(l->str_ascii_size, 0xffff, &out->str_ascii_data);
	ok &= bpf_off(l->str_compact_size, 0xffff, &out->str_compact_data);
	if (l->instr == PY_INSTR_POINTER && l->code_adaptive == PY_NONE)
		ok = false;
	return ok ? 0 : -ERANGE;
}
