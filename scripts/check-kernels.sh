#!/usr/bin/env bash
# make check-kernels: sfbpf on Debian's own x86-64 kernels under qemu (TCG),
# each booted by scripts/kernel-vm.sh with this machine's root and build:
# bullseye's 5.10, bookworm's 6.1, trixie's 6.12 and sid's newest.
#   1. scripts/kernel-vm.sh setup   the kernels (cached, /var/cache/sfbpf/kernels)
#   2. the fixtures                 unwind.test's (scripts/build-fixtures.sh) and
#                                   quick.sh's (tests/kernels/build-fix.sh)
#   3. tests/kernels/guest.sh       in each guest: every program loads in the
#                                   form the kernel gets, CPU, off-CPU,
#                                   lifecycle, continuous mode, depth, a JVM's
#                                   Java frames, and the unwinding checks
#                                   against perf in the guest
# Prints "kernel VERSION: N passed, N failed, N skipped" per kernel, then the
# total; exits 1 on a failure. A kernel that cannot be fetched or booted is a
# failure. Knobs: KERNELS (the suites), SFBPF_BUILD, and those of
# scripts/kernel-vm.sh and tests/unwind.test.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=${SFBPF_BUILD:-$ROOT/build}
LOGDIR=$BUILD/check-kernels
KERNELS=${KERNELS:-bullseye bookworm trixie sid}
# A whole guest run under emulation: 5.10's chained programs take the
# verifier minutes at every start there.
export SFBPF_KERNELS_TIMEOUT=${SFBPF_KERNELS_TIMEOUT:-3600}
# The guest's /tmp is a tmpfs of half its memory, and unwind.test keeps perf's
# text of every fixture there (deep1000's alone is ~140 MB, more on a slow
# kernel whose runs last longer): 2 GiB of memory filled it on 7.2.
export SFBPF_KERNELS_MEM=${SFBPF_KERNELS_MEM:-4096}
passed=0 failed=0 skipped=0
start=$SECONDS
rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"

fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}

echo "== scripts/kernel-vm.sh setup $KERNELS"
# shellcheck disable=SC2086 # one word per suite
scripts/kernel-vm.sh setup $KERNELS 2>&1 | tee "$LOGDIR/setup.log" | grep -v '^kernel-vm: ready' || true
echo "== fixtures"
if ! scripts/build-fixtures.sh "$BUILD/fixtures" >"$LOGDIR/fixtures.log" 2>&1 ||
	! tests/kernels/build-fix.sh "$BUILD/kernels/fix" >>"$LOGDIR/fixtures.log" 2>&1; then
	fail "check-kernels: building the fixtures failed (log: $LOGDIR/fixtures.log)"
fi

for k in $KERNELS; do
	echo "== $k"
	out=$LOGDIR/$k.out
	SFBPF_KERNELS_LOGDIR=$LOGDIR/$k-guest scripts/kernel-vm.sh run "$k" "$ROOT" \
		env SFBPF_BUILD="$BUILD" bash tests/kernels/guest.sh "$BUILD/kernels/fix" "$LOGDIR/$k-tests" \
		>"$out" 2>&1
	rc=$?
	kver=$(cat "/var/cache/sfbpf/kernels/$k/kernel-version" 2>/dev/null || echo "$k")
	grep -E '^(FAIL|SKIP): |^   [a-z_]+: [0-9]+ passed' "$out" | sed "s/^/  /"
	read -r p f s < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$out" | tail -1)
	if [ -z "${p:-}" ]; then
		echo "  $k: no closing line (exit $rc); last output:"
		tail -5 "$out" | sed 's/^/    /'
		p=0 f=1 s=0
	elif [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		echo "  $k: the guest exited $rc: $(tail -2 "$out" | tr '\n' ' ')"
		f=1
	fi
	if grep -qE 'WARNING: CPU|BUG:|Oops|general protection fault' "$LOGDIR/$k-guest/dmesg.txt" 2>/dev/null; then
		echo "  FAIL: $k: the kernel warned: $(grep -m1 -E 'WARNING: CPU|BUG:|Oops|general protection fault' "$LOGDIR/$k-guest/dmesg.txt")"
		f=$((f + 1))
	fi
	echo "kernel $kver: $p passed, $f failed, $s skipped"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "check-kernels: $((SECONDS - start)) s; logs: $LOGDIR"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
