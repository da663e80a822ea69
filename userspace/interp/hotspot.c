// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Attaching to a HotSpot JVM from outside (hotspot.h): every read is a
 * process_vm_readv of the target (procs/procmem.h).
 */
#include <errno.h>
#include <stdio.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/hotspot.h"
#include "interp/hotspot_int.h"
#include "interp/objsyms.h"
#include "procs/procmaps.h"
#include "procs/procmem.h"
#include "tables/elfobj.h"
#include "util/log.h"
#include "util/vec.h"

#define HS_MAX_THREADS 65536
/* Frames of one call of hotspot__threads(), all threads together: 16 MiB. */
#define HS_MAX_TOTAL_FRAMES (1u << 20)

struct hotspot {
	int pid;
	uint64_t bias;
	struct hs_tables *tables;
	struct hs_layout layout;
	uint64_t interp_lo, interp_hi; /* the template interpreter's code */
	uint64_t call_stub_return; /* where the outermost Java frame returns to native code */
	struct hs_code code; /* the heaps as last read: their committed ends grow */
	uint64_t unloads; /* its perf data's count of classes unloaded (a jlong); 0: none */
};

/*
 * Which mappings may hold the JVM: libjvm.so (server, client or zero), and
 * the executable (a launcher that links the JVM in).
 */
static bool maybe_jvm(const struct procmaps *pm, const struct procmap *m)
{
	if (m->flags & (PROCMAP_F_ANON | PROCMAP_F_PSEUDO))
		return false;
	return m == procmaps__exe(pm) || !strcmp(procmap__basename(m->path), "libjvm.so");
}

/* The hs_sym symbols' addresses in pid, from the object mapped at m: 0 or -ENOENT. */
static int object_syms(int pid, const struct procmaps *pm, const struct procmap *m,
		       uint64_t addrs[HS_SYM_NR], uint64_t *bias)
{
	uint64_t sizes[HS_SYM_NR];
	struct elfobj_info info;
	Elf *elf;
	int fd, err;

	fd = procmap__open(pid, m);
	if (fd < 0)
		return fd;
	memset(addrs, 0, HS_SYM_NR * sizeof(addrs[0]));
	err = elfobj__read(fd, &info);
	elf_version(EV_CURRENT);
	elf = err ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		objsyms__find(elf, hs_sym_names, HS_SYM_NR, addrs, sizes, true);
	elf_end(elf);
	close(fd);
	if (err)
		return err;
	if (!addrs[HS_SYM_STRUCTS])
		return -ENOENT;
	err = objsyms__bias(pm, m, &info, bias);
	for (size_t k = 0; !err && k < HS_SYM_NR; k++) {
		if (!addrs[k])
			return -EPROTO; /* a table without its strides and offsets */
		addrs[k] += *bias;
	}
	return err;
}

struct jvm_syms {
	uint64_t addrs[HS_SYM_NR], bias;
};

/* objsyms__detect's test: the object at m exports the tables (their addresses into ctx). */
static int is_jvm(int pid, const struct procmaps *pm, const struct procmap *m, void *ctx)
{
	struct jvm_syms *j = ctx;

	return object_syms(pid, pm, m, j->addrs, &j->bias);
}

/*
 * What the VM sets up at its start: the interpreter's code, the call stub.
 * Until then (a JVM still starting) -EAGAIN.
 */
static int read_roots(struct hotspot *hs)
{
	const struct hs_layout *l = &hs->layout;
	uint64_t queue, buffer, limit;
	int64_t major;
	int err;

	err = procmem__u64(hs->pid, l->interp_code, &queue);
	if (!err && !queue)
		return -EAGAIN;
	if (!err)
		err = hs_read_member(hs->pid, queue, l->queue_buffer, &buffer);
	if (!err)
		err = hs_read_member(hs->pid, queue, l->queue_limit, &limit);
	if (!err)
		err = procmem__u64(hs->pid, l->call_stub_return, &hs->call_stub_return);
	if (err)
		return err;
	if (!buffer || !hs->call_stub_return)
		return -EAGAIN;
	hs->interp_lo = buffer;
	hs->interp_hi = buffer + (uint32_t)limit;
	/* The one thing read by version: the compressed integers' form (JDK 20). */
	major = 0;
	{
		const struct hs_field *f =
			hs_tables__field(hs->tables, "Abstract_VM_Version", "_vm_major_version");
		int32_t v;

		if (f && f->is_static && !procmem__read(hs->pid, f->address, &v, sizeof(v)))
			major = v;
	}
	if (major <= 0)
		return -EPROTO;
	hs->layout.unsigned5_x = major >= 20;
	return 0;
}

