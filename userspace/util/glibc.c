// SPDX-License-Identifier: GPL-2.0-or-later
/* C library functions newer than glibc 2.31: see glibc.h. */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <string.h>

#include "util/glibc.h"

#if __GLIBC_PREREQ(2, 33)

const char *glibc_errname(int err)
{
	return strerrorname_np(err);
}

void glibc_heap(uint64_t *in_use, uint64_t *free_kept)
{
	struct mallinfo2 mi = mallinfo2();

	*in_use = mi.uordblks + mi.hblkhd;
	*free_kept = mi.fordblks;
}

#else

/*
 * The errors sfbpf's own code returns, for a host whose glibc predates
 * strerrorname_np; any other is NULL (the caller says "unknown").
 */
#define ERR(e)        \
	{             \
		e, #e \
	}
static const struct {
	int err;
	const char *name;
} known_errs[] = {
	ERR(EPERM),   ERR(ENOENT),    ERR(ESRCH),     ERR(EIO),	      ERR(E2BIG),
	ERR(ENOEXEC), ERR(EBADF),     ERR(EAGAIN),    ERR(ENOMEM),    ERR(EACCES),
	ERR(EFAULT),  ERR(EBUSY),     ERR(EEXIST),    ERR(ENODEV),    ERR(ENOTDIR),
	ERR(EISDIR),  ERR(EINVAL),    ERR(EMFILE),    ERR(EFBIG),     ERR(ENOSPC),
	ERR(ESPIPE),  ERR(EROFS),     ERR(EPIPE),     ERR(ERANGE),    ERR(ENAMETOOLONG),
	ERR(ENOSYS),  ERR(ELOOP),     ERR(ENODATA),   ERR(EOVERFLOW), ERR(EILSEQ),
	ERR(ENOTSUP), ERR(ETIMEDOUT), ERR(ECANCELED), ERR(EXDEV),     ERR(ECONNREFUSED),
};

const char *glibc_errname(int err)
{
	static const char *(*fn)(int);
	size_t i;

	if (!fn)
		fn = (const char *(*)(int))dlsym(RTLD_DEFAULT, "strerrorname_np");
	if (fn)
		return fn(err);
	for (i = 0; i < sizeof(known_errs) / sizeof(known_errs[0]); i++)
		if (known_errs[i].err == err)
			return known_errs[i].name;
	return NULL;
}
#undef ERR

/* glibc 2.33's struct mallinfo2: struct mallinfo's fields, each a size_t. */
struct heap_info {
	size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks,
		keepcost;
};

void glibc_heap(uint64_t *in_use, uint64_t *free_kept)
{
	static struct heap_info (*fn)(void);
	struct mallinfo mi;

	if (!fn)
		fn = (struct heap_info(*)(void))dlsym(RTLD_DEFAULT, "mallinfo2");
	if (fn) {
		struct heap_info hi = fn();

		*in_use = hi.uordblks + hi.hblkhd;
		*free_kept = hi.fordblks;
		return;
	}
	mi = mallinfo();
	*in_use = (unsigned int)mi.uordblks + (unsigned int)mi.hblkhd;
	*free_kept = (unsigned int)mi.fordblks;
}

#endif
