// SPDX-License-Identifier: GPL-2.0-or-later
/* Libraries loaded on first use (see dynlib.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "util/dynlib.h"
#include "util/log.h"

/* dlerror() is per thread but its text is not: one loader at a time. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
/* The libraries loaded (sonames are string literals): their pointers are set for good. */
#define DYNLIB_MAX 8
static const char *loaded[DYNLIB_MAX];

int dynlib__load(const char *soname, const struct dynlib_fn *fns, size_t n)
{
	const char *why = NULL;
	void *lib, *fn = NULL;
	size_t i;

	pthread_mutex_lock(&load_lock);
	for (i = 0; i < DYNLIB_MAX && loaded[i]; i++) {
		if (!strcmp(loaded[i], soname)) {
			/* Set once: another thread may be calling through them. */
			pthread_mutex_unlock(&load_lock);
			return 0;
		}
	}
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
	for (i = 0; !why && i < DYNLIB_MAX; i++) {
		if (!loaded[i]) {
			loaded[i] = soname;
			break;
		}
	}
	pthread_mutex_unlock(&load_lock);
	return why ? -ENOENT : 0;
}
