// SPDX-License-Identifier: GPL-2.0-or-later
/* Arenas of identical JIT trampolines (see jitcode.h). */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procs/jitcode.h"
#include "procs/procmem.h"
#include "util/hash.h"
#include "util/hashmap.h"

#define JITCODE_MAX_TEMPLATES 8
#define JITCODE_READ_CHUNK (64u << 10)
#define JITCODE_MAX_IMM 4096 /* a trampoline's own frame is small */

struct region {
	int pid;
	uint64_t start_ticks;
	struct jitcode_region r;
};

struct jitcode {
	struct jitcode_template t[JITCODE_MAX_TEMPLATES];
	uint32_t nr;
	struct hashmap regions; /* struct region *, by pid */
};

int jitcode__period(const uint8_t *buf, size_t len)
{
	size_t p, i;

	/* Two whole copies at least: one copy alone proves no period. */
	for (p = JITCODE_MIN_PERIOD; p <= JITCODE_MAX_PERIOD && 2 * p <= len; p++) {
		for (i = p; i < len && buf[i] == buf[i - p]; i++)
			;
		if (i == len)
			return (int)p;
	}
	return -ENOENT;
}

/*
 * The decoder's state: SP's distance below the CFA, whether the CFA is
 * expressed from rbp (and rbp's distance below it), where the caller's rbp
 * is saved (0: still in rbp).
 */
struct state {
	int32_t sp, fp_base, fp_off;
	uint8_t cfa_fp;
};

static int add_row(struct jitcode_template *t, uint32_t off, const struct state *s)
{
	struct jitcode_row *last = t->nr_rows ? &t->rows[t->nr_rows - 1] : NULL;
	struct jitcode_row r = { off, s->cfa_fp ? s->fp_base : s->sp, s->cfa_fp, s->fp_off };

	if (last && last->cfa_off == r.cfa_off && last->cfa_fp == r.cfa_fp &&
	    last->fp_off == r.fp_off)
		return 0;
	if (last && last->off == off) {
		*last = r;
		return 0;
	}
	if (t->nr_rows == JITCODE_MAX_ROWS)
		return -ENOENT;
	t->rows[t->nr_rows++] = r;
	return 0;
}

static int32_t imm32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/*
 * One instruction at b[0 .. n): its length and its effect on s, or 0 when
 * it is not one the decoder knows. *call / *ret say what it was.
 */
