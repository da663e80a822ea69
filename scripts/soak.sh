#!/usr/bin/env bash
# Soak: sfbpf-top profiles the whole system for DURATION seconds while load
# generators churn processes, libraries and threads (scripts/soak_load.c, built
# here with -Wa,--gsframe):
#   storm    fork+exec of a short program SOAK_RATE (100) times a second, and
#            every 2 s a process spinning 1 s in main;a;b;hot
#   dlopen   dlopen of tests/fixtures/libplugin.c, 20 ms spinning in it,
#            dlclose, 30 ms pause, again
#   threads  20 threads a second, each spinning 10 ms, then exiting
# Meanwhile it samples sfbpf-top's VmRSS and the BPF memory of its maps
# (memlock of the maps its descriptors hold: tests/bpfobjs.py) every
# DURATION/100 s (at least 1 s). Checks, one PASS/FAIL line each:
#   exit          sfbpf-top exits 0; no sanitizer report on its stderr
#   rss-flat      after warm-up (the first third), RSS grows less than
#                 SOAK_GROWTH (5) %: Theil-Sen slope (robust to transient
#                 steps) times the time left, over the median; not judged for
#                 an ASan build (its allocator sets the RSS)
#   maps-flat     the same for the BPF map memory
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
# Usage: scripts/soak.sh [--asan] [--top PATH] [--mode batch|continuous] DURATION
#   --asan  run build/asan/sfbpf-top (ASan + UBSan; quarantine 16 MB)
#   --mode  batch (default): sfbpf-top -b -d SOAK_INTERVAL --stats, every row
#           of every table kept; continuous: --continuous --interval
#           SOAK_INTERVAL into the work directory (no stacks check)
# Env: SFBPF_BUILD (build), SOAK_DIR (work directory, default a new
# /tmp/sfbpf-soak.*: logs, tables, memory samples), SOAK_HZ (99),
# SOAK_RATE (100), SOAK_INTERVAL (-d of the batch tables: 5).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SFBPF_BUILD:-$ROOT/build}
TOP=$BUILD/sfbpf-top
HZ=${SOAK_HZ:-99}
RATE=${SOAK_RATE:-100}
INTERVAL=${SOAK_INTERVAL:-5}
ASAN=0
MODE="batch"

usage() {
	sed -n '/^# Usage:/,/^[^#]/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while [ $# -gt 1 ]; do
	case $1 in
	--asan) ASAN=1 TOP=$BUILD/asan/sfbpf-top ;;
	--top) TOP=$2 && shift ;;
	--mode) MODE=$2 && shift ;;
	*) usage ;;
	esac
	shift
done
if [ $# -ne 1 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 30 ]; then
	usage
fi
[ "$MODE" = batch ] || [ "$MODE" = continuous ] || usage
DURATION=$1
DIR=${SOAK_DIR:-$(mktemp -d /tmp/sfbpf-soak.XXXXXX)}
mkdir -p "$DIR"
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

PIDS=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
}
trap cleanup EXIT

now() {
	echo "${EPOCHREALTIME/./}" | cut -c1-13 # ms
}

# ASan's default quarantine (256 MB) would be taken for growth.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:detect_leaks=1}
log "sfbpf-top: $TOP, $MODE mode, ${DURATION} s at ${HZ} Hz; work directory $DIR"
if [ "$MODE" = batch ]; then
	ARGS=(-b -d "$INTERVAL" -n 0 --group comm -s total)
else
	ARGS=(--continuous --interval "$INTERVAL" --out-dir "$DIR/profiles" --keep 10)
fi
"$TOP" "${ARGS[@]}" --stats -F "$HZ" "$DURATION" >"$DIR/tables.txt" 2>"$DIR/top.err" &
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

# The load ends 5 s before sfbpf-top, so that every exit is seen.
LOAD=$((DURATION - 5))
"$DIR/soak_storm" storm "$LOAD" "$RATE" 2 1 >"$DIR/storm.out" 2>&1 &
PIDS+=($!)
"$DIR/soak_dlopen" dlopen "$LOAD" "$DIR/libplugin.so" 20 30 >"$DIR/dlopen.out" 2>&1 &
PIDS+=($!)
"$DIR/soak_threads" threads "$LOAD" 20 10 >"$DIR/threads.out" 2>&1 &
PIDS+=($!)

