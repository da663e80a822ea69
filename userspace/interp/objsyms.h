/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every runtime's attach starts from: the object in a process that
 * defines the symbols a runtime publishes (CPython's _PyRuntime, HotSpot's
 * gHotSpotVM* tables), those symbols' values, and where the object is loaded.
 */
#ifndef SFBPF_INTERP_OBJSYMS_H
#define SFBPF_INTERP_OBJSYMS_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procmaps;
struct procmap;
struct elfobj_info;

/*
 * The values and sizes of the defined symbols names[0..nr) (left as they
 * are, 0 at first, where absent): .dynsym (stripped objects keep it), then
 * .symtab unless dynsym_only. The first definition of a name wins.
 */
void objsyms__find(Elf *elf, const char *const *names, size_t nr, uint64_t *vals, uint64_t *sizes,
		   bool dynsym_only);

/*
 * The load bias of the file mapped at m (what its ELF addresses add in the
 * process), from the first mapping of that file that a PT_LOAD holds: 0 or
 * -ENOENT.
 */
int objsyms__bias(const struct procmaps *pm, const struct procmap *m,
		  const struct elfobj_info *info, uint64_t *bias);

/*
 * Where a data symbol of the object mapped at m is in the process: addr (its
 * value plus m's bias), unless the program's executable, first in the
 * dynamic linker's lookup order, defines it too. A program that refers to a
 * library's variable (PHP's EG() in a program embedding libphp) gets a copy
 * of its own (a copy relocation), and the library itself uses that copy
 * through its GOT: its own is never written.
 */
uint64_t objsyms__interposed(int pid, const struct procmaps *pm, const struct procmap *m,
			     const char *name, uint64_t addr);

/* Whether mapping m of pm may hold the runtime (by its name, or as the executable). */
typedef bool (*objsyms_maybe)(const struct procmaps *pm, const struct procmap *m);
/* Whether the object mapped at m is the runtime: 0, -ENOENT (not it), or an error. */
typedef int (*objsyms_is)(int pid, const struct procmaps *pm, const struct procmap *m, void *ctx);

/*
 * Detection, every runtime's first step: is() on each mapping of pid that
 * maybe() accepts (once a file where its mappings follow each other) until
 * one is the runtime (0). An error on one object is said (pr_debug, as
 * who's) and the next one tried, but -EPROTO (a runtime whose own
 * description lies), which ends the search. -ENOENT when none was it.
 */
int objsyms__detect(int pid, const char *who, objsyms_maybe maybe, objsyms_is is, void *ctx);

#endif /* SFBPF_INTERP_OBJSYMS_H */
