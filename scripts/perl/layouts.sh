#!/usr/bin/env bash
# Writes userspace/interp/perl_layouts.h: one row per Perl given, built from
# scripts/perl/layout.c against that Perl's own headers (the CORE directory
# Debian ships with its interpreter's library), compiled with its $Config
# ccflags: the layout of the build. PERL runs where it is: ROOT:PERL inside
# ROOT, which has gcc (scripts/container-root.sh with SFBPF_CONTAINER_PERL=1).
# Usage: scripts/perl/layouts.sh [--check] [ROOT:]PERL...
#   e.g. scripts/perl/layouts.sh perl /var/cache/sfbpf/perl-trixie:perl
#   --check  write nothing: fail if the rows these headers give are not in
#            the file (tests/plprofile.test)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
OUT=$ROOT/userspace/interp/perl_layouts.h
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
[ $# -gt 0 ] || {
	echo "usage: $0 [--check] [ROOT:]PERL..." >&2
	exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows
: >"$rows"
# What a Perl says of its build: its compiler flags, its headers, its CPU.
# shellcheck disable=SC2016 # Perl's variables
ASK='use Config; print "$Config{ccflags} -I$Config{archlibexp}/CORE\n$Config{archname}\n"'
for arg in "$@"; do
	croot='' pl=$arg
	if [ "${arg#*:}" != "$arg" ]; then
		croot=${arg%%:*} pl=${arg#*:}
	fi
	{
		read -r flags
		read -r archname
	} < <(${croot:+chroot "$croot"} "$pl" -e "$ASK")
	in=$(mktemp -d "${croot:-}/tmp/sfbpf-pllayout.XXXXXX")
	cp "$ROOT/scripts/perl/layout.c" "$in/"
	# shellcheck disable=SC2016,SC2086 # expanded by the inner sh; the flags are words
	${croot:+chroot "$croot"} sh -c 'd=$1 arch=$2 && shift 2 &&
		cc -O2 "$@" -DARCH_S="\"$arch\"" -o "$d/layout" "$d/layout.c" && "$d/layout"' sh \
		"${in#"${croot:-}"}" "${archname%%-*}" $flags >>"$rows" || {
		rm -rf "$in"
		exit 1
	}
	rm -rf "$in"
done
layout_rows "$check" "$rows" "$OUT" perl_layout <<'HDR'
/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Written by scripts/perl/layouts.sh from the headers of each Perl below
 * (its CORE directory, with its $Config ccflags), compiled into
 * scripts/perl/layout.c: the layout the walk reads, by the API version
 * string every XS module is checked against. Do not edit;
 * tests/plprofile.test checks the rows against the headers installed.
 */
HDR
