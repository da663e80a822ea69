/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Perl in a process (issue #46, docs/DESIGN-perl.md): the object that runs
 * it (perl, linked statically as Debian's is, or a libperl a host program
 * maps), found by the PL_curinterp it exports; its layout from the headers
 * of the API version it carries (the "v5.36.0" every XS module is checked
 * against: perl_layouts.h, written by scripts/perl/layouts.sh); the native
 * code of its ops loop (Perl_runops_standard); the BPF walk's settings; a
 * frame's names and line, read from the process while it lives.
 *
 * Checked before it is believed: the main interpreter's stack of contexts
 * (its top inside its allocation, its contexts where it says); a frame's
 * CV by its type and its stamp, its name by the glob or the name it holds.
 * A version with no known layout is -ENOTSUP; an interpreter whose
 * structures disagree, -EPROTO.
 */
#ifndef SFBPF_INTERP_PERL_H
#define SFBPF_INTERP_PERL_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/abi.h"
#include "interp/codeparts.h"

/* One Perl's layout (perl_layouts.h): offsets in bytes, values as its headers define them. */
struct perl_layout {
	const char *api; /* "v5.36.0" */
	const char *arch; /* "x86_64", "aarch64" */
	struct {
		uint16_t curcop, curstackinfo;
		uint16_t phase; /* PL_phase: an enum perl_phase */
		uint8_t phase_run; /* PERL_PHASE_RUN: the program's own code running */
	} interp;
	struct {
		uint16_t cxstack, prev, cxix, cxmax;
	} si;
	struct {
		uint16_t size, type, oldcop, retop, cv, u16;
	} cx;
	struct {
		/* evalblock: CXp_EVALBLOCK, an eval {} (or call_sv()'s G_EVAL: no ops loop of its
		 * own) */
		uint8_t mask, sub, format, eval, multicall, evalblock, old_op_shift;
		uint16_t op_require;
	} cxt;
	struct {
		uint16_t line, file, seq;
	} cop;
	struct {
		uint16_t any, flags, u;
		uint32_t type_mask, pvcv, pvgv, pvhv, ook;
	} sv;
	struct {
		uint16_t stash, gv, file, flags;
		uint32_t named;
		uint16_t start; /* CvSTART: its first op */
	} xcv;
	struct {
		uint16_t type; /* the byte op_type's bits start in */
		uint16_t type_shift, type_mask, nextstate, dbstate;
	} op;
	struct {
		uint16_t namehek, stash;
	} xgv;
	struct {
		uint16_t name, name_count;
	} xhv;
	struct {
		uint16_t len, key;
	} hek;
};

#define PERL_EVAL_PARTS 8
#define PERL_NAME_BYTES 256
#define PERL_FILE_BYTES 512

struct perl;

/*
 * A frame as Perl's users know it: Package::sub (an anonymous one
 * Package::__ANON__), "(eval)", "(require)", or the program's own code
 * "main::RUNTIME" (as Devel::NYTProf says it); the file and line of the
 * statement it is at.
 */
struct perl_frame {
	char name[PERL_NAME_BYTES];
	char file[PERL_FILE_BYTES];
	uint32_t line;
};

/*
 * The Perl that pid runs: 0 and *out, or -ENOENT (none), -EAGAIN (its
 * interpreter not there yet), -ENOTSUP (a version with no known layout),
 * -EPROTO (its structures disagree with its version's layout), or a read
 * error.
 */
int perl__attach(int pid, struct perl **out);
void perl__free(struct perl *p);
/* Object files read, and found in the cache, for every attach (objfacts.h). */
void perl__object_stats(uint64_t *reads, uint64_t *hits);
/* "v5.36.0" */
const char *perl__version(const struct perl *p);
int perl__bpf_settings(const struct perl *p, struct sfbpf_pl_proc *cfg);
/* The native code of the ops loop: its parts, process addresses. */
size_t perl__eval_parts(const struct perl *p, const struct code_part **parts);
/*
 * The frame of CV cv (0: an eval's, a require's, the program's) and slot
 * word (its COP, stamp and kind, as the walk sent them): 0, or -ESTALE (no
 * CV there now, or another one: freed), or a read error.
 */
int perl__frame(const struct perl *p, uint64_t cv, uint64_t word, struct perl_frame *out);

#endif /* SFBPF_INTERP_PERL_H */
