#!/usr/bin/env bash
# Installs the Debian packages sfbpf needs to build and test. Idempotent: does
# nothing (and needs no root) when everything is already present.
# Usage: scripts/deps.sh [--check] [build|test|arm64|release]   (test = build + what the tests use)
#   arm64    cross-building (make ARCH=arm64): the cross compiler and the arm64
#            libraries, through Debian multiarch (adds the arm64 architecture)
#   release  make release, release-image and check-release: debootstrap for
#            the Debian 11 build roots, umoci to write the image, podman to
#            run it (runc where crun cannot: a hybrid cgroup tree), qemu-user for the arm64 programs, PyYAML to read the
#            DaemonSet
#   --check  install nothing: name what is missing and fail (make bench/fuzz/soak)
set -euo pipefail

check_only=0
if [ "${1:-}" = --check ]; then
	check_only=1
	shift
fi

BUILD_PKGS=(make gcc clang llvm pkg-config libbpf-dev libelf-dev libdw-dev zlib1g-dev bpftool
	libncurses-dev protobuf-c-compiler libprotobuf-c-dev libiberty-dev
	libcurl4-openssl-dev libdebuginfod-dev nettle-dev libcapstone-dev)
# Tests: perf as the reference unwinder, bison/flex/texinfo/dpkg-dev to build
# the reference binutils from Debian's source packages, tmux for the TUI, Go's
# pprof as the reference pprof reader, chromium to render flamegraphs, protoc to
# decode OTLP requests against their schema, prometheus_client to parse /metrics,
# the AArch64 cross compiler with its C library (the CFI tests build AArch64
# objects) and qemu-user (tests/arm64_libs.test runs the arm64 programs' own
# loader), time for peak memory, and qemu with busybox, cpio and kmod to boot
# Debian's own kernels (make check-kernels, tests/kernels.test), gdb, the
# reference for CPython's layouts and eval frames (tests/pyframes.test),
# libpython3-dev to link a program embedding CPython (tests/pyembed.test), and
# e2fsprogs and btrfs-progs to make the filesystem images whose files'
# identities a tenant chooses (tests/tenant_images.test), and the JDK, whose
# own tools (jstack, jhsdb, jcmd) are the reference for a JVM's tables and
# frames read from outside (tests/hotspot.test), and wrk, the load on a node
# http server (tests/v8profile.test), and PHP with its headers (the layouts
# scripts/php/layouts.sh reads), its own sampling profiler (php-excimer) and
# a program of its no test wrote (PHP_CodeSniffer), and a library PHP-FPM
# links that a minimal Debian lacks (libapparmor1; the test unpacks
# php-fpm itself), the embed SAPI's libphp (a program embedding PHP):
# tests/phpprofile.test; PHPUnit and the PSR interfaces
# Symfony's test suite runs with (tests/vmprograms.test); and
# Ruby with its headers (scripts/ruby/layouts.sh) and its own sampling profiler
# (stackprof), Rack and puma (a web application under load):
# tests/rbprofile.test; and Perl's own profiler (Devel::NYTProf)
# and libperl for a program embedding it: tests/plprofile.test.
TEST_PKGS=(linux-perf bindfs bison flex texinfo dpkg-dev xz-utils binutils tmux
	libclang-rt-14-dev python3 g++ golang-go golang-github-google-pprof-dev chromium
	libc6-dbg util-linux nodejs sqlite3 debootstrap protobuf-compiler python3-prometheus-client
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user time qemu-system-x86 busybox-static cpio kmod
	gdb libpython3-dev e2fsprogs btrfs-progs default-jdk-headless wrk
	php-cli php-dev php-excimer php-codesniffer libapparmor1 libphp-embed phpunit php-psr-log
	php-psr-container php-psr-event-dispatcher php-psr-cache ruby ruby-dev ruby-stackprof ruby-rack puma
	libdevel-nytprof-perl libperl-dev)

# The libraries the programs link, for the arm64 cross-build (multiarch).
ARM64_LIBS=(libbpf-dev libelf-dev libdw-dev zlib1g-dev libncurses-dev libprotobuf-c-dev
	libiberty-dev libcurl4-openssl-dev libdebuginfod-dev nettle-dev libcapstone-dev)

want=("${BUILD_PKGS[@]}")
[ "${1:-build}" = test ] && want+=("${TEST_PKGS[@]}")
# npm, installing a package (tests/vmprograms.test): Debian's, unless the
# nodejs installed carries its own (NodeSource's does, and conflicts with it).
# A new Debian 12 has none: check-fresh failed v8profile-npm for want of it.
[ "${1:-build}" = test ] && ! command -v npm >/dev/null 2>&1 && want+=(npm)
foreign=
[ "${1:-}" = release ] && want=(debootstrap umoci podman runc qemu-user python3-yaml)
if [ "${1:-}" = arm64 ]; then
	want=(make clang llvm bpftool protobuf-c-compiler gcc-aarch64-linux-gnu "${ARM64_LIBS[@]/%/:arm64}")
	dpkg --print-foreign-architectures | grep -x arm64 >/dev/null || foreign=arm64
fi

missing=()
# Per installed instance: with multiarch, a library may be there for arm64 only.
native=$(dpkg --print-architecture)
for p in "${want[@]}"; do
	arch="($native|all)"
	[ "${p#*:}" = "$p" ] || arch=${p#*:}
	st=$(dpkg-query -W -f='${Architecture} ${db:Status-Status}\n' "$p" 2>/dev/null || true)
	grep -qEx "$arch installed" <<<"$st" || missing+=("$p")
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
[ -z "$foreign" ] || dpkg --add-architecture "$foreign"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
