/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Mappings found in the kernel (5.17 and later: bpf_find_vma()). A process
 * sampled before the loader has read its mappings (an exec'd program's first
 * milliseconds: a build's cc1, as and ld live little longer) is walked with a
 * table of its own, made as the walk meets each address: the VMA holding it,
 * its file's identity as the kernel has it (superblock device, inode number,
 * change time: struct sfbpf_ident_key) and the object slot the loader
 * published for exactly that identity (idents), with the bias from the VMA's
 * start and file offset and the object's own segment layout. A file written
 * since, another tenant's copy, an overlay's layer: another identity, no
 * table, and the walk stops there (counted). The loader is still told of the
 * process (a no-proc report) and reads it as before. Included by unwind.h.
 * Only the CPU profiler (the sampled task is current) sets have_find_vma.
 */
#ifndef SFBPF_VMAFIND_H
#define SFBPF_VMAFIND_H

/* Mappings one walk finds at most (abi.h). */
#define VMAFIND_MAX_MAPS SFBPF_VMA_MAX_MAPS
#define VMAFIND_VM_EXEC 0x4 /* include/linux/mm.h */
#define VMAFIND_NSEC_MASK ((1u << 30) - 1) /* nanoseconds < 10^9 < 2^30 */
/* An ELF header's first six bytes read as a little-endian __u64: "\177ELF", 64-bit, LSB. */
#define VMAFIND_ELF64_LSB 0x0102464c457fULL
#define VMAFIND_ELF_HEAD_MASK 0xffffffffffffULL

/* This CPU's table of the walk in progress (a struct sfbpf_proc, its count <= VMAFIND_MAX_MAPS). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfbpf_proc);
} vma_procs SEC(".maps");

/*
 * The mappings found for a process, kept for its next samples: a program run
 * in interrupt context makes one bpf_find_vma() at most (the mm's lock is
 * let go by an irq_work after it, and the next call finds that work busy),
 * so a process's program, libc and ld.so are found over its first samples.
 * Trusted for SFBPF_VMA_TRUST_NS (abi.h) from the first, about when the
 * loader's entry takes over, and for the mm it was made for only (a new
 * image has a new one: the exec's order of programs does not matter). Not
 * dropped at exit: userspace names a short-lived process's frames from it.
 */

/* Made from this CPU's table (a struct sfbpf_proc: too big for the stack), so its head is one. */
_Static_assert(__builtin_offsetof(struct sfbpf_vma_kept, maps) ==
			       __builtin_offsetof(struct sfbpf_proc, maps) &&
		       __builtin_offsetof(struct sfbpf_vma_kept, start_ticks) ==
			       __builtin_offsetof(struct sfbpf_proc, start_ticks) &&
		       sizeof(struct sfbpf_vma_kept) <= sizeof(struct sfbpf_proc),
	       "vma_cache values are made from a struct sfbpf_proc");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024); /* sized by the loader with the CPUs (profile.c) */
	__type(key, __u32); /* tgid */
	__type(value, struct sfbpf_vma_kept);
} vma_cache SEC(".maps");

/* Identity -> object slot, written by the loader (sized with the objects map). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct sfbpf_ident_key);
	__type(value, struct sfbpf_ident);
} idents SEC(".maps");

/* The current task's mm, as an address: what a kept table was made for. */
static __always_inline __u64 vmafind_mm(void)
{
	return (__u64)BPF_CORE_READ(bpf_get_current_task_btf(), mm);
}

/* The current image's exec id (struct sfbpf_vma_kept): which of the process's execs. */
static __always_inline __u64 vmafind_exec_id(void)
{
	return BPF_CORE_READ(bpf_get_current_task_btf(), self_exec_id);
}

/* Set by the loader where bpf_find_vma() exists, for the CPU profiler only. */
const volatile bool have_find_vma = false;
const volatile __u32 page_shift = 12;

/* The inode's change time moved: a timespec64 until 6.6, __i_ctime until 6.11. */
struct inode___ctime_old {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));

struct inode___ctime_66 {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));

/*
 * bpf_find_vma()'s context, on the stack: small, as the walk calls it from
 * bpf_loop()'s callback (6.1 counts the three frames' stacks together, 512
 * bytes at most). The mapping found goes to m, in a map value.
 */
struct vmafind_ctx {
	struct sfbpf_mapping *m;
	__u32 miss; /* 1 + enum sfbpf_vma_miss, or 0: found */
};

