// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ELF .sframe locator. libelf parses the headers; the bytes are read with
 * pread after checking every offset and size against the file size, so a
 * corrupt header can only produce an error, never a wild read, and a file
 * truncated meanwhile only a short read (never SIGBUS from a mapping).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframe/sframe_elf.h"

#define SFRAME_DEFAULT_NAME ".sframe"
#define SFRAME_HDR_SIZE 28 /* fixed part of the SFrame header */

/* Cap for --raw input: real sections are far smaller; this stops a bad path from eating memory. */
#define RAW_MAX_SIZE (1ULL << 30)

static int set_err(struct sframe_elf_error *err, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_err(struct sframe_elf_error *err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

const char *sframe_elf_source__name(enum sframe_elf_source source)
{
	switch (source) {
	case SFRAME_ELF_SECTION:
		return "section";
	case SFRAME_ELF_SEGMENT:
		return "segment";
	case SFRAME_ELF_RAW:
		return "raw";
	}
	return "unknown";
}

void sframe_elf__release(struct sframe_elf *s)
{
	if (!s)
		return;
	free(s->data);
	memset(s, 0, sizeof(*s));
}

/* True when [off, off + len) lies within a file of fsize bytes. */
static bool in_file(uint64_t off, uint64_t len, size_t fsize)
{
	return off <= fsize && len <= fsize - off;
}

/*
 * Read with pread, not from a mapping of the file: its owner may truncate it
 * meanwhile, and touching a mapped page past the new end raises SIGBUS.
 */
static int copy_bytes(struct sframe_elf *out, int fd, uint64_t off, uint64_t len,
		      struct sframe_elf_error *err)
{
	size_t done = 0;

	out->data = malloc(len ? len : 1);
	if (!out->data)
		return set_err(err, -ENOMEM, "out of memory copying %llu bytes",
			       (unsigned long long)len);
	while (done < len) {
		ssize_t n = pread(fd, (char *)out->data + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int ret = n < 0 ? -errno : -EIO;

			free(out->data);
			out->data = NULL;
			return set_err(err, ret, "cannot read %llu bytes at 0x%llx: %s",
				       (unsigned long long)len, (unsigned long long)off,
				       n < 0 ? strerror(-ret) : "file shrank");
		}
		done += (size_t)n;
	}
	out->size = len;
	out->offset = off;
	return 0;
}

/* The bytes [off, off + len) of the file, checked to lie inside it (fsize). */
static int take_bytes(struct sframe_elf *out, int fd, size_t fsize, uint64_t off, uint64_t len,
		      const char *what, struct sframe_elf_error *err)
{
	if (!in_file(off, len, fsize))
		return set_err(err, -EINVAL,
			       "corrupt ELF: %s (offset 0x%llx, size 0x%llx) runs past end of file "
			       "(size 0x%zx)",
			       what, (unsigned long long)off, (unsigned long long)len, fsize);
	return copy_bytes(out, fd, off, len, err);
}

/* Unsigned load/store in the ELF file's byte order (size 1..8). */
static uint64_t get_uint(const unsigned char *p, unsigned int size, bool big_endian)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < size; i++)
		v |= (uint64_t)p[big_endian ? i : size - 1 - i] << (8 * (size - 1 - i));
	return v;
}

