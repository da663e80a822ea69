// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Processes coming and going, as a session's symbolizer sees them: the
 * lifecycle's callbacks (exec, fork, exit), the kernel's mappings of a
 * process gone before it was read, and when an exited process's mappings
 * are forgotten (after the samples taken before its exit are read and, if
 * it was sampled, written). See docs/DESIGN-lifecycle.md.
 */
#include <bpf/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/abi.h"
#include "maps/tables.h"
#include "profile/profile.h"
#include "profile/runtimes.h"
#include "profile/session_int.h"
#include "profile/snapshot.h"
#include "symbols/symbolize.h"

/*
 * A new image: the symbolizer starts a new generation of its mappings (also
 * for a child whose parent's were copied at its fork, and not sampled yet,
 * or one it does not know, whose names the kernel's mappings may give).
 */
void session_on_exec(void *ctx, int pid, uint64_t time_ns, uint64_t start_ticks, uint64_t exec_id)
{
	struct symbolizer_image image = { start_ticks, exec_id };
	struct session *s = ctx;

	session_bit_set(s->gone, pid, false);
	symbolizer__note_exec(s->sym, pid, time_ns, &image, session_bit_test(s->sampled, pid));
}

const char *session_jit_name(void *ctx, int pid, uint64_t addr)
{
	struct session *s = ctx;
	struct sym_info si;

	/* A file's code is named by its symbols, never by a perf map. */
	if (symbolizer__user(s->sym, pid, addr, &si) || si.path)
		return NULL;
	return si.name;
}

/* runtime_host's set_jit: the tracker's table of the shape for the runtime's JIT code. */
int session_set_jit(void *ctx, int pid, uint64_t start_ticks, const struct jitcode_region *r)
{
	struct session *s = ctx;

	return proctrack__set_jit(s->procs, pid, start_ticks, r);
}

/*
 * symbolizer_kmaps_fn: the mappings the kernel found for pid (vma_cache),
 * kept past its exit, if made for image (the exec event's process start and
 * exec id); each with the files its table's slot is published for (a file
 * sharing the table: the same bytes, so the same names), unless the slot
 * was freed since the table was made (it may name another file now).
 */
size_t session_kernel_maps(void *ctx, int pid, const struct symbolizer_image *image,
			   struct symbolizer_kmap *out, size_t max)
{
	struct session *s = ctx;
	struct tables_slot_file f[2];
	const struct sfbpf_mapping *m;
	struct sfbpf_vma_kept kept;
	uint32_t key = (uint32_t)pid, i, k, nf;
	const char *name;
	uint64_t vaddr;
	size_t n = 0;
	int fd;

	if (!s->prof || !s->tables || (fd = profile__vma_cache_fd(s->prof)) < 0 ||
	    bpf_map_lookup_elem(fd, &key, &kept) || !image->exec_id ||
	    kept.exec_id != image->exec_id || kept.start_ticks != image->start_ticks)
		return 0;
	for (i = 0; i < kept.count && i < SFBPF_VMA_MAX_MAPS; i++) {
		m = &kept.maps[i];
		nf = tables__slot_files(s->tables, m->obj, kept.born_ns, f, 2, &name);
		vaddr = m->start - m->bias; /* the ELF address of its start */
		/* The vDSO's slot names no file (procs/vdso.h): the image is every process's. */
		if (!nf && name && !strcmp(name, "[vdso]") && n < max) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].start = m->start;
			out[n].end = m->end;
			out[n].vdso = true;
			out[n++].path = name;
			continue;
		}
		for (k = 0; k < nf && n < max; k++) {
			if (vaddr < f[k].delta)
				continue;
			out[n].start = m->start;
			out[n].end = m->end;
			out[n].offset = vaddr - f[k].delta;
			memcpy(out[n].st, f[k].st, sizeof(out[n].st));
			out[n].vdso = false;
			out[n++].path = name;
		}
	}
	return n;
}

/*
 * A child that unwinds with its parent's entry: its names are the parent's
 * mappings, copied now (a subshell is often gone before its samples are read),
 * and its runtime's frames are read through its parent where the fork
 * shared their memory (runtimes__fork()).
 */
void session_on_fork(void *ctx, int pid, int parent, uint64_t time_ns, uint64_t start_ticks)
{
	struct session *s = ctx;

	session_bit_set(s->gone, pid, false);
	symbolizer__note_fork(s->sym, pid, parent, time_ns);
	if (s->runtimes)
		runtimes__fork(s->runtimes, pid, parent, start_ticks);
}

void session_on_maps(void *ctx, int pid, uint64_t start_ticks, const struct procmaps *pm)
{
	struct session *s = ctx;

	if (s->rt_listener.updated)
		s->rt_listener.updated(s->rt_listener.ctx, pid, start_ticks, pm);
	/*
	 * Its first read (at the exec) came before ld.so mapped its libraries;
	 * a process whose first frames there are sampled just before it exits
	 * (a slow table, code that calls no library until its end) would have
	 * them read after the exit, unnamed.
	 */
	symbolizer__note_maps(s->sym, pid, pm);
}

/*
 * Sampled before its entry (lifecycle.h, on_young): its runtime, if it runs
 * one, attaches from its mappings as they are now, and is told again at the
 * refresh that builds its entry.
 */
