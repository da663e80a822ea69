#!/bin/bash
# Fills build-release/device/ for the device machine (a 16-CPU non-Debian
# host some sessions are lent): the release programs (make release, x86)
# and the test programs the checks run there, built here (that host has no
# compiler to rely on). Then, with the device tool:
#   run: bash scripts/device/release-host.sh   carry: ["build-release/device"]
#   run: bash scripts/device/young-scale.sh    carry: ["build-release/device"]
# release-host.sh: ldd, --version, on- and off-CPU walks to main, no BTF,
# a read-only table cache, a push with the host's libcurl, a PyTorch loop if
# the host has one, 16 CPUs busy at 999 Hz. young-scale.sh: tracefs, a
# driver per CPU exec'ing 1 ms workers (tests/young/execwork.c) scored by
# whole chains and the vDSO, and a /bin/true storm's counters.
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
echo "prepare: $D holds $("$D/sfbpf-top" --version | head -1)"
