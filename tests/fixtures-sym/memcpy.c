// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Spends its time in libc's string functions, whose implementations
 * (__memmove_avx_unaligned_erms...) are local symbols only libc's debug file
 * names (tests/symbolize_debug.test).
 */
#include <string.h>

static char a[1 << 20], b[1 << 20];

int main(void)
{
	for (;;) {
		memcpy(a, b, sizeof(a));
		memset(b, a[7] + 1, sizeof(b));
		memmove(a + 1, a, sizeof(a) - 1);
	}
}
