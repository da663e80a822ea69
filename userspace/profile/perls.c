// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's Perl processes: Perl's reader on the after-walk half (perls.h, afterwalk.h). */
#include <stddef.h>
#include <string.h>

#include "interp/perl.h"
#include "profile/afterwalk.h"
#include "profile/profile.h"
#include "profile/perls.h"

/* An interpreter whose structures disagree is read again once: it may be mid-start. */
#define REFUSAL_TRIES 2

static int attach_perl(int pid, void **rt)
{
	return perl__attach(pid, (struct perl **)rt);
}

static void free_perl(void *rt)
{
	perl__free(rt);
}

static int settings(const void *rt, void *cfg)
{
	return perl__bpf_settings(rt, cfg);
}

static size_t eval_parts(const void *rt, const struct code_part **parts)
{
	return perl__eval_parts(rt, parts);
}

static const char *version(const void *rt)
{
	return perl__version(rt);
}

/* Slots: the CV (or none), the COP with the stamp and kind (abi.h). */
static int frame(const void *rt, uint64_t cv, uint64_t b, uint64_t owner,
		 struct afterwalk_frame *out)
{
	struct perl_frame f;
	int err = perl__frame(rt, cv, b, &f);

	(void)owner; /* Perl's walk sends none */

	if (!err) {
		memcpy(out->name, f.name, sizeof(out->name));
		memcpy(out->file, f.file, sizeof(out->file));
		out->line = f.line;
	}
	return err;
}

_Static_assert(PERL_NAME_BYTES == AFTERWALK_NAME_BYTES && PERL_FILE_BYTES == AFTERWALK_FILE_BYTES &&
		       PERL_EVAL_PARTS <= AFTERWALK_PARTS,
	       "Perl's frames fit the after-walk half's");

_Static_assert(offsetof(struct sfbpf_pl_proc, start_ticks) == 0,
	       "afterwalk writes start_ticks first");

const struct afterwalk_kind perl_kind = {
	.runtime = "perl",
	.freed = "[freed sub]",
	.bad = "[bad sub]",
	.full = "[perl names full]",
	.freed_counter = "perl_freed_sub",
	.bad_counter = "perl_bad_sub",
	.no_loop = "no Perl_runops_standard: Perl frames go above the native ones",
	.flag = SFBPF_SAMPLE_PERL,
	.settings_size = sizeof(struct sfbpf_pl_proc),
	.attach = attach_perl,
	.free = free_perl,
	.settings = settings,
	.eval_parts = eval_parts,
	.version = version,
	.object_stats = perl__object_stats,
	.frame = frame,
};

/*
 * Whether pid may run Perl: an executable object whose name says perl (perl,
 * linked statically, a libperl). The attach reads its symbols.
 */
static bool detect(int pid, const struct procmaps *pm)
{
	(void)pid;
	return afterwalk__maps_named(pm, "perl");
}

static void *perls_new(const struct runtime_host *host)
{
	return afterwalk__new(&perl_kind, host, profile__pl_procs_fd(host->prof));
}

const struct runtime_ops perl_runtime = {
	.name = "perl",
	.prefix = "perl",
	.starting = "not started",
	.refusal_tries = REFUSAL_TRIES,
	.new = perls_new,
	.free = afterwalk__free,
	.detect = detect,
	.attach = afterwalk__attach,
	.detach = afterwalk__detach,
	.release = afterwalk__release,
	.splice = afterwalk__splice,
	.mark_names = afterwalk__mark_names,
	.forget = afterwalk__forget,
	.counters = afterwalk__counters,
};
