#!/usr/bin/env bash
# make release: sfbpf-top and sfbpf-dump for a fleet of any distribution.
#
# Usage: scripts/release.sh [ARCH...]        (x86 arm64; default: both)
#        scripts/release.sh --check PROGRAM... (the checks alone, on built programs)
#
# Each program is built in a Debian 11 (bullseye) root, so that it needs no C
# library symbol newer than glibc 2.31 (Debian 11, Ubuntu 20.04 and later,
# RHEL 9, Amazon Linux 2023), with every other library linked in from the
# root's static archives: elfutils, zlib, xz, bzip2, zstd, ncurses, nettle,
# capstone, protobuf-c, libiberty, and libbpf built there from bookworm's
# source package (the libbpf the suite runs against; bullseye's 0.3 predates
# the API sfbpf uses). libcurl and libdebuginfod stay loaded on use
# (util/dynlib.h). The BPF objects and their skeletons are built here, where
# clang and bpftool are; the root only compiles C.
#
# Out: build-release/ARCH/sfbpf-top and sfbpf-dump, stripped, each with its
# debug information beside it (NAME.debug, found through .gnu_debuglink).
# --check proves what a fleet needs of each: only the C library's own
# libraries as DT_NEEDED, no symbol version past GLIBC_2.31, and --version
# naming the commit. Exit 0 when all hold, 1 with one line per fault.
#
# The roots are kept under /var/cache/sfbpf/release/ (rebuilt when the recipe
# below changes: its stamp is the root's marker). Knobs: SFBPF_RELEASE_MIRROR
# (a Debian mirror URL), SFBPF_RELEASE_CACHE.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
cd "$ROOT"

CACHE=${SFBPF_RELEASE_CACHE:-/var/cache/sfbpf/release}
OUT=$ROOT/build-release
SUITE=bullseye
GLIBC_MAX=2.31
LIBBPF_SRC=libbpf/bookworm
# The libraries a release binary may need: the C library's own.
LIBC_SONAMES=" libc.so.6 libdl.so.2 libpthread.so.0 libm.so.6 librt.so.1 ld-linux-x86-64.so.2 "
LIBC_SONAMES+="ld-linux-aarch64.so.1 "

die() {
	echo "release: $*" >&2
	exit 1
}

# check PROGRAM...: the faults of each built program, one line each.
check() {
	local p bad=0 need ver v
	for p in "$@"; do
		[ -x "$p" ] || {
			echo "release: $p: not built"
			bad=1
			continue
		}
		for need in $(readelf -dW "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			case $LIBC_SONAMES in
			*" $need "*) ;;
			*)
				echo "release: $p needs $need, not the C library's"
				bad=1
				;;
			esac
		done
		ver=$(readelf -VW "$p" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
		if [ -z "$ver" ]; then
			echo "release: $p: no GLIBC symbol versions (not linked against glibc?)"
			bad=1
		elif [ "$(printf '%s\n%s\n' "$ver" "$GLIBC_MAX" | sort -V | tail -1)" != "$GLIBC_MAX" ]; then
			for v in $(readelf -VW "$p" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV); do
				[ "$(printf '%s\n%s\n' "$v" "$GLIBC_MAX" | sort -V | tail -1)" = "$GLIBC_MAX" ] ||
					echo "release: $p needs GLIBC_$v ($(objdump -T "$p" | awk -v v="GLIBC_$v" '$0 ~ v { print $NF }' | head -3 | xargs))"
			done
			bad=1
		fi
	done
	return $bad
}

if [ "${1:-}" = --check ]; then
	shift
	[ $# -gt 0 ] || die "--check needs programs"
	check "$@"
	exit
fi

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap and chroot build the Debian 11 root)"
command -v debootstrap >/dev/null || die "debootstrap not installed (scripts/deps.sh test)"
ARCHES=("$@")
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(x86 arm64)

