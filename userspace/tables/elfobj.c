// SPDX-License-Identifier: GPL-2.0-or-later
/* ELF identity and segments (see elfobj.h), with libelf. */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "tables/elfobj.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

static void read_build_id(Elf *elf, const GElf_Phdr *ph, struct elfobj_info *info)
{
	Elf_Data *data = elf_getdata_rawchunk(elf, ph->p_offset, ph->p_filesz, ELF_T_NHDR);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data)
		return;
	while (off < data->d_size &&
	       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0) {
			info->build_id_len = nh.n_descsz > ELFOBJ_BUILD_ID_MAX ? ELFOBJ_BUILD_ID_MAX :
										 nh.n_descsz;
			memcpy(info->build_id, (char *)data->d_buf + desc_off, info->build_id_len);
			return;
		}
	}
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
	info->e_type = eh.e_type;
	info->e_machine = eh.e_machine;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			goto cleanup;
		if (ph.p_type == PT_NOTE && !info->build_id_len)
			read_build_id(elf, &ph, info);
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

/* mmap offsets are page-aligned; a segment's p_offset need not be. */
static int load_holds(const struct elfobj_load *l, uint64_t off)
{
	return off >= (l->offset & ~0xfffull) && off < l->offset + l->filesz;
}

int elfobj__offset_to_vaddr(const struct elfobj_info *info, uint64_t off, uint64_t *vaddr)
{
	const struct elfobj_load *l;
	uint32_t i;

	/* Prefer the executable segment: mappings we resolve are r-x. */
	for (i = 0; i < info->nr_loads; i++) {
		l = &info->loads[i];
		if (load_holds(l, off) && (l->flags & PF_X)) {
			*vaddr = l->vaddr + off - l->offset;
			return 0;
		}
	}
	for (i = 0; i < info->nr_loads; i++) {
		l = &info->loads[i];
		if (load_holds(l, off)) {
			*vaddr = l->vaddr + off - l->offset;
			return 0;
		}
	}
	return -ENOENT;
}
