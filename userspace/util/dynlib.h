/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A library loaded when a feature first needs it, not at every start.
 * libcurl (with its TLS, Kerberos, LDAP and PKCS#11 libraries, whose
 * constructors run at load) and libdebuginfod (a second libcurl) serve only
 * --push, --otlp and --debuginfod: linked, they cost every sfbpf-top ~4 MB
 * of RSS and their start-up work. The caller lists the functions it calls
 * and calls them through the pointers filled in here, typed from the
 * library's own header (__typeof__), so the compiler still checks each call.
 * A loaded library stays loaded.
 */
#ifndef SFBPF_UTIL_DYNLIB_H
#define SFBPF_UTIL_DYNLIB_H

#include <stddef.h>

struct dynlib_fn {
	const char *name;
	void **fn; /* where its address goes */
};

/*
 * Load soname and find every function of fns[0..n): 0, or -ENOENT after
 * saying which library or function is missing (what then needs it is the
 * caller's to say). Thread-safe; once loaded, a call for the same soname
 * returns 0 and leaves the pointers alone (a library has one caller, with
 * one table of functions).
 */
int dynlib__load(const char *soname, const struct dynlib_fn *fns, size_t n);

#endif /* SFBPF_UTIL_DYNLIB_H */
