#!/usr/bin/env bash
# make check-release: the release programs (make release) and image (make
# release-image) where a fleet runs them; make check runs the quick form
# (tests/release.test: the Debian 11 build root and trixie).
#   1. roots    tests/release.test with fresh minimal roots of bullseye,
#               bookworm, trixie and sid (SFBPF_RELEASE_SUITES), beside the
#               Debian 11 build root: load, unwind to main on and off CPU,
#               continuous mode pushing to a local receiver
#   2. image    tests/release/image.test: podman, as the DaemonSet runs it
#   3. kernels  tests/kernels/quick.sh with the release sfbpf-top on Debian's
#               kernels 5.10 to newest under qemu (scripts/kernel-vm.sh; the
#               guests share this machine's root, the programs' own libraries
#               are not needed there)
#   4. arm64    make check-arm64 with the arm64 release sfbpf-top (SFBPF_TOP)
# Ends with "N passed, N failed, N skipped"; exits 1 on a failure.
# Knobs: SFBPF_RELEASE_SUITES, KERNELS ("bullseye bookworm trixie sid"),
# CHECK_RELEASE_ARM64=0 (no arm64 guest: it takes about an hour).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
REL=$ROOT/build-release
LOGDIR=$REL/check-release
KERNELS=${KERNELS:-bullseye bookworm trixie sid}
export SFBPF_RELEASE_SUITES=${SFBPF_RELEASE_SUITES:-bullseye bookworm trixie sid}
export SFBPF_KERNELS_TIMEOUT=${SFBPF_KERNELS_TIMEOUT:-3600}
export SFBPF_KERNELS_MEM=${SFBPF_KERNELS_MEM:-4096}
passed=0 failed=0 skipped=0
rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"

# tally FILE: adds a closing "N passed, N failed, N skipped" line of FILE.
tally() {
	local p f s
	read -r p f s < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\{0,1\}$/\1 \2 \4/p' "$1" | tail -1)
	if [ -z "${p:-}" ]; then
		echo "FAIL: $2: no closing line; last output:"
		tail -5 "$1" | sed 's/^/    /'
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + ${s:-0}))
}

echo "== roots and image: tests/release.test tests/release/image.test ($SFBPF_RELEASE_SUITES)"
tests/run.sh tests/release.test tests/release/image.test >"$LOGDIR/tests.out" 2>&1
grep -E '^(FAIL|SKIP): |^   [a-z_]+: [0-9]+ passed' "$LOGDIR/tests.out"
tally "$LOGDIR/tests.out" tests

echo "== kernels: $KERNELS"
FIX=$REL/kernels-fix
if ! tests/kernels/build-fix.sh "$FIX" >"$LOGDIR/fix.log" 2>&1; then
	echo "FAIL: kernels: building the fixtures (log: $LOGDIR/fix.log)"
	failed=$((failed + 1))
else
	# shellcheck disable=SC2086 # one word per suite
	scripts/kernel-vm.sh setup $KERNELS >"$LOGDIR/kernel-setup.log" 2>&1 ||
		echo "kernels: scripts/kernel-vm.sh setup failed (log: $LOGDIR/kernel-setup.log)"
	for k in $KERNELS; do
		out=$LOGDIR/kernel-$k.out
		SFBPF_KERNELS_LOGDIR=$LOGDIR/kernel-$k-guest scripts/kernel-vm.sh run "$k" "$ROOT" \
			env SFBPF_TOP="$REL/x86/sfbpf-top" bash tests/kernels/quick.sh "$FIX" "$LOGDIR/kernel-$k" \
			>"$out" 2>&1
		rc=$?
		p=$(grep -c '^PASS: ' "$out") f=$(grep -c '^FAIL: ' "$out") s=$(grep -c '^SKIP: ' "$out")
		grep -E '^(FAIL|SKIP): ' "$out"
		if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
			echo "FAIL: kernel $k: no verdict (exit $rc): $(tail -3 "$out" | tr '\n' ' ')"
			f=1
		elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			# A guest that died part way (a panic) passed only what it reached.
			echo "FAIL: kernel $k: the guest ended with status $rc after $p checks: $(tail -2 "$out" | tr '\n' ' ')"
			f=1
		fi
		splat=$(grep -m1 -E 'WARNING: CPU|BUG:|Oops|general protection fault' \
			"$LOGDIR/kernel-$k-guest/dmesg.txt" 2>/dev/null)
		if [ -n "$splat" ]; then
			echo "FAIL: kernel $k: the kernel warned: $splat"
			f=$((f + 1))
		fi
		echo "   kernel $k: $p passed, $f failed, $s skipped"
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	done
fi

if [ "${CHECK_RELEASE_ARM64:-1}" = 1 ]; then
	echo "== arm64: scripts/check-arm64.sh with SFBPF_TOP=build-release/arm64/sfbpf-top"
	scripts/build-binutils.sh 2.47 >"$LOGDIR/binutils.log" 2>&1
	SFBPF_TOP=$REL/arm64/sfbpf-top scripts/check-arm64.sh >"$LOGDIR/arm64.out" 2>&1
	grep -E '^(FAIL|SKIP): |^kernel ' "$LOGDIR/arm64.out"
	tally "$LOGDIR/arm64.out" arm64
else
	echo "SKIP: arm64: CHECK_RELEASE_ARM64=0"
	skipped=$((skipped + 1))
fi
echo "logs: $LOGDIR"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
