// SPDX-License-Identifier: GPL-2.0-or-later
/* A library app.c loads with dlopen (tests/symbolize_debug.test). */
__attribute__((noinline)) int sfbpf_lib_func(int x)
{
	for (int i = 0; i < 4; i++)
		x = x * 13 + i;
	return x;
}
