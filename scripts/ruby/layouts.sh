#!/usr/bin/env bash
# Writes userspace/interp/ruby_layouts.h: one row per Ruby given, built from
# scripts/ruby/layout.c against that exact version's headers. To 3.2 the
# -dev package ships them all, preprocessed with the build's configuration,
# for MJIT (rb_mjit_min_header-VERSION.h); from 3.3 the VM's headers are the
# source package's (apt-get source, into /var/cache/sfbpf/ruby-src, with an
# apt of its own: scripts/lib.sh's private_apt), beside the -dev package's
# config.h. ROOT:RUBY runs inside ROOT, which has gcc (scripts/container-root.sh
# with SFBPF_CONTAINER_RUBY=1).
# Usage: scripts/ruby/layouts.sh [--check] [ROOT:]RUBY...
#   e.g. scripts/ruby/layouts.sh ruby3.1 /var/cache/sfbpf/ruby-trixie:ruby3.3
#   --check  write nothing: fail if the rows these headers give are not in
#            the file (tests/rbprofile.test)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
OUT=$ROOT/userspace/interp/ruby_layouts.h
SRC=${SFBPF_RUBY_SRC:-/var/cache/sfbpf/ruby-src}
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
[ $# -gt 0 ] || {
	echo "usage: $0 [--check] [ROOT:]RUBY..." >&2
	exit 2
}
log() { echo "ruby/layouts: $*" >&2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows
: >"$rows"

# source_of VERSION: the source tree of that Ruby, fetched once.
source_of() {
	local v=$1 series dir
	series=${v%.*}
	dir=$SRC/ruby-$v
	if [ ! -f "$dir/.complete" ]; then
		mkdir -p "$SRC/dl"
		private_apt "$SRC/apt" deb-src bookworm trixie sid || exit 1
		# The orig tarball is all that is used: apt checks it against the signed
		# index as it fetches it (a mirror without the .dsc fails the rest).
		(cd "$SRC/dl" && apt-get "${PRIVATE_APT[@]}" source --download-only "ruby$series" \
			>"$SRC/dl/ruby$series.log" 2>&1) || true
		[ -f "$SRC/dl/ruby${series}_$v.orig.tar.xz" ] || {
			log "no source of Ruby $v from Debian's ruby$series (log: $SRC/dl/ruby$series.log)"
			exit 1
		}
		rm -rf "$dir"
		mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xJf "$SRC/dl/ruby${series}_$v.orig.tar.xz"
		touch "$dir/.complete"
	fi
	echo "$dir"
}

# What a Ruby says of itself: its version, its headers' directory.
ASK='print RUBY_VERSION, " ", RbConfig::CONFIG["rubyarchhdrdir"], " ", RbConfig::CONFIG["host_cpu"], "\n"'

for arg in "$@"; do
	croot='' rb=$arg
	if [ "${arg#*:}" != "$arg" ]; then
		croot=${arg%%:*} rb=${arg#*:}
	fi
	read -r ver archhdr cpu < <(${croot:+chroot "$croot"} "$rb" -e "$ASK")
	in=$(mktemp -d "${croot:-}/tmp/sfbpf-rblayout.XXXXXX")
	cp "$ROOT/scripts/ruby/layout.c" "$in/"
	defs=(-DRUBY_VERSION_S="\"$ver\"" -DRUBY_ARCH_S="\"$cpu\"")
	if [ -f "${croot:-}$archhdr/rb_mjit_min_header-$ver.h" ]; then
		flags=(-DSFBPF_RUBY_MIN_HEADER="\"$archhdr/rb_mjit_min_header-$ver.h\"")
	else
		src=$(source_of "$ver")
		cp -a "$src" "$in/src"
		flags=(-I"${in#"${croot:-}"}/src" -I"${in#"${croot:-}"}/src/include" -I"$archhdr")
	fi
	# -O2: the headers' inline functions unused are not emitted (no libruby to link).
	# shellcheck disable=SC2016 # expanded by the inner sh
	${croot:+chroot "$croot"} sh -c 'cc -O2 "$@" -o "$0/layout" "$0/layout.c" && "$0/layout"' \
		"${in#"${croot:-}"}" "${defs[@]}" "${flags[@]}" >>"$rows" || {
		rm -rf "$in"
		exit 1
	}
	rm -rf "$in"
done
layout_rows "$check" "$rows" "$OUT" ruby_layout <<'HDR'
/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Written by scripts/ruby/layouts.sh from the headers of each Ruby below
 * (its -dev package's MJIT header to 3.2, its source package's VM headers
 * from 3.3), compiled into scripts/ruby/layout.c: the layout the walk
 * reads, by the version the library says it is. Do not edit;
 * tests/rbprofile.test checks the rows against the headers installed.
 */
HDR
