// SPDX-License-Identifier: GPL-2.0-or-later
/* The vDSO image as a loadable object (see vdso.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tables/elfobj.h"
#include "procs/procmaps.h"
#include "procs/vdso.h"

static uint64_t fnv1a(const uint8_t *p, uint64_t n)
{
	uint64_t h = 14695981039346656037ULL;

	while (n--)
		h = (h ^ *p++) * 1099511628211ULL;
	return h;
}

/* The [vdso] mapping of this process: where the image starts and its size. */
static int find_self(uint64_t *start, uint64_t *size)
{
	const struct procmap *m;
	struct procmaps *pm;
	size_t i, n;
	int err;

	err = procmaps__read(getpid(), &pm);
	if (err)
		return err;
	err = -ENOENT;
	n = procmaps__count(pm);
	for (i = 0; i < n; i++) {
		m = procmaps__get(pm, i);
		if (m->flags & PROCMAP_F_VDSO) {
			*start = m->start;
			*size = m->end - m->start;
			err = 0;
			break;
		}
	}
	procmaps__free(pm);
	return err;
}

static int write_all(int fd, const uint8_t *p, uint64_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (uint64_t)w;
	}
	return 0;
}

int vdso__open_self(struct vdso_image *v)
{
	struct elfobj_info info;
	uint64_t start, size;
	int err;

	memset(v, 0, sizeof(*v));
	v->fd = -1;
	err = find_self(&start, &size);
	if (err)
		return err;
	/* The auxiliary vector says where the kernel put the image's ELF header. */
	if (getauxval(AT_SYSINFO_EHDR) != start)
		return -ENOENT;
	if (size > VDSO_MAX_SIZE)
		return -E2BIG;
	v->bytes = malloc(size);
	if (!v->bytes)
		return -ENOMEM;
	memcpy(v->bytes, (const void *)(uintptr_t)start, size);
	v->size = size;
	v->fd = memfd_create("sfbpf-vdso", MFD_CLOEXEC);
	if (v->fd < 0) {
		err = -errno;
		goto fail;
	}
	err = write_all(v->fd, v->bytes, size);
	if (!err)
		err = elfobj__read(v->fd, &info);
	if (!err)
		err = elfobj__offset_to_vaddr(&info, 0, &v->vaddr);
	if (err)
		goto fail;
	v->hash = fnv1a(v->bytes, size);
	v->key.bytes[0] = 'V';
	memcpy(v->key.bytes + 1, &v->hash, 8);
	memcpy(v->key.bytes + 9, &v->size, 8);
	v->key.len = 17;
	return 0;
fail:
	vdso__close(v);
	return err;
}

void vdso__close(struct vdso_image *v)
{
	if (v->fd >= 0)
		close(v->fd);
	free(v->bytes);
	v->bytes = NULL;
	v->fd = -1;
}

int vdso__same(const struct vdso_image *v, int pid, uint64_t start, uint64_t end)
{
	struct iovec local, remote;
	uint8_t *buf;
	ssize_t n;
	int ret;

	if (v->fd < 0 || end - start != v->size)
		return -ESTALE;
	buf = malloc(v->size);
	if (!buf)
		return -ENOMEM;
	local = (struct iovec){ buf, v->size };
	remote = (struct iovec){ (void *)(uintptr_t)start, v->size };
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		ret = errno == ESRCH ? -ESRCH : -errno;
	else
		ret = (uint64_t)n == v->size && !memcmp(buf, v->bytes, v->size) ? 0 : -ESTALE;
	free(buf);
	return ret;
}
