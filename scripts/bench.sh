#!/usr/bin/env bash
# make bench: what sfbpf costs, measured side by side with the alternatives.
#   kcost       kernel time per sample: SFrame unwinder vs frame-pointer walk
#   pycost      kernel time per sample of the Python walk, at 10 and 100 frames:
#               without code-object descriptions, steady and cold
#   slowdown    CPU-bound workloads profiled system-wide: sfbpf, perf -g,
#               perf --call-graph dwarf, none
#   loader      rows/s flattened and pushed, map bytes vs .sframe bytes, time
#               until every process on the machine is covered
#   footprint   sfbpf-top's resident memory while the whole machine is busy
#   throughput  highest sampling rate with no ring-buffer drops
#   offcpu      cost per context switch of the off-CPU program
#   tablecache  a table built cold vs read back from the table cache (restart)
#   coldstart   a big binary's first complete stack, cold, with and without
#               partial tables (the sampled code's rows first)
# Every benchmark prints one "bench: NAME: ..." summary line on stdout; the
# tables, the commands and the machine go to docs/BENCHMARKS.md (with --quick,
# to a file in the temporary directory unless --out is given). Repeated runs,
# medians, configurations alternated within one run: the machine is shared.
#
# Usage: scripts/bench.sh [--quick] [--out FILE] [--only NAME[,NAME...]]
#   --quick  one short repetition of everything (the smoke test: < 1 minute)
# Needs root (BPF, perf events, sysctls), a built tree (make), perf, and for
# the zstd workload network access to Debian's source packages once.
# Environment: SFBPF_BUILD (build/), SFBPF_BENCH_CACHE (/var/cache/sfbpf/bench),
# SFBPF_BINUTILS_CACHE (for gas 2.47, optional), SFBPF_BENCH_REVISION (what
# the report names as the measured revision; default: git describe of ROOT).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
BUILD=${SFBPF_BUILD:-$ROOT/build}
TOP=$BUILD/sfbpf-top
# Every table built, as on a first start: a table read back from the cache
# (tablecache, below) would make the repetitions after the first cheaper.
TOP_OPTS=(--no-table-cache)
BB=$BUILD/bench
BINUTILS=${SFBPF_BINUTILS_CACHE:-/var/cache/sfbpf/binutils}
NCPU=$(nproc)
ALL_PARTS="kcost pycost slowdown loader footprint throughput offcpu srcline tablecache coldstart"

QUICK=0
OUT=
PARTS=$ALL_PARTS
while [ $# -gt 0 ]; do
	case $1 in
	--quick) QUICK=1 ;;
	--out)
		OUT=$2
		shift
		;;
	--only) PARTS=${2//,/ } && shift ;;
	*)
		echo "usage: scripts/bench.sh [--quick] [--out FILE] [--only NAME[,NAME...]]" >&2
		exit 2
		;;
	esac
	shift
done

# Sizes. On 2 idle CPUs the full run takes about 5 minutes (plus building zstd
# once, 1-3 minutes), --quick about 20 s; a loaded machine stretches both.
if [ "$QUICK" = 1 ]; then
	KC_SECS=0.3 KC_REPS=1 KC_STACK_TRIES=30 PC_SECS=0.3 PC_REPS=1
	SD_REPS=1 SD_SETTLE=0.2 SD_WARM=1 MT_ROUNDS=40 CORPUS_MB=4 ZSTD_LEVEL=3
	LD_REPS=1 LD_SYS_REPS=1 BIG_FUNCS=2000
	TP_SECS=0.5 TP_RATES="999"
	OC_ROUNDS=20000 OC_REPS=1
	FP_SECS=3 FP_REPS=1
	CS_REPS=1
else
	KC_SECS=2 KC_REPS=5 KC_STACK_TRIES=300 PC_SECS=2 PC_REPS=5
	SD_REPS=5 SD_SETTLE=0.5 SD_WARM=20 MT_ROUNDS=800 CORPUS_MB=64 ZSTD_LEVEL=3
	LD_REPS=5 LD_SYS_REPS=3 BIG_FUNCS=100000
	TP_SECS=2 TP_RATES="999 1999 4999 9999 19999 49999 99999"
	OC_ROUNDS=200000 OC_REPS=5
	FP_SECS=30 FP_REPS=3
	CS_REPS=5
fi
# coldstart: generated functions in cc1's input (about a second of compiling)
# and in the generated program (about 7 rows each from .eh_frame).
CS_FUNCS=150
CS_BIG_FUNCS=100000
KC_HZ=4999
KC_DEPTHS="8 32 128 512 1024"
# The kernel's frame-pointer walk stops at kernel.perf_event_max_stack frames
# (127 by default): raised to this during kcost, for the deeper depths.
KC_MAX_STACK=1100
SD_CONFIGS="none:0 sfbpf:99 fp:99 dwarf:99 sfbpf:999 fp:999 dwarf:999"

log() { echo "bench: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

if [ "$(id -u)" -ne 0 ]; then
	die "needs root (BPF programs, perf events, sysctls): sudo make bench"
fi
if ! [ -x "$TOP" ] || ! [ -f "$BUILD/libsfbpf.a" ] || ! [ -f "$BUILD/fpwalk.skel.h" ]; then
	die "$BUILD is not built: run make first"
fi
command -v perf >/dev/null || die "perf is not installed (linux-perf)"

TMP=$(mktemp -d /tmp/sfbpf-bench.XXXXXX)
if [ -z "$OUT" ]; then
	if [ "$QUICK" = 1 ]; then OUT=$TMP/BENCHMARKS.md; else OUT=$ROOT/docs/BENCHMARKS.md; fi
fi
MD=$TMP/md
mkdir -p "$MD" "$BB"
BG_PIDS=()
SAVED_MAX_RATE=$(cat /proc/sys/kernel/perf_event_max_sample_rate)

cleanup() {
	local p
	kill_ours -KILL "${BG_PIDS[@]}"
	wait 2>/dev/null || true
	# High sampling rates make the kernel lower this limit; put it back.
	echo "$SAVED_MAX_RATE" >/proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || true
	# kcost raises the frame-pointer walk's limit: put it back if it could not.
	if [ -n "${KC_SAVED_STACK:-}" ] &&
		[ "$(cat /proc/sys/kernel/perf_event_max_stack)" != "$KC_SAVED_STACK" ] &&
		! set_max_stack "$KC_SAVED_STACK"; then
		log "kernel.perf_event_max_stack is still $(cat /proc/sys/kernel/perf_event_max_stack)" \
			"(busy): restore it with sysctl kernel.perf_event_max_stack=$KC_SAVED_STACK"
	fi
	# Keep the temporary directory only when the report was written into it.
	case $OUT in
	"$TMP"/*) ;;
	*) rm -rf "$TMP" ;;
	esac
}
trap cleanup EXIT

# --- helpers -----------------------------------------------------------------

# awk functions shared by the summaries (mawk has no asort).
AWK_LIB='
function sortn(a, n,    i, j, v) {
	for (i = 2; i <= n; i++) {
		v = a[i] + 0
		# (+ 0: values read by kv() are strings, which awk compares as text.)
		for (j = i - 1; j >= 1 && a[j] + 0 > v; j--)
			a[j + 1] = a[j]
		a[j + 1] = v
	}
}
function median(a, n,    b, i) {
	if (n == 0)
		return "nan"
	for (i = 1; i <= n; i++)
		b[i] = a[i]
	sortn(b, n)
	return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
}
function kv(s, key,    i, f, n) {
	n = split(s, f, " ")
	for (i = 1; i <= n; i++)
		if (index(f[i], key "=") == 1)
			return substr(f[i], length(key) + 2)
	return ""
}
function pct(x) { return sprintf("%+.1f %%", x * 100) }
'

# cpu_split PID: CPU time so far of PID's main thread and of its other threads
# (sfbpf-top's table builders), in ns (scheduler clock): "MAIN OTHER".
cpu_split() {
	local t v main=0 other=0
	for t in /proc/"$1"/task/*; do
		read -r v _ 2>/dev/null <"$t/schedstat" || continue
		if [ "${t##*/}" = "$1" ]; then main=$v; else other=$((other + v)); fi
	done
	echo "$main $other"
}

# forks: processes created on the machine since boot (/proc/stat).
forks() {
	awk '$1 == "processes" { print $2 }' /proc/stat
}

