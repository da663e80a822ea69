// SPDX-License-Identifier: GPL-2.0-or-later
/* A session's PHP processes: PHP's reader on the after-walk half (phps.h, afterwalk.h). */
#include <stddef.h>
#include <string.h>

#include "interp/php.h"
#include "profile/afterwalk.h"
#include "profile/phps.h"
#include "profile/profile.h"

/* The build ID and the symbol table are the binary's static data: a refusal is final. */
#define REFUSAL_TRIES 1

static int attach_php(int pid, void **rt)
{
	return php__attach(pid, (struct php **)rt);
}

static int inherit_php(const void *parent, int pid, void **rt)
{
	return php__inherit(parent, pid, (struct php **)rt);
}

static void free_php(void *rt)
{
	php__free(rt);
}

static int settings(const void *rt, void *cfg)
{
	return php__bpf_settings(rt, cfg);
}

static size_t eval_parts(const void *rt, const struct code_part **parts)
{
	return php__eval_parts(rt, parts);
}

static const char *version(const void *rt)
{
	return php__version(rt);
}

/* Slots: the function, its opline with the stamp (abi.h). */
static int frame(const void *rt, uint64_t func, uint64_t b, uint64_t owner,
		 struct afterwalk_frame *out)
{
	struct php_frame f;
	int err = php__frame(rt, func, b & SFBPF_PHP_OPLINE_MASK, (uint16_t)(b >> 48), &f);

	(void)owner; /* PHP's walk sends none */

	if (!err) {
		memcpy(out->name, f.name, sizeof(out->name));
		memcpy(out->file, f.file, sizeof(out->file));
		out->firstline = f.firstline;
		out->line = f.line;
	}
	return err;
}

_Static_assert(PHP_NAME_BYTES == AFTERWALK_NAME_BYTES && PHP_FILE_BYTES == AFTERWALK_FILE_BYTES &&
		       PHP_EVAL_PARTS <= AFTERWALK_PARTS,
	       "PHP's frames fit the after-walk half's");

_Static_assert(offsetof(struct sfbpf_php_proc, start_ticks) == 0,
	       "afterwalk writes start_ticks first");

const struct afterwalk_kind php_kind = {
	.runtime = "php",
	.freed = "[freed function]",
	.bad = "[bad function]",
	.full = "[php names full]",
	.freed_counter = "php_freed_function",
	.bad_counter = "php_bad_function",
	.no_loop = "no execute_ex: PHP frames go above the native ones",
	.flag = SFBPF_SAMPLE_PHP,
	.settings_size = sizeof(struct sfbpf_php_proc),
	.attach = attach_php,
	.inherit = inherit_php,
	.free = free_php,
	.settings = settings,
	.eval_parts = eval_parts,
	.version = version,
	.object_stats = php__object_stats,
	.frame = frame,
};

/*
 * Whether pid may run PHP: an executable object whose name says php (php8.2,
 * php-fpm8.2, php-cgi8.2, libphp8.2.so). The attach reads its symbols.
 */
static bool detect(int pid, const struct procmaps *pm)
{
	(void)pid;
	return afterwalk__maps_named(pm, "php");
}

static void *phps_new(const struct runtime_host *host)
{
	return afterwalk__new(&php_kind, host, profile__php_procs_fd(host->prof));
}

const struct runtime_ops php_runtime = {
	.name = "php",
	.prefix = "php",
	.starting = "not started",
	.refusal_tries = REFUSAL_TRIES,
	.new = phps_new,
	.free = afterwalk__free,
	.detect = detect,
	.attach = afterwalk__attach,
	.inherit = afterwalk__inherit,
	.detach = afterwalk__detach,
	.release = afterwalk__release,
	.splice = afterwalk__splice,
	.mark_names = afterwalk__mark_names,
	.forget = afterwalk__forget,
	.counters = afterwalk__counters,
};