/* k: the identity of inode as the kernel has it. */
static __always_inline void vmafind_file_key(struct sfbpf_ident_key *k, struct inode *inode)
{
	k->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k->ino = BPF_CORE_READ(inode, i_ino);
	if (bpf_core_field_exists(inode->i_ctime_sec)) {
		k->ctime_sec = BPF_CORE_READ(inode, i_ctime_sec);
		/* Multigrain timestamps (6.13) keep a flag in its top bit: below 2^30 is time. */
		k->ctime_nsec = BPF_CORE_READ(inode, i_ctime_nsec) & VMAFIND_NSEC_MASK;
	} else if (bpf_core_field_exists(((struct inode___ctime_66 *)inode)->__i_ctime)) {
		k->ctime_sec = BPF_CORE_READ((struct inode___ctime_66 *)inode, __i_ctime.tv_sec);
		k->ctime_nsec = BPF_CORE_READ((struct inode___ctime_66 *)inode, __i_ctime.tv_nsec);
	} else {
		k->ctime_sec = BPF_CORE_READ((struct inode___ctime_old *)inode, i_ctime.tv_sec);
		k->ctime_nsec = BPF_CORE_READ((struct inode___ctime_old *)inode, i_ctime.tv_nsec);
	}
}

/* The slot published for the file of inode, by its identity as the kernel has it, or NULL. */
static __always_inline const struct sfbpf_ident *vmafind_ident(struct inode *inode)
{
	struct sfbpf_ident_key k = {};

	vmafind_file_key(&k, inode);
	return bpf_map_lookup_elem(&idents, &k);
}

/*
 * k (all zero): the vDSO's key (abi.h, SFBPF_IDENT_VDSO_INO), if vma,
 * starting at start, is the mapping the mm names as its vDSO and holds a
 * 64-bit ELF image. Its code calls into the kernel (clock_gettime of a CPU
 * clock, getcpu) and is sampled there as often as in the program. Its ELF
 * header is read into k itself: the callback's stack adds up with the walk's
 * (6.1's limit on the calls' total).
 */
static __always_inline bool vmafind_vdso_key(struct sfbpf_ident_key *k, struct vm_area_struct *vma,
					     __u64 start)
{
	if ((__u64)BPF_CORE_READ(vma, vm_mm, context.vdso) != start ||
	    bpf_probe_read_user(&k->ctime_sec, sizeof(k->ctime_sec), (const void *)start) ||
	    ((__u64)k->ctime_sec & VMAFIND_ELF_HEAD_MASK) != VMAFIND_ELF64_LSB)
		return false;
	k->ctime_sec = 0;
	k->ino = SFBPF_IDENT_VDSO_INO;
	return true;
}

static long vmafind_cb(struct task_struct *task, struct vm_area_struct *vma, void *arg)
{
	struct sfbpf_ident_key k = {};
	struct vmafind_ctx *c = arg;
	const struct sfbpf_ident *id;
	struct file *file;
	__u64 start, pgoff;

	(void)task;
	if (!(BPF_CORE_READ(vma, vm_flags) & VMAFIND_VM_EXEC)) {
		c->miss = 1 + SFBPF_VMA_NOT_FILE;
		return 0;
	}
	start = BPF_CORE_READ(vma, vm_start);
	file = BPF_CORE_READ(vma, vm_file);
	if (file) {
		vmafind_file_key(&k, BPF_CORE_READ(file, f_inode));
	} else if (!vmafind_vdso_key(&k, vma, start)) {
		c->miss = 1 + SFBPF_VMA_NOT_FILE;
		return 0;
	}
	id = bpf_map_lookup_elem(&idents, &k);
	if (!id) {
		c->miss = 1 + SFBPF_VMA_NO_IDENT;
		return 0;
	}
	/* The vDSO is mapped from its image's first byte: offset 0, its ELF address the delta. */
	pgoff = file ? BPF_CORE_READ(vma, vm_pgoff) : 0;
	c->m->start = start;
	c->m->end = BPF_CORE_READ(vma, vm_end);
	/* ELF address = file offset + delta; the VMA maps offset pgoff at start. */
	c->m->bias = start - (pgoff << page_shift) - id->delta;
	c->m->obj = id->obj;
	c->m->flags = 0;
	c->miss = 0;
	return 0;
}