static void put_uint(unsigned char *p, uint64_t v, unsigned int size, bool big_endian)
{
	for (unsigned int i = 0; i < size; i++)
		p[big_endian ? size - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

/*
 * A PT_GNU_SFRAME segment can be longer than the section it covers (ld 2.40
 * leaves zero bytes after the section's end inside it). Trim it to the
 * length the SFrame header implies, when the header is readable; the decoder
 * does all real validation later.
 */
static void trim_segment(struct sframe_elf *s)
{
	const unsigned char *p = s->data;
	bool big_endian;
	uint64_t want;

	if (s->size < SFRAME_HDR_SIZE)
		return;
	if (p[0] == 0xe2 && p[1] == 0xde)
		big_endian = false;
	else if (p[0] == 0xde && p[1] == 0xe2)
		big_endian = true;
	else
		return;
	want = SFRAME_HDR_SIZE + (uint64_t)p[7] + get_uint(p + 24, 4, big_endian) +
	       get_uint(p + 16, 4, big_endian);
	if (want <= s->size)
		s->size = want;
}

/* --- relocations (ET_REL) ----------------------------------------------- */

static bool is_sframe_v1(const struct sframe_elf *s)
{
	const unsigned char *p = s->data;

	return s->size >= SFRAME_HDR_SIZE &&
	       ((p[0] == 0xe2 && p[1] == 0xde) || (p[0] == 0xde && p[1] == 0xe2)) && p[2] == 1;
}

enum reloc_kind { RK_UNSUPPORTED, RK_NONE, RK_ABS, RK_PCREL };

/* The relocation types readelf applies to debug sections, for the SFrame ABIs. */
static enum reloc_kind reloc_kind(uint16_t machine, uint32_t type, unsigned int *size)
{
	*size = 0;
	switch (machine) {
	case EM_X86_64:
		switch (type) {
		case R_X86_64_NONE:
			return RK_NONE;
		case R_X86_64_32:
			*size = 4;
			return RK_ABS;
		case R_X86_64_64:
			*size = 8;
			return RK_ABS;
		case R_X86_64_PC32:
			*size = 4;
			return RK_PCREL;
		case R_X86_64_PC64:
			*size = 8;
			return RK_PCREL;
		}
		break;
	case EM_AARCH64:
		switch (type) {
		case R_AARCH64_NONE:
		case 256: /* R_AARCH64_NONE as spelled by some producers (readelf accepts it) */
			return RK_NONE;
		case R_AARCH64_ABS32:
		case R_AARCH64_P32_ABS32:
			*size = 4;
			return RK_ABS;
		case R_AARCH64_ABS64:
			*size = 8;
			return RK_ABS;
		case R_AARCH64_PREL32:
			*size = 4;
			return RK_PCREL;
		case R_AARCH64_PREL64:
			*size = 8;
			return RK_PCREL;
		}
		break;
	case EM_S390:
		switch (type) {
		case R_390_NONE:
			return RK_NONE;
		case R_390_32:
			*size = 4;
			return RK_ABS;
		case R_390_64:
			*size = 8;
			return RK_ABS;
		case R_390_PC32:
			*size = 4;
			return RK_PCREL;
		case R_390_PC64:
			*size = 8;
			return RK_PCREL;
		}
		break;
	}
	return RK_UNSUPPORTED;
}

struct reloc_ctx {
	Elf *elf;
	struct sframe_elf *out;
	Elf_Data *syms;
	size_t nsyms;
	bool big_endian;
};

/* Apply one relocation (already converted to RELA form) to the copy. */
static void apply_one(struct reloc_ctx *rc, const GElf_Rela *r, bool is_rela)
{
	unsigned char *buf = rc->out->data;
	uint32_t type = GELF_R_TYPE(r->r_info);
	size_t symidx = GELF_R_SYM(r->r_info);
	enum reloc_kind kind;
	unsigned int size;
	uint64_t addend, value;
	GElf_Sym sym;
	int stt;

	kind = reloc_kind(rc->out->e_machine, type, &size);
	if (kind == RK_NONE)
		return;
	if (kind == RK_UNSUPPORTED || !in_file(r->r_offset, size, rc->out->size) ||
	    symidx >= rc->nsyms || !gelf_getsym(rc->syms, (int)symidx, &sym))
		goto skip;
	/* Like readelf: only untyped, object, function, section and common symbols. */
	stt = GELF_ST_TYPE(sym.st_info);
	if (symidx != 0 && stt != STT_COMMON && stt > STT_SECTION)
		goto skip;

	addend =
		is_rela ? (uint64_t)r->r_addend : get_uint(buf + r->r_offset, size, rc->big_endian);
	value = addend + sym.st_value;
	/* P is the field's offset: the section address is 0 in a relocatable object. */
	if (kind == RK_PCREL)
		value -= r->r_offset;
	put_uint(buf + r->r_offset, value, size, rc->big_endian);
	rc->out->relocs_applied++;
	return;
skip:
	rc->out->relocs_skipped++;
}

static int apply_relsec(struct reloc_ctx *rc, Elf_Scn *relscn, const GElf_Shdr *rsh, size_t fsize,
			struct sframe_elf_error *err)
{
	bool is_rela = rsh->sh_type == SHT_RELA;
	Elf_Scn *symscn;
	GElf_Shdr ssh;
	Elf_Data *rdata;
	size_t ent, n;

	if (!in_file(rsh->sh_offset, rsh->sh_size, fsize))
		return set_err(err, -EINVAL, "relocation section for %s runs past end of file",
			       rc->out->name);
	symscn = elf_getscn(rc->elf, rsh->sh_link);
	if (!symscn || !gelf_getshdr(symscn, &ssh) ||
	    (ssh.sh_type != SHT_SYMTAB && ssh.sh_type != SHT_DYNSYM))
		return set_err(err, -EINVAL, "relocations for %s name no symbol table",
			       rc->out->name);
	if (!in_file(ssh.sh_offset, ssh.sh_size, fsize))
		return set_err(err, -EINVAL, "symbol table runs past end of file");
	rc->syms = elf_getdata(symscn, NULL);
	rdata = elf_getdata(relscn, NULL);
	if (!rc->syms || !rdata)
		return set_err(err, -EINVAL, "cannot read relocations for %s: %s", rc->out->name,
			       elf_errmsg(-1));

	ent = gelf_fsize(rc->elf, ELF_T_SYM, 1, EV_CURRENT);
	rc->nsyms = ent ? rc->syms->d_size / ent : 0;
	ent = gelf_fsize(rc->elf, is_rela ? ELF_T_RELA : ELF_T_REL, 1, EV_CURRENT);
	n = ent ? rdata->d_size / ent : 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r = { 0 };
		GElf_Rel rel;

		if (is_rela) {
			if (!gelf_getrela(rdata, (int)i, &r))
				break;
		} else {
			if (!gelf_getrel(rdata, (int)i, &rel))
				break;
			r.r_offset = rel.r_offset;
			r.r_info = rel.r_info;
		}
		apply_one(rc, &r, is_rela);
	}
	return 0;
}

static int apply_relocations(Elf *elf, size_t shndx, size_t fsize, struct sframe_elf *out,
			     struct sframe_elf_error *err)
{
	struct reloc_ctx rc = {
		.elf = elf,
		.out = out,
		.big_endian = out->elf_data == ELFDATA2MSB,
	};
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int ret;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) || sh.sh_info != shndx ||
		    sh.sh_size == 0)
			continue;
		ret = apply_relsec(&rc, scn, &sh, fsize, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* --- section and segment lookup ----------------------------------------- */

/* The section named .sframe, else the first of type SHT_GNU_SFRAME. */
static Elf_Scn *find_section(Elf *elf, size_t shstrndx, GElf_Shdr *sh, const char **name)
{
	Elf_Scn *scn = NULL, *typed = NULL;
	const char *typed_name = NULL;
	GElf_Shdr typed_sh;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, SFRAME_DEFAULT_NAME) == 0) {
			*name = n;
			return scn;
		}
		if (!typed && sh->sh_type == SHT_GNU_SFRAME) {
			typed = scn;
			typed_sh = *sh;
			typed_name = n;
		}
	}
	if (typed) {
		*sh = typed_sh;
		*name = typed_name ? typed_name : SFRAME_DEFAULT_NAME;
	}
	return typed;
}

