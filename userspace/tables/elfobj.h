/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the loader needs to know about an ELF object besides its SFrame data:
 * its identity (GNU build-id) and its PT_LOAD segments, which turn a mapping's
 * file offset into the ELF virtual addresses the tables are keyed by.
 */
#ifndef SFBPF_ELFOBJ_H
#define SFBPF_ELFOBJ_H

#include <stdint.h>

#define ELFOBJ_MAX_LOADS 16
#define ELFOBJ_BUILD_ID_MAX 20

struct elfobj_load {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	uint32_t flags; /* PF_X | PF_W | PF_R */
};

struct elfobj_info {
	uint16_t e_type;
	uint16_t e_machine;
	uint8_t build_id[ELFOBJ_BUILD_ID_MAX];
	uint8_t build_id_len;
	uint32_t nr_loads;
	struct elfobj_load loads[ELFOBJ_MAX_LOADS];
};

/* Read identity and segments from an open ELF file. 0 or negative errno. */
int elfobj__read(int fd, struct elfobj_info *info);
/* ELF virtual address of file offset off, or -ENOENT if no PT_LOAD holds it. */
int elfobj__offset_to_vaddr(const struct elfobj_info *info, uint64_t off, uint64_t *vaddr);

#endif /* SFBPF_ELFOBJ_H */
