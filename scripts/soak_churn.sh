#!/usr/bin/env bash
# Churn soak, "a week in an hour" (`make soak SOAK_ARGS=--churn`, or
# `make soak-churn`): two sfbpf-top at once, the live view (in tmux, its
# default decaying view) and the service (--continuous, pushing to a server
# that is down, so that its spool fills to its limit, and serving /metrics),
# both scoped to the load's own cgroup (--cgroup), while
# scripts/soak_churn.c, built here with -Wa,--gsframe, churns what a busy
# host churns (SOAK_CHURN_* below):
#   binaries    RATE (4) DISTINCT binaries a second: copies of a program with
#               their build-id rewritten, with DWARF (-g) and compressed DWARF
#               (-gz: source lines spill to /var/tmp) in turn, each asleep
#               0.3 s (the profiler learns of it meanwhile) then spinning
#               30 ms of CPU in main;churn_a;churn_b;churn_hot, deleted once
#               exited (every unit of work below is CPU time, not wall time:
#               the same load however busy the machine is, see "workload")
#   containers  every third of them in a new cgroup below the soak's, named
#               as Docker (system.slice/docker-<id>.scope) or the kubelet and
#               containerd (kubepods.slice/.../kubepods-besteffort-pod<uid>
#               .slice/cri-containerd-<id>.scope) name theirs, removed after
#   libraries   DLOPEN_RATE (2) distinct copies of tests/fixtures/libplugin.c
#               a second, dlopen'ed, run 30 ms, dlclose'd and deleted
#   perf maps   every 5 s a JIT-like process living 20 s: each second new
#               code at a new address, run, added to /tmp/perf-PID.map with 64
#               more symbols; the map rewritten from scratch every 8 s
# A week in an hour: a busy host (a CI runner, a node of a cluster with
# deploys) sees a new build of something every minute or so: 10,080 a week.
# RATE 4 makes 14,400 distinct binaries an hour (and 7,200 libraries, 2,400
# containers: a pod started every 4 minutes for a week; 720 JIT processes,
# 14,400 perf-map rewrites), so that one hour judged is at least a week of
# that host. Beside it, soak_load.c's storm: SOAK_RATE (100) short
# processes of one binary a second (cron jobs, health checks, shell steps),
# so that the 4096 exited processes a profiler keeps for its outputs roll over
# within minutes, as in a week they do. The profilers run with small budgets,
# so that the churn fills them within the warm-up and the judged time sees
# eviction, not filling: --max-stack-mem 32M, --max-jit-mem 16M,
# --max-table-mem 32M (the floors of their defaults: a small host's) and
# --max-symbol-mem 512K (the objects of exited processes' binaries, a few KiB
# of symbols each, go cold slowly: 2M took more than the warm-up to fill).
#
# Judged as scripts/soak.sh does: a warm-up until a measured steady state
# (no judged series, over the last SOAK_WINDOWS (60) windows of SOAK_WINDOW
# (5) s, grows faster than the rate its bound allows over DURATION beyond
# doubt, the low end of Sen's 95 % interval of its slope: five minutes, as
# the symbol cache fills and evicts in cycles of minutes; at most
# SOAK_WARMUP_MAX (1200) s. The slope alone made it luck: the live view's
# 40 s peaks wander by 2-3 MiB, and five minutes of them gave a slope under
# 455 KiB an hour only by chance, never in one run's 20 minutes), then
# DURATION s judged: the growth of each series (Theil-Sen slope times the
# time judged) within its bound, anonymous memory beyond doubt (the low end
# of the interval: an hour of the live view's peaks has about 190 KiB of
# noise in its slope), sampled every second by scripts/soak_churn.py and
# judged on its maxima per what the program keeps at once in whole blocks
# (the service: an interval, 10 s, its stacks reset after each; the live
# view: its window of 40 refreshes, 40 s):
#   what the program counts (/metrics of both: the live view serves them
#   too, --metrics):
#     stack_bytes, symbol_cold_bytes, jit_map_bytes, table_map_bytes
#                 a quarter of their budget (and never above it): a budget
#                 that holds grows by nothing once full
#     stacks, symbol_objects, mappings, procs_bytes, processes, objects,
#     objects_lingering, srcline_spill_bytes, dwarf_fds
#                 half what each held once steady (64, or 1 MiB, at least):
#                 anything kept per churned binary grows by thousands over a
#                 run; dwarf_fds never above its cap, 256; stacks (the
#                 service's reset at every profile, the live view's its
#                 last 40 refreshes') as much as they held: an interval's
#                 distinct stacks follow its samples, which follow the CPU
#                 the machine leaves the churn
#     heap_in_use_bytes  malloc's blocks handed out (mallinfo2), less the
#                 container path cache (cgroup_path_bytes: it fills over
#                 the hour in steps of its arena's chunks, its level judged
#                 on its own cap below): the largest profile, uncompressed
#                 (one is built at a time), beyond doubt (the low end of
#                 its slope's interval: its peaks follow what is built and
#                 freed at once)
#     symbol_paths  never above twice what it held once steady + 1024: the
#                 interned paths are swept at twice those live + 1024
#                 (symbolize.c), a sawtooth of ten minutes
#     cgroup_paths  never above cgroup_paths_max (4096): the container path
#                 cache's two generations, the older dropped as the newer
#                 fills; at this churn it fills over the first hour
#   what the system sees of both processes:
#     anon RSS    less the container path cache, as the heap: the
#                 largest profile + 128 KiB a thread (glibc's trim
#                 threshold, what an arena may keep of freed blocks:
#                 malloc_trim gives back the rest), beyond doubt; fds: a quarter of the 256 DWARF descriptors (the
#                 only set of descriptors that follows the load); BPF map
#                 memory: a quarter of the table budget; spill bytes in
#                 /var/tmp (its O_TMPFILE files, by its descriptors): half
#                 what they held once steady, 1 MiB at least; the service's
#                 out-dir (profiles and spool, a file's two names counted
#                 twice): never more than --keep + --spool-max of its
#                 largest files, a ceiling, not a slope: a profile's size
#                 follows its interval's samples, which follow how much CPU
#                 the machine leaves the churn (run 3: +25 % samples a
#                 second, and as much larger files, once the machine went
#                 idle)
#   workload      the premise of the slopes above: the service's samples a
#                 second in each sixth judged within 25 % of their median.
#                 What follows the samples (profiles, the live view's peaks)
#                 followed the machine when the work was spun by the wall
#                 clock (run 4: 31 a second beside a proof, 55 after it);
#                 spun by CPU time it moves only if the machine cannot give
#                 the churn its CPU, and then the run proves nothing
# and, from the service's profiles after the steady state ("every stack stays
# right"), at least SOAK_MIN_COMPLETE (85) % of (with minimum counts):
#   stacks-binaries  churn_hot samples of the distinct binaries unwound to
#                    the program's _start through main;churn_a;churn_b;
#                    churn_hot and libc's frames
#   stacks-names     ...and naming libc's: __libc_start_call_main;main;...
#   srclines         churn_hot frames with a source line (-g and -gz copies)
#   stacks-plugins   plugin_hot samples of the distinct libraries unwound to
#                    __libc_start_call_main through churn_plugin
#   jit-names        samples in the JIT's code named jit_gen_N from its perf
#                    map (the share unwound through jit_call;jit_child;
#                    jit_loop is shown, not judged)
#   containers       churn_hot samples of the binaries started in a container's
#                    cgroup carry its container id (and pod uid)
# plus: both exit 0 (the live view at q) with no sanitizer report, the live
# view shows churn_hot, the service's spool and out-dir hold files.
#
# Usage: scripts/soak_churn.sh [--top PATH] DURATION (60 at least; make soak
#        passes SOAK_SECONDS: make soak-churn's default is 3600)
# Env: SFBPF_BUILD, SOAK_DIR (work directory, default a new
# /tmp/sfbpf-soak-churn.*), SOAK_HZ (99), SOAK_INTERVAL (the service's
# --interval: 10), SOAK_CHURN_RATE (4), SOAK_CHURN_DLOPEN_RATE (2),
# SOAK_WINDOW, SOAK_WINDOWS, SOAK_WARMUP_MAX, SOAK_MIN_COMPLETE.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
BUILD=${SFBPF_BUILD:-$ROOT/build}
TOP=$BUILD/sfbpf-top
HZ=${SOAK_HZ:-99}
export SOAK_INTERVAL=${SOAK_INTERVAL:-10} # soak_churn.py judges in blocks of it
INTERVAL=$SOAK_INTERVAL
# The service's --keep and --spool-max: soak_churn.py judges its out-dir on them.
export SOAK_KEEP=12 SOAK_SPOOL=12
RATE=${SOAK_CHURN_RATE:-4}
DLOPEN_RATE=${SOAK_CHURN_DLOPEN_RATE:-2}
STORM_RATE=${SOAK_RATE:-100}
WINDOW=${SOAK_WINDOW:-5}
WINDOWS=${SOAK_WINDOWS:-60}
WARMUP_MAX=${SOAK_WARMUP_MAX:-1200}
BUDGETS=(--max-stack-mem 32M --max-symbol-mem 512K --max-jit-mem 16M --max-table-mem 32M)
# The build-id every copy starts from (soak_churn.c finds and rewrites it).
BUILD_ID=0x5c0af00dc452173e9b61e2047d883ab5106fc927

