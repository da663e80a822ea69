#!/usr/bin/env bash
# The Java check of one kernel (run in a guest booted by scripts/kernel-vm.sh,
# or on the host): a JVM started with no flag (tests/fixtures/JavaWork.java,
# the host's JDK), profiled by sfbpf-top in the form this kernel loads (5.10:
# the chained walk, the HotSpot step inlined in each link): the main thread's
# stacks whole from the thread's entry through the call stub to JavaWork.main,
# each of the fixture's calls at its line (tests/hsprofile_check.py); then
# --off-cpu on the same JVM: its napper's sleeps under napOuter;napInner. Under
# emulation a JVM is slow: it is given minutes to start. Prints PASS/FAIL/SKIP.
# Usage: tests/kernels/java.sh OUT   (OUT: a directory the JVM may write)
set -u
OUT=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOP=${SFBPF_TOP:-${SFBPF_BUILD:-$ROOT/build}/sfbpf-top}
KVER=$(uname -r)
JAVA=$(readlink -f "$(command -v java 2>/dev/null)" 2>/dev/null)
if [ -z "$JAVA" ] || [ ! -x "${JAVA%/bin/java}/bin/javac" ]; then
	echo "SKIP: $KVER: java: no JDK (default-jdk-headless)"
	exit 0
fi
mkdir -p "$OUT"
rm -rf "$OUT/classes" "$OUT/stop"
if ! "${JAVA%/bin/java}/bin/javac" -d "$OUT/classes" "$ROOT/tests/fixtures/JavaWork.java" \
	>"$OUT/javac.log" 2>&1; then
	echo "FAIL: $KVER: java: javac: $(head -2 "$OUT/javac.log" | tr '\n' ' ')"
	exit 0
fi
"$JAVA" -cp "$OUT/classes" JavaWork "$OUT/stop" >"$OUT/java.out" 2>&1 &
JPID=$!
trap 'kill -KILL $JPID 2>/dev/null; wait 2>/dev/null' EXIT
# The main thread in its loop: JavaWork.outer in jstack-free terms, its CPU time past 2 s.
for ((i = 0; i < 1800; i++)); do
	t=$(awk '{ print $14 + $15 }' "/proc/$JPID/stat" 2>/dev/null)
	[ -n "$t" ] || break
	[ "$t" -ge 200 ] && break
	sleep 0.1
done
"$TOP" -F 199 -p "$JPID" --folded "$OUT/java.folded" --stats 10 >"$OUT/java.top" 2>&1
rc=$?
# Off-CPU, the same JVM: its napper's time blocked in Thread.sleep, the
# Java frames read by the off-CPU program's walk.
"$TOP" --off-cpu -p "$JPID" --folded "$OUT/javaoff.folded" --stats 6 >"$OUT/javaoff.top" 2>&1
orc=$?
: >"$OUT/stop"
if [ $rc -ne 0 ]; then
	echo "FAIL: $KVER: java: sfbpf-top exited $rc: $(tail -3 "$OUT/java.top" | tr '\n' ' ')"
else
	grep -h -E 'unwinder:' "$OUT/java.top" | sed 's/^sfbpf: //'
	python3 "$ROOT/tests/hsprofile_check.py" stacks "$KVER: java" "$OUT/java.folded" \
		"$ROOT/tests/fixtures/JavaWork.java"
fi
if [ $orc -ne 0 ]; then
	echo "FAIL: $KVER: java-offcpu: sfbpf-top --off-cpu exited $orc: $(tail -3 "$OUT/javaoff.top" | tr '\n' ' ')"
else
	python3 "$ROOT/tests/hsprofile_check.py" offcpu "$KVER: java-offcpu" "$OUT/javaoff.folded" \
		"$ROOT/tests/fixtures/JavaWork.java"
fi
