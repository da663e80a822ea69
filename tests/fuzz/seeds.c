// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Seed sections for the SFrame fuzz targets (not a fuzz target itself):
 * sfb_standard() sections for every version, ABI and byte order the decoder
 * supports, sorted and unsorted, so the corpus starts with what compilers
 * for this machine never emit (AArch64, s390x, big-endian, flexible FDEs).
 * Usage: seeds OUTDIR   (writes OUTDIR/built-NAME.sframe)
 */
#include "../sframe_builder.h"

struct seed {
	const char *name;
	uint8_t version, abi;
	bool big_endian;
	uint8_t flags;
};

#define SORTED SFRAME_F_FDE_SORTED
#define PCREL SFRAME_F_FDE_FUNC_START_PCREL
#define FP SFRAME_F_FRAME_POINTER

static const struct seed seeds[] = {
	{ "v1-amd64", 1, SFRAME_ABI_AMD64_ENDIAN_LITTLE, false, SORTED },
	{ "v1-amd64-unsorted", 1, SFRAME_ABI_AMD64_ENDIAN_LITTLE, false, 0 },
	{ "v1-aarch64-be", 1, SFRAME_ABI_AARCH64_ENDIAN_BIG, true, SORTED | FP },
	{ "v2-amd64", 2, SFRAME_ABI_AMD64_ENDIAN_LITTLE, false, SORTED },
	{ "v2-pcrel-amd64", 2, SFRAME_ABI_AMD64_ENDIAN_LITTLE, false, SORTED | PCREL },
	{ "v2-pcrel-aarch64-le", 2, SFRAME_ABI_AARCH64_ENDIAN_LITTLE, false, SORTED | PCREL },
	{ "v2-pcrel-s390x", 2, SFRAME_ABI_S390X_ENDIAN_BIG, true, SORTED | PCREL },
	{ "v3-amd64", 3, SFRAME_ABI_AMD64_ENDIAN_LITTLE, false, SORTED | PCREL },
	{ "v3-amd64-unsorted", 3, SFRAME_ABI_AMD64_ENDIAN_LITTLE, false, PCREL },
	{ "v3-nopcrel-amd64", 3, SFRAME_ABI_AMD64_ENDIAN_LITTLE, false, SORTED },
	{ "v3-aarch64-le", 3, SFRAME_ABI_AARCH64_ENDIAN_LITTLE, false, SORTED | PCREL },
	{ "v3-aarch64-be", 3, SFRAME_ABI_AARCH64_ENDIAN_BIG, true, SORTED | PCREL },
	{ "v3-s390x", 3, SFRAME_ABI_S390X_ENDIAN_BIG, true, SORTED | PCREL },
};

int main(int argc, char **argv)
{
	static struct sfb_sect s;
	static struct sfb_out o;
	char path[4096];
	size_t i;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		sfb_standard(&s, seeds[i].version, seeds[i].abi, seeds[i].big_endian, seeds[i].flags);
		if (sfb_build(&s, &o)) {
			fprintf(stderr, "seeds: %s does not fit\n", seeds[i].name);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/built-%s.sframe", argv[1], seeds[i].name);
		f = fopen(path, "wb");
		if (!f || fwrite(o.buf, 1, o.size, f) != o.size || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	return 0;
}
