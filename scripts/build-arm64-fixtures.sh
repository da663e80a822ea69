#!/usr/bin/env bash
# Cross-builds the portable fixture programs (tests/fixtures/*.c) for AArch64,
# for tests/arm64/unwind.sh in the arm64 guest (scripts/arm64-vm.sh):
#   v1      aarch64-linux-gnu-gcc + Debian's aarch64 binutils 2.40   SFrame V1
#   v3      the same gcc, gas 2.47 (scripts/build-binutils.sh) and
#           ld 2.47 for aarch64 (built here, once)                  SFrame V3
#   *-pac   the same with -mbranch-protection=pac-ret (return addresses
#           signed: SFrame's RA-signed rows)
# Layout: OUTDIR/TC/NAME.pie (dynamic, libfixture.so through an $ORIGIN rpath),
# OUTDIR/perf-pacmask.so (tests/arm64/perf_pacmask.c, for perf script),
# OUTDIR/TC/NAME.static (-static, libfixture.a), and OUTDIR/TC/toolchain.env
# (SFRAME_VERSION, PAC), written once the toolchain's outputs are built and
# verified with readelf: the SFrame version, PT_GNU_SFRAME, and rows with a
# signed return address exactly in the pac-ret builds. Up-to-date outputs are
# not rebuilt.
#
# Usage: scripts/build-arm64-fixtures.sh OUTDIR [TOOLCHAIN...]
#        (default: v1 v1-pac v3 v3-pac)
# Knob: ARM64_FIXTURES (the fixture names).

# Commas inside compiler options and the literal '$ORIGIN' are intended.
# shellcheck disable=SC2054,SC2016
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
SRC=$ROOT/tests/fixtures
CACHE=${SFBPF_BINUTILS_CACHE:-/var/cache/sfbpf/binutils}
CC=aarch64-linux-gnu-gcc
CFLAGS=(-O2 -fomit-frame-pointer -Wall -Wextra -Werror)
# Not nocfi_fp and ra_zero: their assembly is x86-64's.
FIXTURES=${ARM64_FIXTURES:-chain plt_callback deep_recursion deep1000 threads4 bigframe syscall_loop prologues}
GAS47=$CACHE/2.47-aarch64-linux-gnu/aarch64-linux-gnu/bin/as
LD47=$CACHE/2.47-aarch64-linux-gnu-ld
SELF=$ROOT/scripts/build-arm64-fixtures.sh

log() { echo "build-arm64-fixtures: $*" >&2; }


# build_ld47: ld 2.47 for aarch64: ld 2.40 cannot merge V3 sections ("error
# in .sframe"). Debian's, beside its gas, where scripts/build-binutils.sh
# took the cross tools from Debian's packages; else built here from the
# source it fetched (it builds only the cross gas). Sets LD47.
build_ld47() {
	if [ -x "$CACHE/2.47-aarch64-linux-gnu/bin/aarch64-linux-gnu-ld" ] &&
		[ -f "$CACHE/2.47-aarch64-linux-gnu/.built" ]; then
		LD47=$CACHE/2.47-aarch64-linux-gnu
		return 0
	fi
	[ -f "$LD47/.built" ] && return 0
	local src=$CACHE/src/binutils-2.47 bdir=$CACHE/build/2.47-aarch64-linux-gnu-ld
	[ -f "$src/.unpacked" ] || {
		log "no $src: run scripts/build-binutils.sh 2.47 first"
		return 1
	}
	rm -rf "$bdir" "$LD47"
	mkdir -p "$bdir"
	log "building ld 2.47 for aarch64 (log: $bdir/build.log)"
	(cd "$bdir" && "$src/configure" --prefix="$LD47" --target=aarch64-linux-gnu \
		--disable-gdb --disable-gdbserver --disable-sim --disable-gprofng --disable-nls \
		--disable-werror --disable-libctf --disable-gold --disable-gprof --disable-shared &&
		nice make -j"$(nproc)" MAKEINFO=true all-ld && make MAKEINFO=true install-ld) \
		>"$bdir/build.log" 2>&1 || {
		tail -20 "$bdir/build.log" >&2
		return 1
	}
	rm -rf "$bdir"
	touch "$LD47/.built"
}

# verify FILE: SFrame version, PT_GNU_SFRAME, and signed-RA rows iff pac-ret.
verify() {
	local file=$1 got signed
	got=$("$READELF" --sframe "$file" 2>&1 |
		sed -n 's/^ *Version: SFRAME_VERSION_\([0-9]*\).*/\1/p' | sort -u | tr '\n' ' ')
	if [ "$got" != "$WANT_VERSION " ]; then
		log "$file: SFrame version(s) '${got% }', expected $WANT_VERSION"
		return 1
	fi
	if ! "$READELF" -lW "$file" | grep '^ *GNU_SFRAME ' >/dev/null; then
		log "$file: no PT_GNU_SFRAME program header"
		return 1
	fi
	# readelf marks a row whose return address is signed with "[s]".
	signed=$("$READELF" --sframe "$file" | grep -c '\[s\]' || true)
	if [ "$PAC" = 1 ] && [ "$signed" -eq 0 ]; then
		log "$file: pac-ret build without a signed-RA row"
		return 1
	fi
	if [ "$PAC" = 0 ] && [ "$signed" -ne 0 ]; then
		log "$file: $signed signed-RA rows without pac-ret"
		return 1
	fi
}


