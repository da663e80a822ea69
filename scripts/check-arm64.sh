#!/usr/bin/env bash
# make check-arm64: the unwinder on real arm64 kernels (docs/ARM64.md):
# Debian's trixie 6.12 and bookworm 6.1, each booting the same trixie root.
#   1. make ARCH=arm64         sfbpf-top, sfbpf-dump and the BPF objects in
#                              build-arm64/ (cross-built)
#   2. scripts/arm64-vm.sh setup KERNEL    the guest and each kernel (cached
#                              in /var/cache/sfbpf/arm64)
#   3. scripts/build-arm64-fixtures.sh build-arm64/fixtures
#   4. tests/run.sh tests/arm64/unwind.test and tests/arm64/node.test (a node
#      profiled, issue #45), in the guest, on each kernel
# Prints "kernel VERSION: N passed, N failed, N skipped" per kernel, then the
# total "N passed, N failed, N skipped"; exits 1 on a failure. Where qemu
# cannot boot the guest at all: a SKIP line, exit 0; a kernel that cannot be
# fetched, or that cannot boot where one before it did, is a failure.
# Knobs: ARM64_KERNELS (the kernels, in order: "trixie bookworm"),
# ARM64_PERF_ONLY=1 (no sfbpf-top: perf checked against perf, to prove the
# harness), SFBPF_TOP (an arm64 sfbpf-top inside the tree, instead of
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

KERNELS=${ARM64_KERNELS:-trixie bookworm}
# A whole guest run: 48 profiled runs of 15 to 40 seconds under TCG, more
# on a busy machine: trixie's took about 50 minutes beside light work, its
# fourth variant was still running at 60 with a make check-fresh and a
# root's debootstrap beside it (2026-11-29, 2 CPUs). The limit is a hang's
# guard, not a speed test: three hours.
export SFBPF_ARM64_TIMEOUT=${SFBPF_ARM64_TIMEOUT:-10800}
echo "== scripts/arm64-vm.sh setup"
# The root, with its own kernel (trixie's); the other kernels below.
SFBPF_ARM64_KERNEL='' scripts/arm64-vm.sh setup 2>&1 | tee "$LOGDIR/setup.log" | grep -v '^arm64-vm: ready'
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

# The tests' knobs (ARM64_*) go along into the guest.
knobs=()
for v in $(compgen -e | grep '^ARM64_' | grep -v -e '^ARM64_PERF_ONLY$' -e '^ARM64_KERNELS$'); do
	knobs+=("$v=${!v}")
done
booted=
for k in $KERNELS; do
	echo "== $k"
	p=0 f=0 s=0
	out=$LOGDIR/$k.log
	scripts/arm64-vm.sh setup "$k" >"$LOGDIR/setup-$k.log" 2>&1
	rc=$?
	grep -v '^arm64-vm: ready' "$LOGDIR/setup-$k.log" | sed 's/^/  /'
	kver=$(scripts/arm64-vm.sh versions 2>/dev/null | awk -v k="$k" '$1 == k { print $2 }')
	if [ "$rc" != 0 ]; then
		echo "  FAIL: check-arm64: scripts/arm64-vm.sh setup $k failed ($rc): $(tail -1 "$LOGDIR/setup-$k.log")"
		f=1
	else
		echo "  tests/arm64/unwind.test in the guest, kernel $kver"
		SFBPF_ARM64_KERNEL=$k SFBPF_ARM64_LOGDIR=$LOGDIR/$k-guest scripts/arm64-vm.sh run "$ROOT" \
			env SFBPF_BUILD="$BUILD" SFBPF_TEST_TMP="$LOGDIR/$k" \
			ARM64_PERF_ONLY="$perf_only" "${top[@]}" "${knobs[@]}" \
			tests/run.sh tests/arm64/unwind.test tests/arm64/node.test 2>&1 | tee "$out" | sed -u 's/^/  /'
		rc=${PIPESTATUS[0]}
		if [ "$rc" = 77 ] && [ -z "$booted" ]; then
			# No kernel has booted before: qemu cannot boot guests here.
			echo "  SKIP: check-arm64: $k: qemu cannot boot the arm64 guest here: $(grep -m1 'cannot boot' "$out")"
			s=1
		elif [ "$rc" = 77 ]; then
			echo "  FAIL: check-arm64: $k: the guest does not boot with $kver (it did with $booted): $(grep -m1 'cannot boot' "$out")"
			f=1
		# The guest's tests/run.sh ends with its own counts.
		elif read -r p _ f _ s _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -1) &&
			[ -n "$p" ]; then
			booted=${booted:-$kver}
			if [ "$rc" != 0 ] && [ "$f" -eq 0 ]; then
				echo "  FAIL: check-arm64: $k: the guest run exited $rc: $(tail -2 "$out" | tr '\n' ' ')"
				f=1
			fi
		else
			# What the guest's tests/run.sh had judged when it was cut
			# short: its test's output is on the shared tree.
			booted=${booted:-$kver}
			p=$(grep -c '^PASS: ' "$LOGDIR/$k/unwind.out" 2>/dev/null)
			f=$(grep -c '^FAIL: ' "$LOGDIR/$k/unwind.out" 2>/dev/null)
			s=$(grep -c '^SKIP: ' "$LOGDIR/$k/unwind.out" 2>/dev/null)
			echo "  FAIL: check-arm64: $k: the guest run ended ($rc) without its counts (log: $out; so far: $LOGDIR/$k/unwind.out)"
			grep '^FAIL: ' "$LOGDIR/$k/unwind.out" 2>/dev/null | sed 's/^/  /'
			p=${p:-0} f=$((${f:-0} + 1)) s=${s:-0}
		fi
		if grep -qE 'WARNING: CPU|BUG:|Oops|Kernel panic' "$LOGDIR/$k-guest/dmesg.txt" 2>/dev/null; then
			echo "  FAIL: check-arm64: $k: the kernel warned: $(grep -m1 -E 'WARNING: CPU|BUG:|Oops|Kernel panic' "$LOGDIR/$k-guest/dmesg.txt")"
			f=$((f + 1))
		fi
	fi
	echo "kernel ${kver:-$k}: $p passed, $f failed, $s skipped"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
finish
