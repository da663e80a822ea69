// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A session's budgets (session.h, and the man page's BUDGETS): each follows
 * the machine unless an option sets it, and goes to the module that keeps
 * it (aggregate, symbolize, srcline, frame_names).
 */
#include <sys/resource.h>
#include <unistd.h>

#include "interp/frame_names.h"
#include "profile/session_int.h"

static uint64_t clamp_mib(uint64_t v, uint64_t lo_mib, uint64_t hi_mib)
{
	return v < (lo_mib << 20) ? lo_mib << 20 : v > (hi_mib << 20) ? hi_mib << 20 : v;
}

void session__default_budgets(struct session_budgets *out)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t ram = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
	struct rlimit nofile;

	out->stacks = clamp_mib(ram / 64, 32, 1024);
	out->symbols = clamp_mib(ram / 256, 16, 256);
	out->jit_maps = clamp_mib(ram / 256, 16, 256);
	out->frame_names = clamp_mib(ram / 256, 16, 256);
	/* Shared with perf events (one per CPU) and BPF maps: a quarter of what may be open. */
	out->dwarf_files = SYMCACHE_DEFAULT_DWARF_FILES;
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur != RLIM_INFINITY)
		out->dwarf_files = nofile.rlim_cur / 4 < 16   ? 16 :
				   nofile.rlim_cur / 4 > 4096 ? 4096 :
								nofile.rlim_cur / 4;
	out->spill = srcline__default_spill_budget();
}

/* What the options ask for, the machine's defaults elsewhere: in force. */
void session__set_budgets(struct session *s)
{
	session__default_budgets(&s->budgets);
	if (s->opts.max_stack_mem)
		s->budgets.stacks = s->opts.max_stack_mem;
	if (s->opts.max_symbol_mem)
		s->budgets.symbols = s->opts.max_symbol_mem;
	if (s->opts.max_jit_mem)
		s->budgets.jit_maps = s->opts.max_jit_mem;
	if (s->opts.max_python_mem)
		s->budgets.frame_names = s->opts.max_python_mem;
	if (s->opts.max_dwarf_files)
		s->budgets.dwarf_files = s->opts.max_dwarf_files;
	if (s->opts.max_spill)
		s->budgets.spill = s->opts.max_spill;
	frame_names__set_budget(s->budgets.frame_names);
	aggregator__set_budget(s->agg, s->budgets.stacks);
	symbolizer__set_budgets(s->sym, s->budgets.symbols, s->budgets.jit_maps);
	symbolizer__set_dwarf_files(s->sym, s->budgets.dwarf_files);
	srcline__set_spill_budget(s->budgets.spill);
}
