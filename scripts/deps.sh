#!/usr/bin/env bash
# Installs the Debian packages sfbpf needs to build and test. Idempotent: does
# nothing (and needs no root) when everything is already present.
# Usage: scripts/deps.sh [--check] [build|test]   (test = build + what the tests use)
#   --check  install nothing: name what is missing and fail (make bench/fuzz/soak)
set -euo pipefail

check_only=0
if [ "${1:-}" = --check ]; then
	check_only=1
	shift
fi

BUILD_PKGS=(make gcc clang llvm pkg-config libbpf-dev libelf-dev libdw-dev zlib1g-dev bpftool
	libncurses-dev protobuf-c-compiler libprotobuf-c-dev libiberty-dev
	libcurl4-openssl-dev libdebuginfod-dev)
# Tests: perf as the reference unwinder, bison/flex/texinfo/dpkg-dev to build
# the reference binutils from Debian's source packages, tmux for the TUI, Go's
# pprof as the reference pprof reader, chromium to render flamegraphs, protoc to
# decode OTLP requests against their schema, prometheus_client to parse /metrics.
TEST_PKGS=(linux-perf bindfs bison flex texinfo dpkg-dev xz-utils binutils tmux
	libclang-rt-14-dev python3 g++ golang-go golang-github-google-pprof-dev chromium
	libc6-dbg util-linux nodejs sqlite3 debootstrap protobuf-compiler python3-prometheus-client)

want=("${BUILD_PKGS[@]}")
[ "${1:-build}" = test ] && want+=("${TEST_PKGS[@]}")

missing=()
for p in "${want[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$check_only" = 1 ]; then
	echo "sfbpf: missing packages: ${missing[*]} (make deps installs them)" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "sfbpf: missing packages: ${missing[*]}" >&2
	echo "sfbpf: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "sfbpf: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
