#!/usr/bin/env bash
# Soak: sfbpf-top profiles under churn while load generators start processes,
# libraries and threads (scripts/soak_load.c, built here with -Wa,--gsframe):
#   storm    fork+exec of a short program SOAK_RATE (100) times a second (each
#            spinning SOAK_SHORT_SECS in main;a;b;hot, 0: none), and every 2 s
#            a process spinning 1 s in main;a;b;hot
#   dlopen   dlopen of tests/fixtures/libplugin.c, 20 ms spinning in it,
#            dlclose, 30 ms pause, again
#   threads  20 threads a second, each spinning 10 ms, then exiting
# With --cgroup the load runs in a cgroup v2 directory of its own and
# sfbpf-top profiles that cgroup only (--cgroup): the soak measures what its
# own load costs, not whatever else a busy machine runs; without, the whole
# system.
#
# Memory is judged on what the program holds: its anonymous resident memory
# (RssAnon: heap, stacks, its own data; not the file pages of the binaries,
# symbol tables and debug files it maps, which belong to the page cache and
# come and go) and the BPF memory of its maps (memlock of the maps its
# descriptors hold: tests/bpfobjs.py), sampled every second. The program keeps
# state that grows before it levels off (the mappings of up to 4096 exited
# processes it sampled, tables for the objects it sees), so the run has two
# phases:
#   warm-up  until a steady state is measured: over the last SOAK_WINDOWS (6)
#            windows of SOAK_WINDOW (5) s, each judged series grows (Theil-Sen
#            slope) at less than half the rate its bound allows over DURATION;
#            at most SOAK_WARMUP_MAX (600) s, else FAIL: never steady
#   judged   DURATION seconds after it: the growth (Theil-Sen slope, robust to
#            transient steps, times the judged time) in absolute KiB must stay
#            under a bound derived from what the program keeps:
#              anon RSS: the largest interval it holds at once (the biggest
#                        profile or table it wrote, uncompressed: a new high
#                        water mark adds at most that) + 128 KiB per thread
#                        (glibc's trim threshold: what each malloc arena may
#                        keep of what was freed); not judged for an ASan build
#              maps:     the bytes of the tables loaded (table_bytes, or what
#                        the maps grew by in the warm-up: reloading every
#                        table at most)
# Checks, one PASS/FAIL line each:
#   exit          sfbpf-top exits 0; no sanitizer report on its stderr
#   steady        a steady state was reached (and when)
#   rss-flat      anon RSS growth after it within its bound
#   maps-flat     BPF map memory growth after it within its bound
#   samples       the BPF counters add up: samples == emitted + drops;
#                 userspace received them all (emitted - received <= 0.1 %)
#   lifecycle     every exec and exit event BPF sent was handled; at least as
#                 many exec and exit events as the storm started processes
#   stacks        the storm's spinners, the dlopen'ed plugin and the short
#                 threads unwind completely in >= SOAK_MIN_COMPLETE (85) % of
#                 their samples: from the batch tables (--group comm, every
#                 row), the total of a frame only the leaf's stacks pass
#                 through (__libc_start_call_main, run_plugin below the
#                 plugin's frames, start_thread) over the leaf's total
# Prints the medians and peaks. Exit status 1 if a check failed.
#
# Usage: scripts/soak.sh [--asan] [--top PATH] [--mode batch|continuous] [--cgroup] DURATION
#        scripts/soak.sh --churn [--top PATH] DURATION
#   DURATION  seconds judged after the steady state (30 at least)
#   --churn   the churn soak, "a week in an hour": scripts/soak_churn.sh
#             (distinct binaries, libraries, perf maps, containers; the live
#             view and --continuous at once; its header says what is judged)
#   --asan    run build/asan/sfbpf-top (ASan + UBSan; quarantine 16 MB)
#   --mode    batch (default): sfbpf-top -b -d SOAK_INTERVAL --stats, every row
#             of every table kept; continuous: --continuous --interval
#             SOAK_INTERVAL into the work directory (no stacks check)
#   --cgroup  profile the load's own cgroup only (see above)
# Env: SFBPF_BUILD (build), SOAK_DIR (work directory, default a new
# /tmp/sfbpf-soak.*: logs, tables, memory samples), SOAK_HZ (99),
# SOAK_RATE (100), SOAK_SHORT_SECS (0), SOAK_INTERVAL (-d of the batch
# tables: 5), SOAK_WINDOW (5), SOAK_WINDOWS (6), SOAK_WARMUP_MAX (600).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
BUILD=${SFBPF_BUILD:-$ROOT/build}
TOP=$BUILD/sfbpf-top
HZ=${SOAK_HZ:-99}
RATE=${SOAK_RATE:-100}
SHORT_SECS=${SOAK_SHORT_SECS:-0}
INTERVAL=${SOAK_INTERVAL:-5}
WINDOW=${SOAK_WINDOW:-5}
WINDOWS=${SOAK_WINDOWS:-6}
WARMUP_MAX=${SOAK_WARMUP_MAX:-600}
ASAN=0
MODE="batch"
CGROUP=0
CHURN=0

