#!/usr/bin/env bash
# A real ./configure (GNU grep from Debian's source package: a shell that
# forks for every $(...), hundreds of gcc, cc1, as and ld runs of a few
# milliseconds each) profiled at once by sfbpf-top and two perf record
# --call-graph dwarf, all at 99 Hz, all from its first instruction (perf
# forks it and it joins the cgroup they watch before it execs):
#   perf      perf's default for a command: a clock per task, inherited by
#             each child from zero, so a process is sampled only once it has
#             run 10 ms of CPU time, which is most of a configure's
#             processes' lives: a third of the samples, not the same ones;
#   perf-cpu  a clock per CPU counting while the cgroup's tasks run (-a -G),
#             as sfbpf-top's (--cgroup): the same samples.
# The share of stacks complete in each, overall and for cc1, as, ld and the
# configure shell (bash, which configure runs itself again under): complete
# when it holds libc's entry of a process or a thread (compile.sh's rule) or
# ends at _start (a process still in ld.so's start-up, before libc's entry is
# on the stack; perf names that frame _start too). sfbpf-top as it is (A)
# and with SFBPF_NO_FORK_COPY=1 SFBPF_DISABLE_FEATURES=find_vma (B: forks and
# exec'd processes wait for the loader's read, as before issue 47),
# alternated, REPS times. Each run starts a new sfbpf-top with no table
# cache: cold.
#
#   sudo scripts/bench/configure-ab.sh [REPS]      (default 3)
#
# SFBPF_BENCH_KEEP=DIR keeps each run's stacks (rREPMODE.folded, .perf.txt)
# and sfbpf-top's counters (.stats) there.
#
# Run on its own, like coldstart-ab.sh (not part of make bench: its source
# package is fetched from Debian's deb-src, as build-zstd.sh's is). Prints one
# line per run and the medians; docs/BENCHMARKS.md, section 8b, has the
# numbers.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOP=${SFBPF_BUILD:-$ROOT/build}/sfbpf-top
CACHE=${SFBPF_BENCH_CACHE:-/var/cache/sfbpf/bench}/src-grep
REPS=${1:-3}
HZ=99
TMP=$(mktemp -d /tmp/sfbpf-configure.XXXXXX)
CGROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=$CGROOT/sfbpf-bench-configure.$$
ENTRY='^(__libc_start_call_main|__libc_start_main(_impl|_alias_2)?|start_thread|clone3|__clone3|__clone_internal)$'
# Child cgroups only ("$CG"/*/: the control files are no directories); under -e
# a failing rmdir ended the trap with 1 before the temporary files went.
trap 'rmdir "$CG"/*/ "$CG" 2>/dev/null || true; rm -rf "$TMP"' EXIT

log() { echo "configure-ab: $*" >&2; }
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
[ -x "$TOP" ] || { log "$TOP not built (make)"; exit 1; }
[ -n "$CGROOT" ] && mkdir "$CG" || { log "no cgroup v2 directory"; exit 1; }
# No cache yet: find fails, and under pipefail that would end the script here.
SRC=$({ find "$CACHE" -maxdepth 2 -name configure -path '*/grep-*' 2>/dev/null || true; } | head -1)
if [ -z "$SRC" ]; then
	mkdir -p "$CACHE"
	# Debian's source packages through a private apt configuration (lib.sh), as build-zstd.sh's.
	source_apt "${SFBPF_BENCH_CACHE:-/var/cache/sfbpf/bench}/apt" || exit 1
	(cd "$CACHE" && apt-get "${SOURCE_APT[@]}" source grep >get.log 2>&1) ||
		{ log "apt-get source grep failed: $(tail -1 "$CACHE/get.log")"; exit 1; }
	SRC=$(find "$CACHE" -maxdepth 2 -name configure -path '*/grep-*' | head -1)
fi
SRC=$(dirname "$SRC")

# share FILE KIND: "all=N/C cc1=N/C as=N/C ld=N/C shell=N/C" (samples/complete).
share() {
	awk -v kind="$2" -v entry="$ENTRY" '
	function add(comm, n, done,   k) {
		# The shell: configure runs itself again under bash (CONFIG_SHELL), its subshells too.
		k = comm == "cc1" || comm == "as" || comm == "ld" ? comm : comm ~ /^(configure|bash|sh|dash)$/ ? "shell" : ""
		tot["all"] += n; ok["all"] += done ? n : 0
		if (k != "") { tot[k] += n; ok[k] += done ? n : 0 }
	}
	kind == "sfbpf" {
		n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); done = k >= 2 && f[2] == "_start"
		for (i = 2; i <= k; i++) if (f[i] ~ entry) done = 1
		add(f[1], n, done); next
	}
	kind == "perf" && /^[^ \t]/ { comm = $1; in_s = 1; done = 0; last = ""; next }
	kind == "perf" && NF >= 2 && in_s { if ($2 ~ entry) done = 1; last = $2; next }
	kind == "perf" && NF == 0 && in_s { add(comm, 1, done || last == "_start"); in_s = 0 }
	END {
		if (in_s) add(comm, 1, done || last == "_start")
		split("all cc1 as ld shell", ks, " ")
		for (i = 1; i <= 5; i++) printf "%s=%d/%d ", ks[i], tot[ks[i]], ok[ks[i]]
	}' "$1"
}