int hotspot__attach(int pid, struct hotspot **out)
{
	struct jvm_syms syms;
	struct hotspot *hs;
	int err;

	*out = NULL;
	hs = calloc(1, sizeof(*hs));
	if (!hs)
		return -ENOMEM;
	hs->pid = pid;
	err = objsyms__detect(pid, "hotspot", maybe_jvm, is_jvm, &syms);
	hs->bias = syms.bias;
	if (!err)
		err = hs_tables__read(pid, syms.addrs, &hs->tables);
	if (!err)
		err = hs_layout__resolve(hs->tables, pid, &hs->layout);
	if (!err)
		err = read_roots(hs);
	if (err) {
		hotspot__free(hs);
		return err;
	}
	/* None (-XX:-UsePerfData): names are checked by their Method's key alone. */
	if (hs_perfdata__counter(pid, hs->tables, "java.cls.unloadedClasses", &hs->unloads))
		hs->unloads = 0;
	*out = hs;
	return 0;
}

void hotspot__free(struct hotspot *hs)
{
	if (!hs)
		return;
	hs_tables__free(hs->tables);
	free(hs);
}

const struct hs_tables *hotspot__tables(const struct hotspot *hs)
{
	return hs->tables;
}

uint64_t hotspot__bias(const struct hotspot *hs)
{
	return hs->bias;
}

static int read_word(int pid, uint64_t addr, uint64_t *v)
{
	return procmem__u64(pid, addr, v);
}

/* Frame f of an interpreted method at fp: 0, or -EPROTO where it does not read as one. */
static int interpreted(const struct hotspot *hs, uint64_t fp, struct hotspot_frame *f)
{
	const struct hs_layout *l = &hs->layout;
	uint64_t method, bcp, cm, code_size, code;

	if (!fp || read_word(hs->pid, fp + 8 * l->interp_method_slot, &method) ||
	    read_word(hs->pid, fp + 8 * l->interp_bcp_slot, &bcp) ||
	    hs_read_member(hs->pid, method, l->method_const, &cm) ||
	    hs_read_member(hs->pid, cm, l->const_code_size, &code_size))
		return -EPROTO;
	f->method = method;
	f->kind = HOTSPOT_FRAME_NATIVE;
	f->bci = -1;
	/*
	 * A native method has no bytecode; its frame's bcp slot is 0, or what a
	 * register held when its first call linked it (the call into the VM
	 * saves the bcp register). So its code size tells, not the slot.
	 */
	if (!code_size)
		return 0;
	/* The bytecodes follow the ConstMethod. */
	code = cm + l->const_size;
	if (bcp < code || bcp >= code + code_size)
		return -EPROTO;
	f->kind = HOTSPOT_FRAME_INTERPRETED;
	f->bci = (int32_t)(bcp - code);
	return 0;
}

/*
 * Appends f to t's frames, grown as needed within HOTSPOT_MAX_FRAMES and the
 * call's budget (a JVM's memory may claim any number of threads and frames):
 * false when either is spent, or memory is.
 */
static bool push(struct hotspot_thread *t, size_t *budget, struct hotspot_frame f)
{
	if (t->nr_frames >= HOTSPOT_MAX_FRAMES || !*budget ||
	    VEC_RESERVE(t->frames, t->frames_cap, t->nr_frames + 1, 16))
		return false;
	(*budget)--;
	t->frames[t->nr_frames++] = f;
	return true;
}