# map_bytes PID: kernel memory (memlock) of the BPF maps PID holds open.
map_bytes() {
	local f k v id mem sum=0 seen=" "
	for f in /proc/"$1"/fdinfo/*; do
		id='' mem=''
		while read -r k v _; do
			case $k in
			map_id:) id=$v ;;
			memlock:) mem=$v ;;
			esac
		done 2>/dev/null <"$f" || continue
		if [ -z "$id" ] || [ -z "$mem" ]; then
			continue
		fi
		case $seen in *" $id "*) continue ;; esac
		seen+="$id "
		sum=$((sum + mem))
	done
	echo "$sum"
}

# secs NS: nanoseconds as seconds with 6 decimals.
secs() {
	local us=$(($1 / 1000))
	printf '%d.%06d\n' $((us / 1000000)) $((us % 1000000))
}

# bpf_sum PID FIELD: sum of FIELD (run_time_ns, run_cnt) over the BPF
# programs PID holds (kernel BPF statistics must be on for them to count).
bpf_sum() {
	local f k v id x sum=0 seen=" "
	for f in /proc/"$1"/fdinfo/*; do
		id='' x=''
		while read -r k v _; do
			case $k in
			prog_id:) id=$v ;;
			"$2:") x=$v ;;
			esac
		done 2>/dev/null <"$f" || continue
		if [ -z "$id" ] || [ -z "$x" ]; then
			continue
		fi
		case $seen in *" $id "*) continue ;; esac
		seen+="$id "
		sum=$((sum + x))
	done
	echo "$sum"
}

# stat_of FILE NAME: value of "sfbpf: stat NAME VALUE" in FILE (0 if absent).
stat_of() {
	awk -v n="$2" '$1 == "sfbpf:" && $2 == "stat" && $3 == n { v = $4 } END { print v + 0 }' "$1"
}

# stop_pid PID SIG: sends SIG, waits up to 60 s for PID to exit (then KILLs
# it: a profiler stuck at exit must not hang the benchmark), reaps it.
stop_pid() {
	local pid=$1 sig=$2 i
	kill -"$sig" "$pid" 2>/dev/null || true
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		# a zombie is gone for our purpose
		[ "$(awk '{ print $3 }' /proc/"$pid"/stat 2>/dev/null)" = Z ] && break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null && [ "$(awk '{ print $3 }' /proc/"$pid"/stat 2>/dev/null)" != Z ]; then
		log "process $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)) ignored SIG$sig for 60 s: killed"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	forget "$pid"
}

# forget PID: PID was waited for; never signal that number again (reuse).
forget() {
	local p keep=()
	for p in "${BG_PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	BG_PIDS=("${keep[@]}")
}

# spawn_stats: kernel BPF run-time statistics on until stop_spawned.
spawn_stats() {
	local i
	"$BB/benchutil" hold-stats >"$TMP/stats.on" &
	BG_PIDS+=("$!")
	for ((i = 0; i < 500; i++)); do
		grep -c 'stats on' "$TMP/stats.on" >/dev/null 2>&1 && return 0
		sleep 0.01
	done
	log "cannot turn BPF statistics on"
	return 1
}

spawn() { # spawn CMD...: background process, killed at exit; sets SPAWNED
	"$@" >/dev/null 2>&1 &
	SPAWNED=$!
	BG_PIDS+=("$SPAWNED")
}

# --- build the workloads -----------------------------------------------------

CC=${CC:-gcc}
WARN=(-Wall -Wextra -Werror)
# The drivers link build/libsfbpf.a: with the libraries the Makefile links it with.
# shellcheck disable=SC2016 # $(LDLIBS) is for make
LDLIBS=$(printf 'sfbpf-print-ldlibs:\n\t@echo $(LDLIBS)\n' |
	make -s --no-print-directory -C "$ROOT" -f Makefile -f - sfbpf-print-ldlibs 2>/dev/null) ||
	LDLIBS="-lbpf -ldw -lelf -lz"
read -r -a LDLIBS <<<"$LDLIBS"

# build_driver PART SRC [DEP...]: the C driver SRC built into $BB/NAME (SRC's
# base name without .c), linked with build/libsfbpf.a, unless it is newer than
# SRC, the library and the DEPs; DRIVER_CFLAGS adds flags (an array). A driver
# that does not build against this tree prints its errors and "bench: PART:
# FAILED", and returns 1.
DRIVER_CFLAGS=()
build_driver() {
	local part=$1 src=$2 name
	shift 2
	name=$(basename "$src" .c)
	up_to_date "$BB/$name" "$src" "$BUILD/libsfbpf.a" "$@" && return 0
	"$CC" "${WARN[@]}" -O2 -g -std=gnu11 -D_GNU_SOURCE "${DRIVER_CFLAGS[@]}" -I"$BUILD" \
		-I"$ROOT" -I"$ROOT/userspace" "$src" "$BUILD/libsfbpf.a" "${LDLIBS[@]}" -o "$BB/$name" \
		2>"$TMP/$name.build" && return 0
	cat "$TMP/$name.build" >&2
	echo "bench: $part: FAILED (${src#"$ROOT"/} does not build against this tree)"
	return 1
}


build_workloads() {
	local src=$ROOT/tests/bench big=$BB/bigsframe.$BIG_FUNCS
	# The workloads profiled without frame pointers carry SFrame (system gas:
	# V1); the frame-pointer reference carries no SFrame.
	up_to_date "$BB/recurse.sframe" "$src/recurse.c" ||
		"$CC" "${WARN[@]}" -O2 -g -fomit-frame-pointer -Wa,--gsframe "$src/recurse.c" -o "$BB/recurse.sframe"
	up_to_date "$BB/recurse.fp" "$src/recurse.c" ||
		"$CC" "${WARN[@]}" -O2 -g -fno-omit-frame-pointer "$src/recurse.c" -o "$BB/recurse.fp"
	# The slowdown workload has both, so every profiler sees whole stacks.
	up_to_date "$BB/mtwork" "$src/mtwork.c" ||
		"$CC" "${WARN[@]}" -O2 -g -pthread -fno-omit-frame-pointer -Wa,--gsframe "$src/mtwork.c" \
			-o "$BB/mtwork"
	up_to_date "$BB/benchutil" "$src/benchutil.c" ||
		"$CC" "${WARN[@]}" -O2 -g -std=gnu11 -D_GNU_SOURCE "$src/benchutil.c" -o "$BB/benchutil"
	build_driver kcost "$src/kcost.c" "$BUILD/fpwalk.skel.h" || return 1
	# A program with a large .sframe section: BIG_FUNCS generated functions.
	if ! up_to_date "$big.v1" "$src/bigsframe.awk" "$src/idle.c"; then
		log "generating $BIG_FUNCS functions for the loader benchmark"
		awk -v n="$BIG_FUNCS" -f "$src/bigsframe.awk" >"$TMP/big.s"
		"$CC" -O2 -Wa,--gsframe "$src/idle.c" "$TMP/big.s" -o "$big.v1"
		# V3 too, if scripts/build-binutils.sh has built gas 2.47.
		rm -f "$big.v3"
		if [ -x "$BINUTILS/2.47/bin/as" ]; then
			"$CC" -O2 -B"$BINUTILS/2.47/bin/" -Wa,--gsframe "$src/idle.c" "$TMP/big.s" \
				-o "$big.v3" || rm -f "$big.v3"
		fi
		rm -f "$TMP/big.s"
	fi
}

# find_zstd: sets ZSTD to the zstd built by scripts/bench/build-zstd.sh, or "".
# The quick run never downloads or builds it (it uses it when cached) unless
# SFBPF_BENCH_BUILD_ZSTD=1.
find_zstd() {
	if [ "$QUICK" = 1 ] && [ -z "${SFBPF_BENCH_BUILD_ZSTD:-}" ]; then
		ZSTD=$(SFBPF_BENCH_OFFLINE=1 "$ROOT/scripts/bench/build-zstd.sh" 2>/dev/null) || ZSTD=
	else
		ZSTD=$("$ROOT/scripts/bench/build-zstd.sh") || ZSTD=
	fi
	[ -n "$ZSTD" ] || log "zstd not available (scripts/bench/build-zstd.sh): workloads without it"
}

# stop_spawned: ends the workloads a benchmark left running.
stop_spawned() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	BG_PIDS=()
}

# --- 1. kernel cost per sample ------------------------------------------------

# set_max_stack N: sets kernel.perf_event_max_stack. The kernel refuses
# (EBUSY) while any perf event or BPF program holds callchain buffers, which
# are sized by it: tries every 0.1 s, KC_STACK_TRIES times (30 s; 3 s with
# --quick), as other tracers may come and go.
set_max_stack() {
	local i
	for ((i = 0; i < KC_STACK_TRIES; i++)); do
		echo "$1" 2>/dev/null >/proc/sys/kernel/perf_event_max_stack && return 0
		sleep 0.1
	done
	return 1
}

bench_kcost() {
	local raw=$TMP/kcost.txt rc=0
	log "kcost: unwinder vs fpwalk, ${KC_DEPTHS// /, } frames, $KC_REPS x ${KC_SECS}s at $KC_HZ Hz"
	KC_SAVED_STACK=$(cat /proc/sys/kernel/perf_event_max_stack)
	KC_STACK_NOTE="raised from $KC_SAVED_STACK to $KC_MAX_STACK for this part, restored after"
	[ "$KC_SAVED_STACK" -ge "$KC_MAX_STACK" ] && KC_STACK_NOTE="$KC_SAVED_STACK"
	if [ "$KC_SAVED_STACK" -lt "$KC_MAX_STACK" ] && ! set_max_stack "$KC_MAX_STACK"; then
		KC_STACK_NOTE="$KC_SAVED_STACK: could not be raised (busy: other perf or BPF users), so the frame-pointer walk stops there"
		log "kcost: kernel.perf_event_max_stack $KC_STACK_NOTE"
	fi
	# shellcheck disable=SC2086
	"$BB/kcost" -d "$KC_SECS" -r "$KC_REPS" -f "$KC_HZ" "$BB/recurse.sframe" "$BB/recurse.fp" \
		$KC_DEPTHS >"$raw" 2>"$TMP/kcost.err" || rc=1
	# Busy now: the exit handler tries again.
	if [ "$(cat /proc/sys/kernel/perf_event_max_stack)" != "$KC_SAVED_STACK" ]; then
		set_max_stack "$KC_SAVED_STACK" || log "kcost: kernel.perf_event_max_stack busy: tried again at exit"
	fi
	if [ "$rc" != 0 ]; then
		cat "$TMP/kcost.err" >&2
		echo "bench: kcost: FAILED ($(tail -1 "$TMP/kcost.err"))"
		return 1
	fi
	awk "$AWK_LIB"'
	$1 == "kcost" {
		d = kv($0, "frames"); p = kv($0, "prog"); r = kv($0, "rep")
		runs = kv($0, "runs"); smp = kv($0, "samples")
		if (runs == 0 || smp == 0)
			next
		ns[d, p, ++n[d, p]] = kv($0, "run_ns") / runs
		fr[d, p, n[d, p]] = kv($0, "user_frames") / smp
		sm[d, p, n[d, p]] = smp
		stop[d, p] = kv($0, "stop")
		per[d, r, p] = ns[d, p, n[d, p]]
		if (!((d, r) in seen)) { seen[d, r] = 1; reps[d] = reps[d] " " r }
		if (!(d in dseen)) { dseen[d] = 1; depths[++nd] = d }
	}
	END {
		for (i = 1; i <= nd; i++) dd[i] = depths[i] + 0
		sortn(dd, nd)
		print "| target frames | frames/sample SFrame / FP | SFrame ns/sample | FP ns/sample | ratio | SFrame ns/frame | FP ns/frame | samples per repetition SFrame / FP | stop (SFrame / FP) |" > md
		print "|---|---|---|---|---|---|---|---|---|" > md
		line = ""
		for (i = 1; i <= nd; i++) {
			d = dd[i]
			for (k = 1; k <= 2; k++) {
				p = k == 1 ? "sframe" : "fp"
				delete a; delete b; delete c
				for (j = 1; j <= n[d, p]; j++) { a[j] = ns[d, p, j]; b[j] = fr[d, p, j]; c[j] = sm[d, p, j] }
				mns[p] = median(a, n[d, p]); mfr[p] = median(b, n[d, p]); msm[p] = median(c, n[d, p])
			}
			m = split(reps[d], rr, " "); delete q; nq = 0
			for (j = 1; j <= m; j++)
				if (((d, rr[j], "sframe") in per) && ((d, rr[j], "fp") in per) && per[d, rr[j], "fp"] > 0)
					q[++nq] = per[d, rr[j], "sframe"] / per[d, rr[j], "fp"]
			ratio = median(q, nq)
			x[i] = mfr["sframe"]; y[i] = mns["sframe"]; xf[i] = mfr["fp"]; yf[i] = mns["fp"]
			printf "| %d | %.1f / %.1f | %.0f | %.0f | **%.2f** | %.1f | %.1f | %d / %d | %s / %s |\n", \
				d, mfr["sframe"], mfr["fp"], mns["sframe"], mns["fp"], ratio, \
				mns["sframe"] / mfr["sframe"], mns["fp"] / mfr["fp"], msm["sframe"], msm["fp"], \
				stop[d, "sframe"], stop[d, "fp"] > md
			line = line sprintf("%s%d frames: SFrame %.0f ns vs FP %.0f ns (x%.2f)", i > 1 ? "; " : "", d, mns["sframe"], mns["fp"], ratio)
			if (d == 32) r32 = ratio
		}
		if (nd >= 2) {
			# Slopes over the frames each unwinder produced (the FP walk may stop early).
			s_sf = (y[nd] - y[1]) / (x[nd] - x[1])
			s_fp = (xf[nd] > xf[1]) ? (yf[nd] - yf[1]) / (xf[nd] - xf[1]) : 0
			printf "\nMarginal cost per frame (slope from %d to %d frames): SFrame %.1f ns, FP %.1f ns", \
				dd[1], dd[nd], s_sf, s_fp > md
			if (nd >= 3) {
				printf "; between depths:" > md
				for (i = 2; i <= nd; i++) {
					sep = i > 2 ? "," : ""
					a_sf = (y[i] - y[i - 1]) / (x[i] - x[i - 1])
					a_fp = xf[i] > xf[i - 1] ? (yf[i] - yf[i - 1]) / (xf[i] - xf[i - 1]) : 0
					printf "%s %d-%d: %.1f / %.1f", sep, dd[i - 1], dd[i], a_sf, a_fp > md
				}
			}
			print "." > md
			line = line sprintf("; per extra frame %.1f vs %.1f ns", s_sf, s_fp)
		}
		if (r32 != "")
			line = line sprintf(" [32 frames: x%.2f, target <= 1.5: %s", r32, r32 <= 1.5 ? "met" : "MISSED")
		if (r32 != "" && nd >= 2 && s_fp > 0)
			line = line sprintf("; per extra frame <= FP: %s", s_sf <= s_fp ? "met" : "MISSED")
		if (r32 != "")
			line = line "]"
		print "bench: kcost: " line
	}' md="$MD/kcost.table" "$raw"
	cp "$raw" "$MD/kcost.raw"
}

# --- 2. slowdown of CPU-bound workloads --------------------------------------

PROF_PID=0
PROF_KIND=none
CTL_FD=
ACK_FD=

# prof_start KIND HZ: KIND none|sfbpf|fp|dwarf, system-wide; returns once sampling.
prof_start() {
	local kind=$1 hz=$2 reply
	PROF_KIND=$kind
	PROF_PID=0
	case $kind in
	none) ;;
	sfbpf)
		# Like perf record: record now, symbolize into a file at exit.
		"$TOP" "${TOP_OPTS[@]}" -F "$hz" --stats --folded "$TMP/prof.folded" >/dev/null 2>"$TMP/prof.err" &
		PROF_PID=$!
		BG_PIDS+=("$PROF_PID")
		if ! "$BB/benchutil" wait-attached "$PROF_PID" "$NCPU" 120 >/dev/null; then
			log "sfbpf-top did not start: $(grep -v '^sfbpf: stat' "$TMP/prof.err" | tail -2)"
			return 1
		fi
		;;
	fp | dwarf)
		local cg=(-g)
		if [ "$kind" = dwarf ]; then cg=(--call-graph dwarf); fi
		rm -f "$TMP/ctl" "$TMP/ack" "$TMP/perf.data"
		mkfifo "$TMP/ctl" "$TMP/ack"
		# Starts disabled; "enable" on the control FIFO is acknowledged once
		# it records. -B -N: no build-id work at exit (outside the timing).
		perf record -q -B -N -a "${cg[@]}" -F "$hz" -D -1 \
			--control "fifo:$TMP/ctl,$TMP/ack" -o "$TMP/perf.data" >"$TMP/prof.err" 2>&1 &
		PROF_PID=$!
		BG_PIDS+=("$PROF_PID")
		exec {CTL_FD}<>"$TMP/ctl" {ACK_FD}<>"$TMP/ack"
		echo enable >&"$CTL_FD"
		if ! read -r -t 60 -u "$ACK_FD" reply || [ "$reply" != ack ]; then
			log "perf record did not start: $(tail -2 "$TMP/prof.err")"
			return 1
		fi
		;;
	esac
	# Past the start-up transient (sfbpf-top notes every process it sees for
	# the first time; perf flushes its initial mmap events): steady state.
	sleep "$SD_SETTLE"
}

prof_stop() {
	if [ "$PROF_PID" = 0 ]; then return 0; fi
	if [ "$PROF_KIND" = sfbpf ]; then
		stop_pid "$PROF_PID" TERM
	else
		stop_pid "$PROF_PID" INT
	fi
	if [ -n "$CTL_FD" ]; then
		exec {CTL_FD}>&- {ACK_FD}>&-
		CTL_FD='' ACK_FD=''
		rm -f "$TMP/ctl" "$TMP/ack" "$TMP/perf.data"
	fi
	PROF_PID=0
}

# run_work NAME: one run of a workload; prints "wall_s=W cpu_s=C".
run_work() {
	case $1 in
	mtwork) "$BB/benchutil" run "$BB/mtwork" "$NCPU" "$MT_ROUNDS" ;;
	zstd) "$BB/benchutil" run "$ZSTD" -q -f -T"$NCPU" -"$ZSTD_LEVEL" "$TMP/corpus" -o /dev/null ;;
	esac
}

# measure_work REP KIND HZ WORK: one run of WORK under the running profiler;
# prints its raw line (wall and CPU time, the profiler's CPU time split into
# main thread and others, BPF run time, processes created on the machine).
measure_work() {
	local p0="0 0" p1="0 0" b0=0 b1=0 f0 f1 out
	if [ "$PROF_PID" != 0 ]; then
		p0=$(cpu_split "$PROF_PID") b0=$(bpf_sum "$PROF_PID" run_time_ns)
	fi
	f0=$(forks)
	out=$(run_work "$4") || return 1
	f1=$(forks)
	if [ "$PROF_PID" != 0 ]; then
		p1=$(cpu_split "$PROF_PID") b1=$(bpf_sum "$PROF_PID" run_time_ns)
	fi
	# Processes and threads created meanwhile on the machine (the
	# workload's too): what the lifecycle and the loader follow.
	echo "rep=$1 kind=$2 hz=$3 work=$4 ${out} main_s=$(secs $((${p1% *} - ${p0% *}))) build_s=$(secs $((${p1#* } - ${p0#* }))) bpf_s=$(secs $((b1 - b0))) forks=$((f1 - f0))"
}

bench_slowdown() {
	local raw=$TMP/slowdown.txt works=mtwork cfgs rep i n c kind hz w drops
	if [ -n "$ZSTD" ]; then
		works="mtwork zstd"
		"$BB/benchutil" corpus $((CORPUS_MB << 20)) >"$TMP/corpus"
	fi
	# BPF run-time statistics on for the whole part (every configuration
	# alike): they give sfbpf's in-kernel time directly.
	spawn_stats || return 1
	# shellcheck disable=SC2206
	cfgs=($SD_CONFIGS)
	n=${#cfgs[@]}
	: >"$raw"
	log "slowdown: ${works// /, } under ${n} configurations, $SD_REPS repetitions"
	for ((rep = 0; rep < SD_REPS; rep++)); do
		for ((i = 0; i < n; i++)); do
			# Rotate the order every repetition: no configuration always
			# runs first, or right after the most expensive one.
			c=${cfgs[(i + rep) % n]}
			kind=${c%:*} hz=${c#*:}
			if ! prof_start "$kind" "$hz"; then
				prof_stop
				echo "bench: slowdown: FAILED (could not start $kind at $hz Hz)"
				return 1
			fi
			for w in $works; do
				measure_work "$rep" "$kind" "$hz" "$w" >>"$raw" || {
					prof_stop
					echo "bench: slowdown: FAILED ($w did not run)"
					return 1
				}
			done
			prof_stop
			if [ "$kind" = sfbpf ]; then
				drops=$(stat_of "$TMP/prof.err" drops)
				[ "$drops" = 0 ] || log "slowdown: sfbpf at $hz Hz dropped $drops samples"
			fi
		done
	done
	# Steady state: one sfbpf-top per rate, running long enough to have the
	# tables of the programs the machine keeps starting (a fresh one builds
	# them all once), then every repetition of the workloads.
	for hz in 99 999; do
		log "slowdown: sfbpf-top at $hz Hz in steady state (${SD_WARM} s after start)"
		if ! prof_start sfbpf "$hz"; then
			prof_stop
			echo "bench: slowdown: FAILED (could not start sfbpf at $hz Hz)"
			return 1
		fi
		sleep "$SD_WARM"
		for ((rep = 0; rep < SD_REPS; rep++)); do
			for w in $works; do
				measure_work "$rep" steady "$hz" "$w" >>"$raw" || {
					prof_stop
					echo "bench: slowdown: FAILED ($w did not run)"
					return 1
				}
			done
		done
		prof_stop
		drops=$(stat_of "$TMP/prof.err" drops)
		[ "$drops" = 0 ] || log "slowdown: sfbpf at $hz Hz (steady state) dropped $drops samples"
	done
	cp "$raw" "$MD/slowdown.raw"
	awk "$AWK_LIB"'
	{
		k = kv($0, "kind"); h = kv($0, "hz"); w = kv($0, "work"); r = kv($0, "rep")
		cfg = k ":" h
		if (!(cfg in cs)) { cs[cfg] = 1; order[++nc] = cfg }
		if (!(w in ws)) { ws[w] = 1; works[++nw] = w }
		j = ++n[cfg, w]
		wl = kv($0, "wall_s"); prof = kv($0, "main_s") + kv($0, "build_s"); b = kv($0, "bpf_s")
		rep[cfg, w, j] = r
		wall[cfg, w, j] = wl
		# The workload and the profiler process (BPF time is charged to the
		# tasks it interrupts: inside the workload CPU time already).
		cpu[cfg, w, j] = kv($0, "cpu_s") + prof
		pcpu[cfg, w, j] = prof / wl
		fr[cfg, w, j] = kv($0, "forks") / wl
		if (k == "none") { bw_rep[r, w] = wl; bc_rep[r, w] = cpu[cfg, w, j] }
		if (k != "sfbpf" && k != "steady")
			next
		# Every run of every workload pooled: sfbpf as a share of the machine.
		m = ++nr[cfg]
		cost[cfg, m] = (prof + b) / (wl * ncpu)
		cbpf[cfg, m] = b / (wl * ncpu)
		cmain[cfg, m] = kv($0, "main_s") / (wl * ncpu)
		cbuild[cfg, m] = kv($0, "build_s") / (wl * ncpu)
		frate[cfg, m] = fr[cfg, w, j]
	}
	function med(arr, cfg, w,    a, j) {
		for (j = 1; j <= n[cfg, w]; j++) a[j] = arr[cfg, w, j]
		return median(a, n[cfg, w])
	}
	function pmed(arr, cfg,    a, j) {
		for (j = 1; j <= nr[cfg]; j++) a[j] = arr[cfg, j]
		return median(a, nr[cfg])
	}
	function pext(arr, cfg, hi,    x, j) {
		x = arr[cfg, 1]
		for (j = 2; j <= nr[cfg]; j++)
			if (hi ? arr[cfg, j] > x : arr[cfg, j] < x) x = arr[cfg, j]
		return x
	}
	# Slowdown of cfg on w: median over repetitions of the ratio to the
	# baseline run of the same repetition (paired: slow drifts of the
	# machine cancel).
	function paired(arr, base, cfg, w,    a, j, m, r) {
		m = 0
		for (j = 1; j <= n[cfg, w]; j++) {
			r = rep[cfg, w, j]
			if ((r, w) in base && base[r, w] > 0) a[++m] = arr[cfg, w, j] / base[r, w] - 1
		}
		return median(a, m)
	}
	# (max - min) / median of the baseline: what the comparisons can resolve.
	function spread(arr, w,    a, j, m) {
		m = n["none:0", w]
		for (j = 1; j <= m; j++) a[j] = arr["none:0", w, j]
		sortn(a, m)
		return m > 1 ? (a[m] - a[1]) / median(a, m) : 0
	}
	function verdict(x, target) { return x <= target ? "met" : "MISSED" }
	END {
		names["none"] = "none"; names["sfbpf"] = "sfbpf-top"; names["fp"] = "perf record -g"
		names["dwarf"] = "perf record --call-graph dwarf"
		names["steady"] = "sfbpf-top, steady state"
		hdr = "| profiler | rate (Hz per CPU) |"; sep = "|---|---|"
		for (i = 1; i <= nw; i++) {
			hdr = hdr sprintf(" %s wall | %s CPU |", works[i], works[i]); sep = sep "---|---|"
		}
		print hdr " profiler process CPU (% of one CPU) | sfbpf: BPF / sampling thread / table building (% of all CPUs) | **sfbpf cost** (% of all CPUs): median (min - max) | processes and threads created per second on the machine |" > md
		print sep "---|---|---|---|" > md
		for (c = 1; c <= nc; c++) {
			cfg = order[c]; split(cfg, kh, ":")
			row = sprintf("| %s | %s |", names[kh[1]], kh[2] == 0 ? "-" : kh[2])
			pc = 0; pf = 0
			for (i = 1; i <= nw; i++) {
				w = works[i]
				pf += med(fr, cfg, w)
				sw[cfg, w] = paired(wall, bw_rep, cfg, w); sc[cfg, w] = paired(cpu, bc_rep, cfg, w)
				if (kh[1] == "none")
					row = row sprintf(" %.3f s | %.3f s |", med(wall, cfg, w), med(cpu, cfg, w))
				else if (kh[1] == "steady")
					row = row " - | - |"
				else
					row = row sprintf(" %s | %s |", pct(sw[cfg, w]), pct(sc[cfg, w]))
				pc += med(pcpu, cfg, w)
			}
			row = row (kh[1] == "none" ? " - |" : sprintf(" %.2f %% |", pc / nw * 100))
			if (kh[1] == "sfbpf" || kh[1] == "steady") {
				dc[cfg] = pmed(cost, cfg)
				row = row sprintf(" %.2f / %.2f / %.2f %% | **%.2f %%** (%.2f - %.2f) |", \
					pmed(cbpf, cfg) * 100, pmed(cmain, cfg) * 100, pmed(cbuild, cfg) * 100, \
					dc[cfg] * 100, pext(cost, cfg, 0) * 100, pext(cost, cfg, 1) * 100)
			} else {
				row = row " - | - |"
			}
			row = row sprintf(" %.0f |", pf / nw)
			print row > md
		}
		printf "\nBaseline spread, (max - min) / median of the runs without a profiler: wall" > md
		for (i = 1; i <= nw; i++) printf " %s %.1f %%%s", works[i], spread(wall, works[i]) * 100, i < nw ? "," : ";" > md
		printf " CPU" > md
		for (i = 1; i <= nw; i++) printf " %s %.1f %%%s", works[i], spread(cpu, works[i]) * 100, i < nw ? "," : ".\n" > md
		for (i = 1; i <= nw; i++)
			if (i == 1 || spread(cpu, works[i]) > noise) noise = spread(cpu, works[i])
		split("sfbpf:99 sfbpf:999 fp:99 fp:999 dwarf:99 dwarf:999", sc_order, " ")
		split("sfbpf,perf -g,perf dwarf", pnames, ",")
		cpul = ""; walll = ""
		for (k = 1; k <= 6; k++) {
			cfg = sc_order[k]; split(cfg, kh, ":")
			pc = ""; pw = ""
			for (i = 1; i <= nw; i++) {
				pc = pc sprintf("%s%+.1f", i > 1 ? "/" : "", sc[cfg, works[i]] * 100)
				pw = pw sprintf("%s%+.1f", i > 1 ? "/" : "", sw[cfg, works[i]] * 100)
			}
			cpul = cpul sprintf("%s%s %s Hz %s %%", k > 1 ? ", " : "", pnames[int((k + 1) / 2)], kh[2], pc)
			if (k <= 2) walll = walll sprintf("%s%s Hz %s %%", k > 1 ? ", " : "", kh[2], pw)
		}
		wl = ""
		for (i = 1; i <= nw; i++) wl = wl (i > 1 ? "/" : "") works[i]
		# The verdict: steady state (what a profiler left running costs); the
		# cost right after a start includes building the tables of every new program.
		s99 = "steady:99"; s999 = "steady:999"
		printf "bench: slowdown: sfbpf cost (BPF + sfbpf-top, share of all CPUs) in steady state %.2f %% at 99 Hz, %.2f %% at 999 Hz [targets 1 %% / 3 %%: %s / %s] (runs %.2f-%.2f / %.2f-%.2f %%; BPF %.2f/%.2f, sampling thread %.2f/%.2f, table building %.2f/%.2f %%; %.0f processes and threads created/s on the machine); right after start %.2f / %.2f %%; CPU time (%s) vs none, paired per repetition: %s [baseline noise %.0f %%: smaller differences are not resolved]; sfbpf wall time %s\n", \
			dc[s99] * 100, dc[s999] * 100, verdict(dc[s99], 0.01), verdict(dc[s999], 0.03), \
			pext(cost, s99, 0) * 100, pext(cost, s99, 1) * 100, \
			pext(cost, s999, 0) * 100, pext(cost, s999, 1) * 100, \
			pmed(cbpf, s99) * 100, pmed(cbpf, s999) * 100, \
			pmed(cmain, s99) * 100, pmed(cmain, s999) * 100, \
			pmed(cbuild, s99) * 100, pmed(cbuild, s999) * 100, \
			(pmed(frate, s99) + pmed(frate, s999)) / 2, \
			dc["sfbpf:99"] * 100, dc["sfbpf:999"] * 100, wl, cpul, noise * 100, walll
	}' md="$MD/slowdown.table" ncpu="$NCPU" "$raw"
	stop_spawned
}

# --- 3. loader ----------------------------------------------------------------

# sfbpf_run OUT ARGS...: runs sfbpf-top ARGS until attached, notes the wall time
# to attach and the BPF map memory, stops it; stats in OUT.
sfbpf_run() {
	local out=$1 t0 ready pid
	shift
	t0=$EPOCHREALTIME
	"$TOP" "${TOP_OPTS[@]}" --stats --folded "$TMP/ld.folded" "$@" >/dev/null 2>"$out" &
	pid=$!
	BG_PIDS+=("$pid")
	ready=$("$BB/benchutil" wait-attached "$pid" "$NCPU" 120) || {
		wait "$pid" || true
		forget "$pid"
		return 1
	}
	ready=${ready#ready_us=}
	echo "sfbpf: stat attach_us $((ready - ${t0/./}))" >>"$out.extra"
	echo "sfbpf: stat bpf_map_bytes $(map_bytes "$pid")" >>"$out.extra"
	stop_pid "$pid" TERM
	cat "$out.extra" >>"$out"
	rm -f "$out.extra"
	# Killed before it printed its counters: no measurement.
	grep -c '^sfbpf: stat samples ' "$out" >/dev/null
}

bench_loader() {
	local raw=$TMP/loader.txt rep f files=() cfi_files=() libc
	: >"$raw"
	build_driver loader "$ROOT/tests/bench/ldcost.c" || return 1
	# One object at a time: a real program, the generated large sections, and
	# for comparison libc, whose table is synthesized from .eh_frame.
	if [ -n "${ZSTD:-}" ]; then files+=("$ZSTD"); fi
	for f in "$BB/bigsframe.$BIG_FUNCS".v1 "$BB/bigsframe.$BIG_FUNCS".v3; do
		if [ -x "$f" ]; then files+=("$f"); fi
	done
	libc=$(ldd "$BB/mtwork" | awk '$1 ~ /^libc\.so/ { print $3 }')
	# Rows from .eh_frame: libc, gcc's cc1 and the largest libLLVM, each also
	# built by the libdw row walk the CFA interpreter replaced
	# (SFBPF_CFI_ROWS=libdw), alternating with the interpreter in every
	# repetition, beside the SFrame objects.
	# (The quick run: libc only.)
	for f in "$libc" /usr/lib/gcc/x86_64-linux-gnu/*/cc1 \
		"$(ls -S /usr/lib/x86_64-linux-gnu/libLLVM-*.so.1 2>/dev/null | head -1)"; do
		if [ -n "$f" ] && [ -f "$f" ] && { [ "$QUICK" = 0 ] || [ "$f" = "$libc" ]; }; then
			cfi_files+=("$f")
		fi
	done
	files+=("${cfi_files[@]}")
	log "loader: ${#files[@]} objects one at a time, $LD_REPS repetitions (and ${#cfi_files[@]} with libdw's rows)"
	for ((rep = 0; rep < LD_REPS; rep++)); do
		"$BB/ldcost" -r 1 "${files[@]}" >>"$raw" 2>"$TMP/ldcost.err" &&
			{ [ ${#cfi_files[@]} -eq 0 ] ||
				SFBPF_CFI_ROWS=libdw "$BB/ldcost" -r 1 "${cfi_files[@]}" >>"$raw" 2>"$TMP/ldcost.err"; } || {
			cat "$TMP/ldcost.err" >&2
			echo "bench: loader: FAILED ($(tail -1 "$TMP/ldcost.err"))"
			return 1
		}
	done
	# The whole machine: the processes running now, then with the
	# SFrame programs above running too (each blocked so it stays put).
	log "loader: the whole system, $LD_SYS_REPS repetitions, without and with the programs above"
	for ((rep = 0; rep < LD_SYS_REPS; rep++)); do
		sfbpf_run "$TMP/ld.out" -U || continue
		echo "system rep=$rep target=as_is $(awk '$1 == "sfbpf:" { printf "%s=%s ", $3, $4 }' "$TMP/ld.out")" >>"$raw"
	done
	if [ -n "${ZSTD:-}" ]; then
		mkfifo "$TMP/zstd.in"
		"$ZSTD" -q -c "$TMP/zstd.in" >/dev/null 2>&1 &
		BG_PIDS+=("$!")
		exec {ZIN}<>"$TMP/zstd.in" # holds the FIFO open: zstd waits for data
	fi
	for f in "$BB/bigsframe.$BIG_FUNCS".v1 "$BB/bigsframe.$BIG_FUNCS".v3; do
		if [ -x "$f" ]; then spawn "$f" 600; fi
	done
	sleep 0.3
	# (The same path as above: the quick run skips it.)
	for ((rep = 0; rep < LD_SYS_REPS && QUICK == 0; rep++)); do
		sfbpf_run "$TMP/ld.out" -U || continue
		echo "system rep=$rep target=with_programs $(awk '$1 == "sfbpf:" { printf "%s=%s ", $3, $4 }' "$TMP/ld.out")" >>"$raw"
	done
	if [ -n "${ZIN:-}" ]; then exec {ZIN}>&-; fi
	stop_spawned
	cp "$raw" "$MD/loader.raw"
	awk "$AWK_LIB"'
	$1 == "ldcost" && kv($0, "cfi_rows") == "libdw" {
		f = kv($0, "file")
		j = ++ln_n[f]
		for (k in ofields) lv[f, k, j] = kv($0, k) + 0
		next
	}
	$1 == "ldcost" {
		f = kv($0, "file")
		if (!(f in fs)) { fs[f] = 1; order[++nf] = f }
		j = ++n[f]
		src[f] = kv($0, "source")
		for (k in ofields) v[f, k, j] = kv($0, k) + 0
	}
	$1 == "system" {
		t = kv($0, "target")
		if (!(t in ts)) { ts[t] = 1; sorder[++nt] = t }
		j = ++sn[t]
		for (k in sfields) sv[t, k, j] = kv($0, k) + 0
	}
	function med(f, k,    a, j) {
		for (j = 1; j <= n[f]; j++) a[j] = v[f, k, j]
		return median(a, n[f])
	}
	function lmed(f, k,    a, j) {
		for (j = 1; j <= ln_n[f]; j++) a[j] = lv[f, k, j]
		return median(a, ln_n[f])
	}
	function smed(t, k,    a, j) {
		for (j = 1; j <= sn[t]; j++) a[j] = sv[t, k, j]
		return median(a, sn[t])
	}
	BEGIN {
		split("rows rules pages table_bytes sframe_bytes load_ns push_ns total_ns", tmp, " ")
		for (i in tmp) ofields[tmp[i]] = 1
		split("processes objects objects_without_table objects_sframe objects_eh_frame rows rows_sframe rows_eh_frame table_bytes sframe_bytes load_us attach_us bpf_map_bytes table_map_bytes table_budget_bytes rss_bytes", tmp, " ")
		for (i in tmp) sfields[tmp[i]] = 1
	}
	END {
		print "| object | unwind data | rows | rules | page index entries | table bytes | .sframe bytes | table / .sframe | bytes per row | build / push / whole load | rows per second |" > md
		print "|---|---|---|---|---|---|---|---|---|---|---|" > md
		for (i = 1; i <= nf; i++) {
			f = order[i]
			rows = med(f, "rows"); tb = med(f, "table_bytes"); sb = med(f, "sframe_bytes")
			# Decode, flatten and push: the whole tables__acquire() call.
			ln = med(f, "total_ns"); bn = med(f, "load_ns"); pn = med(f, "push_ns")
			name = f; sub(".*/", "", name)
			if (name ~ /^bigsframe\./) {
				split(name, parts, ".")
				name = sprintf("generated, %d functions (SFrame %s)", parts[2], parts[3])
			}
			printf "| %s | %s | %d | %d | %d | %d | %s | %s | %s | %.1f / %.2f / %.1f ms | %s |\n", name, \
				(src[f] == "sframe" ? ".sframe" : src[f] == "eh_frame" ? ".eh_frame (synthesized)" : "none"), \
				rows, med(f, "rules"), med(f, "pages"), tb, (sb > 0 ? sb : "-"), \
				(sb > 0 ? sprintf("**%.2f**", tb / sb) : "-"), (rows > 0 ? sprintf("%.2f", tb / rows) : "-"), \
				bn / 1e6, pn / 1e6, ln / 1e6, (ln > 0 ? sprintf("%.2fM", rows / ln * 1000) : "-") > md
			if (src[f] == "sframe" && sb > 0) {
				if (tb / sb > worst) worst = tb / sb
				ratios = ratios sprintf("%s%s x%.2f", ratios == "" ? "" : ", ", name, tb / sb)
				if (rows > maxrows) { maxrows = rows; rate = rows / ln * 1000 }
			}
			# Bytes per row with the page index, without the (shared) rules.
			if (rows > 0) {
				bpr = (rows + med(f, "pages")) * 4 / rows
				if (bpr > worst_bpr) worst_bpr = bpr
			}
		}
		# Rows from CFI: the interpreter and libdw side by side, against SFrame.
		if (rate > 0) {
			print "" > md
			print "| rows from `.eh_frame` | rows | libdw row walk: build / whole load | rows per second | CFA interpreter: build / whole load | rows per second | speedup | interpreter / SFrame rows per second |" > md
			print "|---|---|---|---|---|---|---|---|" > md
		}
		for (i = 1; i <= nf && rate > 0; i++) {
			f = order[i]
			if (src[f] != "eh_frame" || !(f in ln_n)) continue
			name = f; sub(".*/", "", name)
			rows = med(f, "rows"); ln = med(f, "total_ns"); old = lmed(f, "total_ns")
			new_rate = rows / ln * 1000; old_rate = rows / old * 1000
			printf "| %s | %d | %.1f / %.1f ms | %.2fM | %.1f / %.1f ms | %.2fM | x%.1f | **%.2f** |\n", name, rows, \
				lmed(f, "load_ns") / 1e6, old / 1e6, old_rate, med(f, "load_ns") / 1e6, ln / 1e6, new_rate, \
				old / ln, new_rate / rate > md
			cfi = cfi sprintf("%s%s %.2fM (libdw %.2fM, x%.1f)", cfi == "" ? "" : ", ", name, new_rate, old_rate, old / ln)
			if (rows >= 100000 && (cfi_worst == "" || new_rate / rate < cfi_worst)) cfi_worst = new_rate / rate
		}
		print "" > md
		print "| whole system | processes | objects: SFrame / .eh_frame / none | rows: SFrame / .eh_frame | table bytes | table load time (whole run) | start to attached | table maps now / budget | all BPF map memory | sfbpf-top RSS |" > md
		print "|---|---|---|---|---|---|---|---|---|---|" > md
		for (i = 1; i <= nt; i++) {
			t = sorder[i]
			printf "| %s | %d | %d / %d / %d | %d / %d | %d | %.0f ms | %.0f ms | %.1f / %.1f MiB | %.1f MiB | %.1f MB |\n", \
				(t == "as_is" ? "as it is" : "with the programs above running"), smed(t, "processes"), \
				smed(t, "objects_sframe"), smed(t, "objects_eh_frame"), smed(t, "objects_without_table"), \
				smed(t, "rows_sframe"), smed(t, "rows_eh_frame"), smed(t, "table_bytes"), \
				smed(t, "load_us") / 1000, smed(t, "attach_us") / 1000, \
				smed(t, "table_map_bytes") / 1048576, smed(t, "table_budget_bytes") / 1048576, \
				smed(t, "bpf_map_bytes") / 1048576, smed(t, "rss_bytes") / 1e6 > md
			cover[t] = sprintf("%.0f ms (%d processes)", smed(t, "attach_us") / 1000, smed(t, "processes"))
			covms[t] = smed(t, "attach_us") / 1000
			rss = smed(t, "rss_bytes"); if (rss > worst_rss) worst_rss = rss
			tmap[t] = smed(t, "table_map_bytes"); tbudget[t] = smed(t, "table_budget_bytes")
			over_budget += tmap[t] > tbudget[t]
		}
		printf "bench: loader: %.2fM rows/s (%d rows) (target >= 10M: %s); table/.sframe bytes: %s (target <= 0.75: %s); bytes per row with the page index: at most %.2f (target <= 4.5: %s); whole system covered %s after start (target < 1 s: %s)%s\n", \
			rate, maxrows, (rate >= 10 ? "met" : "MISSED"), ratios, (worst <= 0.75 ? "met" : "MISSED"), \
			worst_bpr, (worst_bpr <= 4.5 ? "met" : "MISSED"), cover["as_is"], \
			covms["as_is"] < 1000 ? "met" : "MISSED", \
			("with_programs" in cover) ? sprintf(", %s with the SFrame programs running (%s)", \
				cover["with_programs"], covms["with_programs"] < 1000 ? "met" : "MISSED") : ""
		if (cfi != "")
			printf "bench: loader: rows/s from .eh_frame: %s; SFrame %.2fM rows/s in the same run: %s\n", \
				cfi, rate, (cfi_worst == "" ? "no .eh_frame object of 100k rows or more" : \
				sprintf("objects of 100k rows and more at x%.2f of it at worst (target >= 0.5: %s)", \
					cfi_worst, (cfi_worst >= 0.5 ? "met" : "MISSED")))
		follows = ("with_programs" in tmap) ? (tmap["as_is"] < tmap["with_programs"] && !over_budget) : !over_budget
		printf "bench: tables: sfbpf-top RSS at attach at most %.1f MB; table maps %.1f MiB as it is, %s with the SFrame programs, budget %.1f MiB (target: follows the load, within the budget: %s)\n", \
			worst_rss / 1e6, tmap["as_is"] / 1048576, \
			("with_programs" in tmap) ? sprintf("%.1f MiB", tmap["with_programs"] / 1048576) : "not measured", \
			tbudget["as_is"] / 1048576, (follows ? "met" : "MISSED")
	}' md="$MD/loader.table" "$raw"
}

# --- footprint on a busy machine -------------------------------------------------

# The whole machine profiled the way an SRE leaves sfbpf-top running (the
# batch view: the live view's tables and symbols, without the terminal) while
# it runs an interpreter, a JIT runtime, threads in a program with DWARF
# (inline frames and lines are looked up for every new address) and a stream
# of short-lived processes. sfbpf-top's VmRSS is polled every 0.5 s; VmHWM
# is the peak the kernel saw.
bench_footprint() {
	local raw=$TMP/footprint.txt rep pid st rss max hwm last progs="mtwork" py
	: >"$raw"
	spawn "$BB/mtwork" 1 100000000
	if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
		spawn "$py" -c 'def f(n): return n if n < 2 else f(n - 1) + f(n - 2)
while True: f(22)'
		progs+=", $py"
	fi
	if command -v node >/dev/null; then
		spawn node -e 'function f(n) { return n < 2 ? n : f(n - 1) + f(n - 2) } for (;;) f(22)'
		progs+=", node"
	fi
	spawn perl -e 'sub f { my $n = shift; $n < 2 ? $n : f($n - 1) + f($n - 2) } while (1) { f(18) }'
	spawn sh -c 'while :; do ls -R /usr/include >/dev/null; sleep 0.05; done'
	progs+=", perl, a shell starting ls 20 times a second"
	sleep 1
	for ((rep = 0; rep < FP_REPS; rep++)); do
		"$TOP" "${TOP_OPTS[@]}" -b -d 1 -n 10 --stats "$FP_SECS" >/dev/null 2>"$TMP/footprint.err" &
		pid=$!
		BG_PIDS+=("$pid")
		max=0 hwm=0 last=0
		while st=$(cat "/proc/$pid/status" 2>/dev/null) && [ -n "$st" ]; do
			rss=$(awk '$1 == "VmRSS:" { print $2 }' <<<"$st")
			[ -z "$rss" ] || { last=$rss; [ "$rss" -le "$max" ] || max=$rss; }
			hwm=$(awk '$1 == "VmHWM:" { print $2 }' <<<"$st")
			sleep 0.5
		done
		wait "$pid" || true
		forget "$pid"
		echo "footprint rep=$rep rss_max_kb=$max rss_last_kb=$last hwm_kb=${hwm:-0} $(awk '$1 == "sfbpf:" && $2 == "stat" { v[$3] = $4 } END { printf "samples=%d processes=%d objects=%d", v["samples"], v["processes"], v["objects"] }' "$TMP/footprint.err")" >>"$raw"
	done
	stop_spawned
	echo "$progs" >"$MD/footprint.progs"
	cp "$raw" "$MD/footprint.raw"
	awk "$AWK_LIB"'
	$1 == "footprint" {
		j = ++n
		for (k in f) v[k, j] = kv($0, k) + 0
	}
	function med(k,    a, j) {
		for (j = 1; j <= n; j++) a[j] = v[k, j]
		return median(a, n)
	}
	BEGIN { split("rss_max_kb rss_last_kb hwm_kb samples processes objects", t, " "); for (i in t) f[t[i]] = 1 }
	END {
		if (!n) { print "bench: footprint: FAILED (no run)"; exit 1 }
		print "| runs | samples per run | processes | objects | VmRSS, highest polled | VmRSS at the end | VmHWM (peak) |" > md
		print "|---|---|---|---|---|---|---|" > md
		printf "| %d | %d | %d | %d | %.1f MB | %.1f MB | %.1f MB |\n", n, med("samples"), med("processes"), \
			med("objects"), med("rss_max_kb") / 1000, med("rss_last_kb") / 1000, med("hwm_kb") / 1000 > md
		printf "bench: footprint: sfbpf-top RSS on a busy machine %.1f MB at most, peak %.1f MB (target <= 40 MB: %s)\n", \
			med("rss_max_kb") / 1000, med("hwm_kb") / 1000, (med("rss_max_kb") <= 40000 ? "met" : "MISSED")
	}' md="$MD/footprint.table" "$raw"
}

# --- 4. throughput --------------------------------------------------------------

bench_throughput() {
	local raw=$TMP/throughput.txt rate i pid w0 w1 d t0 t1
	: >"$raw"
	build_driver throughput "$ROOT/tests/bench/progstat.c" || return 1
	# Deep stacks on every CPU: the biggest samples (127 user frames, ~1 KiB).
	for ((i = 0; i < NCPU; i++)); do
		spawn "$BB/recurse.sframe" 600 128
	done
	sleep 0.3
	log "throughput: sfbpf-top system-wide at ${TP_RATES// /, } Hz, ${TP_SECS}s each"
	for rate in $TP_RATES; do
		"$TOP" "${TOP_OPTS[@]}" -F "$rate" --stats --folded "$TMP/tp.folded" >/dev/null 2>"$TMP/tp.err" &
		pid=$!
		BG_PIDS+=("$pid")
		# The program's own counters, read at both ends of a timed window:
		# what happens while sfbpf-top starts or exits does not count.
		if ! "$BB/benchutil" wait-attached "$pid" "$NCPU" 120 >/dev/null ||
			! w0=$("$BB/progstat" "$pid"); then
			stop_pid "$pid" TERM
			echo "rate=$rate rc=1 max_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)" >>"$raw"
			break
		fi
		t0=$EPOCHREALTIME
		sleep "$TP_SECS"
		w1=$("$BB/progstat" "$pid") || w1=$w0
		t1=$EPOCHREALTIME
		stop_pid "$pid" TERM
		d=$(awk -v a="$w0" -v b="$w1" "$AWK_LIB"'BEGIN {
			printf "samples=%d emitted=%d drops=%d", kv(b, "samples") - kv(a, "samples"), \
				kv(b, "emitted") - kv(a, "emitted"), kv(b, "drops") - kv(a, "drops")
		}' </dev/null)
		echo "rate=$rate rc=0 $d exit_drops=$(if grep -c '^sfbpf: stat drops ' "$TMP/tp.err" >/dev/null; then stat_of "$TMP/tp.err" drops; else echo killed; fi) secs=$(secs $(((${t1/./} - ${t0/./}) * 1000))) ncpu=$NCPU max_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)" >>"$raw"
		if [[ $d != *" drops=0" ]]; then
			break
		fi
	done
	echo "$SAVED_MAX_RATE" >/proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || true
	stop_spawned
	cp "$raw" "$MD/throughput.raw"
	awk "$AWK_LIB"'
	{
		r = kv($0, "rate")
		if (kv($0, "rc") != 0) {
			rows = rows sprintf("| %s | sfbpf-top did not start | | | | %s |\n", r, kv($0, "max_rate"))
			next
		}
		ach = kv($0, "samples") / kv($0, "secs") / kv($0, "ncpu")
		rows = rows sprintf("| %s | %.0f | %s | %s | %s | %s |\n", r, ach, kv($0, "emitted"), kv($0, "drops"), \
			kv($0, "exit_drops"), kv($0, "max_rate"))
		if (kv($0, "drops") == 0) { best = r; bestach = ach }
		last = r
	}
	END {
		print "| requested rate (Hz per CPU) | samples taken per second per CPU | emitted in the window | ring-buffer drops in the window | drops over the whole run (sfbpf-top --stats; "killed": it did not exit within 60 s) | kernel limit after the run |" > md
		print "|---|---|---|---|---|---|" > md
		printf "%s", rows > md
		printf "bench: throughput: highest rate with no ring-buffer drops: %s Hz per CPU requested (%.0f samples/s per CPU taken, %d CPUs, 127-frame stacks)%s\n", \
			best == "" ? "none" : best, bestach, ncpu, last == best ? " - the highest rate tried" : ""
	}' md="$MD/throughput.table" ncpu="$NCPU" "$raw"
}

# --- 5. off-CPU ---------------------------------------------------------------

bench_offcpu() {
	local raw=$TMP/offcpu.txt
	: >"$raw"
	# The off-CPU program and its loader (userspace/profile/offcpu.h) are optional
	# parts of the tree: measure them when the build has them.
	if ! [ -f "$ROOT/userspace/profile/offcpu.h" ] || ! [ -f "$BUILD/offcpu.skel.h" ] ||
		! ar t "$BUILD/libsfbpf.a" | grep -cx offcpu.o >/dev/null; then
		printf '| off-CPU program |\n|---|\n| **not yet measured**: this build has no bpf/offcpu.bpf.c |\n' >"$MD/offcpu.table"
		echo "bench: offcpu: not yet measured (the build has no off-CPU program)"
		return 0
	fi
	# Built with SFrame: the driver forks the ping-pong pair, whose stacks the
	# program unwinds at every switch-out.
	DRIVER_CFLAGS=(-fomit-frame-pointer -Wa,--gsframe)
	build_driver offcpu "$ROOT/tests/bench/offcost.c" "$BUILD/offcpu.skel.h" || return 1
	DRIVER_CFLAGS=()
	log "offcpu: pipe ping-pong, $OC_ROUNDS rounds, detached and attached, $OC_REPS repetitions"
	"$BB/offcost" -r "$OC_REPS" -n "$OC_ROUNDS" >"$raw" 2>"$TMP/offcost.err" || {
		cat "$TMP/offcost.err" >&2
		echo "bench: offcpu: FAILED ($(tail -1 "$TMP/offcost.err"))"
		return 1
	}
	cp "$raw" "$MD/offcpu.raw"
	awk "$AWK_LIB"'
	$1 == "offcost" {
		at = kv($0, "attached"); r = kv($0, "rep")
		sw[at, ++n[at]] = kv($0, "ns_per_switch")
		per[r, at] = kv($0, "ns_per_switch")
		if (at == 1) {
			runs = kv($0, "runs"); blocks = kv($0, "blocks")
			run[++m] = runs ? kv($0, "run_ns") / runs : 0
			blk[m] = blocks ? kv($0, "run_ns") / blocks : 0
			fr[m] = blocks ? kv($0, "user_frames") / blocks : 0
			share[m] = runs ? blocks / runs : 0
			drops += kv($0, "drops")
		}
		reps[r] = 1
	}
	END {
		for (j = 1; j <= n[0]; j++) a[j] = sw[0, j]
		base = median(a, n[0])
		for (j = 1; j <= n[1]; j++) b[j] = sw[1, j]
		on = median(b, n[1])
		k = 0
		for (r in reps)
			if (((r, 0) in per) && ((r, 1) in per)) d[++k] = per[r, 1] - per[r, 0]
		added = median(d, k)
		print "| ns per context switch, nothing attached | ns per switch, off-CPU program attached | added per switch | BPF ns per program run (every switch) | BPF ns per recorded block | user frames per block | recorded / all switches | ring-buffer drops |" > md
		print "|---|---|---|---|---|---|---|---|" > md
		printf "| %.0f | %.0f | **%+.0f** | %.0f | %.0f | %.1f | %.2f | %d |\n", base, on, added, \
			median(run, m), median(blk, m), median(fr, m), median(share, m), drops > md
		printf "bench: offcpu: +%.0f ns per context switch with the off-CPU program attached (%.0f -> %.0f ns per switch); the program runs %.0f ns per switch, %.0f ns per recorded block\n", \
			added, base, on, median(run, m), median(blk, m)
	}' md="$MD/offcpu.table" "$raw"
}

# The Python walk (bpf/python.h) per sample: tests/bench/pyrecurse.py 10 and
# 100 distinct functions deep under Debian's python3.11, sampled alone
# (kcost -y), in three modes alternated on the same process: without
# descriptions (the walk before them), steady (every code object described
# already: one filter probe a frame) and cold (the attach generation moved
# about every millisecond: the samples after it describe up to
# SFBPF_PY_DESCRIBE_MAX).
PC_DEPTHS="10 100"
bench_pycost() {
	local raw=$TMP/pycost.txt py=${SFBPF_BENCH_PYTHON:-/usr/bin/python3.11}
	if [ ! -x "$py" ]; then
		printf '| Python walk |\n|---|\n| **not measured**: no %s |\n' "$py" >"$MD/pycost.table"
		echo "bench: pycost: not measured (no $py)"
		return 0
	fi
	PC_CMD="$(rel "$BB")/kcost -d $PC_SECS -r $PC_REPS -f $KC_HZ -y $py,tests/bench/pyrecurse.py $PC_DEPTHS"
	echo "$PC_CMD" >"$MD/pycost.cmd"
	log "pycost: Python walk, ${PC_DEPTHS// /, } frames, off/steady/cold, $PC_REPS x ${PC_SECS}s at $KC_HZ Hz"
	"$BB/kcost" -d "$PC_SECS" -r "$PC_REPS" -f "$KC_HZ" -y "$py,$ROOT/tests/bench/pyrecurse.py" \
		$PC_DEPTHS >"$raw" 2>"$TMP/pycost.err" || {
		cat "$TMP/pycost.err" >&2
		echo "bench: pycost: FAILED ($(tail -1 "$TMP/pycost.err"))"
		return 1
	}
	cp "$raw" "$MD/pycost.raw"
	awk "$AWK_LIB"'
	$1 == "pycost" {
		d = kv($0, "frames"); m = kv($0, "mode"); runs = kv($0, "runs")
		if (!runs) next
		k = ++n[d, m]
		ns[d, m, k] = kv($0, "run_ns") / runs
		fr[d, m, k] = kv($0, "py_frames") / runs
		de[d, m, k] = kv($0, "described") / runs
		depths[d] = 1
	}
	function med(arr, d, m,    j, a) {
		for (j = 1; j <= n[d, m]; j++) a[j] = arr[d, m, j]
		return median(a, n[d, m])
	}
	END {
		print "| Python functions deep | Python frames a sample | ns a sample, no descriptions | steady | cold | cold: described a sample | steady - none | cold - none |" > md
		print "|---|---|---|---|---|---|---|---|" > md
		for (d = 1; d <= 1024; d++) {
			if (!(d in depths)) continue
			off = med(ns, d, "off"); st = med(ns, d, "steady"); co = med(ns, d, "cold")
			printf "| %d | %.0f | %.0f | %.0f | %.0f | %.1f | **%+.0f** | %+.0f |\n", d, med(fr, d, "steady"), \
				off, st, co, med(de, d, "cold"), st - off, co - off > md
			line = line sprintf("%s%d frames: %.0f / %.0f / %.0f ns", line ? "; " : "", d, off, st, co)
		}
		print "bench: pycost: Python walk per sample, no descriptions / steady / cold: " line
	}' md="$MD/pycost.table" "$raw"
}

# Source lines at output time (symbols/srcline.h): every instruction of a big
# -O2 -g program (sfbpf-top itself) and of libc through its debug file, each
# resolved once, in a shuffled order, then again from the cache.
bench_srcline() {
	local raw=$TMP/srcline.txt libc id dbg
	: >"$raw"
	build_driver srcline "$ROOT/tests/srclines.c" || return 1
	objdump -d --no-show-raw-insn "$TOP" | awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print $1 }' |
		shuf --random-source=/dev/zero >"$TMP/srcline-top.addrs"
	"$BB/srclines" bench sfbpf-top "$TOP" <"$TMP/srcline-top.addrs" >>"$raw"
	libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
	id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	if [ -r "$dbg" ]; then
		objdump -d --no-show-raw-insn "$libc" | awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print $1 }' |
			shuf --random-source=/dev/zero >"$TMP/srcline-libc.addrs"
		"$BB/srclines" bench libc.so.6 "$libc" "$dbg" <"$TMP/srcline-libc.addrs" >>"$raw"
	fi
	cp "$raw" "$MD/srcline.raw"
	awk "$AWK_LIB"'
	$1 == "srcline" {
		if (!rows++) {
			print "| object | addresses | DWARF functions | first lookup (indexes) | per new address | per cached address | frames per address |" > md
			print "|---|---|---|---|---|---|---|" > md
		}
		printf "| %s | %d | %d | %.1f ms | %.1f µs | %.0f ns | %.2f |\n", kv($0, "object"), \
			kv($0, "addrs"), kv($0, "functions"), kv($0, "index_ms"), kv($0, "new_ns") / 1000, \
			kv($0, "cached_ns"), kv($0, "frames_per_addr") > md
		printf "bench: srcline: %s: %.1f ms to index, %.1f us per new address, %.0f ns cached (%d addresses)\n", \
			kv($0, "object"), kv($0, "index_ms"), kv($0, "new_ns") / 1000, kv($0, "cached_ns"), kv($0, "addrs")
	}' md="$MD/srcline.table" "$raw"
}

