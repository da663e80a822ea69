/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vDSO as an object with a table: the kernel maps one image into every
 * (64-bit) process, and that image carries .eh_frame, so it gets a table like
 * any shared library instead of the frame-pointer fallback.
 *
 * The image is read once from this process's own [vdso] mapping into a
 * memfd, which the table loader reads like a file. It is identified by its
 * content (an FNV-1a hash and its size), and another process's [vdso] mapping
 * is given that table only if its bytes are the same (a compat process has
 * another image): checked with process_vm_readv at each refresh of the
 * process, two pages.
 *
 * Lifecycle: vdso__open_self() once, vdso__same() per process,
 * vdso__close(). Errors are negative errnos.
 */
#ifndef SFBPF_VDSO_H
#define SFBPF_VDSO_H

#include <stdint.h>

#include "maps/tables.h"

#define VDSO_MAX_SIZE (64u << 10) /* a few pages on any kernel */

struct vdso_image {
	int fd; /* memfd holding the image; -1 when there is none */
	uint64_t size;
	uint64_t vaddr; /* the ELF virtual address of its first byte */
	uint64_t hash;
	struct obj_key key;
	uint8_t *bytes; /* the image, to compare other processes' with */
};

/*
 * Reads this process's vDSO image. 0, -ENOENT (no [vdso]: vdso=0 on the
 * kernel command line), -E2BIG (larger than VDSO_MAX_SIZE), or an errno.
 */
int vdso__open_self(struct vdso_image *v);
void vdso__close(struct vdso_image *v);

/* 0 when pid's mapping [start, end) holds v's image; -ESTALE when not; -errno. */
int vdso__same(const struct vdso_image *v, int pid, uint64_t start, uint64_t end);

#endif /* SFBPF_VDSO_H */
