#!/usr/bin/env bash
# Builds the real-program workload of the slowdown benchmark: zstd, from
# Debian's source package, with SFrame (-Wa,--gsframe) and frame pointers, so
# that sfbpf (SFrame), perf -g (frame pointers) and perf --call-graph dwarf
# (.eh_frame) all see complete stacks of the same binary.
#
# Built once per machine into a cache outside the repository:
#   $SFBPF_BENCH_CACHE (default /var/cache/sfbpf/bench)
#     src/          the downloaded source package
#     zstd-VER/     unpacked source and build; zstd-VER/programs/zstd
# Prints the path of the binary on stdout. Usage: scripts/bench/build-zstd.sh
# With SFBPF_BENCH_OFFLINE=1 it only looks in the cache (exit 1 if not built).
set -euo pipefail

CACHE=${SFBPF_BENCH_CACHE:-/var/cache/sfbpf/bench}
# The version the published numbers were measured with; any other version
# Debian offers will do if this one is gone.
PKG=libzstd
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
WANT=1.5.7+dfsg-1
FLAGS="-O2 -g -fno-omit-frame-pointer -Wa,--gsframe"

log() { echo "build-zstd: $*" >&2; }

done_bin() {
	local b
	b=$(find "$CACHE" -maxdepth 3 -path '*/zstd-*/programs/zstd' -type f -perm -u+x 2>/dev/null | sort | tail -1)
	[ -n "$b" ] && [ -f "$(dirname "$b")/.sfbpf-built" ] && echo "$b"
}

fetch() {
	local tmp=$1
	source_apt "$CACHE/apt"
	if ! (cd "$tmp" && apt-get "${SOURCE_APT[@]}" source -qq --download-only "$PKG=$WANT" \
		>/dev/null 2>&1); then
		log "$PKG $WANT not offered; taking the newest $PKG source"
		(cd "$tmp" && apt-get "${SOURCE_APT[@]}" source -qq --download-only "$PKG" >/dev/null 2>&1)
	fi
}

main() {
	local bin tarball ver dir
	bin=$(done_bin || true)
	if [ -n "$bin" ]; then
		echo "$bin"
		return 0
	fi
	if [ -n "${SFBPF_BENCH_OFFLINE:-}" ]; then
		log "not built yet (SFBPF_BENCH_OFFLINE set)"
		return 1
	fi
	mkdir -p "$CACHE/src"
	TMP=$(mktemp -d "$CACHE/src/fetch.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	log "fetching the $PKG source package"
	fetch "$TMP"
	tarball=$(find "$TMP" -maxdepth 1 -name "${PKG}_*.orig.tar.*" | head -1)
	if [ -z "$tarball" ]; then
		log "no upstream tarball in the source package"
		return 1
	fi
	ver=$(basename "$tarball" | sed -e "s/^${PKG}_//" -e 's/\.orig\.tar\..*$//')
	dir="$CACHE/zstd-$ver"
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -xf "$tarball" -C "$dir" --strip-components=1
	log "building zstd $ver with $FLAGS (log: $dir/build.log)"
	# No zlib/lzma/lz4 support: the benchmark only needs zstd's own format.
	if ! make -C "$dir/programs" -j"$(nproc)" zstd CFLAGS="$FLAGS" \
		HAVE_ZLIB=0 HAVE_LZMA=0 HAVE_LZ4=0 >"$dir/build.log" 2>&1; then
		tail -20 "$dir/build.log" >&2
		log "FAILED"
		return 1
	fi
	# (Not "| grep -q": readelf dying of SIGPIPE would fail the pipeline.)
	if ! readelf -S "$dir/programs/zstd" | grep -c '\.sframe' >/dev/null; then
		log "the build has no .sframe section (is gas >= 2.40?)"
		return 1
	fi
	touch "$dir/programs/.sfbpf-built"
	echo "$dir/programs/zstd"
}

main "$@"
