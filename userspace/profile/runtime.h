/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a language runtime implements for the profile to name its frames
 * (issue #44 item 6): CPython (pythons.c) and HotSpot (hotspots.c) today,
 * each one struct runtime_ops; the next runtime is one more. Its BPF half
 * is one of bpf/runtime.h's hooks; its reading of the process lives in
 * interp/ (layouts from what the runtime publishes for tools).
 *
 *   detect  whether a process's mappings may hold the runtime: every
 *           process the tracker writes pays this, so it reads nothing
 *   attach  read the process and push the BPF walk's settings for it
 *   splice  name a sample's frames of the runtime (interp/frame_names.h)
 *
 * What every runtime needs alike is runtimes.c's, once: the processes and
 * their states, the retries of a runtime still starting, a process that
 * exited kept until the samples it left in the ring are read, the counts
 * of attaches, refusals and unreadable processes.
 *
 * Not thread-safe: the session's thread calls every operation.
 */
#ifndef SFBPF_PROFILE_RUNTIME_H
#define SFBPF_PROFILE_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "procs/procmaps.h"

struct profile;

/*
 * What a runtime is given of its session: the profile (its BPF settings map),
 * and the name a process's own perf map (/tmp/perf-PID.map) gives a JIT
 * address, or NULL: a runtime that names its code itself checks its names
 * against the map's, so that the two never disagree silently.
 */
struct jitcode_region;
struct runtime_host {
	struct profile *prof;
	const char *(*jit_name)(void *ctx, int pid, uint64_t addr);
	/*
	 * The runtime's JIT code in pid whose frames all have one shape
	 * (procs/jitcode.h): the loader's table of that shape for its
	 * mappings (r NULL: none any more). 0, or a negative errno.
	 */
	int (*set_jit)(void *ctx, int pid, uint64_t start_ticks, const struct jitcode_region *r);
	void *ctx;
};

/* One process of a runtime. */
struct runtime_proc {
	int pid;
	uint64_t start_ticks; /* tells the process from a later one under its PID */
	void *priv; /* the runtime's: what attach made (its reader, caches) */
};

/* A counter of the runtime's own, as --stats and the metrics name it. */
typedef void (*runtime_put_fn)(void *ctx, const char *name, uint64_t value, bool gauge);

struct runtime_ops {
	const char *name; /* in messages: "python: pid 12: ..." */
	const char *prefix; /* of its counters: "py" gives py_attached */
	const char *starting; /* what -EAGAIN means, in messages: "no thread yet" */
	/*
	 * Attaches that may return -EPROTO (what the process publishes did not
	 * check out) before the refusal is final: a runtime whose tables are
	 * set before it runs refuses at once (1); one read as it starts up may
	 * look torn for a while.
	 */
	unsigned int refusal_tries;

	/* Its session-wide state (its BPF settings map from host->prof). NULL + errno. */
	void *(*new)(const struct runtime_host *host);
	void (*free)(void *rt);
	bool (*detect)(int pid, const struct procmaps *pm);
	/*
	 * Read p and push its BPF settings, p->priv set: 0. Else negative errno,
	 * p->priv left NULL: -EAGAIN, not started yet (tried again while it
	 * runs); -EPROTO, refused; -ENOTSUP or -ERANGE, a version it does not
	 * know; -ENOENT, not this runtime after all (no message); other, its
	 * memory unreadable (tried again a few times).
	 */
	int (*attach)(void *rt, struct runtime_proc *p);
	/*
	 * Optional: child, forked by parent (attached), given a reader made from
	 * parent's without reading child (it may be gone already): what the fork
	 * left shared (PHP's opcache) is read through parent once child is gone.
	 * Its BPF settings are the kernel's copy of parent's (bpf/runtime.h).
	 * 0 and child->priv set, or a negative errno.
	 */
	int (*inherit)(void *rt, const struct runtime_proc *parent, struct runtime_proc *child);
	/* Its mappings changed while attached (a new heap): the settings again. NULL: none. */
	void (*remapped)(void *rt, struct runtime_proc *p);
	/* It exited or exec'd: its settings out of the BPF map; p->priv stays for its samples. */
	void (*detach)(void *rt, struct runtime_proc *p);
	/* p->priv freed (detached before, if it was attached). */
	void (*release)(void *rt, struct runtime_proc *p);
	/*
	 * in (size bytes, as read from the ring) with its frames of this runtime
	 * named, into out (a whole struct sfbpf_sample, never in): 1; 0, nothing
	 * to name (in as it is). p: the sample's process, attached or exited
	 * since; NULL when it is neither (a runtime may count what it sent).
	 */
	int (*splice)(void *rt, struct runtime_proc *p, const struct sfbpf_sample *in, size_t size,
		      struct sfbpf_sample *out);
	/*
	 * A collection of frame_names is under way: the runtime's markers are
	 * marked; then forget() forgets the ids each process's caches hold
	 * (named again when met), and the session marks its stacks'.
	 */
	void (*mark_names)(void *rt);
	void (*forget)(void *rt, struct runtime_proc *p);
	/* A record the BPF walk sent ahead of p's samples (a code object's description). NULL:
	 * none. */
	void (*describe)(void *rt, struct runtime_proc *p, const void *rec, size_t size);
	/* Its own counters, past the common ones. */
	void (*counters)(const void *rt, runtime_put_fn put, void *ctx);
};

/*
 * The splice of a runtime whose frames stand where the native walk put
 * their identities (HotSpot's, V8's), runtimes.c's: each user frame of in
 * given to frame(ctx, ip, leaf, ips, max), which puts in ips what replaces
 * it (frame_names__ip() of names, or a pc) and returns how many, at most
 * max; 0 keeps the frame, as kept(ip) (NULL: ip), the walk's identity of a
 * frame nothing named taken off. Returns splice()'s values; a stack cut at
 * SFBPF_MAX_FRAMES stops at depth.
 */
#define RUNTIME_MAX_SPLICED 64
typedef uint32_t (*runtime_frame_fn)(void *ctx, uint64_t ip, bool leaf, uint64_t *ips,
				     uint32_t max);
int runtime__splice_frames(const struct sfbpf_sample *in, size_t size, struct sfbpf_sample *out,
			   runtime_frame_fn frame, uint64_t (*kept)(uint64_t ip), void *ctx);

/*
 * What in_eval() says of a native frame's pc: the eval loop's (it runs a run
 * of the runtime's frames); JIT code's, which runs a run too, unless the
 * loop called it for a frame the loop pushed: the nearest of these frames
 * outside it is a loop frame, with no frame of the function where every run
 * begins (ENTRY: Ruby's rb_vm_exec) between. That run is the loop frame's;
 * the JIT frame and those between (the loop's call into JIT code) go. 0:
 * none of these.
 */
#define RUNTIME_EVAL_LOOP 1
#define RUNTIME_EVAL_JIT 2
#define RUNTIME_EVAL_ENTRY 3

/*
 * The splice of a runtime whose frames the BPF walk appends after the kernel
 * frames (CPython's, PHP's; bpf/runtime.h), runtimes.c's: in's npy frames,
 * named ids[0 .. npy), innermost first, entry[j] if frame j is the outermost
 * of one call of the native eval loop. Each native frame of the eval loop
 * (in_eval(ctx, pc) above) is replaced by its run of frames, up to and including
 * the next entry; frames no eval frame took (a native walk cut short) go
 * outermost, but where the native walk is whole and has eval frames, the
 * innermost runs past them (pushed, their loop not yet entered) go at the
 * leaf. Into out
 * (nr_py 0); *left: some went outermost, *was_short: an
 * eval frame found none left. A stack cut at SFBPF_MAX_FRAMES stops at depth.
 */
void runtime__splice_after(const struct sfbpf_sample *in, struct sfbpf_sample *out,
			   const uint64_t *ids, const bool *entry, uint32_t npy,
			   int (*in_eval)(const void *ctx, uint64_t pc), const void *ctx,
			   bool *left, bool *was_short);

#endif /* SFBPF_PROFILE_RUNTIME_H */
