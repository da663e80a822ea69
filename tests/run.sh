#!/usr/bin/env bash
# Test runner: runs every tests/*.test (or those named on the command line).
# A test prints one line per check: "PASS: name", "FAIL: name: why" or
# "SKIP: name: why". A test that exits non-zero without reporting a FAIL, or
# that reports no verdict at all, counts as one failure. Ends with
# "N passed, N failed, N skipped"; exits 1 on failure. Tests marked
# "# lane: side" run in a second lane beside the others (below).
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
# The checkers are Debian's python3 scripts (make deps installs their
# modules for it), whatever comes first in PATH: a version manager's shim
# there (pyenv's: a shell script that forks some 40 processes) cost 0.4 s of
# CPU a start on this machine, hundreds of starts a run. The interpreters a
# test profiles are named by their paths, not found through PATH.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
	mkdir -p "$SFBPF_TEST_TMP/bin" && ln -sf /usr/bin/python3 "$SFBPF_TEST_TMP/bin/python3" &&
		export PATH="$SFBPF_TEST_TMP/bin:$PATH"
fi
# No table cache unless a test asks for one (table_cache.test: --table-cache):
# a table built by one test, read back warm by the next, would change what
# the next one measures (a table still loading, a first chain late), and the
# machine's own cache in /var/cache/sfbpf/tables is not the suite's.
export SFBPF_TABLE_CACHE=off

# needs KIND TEST: TEST says it uses what a builder of KIND makes, with a
# "# needs: KIND" line (one per kind): binutils, the reference binutils (gas
# 2.44 and 2.47 for x86-64, their readelf, or fixtures built with them);
# binutils-cross, gas 2.47 for aarch64 and s390x (binutils' own corpus);
# release, the release programs (make release, x86 only here).
needs() { grep -qE "^# needs: $1( |\$)" "$2"; }
builder() {
	case $1 in
	binutils) "$SFBPF_ROOT/scripts/build-binutils.sh" --native ;;
	binutils-cross)
		# After the native tools, which most of the tests wait for: both
		# take the builder's lock, and the first to take it goes first.
		if [ -e "$SFBPF_TEST_TMP/build-binutils.started" ]; then
			while [ ! -s "$SFBPF_TEST_TMP/build-binutils.rc" ]; do sleep 1; done
		fi
		"$SFBPF_ROOT/scripts/build-binutils.sh" --cross
		;;
	release) "$SFBPF_ROOT/scripts/release.sh" x86 ;;
	esac
}
KINDS=(binutils binutils-cross release)

tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
	# Those that need a builder last: on a new machine the builders
	# (scripts/build-binutils.sh, about a minute, 14 when it must build from
	# source; scripts/release.sh, 3 to 5) run while the others do.
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

# The host's apt sources: no test's setup may edit them (each fetches with
# an apt of its own: scripts/lib.sh's source_apt, debian_kernel, the roots').
# Compared when the suite ends. The one file earlier builders added, which
# source_apt removes, is left out.
apt_sources() {
	find /etc/apt/sources.list /etc/apt/sources.list.d -maxdepth 1 -type f \
		! -name sfbpf-src.sources -print0 2>/dev/null | sort -z | xargs -0r sha256sum
}
APT_SOURCES=$(apt_sources)

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

# Each builder a test needs starts now, in the background. Quick when built
# (a lock and the stamps). It leaves its exit status in build-KIND.rc: both
# lanes wait on that file, and the first test to need a builder that failed
# reports it (once), whose checks then fail as unbuilt.
builder_pids=()
for k in "${KINDS[@]}"; do
	# The release programs are built in a Debian 11 root (debootstrap,
	# chroot): a run without root skips the tests that need them.
	[ "$k" = release ] && [ "$(id -u)" -ne 0 ] && continue
	rm -f "$SFBPF_TEST_TMP/build-$k.rc" "$SFBPF_TEST_TMP/build-$k.started"
	rmdir "$SFBPF_TEST_TMP/build-$k.reported" 2>/dev/null
	for t in "${tests[@]}"; do
		if needs "$k" "$t"; then
			touch "$SFBPF_TEST_TMP/build-$k.started"
			{
				builder "$k" >"$SFBPF_TEST_TMP/build-$k.log" 2>&1
				echo $? >"$SFBPF_TEST_TMP/build-$k.rc"
			} &
			builder_pids+=($!)
			break
		fi
	done
done