/* The frames compiled blob at pc stands for, appended to t: 0 or an error (-E2BIG: full). */
static int compiled(const struct hotspot *hs, struct hotspot_thread *t, size_t *budget,
		    uint64_t blob, uint64_t pc, uint64_t sp)
{
	const struct hs_layout *l = &hs->layout;
	struct hs_scope scopes[64];
	uint64_t method, deopt, orig;
	uint32_t n;
	int err;

	switch (hs_code__kind(hs->pid, l, blob)) {
	case HS_BLOB_OTHER:
		return 0;
	case HS_BLOB_NATIVE_WRAPPER:
		err = hs_read_member(hs->pid, blob, l->nm_method, &method);
		if (!err &&
		    !push(t, budget, (struct hotspot_frame){ method, -1, HOTSPOT_FRAME_NATIVE }))
			err = -E2BIG;
		return err;
	case HS_BLOB_NMETHOD:
		break;
	}
	/* A frame being deoptimised returns to the handler; its own pc is kept in the frame. */
	if (l->nm_deopt_begin.off != HS_NONE) {
		err = hs_read_member(hs->pid, blob, l->nm_deopt_begin, &deopt);
	} else {
		err = hs_read_member(hs->pid, blob, l->nm_deopt_offset, &deopt);
		deopt = blob + (uint32_t)deopt;
	}
	if (!err && pc == deopt) {
		err = hs_read_member(hs->pid, blob, l->nm_orig_pc_offset, &orig);
		if (!err)
			err = read_word(hs->pid, sp + (uint32_t)orig, &pc);
	}
	if (!err)
		err = hs_code__scopes(hs->pid, l, blob, pc, scopes, 64, &n);
	for (uint32_t i = 0; !err && i < n; i++)
		if (!push(t, budget,
			  (struct hotspot_frame){ scopes[i].method, scopes[i].bci,
						  HOTSPOT_FRAME_COMPILED }))
			err = -E2BIG;
	return err;
}

/* The Java frames of thread t, from its anchor (hotspot.h). */
static void walk(const struct hotspot *hs, const struct hs_code *code, struct hotspot_thread *t,
		 size_t *budget, uint64_t anchor)
{
	const struct hs_layout *l = &hs->layout;
	int pid = hs->pid;
	uint64_t sp, pc, fp;

	t->end = HOTSPOT_END_NO_ANCHOR;
	if (hs_read_member(pid, anchor, l->anchor_sp, &sp) || !sp ||
	    hs_read_member(pid, anchor, l->anchor_pc, &pc) ||
	    hs_read_member(pid, anchor, l->anchor_fp, &fp))
		return;
	/* No pc saved: the return address is the word below the last Java sp. */
	t->end = HOTSPOT_END_UNREADABLE;
	if (!pc && read_word(pid, sp - 8, &pc))
		return;
	/* Stubs with a frame add none: the steps are bounded too. */
	for (int steps = 0; steps < 2 * HOTSPOT_MAX_FRAMES; steps++) {
		struct hotspot_frame f;
		uint64_t blob, frame_size, csp;
		int err;

		if (pc == hs->call_stub_return) {
			t->end = HOTSPOT_END_CALL_STUB;
			return;
		}
		if (pc >= hs->interp_lo && pc < hs->interp_hi) {
			/* The caller's sp is the one it had before any adapter extended it. */
			if (interpreted(hs, fp, &f) ||
			    read_word(pid, fp + 8 * l->interp_sender_sp_slot, &sp) ||
			    read_word(pid, fp + 8, &pc) || read_word(pid, fp, &fp))
				return;
			if (!push(t, budget, f))
				break;
			continue;
		}
		err = hs_code__blob(pid, l, code, pc, &blob);
		if (err == -ENOENT)
			t->end = HOTSPOT_END_OTHER_CODE;
		if (err || hs_read_member(pid, blob, l->blob_frame_size, &frame_size))
			return;
		/* Adapters and most stubs have no frame: a walk from them needs registers. */
		if ((int32_t)frame_size <= 0) {
			t->end = HOTSPOT_END_OTHER_CODE;
			return;
		}
		err = compiled(hs, t, budget, blob, pc, sp);
		if (err == -E2BIG)
			break;
		if (err)
			return;
		/* Frame sizes count words, the return address and saved fp among them. */
		csp = sp + 8 * (uint64_t)(uint32_t)frame_size;
		if (read_word(pid, csp - 8, &pc) || read_word(pid, csp - 16, &fp))
			return;
		sp = csp;
	}
	t->end = HOTSPOT_END_LIMIT;
}

