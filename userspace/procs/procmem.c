// SPDX-License-Identifier: GPL-2.0-or-later
/* Another process's memory (procmem.h). */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "procs/procmem.h"

#define PROCMEM_PAGE 4096u /* the smallest page: a read never crosses one needlessly */

int procmem__read(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

long procmem__str(int pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	if (!size)
		return -E2BIG;
	while (got < size - 1) {
		size_t chunk = PROCMEM_PAGE - ((addr + got) & (PROCMEM_PAGE - 1));
		const char *nul;
		int err;

		if (chunk > size - 1 - got)
			chunk = size - 1 - got;
		err = procmem__read(pid, addr + got, buf + got, chunk);
		if (err)
			return err;
		nul = memchr(buf + got, 0, chunk);
		if (nul)
			return nul - buf;
		got += chunk;
	}
	buf[size - 1] = 0;
	return -E2BIG;
}