static int load_section(Elf *elf, int fd, size_t fsize, struct sframe_elf *out,
			struct sframe_elf_error *err)
{
	const char *name = NULL;
	size_t shstrndx = 0;
	Elf_Scn *scn;
	GElf_Shdr sh;
	char what[sizeof(out->name) + 16];
	int ret;

	/* No usable section names is not fatal: the type and the segment still work. */
	if (elf_getshdrstrndx(elf, &shstrndx))
		shstrndx = 0;
	scn = find_section(elf, shstrndx, &sh, &name);
	if (!scn)
		return -ENOENT;

	snprintf(out->name, sizeof(out->name), "%s", name);
	if (sh.sh_type == SHT_NOBITS)
		return set_err(err, -ENOENT, "section %s has no contents (SHT_NOBITS)", out->name);
	if (sh.sh_flags & SHF_COMPRESSED)
		return set_err(err, -EOPNOTSUPP, "compressed section %s is not supported",
			       out->name);
	snprintf(what, sizeof(what), "section %s", out->name);
	ret = take_bytes(out, fd, fsize, sh.sh_offset, sh.sh_size, what, err);
	if (ret)
		return ret;
	out->source = SFRAME_ELF_SECTION;
	out->addr = sh.sh_addr;
	if (out->e_type != ET_REL)
		return 0;
	out->addr = 0;
	/*
	 * V1 stays unrelocated: gas 2.40 relocates its section-relative start
	 * field PC-relatively, and readelf 2.40 (the last readelf that shows V1)
	 * never applied relocations to .sframe either.
	 */
	if (is_sframe_v1(out))
		return 0;
	return apply_relocations(elf, elf_ndxscn(scn), fsize, out, err);
}

static int load_segment(Elf *elf, int fd, size_t fsize, struct sframe_elf *out,
			struct sframe_elf_error *err)
{
	size_t phnum = 0;
	GElf_Phdr ph;
	int ret;

	if (elf_getphdrnum(elf, &phnum))
		phnum = 0;
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_SFRAME)
			continue;
		snprintf(out->name, sizeof(out->name), "%s", SFRAME_DEFAULT_NAME);
		if (ph.p_filesz == 0)
			return set_err(err, -ENOENT, "PT_GNU_SFRAME segment is empty");
		ret = take_bytes(out, fd, fsize, ph.p_offset, ph.p_filesz, "PT_GNU_SFRAME", err);
		if (ret)
			return ret;
		out->source = SFRAME_ELF_SEGMENT;
		out->addr = ph.p_vaddr;
		trim_segment(out);
		return 0;
	}
	return -ENOENT;
}

