// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: what the table loader does with a process's mapped file,
 * on arbitrary file contents: elfobj__read() (build-id, PT_LOAD segments) and
 * the offset -> address translation, then sframe_elf__load_fd() (section,
 * PT_GNU_SFRAME segment, ET_REL relocations) and, when it finds SFrame bytes,
 * the decoder and the flattener, then (as tables.c completes SFrame tables)
 * the DWARF CFI reader and flat_table__merge(). Every table built must pass
 * flat_check_table().
 *
 * The file is a memfd, so libelf mmaps it as it mmaps the real thing.
 */
#include <string.h>

#include "tables/cfi.h"
#include "tables/elfobj.h"
#include "tables/flatbuild.h"
#include "flat_check.h"
#include "tables/flatten.h"
#include "fuzz.h"
#include "sframe/sframe_elf.h"

static void check_elfobj(int fd, size_t size)
{
	struct elfobj_info info;
	uint64_t vaddr;
	uint32_t i;

	if (elfobj__read(fd, &info))
		return;
	FUZZ_CHECK(info.nr_loads <= ELFOBJ_MAX_LOADS, "%u loads", info.nr_loads);
	FUZZ_CHECK(info.build_id_len <= ELFOBJ_BUILD_ID_MAX, "build-id of %u bytes",
		   info.build_id_len);
	for (i = 0; i < info.nr_loads; i++) {
		elfobj__offset_to_vaddr(&info, info.loads[i].offset, &vaddr);
		elfobj__offset_to_vaddr(&info, info.loads[i].offset & ~0xfffull, &vaddr);
	}
	elfobj__offset_to_vaddr(&info, 0, &vaddr);
	elfobj__offset_to_vaddr(&info, size, &vaddr);
}

/* The SFrame table completed from CFI where it has gaps, as tables.c does. */
static void check_merge(int fd, const struct flat_table *t)
{
	struct flat_table *c = NULL, *m = NULL;
	int ret;

	if (cfi__flatten_fd(fd, &c, NULL))
		return;
	flat_check_table(c, 256);
	ret = flat_table__merge(t, c, &m);
	FUZZ_CHECK(ret == 0 || ret == -E2BIG || ret == -ENOMEM, "merge returned %d", ret);
	if (!ret)
		flat_check_table(m, 1024);
	flat_table__free(m);
	flat_table__free(c);
}

static void check_sframe(int fd, size_t size)
{
	struct sframe_elf_error eerr;
	struct sframe_decoder *d = NULL;
	struct flat_table *t = NULL;
	struct sframe_elf s;
	int ret;

	ret = sframe_elf__load_fd(fd, &s, &eerr);
	if (ret) {
		FUZZ_CHECK(s.data == NULL && s.size == 0, "failed (%d) but kept %zu bytes", ret,
			   s.size);
		FUZZ_CHECK(memchr(eerr.msg, '\0', sizeof(eerr.msg)) != NULL, "unterminated message");
		return;
	}
	FUZZ_CHECK(s.size <= size && s.offset <= size - s.size,
		   "%zu SFrame bytes at offset %llu of a %zu-byte file", s.size,
		   (unsigned long long)s.offset, size);
	FUZZ_CHECK(memchr(s.name, '\0', sizeof(s.name)) != NULL, "unterminated name");
	if (!sframe_decoder__new(s.data, s.size, s.addr, &d, NULL) &&
	    !(fuzz_skip_known() && flat_known_bug(d))) {
		ret = flat_table__from_sframe(d, &t);
		FUZZ_CHECK(ret == 0 || ret == -E2BIG || ret == -ENOMEM, "flatten returned %d", ret);
		if (!ret) {
			flat_check_table(t, 1024);
			check_merge(fd, t);
		}
		flat_table__free(t);
	}
	sframe_decoder__free(d);
	sframe_elf__release(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size);

	if (fd < 0)
		return 0;
	check_elfobj(fd, size);
	check_sframe(fd, size);
	return 0;
}