/* Appends m to p and to the process's kept mappings: its index in p. */
static __always_inline int vmafind_keep(struct sfbpf_unwind_state *st, struct sfbpf_proc *p,
					const struct sfbpf_mapping *m)
{
	struct sfbpf_vma_kept *kept;
	__u32 tgid, n = p->count, k, i;

	/* Masked where it is used: the compiler drops a mask it can prove, the verifier cannot. */
	i = n;
	barrier_var(i);
	i &= VMAFIND_MAX_MAPS - 1;
	p->maps[i] = *m;
	p->count = n + 1;
	st->vma_found++;
	/* For the process's next samples (vmafind_begin() made or checked its entry). */
	tgid = bpf_get_current_pid_tgid() >> 32;
	kept = bpf_map_lookup_elem(&vma_cache, &tgid);
	if (kept && kept->start_ticks == p->start_ticks && kept->mm == vmafind_mm() &&
	    kept->exec_id == vmafind_exec_id()) {
		k = kept->count;
		if (k < VMAFIND_MAX_MAPS) {
			kept->count = k + 1;
			barrier_var(k);
			k &= VMAFIND_MAX_MAPS - 1;
			kept->maps[k] = *m;
		}
	}
	return (int)i;
}

/*
 * The program's text, found without bpf_find_vma() (a sample makes one at
 * most): its bounds are the mm's start_code and end_code (binfmt_elf: its
 * lowest executable segment's address, plus the load bias), its file the
 * mm's exe_file. Added to p if its identity has a table.
 */
static __always_inline bool vmafind_program_map(struct sfbpf_mapping *m)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const struct sfbpf_ident *id;
	struct mm_struct *mm;
	struct file *exe;

	mm = BPF_CORE_READ(task, mm);
	exe = mm ? BPF_CORE_READ(mm, exe_file) : NULL;
	if (!exe)
		return false;
	id = vmafind_ident(BPF_CORE_READ(exe, f_inode));
	if (!id)
		return false;
	m->start = BPF_CORE_READ(mm, start_code);
	m->end = BPF_CORE_READ(mm, end_code);
	m->bias = m->start - id->text_vaddr;
	m->obj = id->obj;
	m->flags = 0;
	return m->start < m->end;
}

static __always_inline void vmafind_program(struct sfbpf_unwind_state *st, struct sfbpf_proc *p)
{
	if (p->count < VMAFIND_MAX_MAPS && vmafind_program_map(&st->vma_m))
		vmafind_keep(st, p, &st->vma_m);
}

/*
 * In process context (interrupts on, so bpf_find_vma() may be called again
 * and again): the executable file mapping at addr, if its identity has a
 * table, added to the current process's kept mappings; one it falls in is
 * found again in its place (a mapping made over another: a library loaded
 * where one was unloaded), or emptied if nothing is found there now, so that
 * the kept table never describes what is no longer mapped (the walk, and
 * the names of a process gone before it was read: symbolize_gone.c).
 */
static __always_inline __u32 vmafind_note(struct sfbpf_vma_kept *kept, __u64 addr)
{
	struct vmafind_ctx c = { .miss = 1 };
	__u32 n = kept->count, i, at = VMAFIND_MAX_MAPS;

	for (i = 0; i < VMAFIND_MAX_MAPS; i++) {
		if (i >= n)
			break;
		if (addr >= kept->maps[i].start && addr < kept->maps[i].end) {
			at = i;
			break;
		}
	}
	if (at == VMAFIND_MAX_MAPS && n >= VMAFIND_MAX_MAPS)
		return 1 + SFBPF_VMA_FULL;
	/* Written in place, counted only if found. */
	i = at < VMAFIND_MAX_MAPS ? at : n;
	barrier_var(i);
	i &= VMAFIND_MAX_MAPS - 1;
	c.m = &kept->maps[i];
	if (!bpf_find_vma(bpf_get_current_task_btf(), addr, vmafind_cb, &c, 0) && !c.miss) {
		if (at == VMAFIND_MAX_MAPS)
			kept->count = n + 1;
	} else if (at < VMAFIND_MAX_MAPS) {
		kept->maps[i].end = kept->maps[i].start;
	}
	return c.miss;
}

/*
 * At exec (the new image in place, its registers at ld.so's entry, or the
 * program's): a fresh kept table for the process, with its program's text
 * and its interpreter, before its first sample. p: this CPU's table.
 */
