/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ABI between the BPF unwinder (profile.bpf.c, ustack.h) and userspace:
 * every type and constant both sides read. Included by BPF code (after
 * vmlinux.h) and by userspace (after <stdint.h>). Two more files are ABI too:
 * offcpu_abi.h, the off-CPU program's records on top of this one, and the
 * maps and settings of unwind_maps.h (and arch.h's user_pac_mask), whose
 * names, sizes and `const volatile` values the loader sets through the
 * skeletons before load (userspace/profile/profile.c, offcpu.c, bpfprog.c).
 *
 * Tables: a userspace loader flattens each object's SFrame section into rows,
 * one per FRE, sorted by PC offset (the ELF virtual address the FRE starts at).
 * All objects' rows live in one global row space; an object owns a contiguous
 * range of it. Recovery rules are deduplicated into a global rule array (most
 * functions share a handful). A per-object page index narrows the binary search
 * to the rows of one page of code, and lets a row keep only the low 16 bits of
 * its PC: 4 bytes a row. The row and page spaces are made of segments, one
 * BPF array each, created as tables need them and freed when none is left in
 * them: the maps' memory follows what is loaded. See docs/DESIGN-unwinder.md.
 */
#ifndef SFBPF_ABI_H
#define SFBPF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * User frames per stack (upper bound of -S): deep Java, JavaScript and
 * recursive code. A power of two (the unwinder masks frame indexes with it).
 * Only the used frames go to the ring buffer; off-CPU records keep fewer
 * (SFBPF_OFFCPU_MAX_FRAMES, offcpu_abi.h).
 */
#define SFBPF_MAX_FRAMES 1024
#define SFBPF_MAX_KFRAMES 127 /* kernel frames per stack */
#define SFBPF_MAX_MAPPINGS 256 /* executable mappings per process */
#define SFBPF_PAGE_SHIFT 8 /* finest page index granularity: 256 bytes, ~4 rows */
#define SFBPF_SEARCH_STEPS 17 /* binary search bound: rows of a page (<= 64 KiB) + 1 */
#define SFBPF_MAP_SEARCH_STEPS 9 /* 2^9 > SFBPF_MAX_MAPPINGS */
#define SFBPF_TASK_COMM_LEN 16
/*
 * Kernels without bpf_loop() (before 5.17) walk in a chain of programs
 * (bpf/ustack.h): SFBPF_CHAIN_FRAMES frames each, at most SFBPF_CHAIN_PROGS
 * programs there (the kernel's tail-call limit, 32 calls before 5.17, 33
 * since, + 1), so their stacks stop at the product: 264 frames
 * (docs/DESIGN-unwinder.md, "Kernels").
 */
#define SFBPF_CHAIN_FRAMES 8
#define SFBPF_CHAIN_PROGS 33
/* Their last links: one per runtime read after the walk (bpf/afterwalk.h), linked by the loader. */
#define SFBPF_CHAIN_FINISHES 4

/*
 * One flattened FRE: from its PC on (until the next row), rule applies. Its PC
 * is pc_min + (page << page shift) + pc_lo for the object's page it is in (the
 * page index tells which rows are in which page): a page is at most 64 KiB,
 * so the low 16 bits of (PC - pc_min) tell rows of one page apart.
 */
struct sfbpf_row {
	__u16 pc_lo; /* (ELF virtual address - object pc_min) & 0xffff */
	__u16 rule; /* index into the rules map; SFBPF_RULE_GAP_ID = no FDE here */
};

/* Index of the reserved rule meaning "PC covered by no FDE". */
#define SFBPF_RULE_GAP_ID 0
#define SFBPF_MAX_RULES 65536 /* rule indexes are 16 bits */

/*
 * The row and page spaces: segment s of the rows map (an array of maps) holds
 * rows [s << shift, (s + 1) << shift), likewise pages. A segment is one BPF
 * array of one element (so that every segment has the shape of the maps'
 * inner map, and lookups are inlined) of 4 << shift bytes. The shift is set
 * at load (the unwinder's seg_shift, and the inner maps' value size): 128 KiB
 * segments (the most) for the usual budgets, smaller ones for tiny budgets,
 * so that whole segments always fit the budget.
 */
#define SFBPF_SEG_SHIFT_MAX 15
#define SFBPF_SEG_SHIFT_MIN 10 /* 4 KiB, a page */
/* Segments (the array of maps' size) for a space of n entries. */
#define SFBPF_SEGS(n, shift) ((__u32)(((__u64)(n) + (1ULL << (shift)) - 1) >> (shift)))

/* How to find a value (CFA, RA or FP) of the caller's frame. */
enum sfbpf_loc {
	SFBPF_LOC_SAME = 0, /* unchanged (FP not saved by this frame) */
	SFBPF_LOC_UNDEFINED, /* RA undefined: outermost frame */
	SFBPF_LOC_CFA, /* CFA + off, dereferenced if SFBPF_*_DEREF */
	SFBPF_LOC_REG, /* register reg + off, dereferenced if SFBPF_*_DEREF */
};

/* Register numbers used in rules: the unwinder tracks only these three. */
enum sfbpf_reg {
	SFBPF_REG_SP = 0,
	SFBPF_REG_FP = 1,
	SFBPF_REG_RA = 2, /* a register holding RA (AArch64 LR, s390x r14) */
	SFBPF_REG_OTHER = 3, /* any other register: valid for the topmost frame only */
};

/*
 * The one callee-saved register the unwinder tracks beyond SP and FP, so that
 * a caller whose CFA it holds can be stepped through (x86-64: rbx, DWARF 3,
 * which glibc's lazy-binding trampolines _dl_runtime_resolve_* realign the
 * stack with: CFA = rbx + 32, while _dl_fixup runs below them). A rule's
 * xreg_off8 says where its frame saved the caller's value: CFA + 8 * xreg_off8
 * when negative, SFBPF_XREG_SAME when the frame left it alone, or
 * SFBPF_XREG_LOST when the CFI does not say (SFrame, which describes no such
 * register) or says something the unwinder cannot follow. A rule whose CFA is
 * the tracked register is not TOPMOST_ONLY: the unwinder finds its value
 * where the frames below saved it, or in pt_regs if none did.
 */
#define SFBPF_XREG_SAME 0
#define SFBPF_XREG_LOST (-128)
#define SFBPF_XREG_MIN_OFF (-127 * 8) /* the farthest save slot a rule can name */

/* Rule flags. */
#define SFBPF_RULE_CFA_DEREF 0x01 /* CFA = *(reg + cfa_off) */
#define SFBPF_RULE_RA_DEREF 0x02
#define SFBPF_RULE_FP_DEREF 0x04
#define SFBPF_RULE_SIGNAL 0x08 /* signal frame (V3) */
#define SFBPF_RULE_GAP 0x10 /* no FDE covers these PCs */
#define SFBPF_RULE_MANGLED_RA 0x20 /* AArch64 signed RA */
#define SFBPF_RULE_TOPMOST_ONLY 0x40 /* needs a register only valid in frame 0 */
#define SFBPF_RULE_UNSUPPORTED 0x80 /* CFI this rule set cannot express: stop, counted */

struct sfbpf_rule {
	__s32 cfa_off;
	__s32 ra_off;
	__s32 fp_off;
	__u8 cfa_reg; /* enum sfbpf_reg (SP or FP; OTHER => TOPMOST_ONLY) */
	__u8 ra_loc; /* enum sfbpf_loc */
	__u8 fp_loc; /* enum sfbpf_loc */
	__u8 ra_reg; /* enum sfbpf_reg, when ra_loc == SFBPF_LOC_REG */
	__u8 fp_reg; /* enum sfbpf_reg, when fp_loc == SFBPF_LOC_REG */
	__u8 cfa_regnum; /* DWARF number when cfa_reg == SFBPF_REG_OTHER */
	__u8 flags; /* SFBPF_RULE_* */
	__s8 xreg_off8; /* where the frame saved the tracked register: SFBPF_XREG_* */
};

/* One loaded object (executable or shared library): its slice of the rows. */
struct sfbpf_object {
	__u32 row_start; /* first row in the row space */
	__u32 row_count;
	__u32 page_start; /* first entry in the page space */
	__u32 page_count;
	__u32 pc_min; /* ELF address of the first row, page-aligned down */
	__u32 flags; /* SFBPF_OBJ_F_* */
	/*
	 * Changes whenever the slot gets another table: what the unwinder's
	 * per-CPU cache of rows found remembers, so it never serves a row of a
	 * table that is gone.
	 */
	__u32 gen;
	__u32 pad;
};

/*
 * An object slot without rows (yet): its frames are unwound through the
 * frame-pointer chain, and samples that met one are counted. The slot is
 * reserved while processes map the object, so the loader can publish (or
 * withdraw) its table for all of them with one write. See
 * docs/DESIGN-lifecycle.md.
 */
#define SFBPF_OBJ_F_PENDING 0x1 /* the loader is still building its table */
#define SFBPF_OBJ_F_NO_BUDGET 0x2 /* evicted, or never fit: over the table budget */
#define SFBPF_OBJ_F_NO_TABLE 0x4 /* the file turned out to have no usable CFI */
#define SFBPF_OBJ_F_NO_ROWS (SFBPF_OBJ_F_PENDING | SFBPF_OBJ_F_NO_BUDGET | SFBPF_OBJ_F_NO_TABLE)
/*
 * Bits 8-11: how much coarser than SFBPF_PAGE_SHIFT the object's page index is
 * (the loader coarsens sparse tables' indexes: a page entry costs as much map
 * memory as a row).
 */
#define SFBPF_OBJ_PAGE_SHIFT_POS 8
#define SFBPF_OBJ_PAGE_SHIFT_MASK 0xf
#define SFBPF_OBJ_PAGE_SHIFT_MAX 8 /* bits above SFBPF_PAGE_SHIFT: pages <= 64 KiB */
/* The page shift of an object from its flags, and the flags for a page shift. */
#define SFBPF_OBJ_PAGE_SHIFT(flags) \
	(SFBPF_PAGE_SHIFT + (((flags) >> SFBPF_OBJ_PAGE_SHIFT_POS) & SFBPF_OBJ_PAGE_SHIFT_MASK))
#define SFBPF_OBJ_F_PAGE_SHIFT(shift) (((shift) - SFBPF_PAGE_SHIFT) << SFBPF_OBJ_PAGE_SHIFT_POS)

/*
 * pages[object.page_start + p] = index (relative to row_start) of the first row
 * whose PC >= pc_min + (p << SFBPF_OBJ_PAGE_SHIFT(flags)); the rows of page p
 * are [pages[p], pages[p + 1]), and the row covering a PC in page p is the
 * last of them starting at or before it, else row pages[p] - 1 (which starts
 * in an earlier page). page_count includes one final sentinel entry = row_count.
 */

/* Object slot with no table: unwind through it with the frame-pointer chain. */
#define SFBPF_OBJ_NONE 0xffffffffu

struct sfbpf_mapping {
	__u64 start; /* runtime address range [start, end) */
	__u64 end;
	__u64 bias; /* runtime pc - bias = ELF virtual address */
	__u32 obj; /* index in the objects map, or SFBPF_OBJ_NONE */
	__u32 flags; /* SFBPF_MAP_* */
};

/*
 * Mapping flags, bits 0-8: a period P in bytes (0: none). The mapping holds
 * identical copies of one piece of code every P bytes from its start (an
 * arena of JIT trampolines, userspace/procs/jitcode.h): a PC is looked up as
 * the same offset in the first copy, so the object's table describes one.
 * Any P up to 256: CPython 3.12's copies are 11 bytes apart (later ones
 * round them up to 16).
 */
#define SFBPF_MAP_PERIOD_MASK 0x1ff

/*
 * Per process (tgid): its executable mappings, sorted by start, disjoint.
 * start_ticks tells this process from an earlier one with the same PID: the
 * group leader's start time (task->start_boottime) in clock ticks, as
 * /proc/PID/stat's field 22 gives it; the unwinder ignores an entry whose
 * start differs from the sampled task's (0: not checked). read_ns: when
 * the loader began to read the mappings (CLOCK_MONOTONIC, bpf_ktime_get_ns()'s
 * clock; 0: unknown), so that a young process's walk can tell whether the
 * kernel has seen it map code since (bpf/vmafind.h, vmafind_newer).
 */
struct sfbpf_proc {
	__u32 count;
	__u32 generation; /* bumped by the loader on every refresh */
	__u64 start_ticks;
	__u64 read_ns; /* in the head's cache line: every sample reads it */
	struct sfbpf_mapping maps[SFBPF_MAX_MAPPINGS];
};

/*
 * A file as the kernel knows it (bpf/vmafind.h): the superblock's device
 * (the kernel's encoding, major << 20 | minor), the inode number and its
 * change time. The loader publishes, in the idents map, the object slot of
 * each file whose identity is the kernel's to give (util/fileident.h) for
 * exactly this key; a file written since has another change time.
 */
struct sfbpf_ident_key {
	__u64 dev;
	__u64 ino;
	__s64 ctime_sec;
	__u32 ctime_nsec;
	__u32 pad;
};

/*
 * The vDSO's key: no file, no superblock (device 0 is none's), this inode,
 * times 0. The kernel maps one image into every native process; the loader
 * publishes its table under this key once it has read that image, and the
 * walk takes it only for the mapping the mm names as its vDSO, when that
 * begins as a 64-bit ELF (a compat process's image is another).
 */
#define SFBPF_IDENT_VDSO_INO 0xffffffffffffffffULL

struct sfbpf_ident {
	__u32 obj; /* the object slot */
	__u32 pad;
	__u64 delta; /* ELF address - file offset in its executable segment */
	/* Its lowest executable segment's ELF address: a program's mm->start_code less the bias */
	__u64 text_vaddr;
};

/*
 * The mappings found in the kernel for a process (bpf/vmafind.h), kept per
 * tgid in the vma_cache LRU hash: a struct sfbpf_proc's head (it is made
 * from one), then when and for which image. Kept past the process's exit,
 * until the LRU reuses it: userspace names the frames of a process gone
 * before it could read /proc/PID/maps from it. Which image it was made for:
 * start_ticks (which process) and exec_id (which of its execs: the task's
 * self_exec_id, counted up by each exec, as the EXEC event gives it; an mm's
 * address is no such key, the slab gives it to a later image again).
 */
#define SFBPF_VMA_MAX_MAPS 16 /* the program, libc, ld.so, a few libraries */
/*
 * How long a kept table is trusted from when it was made; an entry whose
 * read_ns is younger may be overruled by it (bpf/vmafind.h, vmafind_newer).
 */
#define SFBPF_VMA_TRUST_NS (1000ULL * 1000 * 1000)

struct sfbpf_vma_kept {
	__u32 count;
	__u32 generation;
	__u64 start_ticks; /* the process's, as struct sfbpf_proc's */
	__u64 mapped_ns; /* bpf_ktime_get_ns() at its last mapping of a file with a table */
	struct sfbpf_mapping maps[SFBPF_VMA_MAX_MAPS];
	__u64 born_ns; /* bpf_ktime_get_ns() when made (the exec, or a sample after a second) */
	__u64 mm; /* the image's mm_struct: an exec makes a new one while the old lives */
	__u64 exec_id; /* the image's (task_struct's self_exec_id) */
};

/* Why a walk could not use the VMA of an address (SFBPF_STAT_VMA_MISS_BASE + this). */
enum sfbpf_vma_miss {
	SFBPF_VMA_NO_VMA = 0, /* no VMA there, or mmap_lock taken (bpf_find_vma) */
	SFBPF_VMA_NOT_FILE, /* anonymous or not executable */
	SFBPF_VMA_NO_IDENT, /* a file whose identity the loader has published no table for */
	SFBPF_VMA_FULL, /* VMAFIND_MAX_MAPS met in one walk */
	SFBPF_VMA_LATER, /* this sample's one lookup was spent (the next sample's may find it) */
	SFBPF_VMA_MISS__COUNT,
};

/* Why the Python walk of a sample ended (bpf/python.h). */
enum sfbpf_php_stop {
	SFBPF_PHP_STOP_DONE = 0, /* the thread's outermost execute_data: complete */
	SFBPF_PHP_STOP_IDLE, /* no execute_data: the VM runs no script (between requests) */
	SFBPF_PHP_STOP_READ, /* an execute_data or function unreadable: the thread moved on */
	SFBPF_PHP_STOP_DEPTH, /* SFBPF_PY_MAX_FRAMES, or the sample's room, reached */
	SFBPF_PHP_STOP__COUNT,
};

/* Why the Ruby walk of a sample ended (bpf/ruby.h). */
enum sfbpf_rb_stop {
	SFBPF_RB_STOP_DONE = 0, /* the execution context's outermost control frame: complete */
	SFBPF_RB_STOP_NO_THREAD, /* no Ruby thread of the TID within the bound (not one of Ruby's)
				  */
	SFBPF_RB_STOP_READ, /* a thread or a control frame unreadable: the thread moved on */
	SFBPF_RB_STOP_DEPTH, /* SFBPF_PY_MAX_FRAMES, the sample's room, or the steps, reached */
	SFBPF_RB_STOP__COUNT,
};

/* Why the Perl walk of a sample ended (bpf/perl.h). */
enum sfbpf_pl_stop {
	SFBPF_PL_STOP_DONE = 0, /* the interpreter's outermost context: the program's own code */
	SFBPF_PL_STOP_IDLE, /* no interpreter, or no stack yet: perl starting or ending */
	SFBPF_PL_STOP_READ, /* a context or a stack unreadable: the interpreter moved on */
	SFBPF_PL_STOP_DEPTH, /* SFBPF_PY_MAX_FRAMES, the sample's room, or the steps, reached */
	SFBPF_PL_STOP__COUNT,
};

enum sfbpf_py_stop {
	SFBPF_PY_STOP_DONE = 0, /* the thread's outermost frame: complete */
	SFBPF_PY_STOP_NO_THREAD, /* no PyThreadState for the TID within the bound (or none yet) */
	SFBPF_PY_STOP_READ, /* a thread state or frame unreadable: the thread moved on */
	SFBPF_PY_STOP_DEPTH, /* SFBPF_PY_MAX_FRAMES, or the sample's room, reached */
	SFBPF_PY_STOP__COUNT,
};

/*
 * Why a step of a JVM's frame ended the stack (bpf/hotspot.h): the stack's
 * stop reason says where it ended, this what of the JVM did not read as
 * its layout says. 0: no such step.
 */
enum sfbpf_hs_stop {
	SFBPF_HS_STOP_NONE = 0,
	SFBPF_HS_STOP_READ, /* a frame's slots, the segment map or a blob's header unreadable */
	SFBPF_HS_STOP_INTERP_LINK, /* an interpreted frame's fp is not a frame above sp */
	SFBPF_HS_STOP_NO_BLOB, /* the segment map leads to no blob that holds the pc */
	SFBPF_HS_STOP_BAD_BLOB, /* a blob's frame size, or its heap's segment size, out of bounds */
	SFBPF_HS_STOP_NO_CALLER, /* a compiled leaf: no return address where its frame ends */
	SFBPF_HS_STOP_NEVER_SAFE, /* a leaf in a blob whose frame HotSpot never calls complete */
	SFBPF_HS_STOP__COUNT,
};

/* Why a user stack ended. */
enum sfbpf_stop {
	SFBPF_STOP_OUTERMOST = 0, /* outermost frame (RA undefined or 0, FP 0): complete */
	SFBPF_STOP_NO_PROC, /* process has no mapping table */
	SFBPF_STOP_NO_MAPPING, /* PC in no executable mapping */
	SFBPF_STOP_NO_ROW, /* no row for the PC in its table, and the frame-pointer step failed */
	SFBPF_STOP_READ, /* bpf_probe_read_user failed */
	SFBPF_STOP_CFA_ORDER, /* CFA not increasing: would loop */
	SFBPF_STOP_DEPTH, /* hit the frame limit */
	SFBPF_STOP_BAD_RULE, /* rule needs a register not available here */
	SFBPF_STOP_FP_CHAIN, /* frame-pointer step failed in an object without a table */
	SFBPF_STOP_KERNEL_ONLY, /* user stack not requested (-K), or a kernel thread */
	SFBPF_STOP_UNSUPPORTED, /* the PC's CFI cannot be expressed as an SFrame rule */
	SFBPF_STOP_REPLACED, /* the process's entry was replaced during the walk: leaf kept only */
	SFBPF_STOP_EXECVE, /* inside execve, no entry (or a read failed: the mm is the new
			    * image's): the registers are the old image's, no stack */
	SFBPF_STOP__COUNT,
};

/*
 * Per CPU (the cpu_run map), in on+off runs: the thread running here and its
 * on-CPU time not yet in a sample (bpf_ktime_get_ns() times). The off-CPU
 * program starts it at each switch-in, with what the thread owes from its
 * last time on a CPU (the record's owed_ns), and puts the rest back at its
 * switch-out; the CPU profiler pays it into each sample's weight
 * (SFBPF_SAMPLE_TIMED). Unused in the other modes.
 */
struct sfbpf_cpu_run {
	__u64 mark_ns; /* on-CPU time is counted from here: the switch-in or the last sample */
	__u64 owed_ns; /* and this much from before it */
	__u32 tid;
	__u32 pad;
};

/*
 * Per-CPU counters: the stats map has a single entry holding all of them
 * (__u64[SFBPF_STAT__COUNT]), so a sample costs one map lookup for its counters.
 */
enum sfbpf_stat {
	SFBPF_STAT_SAMPLES = 0, /* program runs that passed the filters */
	SFBPF_STAT_EMITTED, /* samples written to the ring buffer */
	SFBPF_STAT_RB_DROPS, /* ring buffer full */
	SFBPF_STAT_FRAMES, /* user frames unwound */
	SFBPF_STAT_FP_FRAMES, /* of those, through frame-pointer steps (no rule for the PC) */
	SFBPF_STAT_STOP_BASE, /* + enum sfbpf_stop: stacks ended per reason */
	/* After the stop reasons (which stay contiguous). */
	SFBPF_STAT_STALE_PROC = SFBPF_STAT_STOP_BASE + SFBPF_STOP__COUNT, /* entry of an earlier
									     process: ignored */
	SFBPF_STAT_PENDING, /* samples with a frame in an object whose table is loading */
	SFBPF_STAT_NO_BUDGET, /* samples with a frame in an object over the table budget */
	SFBPF_STAT_NOTIFY_SENT, /* unknown process/mapping reported to the loader */
	SFBPF_STAT_NOTIFY_LIMITED, /* not reported: the PID reported one recently */
	SFBPF_STAT_NOTIFY_DROPS, /* not reported: the event ring was full */
	SFBPF_STAT_EXECS, /* exec events sent */
	SFBPF_STAT_EXITS, /* exit events sent (last thread of a process) */
	SFBPF_STAT_EVENT_DROPS, /* exec/exit events lost: the event ring was full */
	SFBPF_STAT_GAP_FP_FRAMES, /* of fp-frames, PCs without a row in an object with a table */
	SFBPF_STAT_FP_SWITCHES, /* frame-pointer steps onto another stack (Go's system stack) */
	SFBPF_STAT_LEAF_FP_STEPS, /* topmost PC in no known mapping: caller found by an FP step */
	SFBPF_STAT_FILLED_PERIODS, /* periods the kernel skipped, in a sample's weight (throttled)
				    */
	SFBPF_STAT_FORKS_INHERITED, /* new processes given their parent's entry at the fork */
	SFBPF_STAT_FORK_DROPS, /* not given it: the event ring was full, or the map */
	SFBPF_STAT_VMA_WALKS, /* samples of processes without an entry, walked with VMAs found */
	SFBPF_STAT_VMA_FOUND, /* mappings those walks found in the kernel */
	SFBPF_STAT_VMA_MISS_BASE, /* + enum sfbpf_vma_miss: VMAs those walks could not use */
	SFBPF_STAT_VMA_MISS_LAST = SFBPF_STAT_VMA_MISS_BASE + SFBPF_VMA_MISS__COUNT - 1,
	SFBPF_STAT_VMA_OVER_ENTRY, /* of vma_walks: an entry read before the process mapped more */
	/* The HotSpot steps of the native walk (hotspot.h). */
	SFBPF_STAT_HS_INTERPRETED, /* interpreted frames stepped */
	SFBPF_STAT_HS_COMPILED, /* compiled frames, stubs' with a frame, stepped by their size */
	SFBPF_STAT_HS_FAILED, /* a pc in a JVM's code that could not be stepped: the stack ends */
	SFBPF_STAT_HS_STOP_BASE, /* + enum sfbpf_hs_stop - 1: those steps per reason */
	SFBPF_STAT_HS_STOP_LAST = SFBPF_STAT_HS_STOP_BASE + SFBPF_HS_STOP__COUNT - 2,
	/* The V8 steps of the native walk (v8.h): frames of a node's code stepped. */
	SFBPF_STAT_V8_INTERPRETED, /* JavaScript frames of the interpreter: (function, offset) */
	SFBPF_STAT_V8_BASELINE, /* of baseline (Sparkplug) code: the function only */
	SFBPF_STAT_V8_OPTIMIZED, /* of optimised code: its pc, checked against its function */
	SFBPF_STAT_V8_OTHER, /* V8's own frames (entry, exit, stubs, builtins): their pc */
	SFBPF_STAT_V8_UNREAD, /* a frame's function unreadable: its pc, the walk goes on */
	SFBPF_STAT_V8_LATER_LOST, /* chained walks' frames past UNWIND_V8_LATER: their pc */
	/* Samples with a runtime's frames that woke the reader (profile.bpf.c, RUNTIME_WAKE_NS). */
	SFBPF_STAT_RUNTIME_WAKEUPS,
	/* The Python walk (python.h): samples of processes with Python settings. */
	SFBPF_STAT_PY_SAMPLES,
	SFBPF_STAT_PY_FRAMES, /* Python frames sent */
	SFBPF_STAT_PY_DESCRIBED, /* code objects described (struct sfbpf_py_code) */
	SFBPF_STAT_PY_DESCRIBE_LATER, /* new ones past a sample's SFBPF_PY_DESCRIBE_MAX */
	SFBPF_STAT_PY_DESCRIBE_FAILED, /* unreadable, or the ring was full */
	SFBPF_STAT_PY_STOP_BASE, /* + enum sfbpf_py_stop: Python walks ended per reason */
	/* The PHP walk (php.h): samples of processes with PHP settings. */
	SFBPF_STAT_PHP_SAMPLES = SFBPF_STAT_PY_STOP_BASE + SFBPF_PY_STOP__COUNT,
	SFBPF_STAT_PHP_FRAMES, /* PHP frames sent */
	SFBPF_STAT_PHP_STOP_BASE, /* + enum sfbpf_php_stop: PHP walks ended per reason */
	/* The Ruby walk (ruby.h): samples of processes with Ruby settings. */
	SFBPF_STAT_RUBY_SAMPLES = SFBPF_STAT_PHP_STOP_BASE + SFBPF_PHP_STOP__COUNT,
	SFBPF_STAT_RUBY_FRAMES, /* Ruby frames sent */
	SFBPF_STAT_RUBY_STOP_BASE, /* + enum sfbpf_rb_stop: Ruby walks ended per reason */
	/* The Perl walk (perl.h): samples of processes with Perl settings. */
	SFBPF_STAT_PERL_SAMPLES = SFBPF_STAT_RUBY_STOP_BASE + SFBPF_RB_STOP__COUNT,
	SFBPF_STAT_PERL_FRAMES, /* Perl frames sent */
	SFBPF_STAT_PERL_STOP_BASE, /* + enum sfbpf_pl_stop: Perl walks ended per reason */
	SFBPF_STAT__COUNT = SFBPF_STAT_PERL_STOP_BASE + SFBPF_PL_STOP__COUNT,
};

struct sfbpf_stats {
	__u64 v[SFBPF_STAT__COUNT];
};

/* Sample flags. */
#define SFBPF_SAMPLE_KERNEL_MODE 0x1 /* the sample interrupted kernel code */
/* weight: the thread's on-CPU ns since its previous sample (on+off), not periods */
#define SFBPF_SAMPLE_TIMED 0x2
/* The nr_py entries after the kernel frames are V8's words (SFBPF_V8_JIT), not Python's frames. */
#define SFBPF_SAMPLE_V8_WORDS 0x4
/* The nr_py frames after the kernel frames are PHP's (struct sfbpf_php_proc), not Python's. */
#define SFBPF_SAMPLE_PHP 0x8
/* The nr_py frames after the kernel frames are Ruby's (struct sfbpf_rb_proc). */
#define SFBPF_SAMPLE_RUBY 0x10
/* The nr_py frames after the kernel frames are Perl's (struct sfbpf_pl_proc). */
#define SFBPF_SAMPLE_PERL 0x20

#define SFBPF_RT_EPOCH_VALID (1ULL << 63)

/* One sample in the ring buffer (variable length: only used frames sent). */
struct sfbpf_sample {
	__u64 time_ns; /* bpf_ktime_get_ns() */
	__u32 pid; /* tgid, as the initial PID namespace sees it */
	__u32 tid;
	__u32 cpu;
	__u16 nr_user; /* user frames in ips[0 .. nr_user) */
	__u16 nr_kernel; /* kernel frames in ips[nr_user .. nr_user + nr_kernel) */
	__u8 stop; /* enum sfbpf_stop */
	__u8 flags;
	__u16 nr_py; /* Python frames, two slots each after the kernel frames (SFBPF_PY_*) */
	__u32 weight; /* CPU samples: periods (> 1: the kernel skipped some), or ns if TIMED */
	__u64 cgroup_id; /* cgroup v2 id (the directory's inode number); 0: unknown */
	/*
	 * The runtime's epoch when sampled, | SFBPF_RT_EPOCH_VALID; 0: none.
	 * HotSpot: its count of classes unloaded (a Method the sample names
	 * can be freed, and its address reused, only once that count moved).
	 */
	__u64 rt_epoch;
	char comm[SFBPF_TASK_COMM_LEN];
	/* User leaf first, then kernel leaf first, then Python frames innermost first. */
	__u64 ips[SFBPF_MAX_FRAMES + SFBPF_MAX_KFRAMES];
};

#define SFBPF_SAMPLE_HDR_SIZE ((unsigned long)__builtin_offsetof(struct sfbpf_sample, ips))

/*
 * Python (docs/DESIGN-python.md). Per process with a CPython the loader
 * attached to, its settings in the py_procs hash (tgid ->): where
 * _PyRuntime is and the offsets the walk reads, checked against the
 * process's start like procs. The walk runs after the native one and sends
 * each Python frame, innermost first, as two slots after the kernel frames:
 *   slot 0: the code object's address | SFBPF_PY_TAG | SFBPF_PY_ENTRY if the
 *           frame is the outermost of one call of the native eval loop;
 *   slot 1: (stamp << 32) | instruction's byte offset in its bytecode, the
 *           stamp the low 32 bits of the code object's co_linetable pointer
 *           (a code object freed and another allocated at its address has
 *           another line table: userspace tells them apart by it).
 * Userspace puts each run of frames in place of the native eval frame that
 * runs it.
 */
#define SFBPF_PY_MAX_FRAMES 128 /* Python frames per sample */
#define SFBPF_PY_THREAD_STEPS 64 /* thread states (and interpreters) looked at per search */
#define SFBPF_PY_FRAME_SPAN 128 /* bytes of a frame read at once: every field below it */
#define SFBPF_PY_TAG (1ULL << 63)
#define SFBPF_PY_ENTRY (1ULL << 62)
#define SFBPF_PY_ADDR_MASK ((1ULL << 62) - 1)
#define SFBPF_PY_NO_FIELD 0xffff /* an offset this version does not have */
/*
 * A frame's code object reference: from 3.14 a tagged _PyStackRef (its low
 * bits say how it is counted: 1 in 3.14, 2 in 3.15), before a plain
 * pointer. Objects are 8-byte aligned at least: the pointer is the rest.
 */
#define SFBPF_PY_REF_TAG_BITS 7ULL

/* How a frame says which instruction it runs. */
enum sfbpf_py_instr {
	SFBPF_PY_LASTI_BYTES = 0, /* 3.9: int f_lasti, bytes */
	SFBPF_PY_LASTI_UNITS, /* 3.10: int f_lasti, 2-byte code units */
	SFBPF_PY_INSTR_PTR, /* 3.11+: a pointer into co_code_adaptive */
};

/* How a thread state names its thread. */
enum sfbpf_py_tid {
	SFBPF_PY_TID_NATIVE = 0, /* native_thread_id: the TID in the task's own PID namespace */
	SFBPF_PY_TID_PTHREAD, /* thread_id: pthread_self(), the thread pointer (x86-64 fsbase) */
};

struct sfbpf_py_proc {
	__u64 start_ticks; /* as struct sfbpf_proc's */
	__u64 runtime; /* _PyRuntime's address */
	__u32 hexversion; /* PY_VERSION_HEX */
	__u8 instr; /* enum sfbpf_py_instr */
	__u8 tid_kind; /* enum sfbpf_py_tid */
	/* 3.12+: owner values from this one up are the interpreter's own frames,
	 * which run no code (the C-stack shim, 3.14's entry frames); 0xff: none */
	__u8 owner_cstack;
	__u8 describe; /* 1: describe new code objects (struct sfbpf_py_code); 0: not (benchmarks) */
	/* Offsets: _PyRuntime, interpreter, thread state */
	__u16 runtime_interp_head;
	__u16 interp_next;
	__u16 interp_threads_head;
	__u16 tstate_next;
	__u16 tstate_frame; /* frame (3.9/3.10), cframe (3.11/3.12), current_frame (3.13) */
	__u16 cframe_frame; /* 3.11/3.12's cframe->current_frame, else SFBPF_PY_NO_FIELD */
	__u16 tstate_tid; /* native_thread_id or thread_id (tid_kind) */
	/* Frame (all below frame_span) and code object */
	__u16 frame_span; /* bytes read per frame, <= SFBPF_PY_FRAME_SPAN */
	__u16 frame_previous;
	__u16 frame_code;
	__u16 frame_instr;
	__u16 frame_owner; /* SFBPF_PY_NO_FIELD before 3.12 */
	__u16 frame_is_entry; /* 3.11 only */
	__u16 code_stamp; /* co_linetable */
	__u16 code_adaptive; /* co_code_adaptive (3.11+) */
	/* What a code object's description reads (struct sfbpf_py_code) */
	__u16 code_name; /* co_qualname (3.11+), co_name before */
	__u16 code_filename;
	__u16 code_firstlineno;
	__u16 ob_type;
	__u16 bytes_size; /* ob_size of the line table's bytes object */
	__u16 bytes_data;
	__u16 str_length;
	__u16 str_state;
	__u16 str_ascii_data; /* sizeof(PyASCIIObject): ASCII characters follow */
	__u16 str_compact_data; /* sizeof(PyCompactUnicodeObject): other ones follow */
	/*
	 * The attach's generation, new for every attach and when userspace
	 * forgets the descriptions it holds: a code object described under
	 * another generation is described again.
	 */
	__u32 gen;
};

/*
 * PHP (docs/DESIGN-php.md). Per process running the Zend VM that the loader
 * attached to, its settings in the php_procs hash (tgid ->): where the
 * executor globals' current_execute_data is (a thread's own in a ZTS build:
 * not supported) and the offsets of the execute_data chain, from the headers
 * of the build ID the binary carries (interp/php_layouts.h). The walk runs
 * after the native one and sends each frame of a function (user code, or an
 * internal function: an extension's, called by the VM), innermost first,
 * as two slots after the kernel frames, with SFBPF_SAMPLE_PHP in the flags:
 *   slot 0: the zend_function's address | SFBPF_PY_TAG | SFBPF_PY_ENTRY if
 *           the frame is the outermost of one call of execute_ex (its call
 *           info has ZEND_CALL_TOP: execute_ex returns with it);
 *   slot 1: its opline (saved at the frame's last call out of the VM) |
 *           a stamp of the function's name and class pointers << 48
 *           (sfbpf_php_stamp(): a function freed at a request's end and
 *           another compiled at its address is told apart by it, by the
 *           cache of names and by the reading of the function after it);
 *           a file's own code (no name: every included file's {main}) and
 *           a closure have more in it (php_stamp_key()): their file's name pointer,
 *           their first and last lines, and the hash and length of their
 *           name's string (the file's, for a file's code). An included
 *           file's code is freed once it ran, without opcache, and the next
 *           file included is often compiled at its address, its name's
 *           string at its name's; a namespaced closure's name
 *           ("NS\{closure}") is a string freed with it, and its memory
 *           another string's by the time it is read.
 * Userspace puts each run of frames in place of the native execute_ex frame
 * that runs it, as it does Python's: an internal function's frame goes
 * where the VM called it, its own native frames above it.
 */
#define SFBPF_PHP_ED_SPAN 64 /* bytes of an execute_data read at once: every field below it */
#define SFBPF_PHP_FN_SPAN 32 /* bytes of a zend_function read: its type, name and class */
#define SFBPF_PHP_OPLINE_MASK ((1ULL << 48) - 1)

/*
 * What a function's stamp is of, with its scope: its name pointer; for a
 * file's own code (name 0) and a closure (user code only: an internal
 * function has no file) also its file's name pointer, the 8 bytes
 * of its first and last lines, and its name's string's hash and length
 * (its file's, for a file's code).
 */
static inline __u64 php_stamp_key(__u64 name, __u64 filename, __u64 lines, __u64 hash, __u64 len,
				  int by_file)
{
	return by_file ? name ^ (filename * 0xc2b2ae3d27d4eb4fULL) ^
				 ((lines + len) * 0x9e3779b97f4a7c15ULL) ^ hash :
			 name;
}

/* The stamp of a function whose common.function_name and common.scope are name, scope. */
static inline __u64 sfbpf_php_stamp(__u64 name, __u64 scope)
{
	__u64 h = (name ^ (scope * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;

	return (h >> 48) & 0xffff;
}

struct sfbpf_php_proc {
	__u64 start_ticks; /* as struct sfbpf_proc's */
	__u64 current_execute_data; /* the address of EG(current_execute_data) */
	__u32 call_top; /* ZEND_CALL_TOP */
	__u16 ed_opline; /* offsets in zend_execute_data, below SFBPF_PHP_ED_SPAN */
	__u16 ed_func;
	__u16 ed_call_info; /* This.u1.type_info */
	__u16 ed_prev;
	__u16 fn_type; /* in zend_function, below SFBPF_PHP_FN_SPAN: common.type */
	__u16 fn_name; /* common.function_name */
	__u16 fn_scope; /* common.scope */
	__u16 fn_flags; /* common.fn_flags, below SFBPF_PHP_FN_SPAN */
	/* op_array.filename, with line_start and line_end after it (user code only) */
	__u16 fn_filename;
	__u16 str_hash; /* zend_string's h, with len after it */
	__u32 acc_closure; /* ZEND_ACC_CLOSURE */
	__u8 user_function; /* ZEND_USER_FUNCTION */
	__u8 eval_code; /* ZEND_EVAL_CODE */
	__u8 internal_function; /* ZEND_INTERNAL_FUNCTION */
	/*
	 * The registers the VM's loop keeps its execute_data and opline in (a
	 * GCC build's global register variables: its EX(opline) is stale until
	 * a handler saves it), as DWARF numbers them; SFBPF_PHP_NO_REG: none.
	 * A sample whose user pc is in [vm_lo, vm_hi) (the loop's code) and
	 * whose fp register holds the current execute_data sends the ip
	 * register as the innermost frame's opline.
	 */
	__u8 fp_regnum, ip_regnum;
	__u8 pad;
	__u64 vm_lo, vm_hi;
};
#define SFBPF_PHP_NO_REG 0xff

/*
 * Ruby (docs/DESIGN-ruby.md). Per process running Ruby's VM that the loader
 * attached to, its settings in the rb_procs hash (tgid ->): where
 * ruby_current_vm_ptr is, and the offsets of the VM's ractors, threads,
 * execution contexts and control frames, from the headers of the version
 * the library says it is (interp/ruby_layouts.h). The walk finds the
 * sampled thread among the ractors' threads by its TID (each Ruby thread
 * keeps the kernel's), and sends each control frame running an instruction
 * sequence (a method, a block, a class body, the main script, an eval),
 * innermost first, as two slots after the kernel frames, with
 * SFBPF_SAMPLE_RUBY in the flags:
 *   slot 0: the iseq's address | SFBPF_PY_TAG | SFBPF_PY_ENTRY if the
 *           frame is the outermost of one run of the VM's loop (its
 *           VM_FRAME_FLAG_FINISH: vm_exec returns with it); a method's
 *           frame, where the layout names methods' owners (3.3 on), sends
 *           its method entry instead (ep[VM_ENV_DATA_INDEX_ME_CREF]: the
 *           iseq and its owner class both reached from it) | SFBPF_RB_METHOD;
 *   slot 1: its pc | a stamp of the iseq's body pointer << 48 (an iseq
 *           collected and another allocated at its address is told apart).
 * A block's frame, where owners are named, is followed by
 * two more slots: the method entry of the env its block was made in (its
 * local env's, or a define_method block's own), | SFBPF_RT_OWNER, and 0.
 * A C method's frame (a cfunc), where userspace can name it (me_def set),
 * is sent as
 *   slot 0: its method entry (ep[VM_ENV_DATA_INDEX_ME_CREF]) | SFBPF_PY_TAG
 *           | SFBPF_RB_CFUNC;
 *   slot 1: a stamp of the entry's definition pointer << 48 (no pc): an
 *           entry freed and another allocated at its address is told apart.
 * It belongs to the run of the VM's loop that called it (its innermost
 * frame); its own native frames stand after that run. Other frames of C
 * (an ifunc, the dummy ones) are not sent. Userspace puts each run of
 * frames in place of the native frame of the VM's loop that runs it.
 */
#define SFBPF_RB_CFP_SPAN 64 /* bytes of a control frame read at once: pc, iseq, ep below it */
#define SFBPF_RB_PC_MASK ((1ULL << 48) - 1)
#define SFBPF_RB_METHOD (1ULL << 61) /* slot 0 holds a method entry, not an iseq */
/* Slot 0 is no frame: the method entry of the frame sent before it (its owner). */
#define SFBPF_RT_OWNER (1ULL << 60)
#define SFBPF_RB_CFUNC (1ULL << 59) /* slot 0 holds a C method's entry */
#define SFBPF_RB_ENV_LEVELS 4 /* envs looked through for a block's method entry */

/* The stamp of an iseq whose body is at body. */
static inline __u64 sfbpf_rb_stamp(__u64 body)
{
	return ((body * 0xff51afd7ed558ccdULL) >> 48) & 0xffff;
}

struct sfbpf_rb_proc {
	__u64 start_ticks; /* as struct sfbpf_proc's */
	__u64 vm_ptr; /* the address of ruby_current_vm_ptr */
	__u16 vm_ractor_set; /* rb_vm_t: ractor.set (list head) */
	__u16 ractor_threads_set; /* rb_ractor_t: threads.set (list head) */
	__u16 ractor_vmlr_node; /* its node in the VM's list */
	__u16 th_lt_node; /* rb_thread_t: its node in the ractor's list */
	__u16 th_ec;
	__u16 th_nt; /* its rb_native_thread pointer, 0xffff: the TID is the thread's own */
	__u16 tid; /* the native TID: in the thread (3.1, 3.2), or its native thread (3.3 on) */
	__u16 ec_vm_stack; /* rb_execution_context_t */
	__u16 ec_vm_stack_size;
	__u16 ec_cfp;
	__u16 cfp_size; /* rb_control_frame_t: at most SFBPF_RB_CFP_SPAN */
	__u16 cfp_pc;
	__u16 cfp_iseq;
	__u16 cfp_ep;
	__u16 iseq_body; /* rb_iseq_t */
	__u16 method_entries; /* bytes below ep of a method's entry, sent (SFBPF_RB_METHOD); 0: none
			       */
	__u32 magic_mask; /* VM_FRAME_MAGIC_MASK, in ep[0] (the frame's flags) */
	__u32 magic_cfunc; /* VM_FRAME_MAGIC_CFUNC: no iseq */
	__u32 magic_ifunc; /* VM_FRAME_MAGIC_IFUNC: no iseq */
	__u32 magic_dummy; /* VM_FRAME_MAGIC_DUMMY: no iseq */
	__u32 flag_finish; /* VM_FRAME_FLAG_FINISH */
	__u32 magic_method; /* VM_FRAME_MAGIC_METHOD: ep[-2] its method entry */
	__u32 magic_block; /* VM_FRAME_MAGIC_BLOCK: its method entry in an env it points to */
	/* VM_ENV_FLAG_LOCAL | VM_FRAME_FLAG_BMETHOD: an env holding the method entry */
	__u32 env_me;
	__u16 env_prev; /* bytes below ep of the previous env's (tagged) pointer */
	/*
	 * A frame whose special variables ($~, $_) were written holds its method
	 * entry in their imemo_svar, at svar_me: an object whose flags under
	 * svar_mask are svar_flags (T_IMEMO, imemo_svar). Its life is the call's:
	 * the walk sends the entry inside. svar_mask 0: not looked for.
	 */
	__u16 svar_me;
	__u32 svar_mask, svar_flags;
	__u16 me_def; /* rb_method_entry_t's def: C methods are sent (SFBPF_RB_CFUNC); 0: not */
	__u16 pad;
	/*
	 * The TID that stands for a forked process's leader (0: none). Ruby
	 * stores a thread's native TID when it starts, and a forked child's
	 * thread keeps the one it had in its parent (3.1's
	 * Thread#native_thread_id says so): no thread has the leader's TID. The
	 * kernel sets it at the fork (the forking thread's), userspace at the
	 * attach (the one thread's whose TID no task of the process has:
	 * interp/ruby.c). A unicorn's or puma's cluster workers, each a fork of
	 * their master.
	 */
	__u32 leader_tid;
};

/*
 * Perl (docs/DESIGN-perl.md). Per process running perl that the loader
 * attached to, its settings in the pl_procs hash (tgid ->): where
 * PL_curinterp is (the first interpreter: the main thread's), where each
 * thread's own is under ithreads (thr_slot) and the offsets of its context
 * stack, from the headers
 * of the API version the binary carries (interp/perl_layouts.h). The walk
 * reads the interpreter's stacks of contexts, innermost first (the current
 * one, then each one it was pushed from: a sort's, a signal handler's), and
 * sends each sub's (and format's), each eval's and require's, then the
 * program's own code, as two slots after the kernel frames, with
 * SFBPF_SAMPLE_PERL in the flags:
 *   slot 0: the sub's CV (0 for the others) | SFBPF_PY_TAG | SFBPF_PY_ENTRY
 *           if the frame is the outermost of one run of the ops loop (its
 *           context returns to no op: called from C, a sort's, a MULTICALL)
 *           | for a sub's, its COP's cop_seq (12 bits; 0: no COP) <<
 *           SFBPF_PL_SEQ_SHIFT: a sub compiled again (a string eval's, a
 *           BEGIN block) may take the freed one's CV, body and COP, all at
 *           the same addresses, its statements at other lines;
 *   slot 1: the COP of the statement the frame is at (the interpreter's
 *           current one for the innermost, else the one the frame inside it
 *           was called from; 0 for a sub just entered, at no statement of
 *           its own yet) | a stamp << 48: of the CV's body for a sub's, of
 *           the COP's cop_seq for an eval's or a require's (their code is
 *           freed once it has run, its memory reused: userspace reads the
 *           COP later) | SFBPF_PL_KIND_* << 62.
 * Userspace puts each run of frames in place of the native frame of the ops
 * loop (Perl_runops_standard) that runs it; an XSUB (a C function called
 * from Perl: List::Util's, sort's) has no context: its own native frames
 * stand where the loop called it.
 */
#define SFBPF_PL_CX_SPAN 128 /* bytes of a context read at most: its fields below it */
#define SFBPF_PL_COP_MASK ((1ULL << 48) - 1)
#define SFBPF_PL_SEQ_SHIFT 48
#define SFBPF_PL_SEQ_MASK 0xfffULL
#define SFBPF_PL_KIND_SHIFT 62
#define SFBPF_PL_KIND_MAIN 0ULL /* the program's own code, outside every sub */
#define SFBPF_PL_KIND_SUB 1ULL
#define SFBPF_PL_KIND_EVAL 2ULL
#define SFBPF_PL_KIND_REQUIRE 3ULL

/* The stamp of a CV whose body (sv_any) is at body: 14 bits. */
static inline __u64 sfbpf_pl_stamp(__u64 body)
{
	return ((body * 0xff51afd7ed558ccdULL) >> 50) & 0x3fff;
}

struct sfbpf_pl_proc {
	__u64 start_ticks; /* as struct sfbpf_proc's */
	__u64 curinterp; /* the address of PL_curinterp */
	__u16 interp_curcop; /* struct interpreter: Icurcop */
	__u16 interp_curstackinfo;
	__u16 si_cxstack; /* struct stackinfo */
	__u16 si_prev;
	__u16 si_cxix;
	__u16 cx_span; /* bytes of a context read: past its last field below, at most CX_SPAN */
	__u16 cx_size; /* sizeof(PERL_CONTEXT) */
	__u16 cx_type; /* offsets in PERL_CONTEXT */
	__u16 cx_oldcop;
	__u16 cx_retop;
	__u16 cx_cv;
	__u16 cx_u16;
	__u8 type_mask; /* CXTYPEMASK */
	__u8 t_sub, t_format, t_eval; /* CXt_SUB, CXt_FORMAT, CXt_EVAL */
	__u8 multicall; /* CXp_MULTICALL */
	__u8 evalblock; /* CXp_EVALBLOCK: call_sv()'s G_EVAL, its sub in its run of the ops loop */
	__u8 old_op_shift; /* CxOLD_OP_TYPE(): blk_u16 >> this */
	__u16 op_require; /* OP_REQUIRE */
	/*
	 * ithreads: PL_thr_key's value's offset from the thread pointer (each
	 * thread's own interpreter, glibc's thread-specific data); 0: the main
	 * thread's interpreter (PL_curinterp) alone.
	 */
	__u16 thr_slot;
	/*
	 * struct interpreter's Iphase (an enum perl_phase) and PERL_PHASE_RUN:
	 * the program's own code is a frame only while it runs, not while the
	 * program is compiled (its BEGIN blocks) or ends (END, destruction).
	 */
	__u16 interp_phase;
	__u8 phase_run;
	__u16 cop_seq; /* COP: cop_seq, an eval's or require's frame's stamp */
};

/*
 * A code object's description, sent by the Python walk the first time a
 * code object is met (its key not in the py_codes LRU hash, per generation),
 * before the sample that holds it, in the same ring buffer: userspace names
 * the frame from these bytes even when the code object is freed by the time
 * the sample is read (a module's body runs once: its code object is freed
 * as soon as the import ends, milliseconds before ingestion). Strings are
 * the characters of compact str objects as they are in memory (kind bytes
 * each); the line table is its first bytes (table_len says how long it is).
 * Told from samples by magic in place of the sample's time.
 */
#define SFBPF_PY_CODE_MAGIC (~0ULL)
#define SFBPF_PY_NAME_BYTES 256
#define SFBPF_PY_FILE_BYTES 512
#define SFBPF_PY_TABLE_BYTES 4096
#define SFBPF_PY_DESCRIBE_MAX 8 /* descriptions a sample sends at most */

struct sfbpf_py_code {
	__u64 magic; /* SFBPF_PY_CODE_MAGIC */
	__u64 code; /* the code object's address */
	__u64 type; /* its ob_type: userspace checks it is PyCode_Type */
	__u32 stamp; /* as a frame's (abi.h above) */
	__u32 pid; /* tgid */
	__u32 gen; /* struct sfbpf_py_proc's */
	__s32 firstlineno;
	__u32 table_len; /* the line table's length; its first bytes in table[] */
	__u16 name_len, file_len; /* bytes in name[], file[] */
	__u8 name_kind, file_kind; /* bytes a character: 1, 2 or 4; 0: not read */
	__u8 pad[6];
	__u8 name[SFBPF_PY_NAME_BYTES];
	__u8 file[SFBPF_PY_FILE_BYTES];
	__u8 table[SFBPF_PY_TABLE_BYTES];
};

#define SFBPF_PY_CODE_HDR_SIZE ((unsigned long)__builtin_offsetof(struct sfbpf_py_code, table))

/*
 * HotSpot (docs/DESIGN-hotspot.md). Per JVM the loader attached to, its
 * settings in the hs_procs hash (tgid ->), checked against the process's
 * start like procs. In the native walk, a pc with no table (the JVM's code
 * is in anonymous mappings) of such a process is stepped by the JVM's own
 * frame layout (bpf/hotspot.h), and its frame sent as:
 *   - an interpreted frame: SFBPF_HS_INTERP | bci << SFBPF_HS_BCI_SHIFT |
 *     Method* >> 3, in place of its pc (SFBPF_HS_BCI_NONE: a native
 *     method's, or a bytecode pointer outside its method's bytecodes);
 *   - a compiled frame, a stub's: its pc, as any frame; userspace finds
 *     its blob and the methods inlined at that pc when it reads the sample.
 * Raw values only: userspace replaces them before any output sees them.
 */
#define SFBPF_HS_MAX_HEAPS 4 /* non-nmethods, profiled, non-profiled; or one */
#define SFBPF_HS_INTERP (3ULL << 62)
/*
 * A compiled frame whose blob's compile id was read: its pc |
 * SFBPF_HS_COMPILED | (compile id & SFBPF_HS_ID_MASK) << SFBPF_HS_ID_SHIFT
 * (user pcs are below 1 << 48: AArch64's too). Userspace names it only
 * while the nmethod at that pc has that id: a flushed one never lends its
 * names. With SFBPF_HS_EXACT, the frame was stopped at that pc, not calling
 * out of it: the leaf, or the frame a signal interrupted (its handler's
 * frames above it), named as HotSpot's samplers name a stopped pc.
 */
#define SFBPF_HS_COMPILED (1ULL << 62)
#define SFBPF_HS_EXACT (1ULL << 61)
#define SFBPF_HS_ID_SHIFT 48
#define SFBPF_HS_ID_MASK 0x1fffULL
#define SFBPF_HS_PC_MASK ((1ULL << SFBPF_HS_ID_SHIFT) - 1)
#define SFBPF_HS_BCI_SHIFT 46
#define SFBPF_HS_BCI_NONE 0xffffULL
#define SFBPF_HS_METHOD_MASK ((1ULL << SFBPF_HS_BCI_SHIFT) - 1) /* Method* >> 3 */
/* The CodeBlob fields the step reads lie in its first bytes: read at once, each aligned. */
#define SFBPF_HS_BLOB_SPAN 128

/* A code heap: its reserved range, a byte per segment (the segment map). */
struct sfbpf_hs_heap {
	__u64 lo;
	__u64 hi;
	__u64 segmap;
	__u32 shift; /* log2 of the segment size */
	__u32 pad;
};

struct sfbpf_hs_proc {
	__u64 start_ticks; /* as struct sfbpf_proc's */
	/* The JVM's count of classes unloaded (a jlong of its perf data): rt_epoch; 0: none */
	__u64 unloads;
	__u64 interp_lo; /* the template interpreter's code */
	__u64 interp_hi;
	struct sfbpf_hs_heap heaps[SFBPF_HS_MAX_HEAPS];
	__u32 nr_heaps;
	__u16 block_size; /* sizeof(HeapBlock): the blob follows its block's header */
	/* CodeBlob's ints (4 bytes; the frame-complete offset complete_width) */
	__u16 blob_size;
	__u16 blob_frame_size; /* in words, the return address and saved fp among them */
	__u16 blob_frame_complete; /* from code begin, frame built past it; complete_width */
	__u16 blob_code; /* code begin: a pointer, or with code_offset an int from the blob */
	__u8 code_offset;
	/* Interpreted frames: slots in words from fp */
	__s8 interp_method_slot;
	__s8 interp_bcp_slot;
	__s8 interp_sender_sp_slot;
	__u8 complete_width; /* 4 (an int), or 2 (JDK 25's int16_t) */
	__u8 pad;
	__u16 method_const; /* Method::_constMethod */
	__u16 const_size; /* sizeof(ConstMethod): the bytecodes follow it */
	__u16 const_code_size; /* ConstMethod::_code_size, a u2 */
	__u16 nm_compile_id; /* nmethod::_compile_id, an int; 0: not read */
	__u16 pad2[3];
};

/*
 * V8 (docs/DESIGN-v8.md). Per node process the loader attached to, its
 * settings in the v8_procs hash (tgid ->), checked against the process's
 * start like procs. V8 keeps frame pointers in all its code, so the native
 * walk steps its frames by fp; a frame whose pc is V8's code (the embedded
 * builtins, in node's file and in the copy next to the JIT code, and the
 * JIT code's anonymous mappings) is read by V8's fixed frame slots (the
 * offsets its postmortem v8dbg_off_fp_* symbols publish) and sent as:
 *   - a JavaScript frame of the interpreter, or of baseline code:
 *     SFBPF_V8_JS | offset << SFBPF_V8_OFF_SHIFT | SharedFunctionInfo >> 3,
 *     the offset the bytecode offset (SFBPF_V8_OFF_NONE: not known, or
 *     baseline code, whose pc tells it);
 *   - a frame of optimised code: SFBPF_V8_CODE | check << SFBPF_V8_CHECK_SHIFT
 *     | pc, the check bits of its function's SharedFunctionInfo
 *     (sfbpf_v8_check()): userspace finds the code at pc and names it only
 *     if that code is still its function's;
 *   - a frame of JIT code with a BytecodeArray in its slots, baseline code
 *     or optimised code V8 entered in the running frame (on-stack
 *     replacement), which only the code at pc tells apart: SFBPF_V8_JIT |
 *     i << SFBPF_V8_CHECK_SHIFT | pc, i its entry among the sample's V8
 *     words (SFBPF_SAMPLE_V8_WORDS: the slots after the kernel frames, two
 *     an entry, nr_py entries, its SharedFunctionInfo and BytecodeArray,
 *     tagged); more than SFBPF_V8_WORDS_MAX a sample are sent as baseline;
 *   - V8's own frames (entry, exit, stubs, builtins): their pc, as any frame.
 * Raw values only: userspace replaces them before any output sees them.
 */
/* The builtins' ranges: in node's text, and the copy beside the JIT code. */
#define SFBPF_V8_BUILTINS 2
#define SFBPF_V8_JS (3ULL << 62)
#define SFBPF_V8_CODE (1ULL << 62)
#define SFBPF_V8_JIT (2ULL << 62)
#define SFBPF_V8_WORDS_MAX 8
#define SFBPF_V8_OFF_SHIFT 46
#define SFBPF_V8_OFF_NONE 0xffffULL
#define SFBPF_V8_SFI_MASK ((1ULL << SFBPF_V8_OFF_SHIFT) - 1) /* SharedFunctionInfo >> 3 */
#define SFBPF_V8_CHECK_SHIFT 48
#define SFBPF_V8_CHECK_MASK 0x3fffULL
#define SFBPF_V8_PC_MASK ((1ULL << SFBPF_V8_CHECK_SHIFT) - 1)

/*
 * The check an optimised frame carries of its function (sfi: the tagged
 * pointer). SFBPF_V8_UNCHECKED: a leaf stopped in its code's prologue or at
 * its return, whose frame is not (or no longer) built: no function to check.
 */
#define SFBPF_V8_UNCHECKED SFBPF_V8_CHECK_MASK
static inline __u64 sfbpf_v8_check(__u64 sfi)
{
	__u64 c = ((sfi >> 3) ^ (sfi >> 17) ^ (sfi >> 31)) & SFBPF_V8_CHECK_MASK;

	return c == SFBPF_V8_UNCHECKED ? 0 : c;
}

/* A range of V8's code, runtime addresses; lo == hi: none. */
struct sfbpf_v8_range {
	__u64 lo;
	__u64 hi;
};

struct sfbpf_v8_proc {
	__u64 start_ticks; /* as struct sfbpf_proc's */
	struct sfbpf_v8_range builtins[SFBPF_V8_BUILTINS];
	/*
	 * The JIT code: the hull of the anonymous executable mappings and the
	 * reservation after them (V8's code range, which it commits as it
	 * compiles). Compared without a loop: 6.1's verifier followed one past
	 * its limit.
	 */
	struct sfbpf_v8_range jit;
	/* Frame slots, bytes from fp (v8dbg_off_fp_*): negative */
	__s16 fp_context; /* the context, or a typed frame's marker (a Smi) */
	__s16 fp_function; /* the JSFunction */
	__s16 fp_bytecode_array;
	__s16 fp_bytecode_offset; /* a Smi: offset + bytecode_header - tag */
	__u16 function_shared; /* JSFunction::shared */
	__u16 map_type; /* Map::instance_type, a u16 */
	__u16 bytecode_array_type; /* BYTECODE_ARRAY_TYPE */
	__u16 bytecode_header; /* BytecodeArray's data begins there, less the tag: 0 none */
	/*
	 * The interpreter's registers (DWARF numbers; 0xff: none): the array
	 * and its offset, untagged, as the slot's less the Smi (a leaf's slot
	 * holds the offset of its last call out, the register the live one).
	 */
	__u8 reg_bytecode_array, reg_bytecode_offset;
	__u16 pad[3];
};

/*
 * Lifecycle events: the lifecycle programs (exec, exit) and the unwinder
 * (a process or an executable mapping it has no table for) tell the loader,
 * through a small ring buffer of their own. Unknown-process and
 * unknown-mapping reports are rate-limited per process (the notify_next LRU
 * hash: tgid -> earliest time of the next report, which userspace may push
 * back). See docs/DESIGN-lifecycle.md.
 */
enum sfbpf_event_type {
	SFBPF_EVENT_EXEC = 1, /* the process exec'd: its old entry was dropped */
	SFBPF_EVENT_EXIT, /* its last thread exited: its entry was dropped */
	SFBPF_EVENT_NO_PROC, /* sampled, but no (valid) entry; addr: SFBPF_NO_PROC_* */
	SFBPF_EVENT_NO_MAPPING, /* sampled at, or returning to, addr: in no known mapping */
	/*
	 * pid was forked by addr (a tgid) and got a copy of its entry in the
	 * kernel, start_ticks its own: it unwinds from its first sample. The
	 * event is reserved before the copy is made, so none is made unheard.
	 */
	SFBPF_EVENT_FORK,
};

/*
 * A no-proc report whose sample was walked with VMAs found in the kernel
 * (vmafind.h), every file met known by its identity: its entry can wait
 * until ld.so has mapped the libraries (read 20 ms on, as after an exec),
 * rather than be read at once, half-made. One that met a file with no table
 * by its identity is read at once (0): only a read brings its table.
 */
#define SFBPF_NO_PROC_WALKED 1

/* A FORK event's child has its parent's runtime settings (profile.bpf.c, sfbpf_fork). */
#define SFBPF_FORK_RUNTIMES (1ULL << 32)

struct sfbpf_event {
	__u64 time_ns; /* bpf_ktime_get_ns() */
	/*
	 * NO_MAPPING: the address; FORK: the parent's tgid, | SFBPF_FORK_RUNTIMES
	 * if the child was given its runtimes' settings too; EXEC: the new
	 * image's exec id (task_struct's self_exec_id): with start_ticks,
	 * which image a kept table of mappings (struct sfbpf_vma_kept) is of.
	 */
	__u64 addr;
	__u64 start_ticks; /* the group leader's start (see struct sfbpf_proc) */
	__u32 type; /* enum sfbpf_event_type */
	__u32 pid; /* tgid */
};

#endif /* SFBPF_ABI_H */
