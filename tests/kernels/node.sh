#!/usr/bin/env bash
# The Node.js check of one kernel (run in a guest booted by
# scripts/kernel-vm.sh, or on the host): node started with no flag
# (tests/fixtures/nodework.js, the host's node), profiled by sfbpf-top in the
# form this kernel loads (5.10: the chained walk, V8's frames stepped by fp
# and named in the chain's last link): the main thread's JavaScript at the
# fixture's lines, each caller -> callee pair a call its source makes, its
# stacks whole to the thread's start (tests/v8profile_check.py); then
# --off-cpu: the main thread blocked in Atomics.wait under nap;napHere. Under
# emulation node is slow: it is given minutes to start. Prints PASS/FAIL/SKIP.
# Usage: tests/kernels/node.sh OUT   (OUT: a directory node may write)
set -u
OUT=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOP=${SFBPF_TOP:-${SFBPF_BUILD:-$ROOT/build}/sfbpf-top}
KVER=$(uname -r)
FIX=$ROOT/tests/fixtures/nodework.js
CHECK=$ROOT/tests/v8profile_check.py
NODE=$(command -v node 2>/dev/null || command -v nodejs 2>/dev/null)
if [ -z "$NODE" ]; then
	echo "SKIP: $KVER: node: no node (nodejs)"
	exit 0
fi
mkdir -p "$OUT"
NPID=
trap 'kill -KILL $NPID 2>/dev/null; wait 2>/dev/null' EXIT

# run MODE: node in MODE until killed, NPID once its loop runs (five minutes
# by the clock at most: under emulation node takes one or two).
run() {
	local i
	rm -f "$OUT/$1.ready"
	"$NODE" "$FIX" "$1" 3600 "$OUT/$1.ready" >"$OUT/$1.node" 2>&1 &
	NPID=$!
	for ((i = SECONDS + 300; SECONDS < i; )); do
		[ -s "$OUT/$1.ready" ] && return 0
		kill -0 "$NPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "FAIL: $KVER: node-$1: node did not start: $(tail -2 "$OUT/$1.node" | tr '\n' ' ')"
	kill -KILL "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
	return 1
}

# judge NAME CMD ARGS...: one check of v8profile_check.py.
judge() {
	local name=$1 out
	shift
	if out=$(python3 "$CHECK" "$@" 2>&1); then
		echo "PASS: $KVER: node-$name: $out"
	else
		echo "FAIL: $KVER: node-$name: $out"
	fi
}

if run spin; then
	sleep 1
	if "$TOP" -v -F 199 -p "$NPID" --folded "$OUT/spin.folded" --stats 8 >"$OUT/spin.top" 2>&1; then
		grep -h -E 'unwinder:' "$OUT/spin.top" | sed 's/^sfbpf: //'
		# The chain every sample of the loop has; its leaves may be too rare to see here.
		judge names names "$OUT/spin.folded" "$FIX" spin outer run
		judge calls calls "$OUT/spin.folded" "$FIX"
		judge root root "$OUT/spin.folded" 0.95
	else
		echo "FAIL: $KVER: node: sfbpf-top exited $?: $(tail -3 "$OUT/spin.top" | tr '\n' ' ')"
	fi
	kill -KILL "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
fi
if run nap; then
	sleep 1
	if "$TOP" --off-cpu -p "$NPID" --folded "$OUT/nap.folded" --stats 6 >"$OUT/nap.top" 2>&1; then
		judge offcpu-names names "$OUT/nap.folded" "$FIX" napHere nap
		judge offcpu-root root "$OUT/nap.folded" 0.95
	else
		echo "FAIL: $KVER: node-offcpu: sfbpf-top --off-cpu exited $?: $(tail -3 "$OUT/nap.top" | tr '\n' ' ')"
	fi
fi
