#!/bin/bash
# Fills build-release/device/ for the device machine (a 16-CPU non-Debian
# host some sessions are lent): the release programs (make release, x86)
# and the test programs the checks run there, built here (that host has no
# compiler to rely on). Then, with the device tool:
#   run: bash scripts/device/release-host.sh   carry: ["build-release/device"]
#   run: bash scripts/device/young-scale.sh    carry: ["build-release/device"]
#   run: bash scripts/device/java-host.sh      carry: ["build-release/device"]
# release-host.sh: ldd, --version, on- and off-CPU walks to main, no BTF,
# a read-only table cache, a push with the host's libcurl, a PyTorch loop if
# the host has one, 16 CPUs busy at 999 Hz. young-scale.sh: tracefs, a
# driver per CPU exec'ing 1 ms workers (tests/young/execwork.c) scored by
# whole chains and the vDSO, and a /bin/true storm's counters. java-host.sh:
# the Java fixture's class files and, for each JDK here with jlink (Debian's
# default first, then any other build under /usr/lib/jvm), a runtime of
# java.base and jdk.jfr (with their line tables) packed as jdk-NAME.tar.xz
# (about 11 to 14 MB each:
# the device tool carries 64 MiB in all).
set -euo pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
D=$R/build-release/device
[ -x "$R/build-release/x86/sfbpf-top" ] || { echo "prepare: run make release (or scripts/release.sh x86) first" >&2; exit 1; }
mkdir -p "$D"
cp "$R/build-release/x86/sfbpf-top" "$R/build-release/x86/sfbpf-dump" "$D/"
cc -O2 -g -fomit-frame-pointer -o "$D/spin" "$R/tests/release/spin.c"
gcc -O2 -g -o "$D/fkexec" "$R/tests/young/execwork.c"
cp "$D/fkexec" "$D/fkrated"
cp "$D/fkexec" "$D/fkrate"
ln -sf fkrate "$D/fkratewarm"
rm -rf "$D/classes" "$D"/jdk-*.tar.xz
javac --release 11 -d "$D/classes" "$R/tests/fixtures/JavaWork.java"
declare -A packed=()
for jdk in "$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")" /usr/lib/jvm/*; do
	jdk=$(readlink -f "$jdk")
	[ -x "$jdk/bin/jlink" ] && [ -z "${packed[$jdk]:-}" ] || continue
	packed[$jdk]=1
	name=$(basename "$jdk")
	rm -rf "$D/$name"
	"$jdk/bin/jlink" --add-modules java.base,jdk.jfr --no-man-pages \
		--no-header-files --output "$D/$name"
	tar -C "$D" -cf - "$name" | xz -T0 -6 >"$D/jdk-$name.tar.xz"
	rm -rf "${D:?}/$name"
done
echo "prepare: $D holds $("$D/sfbpf-top" --version | head -1), $(du -sh "$D" | cut -f1)"
