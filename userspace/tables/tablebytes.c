// SPDX-License-Identifier: GPL-2.0-or-later
/* The bytes a table is built from: their digest and a private copy (see tablebytes.h). */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframe/sframe_elf.h"
#include "tables/tablebytes.h"
#include "util/fullio.h"

#define CHUNK (64u << 10)

struct reading {
	int fd, copy;
	uint64_t size, total;
	struct sha256 sha;
	uint8_t *buf; /* CHUNK bytes */
};

/* Hashes (and copies) [off, off + len); into out too when it is given (len bytes). */
static int take(struct reading *r, uint64_t off, uint64_t len, void *out)
{
	uint64_t done, n;
	ssize_t w;
	int err;

	/* Past the end: a build reading there fails the same way on the copy (same size). */
	if (!len || off > r->size || len > r->size - off)
		return 0;
	if (len > TABLEBYTES_MAX - r->total)
		return -EFBIG;
	r->total += len;
	sha256__update(&r->sha, &off, sizeof(off));
	sha256__update(&r->sha, &len, sizeof(len));
	for (done = 0; done < len; done += n) {
		n = len - done < CHUNK ? len - done : CHUNK;
		err = fullio__pread(r->fd, r->buf, n, off + done);
		if (err)
			return err;
		sha256__update(&r->sha, r->buf, n);
		if (out)
			memcpy((uint8_t *)out + done, r->buf, n);
		w = r->copy >= 0 ? pwrite(r->copy, r->buf, n, (off_t)(off + done)) : (ssize_t)n;
		if (w != (ssize_t)n)
			return w < 0 ? -errno : -EIO;
	}
	return 0;
}

static bool named(const char *names, uint64_t names_len, uint32_t at, const char *want)
{
	size_t n = strlen(want);

	return at < names_len && names_len - at > n && !memcmp(names + at, want, n + 1);
}

/* Which sections a build reads (tablebytes.h), marked in want[]. */
static void choose(const Elf64_Ehdr *eh, const Elf64_Shdr *sh, const char *names,
		   uint64_t names_len, bool *want)
{
	static const char *const frames[] = { ".sframe", ".eh_frame", ".eh_frame_hdr",
					      ".debug_frame" };
	bool debug_frame = false;
	unsigned i, k;

	for (i = 0; i < eh->e_shnum; i++) {
		for (k = 0; k < sizeof(frames) / sizeof(frames[0]); k++)
			want[i] |= named(names, names_len, sh[i].sh_name, frames[k]);
		debug_frame |= named(names, names_len, sh[i].sh_name, ".debug_frame");
		/* .dynamic: complete looks for DT_NEEDED (a loader's entry code). */
		want[i] |= sh[i].sh_type == SHT_DYNAMIC;
		if (sh[i].sh_type == SHT_GNU_SFRAME || sh[i].sh_type == SHT_SYMTAB ||
		    sh[i].sh_type == SHT_DYNSYM) {
			want[i] = true;
			if (sh[i].sh_link < eh->e_shnum)
				want[sh[i].sh_link] = true; /* its strings */
		}
	}
	for (i = 0; i < eh->e_shnum; i++) {
		if (debug_frame && (named(names, names_len, sh[i].sh_name, ".zdebug_info") ||
				    (named(names, names_len, sh[i].sh_name, ".debug_info") &&
				     (sh[i].sh_flags & SHF_COMPRESSED))))
			want[i] = true;
		if (eh->e_type == ET_REL &&
		    (sh[i].sh_type == SHT_REL || sh[i].sh_type == SHT_RELA) &&
		    sh[i].sh_info < eh->e_shnum && want[sh[i].sh_info])
			want[i] = true;
	}
}

