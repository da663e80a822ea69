#!/usr/bin/env bash
# What make check-kernels runs in each guest (scripts/check-kernels.sh): the
# quick checks of tests/kernels/quick.sh (every program loads in the form this
# kernel gets; CPU, off-CPU, lifecycle, continuous mode, depth) and the
# unwinding checks against perf --call-graph dwarf in the guest
# (tests/unwind.test on the SFrame V1 fixtures, PIE and one non-PIE build),
# a JVM with no flags (tests/kernels/java.sh: its Java frames) and a node
# (tests/kernels/node.sh: its JavaScript frames).
# deep1000 is left out of unwind.test where the walk is chained (no bpf_loop):
# its 1,000 frames are beyond that form's depth, which quick.sh checks.
# Ends with tests/run.sh's closing line.
# Usage: tests/kernels/guest.sh KQ_FIX [LOGS]   (quick.sh's fixtures; LOGS:
# where the tests' logs are copied at the end: the guest's /tmp goes with it)
set -u
cd "$(dirname "$0")/../.." || exit 1
export KQ_FIX=$1
# The tests' own directory stays in the guest's /tmp (a tmpfs): the FIFOs
# unwind.test makes for perf do not work on the 9p share.
export SFBPF_TEST_TMP=/tmp/sfbpf-kernels
mkdir -p "$SFBPF_TEST_TMP"
fixtures="chain plt_callback deep_recursion threads4 syscall_loop nocfi_fp ra_zero"
if bpftool feature probe kernel 2>/dev/null | grep -qw bpf_loop; then
	fixtures+=" deep1000"
fi
export UNWIND_TOOLCHAINS=${UNWIND_TOOLCHAINS:-v1} UNWIND_FIXTURES=${UNWIND_FIXTURES:-$fixtures}
export UNWIND_NOPIE_FIXTURES=${UNWIND_NOPIE_FIXTURES:-chain}
# perf starts in seconds natively, minutes under emulation on a busy host.
export UNWIND_PERF_START=${UNWIND_PERF_START:-900}
tests/run.sh tests/kernels/quick.test tests/kernels/java.test tests/kernels/node.test tests/unwind.test
rc=$?
if [ -n "${2:-}" ]; then
	rm -rf "$2"
	mkdir -p "$2"
	cp -r "$SFBPF_TEST_TMP"/. "$2"/ 2>/dev/null
fi
exit "$rc"