# run REP MODE: one configure under the three profilers.
run() {
	local rep=$1 mode=$2 w=$TMP/src env=() tp pc ctl ack reply cg
	[ "$mode" = B ] && env=(SFBPF_NO_FORK_COPY=1 SFBPF_DISABLE_FEATURES=find_vma)
	rm -rf "$w"
	cp -a "$SRC" "$w"
	cg=$CG/r$rep$mode
	mkdir "$cg"
	env "${env[@]}" "$TOP" -v --no-table-cache --cgroup "$cg" -U -F $HZ --stats \
		--folded "$TMP/folded" >/dev/null 2>"$TMP/top.err" &
	tp=$!
	for _ in $(seq 600); do
		grep -q "^sfbpf: tables loaded in " "$TMP/top.err" 2>/dev/null && break
		sleep 0.1
	done
	# perf per CPU on the cgroup (-G: its path under the cgroup2 root), enabled before the run.
	rm -f "$TMP/ctl" "$TMP/ack"
	mkfifo "$TMP/ctl" "$TMP/ack"
	perf record --no-bpf-event -q -B -N -D -1 --control "fifo:$TMP/ctl,$TMP/ack" -e cpu-clock -a \
		-G "${cg#"$CGROOT"/}" -F $HZ --call-graph dwarf -o "$TMP/perfcg.data" >"$TMP/perfcg.log" 2>&1 &
	pc=$!
	exec {ctl}<>"$TMP/ctl" {ack}<>"$TMP/ack"
	echo enable >&"$ctl"
	if ! read -r -t 60 -u "$ack" reply || [ "$reply" != ack ]; then
		log "perf -a -G did not start: $(tail -2 "$TMP/perfcg.log")"
		kill -INT $tp $pc
		exit 1
	fi
	exec {ctl}>&- {ack}>&-
	# shellcheck disable=SC2016 # the inner shell's $$ and $1
	(cd "$w" && perf record --no-bpf-event -q -B -N -F $HZ --call-graph dwarf -o "$TMP/perf.data" \
		-- sh -c 'echo $$ >"$1/cgroup.procs" && exec ./configure --quiet' sh "$cg") \
		>"$TMP/configure.log" 2>&1 || { log "configure failed: $(tail -2 "$TMP/configure.log")"; kill -INT $tp $pc; exit 1; }
	kill -INT $tp $pc
	wait $tp $pc || true
	rmdir "$cg"
	perf script -i "$TMP/perf.data" -F comm,ip,sym --no-inline >"$TMP/perf.txt" 2>/dev/null
	perf script -i "$TMP/perfcg.data" -F comm,ip,sym --no-inline >"$TMP/perfcg.txt" 2>/dev/null
	echo "configure rep=$rep mode=$mode sfbpf: $(share "$TMP/folded" sfbpf)perf: $(share "$TMP/perf.txt" perf)perf-cpu: $(share "$TMP/perfcg.txt" perf)"
	if [ -n "${SFBPF_BENCH_KEEP:-}" ]; then
		mkdir -p "$SFBPF_BENCH_KEEP"
		cp "$TMP/folded" "$SFBPF_BENCH_KEEP/r$rep$mode.folded"
		cp "$TMP/perf.txt" "$SFBPF_BENCH_KEEP/r$rep$mode.perf.txt"
		cp "$TMP/perfcg.txt" "$SFBPF_BENCH_KEEP/r$rep$mode.perfcpu.txt"
		cp "$TMP/top.err" "$SFBPF_BENCH_KEEP/r$rep$mode.stats"
	fi
	rm -f "$TMP"/perf*.data "$TMP"/perf*.txt "$TMP/folded"
}

log "grep's ./configure ($(basename "$SRC")), $REPS x A (as built) and B (no fork copies, no VMAs found in the kernel), alternated"
for ((r = 0; r < REPS; r++)); do
	run "$r" A
	run "$r" B
done | tee "$TMP/raw"
awk '
function pct(s,   a) { split(s, a, "/"); return a[1] ? 100 * a[2] / a[1] : 0 }
function med(arr, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && arr[j - 1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j - 1]; arr[j - 1] = t }
	return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
{
	m = $3; sub(/mode=/, "", m); side = ""
	for (i = 4; i <= NF; i++) {
		if ($i == "sfbpf:" || $i == "perf:" || $i == "perf-cpu:") { side = $i; continue }
		split($i, kv, "="); k = m " " side " " kv[1]
		v[k, ++n[k]] = pct(kv[2]); keys[k] = 1
	}
}
END {
	split("all cc1 as ld shell", ks, " ")
	for (mi = 1; mi <= 2; mi++) {
		m = mi == 1 ? "A" : "B"; line = "median complete, " m ":"
		for (i = 1; i <= 5; i++) {
			ka = m " sfbpf: " ks[i]; kb = m " perf: " ks[i]; kc = m " perf-cpu: " ks[i]
			delete a; delete b; delete c
			for (j = 1; j <= n[ka]; j++) a[j] = v[ka, j]
			for (j = 1; j <= n[kb]; j++) b[j] = v[kb, j]
			for (j = 1; j <= n[kc]; j++) c[j] = v[kc, j]
			line = line sprintf(" %s sfbpf %.1f %% perf %.1f %% perf-cpu %.1f %%;", ks[i],
				med(a, n[ka]), med(b, n[kb]), med(c, n[kc]))
		}
		print line
	}
}' "$TMP/raw"