# --- 7. table cache ----------------------------------------------------------

# What a restart saves: each object's table built (digest, private copy,
# build, store) and then read back from a new cache directory (digest,
# read, SHA-256 and validation), in the loader's own code (tests/tablecache.c).
bench_tablecache() {
	local raw=$TMP/tablecache.txt rep f files=() libc dir line
	: >"$raw"
	build_driver tablecache "$ROOT/tests/tablecache.c" || return 1
	if [ -n "${ZSTD:-}" ]; then files+=("$ZSTD"); fi
	f=$BB/bigsframe.$BIG_FUNCS.v3
	if [ -x "$f" ]; then files+=("$f"); fi
	libc=$(ldd "$BB/mtwork" | awk '$1 ~ /^libc\.so/ { print $3 }')
	if [ -n "$libc" ]; then files+=("$libc"); fi
	log "tablecache: ${#files[@]} objects, $LD_REPS repetitions"
	for ((rep = 0; rep < LD_REPS; rep++)); do
		for f in "${files[@]}"; do
			dir=$(mktemp -d "$TMP/tablecache.XXXXXX")
			line=$("$BB/tablecache" time "$dir" "$f") || {
				echo "bench: tablecache: FAILED ($f: no table, or not read back equal)"
				return 1
			}
			echo "tablecache object=$(basename "$f") $line" >>"$raw"
			rm -rf "$dir"
		done
	done
	cp "$raw" "$MD/tablecache.raw"
	awk "$AWK_LIB"'
	$1 == "tablecache" {
		o = kv($0, "object")
		if (!(o in rows))
			order[++n] = o
		rows[o] = kv($0, "rows")
		c[o, ++nr[o]] = kv($0, "cold_us")
		w[o, nr[o]] = kv($0, "warm_us")
	}
	END {
		print "| object | rows | built (cold) | read back (warm) | rows/s read back | cold / warm |" > md
		print "|---|---|---|---|---|---|" > md
		for (i = 1; i <= n; i++) {
			o = order[i]
			for (k = 1; k <= nr[o]; k++) {
				cc[k] = c[o, k]
				ww[k] = w[o, k]
			}
			cm = median(cc, nr[o])
			wm = median(ww, nr[o])
			rate = 0
			ratio = 0
			if (wm > 0) {
				rate = rows[o] / wm
				ratio = cm / wm
			}
			printf "| %s | %d | %.1f ms | %.1f ms | %.1f M | %.1fx |\n", o, rows[o], cm / 1000, \
				wm / 1000, rate, ratio > md
			printf "bench: tablecache: %s: %d rows built in %.1f ms, read back in %.1f ms (%.1fx; medians of %d)\n", \
				o, rows[o], cm / 1000, wm / 1000, ratio, nr[o]
		}
	}' md="$MD/tablecache.table" "$raw"
}

