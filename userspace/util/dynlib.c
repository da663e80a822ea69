// SPDX-License-Identifier: GPL-2.0-or-later
/* Libraries loaded on first use (see dynlib.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "util/dynlib.h"
#include "util/log.h"

/* dlerror() is per thread but its text is not: one loader at a time. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

int dynlib__load(const char *soname, const struct dynlib_fn *fns, size_t n)
{
	const char *why = NULL;
	void *lib, *fn = NULL;
	size_t i;

	pthread_mutex_lock(&load_lock);
	/* RTLD_LOCAL: its symbols stay its own, nothing of ours binds to them. */
	lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		why = dlerror();
	for (i = 0; lib && i < n; i++) {
		fn = dlsym(lib, fns[i].name);
		if (!fn) {
			why = dlerror();
			break;
		}
		*fns[i].fn = fn;
	}
	if (why)
		pr_warn("cannot load %s: %s\n", soname, why);
	pthread_mutex_unlock(&load_lock);
	return why ? -ENOENT : 0;
}