/* The JavaThreads of the JVM's list into *jts (allocated), *n of them. */
static int java_threads(const struct hotspot *hs, uint64_t **jts, uint64_t *n)
{
	const struct hs_layout *l = &hs->layout;
	uint64_t list, arr, jt;
	int pid = hs->pid, err;

	*jts = NULL;
	*n = 0;
	if (l->java_thread_list == HS_NONE) {
		/* Before JDK 10, a linked list: bounded, a cycle ends it. */
		*jts = calloc(HS_MAX_THREADS, sizeof(**jts));
		if (!*jts)
			return -ENOMEM;
		err = procmem__u64(pid, l->thread_list_head, &jt);
		while (!err && jt && *n < HS_MAX_THREADS) {
			(*jts)[(*n)++] = jt;
			err = hs_read_member(pid, jt, l->thread_next, &jt);
		}
		return err;
	}
	err = procmem__u64(pid, l->java_thread_list, &list);
	if (!err)
		err = hs_read_member(pid, list, l->list_length, n);
	if (!err)
		err = hs_read_member(pid, list, l->list_threads, &arr);
	if (!err && *n > HS_MAX_THREADS)
		err = -EPROTO;
	if (err || !*n)
		return err;
	*jts = calloc(*n, sizeof(**jts));
	if (!*jts)
		return -ENOMEM;
	return procmem__read(pid, arr, *jts, *n * sizeof(**jts));
}

int hotspot__threads(struct hotspot *hs, struct hotspot_thread **out, size_t *nr)
{
	const struct hs_layout *l = &hs->layout;
	uint64_t n, *jts = NULL;
	struct hotspot_thread *threads = NULL;
	size_t i, budget = HS_MAX_TOTAL_FRAMES;
	struct hs_code code;
	int pid = hs->pid, err;

	*out = NULL;
	*nr = 0;
	err = java_threads(hs, &jts, &n);
	if (err || !n) {
		free(jts);
		return err;
	}
	threads = calloc(n, sizeof(*threads));
	if (!threads) {
		err = -ENOMEM;
		goto out;
	}
	if (!err)
		err = hs_code__heaps(pid, l, &code);
	for (i = 0; !err && i < n; i++) {
		struct hotspot_thread *t = &threads[i];
		uint64_t os = 0, state = 0;
		int terr;

		t->java_thread = jts[i];
		/* A thread exiting meanwhile reads as nothing: said, not fatal. */
		terr = hs_read_member(pid, jts[i], l->thread_osthread, &os);
		if (!terr && os)
			terr = hs_read_member(pid, os, l->osthread_tid, &t->tid);
		if (!terr)
			terr = hs_read_member(pid, jts[i], l->thread_state, &state);
		t->state = (int64_t)state;
		if (terr == -ESRCH)
			err = terr;
		else if (terr)
			t->end = HOTSPOT_END_UNREADABLE;
		else
			walk(hs, &code, t, &budget, jts[i] + l->thread_anchor.off);
	}
out:
	free(jts);
	if (err) {
		hotspot__threads_free(threads, n);
		return err;
	}
	*out = threads;
	*nr = n;
	return 0;
}

void hotspot__threads_free(struct hotspot_thread *threads, size_t nr)
{
	for (size_t i = 0; threads && i < nr; i++)
		free(threads[i].frames);
	free(threads);
}

