// SPDX-License-Identifier: GPL-2.0-or-later
/* ELF identity and segments (see elfobj.h), with libelf. */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <elfutils/libdwelf.h>
#include <string.h>
#include <unistd.h>

#include "tables/elfobj.h"

size_t elfobj__build_id(Elf *elf, uint8_t *buf, size_t len)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n <= 0)
		return 0;
	if ((size_t)n > len)
		n = (ssize_t)len;
	memcpy(buf, id, (size_t)n);
	return (size_t)n;
}

/*
 * A raw note section is not an ELF file: it is wrapped in the smallest image
 * libelf opens, a header and one PT_NOTE over the notes, in this machine's
 * byte order, so that the kernel's build-id is read by the same libdw reader
 * as every object's.
 */
size_t elfobj__notes_build_id(const void *notes, size_t notes_len, uint8_t *buf, size_t len)
{
	const size_t at = sizeof(GElf_Ehdr) + sizeof(GElf_Phdr);
	GElf_Ehdr *eh;
	GElf_Phdr *ph;
	size_t n = 0;
	char *image;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	image = calloc(1, at + notes_len);
	if (!image)
		return 0;
	eh = (GElf_Ehdr *)image;
	ph = (GElf_Phdr *)(image + sizeof(*eh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_CORE;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph->p_type = PT_NOTE;
	ph->p_offset = at;
	ph->p_filesz = notes_len;
	ph->p_align = 4;
	memcpy(image + at, notes, notes_len);
	elf = elf_memory(image, at + notes_len);
	if (elf) {
		n = elfobj__build_id(elf, buf, len);
		elf_end(elf);
	}
	free(image);
	return n;
}

void elfobj__hex(const uint8_t *id, size_t len, char hex[ELFOBJ_BUILD_ID_HEX])
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (len > ELFOBJ_BUILD_ID_MAX)
		len = ELFOBJ_BUILD_ID_MAX;
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 0xf];
	}
	hex[2 * len] = '\0';
}

int elfobj__read(int fd, struct elfobj_info *info)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;
	int ret = -EINVAL;

	memset(info, 0, sizeof(*info));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n))
		goto cleanup;
	info->build_id_len = elfobj__build_id(elf, info->build_id, ELFOBJ_BUILD_ID_MAX);
	info->e_type = eh.e_type;
	info->e_machine = eh.e_machine;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			goto cleanup;
		if (ph.p_type != PT_LOAD || info->nr_loads >= ELFOBJ_MAX_LOADS)
			continue;
		info->loads[info->nr_loads++] = (struct elfobj_load){
			.vaddr = ph.p_vaddr,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.flags = ph.p_flags,
		};
	}
	ret = 0;
cleanup:
	elf_end(elf);
	return ret;
}

/*
 * mmap offsets are page-aligned, a segment's p_offset need not be: the
 * mapping of a segment starts at its offset rounded down to the kernel's
 * page size (16 or 64 KiB on some arm64 kernels, not 4).
 */
static int load_holds(const struct elfobj_load *l, uint64_t off, uint64_t page_size)
{
	return off >= (l->offset & ~(page_size - 1)) && off < l->offset + l->filesz;
}

int elfobj__offset_to_vaddr_pg(const struct elfobj_info *info, uint64_t off, uint64_t page_size,
			       uint64_t *vaddr)
{
	const struct elfobj_load *l;
	uint32_t i;

	if (!page_size || (page_size & (page_size - 1)))
		return -EINVAL;
	/* Prefer the executable segment: mappings we resolve are r-x. */
	for (i = 0; i < info->nr_loads; i++) {
		l = &info->loads[i];
		if (load_holds(l, off, page_size) && (l->flags & PF_X)) {
			*vaddr = l->vaddr + off - l->offset;
			return 0;
		}
	}
	for (i = 0; i < info->nr_loads; i++) {
		l = &info->loads[i];
		if (load_holds(l, off, page_size)) {
			*vaddr = l->vaddr + off - l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elfobj__offset_to_vaddr(const struct elfobj_info *info, uint64_t off, uint64_t *vaddr)
{
	static uint64_t page_size;
	long ps;

	if (!page_size) {
		ps = sysconf(_SC_PAGESIZE);
		page_size = ps > 0 ? (uint64_t)ps : 4096;
	}
	return elfobj__offset_to_vaddr_pg(info, off, page_size, vaddr);
}
