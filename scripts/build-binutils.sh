#!/usr/bin/env bash
# Builds the binutils versions the conformance tests compare against: gas 2.44
# (emits SFrame V2) and gas 2.47 (emits V3), plus 2.47 gas for AArch64 and s390x
# so binutils' own cfi-sframe tests can be assembled for those ABIs.
#
# The tools are Debian's own builds of those versions where its archive still
# has them: the binary packages of binutils DEBVER and the libraries they
# need, unpacked (no maintainer script run) into deb-VER-*/ and run through
# that root's dynamic loader by small scripts, so a machine of an older
# Debian runs them without building anything (a new machine built five
# binutils trees here, 14 minutes of both CPUs beside the tests). Where the
# archive lacks them, or SFBPF_BINUTILS_FROM=source, they are built from the
# upstream tarball in Debian's source package. The source is fetched either
# way: the tests read binutils' own testsuite from it. Everything lives in a
# cache outside the repository, made once per machine:
#   $SFBPF_BINUTILS_CACHE (default /var/cache/sfbpf/binutils)
#     src/binutils-VER/       unpacked source (also read by the tests for the corpus)
#     VER/bin/{as,ld,readelf,addr2line,...} native x86-64 tools
#     VER-TARGET/bin/TARGET-as (and VER-TARGET/TARGET/bin/as) cross assemblers
#                             (2.47 only); TARGET-ld beside them when Debian's
#     deb-VER-{native,cross}/ Debian's packages, unpacked
# Usage: scripts/build-binutils.sh [--native|--cross] [VER...]  (default: 2.44 2.47)
#   --native  the x86-64 tools only (what most tests need: tests/run.sh's
#             "binutils" builder); --cross  the cross assemblers only
#             (binutils' own corpus: its "binutils-cross" builder).
set -euo pipefail

CACHE=${SFBPF_BINUTILS_CACHE:-/var/cache/sfbpf/binutils}
declare -A DEBVER=([2.44]=2.44-3 [2.47]=2.47-6)
# The suite whose libraries the packages of VER are run with (C library, zstd...).
declare -A DEBSUITE=([2.44]=trixie [2.47]=sid)
CROSS_TARGETS=(aarch64-linux-gnu s390x-linux-gnu)
JOBS=$(nproc)
TRIPLET=$(gcc -dumpmachine)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"

log() { echo "build-binutils: $*" >&2; }

fetch_source() {
	local ver=$1 dir="$CACHE/src/binutils-$1"
	[ -f "$dir/.unpacked" ] && return 0
	source_apt "$CACHE/apt"
	local tmp
	tmp=$(mktemp -d "$CACHE/src/fetch.XXXXXX")
	log "fetching binutils ${DEBVER[$ver]} source"
	(cd "$tmp" && apt-get "${SOURCE_APT[@]}" source -qq "binutils=${DEBVER[$ver]}" >/dev/null)
	# Debian's source package carries the upstream tarball inside it.
	local pkgdir tarball
	pkgdir=$(find "$tmp" -maxdepth 1 -mindepth 1 -type d -name 'binutils-*' | head -1)
	tarball=$(find "$pkgdir" -maxdepth 1 -name 'binutils-*.tar.*' | head -1)
	rm -rf "$dir"
	if [ -n "$tarball" ]; then
		mkdir -p "$dir"
		tar -xf "$tarball" -C "$dir" --strip-components=1
	else
		mv "$pkgdir" "$dir"
	fi
	rm -rf "$tmp"
	touch "$dir/.unpacked"
}