# A big binary run for the first time under a profiler that samples it: the
# lifecycle driver (tests/lifecycle.c, built without sanitizers) traces every
# sample of its command. Each run is a fresh driver and a copy of the binary
# with one byte appended: new bytes, so no table of another file is shared
# and none is read from a cache (SFBPF_TABLE_CACHE=off): cold. Times from the
# program's first sample (at 999 Hz, within a millisecond of its CPU after
# exec): when its process entry unwound a sample (the lifecycle), when a stack
# first reached main complete; the same in its own samples (CPU ms).
coldstart_run() { # coldstart_run NAME PROG MODE: one line to $RAW_CS
	local name=$1 prog=$2 mode=$3 args=() drv i
	[ "$mode" = off ] && args=(-N)
	if [ "$prog" = cc1 ]; then
		{ cat "$CS_CC1"; echo; } >"$TMP/$name"
	else
		{ cat "$BB/bigeh.$CS_BIG_FUNCS"; echo; } >"$TMP/$name"
	fi
	chmod +x "$TMP/$name"
	rm -f "$TMP/$name.ready"
	SFBPF_TABLE_CACHE=off "$BB/lifecycle" -F 999 -r "$TMP/$name.ready" -c "$name" \
		-t "$TMP/$name.trace" "${args[@]}" >"$TMP/$name.stats" 2>"$TMP/$name.err" &
	drv=$!
	for ((i = 0; i < 3000; i++)); do
		[ -e "$TMP/$name.ready" ] && break
		kill -0 "$drv" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$TMP/$name.ready" ] || return 1
	if [ "$prog" = cc1 ]; then
		"$TMP/$name" -quiet -O2 "$BB/coldstart.i" -o /dev/null
	else
		"$TMP/$name" 2
	fi
	sleep 0.5
	kill -INT "$drv"
	wait "$drv" || return 1
	sort -k2,2n "$TMP/$name.trace" | awk -v prog="$prog" -v mode="$mode" \
		-v pt="$(awk '$2 == "stat" && $3 == "partial_tables" { print $4 }' "$TMP/$name.stats")" '
		$1 != "T" { next }
		{ n++ }
		n == 1 { t0 = $2 }
		$5 != "outermost" { trunc++ }
		$5 != "no-proc" && entry == "" {
			entry = ($2 - t0) / 1e6
			entry_n = n - 1
		}
		$5 == "outermost" && $8 ~ /(^|;)main;/ && first == "" {
			first = ($2 - t0) / 1e6
			first_n = n - 1
		}
		{ last = $2 }
		END {
			# None before its end (the whole table later still): counted as its end.
			none = first == ""
			if (none) {
				first = (last - t0) / 1e6
				first_n = n
			}
			printf "coldstart prog=%s mode=%s entry_ms=%.1f first_ms=%.1f first_samples=%d after_entry_ms=%.1f after_entry_samples=%d none=%d truncated=%d samples=%d partial_tables=%d\n", \
				prog, mode, entry, first, first_n, first - entry, first_n - entry_n, none, trunc, n, pt
		}' >>"$RAW_CS"
	rm -f "$TMP/$name" "$TMP/$name.trace"
}