void session_on_young(void *ctx, int pid, uint64_t time_ns)
{
	struct session *s = ctx;
	struct procmaps *pm = NULL;
	uint64_t ticks;

	(void)time_ns;
	if (!s->rt_listener.updated || proctrack_start_ticks(pid, &ticks) ||
	    procmaps__snapshot(pid, 0, &pm))
		return;
	s->rt_listener.updated(s->rt_listener.ctx, pid, ticks, pm);
	procmaps__free(pm);
}

void session_on_removed(void *ctx, int pid)
{
	struct session *s = ctx;

	if (s->rt_listener.removed)
		s->rt_listener.removed(s->rt_listener.ctx, pid);
}

void session_forget_oldest(struct session *s)
{
	struct session_exited *x = &s->exited[s->exited_head++ % SESSION_MAX_EXITED];

	symbolizer__forget_pid(s->sym, x->pid);
	session_bit_set(s->sampled, x->pid, false);
	s->forgotten++;
}

struct keep_batch {
	uint32_t *pids; /* sorted */
	size_t n;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool in_batch(uint32_t pid, void *ctx)
{
	const struct keep_batch *b = ctx;

	return bsearch(&pid, b->pids, b->n, sizeof(*b->pids), cmp_u32) != NULL;
}

/*
 * Past max_exited exits, a run that writes its outputs at its end (the
 * folded file of a configure, thousands of processes) named the oldest
 * processes' stacks [unknown]: their mappings were forgotten first. Their
 * stacks are named now instead, a quarter of the ring at a time (one walk
 * of the aggregator each), and the outputs take those names
 * (session__snapshot()). SFBPF_NO_KEEP_EXITED=1: forgotten unnamed, as
 * before (the tests' negative control).
 */
void session_forget_overflow(struct session *s)
{
	uint32_t n = s->exited_tail - s->exited_head, i, most = s->max_exited / 4;
	struct keep_batch b = { 0 };
	const char *no = getenv("SFBPF_NO_KEEP_EXITED");

	if (most > n)
		most = n;
	/*
	 * Exits seen in an earlier poll round only: every sample before them
	 * has been read (on a busy machine, samples of a process come in the
	 * round after its exit). A full ring takes the oldest anyway.
	 */
	while (b.n < most &&
	       s->exited[(s->exited_head + b.n) % SESSION_MAX_EXITED].drain < s->drains)
		b.n++;
	if (!b.n && n >= SESSION_MAX_EXITED)
		b.n = most ? most : 1;
	if (!b.n)
		return;
	b.pids = no && *no ? NULL : malloc(b.n * sizeof(*b.pids));
	if (b.pids) {
		for (i = 0; i < b.n; i++)
			b.pids[i] =
				(uint32_t)s->exited[(s->exited_head + i) % SESSION_MAX_EXITED].pid;
		qsort(b.pids, b.n, sizeof(*b.pids), cmp_u32);
		if (!snapshot__keep(&s->kept, s->agg, s->sym, s->ksyms, in_batch, &b))
			s->kept_processes += b.n;
		free(b.pids);
	}
	for (i = 0; i < b.n; i++)
		session_forget_oldest(s);
}

/* pid's exit, to be forgotten once the samples before it are read and written. */
void session_queue_exited(struct session *s, int pid)
{
	if (s->exited_tail - s->exited_head >= s->max_exited)
		session_forget_overflow(s);
	s->exited[s->exited_tail++ % SESSION_MAX_EXITED] =
		(struct session_exited){ .pid = pid, .drain = s->drains };
}

/* A forked child's copy of its parent's names, until its samples so far are read. */
void session_forget_unsampled(struct session *s, bool all)
{
	struct session_exited *x;

	while (s->unsampled_head != s->unsampled_tail) {
		x = &s->unsampled[s->unsampled_head % SESSION_MAX_EXITED];
		if (!all && x->drain >= s->drains)
			break;
		s->unsampled_head++;
		/* Sampled after its exit: the exited ring has it now. */
		if (!session_bit_test(s->sampled, x->pid))
			symbolizer__forget_pid(s->sym, x->pid);
	}
}

static void queue_unsampled(struct session *s, int pid)
{
	if (s->unsampled_tail - s->unsampled_head >= SESSION_MAX_EXITED)
		session_forget_unsampled(s, true);
	s->unsampled[s->unsampled_tail++ % SESSION_MAX_EXITED] =
		(struct session_exited){ .pid = pid, .drain = s->drains };
}

/*
 * An exited process: its mappings stay with the symbolizer (the aggregated
 * stacks are symbolized at output time) until SESSION_MAX_EXITED later exits,
 * or session__forget_exited().
 */
void session_on_exit(void *ctx, int pid, uint64_t time_ns)
{
	struct session *s = ctx;

	(void)time_ns;
	/* A sample read after this (note_sample) finds the exit already seen. */
	session_bit_set(s->gone, pid, true);
	if (session_bit_test(s->sampled, pid))
		session_queue_exited(s, pid);
	else if (symbolizer__has(s->sym, pid) && s->unsampled)
		queue_unsampled(s, pid);
}

void session__forget_exited(struct session *s)
{
	/* Its stacks are written (or dropped) by the caller: names kept for them go too. */
	snapshot__free(s->kept);
	s->kept = NULL;
	/* Exits seen in an earlier poll round: samples before them have been read. */
	while (s->exited && s->exited_head != s->exited_tail &&
	       s->exited[s->exited_head % SESSION_MAX_EXITED].drain < s->drains)
		session_forget_oldest(s);
}