# fetch_debs VER DIR PACKAGE...: the .debs of each binutils PACKAGE at
# DEBVER, from the archive's pool (a version the suite's index has moved past
# stays there while anything is built using it), then every package they
# depend on: from the pool too when binutils builds it (libbinutils,
# libsframe: readelf's SFrame dump is libsframe's), else from
# DEBSUITE's index, with all it depends on. 1 when the pool lacks one.
fetch_debs() {
	local ver=$1 dir=$2 debver=${DEBVER[$1]} arch mirror name file deb got=() deps=() names
	shift 2
	arch=$(dpkg --print-architecture)
	mirror=$(debian_mirror "${SFBPF_SOURCE_MIRROR:-}")
	local queue=("$@")
	while [ ${#queue[@]} -gt 0 ]; do
		name=${queue[0]}
		queue=("${queue[@]:1}")
		printf '%s\n' "${got[@]}" "${deps[@]}" | grep -xF "$name" >/dev/null && continue
		deb=
		for file in "${name}_${debver}_$arch.deb" "${name}_${debver}_all.deb"; do
			if /usr/lib/apt/apt-helper download-file "$mirror/pool/main/b/binutils/$file" \
				"$dir/$file" >/dev/null 2>&1; then
				deb=$dir/$file
				break
			fi
		done
		if [ -z "$deb" ]; then
			# One of binutils' own, by name: its version must be DEBVER.
			case " $* " in *" $name "*)
				log "no $name $debver in $mirror's pool"
				return 1
				;;
			esac
			deps+=("$name")
			continue
		fi
		got+=("$name")
		# Depends: "a (>= 1), b | c, d:any": the first of each alternative.
		mapfile -t names < <(dpkg-deb -f "$deb" Pre-Depends Depends | sed 's/^[A-Za-z-]*: //' |
			tr ',' '\n' | sed -E 's/\|.*//; s/\(.*\)//; s/:any//; s/[[:space:]]//g' | grep .)
		queue+=("${names[@]}")
	done
	[ ${#deps[@]} -eq 0 ] && return 0
	private_apt "$CACHE/apt-${DEBSUITE[$ver]}" deb "${DEBSUITE[$ver]}" || return 1
	# Their closure in the suite, less what came from the pool.
	mapfile -t names < <(apt-get "${PRIVATE_APT[@]}" -s -qq install "${deps[@]}" 2>&1 |
		awk '$1 == "Inst" { print $2 }' | grep -vxF -f <(printf '%s\n' "${got[@]}"))
	[ ${#names[@]} -gt 0 ] || {
		log "cannot resolve ${deps[*]} in ${DEBSUITE[$ver]}"
		return 1
	}
	(cd "$dir" && apt-get "${PRIVATE_APT[@]}" download -qq "${names[@]}" >/dev/null 2>&1) || {
		log "cannot fetch ${names[*]} from ${DEBSUITE[$ver]}"
		return 1
	}
}

# wrap TOOL ROOT PROGRAM: TOOL, a script that runs ROOT's PROGRAM with ROOT's
# dynamic loader and libraries, under TOOL's name (gcc -B finds as and ld by
# name; their messages name themselves by argv[0]).
wrap() {
	local tool=$1 root=$2 prog=$3 interp libs
	interp=$(readelf -lW "$root/$prog" | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
	[ -e "$root$interp" ] || interp=/usr$interp
	[ -e "$root$interp" ] || return 1
	libs=$root/usr/lib/$TRIPLET:$root/lib/$TRIPLET:$root/usr/lib
	mkdir -p "$(dirname "$tool")"
	# shellcheck disable=SC2016 # "$0" and "$@" are the script's own
	printf '#!/bin/sh\n# %s from Debian binutils %s (scripts/build-binutils.sh)\nexec %q --library-path %q --argv0 "$0" %q "$@"\n' \
		"$prog" "$4" "$root$interp" "$libs" "$root/$prog" >"$tool"
	chmod +x "$tool"
}

# from_debs VER WHAT: VER's tools from Debian's packages (WHAT: native or
# cross), laid out as build_one lays out its own; 1 when they cannot be had.
from_debs() {
	local ver=$1 what=$2 root=$CACHE/deb-$1-$2 t p prefix pkgs=() tool want
	[ "${SFBPF_BINUTILS_FROM:-deb}" = source ] && return 1
	if [ "$what" = native ]; then
		pkgs=("binutils-${TRIPLET//_/-}")
		[ -f "$CACHE/$ver/.built" ] && return 0
	else
		for t in "${CROSS_TARGETS[@]}"; do
			[ -f "$CACHE/$ver-$t/.built" ] || pkgs+=("binutils-$t")
		done
		[ ${#pkgs[@]} -gt 0 ] || return 0
	fi
	want=$(printf '%s\n' "${pkgs[@]}" | sort | tr '\n' ' ')
	if [ "$(cat "$root/.unpacked" 2>/dev/null)" != "${DEBVER[$ver]} $want" ]; then
		log "fetching Debian's binutils ${DEBVER[$ver]} packages: ${pkgs[*]}"
		rm -rf "$root" "$root.debs"
		mkdir -p "$root.debs"
		fetch_debs "$ver" "$root.debs" "${pkgs[@]}" || return 1
		for p in "$root.debs"/*.deb; do
			dpkg-deb -x "$p" "$root" || return 1
		done
		rm -rf "$root.debs"
		echo "${DEBVER[$ver]} $want" >"$root/.unpacked"
	fi
	if [ "$what" = native ]; then
		prefix=$CACHE/$ver
		rm -rf "$prefix"
		for p in "$root/usr/bin/$TRIPLET"-*; do
			tool=${p##*/"$TRIPLET"-}
			wrap "$prefix/bin/$tool" "$root" "usr/bin/${p##*/}" "${DEBVER[$ver]}" || return 1
		done
		check_tools "$ver" "$prefix/bin/as" "$prefix/bin/ld" "$prefix/bin/readelf" || return 1
		touch "$prefix/.built"
		return 0
	fi
	for t in "${CROSS_TARGETS[@]}"; do
		prefix=$CACHE/$ver-$t
		[ -f "$prefix/.built" ] && continue
		rm -rf "$prefix"
		for tool in as ld; do
			wrap "$prefix/bin/$t-$tool" "$root" "usr/bin/$t-$tool" "${DEBVER[$ver]}" || return 1
			# The layout of binutils' own install, which some callers use.
			mkdir -p "$prefix/$t/bin"
			ln -s "../../bin/$t-$tool" "$prefix/$t/bin/$tool"
		done
		check_tools "$ver" "$prefix/bin/$t-as" "$prefix/bin/$t-ld" || return 1
		touch "$prefix/.built"
	done
}

# check_tools VER TOOL...: each TOOL runs and says it is VER.
check_tools() {
	local ver=$1 tool out
	shift
	for tool in "$@"; do
		out=$("$tool" --version 2>&1 | head -1)
		case $out in
		*" $ver" | *" $ver."*) ;;
		*)
			log "$tool does not run as binutils $ver: $out"
			return 1
			;;
		esac
	done
}

# build VER PREFIX [TARGET]
build_one() {
	local ver=$1 prefix=$2 target=${3:-}
	local stamp="$prefix/.built"
	[ -f "$stamp" ] && return 0
	local bdir="$CACHE/build/$(basename "$prefix")"
	rm -rf "$bdir" "$prefix"
	mkdir -p "$bdir"
	local conf=(--prefix="$prefix" --disable-gdb --disable-gdbserver --disable-sim
		--disable-gprofng --disable-nls --disable-werror --disable-libctf
		--disable-gold --disable-gprof --disable-shared)
	local targets=(all-gas all-ld all-binutils)
	local installs=(install-gas install-ld install-binutils)
	if [ -n "$target" ]; then
		conf+=(--target="$target")
		targets=(all-gas)
		installs=(install-gas)
	fi
	log "building binutils $ver ${target:-native} (log: $bdir/build.log)"
	# -O1 and no debug info: tools the tests run, never profile nor debug;
	# on a new machine they build beside the tests, sharing their CPUs.
	(cd "$bdir" && CFLAGS="-O1 -g0" CXXFLAGS="-O1 -g0" \
		"$CACHE/src/binutils-$ver/configure" "${conf[@]}" &&
		make -j"$JOBS" MAKEINFO=true "${targets[@]}" &&
		make MAKEINFO=true "${installs[@]}") >"$bdir/build.log" 2>&1 || {
		tail -30 "$bdir/build.log" >&2
		log "FAILED: binutils $ver ${target:-native}"
		return 1
	}
	rm -rf "$bdir"
	touch "$stamp"
}

main() {
	local what=all vers=()
	case ${1:-} in
	--native | --cross) what=${1#--} && shift ;;
	esac
	vers=("$@")
	[ ${#vers[@]} -gt 0 ] || vers=(2.44 2.47)
	mkdir -p "$CACHE/src" "$CACHE/build"
	# One builder at a time: two make checks (or make deps beside one)
	# would remove each other's build directories.
	exec 9>"$CACHE/.lock"
	flock 9
	for v in "${vers[@]}"; do
		[ -n "${DEBVER[$v]:-}" ] || { log "unknown version $v"; exit 2; }
		fetch_source "$v"
		if [ "$what" != cross ] && ! from_debs "$v" native; then
			build_one "$v" "$CACHE/$v"
		fi
		if [ "$v" = 2.47 ] && [ "$what" != native ] && ! from_debs "$v" cross; then
			for t in "${CROSS_TARGETS[@]}"; do
				build_one "$v" "$CACHE/$v-$t" "$t"
			done
		fi
	done
}

main "$@"