SAMPLE=$((DURATION / 100))
[ "$SAMPLE" -ge 1 ] || SAMPLE=1
echo "t_ms rss_kb map_bytes prog_bytes" >"$DIR/memory.tsv"
while kill -0 "$TOP_PID" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/"$TOP_PID"/status 2>/dev/null)
	mem=$("$PY" "$ROOT/tests/bpfobjs.py" memlock "$TOP_PID" 2>/dev/null)
	[ -n "$rss" ] && [ -n "$mem" ] &&
		echo "$(($(now) - t0)) $rss $(echo "$mem" | awk '{ print $2, $4 }')" >>"$DIR/memory.tsv"
	sleep "$SAMPLE"
done
wait "$TOP_PID"
RC=$?
wait
log "sfbpf-top exited $RC after $((($(now) - t0) / 1000)) s"
cat "$DIR"/storm.out "$DIR"/dlopen.out "$DIR"/threads.out >"$DIR/load.txt"

"$PY" - "$DIR" "$RC" "$DURATION" "${SOAK_GROWTH:-5}" "${SOAK_MIN_COMPLETE:-85}" "$ASAN" "$MODE" <<'EOF'
import re
import statistics
import sys

d, rc, duration, max_growth, min_complete, asan, mode = sys.argv[1:]
rc, duration, max_growth, min_complete = int(rc), int(duration), float(max_growth), float(min_complete)
failed = False


def check(name, ok, why):
    global failed
    print("%s: soak-%s: %s" % ("PASS" if ok else "FAIL", name, why))
    failed |= not ok


err = open(d + "/top.err", errors="replace").read()
check("exit", rc == 0, "status %d" % rc)
bad = re.search(r"(AddressSanitizer|LeakSanitizer|runtime error).*", err)
check("sanitizers", not bad, bad.group(0)[:200] if bad else
      "no report" + (" (ASan + UBSan build)" if asan == "1" else " (not a sanitizer build)"))

# Counters: the last value of each "sfbpf: stat NAME VALUE" (the block at exit).
stats = {}
for name, value in re.findall(r"^sfbpf: stat (\S+) (\d+)$", err, re.M):
    stats[name] = int(value)
load = dict((k, int(v)) for k, v in re.findall(r"^(\w+) (\d+)$", open(d + "/load.txt").read(), re.M))

# Memory: warm-up is the first third. Growth after it is the Theil-Sen slope
# (median of the pairwise slopes) over the rest of the run, relative to its
# median: a steady rise counts, a transient step (a huge table being built for
# some other process, the allocator giving memory back) does not.
rows = [tuple(map(int, line.split())) for line in open(d + "/memory.tsv").readlines()[1:]]
end_ms = rows[-1][0] if rows else 0


def growth(col):
    after = [(r[0], r[col]) for r in rows if r[0] >= end_ms / 3]
    slopes = [(b[1] - a[1]) / (b[0] - a[0]) for i, a in enumerate(after) for b in after[i + 1:]
              if b[0] > a[0]]
    if len(after) < 5 or not slopes:
        return None, after
    level = statistics.median(v for _, v in after)
    return 100.0 * statistics.median(slopes) * (after[-1][0] - after[0][0]) / level, after


for col, name, scale in ((1, "rss", 1024), (2, "maps", 1 << 20)):
    g, after = growth(col)
    if g is None:
        check(name + "-flat", False, "too few samples (%d)" % len(rows))
        continue
    allv = [r[col] for r in rows]
    why = "%+.1f %% over the %d s after warm-up (MiB: %.1f at start, median %.1f -> %.1f in the " \
        "first and last sixth after warm-up, peak %.1f; %d samples)" \
        % (g, (after[-1][0] - after[0][0]) / 1000, allv[0] / scale,
           statistics.median(v for t, v in after[:max(1, len(after) // 4)]) / scale,
           statistics.median(v for t, v in after[-max(1, len(after) // 4):]) / scale,
           max(allv) / scale, len(allv))
    if name == "rss" and asan == "1":
        print("SKIP: soak-rss-flat: not judged for an ASan build, whose allocator sets the RSS: " + why)
        continue
    check(name + "-flat", g < max_growth, why)

s = stats.get
if not stats:
    check("samples", False, "no counters on stderr")
else:
    ok = s("samples") == s("emitted") + s("drops") and s("received") <= s("emitted") and \
        s("emitted") - s("received") <= max(10, s("emitted") // 1000)
    check("samples", ok, "samples %d = emitted %d + drops %d; received %d (%.1f/s)"
          % (s("samples"), s("emitted"), s("drops"), s("received"), s("received") / duration))
    started = load.get("storm_short", 0) + load.get("storm_spin", 0)
    ok = s("lifecycle.exec") == s("exec_events") and s("lifecycle.exit") == s("exit_events") and \
        s("exec_events") >= started and s("exit_events") >= started
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