int hotspot__method(const struct hotspot *hs, uint64_t method, struct hotspot_method *out)
{
	return hs_method_name(hs->pid, &hs->layout, method, out);
}

int hotspot__line(const struct hotspot *hs, const struct hotspot_method *m, int bci)
{
	return hs_method_line(hs->pid, &hs->layout, m->const_method, bci);
}

/*
 * A blob member the BPF step reads: its offset, if it has the width the step
 * reads, aligned to it, in the header's first SFBPF_HS_BLOB_SPAN bytes.
 */
static int blob_off(struct hs_member m, uint8_t width, __u16 *out)
{
	if (m.off == HS_NONE || m.off + width > SFBPF_HS_BLOB_SPAN || m.width != width ||
	    m.off % width)
		return -EPROTO;
	*out = (__u16)m.off;
	return 0;
}

/* Another member the BPF step reads: its offset, if it has the width the step reads. */
static int bpf_off(struct hs_member m, uint8_t width, __u16 *out)
{
	if (m.off == HS_NONE || m.off > UINT16_MAX || m.width != width)
		return -EPROTO;
	*out = (__u16)m.off;
	return 0;
}

int hotspot__bpf_settings(struct hotspot *hs, struct sfbpf_hs_proc *out)
{
	const struct hs_layout *l = &hs->layout;
	int err;

	memset(out, 0, sizeof(*out));
	err = hs_code__heaps(hs->pid, l, &hs->code);
	if (err)
		return err;
	if (hs->code.nr > SFBPF_HS_MAX_HEAPS || l->block_size > UINT16_MAX ||
	    l->const_size > UINT16_MAX)
		return -EPROTO;
	out->interp_lo = hs->interp_lo;
	out->interp_hi = hs->interp_hi;
	for (size_t i = 0; i < hs->code.nr; i++) {
		const struct hs_heap *h = &hs->code.heaps[i];

		out->heaps[i] = (struct sfbpf_hs_heap){
			.lo = h->lo, .hi = h->reserved_hi, .segmap = h->segmap, .shift = h->shift
		};
	}
	out->nr_heaps = hs->code.nr;
	out->block_size = (__u16)l->block_size;
	out->const_size = (__u16)l->const_size;
	out->interp_method_slot = (__s8)l->interp_method_slot;
	out->interp_bcp_slot = (__s8)l->interp_bcp_slot;
	out->interp_sender_sp_slot = (__s8)l->interp_sender_sp_slot;
	out->code_offset = l->blob_code_begin.off == HS_NONE;
	err = blob_off(l->blob_size, 4, &out->blob_size);
	if (!err)
		err = blob_off(l->blob_frame_size, 4, &out->blob_frame_size);
	/* An int, or JDK 25's int16_t. */
	out->complete_width = l->blob_frame_complete.width;
	if (!err)
		err = blob_off(l->blob_frame_complete, out->complete_width == 2 ? 2 : 4,
			       &out->blob_frame_complete);
	if (!err)
		err = out->code_offset ? blob_off(l->blob_code_offset, 4, &out->blob_code) :
					 blob_off(l->blob_code_begin, 8, &out->blob_code);
	if (!err)
		err = bpf_off(l->method_const, 8, &out->method_const);
	if (!err)
		err = bpf_off(l->const_code_size, 2, &out->const_code_size);
	out->unloads = hs->unloads;
	/* Optional: without it compiled frames are checked by their blob alone. */
	if (bpf_off(l->nm_compile_id, 4, &out->nm_compile_id) || !out->nm_compile_id)
		out->nm_compile_id = 0;
	return err;
}

int hotspot__unloads(const struct hotspot *hs, uint64_t *count)
{
	if (!hs->unloads)
		return -ENOENT;
	return procmem__u64(hs->pid, hs->unloads, count);
}

