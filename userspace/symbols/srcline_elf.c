// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What srcline does to a DWARF file before libdw reads it (see
 * srcline_elf.h): hides the sections lookups never read, judges the
 * compressed ones by what their headers claim, and inflates them into a
 * spill file.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "symbols/srcline.h"
#include "symbols/srcline_elf.h"

/*
 * Compressed sections: what they may claim to inflate to, checked before
 * anything is inflated. Real DWARF compresses 3 to 10 times; a section of
 * zeros 1032 times (zlib's limit), a bomb. Small sections may claim any ratio.
 */
#define SRCLINE_MAX_RATIO 100
#define SRCLINE_RATIO_FLOOR (1ULL << 20)
#define SRCLINE_MAX_INFLATE (1ULL << 30) /* one file's sections, inflated */
#define SRCLINE_MAX_INFLATE_MEM (64ULL << 20) /* the same, where there is no spill file */
/* All spill files at once (srcline__set_spill_budget()). */
static uint64_t spill_budget = SRCLINE_SPILL_DEFAULT;
static const char *spill_dir(void);

static struct srcline_stats srcline_stats;

void srcline__stats(struct srcline_stats *out)
{
	*out = srcline_stats;
	out->spill_budget = spill_budget;
}

void srcline__set_spill_budget(uint64_t bytes)
{
	spill_budget = bytes ? bytes : SRCLINE_SPILL_DEFAULT;
}

/*
 * An eighth of what the spill directory's file system has free now, within
 * 16 MiB..SRCLINE_SPILL_DEFAULT: the spill shares /var/tmp with everything else.
 */
uint64_t srcline__default_spill_budget(void)
{
	struct statvfs fs;
	uint64_t free_bytes;

	if (statvfs(spill_dir(), &fs))
		return SRCLINE_SPILL_DEFAULT;
	free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize / 8;
	return free_bytes < (16ULL << 20)	  ? 16ULL << 20 :
	       free_bytes > SRCLINE_SPILL_DEFAULT ? SRCLINE_SPILL_DEFAULT :
						    free_bytes;
}

/*
 * Sections a lookup never reads: location lists (often the largest after
 * .debug_info), macros, call frames, name indexes. libdw reads (and inflates,
 * when compressed) every .debug_* section it knows when it opens: hidden
 * here as SHT_NOBITS in libelf's copy of the section headers, they are left
 * alone. The file is never written (no elf_update()).
 */
static bool unused_section(const char *name)
{
	static const char *const unused[] = { "loc",	  "loclists",	  "macro",
					      "macinfo",  "frame",	  "pubnames",
					      "pubtypes", "gnu_pubnames", "gnu_pubtypes",
					      "names" };
	size_t i;

	for (i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
		if (!strcmp(name, unused[i]))
			return true;
	}
	return false;
}

/*
 * The size a compressed section claims it inflates to, from its header
 * (Elf32/64_Chdr, or "ZLIB" and a big-endian size for .zdebug_*): nothing is
 * inflated to learn it. Read from the file, or, with private_read, from
 * libelf's own copy of the section (elf_rawdata: read once, then kept), the
 * very bytes libdw will inflate: the file's owner cannot claim one size here
 * and another there. 0 if unreadable.
 */
static uint64_t claimed_size(int fd, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, bool zdebug,
			     bool private_read)
{
	uint8_t buf[sizeof(Elf64_Chdr)];
	Elf_Data *raw;
	Elf32_Chdr c32;
	Elf64_Chdr c64;
	uint64_t v = 0;
	int i;

	if (private_read) {
		raw = elf_rawdata(scn, NULL);
		if (!raw || !raw->d_buf || raw->d_size < sizeof(buf))
			return 0;
		memcpy(buf, raw->d_buf, sizeof(buf));
	} else if (pread(fd, buf, sizeof(buf), sh->sh_offset) != (ssize_t)sizeof(buf)) {
		return 0;
	}
	if (zdebug) {
		if (memcmp(buf, "ZLIB", 4))
			return 0;
		for (i = 4; i < 12; i++)
			v = v << 8 | buf[i];
		return v;
	}
	if (gelf_getclass(elf) == ELFCLASS32) {
		memcpy(&c32, buf, sizeof(c32));
		return c32.ch_size;
	}
	memcpy(&c64, buf, sizeof(c64));
	return c64.ch_size;
}

/* A .debug_* or .zdebug_* section's name without the prefix, or NULL. */
static const char *debug_name(Elf *elf, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh, bool *zdebug)
{
	const char *name;

	if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS ||
	    !(name = elf_strptr(elf, shstrndx, sh->sh_name)))
		return NULL;
	*zdebug = !strncmp(name, ".zdebug_", 8);
	if (!strncmp(name, ".debug_", 7))
		return name + 7;
	return *zdebug ? name + 8 : NULL;
}