static int take_sections(struct reading *r, const Elf64_Ehdr *eh)
{
	Elf64_Shdr *sh = NULL;
	char *names = NULL;
	bool *want = NULL;
	uint64_t names_len = 0;
	unsigned i;
	int err;

	if (!eh->e_shnum)
		return eh->e_shoff ? -ENOTSUP : 0; /* extended numbering */
	if (eh->e_shentsize != sizeof(*sh) || eh->e_shstrndx >= eh->e_shnum)
		return -ENOTSUP;
	sh = calloc(eh->e_shnum, sizeof(*sh));
	want = calloc(eh->e_shnum, sizeof(*want));
	err = sh && want ? take(r, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(*sh), sh) : -ENOMEM;
	if (err)
		goto out;
	if (eh->e_shoff > r->size || (uint64_t)eh->e_shnum * sizeof(*sh) > r->size - eh->e_shoff) {
		err = -ENOTSUP; /* headers past the end: nothing a build can use */
		goto out;
	}
	names_len = sh[eh->e_shstrndx].sh_type == SHT_NOBITS ? 0 : sh[eh->e_shstrndx].sh_size;
	if (names_len > r->size || sh[eh->e_shstrndx].sh_offset > r->size - names_len)
		names_len = 0;
	/* Bounded before it is allocated (take() would refuse it after). */
	names = names_len <= TABLEBYTES_MAX ? malloc(names_len + 1) : NULL;
	err = !names ? (names_len > TABLEBYTES_MAX ? -EFBIG : -ENOMEM) :
		       take(r, sh[eh->e_shstrndx].sh_offset, names_len, names);
	if (err)
		goto out;
	choose(eh, sh, names, names_len, want);
	for (i = 0; i < eh->e_shnum && !err; i++)
		if (want[i] && i != eh->e_shstrndx && sh[i].sh_type != SHT_NOBITS)
			err = take(r, sh[i].sh_offset, sh[i].sh_size, NULL);
out:
	free(names);
	free(want);
	free(sh);
	return err;
}

static int take_segments(struct reading *r, const Elf64_Ehdr *eh)
{
	Elf64_Phdr *ph;
	unsigned i;
	int err;

	if (!eh->e_phnum)
		return 0;
	if (eh->e_phentsize != sizeof(*ph) || eh->e_phnum == PN_XNUM)
		return -ENOTSUP;
	ph = calloc(eh->e_phnum, sizeof(*ph));
	if (!ph)
		return -ENOMEM;
	err = take(r, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(*ph), ph);
	for (i = 0; i < eh->e_phnum && !err; i++)
		if (ph[i].p_type == PT_GNU_SFRAME || ph[i].p_type == PT_GNU_EH_FRAME)
			err = take(r, ph[i].p_offset, ph[i].p_filesz, NULL);
	free(ph);
	return err;
}

int tablebytes__read(int fd, uint8_t digest[SHA256_BYTES], int *copy)
{
	struct reading r = { .fd = fd, .copy = -1 };
	static const char tag[] = "sfbpf tablebytes 1";
	Elf64_Ehdr eh;
	struct stat st;
	int err;

	if (fstat(fd, &st))
		return -errno;
	r.size = (uint64_t)st.st_size;
	if (r.size < sizeof(eh))
		return -ENOTSUP;
	r.buf = malloc(CHUNK);
	if (!r.buf)
		return -ENOMEM;
	if (copy) {
		r.copy = memfd_create("sfbpf-table", MFD_CLOEXEC);
		err = r.copy < 0 ? -errno : ftruncate(r.copy, (off_t)r.size) ? -errno : 0;
		if (err)
			goto out;
	}
	sha256__init(&r.sha);
	sha256__update(&r.sha, tag, sizeof(tag));
	sha256__update(&r.sha, &r.size, sizeof(r.size));
	err = take(&r, 0, sizeof(eh), &eh);
	if (!err && (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
		     eh.e_ident[EI_DATA] != ELFDATA2LSB))
		err = -ENOTSUP;
	if (!err)
		err = take_segments(&r, &eh);
	if (!err)
		err = take_sections(&r, &eh);
	if (!err)
		sha256__final(&r.sha, digest);
out:
	free(r.buf);
	if (copy && !err)
		*copy = r.copy;
	else if (r.copy >= 0)
		close(r.copy);
	return err;
}
