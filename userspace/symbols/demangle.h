/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Symbol demangling, in the form perf shows by default: C++ (Itanium ABI) and
 * Rust names without parameter lists or clone suffixes, e.g.
 * "_ZNK5outer3BoxIlEplERKS1_" -> "outer::Box<long>::operator+" (what
 * `c++filt -p` prints; perf's demangler runs libiberty with no options too).
 *
 * Built on libiberty's cplus_demangle() rather than libstdc++'s
 * __cxa_demangle(): the latter always prints parameters, and stripping them
 * from its output would mean parsing C++ declarators (function-pointer
 * returns, lambdas, templates) a second time.
 */
#ifndef SFBPF_DEMANGLE_H
#define SFBPF_DEMANGLE_H

#include <stdbool.h>

/* Cheap test: could name be mangled (C++ "_Z...", Rust v0 "_R...")? */
bool demangle__maybe(const char *name);

/* The demangled name (malloc'd, caller frees), or NULL if name is not mangled. */
char *demangle(const char *name);

#endif /* SFBPF_DEMANGLE_H */