bench_coldstart() {
	local rep prog mode modes
	RAW_CS=$TMP/coldstart.txt
	: >"$RAW_CS"
	CS_CC1=$("$CC" -print-prog-name=cc1)
	build_driver coldstart "$ROOT/tests/lifecycle.c" || return 1
	# About a second of cc1 at -O2: loops to optimize.
	awk -v n="$CS_FUNCS" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { s += a[i] * %d; if (s > %d) s ^= a[(i * 7) %% n]; } for (int j = 0; j < n; j += 2) s -= a[j] >> %d; return s; }\n", i, i % 13 + 1, i * 31, i % 5 + 1
	}' >"$BB/coldstart.i"
	# chain.c (main;a;b;hot) without frame pointers, with 700k rows of .eh_frame.
	if ! up_to_date "$BB/bigeh.$CS_BIG_FUNCS" "$ROOT/tests/bench/bigsframe.awk" "$ROOT/tests/fixtures/chain.c"; then
		awk -v n="$CS_BIG_FUNCS" -f "$ROOT/tests/bench/bigsframe.awk" >"$TMP/bigeh.s"
		"$CC" -O2 -fomit-frame-pointer -I"$ROOT/tests/fixtures" "$ROOT/tests/fixtures/chain.c" \
			"$TMP/bigeh.s" -o "$BB/bigeh.$CS_BIG_FUNCS"
		rm -f "$TMP/bigeh.s"
	fi
	log "coldstart: cc1 and a generated program, with and without partial tables, $CS_REPS repetitions"
	for ((rep = 0; rep < CS_REPS; rep++)); do
		modes="on off"
		[ $((rep % 2)) = 1 ] && modes="off on"
		for prog in cc1 bigeh; do
			for mode in $modes; do
				coldstart_run "cs$rep$mode${prog:0:2}" "$prog" "$mode" || {
					echo "bench: coldstart: FAILED ($prog, $mode)"
					return 1
				}
			done
		done
	done
	cp "$RAW_CS" "$MD/coldstart.raw"
	awk "$AWK_LIB"'
	$1 == "coldstart" {
		k = kv($0, "prog") SUBSEP kv($0, "mode")
		i = ++nr[k]
		e[k, i] = kv($0, "entry_ms")
		f[k, i] = kv($0, "first_ms")
		s[k, i] = kv($0, "first_samples")
		a[k, i] = kv($0, "after_entry_ms")
		as[k, i] = kv($0, "after_entry_samples")
		t[k, i] = kv($0, "truncated") / (kv($0, "samples") > 0 ? kv($0, "samples") : 1)
		p[k, i] = kv($0, "partial_tables")
		none[k] += kv($0, "none")
	}
	function med(a, k,    i, v) {
		for (i = 1; i <= nr[k]; i++)
			v[i] = a[k, i]
		return median(v, nr[k])
	}
	END {
		print "| program | partial tables | entry (ms) | first complete stack (ms) | its samples before it (CPU ms) | first complete after the entry (ms) | samples from the entry to it | runs with none before the end | truncated share | partial tables published |" > md
		print "|---|---|---|---|---|---|---|---|---|---|" > md
		np = split("cc1 bigeh", progs, " ")
		for (j = 1; j <= np; j++) {
			line = "bench: coldstart: " progs[j] ":"
			for (m = 1; m <= 2; m++) {
				mode = m == 1 ? "on" : "off"
				k = progs[j] SUBSEP mode
				if (!nr[k])
					continue
				printf "| %s | %s | %.0f | **%.0f** | %.0f | **%.0f** | %.0f | %d of %d | %.1f %% | %.0f |\n", progs[j], \
					mode == "on" ? "yes" : "no (--no-partial-tables)", med(e, k), med(f, k), \
					med(s, k), med(a, k), med(as, k), none[k], nr[k], med(t, k) * 100, med(p, k) > md
				line = line sprintf(" %s %.0f ms (%.0f samples; %.0f ms, %.0f samples after the entry)%s", \
					mode == "on" ? "with" : "without", med(f, k), med(s, k), med(a, k), med(as, k), \
					m == 1 ? "," : "")
			}
			print line " to the first complete stack from its first sample (medians of " nr[progs[j] SUBSEP "on"] ")"
		}
	}' md="$MD/coldstart.table" "$RAW_CS"
}

