#!/usr/bin/env bash
# make bench: what sfbpf costs, measured side by side with the alternatives.
#   kcost       kernel time per sample: SFrame unwinder vs frame-pointer walk
#   pycost      kernel time per sample of the Python walk, at 10 and 100 frames:
#               without code-object descriptions, steady and cold
#   jcost       kernel time per sample of the HotSpot step, a JVM 10 and 100
#               calls deep: without settings (the walk ends at Java) and with
#   v8cost      kernel time per sample of V8's step, a node 10 and 100 calls
#               deep: without settings (its frames stepped unnamed) and with
#   vmcost      kernel time per sample of the PHP, Ruby and Perl walks, a
#               script 10 and 100 calls deep: without settings and with
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
#   compile     a real build (zstd, make -j NCPU) under sfbpf-top and perf
#               --call-graph dwarf at once: the share of stacks not complete
#   liveview    a refresh of the live view's model against a snapshot of the
#               same aggregator (why the live view is incremental)
# Each lives in scripts/bench/ (kcost.sh: bench_kcost, and so on; common.sh
# the helpers, report.sh the report), sourced here, where the options and
# sizes are (but coldstart-ab.sh, run on its own: two builds side by side on
# cc1's cold start). Every benchmark prints one "bench: NAME: ..." summary line on
# stdout; the tables, the commands and the machine go to docs/BENCHMARKS.md
# (with --quick, to a file in the temporary directory unless --out is given).
# Repeated runs, medians, configurations alternated within one run: the
# machine is shared.
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
ALL_PARTS="kcost pycost jcost v8cost vmcost slowdown loader footprint throughput offcpu srcline tablecache coldstart compile liveview"

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

# Sizes. On 2 idle CPUs the full run takes 15-20 minutes (the last full report took 564 s,
# and compile adds about 7 minutes; plus building zstd once, 1-3 minutes), --quick a few
# minutes; a loaded machine stretches both.
if [ "$QUICK" = 1 ]; then
	KC_SECS=0.3 KC_REPS=1 KC_STACK_TRIES=30 PC_SECS=0.3 PC_REPS=1
	SD_REPS=1 SD_SETTLE=0.2 SD_WARM=1 MT_ROUNDS=40 CORPUS_MB=4 ZSTD_LEVEL=3
	LD_REPS=1 LD_SYS_REPS=1 BIG_FUNCS=2000
	TP_SECS=0.5 TP_RATES="999"
	OC_ROUNDS=20000 OC_REPS=1
	FP_SECS=3 FP_REPS=1
	# One program of two, a fifth of its size: the smoke test runs every
	# mode once (about 55 s for both whole, in make check's serial tail).
	CS_REPS=1 CS_PROGS="bigeh" CS_BIG_FUNCS=20000
	COMPILE_REPS=1
	LV_STACKS="2000" LV_REFRESHES=2
else
	KC_SECS=2 KC_REPS=5 KC_STACK_TRIES=300 PC_SECS=2 PC_REPS=5
	SD_REPS=5 SD_SETTLE=0.5 SD_WARM=20 MT_ROUNDS=800 CORPUS_MB=64 ZSTD_LEVEL=3
	LD_REPS=5 LD_SYS_REPS=3 BIG_FUNCS=100000
	TP_SECS=2 TP_RATES="999 1999 4999 9999 19999 49999 99999"
	OC_ROUNDS=200000 OC_REPS=5
	FP_SECS=30 FP_REPS=3
	CS_REPS=5 CS_PROGS="cc1 bigeh" CS_BIG_FUNCS=100000
	COMPILE_REPS=3
	LV_STACKS="20000 100000" LV_REFRESHES=11
fi
# coldstart: generated functions in cc1's input (about a second of compiling)
# and in the generated program (about 7 rows each from .eh_frame).
CS_FUNCS=150
# compile: perf's 8 KiB stack copies at this rate are about 100 MB for a build.
COMPILE_HZ=99
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

# --- the benchmarks (scripts/bench/) ----------------------------------------

# shellcheck source=/dev/null
for part_file in common kcost slowdown loader footprint offcpu tables compile liveview report; do
	source "$ROOT/scripts/bench/$part_file.sh"
done

# --- main -----------------------------------------------------------------------

START=$SECONDS
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
BPF_STATS_AT_START=$(cat /proc/sys/kernel/bpf_stats_enabled)
build_workloads
ZSTD=
case " $PARTS " in *" slowdown "* | *" loader "* | *" tablecache "* | *" compile "*) find_zstd ;; esac
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
