/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The userspace half every runtime read after the native walk shares (PHP,
 * Ruby, Perl: docs/DESIGN-runtimes.md): a process attached is its BPF
 * settings in the runtime's map and its eval loop's code parts; each sample
 * carrying the runtime's flag has two slots a frame (and, after a frame, two
 * more may carry its owner: SFBPF_RT_OWNER, Ruby's blocks), named once per process
 * (a frame cache, forgotten when the names table is collected) and spliced
 * in place of the eval loop's native frames (runtime__splice_after());
 * "[freed]" and "[bad]" markers, the counters. A runtime gives its reader
 * (struct afterwalk_kind) and its runtime_ops take these functions.
 */
#ifndef SFBPF_PROFILE_AFTERWALK_H
#define SFBPF_PROFILE_AFTERWALK_H

#include <stddef.h>
#include <stdint.h>

#include "interp/codeparts.h"
#include "procs/jitcode.h"
#include "profile/runtime.h"

#define AFTERWALK_PARTS 8
#define AFTERWALK_NAME_BYTES 256
#define AFTERWALK_FILE_BYTES 512

/* A frame as its runtime's users know it. */
struct afterwalk_frame {
	char name[AFTERWALK_NAME_BYTES];
	char file[AFTERWALK_FILE_BYTES];
	uint32_t firstline, line;
};

/* One runtime's reader, in its words. */
struct afterwalk_kind {
	const char *runtime; /* frame_names' runtime, messages' prefix: "ruby" */
	const char
		*freed; /* the marker of a frame gone by the time it is read: "[collected iseq]" */
	const char *bad; /* of one unreadable: "[bad iseq]" */
	const char *full; /* of one the names table had no room for */
	const char *freed_counter, *bad_counter; /* "ruby_collected_iseq", "ruby_bad_iseq" */
	const char *no_loop; /* said when an attach found no eval loop: frames go above */
	uint8_t flag; /* SFBPF_SAMPLE_* */
	size_t settings_size; /* its BPF settings; start_ticks first */
	/* The process's runtime: 0 and *rt, or an errno (runtime.h's attach's). */
	int (*attach)(int pid, void **rt);
	/*
	 * Optional (runtime_ops' inherit): a reader of pid, forked by the
	 * process parent_rt reads, made from that one without reading pid.
	 */
	int (*inherit)(const void *parent_rt, int pid, void **rt);
	void (*free)(void *rt);
	int (*settings)(const void *rt, void *cfg);
	size_t (*eval_parts)(const void *rt, const struct code_part **parts);
	const char *(*version)(const void *rt);
	void (*object_stats)(uint64_t *reads, uint64_t *hits);
	/*
	 * A frame from its slots a, b and its owner's (SFBPF_RT_OWNER's slot,
	 * without the flag; 0: none): 0, or -ESTALE ("freed"), or another
	 * error ("bad").
	 */
	int (*frame)(const void *rt, uint64_t a, uint64_t b, uint64_t owner,
		     struct afterwalk_frame *out);
	/*
	 * Optional: the owner that a frame's slot a offers the frames inside it
	 * sent without one (Ruby: a method's frame, its method entry, to its
	 * blocks where the walk sent no owner: the chained form, or no room).
	 * 0: none. Such frames are named with it; frame() believes it or not.
	 */
	uint64_t (*outer_owner)(uint64_t a);
	/*
	 * Optional: the runtime's JIT code in the process, whose frames all
	 * have one shape (procs/jitcode.h; Ruby 3.1's YJIT), and the function
	 * each run of frames begins in (Ruby's rb_vm_exec): 0, *out and
	 * *entry, or -ENOENT. Its frames take runs as the loop's do
	 * (runtime.h's RUNTIME_EVAL_JIT).
	 */
	int (*jit_code)(const void *rt, struct jitcode_region *out, struct code_part *entry);
	/*
	 * Optional: whether a sample whose leaf is the JIT code at pc came as
	 * that code pushed a frame, the innermost not its own yet (the runtime
	 * moves its frame pointer first): that frame is left out.
	 */
	bool (*jit_pushing)(const void *rt, uint64_t pc);
};

/* Whether an executable object pid maps has word in its name (detect's first test). */
bool afterwalk__maps_named(const struct procmaps *pm, const char *word);

/* runtime_ops' new: the runtime's state, its settings map fd. */
void *afterwalk__new(const struct afterwalk_kind *kind, const struct runtime_host *host, int fd);

/* The rest of runtime_ops, the same for each. */
void afterwalk__free(void *aw);
int afterwalk__attach(void *aw, struct runtime_proc *rp);
int afterwalk__inherit(void *aw, const struct runtime_proc *parent, struct runtime_proc *child);
/* The JIT code looked for again (kind->jit_code), if not found yet. */
void afterwalk__remapped(void *aw, struct runtime_proc *rp);
void afterwalk__detach(void *aw, struct runtime_proc *rp);
void afterwalk__release(void *aw, struct runtime_proc *rp);
int afterwalk__splice(void *aw, struct runtime_proc *rp, const struct sfbpf_sample *in, size_t size,
		      struct sfbpf_sample *out);
void afterwalk__mark_names(void *aw);
void afterwalk__forget(void *aw, struct runtime_proc *rp);
void afterwalk__counters(const void *aw, runtime_put_fn put, void *ctx);

#endif /* SFBPF_PROFILE_AFTERWALK_H */
