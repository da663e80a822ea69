// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's Ruby processes: Ruby's reader on the after-walk half (rubies.h, afterwalk.h). */
#include <stddef.h>
#include <string.h>

#include "interp/ruby.h"
#include "profile/afterwalk.h"
#include "profile/profile.h"
#include "profile/rubies.h"

/* A VM whose structures disagree is read again once: a process may be mid-start. */
#define REFUSAL_TRIES 2

static int attach_ruby(int pid, void **rt)
{
	return ruby__attach(pid, (struct ruby **)rt);
}

static void free_ruby(void *rt)
{
	ruby__free(rt);
}

static int settings(const void *rt, void *cfg)
{
	return ruby__bpf_settings(rt, cfg);
}

static size_t eval_parts(const void *rt, const struct code_part **parts)
{
	return ruby__eval_parts(rt, parts);
}

static int jit_code(const void *rt, struct jitcode_region *out, struct code_part *entry)
{
	return ruby__jit_code(rt, out, entry);
}

static bool jit_pushing(const void *rt, uint64_t pc)
{
	return ruby__jit_pushing(rt, pc);
}

static const char *version(const void *rt)
{
	return ruby__version(rt);
}

/* Slots: the iseq (or method entry), its pc with the stamp; a block's owner (abi.h). */
static int frame(const void *rt, uint64_t iseq, uint64_t b, uint64_t owner,
		 struct afterwalk_frame *out)
{
	struct ruby_frame f;
	int err = ruby__frame(rt, iseq, b & SFBPF_RB_PC_MASK, (uint16_t)(b >> 48), owner, &f);

	if (!err) {
		memcpy(out->name, f.name, sizeof(out->name));
		memcpy(out->file, f.file, sizeof(out->file));
		out->firstline = f.firstline;
		out->line = f.line;
	}
	return err;
}

/* A method's frame (its method entry sent) offers that entry to the blocks inside it. */
static uint64_t outer_owner(uint64_t a)
{
	return a & SFBPF_RB_METHOD ? a & SFBPF_RB_PC_MASK : 0;
}

_Static_assert(RUBY_NAME_BYTES == AFTERWALK_NAME_BYTES && RUBY_FILE_BYTES == AFTERWALK_FILE_BYTES &&
		       RUBY_EVAL_PARTS <= AFTERWALK_PARTS,
	       "Ruby's frames fit the after-walk half's");

_Static_assert(offsetof(struct sfbpf_rb_proc, start_ticks) == 0,
	       "afterwalk writes start_ticks first");

const struct afterwalk_kind ruby_kind = {
	.runtime = "ruby",
	.freed = "[collected iseq]",
	.bad = "[bad iseq]",
	.full = "[ruby names full]",
	.freed_counter = "ruby_collected_iseq",
	.bad_counter = "ruby_bad_iseq",
	.no_loop = "the VM's loop not found: Ruby frames go above the native ones",
	.flag = SFBPF_SAMPLE_RUBY,
	.settings_size = sizeof(struct sfbpf_rb_proc),
	.attach = attach_ruby,
	.free = free_ruby,
	.settings = settings,
	.eval_parts = eval_parts,
	.version = version,
	.object_stats = ruby__object_stats,
	.frame = frame,
	.outer_owner = outer_owner,
	.jit_code = jit_code,
	.jit_pushing = jit_pushing,
};

/*
 * Whether pid may run Ruby: an executable object whose name says ruby (a
 * libruby, a ruby linked statically). The attach reads its symbols.
 */
static bool detect(int pid, const struct procmaps *pm)
{
	(void)pid;
	return afterwalk__maps_named(pm, "ruby");
}

static void *rubies_new(const struct runtime_host *host)
{
	return afterwalk__new(&ruby_kind, host, profile__rb_procs_fd(host->prof));
}

const struct runtime_ops ruby_runtime = {
	.name = "ruby",
	.prefix = "ruby",
	.starting = "not started",
	.refusal_tries = REFUSAL_TRIES,
	.new = rubies_new,
	.free = afterwalk__free,
	.detect = detect,
	.attach = afterwalk__attach,
	.remapped = afterwalk__remapped,
	.detach = afterwalk__detach,
	.release = afterwalk__release,
	.splice = afterwalk__splice,
	.mark_names = afterwalk__mark_names,
	.forget = afterwalk__forget,
	.counters = afterwalk__counters,
};
