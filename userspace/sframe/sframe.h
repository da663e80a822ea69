/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SFrame decoder: validates a whole .sframe section (V1, V2, V3, either
 * endianness) once, then hands out FDEs and FREs through a small iterator API.
 * Names follow the SFrame specification. Every accessor works on a section that
 * passed validation, so none of them can read out of bounds.
 *
 * Error convention: functions return 0 or a negative errno; when a section is
 * rejected, struct sframe_error says which check failed and at which byte.
 */
#ifndef SFBPF_SFRAME_H
#define SFBPF_SFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Constants from the SFrame specification. */
#define SFRAME_MAGIC 0xdee2
#define SFRAME_VERSION_1 1
#define SFRAME_VERSION_2 2
#define SFRAME_VERSION_3 3

#define SFRAME_F_FDE_SORTED 0x1
#define SFRAME_F_FRAME_POINTER 0x2 /* V1 and V2 only */
#define SFRAME_F_FDE_FUNC_START_PCREL 0x4 /* V2 (erratum 1) and V3 */

#define SFRAME_ABI_AARCH64_ENDIAN_BIG 1
#define SFRAME_ABI_AARCH64_ENDIAN_LITTLE 2
#define SFRAME_ABI_AMD64_ENDIAN_LITTLE 3
#define SFRAME_ABI_S390X_ENDIAN_BIG 4

#define SFRAME_FRE_TYPE_ADDR1 0
#define SFRAME_FRE_TYPE_ADDR2 1
#define SFRAME_FRE_TYPE_ADDR4 2

#define SFRAME_FDE_PCTYPE_INC 0
#define SFRAME_FDE_PCTYPE_MASK 1

#define SFRAME_FDE_TYPE_DEFAULT 0
#define SFRAME_FDE_TYPE_FLEX 1 /* V3 only */

#define SFRAME_FRE_DATAWORD_1B 0
#define SFRAME_FRE_DATAWORD_2B 1
#define SFRAME_FRE_DATAWORD_4B 2

#define SFRAME_FRE_MAX_DATAWORDS 15

/* s390x: CFA offsets are stored as (offset - 160) / 8; SP = CFA - 160. */
#define SFRAME_S390X_CFA_OFFSET_ADJUSTMENT 160
#define SFRAME_S390X_CFA_OFFSET_ALIGNMENT_FACTOR 8
#define SFRAME_S390X_SP_VAL_OFFSET (-160)

/* On-disk sizes. */
#define SFRAME_HEADER_SIZE 28
#define SFRAME_V1_FDE_SIZE 17
#define SFRAME_V2_FDE_SIZE 20
#define SFRAME_V3_FDE_INDEX_SIZE 16
#define SFRAME_V3_FDE_ATTR_SIZE 5

/* Why a section was rejected. Stable: tests and --json name them. */
enum sframe_errcode {
	SFRAME_ERR_NONE = 0,
	SFRAME_ERR_TRUNCATED_HEADER, /* section smaller than the header */
	SFRAME_ERR_BAD_MAGIC,
	SFRAME_ERR_BAD_VERSION,
	SFRAME_ERR_BAD_FLAGS, /* a flag bit this version does not define */
	SFRAME_ERR_BAD_ABI,
	SFRAME_ERR_AUXHDR_BOUNDS, /* auxiliary header runs past the section */
	SFRAME_ERR_SUBSECTION_ORDER, /* fdeoff > freoff */
	SFRAME_ERR_FDE_BOUNDS, /* FDE sub-section runs past the section/FREs */
	SFRAME_ERR_FRE_BOUNDS, /* FRE sub-section runs past the section */
	SFRAME_ERR_FRE_LEN, /* sfh_fre_len disagrees with the FREs or the section size
			     * (fewer than 8 bytes of alignment padding are allowed) */
	SFRAME_ERR_FDE_FRE_OFF, /* an FDE's FREs start outside the FRE sub-section */
	SFRAME_ERR_FRE_TRUNCATED, /* an FRE or its data words run past the end */
	SFRAME_ERR_FRE_TYPE, /* unused: FRE types 3..15 now skip their FDE */
	SFRAME_ERR_FDE_TYPE, /* unused: unknown V3 FDE types now skip their FDE */
	SFRAME_ERR_DATAWORD_SIZE, /* data-word size 3 */
	SFRAME_ERR_DATAWORD_COUNT, /* more data words than the ABI/FDE type allows */
	SFRAME_ERR_REP_SIZE, /* PCMASK FDE with rep_size 0 */
	SFRAME_ERR_FDE_UNSORTED, /* FDE_SORTED claimed but starts not sorted */
	SFRAME_ERR_FDE_OVERLAP, /* two functions' ranges overlap (sorted sections only:
				  * relocatable objects are unsorted and every text
				  * section of theirs starts at 0) */
	SFRAME_ERR_FRE_START_ORDER, /* an FRE starts before the previous one */
	SFRAME_ERR_FRE_START_RANGE, /* FRE start past the function size (or block) */
	SFRAME_ERR_NUM_FRES, /* total FRE count != sfh_num_fres */
	SFRAME_ERR_FLEX_RULE, /* a flexible FDE rule that cannot be decoded */
	SFRAME_ERR_ADDR_OVERFLOW, /* sorted section: a function wraps past 2^64
				    * (unsorted ones are relocatable: modular) */
	SFRAME_ERR__COUNT,
};

