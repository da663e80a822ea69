/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unwinder's maps, settings and per-CPU loop state, shared by every BPF
 * program that walks user stacks (profile.bpf.c, offcpu.bpf.c). Included by
 * unwind.h; include after vmlinux.h, bpf_helpers.h and abi.h. Each program
 * declares its own copies; the loader makes a second program reuse the first
 * one's table maps with bpf_map__reuse_fd(), sized before load.
 */
#ifndef SFBPF_UNWIND_MAPS_H
#define SFBPF_UNWIND_MAPS_H

#include "arch.h"

/*
 * Stack bytes read at once. A user read costs ~60 ns whatever its size up to a
 * few hundred bytes, and callers' frames lie just above: one read usually
 * serves several frames. Reads never cross a page, so they fail only where
 * the word itself is unreadable. 512 rather than 256 (kcost, 16-byte
 * frames): 12 % less per sample at 1,024 frames, 10 % at 256, no worse at 8;
 * 1,024 gained ~5 % more at depth but cost at 8 frames.
 */
#define UNWIND_WINDOW 512
/* Row cache entries per CPU (see unwind_find_rule). */
#define UNWIND_RCACHE_BITS 10
#define UNWIND_RCACHE (1 << UNWIND_RCACHE_BITS)

/*
 * Table maps: sized by userspace before load (bpf_map__set_max_entries).
 * Rows and pages: arrays of segments (abi.h), each segment an mmap'able array
 * of one element of 4 << seg_shift bytes that the loader creates when a
 * table needs it and writes with memcpy. Every segment has the inner map's
 * exact shape (userspace sets its value size with seg_shift), so the
 * verifier inlines both lookups.
 */
struct unwind_seg {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 4 << SFBPF_SEG_SHIFT_MAX);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct unwind_seg);
} rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct unwind_seg);
} pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfbpf_rule);
} rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sfbpf_object);
} objects SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, __u32); /* tgid */
	__type(value, struct sfbpf_proc);
} procs SEC(".maps");

/*
 * Per object slot: frames unwound through it (consecutive frames in one
 * object count once). The loader keeps the hottest tables when the budget is
 * hit. Sized like objects; a slot past its end is simply not counted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} obj_hits SEC(".maps");

/* Lifecycle events to the loader (struct sfbpf_event): see profile.h. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} lifecycle SEC(".maps");

/* tgid -> earliest bpf_ktime_get_ns() of its next unknown-process/mapping report. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} notify_next SEC(".maps");

/* Settings (userspace may change them between open and load). */
const volatile __u64 notify_interval_ns = 200000000ULL; /* per-process report rate */
const volatile __u64 clock_tick_ns = 10000000ULL; /* 1 s / sysconf(_SC_CLK_TCK) */
/* Entries per table segment, log2 (abi.h); read-only, so the verifier knows it. */
const volatile __u32 seg_shift = SFBPF_SEG_SHIFT_MAX;

/*
 * A row found: the rule of the ELF addresses [lo, lo + len) of object slot
 * obj while the slot's table is generation gen (a part of the row's range
 * inside one page, which is all a lookup needs to know). 16 bytes: the
 * per-CPU scratch value that holds the cache must stay under 32 KiB.
 */
struct sfbpf_rcache_entry {
	__u32 obj;
	__u32 gen;
	__u32 lo;
	__u16 len; /* 0: matches no address */
	__u16 rule; /* SFBPF_RULE_GAP_ID: no rule, known */
};

/* The caller's frame, as computed from the current one. */
struct sfbpf_unwind_frame {
	__u64 pc;
	__u64 sp;
	__u64 fp;
	__u64 xreg_at; /* where the tracked register's value is: UNWIND_XREG_* or an address */
	bool exact;
};

/*
 * V8 frames the chained walk (kernels without bpf_loop()) stepped by fp and
 * leaves to its last link to name (v8.h, v8_later_names()): at most this many
 * a sample, the deeper ones counted (SFBPF_STAT_V8_LATER_LOST).
 */
#define UNWIND_V8_LATER 32

/* One such frame: where it was, as the walk met it. */
struct sfbpf_v8_later {
	__u64 pc;
	__u64 sp;
	__u64 fp;
	__u32 n; /* its index among the sample's frames */
	__u32 exact;
};

