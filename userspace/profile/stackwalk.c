// SPDX-License-Identifier: GPL-2.0-or-later
/* The one rule frames are named by (see stackwalk.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/frame_names.h"
#include "profile/aggregate.h"
#include "symbols/ksyms.h"
#include "profile/stackwalk.h"
#include "symbols/symbolize.h"
#include "util/vec.h"

const char *stackwalk__comm(const struct aggr_stack *st)
{
	/* The idle tasks are "swapper/N" per CPU; perf names them all "swapper". */
	if (st->pid == 0)
		return "swapper";
	return st->comm[0] ? st->comm : "[unknown]";
}

/* A native user frame: the symbol, else the DWARF's function, else its module. */
static void name_user(struct sw_name *out)
{
	const struct sym_info *si = &out->si;
	struct sw_frame *f = &out->f;
	const struct srcline_frame *outer = si->nr_lines ? &si->lines[si->nr_lines - 1] : NULL;

	/* Where the address is: its mapping, its object. */
	*f = (struct sw_frame){ .kind = f->kind,
				.addr = f->addr,
				.name = f->name,
				.mapped = si->mapped,
				.elf_addr = si->elf_addr,
				.module = si->module,
				.path = si->path,
				.map_start = si->map_start,
				.map_end = si->map_end,
				.map_offset = si->map_offset,
				.build_id = si->build_id };
	if (outer) {
		f->file = outer->file;
		f->line = outer->line;
		f->decl_file = outer->decl_file;
		f->decl_line = outer->decl_line;
	}
	f->symbol = true;
	if (si->name && si->name[0]) {
		f->name = si->name;
		return;
	}
	/* No symbol, but the DWARF names the function. */
	if (outer && outer->function) {
		f->name = outer->function;
		return;
	}
	f->symbol = false;
	f->decl_file = NULL;
	f->decl_line = 0;
	if (!si->mapped || !si->module || !si->module[0])
		return;
	if (si->module[0] == '[') {
		f->name = si->module;
		return;
	}
	snprintf(out->buf, sizeof(out->buf), "[%s]", si->module);
	f->name = out->buf;
}

/* A runtime's frame (Python's, Java's): its names live as long as the program (frame_names.h). */
static void name_python(struct sw_name *out)
{
	struct sw_frame *f = &out->f;
	struct frame_name pn;

	f->build_id = "";
	if (!frame_names__get(f->addr, &pn))
		return;
	f->symbol = f->python = true;
	f->name = pn.label;
	f->function = pn.qualname;
	f->module = pn.runtime; /* "python", "java" */
	f->file = f->decl_file = pn.file[0] ? pn.file : NULL;
	f->line = pn.line;
	f->decl_line = pn.firstline;
}

void stackwalk__name(struct symbolizer *sym, const struct ksyms *ks, uint32_t pid,
		     enum sw_kind kind, uint64_t addr, struct sw_name *out)
{
	struct sw_frame *f = &out->f;
	const struct ksym *k;

	*f = (struct sw_frame){ .kind = kind, .addr = addr, .name = "[unknown]" };
	out->si = (struct sym_info){};
	if (kind == SW_KERNEL) {
		k = ks ? ksyms__find(ks, addr) : NULL;
		if (k && k->name[0]) {
			f->symbol = true;
			f->name = k->name;
			f->module = k->module;
		}
		return;
	}
	if (frame_names__is_ip(addr)) {
		name_python(out);
		return;
	}
	if (sym)
		symbolizer__user(sym, pid, addr, &out->si);
	name_user(out);
}

int stackwalk__entry(struct symbolizer *sym, const struct ksyms *ks, uint32_t pid,
		     enum sw_kind kind, uint64_t addr, struct sw_entry *e)
{
	const struct sym_info *si = &e->name.si;
	struct sw_frame *f;
	size_t i, nr;

	stackwalk__name(sym, ks, pid, kind, addr, &e->name);
	nr = si->nr_lines ? si->nr_lines : 1;
	if (VEC_RESERVE(e->frames, e->cap, nr, 16))
		return -ENOMEM;
	f = e->frames;
	f[0] = e->name.f;
	for (i = 1; i < nr; i++) {
		const struct srcline_frame *l = &si->lines[nr - 1 - i];

		f[i] = f[0];
		f[i].inlined = true;
		f[i].symbol = l->function != NULL;
		f[i].name = l->function ? l->function : "[unknown]";
		f[i].file = l->file;
		f[i].line = l->line;
		f[i].decl_file = l->decl_file;
		f[i].decl_line = l->decl_line;
	}
	return (int)nr;
}