# What a new machine fetches and unpacks once for the tests (debootstrap and
# apt, mostly waiting on the network and the disk): Debian trixie's and
# unstable's roots (the Python tests, release), the kernel guests
# (kernels.test). Started now, in the background, beside the tests; each
# script takes its own lock, so a test that asks before it is ready waits
# there, then finds it cached, and one that fails here is made again, and
# reported, by the test. Quick when cached. SFBPF_PREFETCH=0: none.
prefetch_pid=
if [ "${SFBPF_PREFETCH:-1}" != 0 ] && [ "$(id -u)" -eq 0 ]; then
	want_roots=0 want_guests=0
	for t in "${tests[@]}"; do
		grep -q 'container-root\.sh' "$t" && want_roots=1
		grep -q 'kernel-vm\.sh' "$t" && want_guests=1
	done
	# The roots and the guests at once: kernels.test comes early in its lane.
	{
		if [ $want_roots = 1 ]; then
			"$SFBPF_ROOT/scripts/container-root.sh"
			SFBPF_TRIXIE_SUITE=sid SFBPF_CONTAINER_PYTHONS=all "$SFBPF_ROOT/scripts/container-root.sh" \
				"${SFBPF_SID_ROOT:-/var/cache/sfbpf/sid}"
		fi >"$SFBPF_TEST_TMP/prefetch-roots.log" 2>&1 &
		# shellcheck disable=SC2086 # a list of suites
		if [ $want_guests = 1 ] && [ -n "${KERNELS_QUICK-bullseye bookworm}" ]; then
			"$SFBPF_ROOT/scripts/kernel-vm.sh" setup ${KERNELS_QUICK-bullseye bookworm}
		fi >"$SFBPF_TEST_TMP/prefetch-guests.log" 2>&1 &
		wait
	} &
	prefetch_pid=$!
fi

# await_children: the prefetch and the builders have ended. Bash forgets an
# ended child once a new child is given its PID (a suite of a new machine
# went round the PID space), and its wait then says "not a child": ended.
await_children() {
	local pid
	for pid in $prefetch_pid "${builder_pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	return 0
}

# await_builder KIND: returns once KIND's builder has ended; 1 if it failed
# and this caller is the first to learn it.
await_builder() {
	local k=$1 start=$SECONDS rc
	[ -e "$SFBPF_TEST_TMP/build-$k.started" ] || return 0
	while [ ! -s "$SFBPF_TEST_TMP/build-$k.rc" ]; do sleep 1; done
	[ $((SECONDS - start)) -gt 1 ] && echo "   (waited $((SECONDS - start))s for build-$k)"
	read -r rc <"$SFBPF_TEST_TMP/build-$k.rc"
	[ "$rc" = 0 ] && return 0
	mkdir "$SFBPF_TEST_TMP/build-$k.reported" 2>/dev/null || return 0
	echo "FAIL: build-$k: the $k builder failed (log: $SFBPF_TEST_TMP/build-$k.log):"
	tail -5 "$SFBPF_TEST_TMP/build-$k.log" | sed 's/^/    /'
	return 1
}

# stamp FILE: copies its input, and writes each verdict (PASS, FAIL, SKIP)
# to FILE after the seconds since the test began: where a test's time goes,
# case by case, in a run of the whole suite (loaded as no run alone is).
stamp() {
	local line t0=$SECONDS
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		case $line in PASS:* | FAIL:* | SKIP:*) printf '%s %s\n' $((SECONDS - t0)) "${line:0:160}" >>"$1" ;; esac
	done
}

# run_one TEST [LANE]: runs TEST and prints its report; its counts, "P F S",
# go to NAME.counts for the totals.
run_one() {
	local t=$1 name k start out rc p f s bf=0
	name=$(basename "$t" .test)
	for k in "${KINDS[@]}"; do
		needs "$k" "$t" || continue
		await_builder "$k" || bf=$((bf + 1))
	done
	echo "== $name${2:+ ($2 lane)}"
	out="$SFBPF_TEST_TMP/$name.out"
	start=$SECONDS
	# Its CPU time too (user + system, of the processes it waited for): on 2
	# CPUs the suite is CPU-bound, and a lane's wall time hides which tests
	# cost the machine the most. A builder or a fetch of this shell's that
	# ends meanwhile is counted in it too (v8profile's 1018 s in a new
	# machine's run: the prefetched roots').
	local TIMEFORMAT='%U %S' cpu=
	{ time { bash "$t" 2>&1; echo $? >"$out.rc"; } | stamp "$out.times" >"$out"; } 2>"$out.cpu"
	read -r rc <"$out.rc" || rc=1
	cpu=$(awk 'NF == 2 { printf ", CPU %.0fs", $1 + $2 }' "$out.cpu")
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
	echo "   $name: $p passed, $f failed, $s skipped ($((SECONDS - start))s$cpu)"
	echo "$p $((f + bf)) $s" >"$SFBPF_TEST_TMP/$name.counts"
}