struct sframe_error {
	enum sframe_errcode code;
	uint64_t offset; /* byte offset into the section where the check failed */
	char msg[160];
};

/* Stable short name of an error code ("bad-magic", "fre-type", ...). */
const char *sframe_errcode__name(enum sframe_errcode code);

/* Section-wide facts, in host byte order. */
struct sframe_header {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint8_t abi_arch;
	int8_t cfa_fixed_fp_offset;
	int8_t cfa_fixed_ra_offset;
	uint8_t auxhdr_len;
	uint32_t num_fdes;
	uint32_t num_fres;
	uint32_t fre_len;
	uint32_t fdeoff;
	uint32_t freoff;
	bool foreign_endian; /* section was byte-swapped relative to the host */
};

/*
 * Why an FDE carries no usable FREs although the section is valid: its info
 * bytes hold a value the spec reserves for future use. Each FDE locates its
 * own FREs (sfde_func_start_fre_off), so one such FDE does not stop the others
 * from being read; its PC range is known and simply has no SFrame rules.
 */
enum sframe_fde_reserved {
	SFRAME_FDE_OK = 0,
	SFRAME_FDE_RESERVED_FRE_TYPE, /* FRE type 3..15: FRE size unknown */
	SFRAME_FDE_RESERVED_FDE_TYPE, /* V3 info2 FDE type 2..31: data words' meaning unknown */
};

/* One function descriptor, with V1/V2/V3 differences folded away. */
struct sframe_fde {
	uint32_t index;
	uint64_t func_start; /* absolute: section address + resolved offset */
	int64_t func_start_field; /* raw sfde_func_start_address / sfdi_func_start_offset */
	uint32_t func_size;
	uint32_t start_fre_off; /* as stored: offset into the FRE sub-section */
	uint32_t num_fres;
	uint8_t info; /* raw sfde_func_info / sfda_func_info */
	uint8_t info2; /* raw sfda_func_info2 (V3), 0 before */
	uint8_t fre_type; /* SFRAME_FRE_TYPE_* */
	uint8_t pctype; /* SFRAME_FDE_PCTYPE_* */
	uint8_t fde_type; /* SFRAME_FDE_TYPE_* */
	uint8_t rep_size; /* PCMASK repeat block size (V2+), 0 otherwise */
	uint8_t pauth_key; /* AArch64: 0 = key A, 1 = key B */
	bool signal; /* V3 signal frame bit */
	uint8_t reserved; /* enum sframe_fde_reserved; nonzero: iterating yields no FREs */
};

/* Where a recovered value comes from. */
enum sframe_rule_kind {
	SFRAME_RULE_SAME = 0, /* not tracked: unchanged from the callee's frame */
	SFRAME_RULE_UNDEFINED, /* RA undefined: the outermost frame */
	SFRAME_RULE_OFFSET, /* base + offset, then dereferenced if deref */
};

enum sframe_rule_base {
	SFRAME_BASE_SP = 0,
	SFRAME_BASE_FP,
	SFRAME_BASE_CFA,
	SFRAME_BASE_REG, /* DWARF register regnum (flexible FDEs) */
};

struct sframe_rule {
	uint8_t kind; /* enum sframe_rule_kind */
	uint8_t base; /* enum sframe_rule_base */
	bool deref;
	uint32_t regnum; /* DWARF number of the base register (also set for SP/FP);
			  * a V3 control word holds up to 29 bits of it */
	int64_t offset;
};

/*
 * One frame row entry, decoded into recovery rules. FRE starts never decrease
 * within a function but may repeat (gas emits two FREs at one address when
 * a zero-byte alignment separates two CFI directives): the later one applies
 * and the earlier covers nothing (end_off == start_off). An FRE may also start
 * at the function's end (a CFI directive after the last instruction) and then
 * covers nothing either.
 */
struct sframe_fre {
	uint32_t index; /* within the function */
	uint32_t start_off; /* PC offset from the function start (or within the rep block) */
	uint32_t end_off; /* exclusive: next FRE's start, or the function/rep size */
	uint8_t info; /* raw FRE info byte */
	uint8_t cfa_base_reg_id; /* 0 = FP, 1 = SP (raw bit) */
	uint8_t dataword_size; /* in bytes: 1, 2 or 4 */
	uint8_t dataword_count;
	bool mangled_ra;
	int32_t data[SFRAME_FRE_MAX_DATAWORDS]; /* sign-extended data words */
	uint32_t udata[SFRAME_FRE_MAX_DATAWORDS]; /* zero-extended data words */
	struct sframe_rule cfa, ra, fp;
};

