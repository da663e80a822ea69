/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the loader needs to know about an ELF object besides its SFrame data:
 * its identity (GNU build-id) and its PT_LOAD segments, which turn a mapping's
 * file offset into the ELF virtual addresses the tables are keyed by.
 */
#ifndef SFBPF_ELFOBJ_H
#define SFBPF_ELFOBJ_H

#include <stddef.h>
#include <stdint.h>

#define ELFOBJ_MAX_LOADS 16
#define ELFOBJ_BUILD_ID_MAX 64

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
/*
 * ELF virtual address of file offset off (a mapping's, page-aligned), or
 * -ENOENT if no PT_LOAD holds it, for this kernel's page size.
 */
int elfobj__offset_to_vaddr(const struct elfobj_info *info, uint64_t off, uint64_t *vaddr);
/* The same for pages of page_size bytes (a power of two; -EINVAL otherwise). */
int elfobj__offset_to_vaddr_pg(const struct elfobj_info *info, uint64_t off, uint64_t page_size,
			       uint64_t *vaddr);

/* A build-id as text: two lowercase hex digits per byte, NUL-terminated. */
#define ELFOBJ_BUILD_ID_HEX (2 * ELFOBJ_BUILD_ID_MAX + 1)

struct Elf;

/*
 * The GNU build-id of an ELF file (libdw's dwelf_elf_gnu_build_id: the note
 * sections, else the PT_NOTE segments): its first len bytes copied to buf;
 * returns its length in bytes (at most len), 0 if it has none.
 */
size_t elfobj__build_id(struct Elf *elf, uint8_t *buf, size_t len);
/*
 * The same from a raw note section of notes_len bytes in this machine's byte
 * order (the kernel's /sys/kernel/notes); 0 if it has none or without memory.
 */
size_t elfobj__notes_build_id(const void *notes, size_t notes_len, uint8_t *buf, size_t len);
/* Hex-encode a build-id of len bytes (at most ELFOBJ_BUILD_ID_MAX). */
void elfobj__hex(const uint8_t *id, size_t len, char hex[ELFOBJ_BUILD_ID_HEX]);

#endif /* SFBPF_ELFOBJ_H */
