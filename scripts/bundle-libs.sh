#!/usr/bin/env bash
# The shared libraries a cross-built program needs, carried beside it.
#
#   scripts/bundle-libs.sh LIBDIR PROGRAM...
#       copies every library PROGRAMs need (their DT_NEEDED closure, resolved
#       where the cross compiler links from) into LIBDIR, except the C
#       library's own (those of the package that ships the libc.so.6 found),
#       which every Debian root has. The Makefile links cross-built programs
#       with RPATH $ORIGIN/lib (DT_RPATH, not RUNPATH: it also serves the
#       libraries' own dependencies), so a root of any suite runs them with
#       its C library alone. Used for make ARCH=arm64 (docs/ARM64.md): trixie
#       has no libcapstone.so.4, the soname bookworm's libraries give.
#   scripts/bundle-libs.sh --check LIBDIR PROGRAM...
#       proves it: each program has that RPATH, and its dynamic loader, run
#       under qemu-user with only the cross C library as its root, lists
#       every library either from LIBDIR or as the C library's own; a library
#       found anywhere else (the build machine's multiarch directories) or
#       not at all fails. Exit 0 when all hold, 1 with one line per fault.
# CC (default aarch64-linux-gnu-gcc) is the compiler the programs were linked with.
set -euo pipefail

check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
[ $# -ge 2 ] || {
	echo "usage: $0 [--check] LIBDIR PROGRAM..." >&2
	exit 2
}
libdir=$1
shift
CC=${CC:-aarch64-linux-gnu-gcc}
READELF=${READELF:-readelf}

# Where the compiler's link took a soname from ("" when it finds none).
resolve() {
	local p
	p=$("$CC" -print-file-name="$1")
	[ "$p" != "$1" ] && [ -e "$p" ] && realpath "$p"
}
needed() {
	"$READELF" -dW "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

libc=$(resolve libc.so.6) || true
[ -n "$libc" ] || {
	echo "bundle-libs: $CC finds no libc.so.6" >&2
	exit 1
}
# The C library's sonames: the files of the package that ships libc.so.6
# (libc6-arm64-cross, or libc6:arm64 under multiarch).
libc_pkg=$(dpkg -S "$libc" 2>/dev/null | head -1 | sed 's/: .*//') || true
[ -n "$libc_pkg" ] || {
	echo "bundle-libs: no package owns $libc" >&2
	exit 1
}
declare -A own=()
while read -r f; do
	own[$(basename "$f")]=1
done < <(dpkg -L "$libc_pkg" | grep -E '/[^/]+\.so(\.[0-9]+)*$')
own[libc.so.6]=1

if [ "$check" = 0 ]; then
	declare -A seen=()
	todo=("$@")
	mkdir -p "$libdir"
	rm -f "$libdir"/*.so*
	while [ ${#todo[@]} -gt 0 ]; do
		obj=${todo[0]}
		todo=("${todo[@]:1}")
		for so in $(needed "$obj"); do
			[ -n "${own[$so]:-}" ] || [ -n "${seen[$so]:-}" ] && continue
			seen[$so]=1
			path=$(resolve "$so") || true
			[ -n "$path" ] || {
				echo "bundle-libs: $obj needs $so, which $CC does not find" >&2
				exit 1
			}
			cp "$path" "$libdir/$so"
			todo+=("$libdir/$so")
		done
	done
	echo "bundle-libs: $libdir: ${!seen[*]}"
	exit 0
fi

machine=$("$READELF" -hW "$1" | awk -F: '/Machine:/ { gsub(/ /, "", $2); print tolower($2) }')
qemu=qemu-$machine
command -v "$qemu" >/dev/null || {
	echo "bundle-libs: $qemu is not installed (Debian's qemu-user)" >&2
	exit 1
}
sysroot=$(dirname "$(dirname "$libc")")
faults=0
fault() {
	echo "bundle-libs: $*"
	faults=$((faults + 1))
}
bundled=$(realpath "$libdir")
for prog in "$@"; do
	rpath=$("$READELF" -dW "$prog" | sed -n 's/.*(RPATH).*\[\(.*\)\]$/\1/p')
	[ "$rpath" = '$ORIGIN/lib' ] ||
		fault "$prog: RPATH is '${rpath:-none}', not \$ORIGIN/lib (RUNPATH: $("$READELF" -dW "$prog" | grep -c RUNPATH))"
	[ "$(realpath "$(dirname "$prog")")/lib" = "$bundled" ] ||
		fault "$prog: its \$ORIGIN/lib is not $libdir"
	# The dynamic loader's own list (ldd's LD_TRACE_LOADED_OBJECTS), in the
	# program's architecture; qemu -L makes the cross C library its root.
	out=$("$qemu" -L "$sysroot" -E LD_TRACE_LOADED_OBJECTS=1 "$prog" 2>&1) ||
		fault "$prog: its loader failed: $(tail -1 <<<"$out")"
	n=0
	while read -r so _ path _; do
		[ -n "$so" ] || continue
		case $so in
		linux-vdso* | /*) continue ;;
		esac
		n=$((n + 1))
		if [ "$path" = not ]; then
			fault "$prog: $so not found"
		elif [ -n "${own[$so]:-}" ]; then
			continue
		elif [ "$(dirname "$(realpath "$path")")" != "$bundled" ]; then
			fault "$prog: $so comes from $path, not from $libdir"
		fi
	done <<<"$out"
	[ "$n" -gt 0 ] || fault "$prog: its loader listed no library: $(head -3 <<<"$out" | tr '\n' ' ')"
done
[ "$faults" -eq 0 ] || exit 1
echo "bundle-libs: $*: every library from $libdir or the C library ($libc_pkg)"