# The root for ARCH: a native one for x86, a cross compiler and arm64's
# archives (multiarch) for arm64. Its marker holds the recipe.
# shellcheck disable=SC2086,SC2046 # word lists
packages() {
	local a=$1 dev
	dev="libelf-dev libdw-dev zlib1g-dev liblzma-dev libbz2-dev libzstd-dev libncurses-dev
		nettle-dev libcapstone-dev libprotobuf-c-dev libiberty-dev libcurl4-openssl-dev
		libdebuginfod-dev ca-certificates"
	if [ "$a" = x86 ]; then
		echo build-essential pkg-config dpkg-dev protobuf-c-compiler $dev
	else
		echo build-essential pkg-config dpkg-dev protobuf-c-compiler crossbuild-essential-arm64 \
			$(for d in $dev; do printf '%s:arm64 ' "$d"; done)
	fi
}
triplet() { [ "$1" = x86 ] && echo x86_64-linux-gnu || echo aarch64-linux-gnu; }

make_root() {
	local a=$1 dir=$CACHE/$SUITE-$1 stamp mirror log
	stamp="suite=$SUITE libbpf=$LIBBPF_SRC packages=$(packages "$a" | xargs)"
	if [ -f "$dir/.sfbpf-complete" ] && [ "$(cat "$dir/.sfbpf-complete")" = "$stamp" ]; then
		echo "$dir"
		return
	fi
	mkdir -p "$CACHE"
	exec 9>"$dir.lock"
	flock 9
	if [ -f "$dir/.sfbpf-complete" ] && [ "$(cat "$dir/.sfbpf-complete")" = "$stamp" ]; then
		echo "$dir"
		return
	fi
	if [ -e "$dir" ]; then
		grep -q " $dir/" /proc/self/mounts && die "$dir has mounts under it; unmount them first"
		echo "release: removing $dir (partial, or of another recipe)" >&2
		rm -rf --one-file-system "$dir"
	fi
	mirror=$(debian_mirror "${SFBPF_RELEASE_MIRROR:-}")
	log=$dir.log
	: >"$log"
	echo "release: building the $SUITE root for $a in $dir (log: $log)" >&2
	debootstrap --variant=minbase --include=build-essential,dpkg-dev "$SUITE" "$dir" "$mirror" \
		>>"$log" 2>&1 || die "debootstrap failed (log: $log)"
	# The root's own apt sources (never the host's): its suite, and
	# bookworm's sources for libbpf. A mirror kept as of a date may have
	# Release files past their Valid-Until.
	echo "deb $mirror $SUITE main" >"$dir/etc/apt/sources.list"
	echo "deb-src $mirror bookworm main" >"$dir/etc/apt/sources.list.d/bookworm-src.list"
	[ "$a" = x86 ] || chroot "$dir" dpkg --add-architecture arm64
	in_root() { chroot "$dir" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@" >>"$log" 2>&1; }
	in_root apt-get -q -o Acquire::Check-Valid-Until=false update || die "apt-get update failed (log: $log)"
	# shellcheck disable=SC2046
	in_root apt-get -q install -y --no-install-recommends $(packages "$a") ||
		die "installing the build packages failed (log: $log)"
	in_root sh -ec "rm -rf /src/libbpf && mkdir -p /src/libbpf && cd /src/libbpf &&
		apt-get -q -o Acquire::Check-Valid-Until=false source --download-only $LIBBPF_SRC &&
		dpkg-source -x --no-check libbpf_*.dsc tree" || die "fetching $LIBBPF_SRC failed (log: $log)"
	# Static, with libbpf's internals (hashmap__*, strset__*: names sfbpf's
	# own util/ uses too) made local: one relocatable object that exports
	# only libbpf's API.
	in_root sh -ec "cd /src/libbpf/tree/src && mkdir -p obj &&
		make -j$(nproc) CC=$(triplet "$a")-gcc BUILD_STATIC_ONLY=1 EXTRA_CFLAGS=-fvisibility=hidden \
			OBJDIR=obj DESTDIR=/opt/libbpf PREFIX= LIBDIR=/lib install install_uapi_headers &&
		$(triplet "$a")-ld -r -o obj/libbpf_all.o --whole-archive obj/libbpf.a &&
		$(triplet "$a")-objcopy --localize-hidden obj/libbpf_all.o &&
		rm -f /opt/libbpf/lib/libbpf.a && $(triplet "$a")-ar rcs /opt/libbpf/lib/libbpf.a obj/libbpf_all.o" ||
		die "building libbpf failed (log: $log)"
	echo "$stamp" >"$dir/.sfbpf-complete"
	echo "$dir"
}

commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
for a in "${ARCHES[@]}"; do
	case $a in x86 | arm64) ;; *) die "ARCH is x86 or arm64, not $a" ;; esac
	r=$(make_root "$a")
	# The BPF side here (clang, bpftool, this tree's vmlinux headers).
	make --no-print-directory ARCH="$a" BUILD="$OUT/$a/host" skeletons >/dev/null ||
		die "building the BPF skeletons for $a failed"
	# The tree as it stands (tracked and new files, not ignored ones), and
	# the skeletons, newer than their sources so the root's make keeps them.
	# The last build's objects are kept: the sources keep their times, so
	# only what changed since is compiled again.
	src=$r/src/sfbpf
	[ ! -d "$src/build" ] || mv "$src/build" "$r/src/build.keep"
	rm -rf "$src"
	mkdir -p "$src"
	[ ! -d "$r/src/build.keep" ] || mv "$r/src/build.keep" "$src/build"
	mkdir -p "$src/build"
	git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -C "$src" -xf -
	# The skeletons dated just after the newest source, so that the root's
	# make keeps them (it has no clang) and recompiles what includes them
	# only when some source changed.
	cp "$OUT/$a/host/"*.skel.h "$OUT/$a/host/"*.bpf.o "$src/build/"
	newest=$(find "$src" -path "$src/build" -prune -o -type f -printf '%T@\n' | sort -n | tail -1)
	touch -d "@$((${newest%.*} + 1))" "$src/build/"*.bpf.o "$src/build/"*.skel.h
	cross=
	[ "$a" = x86 ] || cross="ARCH=arm64 PROG_LDFLAGS="
	echo "release: building $a at $commit in $r" >&2
	# shellcheck disable=SC2086
	chroot "$r" env LC_ALL=C make --no-print-directory -C /src/sfbpf -j"$(nproc)" RELEASE=1 \
		BUILD=build SFBPF_COMMIT="$commit" CC="$(triplet "$a")-gcc" AR="$(triplet "$a")-ar" \
		$cross build/sfbpf-top build/sfbpf-dump >"$OUT/$a.log" 2>&1 ||
		{
			grep -E 'error|undefined' "$OUT/$a.log" | head -20 >&2
			die "building $a failed (log: $OUT/$a.log)"
		}
	mkdir -p "$OUT/$a"
	objcopy=$(triplet "$a")-objcopy
	command -v "$objcopy" >/dev/null || objcopy=objcopy
	for p in sfbpf-top sfbpf-dump; do
		"$objcopy" --only-keep-debug "$src/build/$p" "$OUT/$a/$p.debug"
		"$objcopy" --strip-debug --strip-unneeded --add-gnu-debuglink="$OUT/$a/$p.debug" \
			"$src/build/$p" "$OUT/$a/$p.tmp"
		mv "$OUT/$a/$p.tmp" "$OUT/$a/$p"
	done
	check "$OUT/$a/sfbpf-top" "$OUT/$a/sfbpf-dump" || die "the $a programs are not fit to ship"
	echo "release: $OUT/$a: sfbpf-top $(du -k "$OUT/$a/sfbpf-top" | cut -f1) KiB," \
		"sfbpf-dump $(du -k "$OUT/$a/sfbpf-dump" | cut -f1) KiB"
done
