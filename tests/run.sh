#!/usr/bin/env bash
# Test runner: runs every tests/*.test (or those named on the command line).
# A test prints one line per check: "PASS: name", "FAIL: name: why" or
# "SKIP: name: why". A test that exits non-zero without reporting a FAIL, or
# that reports no verdict at all, counts as one failure. Ends with
# "N passed, N failed, N skipped"; exits 1 on failure.
set -u
cd "$(dirname "$0")/.."
export SFBPF_ROOT=$PWD
export SFBPF_BUILD=${SFBPF_BUILD:-$PWD/build}
export SFBPF_BINUTILS_CACHE=${SFBPF_BINUTILS_CACHE:-/var/cache/sfbpf/binutils}
export SFBPF_TEST_TMP=${SFBPF_TEST_TMP:-$(mktemp -d /tmp/sfbpf-test.XXXXXX)}
mkdir -p "$SFBPF_TEST_TMP" || exit 1
# Not inherited: a machine that sets it hid a test reading a Python server's
# block-buffered output (a new machine, CI's, does not set it).
unset PYTHONUNBUFFERED
# No table cache unless a test asks for one (table_cache.test: --table-cache):
# a table built by one test, read back warm by the next, would change what
# the next one measures (a table still loading, a first chain late), and the
# machine's own cache in /var/cache/sfbpf/tables is not the suite's.
export SFBPF_TABLE_CACHE=off

# needs KIND TEST: TEST says it uses what a builder of KIND makes, with a
# "# needs: KIND" line: binutils, the reference binutils (gas 2.44 and 2.47,
# their readelf, or fixtures built with them); release, the release programs
# (make release, x86 only here).
needs() { grep -q "^# needs: $1" "$2"; }
builder() {
	case $1 in
	binutils) "$SFBPF_ROOT/scripts/build-binutils.sh" ;;
	release) "$SFBPF_ROOT/scripts/release.sh" x86 ;;
	esac
}
KINDS=(binutils release)

tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
	# Those that need a builder last: on a new machine the builders
	# (scripts/build-binutils.sh, 10 to 20 minutes; scripts/release.sh, 3 to
	# 5) run while the others do.
	for t in tests/*.test; do
		n=0
		for k in "${KINDS[@]}"; do needs "$k" "$t" && n=1; done
		[ $n -eq 1 ] || tests+=("$t")
	done
	for k in "${KINDS[@]}"; do
		for t in tests/*.test; do
			needs "$k" "$t" && ! printf '%s\n' "${tests[@]}" | grep -qxF "$t" && tests+=("$t")
		done
	done
fi

# LOAD=N: N CPU-bound loops run for the whole suite, as other work keeps a
# shared CI machine busy; every test must hold under them.
loaders=()
if [[ ${LOAD:-0} =~ ^[1-9][0-9]*$ ]]; then
	for ((i = 0; i < LOAD; i++)); do
		bash -c 'while :; do :; done' &
		loaders+=($!)
	done
	trap 'kill "${loaders[@]}" 2>/dev/null' EXIT
	echo "load: $LOAD busy loops (pids ${loaders[*]})"
fi

passed=0 failed=0 skipped=0
# Each builder a test needs starts now, in the background. Quick when built
# (a lock and the stamps); its failure is reported before the first test
# that needs it, whose checks then fail as unbuilt.
declare -A builders=()
for k in "${KINDS[@]}"; do
	# The release programs are built in a Debian 11 root (debootstrap,
	# chroot): a run without root skips the tests that need them.
	[ "$k" = release ] && [ "$(id -u)" -ne 0 ] && continue
	for t in "${tests[@]}"; do
		if needs "$k" "$t"; then
			builder "$k" >"$SFBPF_TEST_TMP/build-$k.log" 2>&1 &
			builders[$k]=$!
			break
		fi
	done
done
for t in "${tests[@]}"; do
	name=$(basename "$t" .test)
	for k in "${!builders[@]}"; do
		needs "$k" "$t" || continue
		start=$SECONDS
		if ! wait "${builders[$k]}"; then
			echo "FAIL: build-$k: the $k builder failed (log: $SFBPF_TEST_TMP/build-$k.log):"
			tail -5 "$SFBPF_TEST_TMP/build-$k.log" | sed 's/^/    /'
			failed=$((failed + 1))
		fi
		[ $((SECONDS - start)) -gt 1 ] && echo "   (waited $((SECONDS - start))s for build-$k)"
		unset "builders[$k]"
	done
	echo "== $name"
	out="$SFBPF_TEST_TMP/$name.out"
	start=$SECONDS
	bash "$t" >"$out" 2>&1
	rc=$?
	p=$(grep -c '^PASS: ' "$out")
	f=$(grep -c '^FAIL: ' "$out")
	s=$(grep -c '^SKIP: ' "$out")
	grep -E '^(FAIL|SKIP): ' "$out" | head -40
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL: $name: exited $rc without reporting; last output:"
		tail -15 "$out" | sed 's/^/    /'
		f=1
	elif [ $((p + f + s)) -eq 0 ]; then
		# Nothing judged is not a pass: a test that checked nothing failed.
		echo "FAIL: $name: exited $rc without a single PASS, FAIL or SKIP; last output:"
		tail -15 "$out" | sed 's/^/    /'
		f=1
	fi
	echo "   $name: $p passed, $f failed, $s skipped ($((SECONDS - start))s)"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "logs: $SFBPF_TEST_TMP"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
