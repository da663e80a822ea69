#!/bin/bash
# Issue 47/48 on a 16-CPU non-Debian host: tracefs, young processes at scale;
# see scripts/device/prepare.sh. Results under $OUT.
set -u
R=$(cd "$(dirname "$0")/../.." && pwd)
D=${SFBPF_DEVICE_DIR:-$R/build-release/device}
O=${OUT:-/tmp/devout2}
mkdir -p "$O"
exec > >(tee "$O/log.txt") 2>&1
T=$D/sfbpf-top
PIDS=()
trap 'kill -9 "${PIDS[@]}" 2>/dev/null' EXIT
. /etc/os-release; echo "$PRETTY_NAME $(uname -r) $(nproc) CPUs"; "$T" --version | head -1
echo "tracefs before: $(mount | grep -c tracefs)"
timeout 30 "$T" -v -b -d 1 1 2>&1 >/dev/null | grep -E "tracefs|samples only|mmap"
echo "tracefs after: $(mount | grep -c tracefs)"
stat_of() { awk -v k="$2" '$2 == "stat" && $3 == k { v = $4 } END { print v + 0 }' "$1"; }
score() { # folded
	awk '$1 ~ /^fkrate;/ { s = $1; if ($0 ~ /_sys_clock_gettime_\[k\]/) { clk += $NF
			if (s ~ /^fkrate;_start;.*;main;.*;__vdso_clock_gettime;/ && s !~ /\[(unknown|truncated)\]/) cw += $NF }
		all += $NF; sub(/;ex_spin;.*/, ";ex_spin", s)
		if (s !~ /;ex_spin$/) next; n += $NF
		if (s !~ /\[truncated\]/ && s ~ /;main;ex_a;ex_b;ex_spin$/) c += $NF }
		END { printf "fkrate samples %d; through ex_spin %d, whole %d (%.1f %%); in clock_gettime %d, through the vDSO to main %d\n", all, n, c, n ? 100 * c / n : 0, clk, cw }' "$1"
}
n=$(nproc)
for hz in 499; do
	echo "== rate: $n drivers exec'ing 1 ms workers, 3 s of CPU each, sfbpf-top -F $hz system-wide"
	"$T" -F $hz --folded "$O/rate.folded" --stats 120 >/dev/null 2>"$O/rate.err" & tp=$!; PIDS+=($tp)
	for _ in $(seq 300); do grep -q 'tables loaded' "$O/rate.err" && break; sleep 0.1; done
	sleep 1
	"$D/fkratewarm" work 300
	sleep 1
	t0=$(date +%s.%N)
	for i in $(seq $n); do "$D/fkrated" loop 3 1 "$D/fkrate" & PIDS+=($!); done
	wait "${PIDS[@]:1}" 2>/dev/null
	echo "drivers took $(awk -v a="$t0" -v b="$(date +%s.%N)" "BEGIN { print b - a }") s"
	kill -INT $tp; wait $tp
	score "$O/rate.folded"
	for k in samples drops lifecycle.exec event_drops fork_drops notify_drops stop.outermost stop.no_proc stop.no_mapping stop.no_row stop.read stop.execve stop.kernel_only vma_walks vma_found vma_miss_no_vma vma_miss_not_file vma_miss_no_ident vma_miss_later vma_miss_full vma_over_entry symbol_kernel_named; do
		printf '%s=%s ' $k "$(stat_of "$O/rate.err" $k)"
	done; echo
	grep -vE "^sfbpf: stat" "$O/rate.err" | grep -v "table" | head -5
done
PIDS=()
echo "== exec storm: $((n / 2)) busy loops, $((n / 2)) shells running /bin/true, -F 999 system-wide 10 s"
for i in $(seq $((n / 2))); do "$D/spin" spin 60 & PIDS+=($!); done
for i in $(seq $((n / 2))); do sh -c 'while :; do /bin/true; done' & PIDS+=($!); done
timeout 60 "$T" -b -F 999 --stats --folded "$O/all.folded" 10 >/dev/null 2>"$O/all.err" & tt=$!
sleep 9; grep -E 'VmHWM' /proc/$tt/status /proc/$(pgrep -P $tt | head -1)/status 2>/dev/null; wait $tt; echo "rc=$?"
for k in samples drops lifecycle.exec event_drops fork_drops stop.outermost stop.no_proc stop.no_mapping stop.no_row stop.read stop.execve stop.kernel_only vma_walks vma_found vma_miss_no_vma vma_miss_not_file vma_miss_no_ident vma_miss_later; do
	printf '%s=%s ' $k "$(stat_of "$O/all.err" $k)"
done; echo
echo "true samples: $(awk '/^true;/ {s+=$NF} END {print s+0}' "$O/all.folded"), of them [truncated] or [unknown]: $(awk '/^true;/ && /\[(truncated|unknown)\]/ {s+=$NF} END {print s+0}' "$O/all.folded")"
echo "sh samples: $(awk '/^sh;/ {s+=$NF} END {print s+0}' "$O/all.folded"), [truncated]: $(awk '/^sh;/ && /\[truncated\]/ {s+=$NF} END {print s+0}' "$O/all.folded")"
echo done
