// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the DWARF CFI reader (.eh_frame / .debug_frame entries
 * enumerated by libdw, every CIE's and FDE's program run by the CFA
 * interpreter) on arbitrary ELF files, as the loader calls it for an object
 * without .sframe. A table it returns must pass flat_check_table() like an SFrame
 * one, and its statistics must describe that table.
 */
#include "tables/cfi.h"
#include "flat_check.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flat_table *t = NULL;
	struct cfi_stats st;
	int fd = fuzz_memfd(data, size), ret;

	if (fd < 0)
		return 0;
	ret = cfi__flatten_fd(fd, &t, &st);
	if (ret) {
		FUZZ_CHECK(t == NULL, "failed (%d) but returned a table", ret);
		FUZZ_CHECK(ret == -ENOENT || ret == -EINVAL || ret == -ENOTSUP || ret == -E2BIG ||
				   ret == -ENOMEM,
			   "undocumented error %d", ret);
		return 0;
	}
	FUZZ_CHECK(st.rows == t->nr_rows && st.rules == t->nr_rules,
		   "stats say %u rows %u rules, table has %u %u", st.rows, st.rules, t->nr_rows,
		   t->nr_rules);
	flat_check_table(t, 2048);
	flat_table__free(t);
	return 0;
}