static uint32_t step(const uint8_t *b, uint32_t n, struct state *s, int *call, int *ret)
{
	int32_t imm;

	*call = *ret = 0;
	if (n >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		return 4; /* endbr64 */
	if (b[0] == 0x90)
		return 1;
	if (n >= 2 && b[0] == 0x66 && b[1] == 0x90)
		return 2;
	if (b[0] == 0xc3) {
		*ret = 1;
		return 1;
	}
	if (b[0] == 0x55) { /* push %rbp */
		s->sp += 8;
		if (!s->fp_off)
			s->fp_off = -s->sp;
		return 1;
	}
	if (b[0] == 0x5d && s->sp >= 16) { /* pop %rbp */
		if (s->fp_off == -s->sp) {
			s->fp_off = 0;
			s->cfa_fp = 0;
		} else if (s->cfa_fp) {
			return 0;
		}
		s->sp -= 8;
		return 1;
	}
	if (b[0] == 0xc9 && s->cfa_fp && s->fp_off == -s->fp_base) { /* leave */
		s->sp = s->fp_base - 8;
		s->cfa_fp = 0;
		s->fp_off = 0;
		return 1;
	}
	if (n >= 2 && b[0] == 0xff && (b[1] & 0xf8) == 0xd0 && b[1] != 0xd4) {
		*call = 1; /* call *%reg */
		return 2;
	}
	if (n >= 3 && b[0] == 0x41 && b[1] == 0xff && (b[2] & 0xf8) == 0xd0) {
		*call = 1; /* call *%r8..r15 */
		return 3;
	}
	if (n < 3 || b[0] != 0x48)
		return 0;
	if (b[1] == 0x89 && b[2] == 0xe5 && s->fp_off) { /* mov %rsp,%rbp, rbp saved */
		s->cfa_fp = 1;
		s->fp_base = s->sp;
		return 3;
	}
	if (b[1] == 0x89 && b[2] == 0xec && s->cfa_fp) { /* mov %rbp,%rsp */
		s->sp = s->fp_base;
		return 3;
	}
	if ((b[1] == 0x83 && n >= 4) || (b[1] == 0x81 && n >= 7)) {
		imm = b[1] == 0x83 ? (int8_t)b[3] : imm32(b + 3);
		if ((b[2] != 0xec && b[2] != 0xc4) || imm < 0 || imm > JITCODE_MAX_IMM)
			return 0;
		s->sp += b[2] == 0xec ? imm : -imm; /* sub/add $imm,%rsp */
		return s->sp >= 8 ? (b[1] == 0x83 ? 4 : 7) : 0;
	}
	return 0;
}

int jitcode__decode(struct jitcode_template *t)
{
	struct state s = { .sp = 8 };
	uint32_t pos = 0, len, calls = 0;
	int call, ret;

	t->nr_rows = 0;
	t->code_len = 0;
	if (t->period < JITCODE_MIN_PERIOD || t->period > JITCODE_MAX_PERIOD)
		return -ENOENT;
	add_row(t, 0, &s);
	while (pos < t->period) {
		len = step(t->bytes + pos, t->period - pos, &s, &call, &ret);
		if (!len)
			return -ENOENT;
		pos += len;
		calls += call;
		if (ret) {
			/* Back where it started, after exactly one call: a trampoline. */
			if (calls != 1 || s.cfa_fp || s.sp != 8 || s.fp_off)
				return -ENOENT;
			t->code_len = pos;
			return 0;
		}
		if (add_row(t, pos, &s))
			return -ENOENT;
	}
	return -ENOENT;
}

/* ---- the ELF image */

struct out {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void put(struct out *o, const void *b, size_t n)
{
	if (o->len + n > o->cap) {
		o->err = -E2BIG;
		return;
	}
	memcpy(o->p + o->len, b, n);
	o->len += n;
}

static void put8(struct out *o, uint8_t v)
{
	put(o, &v, 1);
}

static void put32(struct out *o, uint32_t v)
{
	put(o, &v, 4); /* x86-64: little-endian, as the image */
}

static void uleb(struct out *o, uint32_t v)
{
	do {
		put8(o, (v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void pad_to(struct out *o, size_t align, uint8_t byte)
{
	while (o->len % align && !o->err)
		put8(o, byte);
}

static void set32(struct out *o, size_t at, uint32_t v)
{
	if (!o->err)
		memcpy(o->p + at, &v, 4);
}

#define DWARF_RSP 7
#define DWARF_RBP 6
#define DWARF_RA 16

/* The CFI of one copy: a CIE, one FDE with the rows, a terminator. */
static void eh_frame(struct out *o, const struct jitcode_template *t)
{
	static const struct jitcode_row entry = { .cfa_off = 8 };
	const struct jitcode_row *r, *prev;
	size_t cie = o->len, fde, at;
	uint32_t loc = 0, i, delta;

	put32(o, 0); /* length, set below */
	put32(o, 0); /* CIE id */
	put8(o, 1); /* version */
	put(o, "zR", 3);
	uleb(o, 1); /* code alignment */
	put8(o, 0x78); /* data alignment: sleb -8 */
	uleb(o, DWARF_RA);
	uleb(o, 1); /* augmentation data: the FDE pointer encoding */
	put8(o, 0x03); /* DW_EH_PE_udata4, absolute */
	put8(o, 0x0c), uleb(o, DWARF_RSP), uleb(o, 8); /* def_cfa rsp+8 */
	put8(o, 0x80 | DWARF_RA), uleb(o, 1); /* RA at CFA-8 */
	pad_to(o, 8, 0);
	set32(o, cie, (uint32_t)(o->len - cie - 4));

	fde = o->len;
	put32(o, 0);
	put32(o, (uint32_t)(o->len - cie)); /* CIE pointer: back to the CIE */
	put32(o, JITCODE_TEXT_VADDR);
	put32(o, t->period);
	uleb(o, 0); /* no augmentation data */
	/* Each row as it differs from the one before; the first from the CIE's (on entry). */
	for (i = 0; i < t->nr_rows; i++) {
		r = &t->rows[i];
		prev = i ? &t->rows[i - 1] : &entry;
		delta = r->off - loc;
		if (delta && delta < 64)
			put8(o, 0x40 | delta);
		else if (delta)
			put8(o, 0x02), put8(o, (uint8_t)delta);
		loc = r->off;
		if (r->cfa_fp != prev->cfa_fp || r->cfa_off != prev->cfa_off) {
			put8(o, 0x0c);
			uleb(o, r->cfa_fp ? DWARF_RBP : DWARF_RSP);
			uleb(o, (uint32_t)r->cfa_off);
		}
		if (r->fp_off != prev->fp_off) {
			if (r->fp_off)
				put8(o, 0x80 | DWARF_RBP), uleb(o, (uint32_t)(-r->fp_off / 8));
			else
				put8(o, 0xc0 | DWARF_RBP); /* restore */
		}
	}
	pad_to(o, 8, 0);
	set32(o, fde, (uint32_t)(o->len - fde - 4));
	at = o->len;
	put32(o, 0); /* terminator */
	(void)at;
}

int jitcode__image(const struct jitcode_template *t, uint8_t *buf, size_t cap)
{
	static const char shstr[] = "\0.text\0.eh_frame\0.shstrtab";
	struct out o = { buf, 0, cap, 0 };
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };
	Elf64_Shdr sh[4] = { { 0 } };
	size_t ehf, ehf_end, str;

	if (cap < JITCODE_TEXT_VADDR + t->period)
		return -E2BIG;
	memset(buf, 0, JITCODE_TEXT_VADDR);
	o.len = JITCODE_TEXT_VADDR;
	put(&o, t->bytes, t->period);
	pad_to(&o, 8, 0);
	ehf = o.len;
	eh_frame(&o, t);
	ehf_end = o.len;
	str = o.len;
	put(&o, shstr, sizeof(shstr));
	pad_to(&o, 8, 0);
	if (o.err)
		return o.err;

	sh[1] = (Elf64_Shdr){ .sh_name = 1,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = JITCODE_TEXT_VADDR,
			      .sh_offset = JITCODE_TEXT_VADDR,
			      .sh_size = t->period,
			      .sh_addralign = 16 };
	sh[2] = (Elf64_Shdr){ .sh_name = 7,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC,
			      .sh_addr = ehf,
			      .sh_offset = ehf,
			      .sh_size = ehf_end - ehf,
			      .sh_addralign = 8 };
	sh[3] = (Elf64_Shdr){ .sh_name = 17,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = str,
			      .sh_size = sizeof(shstr),
			      .sh_addralign = 1 };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = o.len;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(sh[0]);
	eh.e_shnum = 4;
	eh.e_shstrndx = 3;
	/* One segment over the whole image: file offsets are virtual addresses. */
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_filesz = ph.p_memsz = ehf_end;
	ph.p_align = 0x1000;
	put(&o, sh, sizeof(sh));
	if (o.err)
		return o.err;
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), &ph, sizeof(ph));
	return (int)o.len;
}

uint32_t jitcode__map_flags(const struct jitcode_template *t)
{
	return t->period & SFBPF_MAP_PERIOD_MASK;
}

/* ---- per process */

struct jitcode *jitcode__new(void)
{
	return calloc(1, sizeof(struct jitcode));
}

void jitcode__free(struct jitcode *jc)
{
	size_t it = 0;
	uint32_t i;
	uint64_t v;

	if (!jc)
		return;
	for (i = 0; i < jc->nr; i++)
		if (jc->t[i].fd >= 0)
			close(jc->t[i].fd);
	while (hashmap__next(&jc->regions, &it, &v))
		free(HASHMAP_TO_PTR(v));
	hashmap__free(&jc->regions);
	free(jc);
}

/* t's image, in a memfd of its own whose identity is the table's: 0, or a negative errno. */
static int write_image(struct jitcode_template *t)
{
	struct stat st;
	uint8_t *img;
	int len, err;

	img = malloc(2 * JITCODE_TEXT_VADDR + JITCODE_MAX_PERIOD);
	if (!img)
		return -ENOMEM;
	len = jitcode__image(t, img, 2 * JITCODE_TEXT_VADDR + JITCODE_MAX_PERIOD);
	err = len < 0 ? len : 0;
	if (!err) {
		t->fd = memfd_create("sfbpf-jitcode", MFD_CLOEXEC);
		if (t->fd < 0)
			err = -errno;
		else if (write(t->fd, img, (size_t)len) != len)
			err = -EIO;
		else if (fstat(t->fd, &st))
			err = -errno;
	}
	free(img);
	if (err) {
		if (t->fd >= 0)
			close(t->fd);
		t->fd = -1;
		return err;
	}
	/*
	 * Templates are told apart by all their bytes (a hash of them could be
	 * matched by a tenant's trampoline, crafted to take another's table),
	 * and each has its own.
	 */
	obj_key__from(&t->key, NULL, &st, t->fd);
	return 0;
}

/* A new slot, or NULL when all are taken. */
static struct jitcode_template *new_template(struct jitcode *jc, uint32_t period)
{
	struct jitcode_template *t;

	if (jc->nr == JITCODE_MAX_TEMPLATES)
		return NULL;
	t = &jc->t[jc->nr];
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->period = period;
	return t;
}

/* The cached template of these bytes, made (image and all) if new. */
static int template_for(struct jitcode *jc, const uint8_t *bytes, uint32_t period,
			const struct jitcode_template **out)
{
	struct jitcode_template *t;
	uint32_t i;
	int err;

	for (i = 0; i < jc->nr; i++)
		if (!jc->t[i].shape && jc->t[i].period == period &&
		    !memcmp(jc->t[i].bytes, bytes, period)) {
			*out = &jc->t[i];
			return 0;
		}
	if (!(t = new_template(jc, period)))
		return -ENOSPC;
	memcpy(t->bytes, bytes, period);
	/* Only trampolines take a slot (decoding is cheap: a zeroed page is periodic too). */
	if (jitcode__decode(t))
		return -ENOENT;
	*out = NULL;
	err = write_image(t);
	if (err)
		return err;
	*out = t;
	jc->nr++;
	return 0;
}

int jitcode__shape(struct jitcode *jc, int32_t cfa_off, const struct jitcode_template **out)
{
	struct jitcode_template *t;
	uint32_t i;
	int err;

	*out = NULL;
	if (cfa_off < 8 || cfa_off % 8 || cfa_off > JITCODE_MAX_IMM)
		return -EINVAL;
	for (i = 0; i < jc->nr; i++)
		if (jc->t[i].shape && jc->t[i].rows[0].cfa_off == cfa_off) {
			*out = &jc->t[i];
			return 0;
		}
	if (!(t = new_template(jc, JITCODE_SHAPE_PERIOD)))
		return -ENOSPC;
	t->shape = true;
	t->code_len = t->period;
	t->rows[0] = (struct jitcode_row){ .off = 0, .cfa_off = cfa_off };
	t->nr_rows = 1;
	err = write_image(t);
	if (err)
		return err;
	*out = t;
	jc->nr++;
	return 0;
}

static uint32_t pid_hash(int pid)
{
	return (uint32_t)hash__mix64((uint64_t)pid);
}

static bool region_eq(const void *ctx, uint64_t val, const void *key)
{
	(void)ctx;
	return ((const struct region *)HASHMAP_TO_PTR(val))->pid == *(const int *)key;
}

static struct region *find_region(const struct jitcode *jc, int pid)
{
	int64_t v = hashmap__find(&jc->regions, pid_hash(pid), region_eq, NULL, &pid);

	return v < 0 ? NULL : HASHMAP_TO_PTR(v);
}

int jitcode__set_region(struct jitcode *jc, int pid, uint64_t start_ticks,
			const struct jitcode_region *r)
{
	struct region *g = find_region(jc, pid);

	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g || hashmap__add(&jc->regions, pid_hash(pid), HASHMAP_PTR(g))) {
			free(g);
			return -ENOMEM;
		}
	}
	g->pid = pid;
	g->start_ticks = start_ticks;
	g->r = *r;
	return 0;
}

const struct jitcode_region *jitcode__region(const struct jitcode *jc, int pid,
					     uint64_t start_ticks)
{
	const struct region *g = jc ? find_region(jc, pid) : NULL;

	return g && g->start_ticks == start_ticks ? &g->r : NULL;
}

void jitcode__forget(struct jitcode *jc, int pid)
{
	struct region *g = jc ? find_region(jc, pid) : NULL;

	if (!g)
		return;
	hashmap__del(&jc->regions, pid_hash(pid), region_eq, NULL, &pid);
	free(g);
}

int jitcode__resolve(struct jitcode *jc, int pid, uint64_t start, uint64_t end,
		     const struct jitcode_template **out)
{
	uint64_t len = end - start, at, n, i, whole;
	uint8_t *buf;
	int period, err;

	*out = NULL;
	if (end <= start || len > JITCODE_MAX_MAPPING)
		return -ENOENT;
	buf = malloc(JITCODE_READ_CHUNK);
	if (!buf)
		return -ENOMEM;
	/* The first page decides; the rest must repeat it. */
	n = len < 4096 ? len : 4096;
	err = procmem__read(pid, start, buf, n);
	period = err ? err : jitcode__period(buf, n);
	if (period < 0) {
		err = period;
		goto out;
	}
	err = template_for(jc, buf, (uint32_t)period, out);
	/*
	 * Every byte is its copy's (the first page was read again: its copies
	 * were only compared with each other). The copies stop short of the end
	 * when the period does not divide the arena: what is left is a cut copy,
	 * or zeros (never written).
	 */
	whole = len / (uint64_t)period * (uint64_t)period;
	for (at = 0; !err && at < len; at += n) {
		n = len - at < JITCODE_READ_CHUNK ? len - at : JITCODE_READ_CHUNK;
		err = procmem__read(pid, start + at, buf, n);
		for (i = 0; !err && i < n; i++) {
			uint8_t want = (*out)->bytes[(at + i) % (uint64_t)period];

			if (buf[i] != want && (at + i < whole || buf[i]))
				err = -ENOENT;
		}
	}
out:
	free(buf);
	if (err)
		*out = NULL;
	return err;
}
