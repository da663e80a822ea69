/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ELF .sframe locator: finds a file's SFrame data and returns a private copy.
 *
 * Lookup order: the section named ".sframe", else any section of type
 * SHT_GNU_SFRAME, else the PT_GNU_SFRAME program header (stripped binaries keep
 * the segment). In relocatable objects (ET_REL) the section's relocations are
 * applied to the copy the way readelf does before dumping, so function start
 * offsets are meaningful; the section address is 0 there. SFrame V1 sections
 * are left unrelocated, as readelf 2.40 (the last to display V1) left them.
 *
 * Error convention: negative errno, and a one-line reason in err->msg.
 *   -ENOENT  no SFrame section or segment
 *   -EINVAL  not an ELF file, or headers/offsets inconsistent with the file
 *   -ENOMEM, or the errno of open()/read() for I/O failures
 */
#ifndef SFBPF_SFRAME_ELF_H
#define SFBPF_SFRAME_ELF_H

#include <stddef.h>
#include <stdint.h>

#ifndef SHT_GNU_SFRAME
#define SHT_GNU_SFRAME 0x6ffffff4
#endif
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

/* Where the bytes came from. */
enum sframe_elf_source {
	SFRAME_ELF_SECTION = 0,
	SFRAME_ELF_SEGMENT, /* PT_GNU_SFRAME program header */
	SFRAME_ELF_RAW,	    /* the whole file is a bare .sframe section */
};

struct sframe_elf {
	void *data; /* malloc'd copy of the SFrame bytes (relocated in ET_REL) */
	size_t size;
	uint64_t addr;	 /* sh_addr or p_vaddr; 0 for ET_REL and raw input */
	uint64_t offset; /* file offset of the bytes */
	enum sframe_elf_source source;
	char name[64];		 /* section name; ".sframe" for segments and raw input */
	uint16_t e_type;	 /* ET_*; 0 for raw input */
	uint16_t e_machine;	 /* EM_*; 0 for raw input */
	uint8_t elf_class;	 /* ELFCLASS32/64; 0 for raw input */
	uint8_t elf_data;	 /* ELFDATA2LSB/MSB; 0 for raw input */
	uint32_t relocs_applied; /* ET_REL only */
	uint32_t relocs_skipped; /* unsupported type or bad offset/symbol, as readelf skips */
};

struct sframe_elf_error {
	char msg[160];
};

/* Locate and copy the SFrame data of the ELF file at path (or open fd). */
int sframe_elf__load(const char *path, struct sframe_elf *out, struct sframe_elf_error *err);
/* fd stays owned by the caller; it is read with pread, its offset is untouched. */
int sframe_elf__load_fd(int fd, struct sframe_elf *out, struct sframe_elf_error *err);

/* Take the whole file as the bytes of a bare .sframe section (address 0). */
int sframe_elf__load_raw(const char *path, struct sframe_elf *out, struct sframe_elf_error *err);
int sframe_elf__load_raw_fd(int fd, struct sframe_elf *out, struct sframe_elf_error *err);

/* Free the copy and reset *s; safe on a zeroed or already released struct. */
void sframe_elf__release(struct sframe_elf *s);

/* "section", "segment" or "raw". */
const char *sframe_elf_source__name(enum sframe_elf_source source);

#endif /* SFBPF_SFRAME_ELF_H */
