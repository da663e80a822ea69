#!/usr/bin/env bash
# make check-arm64: the unwinder on a real arm64 kernel (docs/ARM64.md).
#   1. make ARCH=arm64         sfbpf-top, sfbpf-dump and the BPF objects in
#                              build-arm64/ (cross-built)
#   2. scripts/arm64-vm.sh setup    the guest (cached in /var/cache/sfbpf/arm64)
#   3. scripts/build-arm64-fixtures.sh build-arm64/fixtures
#   4. tests/run.sh tests/arm64/unwind.test, in the guest
# Ends with "N passed, N failed, N skipped"; exits 1 on a failure. Where qemu
# cannot boot the guest: one SKIP line, exit 0.
# Knobs: ARM64_PERF_ONLY=1 (no sfbpf-top: perf checked against perf, to prove
# the harness), SFBPF_TOP (an arm64 sfbpf-top inside the tree, instead of
# make ARCH=arm64's), and those of tests/arm64/unwind.test and
# scripts/arm64-vm.sh.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SFBPF_ARM64_BUILD:-$ROOT/build-arm64}
LOGDIR=$BUILD/check-arm64
cd "$ROOT" || exit 1
passed=0 failed=0 skipped=0
start=$SECONDS

finish() {
	echo "check-arm64: $((SECONDS - start)) s; logs: $LOGDIR"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}
fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}
skip() {
	echo "SKIP: $*"
	skipped=$((skipped + 1))
}

rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"
perf_only=${ARM64_PERF_ONLY:-0}
top=()
if [ -n "${SFBPF_TOP:-}" ]; then
	# A ready arm64 sfbpf-top under HOSTDIR (the guest sees only the tree).
	echo "== SFBPF_TOP=$SFBPF_TOP (no make ARCH=arm64)"
	top=(SFBPF_TOP="$(realpath "$SFBPF_TOP")")
elif [ "$perf_only" != 1 ]; then
	echo "== make ARCH=arm64"
	# A Makefile without the cross build would build for the host, into build/.
	if ! make -n ARCH=arm64 2>/dev/null | grep -q 'build-arm64'; then
		fail "check-arm64: this Makefile has no ARCH=arm64 cross build into build-arm64/"
		echo "check-arm64: without build-arm64/sfbpf-top the guest checks perf against perf only"
		perf_only=1
	elif ! nice make ARCH=arm64 >"$LOGDIR/make.log" 2>&1; then
		fail "check-arm64: make ARCH=arm64 failed (log: $LOGDIR/make.log): $(grep -m3 -E 'rror|No rule' "$LOGDIR/make.log" | tr '\n' ' ')"
		echo "check-arm64: without build-arm64/sfbpf-top the guest checks perf against perf only"
		perf_only=1
	elif [ ! -x "$BUILD/sfbpf-top" ]; then
		fail "check-arm64: make ARCH=arm64 made no $BUILD/sfbpf-top"
		perf_only=1
	fi
fi

echo "== scripts/arm64-vm.sh setup"
scripts/arm64-vm.sh setup 2>&1 | tee "$LOGDIR/setup.log" | grep -v '^arm64-vm: ready'
rc=${PIPESTATUS[0]}
if [ "$rc" = 77 ]; then
	skip "check-arm64: qemu cannot boot the arm64 guest here: $(tail -1 "$LOGDIR/setup.log")"
	finish
elif [ "$rc" != 0 ]; then
	fail "check-arm64: scripts/arm64-vm.sh setup failed: $(tail -1 "$LOGDIR/setup.log")"
	finish
fi

echo "== scripts/build-arm64-fixtures.sh"
if ! nice scripts/build-arm64-fixtures.sh "$BUILD/fixtures" >"$LOGDIR/fixtures.log" 2>&1; then
	fail "check-arm64: scripts/build-arm64-fixtures.sh failed: $(tail -3 "$LOGDIR/fixtures.log" | tr '\n' ' ')"
	finish
fi

echo "== tests/arm64/unwind.test (in the guest)"
# The tests' knobs (ARM64_*) go along into the guest.
knobs=()
for v in $(compgen -e | grep '^ARM64_' | grep -v '^ARM64_PERF_ONLY$'); do
	knobs+=("$v=${!v}")
done
scripts/arm64-vm.sh run "$ROOT" env SFBPF_BUILD="$BUILD" SFBPF_TEST_TMP="$LOGDIR" \
	ARM64_PERF_ONLY="$perf_only" "${top[@]}" "${knobs[@]}" \
	tests/run.sh tests/arm64/unwind.test | tee "$LOGDIR/guest.log"
rc=${PIPESTATUS[0]}
if [ "$rc" = 77 ]; then
	skip "check-arm64: qemu cannot boot the arm64 guest here: $(tail -1 "$LOGDIR/guest.log")"
	finish
fi
# The guest's tests/run.sh ends with its own counts: add them up.
if read -r p _ f _ s _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$LOGDIR/guest.log" | tail -1) &&
	[ -n "$p" ]; then
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || fail "check-arm64: the guest run exited $rc"
else
	fail "check-arm64: the guest run ended ($rc) without its counts (log: $LOGDIR/guest.log)"
fi
finish