/* Which blob it is: an nmethod's compile id, and its size. */
static int blob_ident(const struct hotspot *hs, uint64_t blob, bool nmethod, uint64_t *ident)
{
	uint64_t size, id = 0;
	int err;

	err = hs_read_member(hs->pid, blob, hs->layout.blob_size, &size);
	if (!err && nmethod)
		err = hs_read_member(hs->pid, blob, hs->layout.nm_compile_id, &id);
	*ident = (id << 32) | (uint32_t)size;
	return err;
}

bool hotspot__blob_is(const struct hotspot *hs, uint64_t blob, uint64_t ident)
{
	uint64_t now, used;

	/* A flushed blob's block is free, or part of another. */
	if (hs_read_member(hs->pid, blob - hs->layout.block_size, hs->layout.block_used, &used) ||
	    !used)
		return false;
	return !blob_ident(hs, blob, ident >> 32 != 0, &now) && now == ident;
}

bool hotspot__owns(const struct hotspot *hs, uint64_t pc)
{
	if (pc >= hs->interp_lo && pc < hs->interp_hi)
		return true;
	for (size_t i = 0; i < hs->code.nr; i++)
		if (pc >= hs->code.heaps[i].lo && pc < hs->code.heaps[i].reserved_hi)
			return true;
	return false;
}

bool hotspot__method_is(const struct hotspot *hs, uint64_t method, uint64_t key)
{
	uint64_t now;

	return !hs_method_key(hs->pid, &hs->layout, method, &now) && now == key;
}

int hotspot__method_key(const struct hotspot *hs, uint64_t method, uint64_t *key)
{
	return hs_method_key(hs->pid, &hs->layout, method, key);
}

int hotspot__code_pc(struct hotspot *hs, uint64_t pc, bool leaf, struct hotspot_code_frames *out)
{
	const struct hs_layout *l = &hs->layout;
	struct hs_scope scopes[HOTSPOT_MAX_SCOPES];
	uint64_t name, method;
	enum hs_blob_kind kind;
	int err;

	out->nr = 0;
	out->stub[0] = 0;
	if (pc >= hs->interp_lo && pc < hs->interp_hi) {
		out->blob = hs->interp_lo;
		out->ident = 0;
		snprintf(out->stub, sizeof(out->stub), "Interpreter");
		return 0;
	}
	if (!hotspot__owns(hs, pc - !leaf))
		return -ENOENT;
	err = hs_code__blob(hs->pid, l, &hs->code, pc - !leaf, &out->blob);
	/* Past a heap's committed code as last read: it may have grown. */
	if (err == -ENOENT && !hs_code__heaps(hs->pid, l, &hs->code))
		err = hs_code__blob(hs->pid, l, &hs->code, pc - !leaf, &out->blob);
	if (err)
		return err;
	kind = hs_code__kind(hs->pid, l, out->blob);
	err = blob_ident(hs, out->blob, kind != HS_BLOB_OTHER, &out->ident);
	if (err)
		return err;
	switch (kind) {
	case HS_BLOB_OTHER:
		if (hs_read_member(hs->pid, out->blob, l->blob_name, &name) ||
		    procmem__str(hs->pid, name, out->stub, sizeof(out->stub)) < 0)
			snprintf(out->stub, sizeof(out->stub), "[stub]");
		return 0;
	case HS_BLOB_NATIVE_WRAPPER:
		err = hs_read_member(hs->pid, out->blob, l->nm_method, &method);
		if (!err) {
			out->frames[0] = (struct hotspot_frame){ method, -1, HOTSPOT_FRAME_NATIVE };
			out->nr = 1;
		}
		return err;
	case HS_BLOB_NMETHOD:
		break;
	}
	err = leaf ? hs_code__scopes_near(hs->pid, l, out->blob, pc, scopes, HOTSPOT_MAX_SCOPES,
					  &out->nr) :
		     hs_code__scopes(hs->pid, l, out->blob, pc, scopes, HOTSPOT_MAX_SCOPES,
				     &out->nr);
	for (uint32_t i = 0; !err && i < out->nr; i++)
		out->frames[i] = (struct hotspot_frame){ scopes[i].method, scopes[i].bci,
							 HOTSPOT_FRAME_COMPILED };
	return err;
}