setup_toolchain() {
	local tc=$1 tools
	PAC=0 TC_FLAGS=()
	[[ $tc == *-pac ]] && PAC=1 TC_FLAGS=(-mbranch-protection=pac-ret)
	case ${tc%-pac} in
	v1)
		READELF=$(command -v aarch64-linux-gnu-readelf)
		WANT_VERSION=1 STAMP=$(command -v aarch64-linux-gnu-as)
		TC_FLAGS+=(-Wa,--gsframe)
		;;
	v3)
		if [ ! -x "$GAS47" ]; then
			log "skipping $tc: $GAS47 not built (scripts/build-binutils.sh 2.47)"
			return 1
		fi
		build_ld47 || return 1
		# gcc -B takes as and ld from one directory.
		tools=$OUTDIR/.tools-2.47
		mkdir -p "$tools"
		ln -sf "$GAS47" "$tools/as"
		ln -sf "$LD47/bin/aarch64-linux-gnu-ld" "$tools/ld"
		READELF=$CACHE/2.47/bin/readelf
		WANT_VERSION=3 STAMP=$LD47/.built
		TC_FLAGS+=(-B"$tools/" -Wa,--gsframe)
		;;
	*)
		log "unknown toolchain $tc"
		exit 2
		;;
	esac
}

build_toolchain() {
	local tc=$1 out=$OUTDIR/$1 name ldlibs
	setup_toolchain "$tc" || return 0
	mkdir -p "$out"
	local common=("$SELF" "$SRC/fixture.h" "$STAMP")
	DEPS=("$SRC/libfixture.c" "${common[@]}")
	build "$out/libfixture.so" "$CC" "${CFLAGS[@]}" "${TC_FLAGS[@]}" -fPIC -shared \
		"$SRC/libfixture.c" -o "$out/libfixture.so" || return 1
	if ! up_to_date "$out/libfixture.a" "${DEPS[@]}"; then
		"$CC" "${CFLAGS[@]}" "${TC_FLAGS[@]}" -c "$SRC/libfixture.c" -o "$out/libfixture.o" &&
			rm -f "$out/libfixture.a" && aarch64-linux-gnu-ar rcs "$out/libfixture.a" "$out/libfixture.o" ||
			return 1
	fi
	for name in $FIXTURES; do
		read -ra ldlibs <<<"$(sed -n 's|^/\* ldlibs: \(.*\) \*/$|\1|p' "$SRC/$name.c")"
		DEPS=("$SRC/$name.c" "${common[@]}" "$out/libfixture.so")
		mapfile -t -O ${#DEPS[@]} DEPS < <(included_sources "$SRC/$name.c")
		build "$out/$name.pie" "$CC" "${CFLAGS[@]}" "${TC_FLAGS[@]}" -fPIE -pie "$SRC/$name.c" \
			-o "$out/$name.pie" -L"$out" -Wl,-rpath,'$ORIGIN' "${ldlibs[@]}" || return 1
		# gcc leaves .eh_frame_hdr out of static links; perf's libunwind
		# finds no CFI without it (SFrame is not affected).
		build "$out/$name.static" "$CC" "${CFLAGS[@]}" "${TC_FLAGS[@]}" -static \
			-Wl,--eh-frame-hdr "$SRC/$name.c" -o "$out/$name.static" -L"$out" "${ldlibs[@]}" ||
			return 1
	done
	printf 'SFRAME_VERSION=%s\nPAC=%s\n' "$WANT_VERSION" "$PAC" >"$out/toolchain.env"
}

main() {
	[ $# -ge 1 ] || {
		echo "usage: $0 OUTDIR [v1|v1-pac|v3|v3-pac...]" >&2
		exit 2
	}
	OUTDIR=$1
	shift
	local tcs=("$@") tc
	[ ${#tcs[@]} -gt 0 ] || tcs=(v1 v1-pac v3 v3-pac)
	command -v "$CC" >/dev/null || {
		log "$CC not installed (scripts/arm64-vm.sh setup installs gcc-aarch64-linux-gnu)"
		exit 1
	}
	# perf script's PAC mask (tests/arm64/perf_pacmask.c), for the guest.
	mkdir -p "$OUTDIR"
	if ! up_to_date "$OUTDIR/perf-pacmask.so" "$ROOT/tests/arm64/perf_pacmask.c" "$SELF"; then
		"$CC" "${CFLAGS[@]}" -fPIC -shared "$ROOT/tests/arm64/perf_pacmask.c" \
			-o "$OUTDIR/perf-pacmask.so" || exit 1
	fi
	for tc in "${tcs[@]}"; do
		rm -f "$OUTDIR/$tc/toolchain.env"
		build_toolchain "$tc" || {
			log "toolchain $tc failed"
			exit 1
		}
	done
}

main "$@"