static __always_inline void vmafind_exec(__u32 tgid, __u64 start_ticks, __u64 entry)
{
	struct sfbpf_mapping m = {};
	struct sfbpf_vma_kept *kept;
	struct sfbpf_proc *p;
	__u32 zero = 0;

	if (!have_find_vma)
		return;
	p = bpf_map_lookup_elem(&vma_procs, &zero);
	if (!p)
		return;
	p->count = 0;
	p->generation = 0;
	p->start_ticks = start_ticks;
	if (bpf_map_update_elem(&vma_cache, &tgid, p, BPF_ANY))
		return;
	kept = bpf_map_lookup_elem(&vma_cache, &tgid);
	if (!kept)
		return;
	kept->born_ns = bpf_ktime_get_ns();
	kept->mapped_ns = 0;
	kept->mm = vmafind_mm();
	kept->exec_id = vmafind_exec_id();
	if (vmafind_program_map(&m)) {
		kept->maps[0] = m;
		kept->count = 1;
	}
	if (entry)
		vmafind_note(kept, entry);
}

/* The current image's kept table, if it is trusted still (made at its exec or a first sample). */
static __always_inline struct sfbpf_vma_kept *vmafind_kept(__u32 tgid, __u64 now)
{
	struct sfbpf_vma_kept *kept = bpf_map_lookup_elem(&vma_cache, &tgid);

	if (kept && now - kept->born_ns < SFBPF_VMA_TRUST_NS && kept->mm == vmafind_mm() &&
	    kept->exec_id == vmafind_exec_id())
		return kept;
	return NULL;
}

/*
 * A mapping made by mmap() at addr in a process whose kept table exists
 * (exec'd under us). An executable file's with a table dates the kept one:
 * an entry the loader read before then lacks it (vmafind_newer). One
 * without a table does not: the kept mappings would serve it no better.
 */
static __always_inline void vmafind_mmap(__u32 tgid, __u64 addr)
{
	__u64 now = bpf_ktime_get_ns();
	struct sfbpf_vma_kept *kept;
	__u32 miss, n, i;
	__u64 vdso;

	if (!have_find_vma)
		return;
	kept = vmafind_kept(tgid, now);
	if (!kept)
		return;
	miss = vmafind_note(kept, addr);
	if (!miss)
		kept->mapped_ns = now;
	/*
	 * The vDSO, once: its pages are faulted in when ld.so first reads its
	 * header (before it maps the libraries), not at the exec, and the walk
	 * checks that header (vmafind_vdso_key). Found here, a clock read in
	 * the program's first microseconds walks through it.
	 */
	vdso = (__u64)BPF_CORE_READ(bpf_get_current_task_btf(), mm, context.vdso);
	n = kept->count;
	for (i = 0; i < VMAFIND_MAX_MAPS; i++) {
		if (i >= n || !vdso)
			break;
		if (kept->maps[i].start == vdso)
			return;
	}
	if (vdso)
		vmafind_note(kept, vdso);
}

/*
 * True if proc, the loader's entry for the current process, was read before
 * the process mapped code the kernel has seen since: ld.so still mapping the
 * libraries when a first sample asked for the entry, and a process that
 * lives for milliseconds gone before the refresh that follows. Its kept
 * table, which every mmap() brings up to date, is walked instead, until
 * the loader reads the process again (the walk's no-proc report asks for
 * it). Entries older than the kept table's trust cost no lookup. now: the
 * sample's time.
 */
static __always_inline bool vmafind_newer(const struct sfbpf_proc *proc, __u32 tgid,
					  __u64 start_ticks, __u64 now)
{
	__u64 read_ns = proc->read_ns;
	struct sfbpf_vma_kept *kept;

	if (!have_find_vma || !read_ns || now - read_ns >= SFBPF_VMA_TRUST_NS)
		return false;
	kept = vmafind_kept(tgid, now);
	return kept && kept->start_ticks == start_ticks && kept->mapped_ns >= read_ns;
}

/*
 * Adds the mapping of addr, found in the kernel, to p: its index, or -1 with
 * why in st->vma_miss. p is this CPU's vma_procs value, in the order the
 * walk met its mappings (vmafind_find() looks at each: a sorted insert's
 * moves were more than the verifier would follow inside the frame loop).
 */
