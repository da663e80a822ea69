#!/usr/bin/env bash
# Two builds of sfbpf side by side on cc1's cold start (issue #27), the
# runs alternated so that both see the same machine:
#   scripts/bench/coldstart-ab.sh BUILD_A BUILD_B [REPS]
# BUILD_A and BUILD_B are build directories (make's build/, of two
# revisions): tests/lifecycle.c of this tree is linked with each one's
# libsfbpf.a. Each repetition runs a fresh copy of gcc's cc1 (one byte
# appended: a file no table was built for) compiling the coldstart input
# under a new driver at 999 Hz, cold (no table cache) and after a restart
# (run once under a driver with a new table cache, then under a new driver
# on that cache), each mode under A then B, or B then A in odd repetitions.
# The driver watches a cgroup of its own that only cc1 joins (--cgroup): the
# machine's other processes, a test suite's exec storm, are not its work.
# Prints one line per run ("ab build=A|B mode=cold|restart entry_ms=...
# first_ms=..."; times from cc1's first sample to the first its process
# entry unwound, and to its first stack complete to main), then the medians.
# Needs root (BPF), gcc's cc1 and a cgroup v2 mount.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] || {
	echo "usage: $0 BUILD_A BUILD_B [REPS]" >&2
	exit 2
}
REPS=${3:-5}
TMP=$(mktemp -d /tmp/sfbpf-coldstart-ab.XXXXXX)
CGROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=$CGROOT/sfbpf-coldstart-ab.$$
CC1=$(gcc -print-prog-name=cc1)
D=
cleanup() {
	[ -n "$D" ] && kill -INT "$D" 2>/dev/null && wait "$D" 2>/dev/null
	rmdir "$CG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
if [ -z "$CGROOT" ] || ! mkdir "$CG"; then
	echo "coldstart-ab: no cgroup v2 directory" >&2
	exit 1
fi
[ -x "$CC1" ] || {
	echo "coldstart-ab: no cc1 ($CC1)" >&2
	exit 1
}
# shellcheck disable=SC2016 # $(LDLIBS) is for make
read -r -a LDLIBS <<<"$(printf 'p:\n\t@echo $(LDLIBS)\n' |
	make -s --no-print-directory -C "$ROOT" -f Makefile -f - p 2>/dev/null)"
for v in A B; do
	b=$1
	[ $v = B ] && b=$2
	gcc -O2 -g -std=gnu11 -D_GNU_SOURCE -I"$b" -I"$ROOT" -I"$ROOT/userspace" \
		"$ROOT/tests/lifecycle.c" "$b/libsfbpf.a" "${LDLIBS[@]}" -lpthread -o "$TMP/driver.$v" || {
		echo "coldstart-ab: tests/lifecycle.c does not build against $b" >&2
		exit 1
	}
done
# About a second of cc1 at -O2 (as scripts/bench.sh's coldstart).
awk 'BEGIN { for (i = 0; i < 150; i++)
	printf "int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { s += a[i] * %d; if (s > %d) s ^= a[(i * 7) %% n]; } for (int j = 0; j < n; j += 2) s -= a[j] >> %d; return s; }\n", i, i % 13 + 1, i * 31, i % 5 + 1 }' >"$TMP/input.i"

driver() { # driver VARIANT CACHE: started, ready
	local i
	rm -f "$TMP/ready"
	SFBPF_TABLE_CACHE=$2 "$TMP/driver.$1" -F 999 -g "$CG" -r "$TMP/ready" -c cc1copy \
		-t "$TMP/trace" >"$TMP/stats" 2>"$TMP/err" &
	D=$!
	for ((i = 0; i < 3000; i++)); do
		[ -e "$TMP/ready" ] && return 0
		kill -0 "$D" 2>/dev/null || break
		sleep 0.1
	done
	echo "coldstart-ab: the driver did not start: $(tail -2 "$TMP/err")" >&2
	exit 1
}
stop() {
	sleep 0.5
	kill -INT "$D"
	wait "$D"
	D=
}
prog() { # cc1's copy, in the cgroup
	(echo "$BASHPID" >"$CG/cgroup.procs" && exec "$TMP/cc1copy" -quiet -O2 "$TMP/input.i" -o /dev/null)
}
run() { # run VARIANT MODE: one line
	local cache=off pid
	{ cat "$CC1"; echo; } >"$TMP/cc1copy"
	chmod +x "$TMP/cc1copy"
	if [ "$2" = restart ]; then
		cache=$TMP/cache
		rm -rf "$cache"
		mkdir -m 0700 "$cache"
		driver "$1" "$cache"
		prog
		stop
	fi
	driver "$1" "$cache"
	prog
	stop
	pid=$(sort -k2,2n "$TMP/trace" | awk '$1 == "T" { p = $3 } END { print p }')
	sort -k2,2n "$TMP/trace" | awk -v v="$1" -v m="$2" -v pid="$pid" '
		$1 != "T" || $3 != pid { next }
		{ n++ }
		n == 1 { t0 = $2 }
		$5 != "no-proc" && e == "" { e = ($2 - t0) / 1e6 }
		$5 == "outermost" && $8 ~ /(^|;)main;/ && f == "" { f = ($2 - t0) / 1e6 }
		END { printf "ab build=%s mode=%s entry_ms=%.1f first_ms=%.1f samples=%d\n", v, m, e, f, n }'
	rm -rf "$TMP/cc1copy" "$TMP/cache" "$TMP/trace"
}
for ((r = 0; r < REPS; r++)); do
	for mode in cold restart; do
		if ((r % 2)); then
			run B $mode
			run A $mode
		else
			run A $mode
			run B $mode
		fi
	done
done | tee "$TMP/lines"
awk '
	function med(k, n,   i, j, t) {
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (v[k, j] < v[k, i]) { t = v[k, i]; v[k, i] = v[k, j]; v[k, j] = t }
		return n % 2 ? v[k, (n + 1) / 2] : (v[k, n / 2] + v[k, n / 2 + 1]) / 2
	}
	{
		split($2, b, "="); split($3, m, "=")
		for (f = 4; f <= 5; f++) {
			split($f, kv, "=")
			k = b[2] " " m[2] " " kv[1]
			v[k, ++c[k]] = kv[2]
		}
	}
	END { for (k in c) printf "median %s %.1f (of %d)\n", k, med(k, c[k]), c[k] }' "$TMP/lines" | sort
