// SPDX-License-Identifier: GPL-2.0-or-later
/* UTF-8 validation: see utf8.h. */
#include "util/utf8.h"

size_t utf8__seq_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* A NUL is not a continuation byte: a truncated sequence stops here. */
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}
