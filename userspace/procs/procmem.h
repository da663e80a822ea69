/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Another process's memory, read with process_vm_readv: nothing is stopped,
 * traced or changed, and a page the process does not have mapped (or has
 * unmapped since) is an error, never a fault of ours. What a runtime's
 * walker reads of its structures comes through here.
 *
 * Error rule: 0, or -ESRCH (the process is gone), -EFAULT (addr 0, or
 * not all of it readable).
 */
#ifndef SFBPF_PROCS_PROCMEM_H
#define SFBPF_PROCS_PROCMEM_H

#include <stddef.h>
#include <stdint.h>

int procmem__read(int pid, uint64_t addr, void *buf, size_t len);

static inline int procmem__u64(int pid, uint64_t addr, uint64_t *v)
{
	return procmem__read(pid, addr, v, sizeof(*v));
}

/*
 * The NUL-terminated string at addr, into buf (size bytes, NUL included):
 * its length, or -E2BIG if no NUL comes within size - 1 bytes, or the
 * errors above. Read a page at a time: a string that ends just before an
 * unmapped page is read whole.
 */
long procmem__str(int pid, uint64_t addr, char *buf, size_t size);

#endif /* SFBPF_PROCS_PROCMEM_H */
