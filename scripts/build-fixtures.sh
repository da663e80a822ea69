#!/usr/bin/env bash
# Builds the fixture programs (tests/fixtures/*.c) once per toolchain, so the
# conformance and unwinder tests have real binaries carrying each SFrame version:
#   v1    system gcc + binutils 2.40       SFrame V1, read by the system readelf
#   v2    gcc -B$CACHE/2.44/bin/ (gas/ld)  SFrame V2, read by readelf 2.47
#   v3    gcc -B$CACHE/2.47/bin/ (gas/ld)  SFrame V3, read by readelf 2.47
#   none  system gcc without --gsframe     no SFrame at all (negative tests)
# Layout: OUTDIR/TC/NAME.pie, OUTDIR/TC/NAME.nopie, OUTDIR/TC/libfixture.so (the
# executables find it through an $ORIGIN rpath), and OUTDIR/TC/toolchain.env
# (READELF=..., SFRAME_VERSION=...), written once the toolchain's outputs are
# built and verified. A toolchain whose binutils are not built is skipped with a
# message and gets no toolchain.env. Up-to-date outputs are not rebuilt.
#
# Fixture sources may carry "/* ldlibs: ... */" (extra link arguments). Every
# lib*.c becomes a shared library that is built before the executables.
#
# Usage: scripts/build-fixtures.sh OUTDIR [TOOLCHAIN...]   (default: v1 v2 v3 none)

# Commas inside compiler options and the literal '$ORIGIN' are intended.
# shellcheck disable=SC2054,SC2016
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
SRC=$ROOT/tests/fixtures
CACHE=${SFBPF_BINUTILS_CACHE:-/var/cache/sfbpf/binutils}
CC=${FIXTURE_CC:-gcc}
CFLAGS=(-O2 -fomit-frame-pointer -Wall -Wextra -Werror)
SYS_READELF=$(command -v readelf)
SYS_AS=$(command -v as)
SELF=$ROOT/scripts/build-fixtures.sh

log() { echo "build-fixtures: $*" >&2; }


# verify FILE: the SFrame version and PT_GNU_SFRAME match the toolchain.
verify() {
	local file=$1 got
	if [ "$WANT_VERSION" = 0 ]; then
		if "$SYS_READELF" -SW "$file" | grep '\.sframe' >/dev/null ||
			"$SYS_READELF" -lW "$file" | grep GNU_SFRAME >/dev/null; then
			log "$file: has SFrame data but was built without --gsframe"
			return 1
		fi
		return 0
	fi
	got=$("$VERIFY_READELF" --sframe "$file" 2>&1 |
		sed -n 's/^ *Version: SFRAME_VERSION_\([0-9]*\).*/\1/p' | sort -u | tr '\n' ' ')
	if [ "$got" != "$WANT_VERSION " ]; then
		log "$file: SFrame version(s) '${got% }', expected $WANT_VERSION"
		return 1
	fi
	if ! "$VERIFY_READELF" -lW "$file" | grep '^ *GNU_SFRAME ' >/dev/null; then
		log "$file: no PT_GNU_SFRAME program header"
		return 1
	fi
}


# setup_toolchain TC: sets TC_FLAGS, READELF (for the tests), VERIFY_READELF,
# WANT_VERSION (0: no SFrame) and STAMP (outputs older than it are rebuilt), or
# returns 1 when the binutils it needs are not built.
setup_toolchain() {
	local prefix=
	case $1 in
	v1)
		READELF=$SYS_READELF VERIFY_READELF=$SYS_READELF
		WANT_VERSION=1 TC_FLAGS=(-Wa,--gsframe)
		STAMP=$SYS_AS
		;;
	v2 | v3)
		[ "$1" = v2 ] && prefix=$CACHE/2.44 || prefix=$CACHE/2.47
		if [ ! -f "$prefix/.built" ]; then
			log "skipping $1: $prefix not built (scripts/build-binutils.sh)"
			return 1
		fi
		# Verified with the toolchain's own readelf; toolchain.env names
		# 2.47's, whose layout sfbpf-dump follows for V2 and V3.
		VERIFY_READELF=$prefix/bin/readelf READELF=$CACHE/2.47/bin/readelf
		STAMP=$prefix/.built WANT_VERSION=${1#v} TC_FLAGS=(-B"$prefix/bin/" -Wa,--gsframe)
		;;
	none)
		READELF=$SYS_READELF VERIFY_READELF=$SYS_READELF
		WANT_VERSION=0 TC_FLAGS=() STAMP=$SYS_AS
		;;
	*)
		log "unknown toolchain $1"
		exit 2
		;;
	esac
}