# Two lanes. A test with a "# lane: side" line runs in the second lane,
# beside the others: it reads nothing of the machine as a whole and changes
# no machine-wide setting (the parsers, fuzzers and cross builds; the
# kernels' guests under qemu; tests that profile only their own processes
# with -p, as a second user's session would). Tests that profile the whole
# machine stay in the main lane; those that set its sysctls run alone
# (below). Every test
# must hold on a busy machine anyway (LOAD above, make proof). On 2 CPUs the
# suite was half idle in one lane. SFBPF_LANES=1: one lane, in the order
# given.
# A test with "# lane: alone" changes a machine-wide setting (bench's and
# offcpu's sysctls: the sampling rate limit, the stack depth), which would
# change what the other lane's tests measure, or have their events refused:
# it runs after the main lane, once the side lane has nothing left but
# quiet tests, those whose lane line says "no BPF program" (parsers,
# fuzzers, cross builds: no event, no program, no sysctl), or has ended.
# The side lane runs its quiet tests that need no builder first, then the
# others that need none, then those that do, quiet ones last: so the
# tests that run alone overlap the side lane's quiet tail.
main_tests=() side_tests=() alone_tests=()
quiet() { grep -q '^# lane: side (.*no BPF program' "$1"; }
wants_builder() {
	local k
	for k in "${KINDS[@]}"; do needs "$k" "$1" && return 0; done
	return 1
}
side_order=()
for t in "${tests[@]}"; do
	if [ "${SFBPF_LANES:-2}" != 1 ] && grep -q '^# lane: side' "$t"; then
		side_tests+=("$t")
	elif [ "${SFBPF_LANES:-2}" != 1 ] && grep -q '^# lane: alone' "$t"; then
		alone_tests+=("$t")
	else
		main_tests+=("$t")
	fi
done
for pass in quiet-free loud-free loud-built quiet-built; do
	for t in "${side_tests[@]}"; do
		case $pass in
		quiet-free) quiet "$t" && ! wants_builder "$t" && side_order+=("$t") ;;
		loud-free) ! quiet "$t" && ! wants_builder "$t" && side_order+=("$t") ;;
		loud-built) ! quiet "$t" && wants_builder "$t" && side_order+=("$t") ;;
		quiet-built) quiet "$t" && wants_builder "$t" && side_order+=("$t") ;;
		esac
	done
done
side_tests=("${side_order[@]}")
for t in "${tests[@]}"; do rm -f "$SFBPF_TEST_TMP/$(basename "$t" .test).counts"; done
SIDE=$SFBPF_TEST_TMP/lane-side
rm -rf "$SIDE"
mkdir -p "$SIDE"
side_pid=
if [ ${#side_tests[@]} -gt 0 ]; then
	(
		i=0 last_loud=-1
		for t in "${side_tests[@]}"; do
			quiet "$t" || last_loud=$i
			i=$((i + 1))
		done
		# Past the last test that is not quiet: the quiet tail.
		i=0
		for t in "${side_tests[@]}"; do
			[ "$i" -gt "$last_loud" ] && touch "$SIDE/quiet"
			run_one "$t" side >"$SIDE/$i.report" 2>&1
			touch "$SIDE/$i.done"
			i=$((i + 1))
		done
		touch "$SIDE/quiet"
	) &
	side_pid=$!
fi
# The side lane's reports, in its order, as each ends.
shown=0
show_side() {
	while [ -e "$SIDE/$shown.done" ]; do
		cat "$SIDE/$shown.report"
		shown=$((shown + 1))
	done
}
for t in "${main_tests[@]}"; do
	run_one "$t"
	show_side
done
if [ ${#alone_tests[@]} -gt 0 ]; then
	# Nothing but quiet tests beside them: the side lane in its quiet tail.
	while [ -n "$side_pid" ] && [ ! -e "$SIDE/quiet" ]; do
		sleep 1
		show_side
	done
	# Nor the builders' and the fetches' load (bench_smoke times things).
	await_children
	for t in "${alone_tests[@]}"; do
		run_one "$t" alone
		show_side
	done
fi
[ -n "$side_pid" ] && wait "$side_pid"
show_side
# Nothing left running behind the suite (a subset that never asked for it).
await_children
passed=0 failed=0 skipped=0
if [ "$(apt_sources)" != "$APT_SOURCES" ]; then
	echo "FAIL: run.sh: the host's apt sources changed while the suite ran:"
	diff <(echo "$APT_SOURCES") <(apt_sources) | sed 's/^/    /'
	failed=1
fi
for t in "${tests[@]}"; do
	c=$SFBPF_TEST_TMP/$(basename "$t" .test).counts
	if [ ! -s "$c" ]; then
		echo "FAIL: $(basename "$t" .test): its lane ended before it reported"
		failed=$((failed + 1))
		continue
	fi
	read -r p f s <"$c"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
echo "logs: $SFBPF_TEST_TMP"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
