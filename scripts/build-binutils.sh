#!/usr/bin/env bash
# Builds the binutils versions the conformance tests compare against: gas 2.44
# (emits SFrame V2) and gas 2.47 (emits V3), plus 2.47 gas for AArch64 and s390x
# so binutils' own cfi-sframe tests can be assembled for those ABIs.
#
# Sources come from Debian's source packages (apt-get source). Everything lives
# in a cache outside the repository so it is built once per machine:
#   $SFBPF_BINUTILS_CACHE (default /var/cache/sfbpf/binutils)
#     src/binutils-VER/       unpacked source (also read by the tests for the corpus)
#     VER/bin/{as,ld,readelf} native x86-64 tools
#     VER-TARGET/bin/as       cross assemblers (2.47 only)
# Usage: scripts/build-binutils.sh [--native|--cross] [VER...]  (default: 2.44 2.47)
#   --native  the x86-64 tools only (what most tests need: tests/run.sh's
#             "binutils" builder); --cross  the cross assemblers only
#             (binutils' own corpus: its "binutils-cross" builder).
set -euo pipefail

CACHE=${SFBPF_BINUTILS_CACHE:-/var/cache/sfbpf/binutils}
declare -A DEBVER=([2.44]=2.44-3 [2.47]=2.47-6)
CROSS_TARGETS=(aarch64-linux-gnu s390x-linux-gnu)
JOBS=$(nproc)
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
		[ "$what" = cross ] || build_one "$v" "$CACHE/$v"
		if [ "$v" = 2.47 ] && [ "$what" != native ]; then
			for t in "${CROSS_TARGETS[@]}"; do
				build_one "$v" "$CACHE/$v-$t" "$t"
			done
		fi
	done
}

main "$@"