static __always_inline int vmafind_add(struct sfbpf_unwind_state *st, struct sfbpf_proc *p,
				       __u64 addr)
{
	struct vmafind_ctx c = { .m = &st->vma_m, .miss = 1 + SFBPF_VMA_NO_VMA };

	if (p->count >= VMAFIND_MAX_MAPS) {
		st->vma_miss = 1 + SFBPF_VMA_FULL;
		return -1;
	}
	/* The program's text needs no lookup (its file unknown at the exec, known now). */
	if (vmafind_program_map(c.m) && addr >= c.m->start && addr < c.m->end)
		return vmafind_keep(st, p, c.m);
	if (st->vma_looked) {
		st->vma_miss = 1 + SFBPF_VMA_LATER;
		return -1;
	}
	st->vma_looked = 1;
	if (bpf_find_vma(bpf_get_current_task_btf(), addr, vmafind_cb, &c, 0) || c.miss ||
	    addr < c.m->start || addr >= c.m->end) {
		st->vma_miss = c.miss ? c.miss : 1 + SFBPF_VMA_NO_VMA;
		return -1;
	}
	return vmafind_keep(st, p, c.m);
}

/*
 * The index of addr's mapping among those p holds, or -1: a global function
 * (the walk in bpf_loop() is the only one that finds VMAs), so that the
 * verifier checks its loop over the table once, not again for each state
 * that reaches a call (with unwind_find_mapping()'s branches, most of what
 * it processed for sfbpf_profile). The lookup in the kernel stays inline:
 * a call more above its callback took 6.1 over 512 bytes of stack. To the
 * verifier the result is any int: every use masks it.
 */
__noinline int vmafind_held(const struct sfbpf_proc *p, __u64 addr)
{
	__u32 n, i;

	if (!p)
		return -1;
	n = p->count;
	for (i = 0; i < VMAFIND_MAX_MAPS; i++) {
		if (i >= n)
			break;
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return (int)i;
	}
	return -1;
}

/* The index of addr's mapping in p, found in the kernel if p lacks it, or -1. */
static __always_inline int vmafind_find(struct sfbpf_unwind_state *st, struct sfbpf_proc *p,
					__u64 addr)
{
	int i = vmafind_held(p, addr);

	return i >= 0 ? i : vmafind_add(st, p, addr);
}

/*
 * Inside execve the saved user registers are the old image's until the new
 * one's entry is set, while the mm may be the new one already: an old PC
 * looked up there could land in a new mapping. A process without an entry
 * is not walked there: stop execve, no user frames (ustack_begin()); one
 * with an entry walks with it, the old image's until the exec event.
 */
static __always_inline bool vmafind_in_execve(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (!bpf_core_field_exists(task->in_execve))
		return false;
	return BPF_CORE_READ_BITFIELD_PROBED(task, in_execve);
}

/*
 * A walk of the current task's stack without its process's entry (tgid,
 * started at start_ticks): this CPU's table, with the mappings found for the
 * process before and the mapping of pc, or NULL (why in st->vma_miss).
 */
static __always_inline struct sfbpf_proc *vmafind_begin(struct sfbpf_unwind_state *st, __u64 pc,
							__u32 tgid, __u64 start_ticks)
{
	struct sfbpf_vma_kept *kept;
	__u64 now = bpf_ktime_get_ns();
	struct sfbpf_proc *p;
	__u32 zero = 0, i, n;

	if (!have_find_vma)
		return NULL;
	p = bpf_map_lookup_elem(&vma_procs, &zero);
	if (!p)
		return NULL;
	p->count = 0;
	p->generation = 0;
	p->start_ticks = start_ticks;
	kept = bpf_map_lookup_elem(&vma_cache, &tgid);
	if (kept && kept->start_ticks == start_ticks && now - kept->born_ns < SFBPF_VMA_TRUST_NS &&
	    kept->mm == vmafind_mm() && kept->exec_id == vmafind_exec_id()) {
		n = kept->count;
		for (i = 0; i < VMAFIND_MAX_MAPS && i < n; i++)
			p->maps[i] = kept->maps[i];
		p->count = i;
	} else if (!bpf_map_update_elem(&vma_cache, &tgid, p, BPF_ANY)) {
		kept = bpf_map_lookup_elem(&vma_cache, &tgid);
		if (kept) {
			kept->born_ns = now;
			kept->mapped_ns = 0;
			kept->mm = vmafind_mm();
			kept->exec_id = vmafind_exec_id();
		}
		/* A new process: its program's text first, found without a lookup. */
		vmafind_program(st, p);
	}
	if (vmafind_find(st, p, pc) < 0)
		return NULL;
	st->vma_walk = 1;
	return p;
}

#endif /* SFBPF_VMAFIND_H */
