/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A HotSpot JVM's own frames, read from outside a running process started
 * with no flags (docs/research/hotspot.md): the JVM object (libjvm.so, or an
 * executable that embeds it) found by the tables it exports for the JDK's
 * serviceability agent (hotspot_vmstructs.h), and the layout a walk of its
 * threads reads, learnt from those tables, never from a table of our own.
 * The process is never stopped, traced or changed.
 *
 * Lifecycle: hotspot__attach() → lookups → hotspot__free().
 * Error rule: negative errno.
 *   -ENOENT   no JVM in the process (no object exports gHotSpotVMStructs)
 *   -EAGAIN   a JVM not initialised yet (its tables or code cache not set up)
 *   -EPROTO   its tables break a bound, or lack what a walk needs
 *   -ESRCH    the process is gone; -EFAULT an unreadable address
 */
#ifndef SFBPF_INTERP_HOTSPOT_H
#define SFBPF_INTERP_HOTSPOT_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "interp/hotspot_vmstructs.h"

struct hotspot;

#define HOTSPOT_NAME_MAX 256

struct hotspot_method {
	char klass[HOTSPOT_NAME_MAX]; /* java.lang.Thread */
	char name[HOTSPOT_NAME_MAX]; /* sleep */
	char file[HOTSPOT_NAME_MAX]; /* Thread.java; "" when the class says none */
	uint64_t const_method; /* its ConstMethod: where its bytecodes and lines are */
};

enum hotspot_frame_kind {
	HOTSPOT_FRAME_INTERPRETED, /* a frame of the template interpreter */
	HOTSPOT_FRAME_NATIVE, /* a native method's (no bytecode): interpreted or compiled wrapper */
	HOTSPOT_FRAME_COMPILED, /* a method the JIT compiled, or inlined into one it compiled */
};

struct hotspot_frame {
	uint64_t method; /* Method* */
	int32_t bci; /* bytecode index; -1 for a native method */
	enum hotspot_frame_kind kind;
};

/*
 * How far a thread's walk went: to the call stub (native code that called
 * into Java), or to the first frame of code it could not step out of.
 */
enum hotspot_walk_end {
	HOTSPOT_END_CALL_STUB, /* reached the native caller of the outermost Java frame */
	HOTSPOT_END_NO_ANCHOR, /* running Java code (or none): no anchor to start from */
	HOTSPOT_END_OTHER_CODE, /* a pc in no Java code, or in a stub with no frame of its own */
	HOTSPOT_END_UNREADABLE, /* a frame that did not read as one */
	HOTSPOT_END_LIMIT, /* HOTSPOT_MAX_FRAMES, or all threads' frames past 1M */
};

#define HOTSPOT_MAX_FRAMES 1024

struct hotspot_thread {
	uint64_t java_thread; /* JavaThread* */
	uint64_t tid; /* the kernel's thread id (OSThread::_thread_id) */
	int64_t state; /* JavaThreadState: _thread_in_native ... */
	enum hotspot_walk_end end;
	uint32_t nr_frames;
	struct hotspot_frame *frames; /* innermost first */
	size_t frames_cap;
};

int hotspot__attach(int pid, struct hotspot **out);
void hotspot__free(struct hotspot *hs);

/* The tables the JVM describes itself with. */
const struct hs_tables *hotspot__tables(const struct hotspot *hs);
/* The JVM object's load bias: a static's address less this is its ELF value. */
uint64_t hotspot__bias(const struct hotspot *hs);

/*
 * Every JavaThread of the JVM's thread list, each with the Java frames of a
 * thread stopped outside Java code (in native code, the VM, or blocked),
 * walked from its frame anchor. 0 or an error; free with hotspot__threads_free().
 */
int hotspot__threads(struct hotspot *hs, struct hotspot_thread **out, size_t *nr);
void hotspot__threads_free(struct hotspot_thread *threads, size_t nr);

/* A method's names: 0, or -EPROTO where method does not read as a Method. */
int hotspot__method(const struct hotspot *hs, uint64_t method, struct hotspot_method *out);
/* The source line of bytecode index bci of m, or -1. */
int hotspot__line(const struct hotspot *hs, const struct hotspot_method *m, int bci);

/*
 * The settings of the BPF walk's HotSpot step (bpf/hotspot.h), start_ticks
 * left to the caller: 0, -EAGAIN (no code heap yet), -EPROTO where a field
 * does not fit them (a width, an offset), or a read's error.
 */
int hotspot__bpf_settings(struct hotspot *hs, struct sfbpf_hs_proc *out);
/*
 * The JVM's count of classes unloaded so far (java.cls.unloadedClasses),
 * what the BPF walk sends as a sample's epoch: 0, -ENOENT (no perf data),
 * or procmem's errors.
 */
int hotspot__unloads(const struct hotspot *hs, uint64_t *count);

#define HOTSPOT_MAX_SCOPES 64

/* What a pc in the JVM's code stands for. */
struct hotspot_code_frames {
	uint64_t blob; /* the blob holding it */
	uint64_t ident; /* with blob, which blob it is: compile id and size (hotspot__blob_is()) */
	uint32_t nr; /* methods, innermost (inlined) first; 0: code of no method */
	struct hotspot_frame frames[HOTSPOT_MAX_SCOPES];
	char stub[64]; /* nr 0: the blob's own name ("Interpreter", "StubRoutines (1)") */
};

/*
 * The Java frames pc stands for: a return address, or with leaf the pc the
 * code was stopped at (its methods are those of the next debug record, as
 * HotSpot's own sampling takes them). 0, -ENOENT (not the JVM's code), or
 * -EPROTO / a read's error.
 */
int hotspot__code_pc(struct hotspot *hs, uint64_t pc, bool leaf, struct hotspot_code_frames *out);
/* Whether pc is in the JVM's code: the interpreter's, or a code heap's reserved range. */
bool hotspot__owns(const struct hotspot *hs, uint64_t pc);
/* Whether the blob at blob is still the one out described (not flushed, nor replaced). */
bool hotspot__blob_is(const struct hotspot *hs, uint64_t blob, uint64_t ident);
/* Whether method is still the Method whose key (below) is key (a class unloaded: not). */
bool hotspot__method_is(const struct hotspot *hs, uint64_t method, uint64_t key);
/*
 * The key hotspot__method_is() compares: method's ConstMethod and the names'
 * Symbols (a Method freed with its class and another at its address, and at
 * its ConstMethod's, has another key). 0 or a read's error.
 */
int hotspot__method_key(const struct hotspot *hs, uint64_t method, uint64_t *key);

/*
 * A read-only fd on the source file of a Java class in process pid: path is
 * its package's directories and its SourceFile ("demo/Spin.java"), looked
 * for beneath the JVM's working directory and in its class path's
 * directories (hotspot_source.c), under its root. -ENOENT: not found.
 */
int hotspot__source_open(uint32_t pid, const char *path);

#endif /* SFBPF_INTERP_HOTSPOT_H */