usage() {
	sed -n '/^# Usage:/,/^[^#]/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}
while [ $# -gt 1 ]; do
	case $1 in
	--top) TOP=$2 && shift ;;
	*) usage ;;
	esac
	shift
done
if [ $# -ne 1 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 60 ]; then
	usage
fi
DURATION=$1
log() { echo "soak-churn: $*"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: soak-churn: needs root to load BPF programs"
	exit 0
fi
for tool in tmux curl; do
	if ! command -v $tool >/dev/null; then
		echo "FAIL: soak-churn: $tool not installed (make deps)"
		exit 1
	fi
done
if [ ! -x "$TOP" ]; then
	echo "FAIL: soak-churn: $TOP not built (make)"
	exit 1
fi
PY=$(command -v /usr/bin/python3 || command -v python3)
DIR=${SOAK_DIR:-$(mktemp -d /tmp/sfbpf-soak-churn.XXXXXX)}
mkdir -p "$DIR/bin"
rm -rf "$DIR/kept" "$DIR/profiles" "$DIR"/series.jsonl "$DIR"/steady* "$DIR"/tui.rc
G=(-O2 -g "-Wa,--gsframe" "-Wl,--build-id=$BUILD_ID")
if ! gcc "${G[@]}" "$ROOT/scripts/soak_churn.c" -o "$DIR/soak_churn" -ldl 2>"$DIR/build.log" ||
	! gcc "${G[@]}" -gz=zlib "$ROOT/scripts/soak_churn.c" -o "$DIR/soak_churn_z" -ldl \
		2>>"$DIR/build.log" ||
	! gcc "${G[@]}" -shared -fPIC "$ROOT/tests/fixtures/libplugin.c" -o "$DIR/libplugin.so" \
		2>>"$DIR/build.log" ||
	! gcc -O2 -g -Wa,--gsframe "$ROOT/scripts/soak_load.c" -o "$DIR/soak_load" -ldl -lpthread \
		2>>"$DIR/build.log"; then
	echo "FAIL: soak-churn: building the load: $(head -3 "$DIR/build.log" | tr '\n' ' ')"
	exit 1
fi
for n in churn_exec churn_dlopen churn_jit; do
	ln -sf soak_churn "$DIR/$n"
done
for n in soak_storm soak_short soak_spin; do
	ln -sf soak_load "$DIR/$n"
done

cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=${cgroot:+$cgroot/sfbpf-soak-churn.$$}
if [ -z "$CG" ] || ! mkdir "$CG" 2>/dev/null; then
	echo "FAIL: soak-churn: cannot make a cgroup v2 directory (${cgroot:-no cgroup2 mount})"
	exit 1
fi
SOCK=sfbpf-soak-churn-$$
LOAD_PIDS=()
SVC_PID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local p i
	# shellcheck disable=SC2086 # SVC_PID: none or one
	kill_ours "${LOAD_PIDS[@]}" $SVC_PID
	tmux -L "$SOCK" kill-server 2>/dev/null
	# The containers' cgroups are removed by the load; what is left, deepest first.
	for ((i = 0; i < 100; i++)); do
		find "$CG" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$CG" ] || break
		sleep 0.1
	done
	rm -rf "${DIR:?}/bin"
}
trap cleanup EXIT
now() { echo "${EPOCHREALTIME/./}" | cut -c1-13; } # ms

# sampling PID: whether PID has attached its perf events (it samples).
sampling() { grep -qs '^link_type:\s*perf' /proc/"$1"/fdinfo/*; }

LIMIT=$((WARMUP_MAX + DURATION + 600))
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
LPORT=$(free_port)
while [ "$LPORT" = "$PORT" ]; do LPORT=$(free_port); done
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:detect_leaks=1}
log "sfbpf-top: $TOP at $HZ Hz on cgroup $CG; $DURATION s judged after a steady state" \
	"(warm-up at most $WARMUP_MAX s); work directory $DIR"
# The service: a push server that is down (port 9, discard, closed) keeps the spool full.
"$TOP" --continuous --interval "$INTERVAL" --out-dir "$DIR/profiles" --keep "$SOAK_KEEP" \
	--push http://127.0.0.1:9 --spool-max "$SOAK_SPOOL" --push-timeout 2 --metrics "127.0.0.1:$PORT" \
	--cgroup "$CG" -F "$HZ" "${BUDGETS[@]}" "$LIMIT" >"$DIR/service.out" 2>"$DIR/service.err" &
SVC_PID=$!
# The live view, in a terminal of tmux's; its status goes to tui.rc. Its
# /metrics: what it holds (stacks, symbols, heap in use), judged as the service's.
LIVE="$TOP --cgroup $CG -F $HZ ${BUDGETS[*]} --metrics 127.0.0.1:$LPORT $LIMIT"
tmux -L "$SOCK" new-session -d -x 160 -y 50 -s churn "$LIVE 2>$DIR/tui.err; echo \$? >$DIR/tui.rc"
TUI_PID=
start=$(now)
until [ -n "$TUI_PID" ] && sampling "$SVC_PID" && sampling "$TUI_PID"; do
	pane=$(tmux -L "$SOCK" list-panes -t churn -F '#{pane_pid}' 2>/dev/null)
	TUI_PID=$(awk '{ print $1 }' /proc/"$pane"/task/"$pane"/children 2>/dev/null)
	if ! kill -0 "$SVC_PID" 2>/dev/null || [ -s "$DIR/tui.rc" ] ||
		[ $(($(now) - start)) -gt 300000 ]; then
		echo "FAIL: soak-churn-start: both did not start sampling: service:" \
			"$(tail -2 "$DIR/service.err" | tr '\n' ' ') live view: $(tail -2 "$DIR/tui.err")"
		exit 1
	fi
	sleep 0.2
done
log "both sampling after $((($(now) - start) / 1000)) s (service $SVC_PID, live view $TUI_PID)"

# load NAME ARGS...: a generator in the cgroup, until SIGTERM.
load() {
	local name=$1
	shift
	# shellcheck disable=SC2016
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" "$@" \
		>"$DIR/$name.out" 2>&1 &
	LOAD_PIDS+=($!)
}
load exec "$DIR/churn_exec" exec "$LIMIT" "$RATE" "$DIR/bin" "$DIR/soak_churn" \
	"$DIR/soak_churn_z" "$CG" 0.3 0.03
load dlopen "$DIR/churn_dlopen" dlopen "$LIMIT" "$DLOPEN_RATE" "$DIR/bin" \
	"$DIR/libplugin.so" 100 30
load jit "$DIR/churn_jit" jit "$LIMIT" 5 20
# Short processes of one binary (soak_load.c's storm; its spinner never: every 10^6 s).
load storm "$DIR/soak_storm" storm "$LIMIT" "$STORM_RATE" 1000000 0 0.002

printf 'service %s http://127.0.0.1:%s/metrics %s\nlive %s http://127.0.0.1:%s/metrics\n' \
	"$SVC_PID" "$PORT" "$DIR/profiles" "$TUI_PID" "$LPORT" >"$DIR/instances"
"$PY" "$ROOT/scripts/soak_churn.py" monitor "$DIR" "$DURATION" "$WARMUP_MAX" "$WINDOW" \
	"$WINDOWS"

# The live view shows the churn (its rows: the decaying window of the last refreshes).
for ((i = 0; i < 300; i++)); do
	tmux -L "$SOCK" capture-pane -p -t churn >"$DIR/tui.screen" 2>/dev/null
	grep -q 'churn_hot' "$DIR/tui.screen" && break
	sleep 0.1
done
grep -q 'churn_hot' "$DIR/tui.screen"
TUI_SHOWS=$?

kill -TERM "${LOAD_PIDS[@]}" 2>/dev/null
wait "${LOAD_PIDS[@]}" 2>/dev/null
cat "$DIR"/exec.out "$DIR"/dlopen.out "$DIR"/jit.out "$DIR"/storm.out >"$DIR/load.txt"
for ((i = 0; i < 600; i++)); do
	[ -z "$(find "$CG" -name cgroup.procs -size +0 2>/dev/null | head -1)" ] && break
	sleep 0.1
done
tmux -L "$SOCK" send-keys -t churn q
kill -TERM "$SVC_PID" 2>/dev/null
wait "$SVC_PID"
SVC_RC=$?
SVC_PID=
for ((i = 0; i < 300; i++)); do
	[ -s "$DIR/tui.rc" ] && break
	sleep 0.1
done
TUI_RC=$(cat "$DIR/tui.rc" 2>/dev/null)
log "service exited $SVC_RC, live view ${TUI_RC:-did not exit at q}; load:" \
	"$(grep -v '^container ' "$DIR/load.txt" | tr '\n' ' ')"

failed=0
result() { # NAME OK WHY
	if [ "$2" = 0 ]; then echo "PASS: soak-churn-$1: $3"; else echo "FAIL: soak-churn-$1: $3" && failed=1; fi
}
result exit "$([ "$SVC_RC" = 0 ] && [ "$TUI_RC" = 0 ]; echo $?)" \
	"service status $SVC_RC, live view status ${TUI_RC:-none (no exit at q)}"
bad=$(grep -hE 'AddressSanitizer|LeakSanitizer|runtime error' "$DIR/service.err" "$DIR/tui.err" |
	head -1)
result sanitizers "$([ -z "$bad" ]; echo $?)" "${bad:-no report}"
result live-view "$TUI_SHOWS" "the live view's screen $([ "$TUI_SHOWS" = 0 ] ||
	echo 'does not ')shows churn_hot at the end"
spooled=$(find "$DIR/profiles/spool" -name '*.pb.gz' 2>/dev/null | wc -l)
result spool "$([ "$spooled" -ge 12 ]; echo $?)" \
	"$spooled profiles waiting in the spool (its limit 12: filled)"
"$PY" "$ROOT/scripts/soak_churn.py" judge "$DIR" "$DURATION" "${SOAK_MIN_COMPLETE:-85}" || failed=1
exit $failed
