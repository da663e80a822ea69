// SPDX-License-Identifier: GPL-2.0-or-later
/* Growing arrays: see vec.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

int vec__reserve(void *arr, size_t *cap, size_t need, size_t elem_size, size_t min_cap)
{
	void **p = arr, *q;
	size_t n;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : (min_cap ? min_cap : 1);
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (elem_size && n > SIZE_MAX / elem_size)
		return -ENOMEM;
	q = realloc(*p, n * elem_size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}