/* The frame being unwound. Lives in a per-CPU map value (see above). */
struct sfbpf_unwind_state {
	__u64 pc;
	__u64 sp;
	__u64 fp;
	/*
	 * Where this frame's value of the tracked callee-saved register is
	 * (abi.h, SFBPF_XREG_*): the user address a callee saved it at, or
	 * UNWIND_XREG_LIVE (still in pt_regs), or UNWIND_XREG_LOST (unwind.h).
	 */
	__u64 xreg_at;
	__u64 regs; /* kernel address of the task's user pt_regs */
	__u32 n; /* frames emitted */
	__u32 max; /* frame limit, <= UNWIND_MAX_FRAMES (unwind.h) */
	__u32 map; /* index of pc's mapping in proc->maps */
	__u32 fp_frames; /* frames found through frame-pointer steps */
	__u8 stop; /* enum sfbpf_stop, once the loop ended */
	__u8 exact; /* pc is not a return address: look it up as is */
	__u8 obj_flags; /* SFBPF_OBJ_F_* of the table-less object slots met */
	__u8 switches; /* frame-pointer steps onto another stack (UNWIND_FP_SWITCHES) */
	__u32 gap_frames; /* of fp_frames, those from PCs without a row in a table */
	__u32 last_obj; /* object slot of the previous frame (hit counting) */
	__u8 fp_linked; /* fp was read from the frame-pointer chain, not passed through */
	__u8 vma_walk; /* proc is this CPU's table of VMAs found in the kernel (vmafind.h) */
	__u8 vma_found; /* mappings it found */
	__u8 vma_miss; /* 1 + enum sfbpf_vma_miss of the last VMA it could not use; 0: none */
	__u32 proc_gen; /* the process table's generation (chained walks check it) */
	__u8 vma_looked; /* this sample's bpf_find_vma() was made (vmafind.h) */
	__u8 hs_stop; /* enum sfbpf_hs_stop: why a pc in a JVM's code was not stepped (hotspot.h) */
	__u8 in_rt_code; /* pc is a runtime's code (runtime.h), maybe in no known mapping: not
			    st->map's */
	__u16 hs_compiled; /* frames stepped by a code blob's size (hotspot.h) */
	__u32 tgid; /* the sampled process: its runtime's settings are looked up by it */
	__u32 hs_interpreted; /* interpreted frames stepped (hotspot.h) */
	__u64 miss_addr; /* SFBPF_STOP_NO_MAPPING: the address no mapping covers */
	struct sfbpf_unwind_frame next; /* the caller unwind_frame() computes */
	__u64 rt_ip; /* a runtime step's identity for its frame (runtime.h) */
	__s32 rt_err; /* and its outcome, taken before unwind_frame() in the looped walk */
	/* What a step reads, off the stack: the looped walk's calls share 512 bytes of it. */
	__u64 tmp[8];
	__u8 hs_blob[SFBPF_HS_BLOB_SPAN]; /* a code blob's first bytes (hotspot.h) */
	/* The process's HotSpot settings, copied at its sample's first need (hotspot.h) */
	struct sfbpf_hs_proc hs;
	__u8 hs_looked; /* 0: not yet; 1: none; 2: in hs */
	__u8 v8_looked; /* the same for v8 (v8.h) */
	/* V8 frames stepped (v8.h), per kind: SFBPF_STAT_V8_* */
	__u16 v8_interpreted, v8_baseline, v8_optimized, v8_other, v8_unread;
	struct sfbpf_v8_proc v8; /* the process's V8 settings, copied at its sample's first need */
	/* The sample's V8 words (abi.h, SFBPF_V8_JIT): a function and its bytecode an entry. */
	__u64 v8_words[SFBPF_V8_WORDS_MAX][2];
	__u32 v8_nwords;
	/* The chained walk's V8 frames, named in its last link (v8.h) */
	struct sfbpf_v8_later v8_later[UNWIND_V8_LATER];
	__u32 v8_nlater;
	__u16 v8_later_lost; /* those past UNWIND_V8_LATER */
	__u64 rt_epoch; /* the runtime's epoch, read with its settings: struct sfbpf_sample's */
	struct sfbpf_mapping vma_m; /* the mapping vmafind.h found last (off the stack) */
	__u64 leaf_miss; /* the topmost PC, in no known mapping, walked past (unwind_begin) */
	__u32 win_len; /* valid bytes in win, read from user address win_base */
	__u64 win_base;
	__u64 win[UNWIND_WINDOW / 8 + 1]; /* + a slack word for the verifier's bounds */
	/* Rows found, kept across samples: a return address is looked up again and again. */
	struct sfbpf_rcache_entry rcache[UNWIND_RCACHE];
};

_Static_assert((UNWIND_WINDOW & (UNWIND_WINDOW - 1)) == 0, "window: power of two");

/* bpf_loop() context: pointers only, so that it never changes across frames. */
struct sfbpf_unwind_ctx {
	struct sfbpf_unwind_state *st;
	__u64 *ips;
	const struct sfbpf_proc *proc;
};

#endif /* SFBPF_UNWIND_MAPS_H */