# --- report ---------------------------------------------------------------------

machine() {
	local mem cpu
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
	echo "| | |"
	echo "|---|---|"
	echo "| date | $(date -u '+%Y-%m-%d %H:%M UTC') |"
	echo "| CPU | $NCPU x $cpu (virtual machine, shared; no hardware PMU: cpu-clock events) |"
	echo "| memory | $mem |"
	echo "| kernel | $(uname -r) |"
	echo "| distribution | Debian $(cat /etc/debian_version 2>/dev/null || echo '?') |"
	echo "| compiler / assembler | $("$CC" --version | head -1), $(as --version | head -1) |"
	echo "| perf | $(perf --version 2>/dev/null) |"
	echo "| load average at start / end | $LOAD_START / $(cut -d' ' -f1-3 /proc/loadavg) |"
	echo "| BPF run-time statistics | on while kcost, slowdown, throughput and offcpu run (they add two clock reads to every BPF program run); kernel.bpf_stats_enabled was $BPF_STATS_AT_START at the start |"
	echo "| revision | ${SFBPF_BENCH_REVISION:-$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')} |"
}

# rel PATH: PATH relative to the repository when inside it (for the report).
rel() {
	case $1 in
	"$ROOT"/*) echo "${1#"$ROOT"/}" ;;
	*) echo "$1" ;;
	esac
}

write_report() {
	local secs=$1
	{
		cat <<EOF
# sfbpf benchmarks

Generated by \`make bench\` (\`scripts/bench.sh\`$([ "$QUICK" = 1 ] && echo ' --quick')) in ${secs} s; do not edit by
hand. Each benchmark alternates its configurations within one run and
reports medians of repeated runs: the machine below is a shared virtual
machine whose other tenants add noise, so compare rows with each other, not
with other machines.

## Summary

\`\`\`
$(for part in $PARTS; do cat "$MD/summary.$part" 2>/dev/null; done)
\`\`\`

## Machine

$(machine)

EOF
		if [ -f "$MD/kcost.table" ]; then
			cat <<EOF
## 1. Kernel cost per sample

BPF run time per sample (\`run_time_ns / run_cnt\` with kernel BPF statistics
enabled) of the SFrame unwinder (\`bpf/profile.bpf.c\`) on a process recursing
to a fixed depth built with \`-O2 -fomit-frame-pointer -Wa,--gsframe\`, against
the frame-pointer reference (\`tests/bench/fpwalk.bpf.c\`: the same program with the
user stack from \`bpf_get_stack(BPF_F_USER_STACK)\`) on the same recursion
built with \`-fno-omit-frame-pointer\`. Both processes run at the same time on
the same CPU, each with its own per-task cpu-clock event at $KC_HZ Hz, for
${KC_SECS} s per repetition, $KC_REPS repetitions (the CPU and the order of
depths change every repetition). Ratio: median of the per-repetition ratios.
Target frames count the leaf, the recursion, \`main\` and the libc frame that
calls it; the second column is what each unwinder actually produced. Debian
12's libc has neither SFrame nor frame pointers: the SFrame unwinder goes on
through it to \`_start\` when the loader gives libc a table (synthesized from
\`.eh_frame\`), and stops after \`__libc_start_call_main\` when it does not; the
frame-pointer walk stops there and also misses one frame, the leaf's caller,
because gcc gives the spinning leaf function no frame of its own (the
classic frame-pointer blind spot). The SFrame unwinder stops at 1024 user
frames (\`SFBPF_MAX_FRAMES\`), the kernel's walk at
\`kernel.perf_event_max_stack\`
(${KC_STACK_NOTE:-not measured}).
ns/frame divides by each unwinder's own frame count; the slopes below the
table are the cost of one more frame.

Command: \`$(rel "$BB")/kcost -d $KC_SECS -r $KC_REPS -f $KC_HZ $(rel "$BB")/recurse.sframe $(rel "$BB")/recurse.fp $KC_DEPTHS\`

$(cat "$MD/kcost.table")

Targets: at most 1.5x the frame-pointer walk at 32 frames; one more frame
costs no more than in the frame-pointer walk (slope over all depths).

EOF
		fi
		if [ -f "$MD/pycost.table" ]; then
			cat <<EOF
## 1b. The Python walk per sample

The BPF program's run time per sample (kernel BPF statistics, per-task
events: no other task's runs) of a CPython 3.11 thread 10 and 100 distinct
functions deep (\`tests/bench/pyrecurse.py\`), in three modes measured in
turn on the same process, the order rotating: without code-object
descriptions (the walk as it was before them), steady (descriptions on,
every code object described already: a per-CPU filter probe a frame) and
cold (the attach generation moved about every millisecond: the samples
after each move find their code objects new and describe up to 8 of them,
names, first line and line table copied into the ring; the column
"described a sample" says how many on average). Medians of $PC_REPS
repetitions.

Command: \`$(cat "$MD/pycost.cmd")\`

$(cat "$MD/pycost.table")

EOF
		fi
		if [ -f "$MD/slowdown.table" ]; then
			cat <<EOF
## 2. Slowdown of CPU-bound workloads

What sfbpf costs a machine it profiles system-wide (every CPU), measured
directly, and how much slower it makes a fixed amount of work, against no
profiler and against perf record.

**Cost** ("sfbpf cost", the targets): the run time of sfbpf's BPF programs
(kernel BPF statistics, on during this part) plus sfbpf-top's CPU time
(scheduler accounting, every thread), over the capacity of all CPUs while a
workload runs; the median over every run of both workloads, with the lowest
and highest. It is split into BPF, sfbpf-top's sampling thread (samples,
lifecycle of the processes that start and exit, symbol snapshots) and its
table-building threads (tables of programs seen for the first time). The
verdict is the steady state: one sfbpf-top per rate, left running ${SD_WARM} s
before the $SD_REPS repetitions of the workloads run under it, as a profiler
left running would. Right after a start, sfbpf-top also builds the tables of
every program the machine starts for the first time since (the rows "sfbpf-top"
below, started for each repetition): on a machine that keeps compiling, that
is the larger part; the loader section measures what a start costs. The
last column says how busy the machine was with new processes and threads
(/proc/stat), which is what the lifecycle and the loader follow.

**Slowdown**: wall time and CPU time of each workload, every configuration
once per repetition ($SD_REPS), in an order rotated per repetition; the
profiler is started, waited for until it samples, the workloads run, then it
stops. Each figure is the median over repetitions of the ratio to the run
without a profiler of the same repetition. "CPU" is the workload's CPU time
(which includes the BPF programs, run in the interrupts charged to it) plus
the profiler process's CPU time. This VM shares its CPUs with other tenants:
the same work takes a different CPU time from one run to the next (spread
below the table), and differences smaller than that spread are noise, not
slowdown; the direct cost above is not affected.

- \`mtwork\`: \`tests/bench/mtwork.c\`, $NCPU threads, $MT_ROUNDS rounds of fill +
  recursive quicksort + checksum of 16384 keys (stacks 15-30 frames deep).
- \`zstd\`: zstd $(basename "$(dirname "$(dirname "${ZSTD:-/x/zstd-?/programs}")")" | sed 's/^zstd-//') built from Debian's source package
  (\`scripts/bench/build-zstd.sh\`), \`zstd -q -f -T$NCPU -$ZSTD_LEVEL\` on $CORPUS_MB MiB
  of generated text (\`benchutil corpus\`).$([ -z "${ZSTD:-}" ] && echo ' (Not available in this run.)')

Both are built with \`-O2 -fno-omit-frame-pointer -Wa,--gsframe\`: the same
binary gives every profiler complete stacks (sfbpf unwinds from SFrame, perf
-g from frame pointers, perf dwarf from .eh_frame with 8 KiB stack copies).

Commands: \`sfbpf-top -F HZ --stats --folded FILE\`, \`perf record -q -B -N -a -g
-F HZ\`, \`perf record -q -B -N -a --call-graph dwarf -F HZ\`: each records during
the run and resolves symbols when it stops, after the timed part (perf
writes to a file in /tmp; -B -N only skip its build-id work at exit). Each
profiler is waited for until it samples, then $SD_SETTLE s more (its
start-up transient), before the workloads start.

$(cat "$MD/slowdown.table")

Targets for sfbpf: at most 1 % at 99 Hz and 3 % at 999 Hz (of all CPUs, in
steady state).

EOF
		fi
		if [ -f "$MD/loader.table" ]; then
			cat <<EOF
## 3. Loader

Per object (\`tests/bench/ldcost.c\`: the table loader of \`userspace/maps/tables.c\`
into the maps of a loaded, unattached unwinder, a fresh loader per object,
$LD_REPS repetitions, medians): rows, deduplicated rules and page index
entries pushed, their bytes in the maps (4 bytes a row or page entry, 24 a
rule) against the \`.sframe\` bytes they came from, bytes per row (rows,
page index and rules over rows), and the time to build them (read the ELF
file, decode, flatten, merge with the CFI where the \`.sframe\` has none), to
push them into the maps' segments, and the whole load (both, with the
bookkeeping: rows per second are over this). Sparse tables get coarser pages (at most one page entry per 8 rows: docs/DESIGN-unwinder.md). The generated
objects come from \`tests/bench/bigsframe.awk\` (functions with pushes, a
variable frame and pops, ~7 SFrame rows each) linked into
\`tests/bench/idle.c\`; libc, gcc's \`cc1\` and the largest libLLVM show the
cost of a table synthesized from \`.eh_frame\`. Each of these three is also
built, in every repetition right after the interpreter's build, by the
libdw row walk the CFA interpreter replaced (\`SFBPF_CFI_ROWS=libdw\`:
\`dwarf_cfi_addrframe\` for every row, O(rows x instructions)); the second
table sets both side by side, and the interpreter's rate against the largest
SFrame object's in the same run (target: at least 0.5x it, for objects of
100k rows and more).

Whole system: \`sfbpf-top --stats -U --folded FILE\`, $LD_SYS_REPS runs each, medians:
the processes running at the time, then with the SFrame programs above
running too. Start to attached: from the exec of sfbpf-top until it has a
perf event open on every CPU, which it does once the tables of every process
found by its /proc scan are loaded (with BPF load and verification before):
the time until the whole machine is covered. Table load time adds up every
table loaded during the run, including those of processes that started
after the scan (loaded at their first sample) until sfbpf-top was stopped
right after attaching. Table maps now: what the row and page segments
(created as tables need them), the rules and the object slots take at the
end of the run (\`table_map_bytes\` of \`--stats\`), against the table budget
(\`--max-table-mem\`, 1/512 of the RAM by default). All BPF map memory: what
the kernel charged for every map sfbpf-top held (\`memlock\` of each map fd in
/proc/PID/fdinfo), ring buffers included. RSS: \`rss_bytes\` of \`--stats\`
(sfbpf-top's resident memory when it stops).

$(cat "$MD/loader.table")

Targets: at least 10 M rows/s for the largest object; table bytes at most
0.75x the .sframe bytes they came from, and at most 4.5 bytes per row with
the page index; the whole machine covered less than 1 s after start; table
map memory that grows with what is loaded (less as it is than with the
SFrame programs) and stays within the budget. RSS here is the footprint at
attach; the next section judges it on a busy machine.

EOF
		fi
		if [ -f "$MD/footprint.table" ]; then
			cat <<EOF
## 3b. Footprint on a busy machine

\`sfbpf-top -b -d 1 -n 10 --stats $FP_SECS\` (the whole machine at 99 Hz,
the batch view: the live view's aggregation and symbols without a
terminal), $FP_REPS runs, while the machine runs $(cat "$MD/footprint.progs" 2>/dev/null).
Source lines and inline frames are looked up for every new address of the
programs with DWARF. VmRSS is polled every 0.5 s from /proc/PID/status;
VmHWM is the kernel's peak. Medians of the runs.

$(cat "$MD/footprint.table")

Target: VmRSS at most 40 MB while profiling.

EOF
		fi
		if [ -f "$MD/throughput.table" ]; then
			cat <<EOF
## 4. Throughput

\`sfbpf-top -F RATE --stats --folded FILE\` system-wide, for $TP_SECS s once sampling, while $NCPU processes recurse
128 frames deep (one per CPU, so every sample carries 127 user frames), at
increasing rates until the first ring-buffer drop within the window. The
window's figures come from the unwinder's own counters, read from outside
(\`tests/bench/progstat.c\`) when the window opens and closes; the whole-run
drops column also counts what sfbpf-top lost while exiting (it keeps
sampling while it writes its output). sfbpf-top reads the ring
buffer on the same CPUs the workload keeps busy: a drop means the reader got
too little CPU for longer than the 8 MiB ring buffer lasts (about 8000
samples of this size), so on a shared machine the limit moves with the
other tenants' load. The kernel's own limit
(\`kernel.perf_event_max_sample_rate\`, lowered by the kernel when sampling
interrupts take too long) is shown after each run and restored afterwards.

$(cat "$MD/throughput.table")

EOF
		fi
		if [ -f "$MD/offcpu.table" ]; then
			cat <<EOF
## 5. Off-CPU

Cost per context switch of the off-CPU program (\`bpf/offcpu.bpf.c\`, a
\`sched_switch\` raw tracepoint that unwinds the user stack of every thread
that blocks and emits the period when it runs again): two processes pinned to
one CPU bounce a byte over pipes $OC_ROUNDS times (\`tests/bench/offcost.c\`,
built with SFrame and its tables loaded, every period emitted: the most
expensive setting), with the program detached and attached alternately,
$OC_REPS repetitions, medians. "Added per switch" is the median of the
per-repetition differences; the BPF columns come from kernel BPF statistics
(the program runs at every switch on the machine, recorded or not).

Command: \`$(rel "$BB")/offcost -r $OC_REPS -n $OC_ROUNDS\`

$(cat "$MD/offcpu.table")

EOF
		fi
		if [ -f "$MD/srcline.table" ]; then
			cat <<EOF
## 6. Source lines

What resolving sampled addresses into inline chains and file:line costs at
output time (\`userspace/symbols/srcline.c\`, libdw): every instruction of
each object, shuffled, resolved once (the first lookup also indexes the
functions' address ranges), then all again from the per-address cache. A
profile pays this once per distinct address and object, when it is written.

Command: \`$(rel "$BB")/srclines bench NAME FILE [DEBUGFILE] < addresses\`

$(cat "$MD/srcline.table")

EOF
		fi
		if [ -f "$MD/tablecache.table" ]; then
			cat <<EOF
## 7. Table cache

What a restart of sfbpf-top saves per object (\`userspace/tables/tablecache.c\`):
its table built as on a first start (the digest of the bytes the build
reads and their private copy, the build, the store into the cache), then
read back by the loader from a new cache (the digest again, the file read,
its SHA-256 and \`flat_table__check()\`). Medians of $LD_REPS.

Command: \`$(rel "$BB")/tablecache time DIR FILE\`

$(cat "$MD/tablecache.table")

EOF
		fi
		if [ -f "$MD/coldstart.table" ]; then
			cat <<EOF
## 8. Cold start: the sampled code first

A big binary run for the first time, its table not built yet (issue #27): how
soon its stacks are complete with partial tables (the rows of the FDEs its
samples fall in, built and published first: \`userspace/maps/tablepart.c\`)
and without (\`--no-partial-tables\`: frame pointers until the whole table is
in). gcc's \`cc1\` (475k rows from \`.eh_frame\`, stacks 15-40 frames deep)
compiling $CS_FUNCS generated functions at -O2, and \`tests/fixtures/chain.c\`
(main;a;b;hot, no frame pointers) linked with $CS_BIG_FUNCS generated
functions (700k rows), each a copy with one byte appended (new bytes: never
another file's table, no table cache), under a fresh lifecycle driver at 999
Hz. Times from the program's first sample (within a millisecond of its CPU
after exec); "entry" is when the lifecycle had read its mappings (the same
with and without; the columns after it count from there), "first complete"
when a stack first reached \`main\`
complete (a run with none before its end counts its end); the samples before
it are milliseconds of the program's own CPU.
Medians of $CS_REPS, the two configurations alternated.

Command: \`SFBPF_TABLE_CACHE=off $(rel "$BB")/lifecycle -F 999 -c NAME -t TRACE [-N]\`, then the program (\`scripts/bench.sh --only coldstart\`)

$(cat "$MD/coldstart.table")

EOF
		fi
		cat <<EOF
## Reproducing

    sudo make bench                      # everything, writes docs/BENCHMARKS.md
    sudo make bench BENCH_ARGS=--quick   # one short pass (the smoke test)
    sudo scripts/bench.sh --only kcost,loader --out /tmp/b.md

The raw measurements of this run follow.

<details><summary>raw data</summary>

\`\`\`
$(cat "$MD"/*.raw 2>/dev/null)
\`\`\`

</details>
EOF
	} >"$OUT"
}

# --- main -----------------------------------------------------------------------

START=$SECONDS
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
BPF_STATS_AT_START=$(cat /proc/sys/kernel/bpf_stats_enabled)
build_workloads
ZSTD=
case " $PARTS " in *" slowdown "* | *" loader "* | *" tablecache "*) find_zstd ;; esac
rc=0
for part in $PARTS; do
	case " $ALL_PARTS " in
	*" $part "*)
		# Summary lines to stdout and, for the report, to a file.
		"bench_$part" >"$MD/summary.$part" || rc=1
		cat "$MD/summary.$part"
		;;
	*) die "unknown benchmark: $part (one of: $ALL_PARTS)" ;;
	esac
done
write_report $((SECONDS - START))
log "report: $OUT ($((SECONDS - START)) s)"
exit "$rc"