int srcline_elf_prepare(int fd, Elf *elf, bool private_read, uint64_t *inflated)
{
	uint64_t claim, raw = 0;
	Elf_Scn *scn = NULL;
	const char *name;
	size_t shstrndx;
	GElf_Shdr sh;
	bool zdebug;

	*inflated = 0;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!(name = debug_name(elf, shstrndx, scn, &sh, &zdebug)))
			continue;
		if (unused_section(name)) {
			sh.sh_type = SHT_NOBITS;
			gelf_update_shdr(scn, &sh);
			continue;
		}
		/* Compared before adding, as below. */
		raw = sh.sh_size > SRCLINE_MAX_INFLATE_MEM - raw ? SRCLINE_MAX_INFLATE_MEM + 1 :
								   raw + sh.sh_size;
	}
	/* Read into memory, libdw's sections cost what they weigh: judged before they are read. */
	if (private_read && raw > SRCLINE_MAX_INFLATE_MEM) {
		srcline_stats.refused_memory++;
		return -EFBIG;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!(name = debug_name(elf, shstrndx, scn, &sh, &zdebug)) ||
		    (!zdebug && !(sh.sh_flags & SHF_COMPRESSED)))
			continue;
		claim = claimed_size(fd, elf, scn, &sh, zdebug, private_read);
		if (claim > SRCLINE_RATIO_FLOOR && claim / SRCLINE_MAX_RATIO > sh.sh_size) {
			srcline_stats.refused_ratio++;
			return -EFBIG;
		}
		/* At least a byte: a section whose size cannot be read is still inflated. */
		claim = claim ? claim : 1;
		/* Compared before adding: a hostile claim near 2^64 would wrap the sum. */
		if (claim > SRCLINE_MAX_INFLATE - *inflated) {
			srcline_stats.refused_size++;
			return -EFBIG;
		}
		*inflated += claim;
	}
	if (private_read && *inflated && srcline_elf_fits_memory(raw + *inflated))
		return -EFBIG;
	return 0;
}

/*
 * Compressed DWARF (Debian's -dbgsym files) is inflated by libdw into our
 * memory, MiBs per library, for as long as it is open: a library sampled all
 * the time keeps it. Inflated once into an unlinked file instead, the
 * sections cost the page cache's pages, which the trims give back, and a
 * reopen inflates nothing. The directory: $SFBPF_SPILL_DIR, else SPILL_DIR
 * (on disk on Debian, not tmpfs); where O_TMPFILE fails, libdw inflates in
 * memory as before.
 */
#define SPILL_DIR "/var/tmp"
static uint64_t spilled_bytes;

static const char *spill_dir(void)
{
	const char *dir = getenv("SFBPF_SPILL_DIR");

	return dir && *dir ? dir : SPILL_DIR;
}

int srcline_elf_spill(int fd, uint64_t inflated, uint64_t *bytes)
{
	int out = open(spill_dir(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	uint64_t claimed, size;
	char buf[16384], *name;
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	int ret = -ENOSPC;
	size_t shstrndx;
	uint64_t off = 0;
	struct stat st;
	GElf_Shdr sh;
	ssize_t n = 0;

	if (out < 0)
		return -ENOSPC;
	/* The live file's claims (srcline_elf_prepare()): no copy made that cannot fit. */
	if (fstat(fd, &st) || spilled_bytes + st.st_size + inflated > spill_budget) {
		srcline_stats.spill_full++;
		goto fail;
	}
	/* What was measured, no more: bytes appended meanwhile are not copied. */
	size = st.st_size;
	while (off < size &&
	       (n = pread(fd, buf, size - off < sizeof(buf) ? size - off : sizeof(buf), off)) > 0 &&
	       write(out, buf, n) == n)
		off += n;
	if (off != size || !(elf = elf_begin(out, ELF_C_RDWR, NULL)))
		goto fail;
	/*
	 * The file's owner may have written it since its claims were judged (a
	 * benign file then a bomb): what is inflated is judged again here, on
	 * the copy, which nobody else can write. Unused sections are hidden in
	 * the copy too (written as SHT_NOBITS: they take no room).
	 */
	if (srcline_elf_prepare(out, elf, false, &claimed)) {
		ret = -EFBIG;
		goto fail;
	}
	if (spilled_bytes + size + claimed > spill_budget) {
		srcline_stats.spill_full++;
		goto fail;
	}
	if (elf_getshdrstrndx(elf, &shstrndx))
		goto fail;
	/* .zdebug_* stay compressed: srcline.c caps what libdw inflates of them in memory. */
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_COMPRESSED) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) || strncmp(name, ".debug_", 7))
			continue;
		if (elf_compress(scn, 0, 0) < 0)
			goto fail;
	}
	if (elf_update(elf, ELF_C_WRITE) < 0 || fstat(out, &st))
		goto fail;
	if (spilled_bytes + st.st_size > spill_budget) {
		srcline_stats.spill_full++;
		goto fail;
	}
	elf_end(elf);
	*bytes = st.st_size;
	spilled_bytes += st.st_size;
	srcline_stats.spilled_bytes = spilled_bytes;
	return out;
fail:
	elf_end(elf);
	close(out);
	return ret;
}

void srcline_elf_count_tenant_copy(void)
{
	srcline_stats.tenant_copies++;
}

void srcline_elf_unspill(uint64_t bytes)
{
	spilled_bytes -= bytes;
	srcline_stats.spilled_bytes = spilled_bytes;
}

int srcline_elf_fits_memory(uint64_t inflated)
{
	if (inflated <= SRCLINE_MAX_INFLATE_MEM)
		return 0;
	srcline_stats.refused_memory++;
	return -EFBIG;
}