struct sframe_decoder;

/*
 * Validate and index a section. data must stay valid for the decoder's life
 * (the decoder does not copy it). sect_addr is the section's virtual address
 * (sh_addr); function starts are reported relative to it.
 * Returns 0 and *out, or a negative errno with *err filled (err may be NULL).
 */
int sframe_decoder__new(const void *data, size_t size, uint64_t sect_addr,
			struct sframe_decoder **out, struct sframe_error *err);
void sframe_decoder__free(struct sframe_decoder *d);

const struct sframe_header *sframe_decoder__header(const struct sframe_decoder *d);
uint32_t sframe_decoder__num_fdes(const struct sframe_decoder *d);
/* How many FDEs have a reserved type (struct sframe_fde.reserved) and no usable FREs. */
uint32_t sframe_decoder__num_reserved_fdes(const struct sframe_decoder *d);
/* Short name of an enum sframe_fde_reserved value ("fre-type", "fde-type", "ok"). */
const char *sframe_fde_reserved__name(uint8_t reserved);
/* FDE i in section order (0 <= i < num_fdes). Returns 0 or -ERANGE. */
int sframe_decoder__fde(const struct sframe_decoder *d, uint32_t i, struct sframe_fde *fde);
/*
 * FDE of rank i in function-start order (equal starts: in section order),
 * 0 <= i < num_fdes. Returns 0 or -ERANGE.
 */
int sframe_decoder__fde_by_start(const struct sframe_decoder *d, uint32_t rank,
				 struct sframe_fde *fde);
/*
 * The FDE covering pc (absolute): 0 and *fde filled, or -ENOENT. Binary search;
 * in an unsorted section, whose functions may overlap, the covering FDE with the
 * greatest start (equal starts: the later in section order).
 */
int sframe_decoder__find_fde(const struct sframe_decoder *d, uint64_t pc, struct sframe_fde *fde);
/* The FRE that applies at pc within fde (handles PCMASK). Returns 0 or -ENOENT. */
int sframe_decoder__find_fre(const struct sframe_decoder *d, const struct sframe_fde *fde,
			     uint64_t pc, struct sframe_fre *fre);

/* Iterate one FDE's FREs in order. */
struct sframe_fre_iter {
	const struct sframe_decoder *d;
	struct sframe_fde fde;
	size_t pos; /* byte offset of the next FRE in the section */
	size_t end; /* end of the FRE sub-section */
	uint32_t next; /* index of the next FRE */
	uint32_t range; /* what the FREs' starts are offsets into: function or block size */
	uint8_t asz; /* bytes of an FRE's start address */
	uint8_t max_dw; /* most data words an FRE may carry */
	int next_len; /* size of the next FRE when already read, else 0 */
	uint32_t next_start; /* its start, then */
};

void sframe_fre_iter__init(struct sframe_fre_iter *it, const struct sframe_decoder *d,
			   const struct sframe_fde *fde);
/* Returns true and fills fre, or false at the end. */
bool sframe_fre_iter__next(struct sframe_fre_iter *it, struct sframe_fre *fre);

/*
 * An FRE not yet decoded, for readers of many FREs: where it applies, and its
 * encoding. Two FREs of one section, of FDEs of the same fde_type, whose
 * encodings are equal bytes decode to equal rules (struct sframe_fre's cfa,
 * ra, fp and mangled_ra), so a reader may decode each encoding once.
 */
struct sframe_fre_raw {
	uint32_t index; /* within the function */
	uint32_t start_off, end_off; /* as in struct sframe_fre */
	const uint8_t *enc; /* the FRE's info byte, then its data words as stored */
	uint32_t enc_len;
	/* enc's first 16 bytes as two numbers, little-endian, zeros past enc_len. */
	uint64_t enc_words[2];
	size_t pos; /* section offset of the FRE */
};

/* Returns true and fills raw (pointing into the section), or false at the end. */
bool sframe_fre_iter__next_raw(struct sframe_fre_iter *it, struct sframe_fre_raw *raw);
/* The FRE raw (from it) decoded: what sframe_fre_iter__next() would have filled. */
void sframe_fre_iter__decode(const struct sframe_fre_iter *it, const struct sframe_fre_raw *raw,
			     struct sframe_fre *fre);

/* Human names, for dumps. */
const char *sframe_abi__name(uint8_t abi_arch);
/* DWARF register numbers of SP and FP for an ABI (-1 when unknown). */
int sframe_abi__sp_regnum(uint8_t abi_arch);
int sframe_abi__fp_regnum(uint8_t abi_arch);

#endif /* SFBPF_SFRAME_H */
