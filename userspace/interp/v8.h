/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * V8 (node, libnode) from outside the process (issue #45,
 * docs/DESIGN-v8.md): which object is V8, the layout its postmortem
 * metadata publishes (the v8dbg_* symbols node exports, as debuggers such as
 * llnode read them), where its code is, and the names of what the BPF walk
 * sent (bpf/v8.h): a SharedFunctionInfo's function name, script and line,
 * and the functions an optimised code object runs at a pc, inlined ones
 * included. Every read is one process_vm_readv of the target; every object
 * read is checked by its map's instance type before it is believed.
 *
 * Not thread-safe: one caller per struct v8.
 * Error rule: negative errno. v8__attach: -ENOENT, no V8 with its metadata
 * in the process; -ENOTSUP, a build the walk cannot read (pointer
 * compression); -EPROTO, metadata that does not check out.
 */
#ifndef SFBPF_INTERP_V8_H
#define SFBPF_INTERP_V8_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi.h"

struct v8;
struct procmaps;

#define V8_NAME_MAX 256
#define V8_FILE_MAX 512
/* Functions one optimised pc runs, inlined ones included. */
#define V8_MAX_INLINED 32

int v8__attach(int pid, struct v8 **out);
void v8__free(struct v8 *v);

/* The BPF step's settings (abi.h) for the process's mappings pm: ranges, slots. */
int v8__bpf_settings(struct v8 *v, const struct procmaps *pm, struct sfbpf_v8_proc *cfg);

/* The V8 version the process runs ("11.3.244.8"), for messages. */
const char *v8__version(const struct v8 *v);

/* A JavaScript function at a position of its script. */
struct v8_func {
	char name[V8_NAME_MAX]; /* as V8's profiler names it: "(anonymous)" for none */
	char file[V8_FILE_MAX]; /* the script's name: a path, a file:// URL, node:internal/x */
	uint32_t line; /* 0: unknown */
};

/*
 * The function whose SharedFunctionInfo is at sfi (untagged), at bytecode
 * offset off (SFBPF_V8_OFF_NONE: none, its first line then): 0, or -ESTALE
 * when sfi is no longer one (the collector moved it), another error when
 * unreadable.
 */
int v8__function(struct v8 *v, uint64_t sfi, uint32_t off, struct v8_func *out);

/* The functions an optimised pc runs, innermost first. */
struct v8_code_frames {
	uint32_t nr;
	uint64_t sfi; /* the outermost's SharedFunctionInfo, tagged (the walk's check is of it) */
	uint64_t code, start; /* the code object (tagged) and its instructions' start */
	struct v8_func frames[V8_MAX_INLINED];
};

/*
 * The code object that holds pc (a return address unless leaf) and what it
 * runs there: 0; -ENOENT, no code object holds pc; -ENOTSUP, code that is
 * not an optimised function's (a stub, baseline code).
 */
int v8__code(struct v8 *v, uint64_t pc, bool leaf, struct v8_code_frames *out);

/* What v8__function() read sfi by (its name or scope info): 0, or -ESTALE. */
int v8__function_key(struct v8 *v, uint64_t sfi, uint64_t *key);
/* Whether code (tagged) still starts its instructions at start. */
bool v8__code_is(struct v8 *v, uint64_t code, uint64_t start);

#endif /* SFBPF_INTERP_V8_H */
