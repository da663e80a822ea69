// SPDX-License-Identifier: GPL-2.0-or-later
/* Symbol demangling (see demangle.h), through libiberty. */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols/demangle.h"

bool demangle__maybe(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *demangle(const char *name)
{
	char *out;

	if (!demangle__maybe(name))
		return NULL;
	/*
	 * No DMGL_PARAMS / DMGL_ANSI: names only, as perf prints them unless
	 * verbose. Without DMGL_PARAMS libiberty also ignores what follows the
	 * name proper (".isra.0", "@@GLIBCXX_3.4"), which perf shows the same way.
	 */
	out = cplus_demangle(name, DMGL_NO_OPTS);
	if (out && !*out) {
		free(out);
		return NULL;
	}
	return out;
}