build_toolchain() {
	local tc=$1 out=$OUTDIR/$1 src name lib ldlibs
	if ! setup_toolchain "$tc"; then
		rm -f "$out/toolchain.env"
		return 0
	fi
	mkdir -p "$out"
	local common=("$SELF" "$SRC/fixture.h" "$STAMP")

	for src in "$SRC"/lib*.c; do
		[ "$tc" = none ] && break
		name=$(basename "$src" .c)
		DEPS=("$src" "${common[@]}")
		build "$out/$name.so" "$CC" "${CFLAGS[@]}" "${TC_FLAGS[@]}" -fPIC -shared \
			"$src" -o "$out/$name.so" || return 1
	done
	for src in "$SRC"/*.c; do
		name=$(basename "$src" .c)
		[[ $name == lib* ]] && continue
		# "none" only needs one binary for the no-SFrame checks.
		[ "$tc" = none ] && [ "$name" != chain ] && continue
		read -ra ldlibs <<<"$(sed -n 's|^/\* ldlibs: \(.*\) \*/$|\1|p' "$src")"
		DEPS=("$src" "${common[@]}")
		mapfile -t -O ${#DEPS[@]} DEPS < <(included_sources "$src")
		for lib in "${ldlibs[@]}"; do
			[[ $lib == -l* ]] && [ -f "$out/lib${lib#-l}.so" ] && DEPS+=("$out/lib${lib#-l}.so")
		done
		build "$out/$name.pie" "$CC" "${CFLAGS[@]}" "${TC_FLAGS[@]}" -fPIE -pie \
			"$src" -o "$out/$name.pie" -L"$out" -Wl,-rpath,'$ORIGIN' "${ldlibs[@]}" || return 1
		build "$out/$name.nopie" "$CC" "${CFLAGS[@]}" "${TC_FLAGS[@]}" -fno-PIE -no-pie \
			"$src" -o "$out/$name.nopie" -L"$out" -Wl,-rpath,'$ORIGIN' "${ldlibs[@]}" || return 1
	done
	# Replaced whole, never removed first: a test in the other lane of
	# tests/run.sh may be reading it while this run finds all up to date.
	printf 'READELF=%s\nSFRAME_VERSION=%s\n' "$READELF" "$WANT_VERSION" >"$out/toolchain.env.new"
	mv -f "$out/toolchain.env.new" "$out/toolchain.env"
}

main() {
	[ $# -ge 1 ] || {
		echo "usage: $0 OUTDIR [v1|v2|v3|none...]" >&2
		exit 2
	}
	OUTDIR=$1
	shift
	local tcs=("$@") tc
	[ ${#tcs[@]} -gt 0 ] || tcs=(v1 v2 v3 none)
	# One builder at a time: tests/run.sh runs two lanes of tests, and
	# each test asks for the fixtures; the second waits, then finds them
	# up to date.
	mkdir -p "$OUTDIR"
	exec 9>"$OUTDIR/.lock"
	flock 9
	for tc in "${tcs[@]}"; do
		build_toolchain "$tc" || {
			# No toolchain.env: what failed is not said to be built.
			rm -f "$OUTDIR/$tc/toolchain.env"
			log "toolchain $tc failed"
			exit 1
		}
	done
}

main "$@"
