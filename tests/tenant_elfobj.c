// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A mapping's file offset to ELF addresses for 4, 16 and 64 KiB pages
 * (tables/elfobj.h), for tests/tenant_elfobj.test. The kernel maps a
 * segment from its p_offset rounded down to its page size: a library linked
 * for 4 KiB pages, on a 16 or 64 KiB arm64 kernel, has mappings that start
 * below its segments' offsets. The segments of the cases below:
 *
 *   R   offset 0x0      vaddr 0x0      filesz 0x5e0
 *   X   offset 0x11000  vaddr 0x21000  filesz 0x5000   (not 16 KiB-aligned)
 *   RW  offset 0x16df0  vaddr 0x36df0  filesz 0x200
 *
 * Then this kernel's page size through elfobj__offset_to_vaddr(), on the
 * same arithmetic.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "tables/elfobj.h"
#include "testlib.h"

int main(void)
{
	static const struct {
		uint64_t page, off;
		int err;
		uint64_t vaddr;
	} cases[] = {
		{ 4096, 0x11000, 0, 0x21000 }, /* X, page-aligned already */
		{ 4096, 0x10000, -ENOENT, 0 }, /* no segment there with 4 KiB pages */
		{ 4096, 0x16000, 0, 0x36000 }, /* RW's mapping */
		{ 16384, 0x10000, 0, 0x20000 }, /* X from 0x11000 & ~0x3fff */
		{ 16384, 0x14000, 0, 0x24000 }, /* X's next page: still X (r-x preferred) */
		{ 16384, 0x18000, -ENOENT, 0 }, /* past every segment */
		{ 65536, 0x10000, 0, 0x20000 }, /* X (and RW) from 0x10000: X preferred */
		{ 65536, 0x0, 0, 0x0 }, /* R: 0 */
		{ 65536, 0x20000, -ENOENT, 0 }, { 12288, 0x0, -EINVAL, 0 }, /* not a power of two */
	};
	struct elfobj_info info = {
		.nr_loads = 3,
		.loads = { { .vaddr = 0x0, .offset = 0x0, .filesz = 0x5e0, .flags = PF_R },
			   { .vaddr = 0x21000,
			     .offset = 0x11000,
			     .filesz = 0x5000,
			     .flags = PF_R | PF_X },
			   { .vaddr = 0x36df0,
			     .offset = 0x16df0,
			     .filesz = 0x200,
			     .flags = PF_R | PF_W } },
	};
	uint64_t vaddr, page = (uint64_t)sysconf(_SC_PAGESIZE), want;
	size_t i;
	int err;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		vaddr = 0;
		err = elfobj__offset_to_vaddr_pg(&info, cases[i].off, cases[i].page, &vaddr);
		report(err == cases[i].err && (err || vaddr == cases[i].vaddr),
		       "tenant-elfobj-pages",
		       "page %" PRIu64 " offset %#" PRIx64 ": %d %#" PRIx64 ", want %d %#" PRIx64,
		       cases[i].page, cases[i].off, err, vaddr, cases[i].err, cases[i].vaddr);
	}
	/* This kernel's pages: X's mapping starts at 0x11000 rounded down to them. */
	want = 0x21000 - (0x11000 - (0x11000 & ~(page - 1)));
	err = elfobj__offset_to_vaddr(&info, 0x11000 & ~(page - 1), &vaddr);
	report(!err && vaddr == want, "tenant-elfobj-this-kernel",
	       "page %" PRIu64 ": %d %#" PRIx64 ", want %#" PRIx64, page, err, vaddr, want);
	printf("checked %zu cases and this kernel's %" PRIu64 "-byte pages\n", i, page);
	return failures ? 1 : 0;
}