static int load_elf(Elf *elf, int fd, struct sframe_elf *out, struct sframe_elf_error *err)
{
	const char *ident;
	struct stat st;
	size_t fsize;
	GElf_Ehdr eh;
	int ret;

	if (elf_kind(elf) != ELF_K_ELF)
		return set_err(err, -EINVAL, "not an ELF file");
	ident = elf_getident(elf, NULL);
	if (!ident || !gelf_getehdr(elf, &eh))
		return set_err(err, -EINVAL, "corrupt ELF header: %s", elf_errmsg(-1));
	if (fstat(fd, &st))
		return set_err(err, -errno, "cannot stat ELF file: %s", strerror(errno));
	fsize = (size_t)st.st_size;

	out->e_type = eh.e_type;
	out->e_machine = eh.e_machine;
	out->elf_class = (uint8_t)ident[EI_CLASS];
	out->elf_data = (uint8_t)ident[EI_DATA];

	ret = load_section(elf, fd, fsize, out, err);
	if (ret != -ENOENT || out->name[0])
		return ret;
	ret = load_segment(elf, fd, fsize, out, err);
	if (ret == -ENOENT && !out->name[0])
		return set_err(err, -ENOENT, "no SFrame section");
	return ret;
}

/* Directories and devices would only give libelf's less helpful errors. */
static int check_regular(int fd, struct sframe_elf_error *err)
{
	struct stat st;

	if (fstat(fd, &st))
		return set_err(err, -errno, "%s", strerror(errno));
	if (S_ISDIR(st.st_mode))
		return set_err(err, -EISDIR, "is a directory");
	if (!S_ISREG(st.st_mode))
		return set_err(err, -EINVAL, "not a regular file");
	return 0;
}

int sframe_elf__load_fd(int fd, struct sframe_elf *out, struct sframe_elf_error *err)
{
	Elf *elf;
	int ret;

	memset(out, 0, sizeof(*out));
	if (err)
		err->msg[0] = '\0';
	ret = check_regular(fd, err);
	if (ret)
		return ret;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return set_err(err, -EINVAL, "libelf initialization failed: %s", elf_errmsg(-1));
	/* ELF_C_READ, not mmap: a file truncated under us must not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return set_err(err, -EINVAL, "not an ELF file: %s", elf_errmsg(-1));
	ret = load_elf(elf, fd, out, err);
	elf_end(elf);
	if (ret)
		sframe_elf__release(out);
	return ret;
}

/* Opens path and hands it to load (one of the _fd loaders). */
static int load_path(const char *path, struct sframe_elf *out, struct sframe_elf_error *err,
		     int (*load)(int, struct sframe_elf *, struct sframe_elf_error *))
{
	int fd, ret;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return set_err(err, ret, "%s", strerror(-ret));
	}
	ret = load(fd, out, err);
	close(fd);
	return ret;
}

int sframe_elf__load(const char *path, struct sframe_elf *out, struct sframe_elf_error *err)
{
	return load_path(path, out, err, sframe_elf__load_fd);
}

/* Read size bytes from offset 0 with pread, so the caller's file offset is untouched. */
static int read_all(int fd, char *buf, size_t size, struct sframe_elf_error *err)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pread(fd, buf + done, size - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return set_err(err, -errno, "read failed: %s", strerror(errno));
		if (n == 0)
			return set_err(err, -EIO, "read failed: file shrank");
		done += (size_t)n;
	}
	return 0;
}

int sframe_elf__load_raw_fd(int fd, struct sframe_elf *out, struct sframe_elf_error *err)
{
	struct stat st;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = check_regular(fd, err);
	if (ret)
		return ret;
	if (fstat(fd, &st))
		return set_err(err, -errno, "%s", strerror(errno));
	if ((unsigned long long)st.st_size > RAW_MAX_SIZE)
		return set_err(err, -EFBIG, "file too large for a raw SFrame section");
	out->data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!out->data)
		return set_err(err, -ENOMEM, "out of memory");
	ret = read_all(fd, out->data, (size_t)st.st_size, err);
	if (ret) {
		sframe_elf__release(out);
		return ret;
	}
	out->size = (size_t)st.st_size;
	out->source = SFRAME_ELF_RAW;
	snprintf(out->name, sizeof(out->name), "%s", SFRAME_DEFAULT_NAME);
	return 0;
}

int sframe_elf__load_raw(const char *path, struct sframe_elf *out, struct sframe_elf_error *err)
{
	return load_path(path, out, err, sframe_elf__load_raw_fd);
}