usage() {
	sed -n '/^# Usage:/,/^[^#]/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while [ $# -gt 1 ]; do
	case $1 in
	--asan) ASAN=1 TOP=$BUILD/asan/sfbpf-top ;;
	--top) TOP=$2 && shift ;;
	--mode) MODE=$2 && shift ;;
	--cgroup) CGROUP=1 ;;
	--churn) CHURN=1 ;;
	*) usage ;;
	esac
	shift
done
if [ "$CHURN" = 1 ]; then
	[ "$TOP" = "$BUILD/sfbpf-top" ] || exec "$ROOT/scripts/soak_churn.sh" --top "$TOP" "$@"
	exec "$ROOT/scripts/soak_churn.sh" "$@"
fi
if [ $# -ne 1 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 30 ]; then
	usage
fi
[ "$MODE" = batch ] || [ "$MODE" = continuous ] || usage
DURATION=$1
DIR=${SOAK_DIR:-$(mktemp -d /tmp/sfbpf-soak.XXXXXX)}
mkdir -p "$DIR"
rm -f "$DIR/steady_ms" "$DIR/bounds"
PY=$(command -v /usr/bin/python3 || command -v python3)
log() { echo "soak: $*"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: soak: needs root to load BPF programs"
	exit 0
fi
if [ ! -x "$TOP" ]; then
	echo "FAIL: soak: $TOP not built (make)"
	exit 1
fi
readelf -d "$TOP" 2>/dev/null | grep -q 'NEEDED.*libasan' && ASAN=1
if ! gcc -O2 -g -Wa,--gsframe "$ROOT/scripts/soak_load.c" -o "$DIR/soak_load" -ldl -lpthread \
	2>"$DIR/build.log" ||
	! gcc -O2 -g -Wa,--gsframe -shared -fPIC "$ROOT/tests/fixtures/libplugin.c" \
		-o "$DIR/libplugin.so" 2>>"$DIR/build.log"; then
	echo "FAIL: soak: building the load programs: $(head -3 "$DIR/build.log" | tr '\n' ' ')"
	exit 1
fi
for n in soak_storm soak_short soak_spin soak_dlopen soak_threads; do
	ln -sf soak_load "$DIR/$n"
done

CG=
if [ "$CGROUP" = 1 ]; then
	cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	CG=${cgroot:+$cgroot/sfbpf-soak.$$}
	if [ -z "$CG" ] || ! mkdir "$CG" 2>/dev/null; then
		echo "FAIL: soak: cannot make a cgroup v2 directory for the load (${cgroot:-no cgroup2 mount})"
		exit 1
	fi
fi

PIDS=()
LOAD_PIDS=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local p i
	kill_ours "${LOAD_PIDS[@]}" "${PIDS[@]}"
	if [ -n "$CG" ]; then
		# The storm's last children end within their spin; then the directory goes.
		for ((i = 0; i < 100; i++)); do
			rmdir "$CG" 2>/dev/null && break
			sleep 0.1
		done
	fi
}
trap cleanup EXIT

now() {
	echo "${EPOCHREALTIME/./}" | cut -c1-13 # ms
}

# ASan's default quarantine (256 MB) would be taken for growth.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:detect_leaks=1}
log "sfbpf-top: $TOP, $MODE mode at ${HZ} Hz, ${CG:+cgroup $CG, }${DURATION} s judged after a" \
	"steady state (warm-up at most $WARMUP_MAX s); work directory $DIR"
if [ "$MODE" = batch ]; then
	ARGS=(-b -d "$INTERVAL" -n 0 --group comm -s total)
else
	ARGS=(--continuous --interval "$INTERVAL" --out-dir "$DIR/profiles" --keep 1000)
fi
[ -n "$CG" ] && ARGS+=(--cgroup "$CG")
# Ended by SIGTERM once judged; the time limit only stops a run that never is.
LIMIT=$((WARMUP_MAX + DURATION + 300))
"$TOP" "${ARGS[@]}" --stats -F "$HZ" "$LIMIT" >"$DIR/tables.txt" 2>"$DIR/top.err" &
TOP_PID=$!
PIDS+=("$TOP_PID")

# The run starts when it samples (its perf links are there).
start=$(now)
until grep -qs '^link_type:\s*perf' /proc/"$TOP_PID"/fdinfo/*; do
	if ! kill -0 "$TOP_PID" 2>/dev/null || [ $(($(now) - start)) -gt 300000 ]; then
		echo "FAIL: soak-start: sfbpf-top did not start sampling: $(tail -3 "$DIR/top.err" | tr '\n' ' ')"
		exit 1
	fi
	sleep 0.1
done
t0=$(now)
log "sampling after $(((t0 - start) / 1000)) s of loading"

# load NAME ARGS...: a load generator (in the cgroup with --cgroup), until
# SIGTERM: its time limit only stops a run that never sends it.
load() {
	local name=$1
	shift
	if [ -n "$CG" ]; then
		# shellcheck disable=SC2016
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$CG" "$@" \
			>"$DIR/$name.out" 2>&1 &
	else
		"$@" >"$DIR/$name.out" 2>&1 &
	fi
	LOAD_PIDS+=($!)
}
short=()
[ "$SHORT_SECS" != 0 ] && short=("$SHORT_SECS")
load storm "$DIR/soak_storm" storm "$LIMIT" "$RATE" 2 1 "${short[@]}"
load dlopen "$DIR/soak_dlopen" dlopen "$LIMIT" "$DIR/libplugin.so" 20 30
load threads "$DIR/soak_threads" threads "$LIMIT" 20 10

# bounds: what the program keeps, as known now, into $DIR/bounds:
# "RSS_BOUND_KIB TABLE_BYTES LARGEST_INTERVAL_BYTES THREADS" (see the header).
bounds() {
	"$PY" - "$DIR" "$MODE" <<'EOF'
import gzip, glob, re, sys
d, mode = sys.argv[1:]
largest = 0
if mode == "continuous":
    for f in sorted(glob.glob(d + "/profiles/*.pb.gz")):
        try:
            largest = max(largest, len(gzip.open(f).read()))
        except (OSError, EOFError):
            pass
else:
    # The tables' text, table by table (each starts with its header line).
    block = 0
    for line in open(d + "/tables.txt", errors="replace"):
        if re.match(r"^\S+ \S+\s+\d+ samples", line):
            largest, block = max(largest, block), 0
        block += len(line)
    largest = max(largest, block)
# A line being appended by the sampler may be read half written: whole ones only.
rows = [list(map(int, l.split())) for l in open(d + "/memory.tsv").readlines()[1:]
        if len(l.split()) == 6 and l.endswith("\n")]
threads = max([r[5] for r in rows] or [1])
# The most the tables took in any block of counters (batch: every table;
# continuous: at exit only, when the load's tables may be gone already).
found = re.findall(r"^sfbpf: stat table_bytes (\d+)$", open(d + "/top.err", errors="replace").read(),
                   re.M)
table_bytes = max(map(int, found)) if found else 0
# Or what the maps grew by while the tables were loaded, before the steady state.
try:
    steady = int(open(d + "/steady_ms").read().strip() or 0)
except (OSError, ValueError):
    steady = 0
before = [r[4] for r in rows if r[0] <= steady]
if before:
    table_bytes = max(table_bytes, max(before) - before[0])
rss_kib = largest / 1024 + 128 * threads
open(d + "/bounds", "w").write("%.0f %d %d %d\n" % (rss_kib, table_bytes, largest, threads))
EOF
}

# steady WINDOW_MS MIN_SAMPLES: whether every judged series grew at less than
# half the rate its bound allows over DURATION, over the last WINDOW_MS of
# memory.tsv, or its last MIN_SAMPLES samples if that window holds fewer.
# Prints the rates.
steady() {
	"$PY" - "$DIR" "$1" "$DURATION" "$ASAN" "$2" <<'EOF'
import statistics, sys
d, window_ms, duration, asan, min_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], \
    int(sys.argv[5])
# A line being appended by the sampler may be read half written: whole ones only.
rows = [list(map(int, l.split())) for l in open(d + "/memory.tsv").readlines()[1:]
        if len(l.split()) == 6 and l.endswith("\n")]
last = [r for r in rows if rows and r[0] >= rows[-1][0] - window_ms]
# The sampler's second stretches when the machine is busy (2 s at load 16:
# 14 samples in 30 s, and no window was ever full): then the last MIN_SAMPLES
# samples, over the longer time they span.
if len(last) < min_n:
    last = rows[-min_n:]
if not rows or rows[-1][0] - rows[0][0] < window_ms or len(last) < min_n:
    print("too early: %d samples over the last %d s" % (len(last), window_ms // 1000))
    sys.exit(1)
def rate(col):  # per second
    s = [(b[col] - a[col]) / (b[0] - a[0]) for i, a in enumerate(last) for b in last[i + 1:]
         if b[0] > a[0]]
    return 1000 * statistics.median(s) if s else 0.0
rss_bound, table_bytes = map(int, open(d + "/bounds").read().split()[:2])
# Columns: t_ms rss_kb anon_kb file_kb map_bytes threads. Map memory: until
# the first counters say what the tables take, it must not move at all.
series = [(4, "maps", rate(4) / 1024, table_bytes / 1024)]
if asan != "1":
    series.insert(0, (2, "anon RSS", rate(2), rss_bound))
ok, why = True, []
for col, name, r, bound in series:
    allowed = bound / duration / 2
    ok &= r < allowed or (r <= 0 and bound == 0)
    why.append("%s %+.2f KiB/s (steady below %.2f)" % (name, r, allowed))
print("; ".join(why))
sys.exit(0 if ok else 1)
EOF
}

# map_bytes PID: the BPF memory of the maps PID's descriptors hold, once per
# map (fdinfo memlock, as tests/bpfobjs.py memlock counts it): one grep.
map_bytes() {
	grep -s -E '^(map_id|memlock|link_id):' /proc/"$1"/fdinfo/* |
		awk -F'[:[:space:]]+' '$2 == "memlock" { m[$1] = $3 } $2 == "map_id" { id[$1] = $3 }
			$2 == "link_id" { l[$1] = 1 }
			END { for (f in id) if (!(f in l) && (f in m)) u[id[f]] = m[f]
			      for (i in u) s += u[i]; print s + 0 }'
}

# Memory every second (read cheaply: a busy machine must not thin the
# samples): warm-up until steady, then DURATION judged, 30 samples at least.
echo "t_ms rss_kb anon_kb file_kb map_bytes threads" >"$DIR/memory.tsv"
phase=warmup
steady_ms=
why=
judged=0
next_check=$((t0 + WINDOW * 1000))
while kill -0 "$TOP_PID" 2>/dev/null; do
	rss= anon= file= threads=
	while read -r k v _; do
		case $k in
		VmRSS:) rss=$v ;;
		RssAnon:) anon=$v ;;
		RssFile:) file=$v ;;
		Threads:) threads=$v ;;
		esac
	done <"/proc/$TOP_PID/status" 2>/dev/null
	mem=$(map_bytes "$TOP_PID")
	# Every field, or the judge drops the row this loop counted (a busy machine
	# once gave a read of status without RssFile: 29 rows judged of 30 counted).
	if [ -n "$rss" ] && [ -n "$anon" ] && [ -n "$file" ] && [ -n "$threads" ] &&
		[ "${mem:-0}" -gt 0 ]; then
		echo "$(($(now) - t0)) $rss $anon $file $mem $threads" >>"$DIR/memory.tsv"
		[ "$phase" = judged ] && judged=$((judged + 1))
	fi
	t=$(now)
	if [ "$phase" = warmup ] && [ "$t" -ge "$next_check" ]; then
		next_check=$((t + WINDOW * 1000))
		bounds
		if why=$(steady $((WINDOW * WINDOWS * 1000)) $((WINDOW * WINDOWS * 2 / 3))); then
			steady_ms=$((t - t0))
			phase=judged
			log "steady after $((steady_ms / 1000)) s: $why"
		elif [ $((t - t0)) -gt $((WARMUP_MAX * 1000)) ]; then
			log "no steady state after $WARMUP_MAX s: $why"
			break
		fi
	fi
	[ "$phase" = judged ] && [ $((t - t0 - steady_ms)) -ge $((DURATION * 1000)) ] &&
		[ "$judged" -ge 30 ] && break
	[ "$phase" = judged ] && [ $((t - t0 - steady_ms)) -ge $((DURATION * 3000)) ] && break
	sleep 1
done
echo "${steady_ms:-}" >"$DIR/steady_ms"

# The load ends first, so that every exit is seen: SIGTERM (the generators
# print what they started), their last children gone, then a grace of two
# intervals for the last events before sfbpf-top's SIGTERM.
kill -TERM "${LOAD_PIDS[@]}" 2>/dev/null
wait "${LOAD_PIDS[@]}" 2>/dev/null
cat "$DIR"/storm.out "$DIR"/dlopen.out "$DIR"/threads.out >"$DIR/load.txt"
if [ -n "$CG" ]; then
	for ((i = 0; i < 600; i++)); do
		[ -s "$CG/cgroup.procs" ] || break
		sleep 0.1
	done
fi
for ((i = 0; i < 2 * INTERVAL * 10; i++)); do
	kill -0 "$TOP_PID" 2>/dev/null || break
	sleep 0.1
done
kill -TERM "$TOP_PID" 2>/dev/null
wait "$TOP_PID"
RC=$?
log "sfbpf-top exited $RC after $((($(now) - t0) / 1000)) s"
bounds

"$PY" - "$DIR" "$RC" "$DURATION" "${SOAK_MIN_COMPLETE:-85}" "$ASAN" "$MODE" "$WARMUP_MAX" "$why" <<'EOF'
import re
import statistics
import sys

d, rc, duration, min_complete, asan, mode, warmup_max, warmup_why = sys.argv[1:]
rc, duration, min_complete = int(rc), int(duration), float(min_complete)
failed = False


def check(name, ok, why):
    global failed
    print("%s: soak-%s: %s" % ("PASS" if ok else "FAIL", name, why))
    failed |= not ok


err = open(d + "/top.err", errors="replace").read()
# SIGTERM ends the run: 0 is its status.
check("exit", rc == 0, "status %d" % rc)
bad = re.search(r"(AddressSanitizer|LeakSanitizer|runtime error).*", err)
check("sanitizers", not bad, bad.group(0)[:200] if bad else
      "no report" + (" (ASan + UBSan build)" if asan == "1" else " (not a sanitizer build)"))

# Counters: the last value of each "sfbpf: stat NAME VALUE" (the block at exit).
stats = {}
for name, value in re.findall(r"^sfbpf: stat (\S+) (\d+)$", err, re.M):
    stats[name] = int(value)
load = dict((k, int(v)) for k, v in re.findall(r"^(\w+) (\d+)$", open(d + "/load.txt").read(), re.M))

# Memory after the steady state: Theil-Sen slope (median of the pairwise
# slopes: a transient step does not count, a steady rise does) times the time
# judged, in absolute KiB, against the bound of what the program keeps.
rows = [tuple(map(int, line.split())) for line in open(d + "/memory.tsv").readlines()[1:]
        if len(line.split()) == 6 and line.endswith("\n")]
steady = open(d + "/steady_ms").read().strip()
rss_bound, table_bytes, largest, threads = map(int, open(d + "/bounds").read().split())
if not steady:
    check("steady", False, "no steady state within %s s of warm-up (%d samples; last window: %s)"
          % (warmup_max, len(rows), warmup_why))
else:
    steady = int(steady)
    after = [r for r in rows if r[0] >= steady]
    span = (after[-1][0] - after[0][0]) / 1000 if after else 0
    check("steady", len(after) >= 30 and span >= 0.9 * duration,
          "after %.0f s of warm-up (%s); %d samples judged over %.0f s"
          % (steady / 1000, warmup_why, len(after), span))
    for col, name, unit, bound, why_bound in (
            (2, "rss", 1, rss_bound, "the largest interval %.0f KiB + 128 KiB x %d threads"
             % (largest / 1024, threads)),
            (4, "maps", 1 / 1024, table_bytes / 1024, "the tables' %.0f KiB" % (table_bytes / 1024))):
        slopes = [(b[col] - a[col]) / (b[0] - a[0]) for i, a in enumerate(after)
                  for b in after[i + 1:] if b[0] > a[0]]
        if len(after) < 30 or not slopes:
            check(name + "-flat", False, "too few samples after the steady state (%d)" % len(after))
            continue
        span_ms = after[-1][0] - after[0][0]
        growth = statistics.median(slopes) * span_ms * unit  # KiB
        vals = [r[col] * unit for r in after]
        sixth = max(1, len(vals) // 6)
        what = "anon RSS" if col == 2 else "maps"
        why = "%+.0f KiB over the %.0f s judged (bound %.0f KiB: %s); %s KiB: %.0f at start, " \
            "%.0f at warm-up's end, median %.0f -> %.0f in the first and last sixth, peak %.0f" \
            % (growth, span_ms / 1000, bound, why_bound, what, rows[0][col] * unit, vals[0],
               statistics.median(vals[:sixth]), statistics.median(vals[-sixth:]), max(vals))
        if col == 2:
            why += " (VmRSS %.0f -> %.0f)" % (after[0][1], after[-1][1])
        if name == "rss" and asan == "1":
            print("SKIP: soak-rss-flat: not judged for an ASan build, whose allocator sets the RSS: "
                  + why)
            continue
        check(name + "-flat", growth <= bound, why)

s = stats.get
if not stats:
    check("samples", False, "no counters on stderr")
else:
    ok = s("samples") == s("emitted") + s("drops") and s("received") <= s("emitted") and \
        s("emitted") - s("received") <= max(10, s("emitted") // 1000)
    window = rows[-1][0] / 1000 if rows else 1
    check("samples", ok, "samples %d = emitted %d + drops %d; received %d (%.1f/s)"
          % (s("samples"), s("emitted"), s("drops"), s("received"), s("received") / window))
    started = load.get("storm_short", 0) + load.get("storm_spin", 0)
    ok = s("lifecycle.exec") == s("exec_events") and s("lifecycle.exit") == s("exit_events") and \
        s("exec_events") >= started and s("exit_events") >= started and started > 0
    check("lifecycle", ok, "exec %d (handled %d), exit %d (handled %d), dropped %d; storm started %d"
          % (s("exec_events"), s("lifecycle.exec"), s("exit_events"), s("lifecycle.exit"),
             s("event_drops"), started))
    print("soak: counters at exit: " + ", ".join(
        "%s %d" % (k, s(k, 0)) for k in ("processes", "objects", "objects_lingering", "rows",
                                          "evictions", "stacks_complete", "stacks_truncated",
                                          "stop.no_proc", "stop.no_mapping", "notify_sent",
                                          "lifecycle.queue_drops", "exited_forgotten", "rss_bytes")))
    print("soak: load: " + ", ".join("%s %d" % kv for kv in sorted(load.items())))

# Stacks, from the batch tables: per interval, each row's TOTAL% of the interval's samples.
totals = {}
samples = 0
for line in open(d + "/tables.txt", errors="replace"):
    m = re.match(r"^\S+ \S+\s+(\d+) samples", line)
    if m:
        samples = int(m.group(1))
        continue
    f = line.split()
    if len(f) >= 7 and re.match(r"^[\d.]+$", f[1]) and f[4].startswith("soak_"):
        key = (f[4], f[-1])
        totals[key] = totals.get(key, 0) + float(f[1]) * samples / 100
# A root frame that only the leaf's stacks pass through (its total may exceed the
# leaf's by the few samples taken elsewhere under it: capped).
for comm, leaf, root in (("soak_spin", "hot", "__libc_start_call_main"),
                         ("soak_dlopen", "plugin_hot", "run_plugin"),
                         ("soak_threads", "t_hot", "start_thread")):
    if mode != "batch":
        break
    n, c = totals.get((comm, leaf), 0), totals.get((comm, root), 0)
    pct = min(100.0, 100.0 * c / n) if n else 0
    check("stacks-" + comm[5:], n >= 50 and pct >= min_complete,
          "%.1f %% of %.0f samples in %s go through %s" % (pct, n, leaf, root))
sys.exit(1 if failed else 0)
EOF
