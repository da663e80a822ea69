#!/usr/bin/env bash
# What make check-kernels runs in each guest (scripts/check-kernels.sh): the
# quick checks of tests/kernels/quick.sh (every program loads in the form this
# kernel gets; CPU, off-CPU, lifecycle, continuous mode, depth) and the
# unwinding checks against perf --call-graph dwarf in the guest
# (tests/unwind.test on the SFrame V1 fixtures, PIE and one non-PIE build).
# deep1000 is left out of unwind.test where the walk is chained (no bpf_loop):
# its 1,000 frames are beyond that form's depth, which quick.sh checks.
# Ends with tests/run.sh's closing line.
# Usage: tests/kernels/guest.sh KQ_FIX [TMP]   (quick.sh's fixtures; TMP: where
# the tests' logs go, kept: the guest's /tmp goes with it)
set -u
cd "$(dirname "$0")/../.." || exit 1
export KQ_FIX=$1
if [ -n "${2:-}" ]; then
	rm -rf "$2"
	mkdir -p "$2"
	export SFBPF_TEST_TMP=$2
fi
# Fewer than on the host (emulation is slow): one of each shape the walk
# meets: calls through libc and a PLT, recursion, threads, syscalls, frames
# without CFI, prologues and a return address of 0.
fixtures="chain plt_callback deep_recursion threads4 syscall_loop nocfi_fp ra_zero"
if bpftool feature probe kernel 2>/dev/null | grep -qw bpf_loop; then
	fixtures+=" deep1000"
fi
export UNWIND_TOOLCHAINS=${UNWIND_TOOLCHAINS:-v1} UNWIND_FIXTURES=${UNWIND_FIXTURES:-$fixtures}
export UNWIND_NOPIE_FIXTURES=${UNWIND_NOPIE_FIXTURES:-chain}
# perf starts in seconds natively, minutes under emulation on a busy host.
export UNWIND_PERF_START=${UNWIND_PERF_START:-900}
exec tests/run.sh tests/kernels/quick.test tests/unwind.test
