#!/bin/bash
# Issue 44 on a 16-CPU non-Debian host: the release sfbpf-top on JVMs started
# with no profiling flag, each JDK scripts/device/prepare.sh packed (a
# jlink'ed java.base and jdk.jfr: Debian's and any other build found there),
# judged as tests/hsprofile.test judges (tests/hsprofile_check.py):
#   JDK-mixed  the fixture (tests/fixtures/JavaWork.java) with JFR sampling
#              every millisecond, sfbpf-top -p and --off-cpu -p on the same
#              run, JFR's window: stacks whole from the thread's entry, the
#              calls at their lines, the innermost methods and edges against
#              JFR's, the stop reasons; off CPU, the napper's sleeps
#   JDK-polls  the fixture's main thread answering another's handshakes:
#              samples stopped in the safepoint handler end there, counted
#   scale      one fixture JVM per CPU (the first JDK), sfbpf-top system-wide
#              at 999 Hz: every JVM attached, none dropped, the fixtures'
#              stacks whole
# Results under $OUT (java.txt; the folded stacks, compressed).
set -u
R=$(cd "$(dirname "$0")/../.." && pwd)
D=${SFBPF_DEVICE_DIR:-$R/build-release/device}
O=${OUT:-/tmp/devjava}
W=$(mktemp -d /tmp/devjava.XXXXXX)
mkdir -p "$O"
exec > >(tee "$O/java.txt") 2>&1
T=$D/sfbpf-top
CHECK=$R/tests/hsprofile_check.py
SRC=$R/tests/fixtures/JavaWork.java
PIDS=()
trap 'kill -9 "${PIDS[@]}" 2>/dev/null' EXIT
. /etc/os-release
echo "== $PRETTY_NAME $(uname -r) $(nproc) CPUs; $("$T" --version | head -1)"
stats() { awk '$2 == "stat" && $3 ~ /^(samples|emitted|drops|ringbuf_drops|event_drops|stacks_complete|stacks_truncated|hs_[a-z_]+)$/ && $4 != 0 { printf "%s=%s ", $3, $4 } END { print "" }' "$1"; }

# jfc NAME: the JDK's "profile" settings with execution samples every millisecond.
jfc() {
	python3 - "$1/lib/jfr/profile.jfc" "$2" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
i = s.index('<event name="jdk.ExecutionSample">')
j = s.index("</event>", i)
block = re.sub(r'<setting name="period"[^>]*>[^<]*</setting>',
               '<setting name="period">1 ms</setting>', s[i:j])
open(sys.argv[2], "w").write(s[:i] + block + s[j:])
PY
}

# inloop PID: the fixture's main thread past 2 s of CPU (60 s at most).
inloop() {
	local i t
	for ((i = 0; i < 600; i++)); do
		t=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null)
		[ -n "$t" ] || return 1
		[ "$t" -ge 200 ] && return 0
		sleep 0.1
	done
	return 1
}

# started PID OUT: JFR said it started recording (60 s at most).
started() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "Started recording" "$2" 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

JDKS=()
for tarball in "$D"/jdk-*.tar.xz; do
	name=$(basename "$tarball" .tar.xz)
	mkdir -p "$W/$name"
	tar -C "$W/$name" --strip-components=1 -xJf "$tarball" || continue
	JDKS+=("$W/$name")
	echo "== $name: $("$W/$name/bin/java" -version 2>&1 | sed -n 2p)"
done

for jdk in "${JDKS[@]}"; do
	n=$(basename "$jdk")
	d=$W/$n-mixed
	mkdir -p "$d"
	jfc "$jdk" "$d/sample.jfc"
	"$jdk/bin/java" -XX:StartFlightRecording:filename="$d/rec.jfr,settings=$d/sample.jfc" \
		-cp "$D/classes" JavaWork "$d/stop" >"$d/java.out" 2>&1 &
	jp=$!
	PIDS+=("$jp")
	if ! started "$jp" "$d/java.out"; then
		echo "FAIL: $n: the JVM did not start: $(tail -3 "$d/java.out" | tr '\n' ' ')"
		continue
	fi
	# Both profiles over JFR's window: from its start to the JVM's exit.
	timeout 60 "$T" --off-cpu -p "$jp" --folded "$d/off.folded" --stats 6 >"$d/off.out" 2>&1 &
	op=$!
	timeout 60 "$T" -F 499 -p "$jp" --folded "$d/on.folded" --stats 6 >"$d/top.out" 2>&1
	echo "$n on-CPU: rc=$? $(stats "$d/top.out")"
	wait "$op"
	echo "$n off-CPU: rc=$?"
	: >"$d/stop"
	wait "$jp"
	"$jdk/bin/jfr" print --stack-depth 128 --events jdk.ExecutionSample "$d/rec.jfr" >"$d/jfr.txt" 2>&1
	python3 "$CHECK" hsstops "$n-stops" "$d/top.out"
	python3 "$CHECK" stacks "$n" "$d/on.folded" "$SRC"
	python3 "$CHECK" jfr "$n-jfr" "$d/on.folded" "$d/jfr.txt" all
	python3 "$CHECK" offcpu "$n-offcpu" "$d/off.folded" "$SRC"
	sort -t' ' -k2 -nr "$d/on.folded" | head -2 | cut -c1-400
	gzip -c "$d/on.folded" >"$O/$n.folded.gz"
	# polls: the main thread answering handshakes (hsprofile.test's polls case).
	p=$W/$n-polls
	mkdir -p "$p"
	"$jdk/bin/java" -Djavawork.handshakes=true -cp "$D/classes" JavaWork "$p/stop" \
		>"$p/java.out" 2>&1 &
	jp=$!
	PIDS+=("$jp")
	inloop "$jp" &&
		timeout 60 "$T" -F 999 -p "$jp" --folded "$p/on.folded" --stats 3 >"$p/top.out" 2>&1
	echo "$n polls: rc=$? $(stats "$p/top.out")"
	python3 "$CHECK" neversafe "$n-polls-neversafe" "$p/on.folded" "$p/top.out"
	python3 "$CHECK" stacks "$n-polls" "$p/on.folded" "$SRC"
	kill -9 "$jp"
done

echo "== scale: $(nproc) fixture JVMs ($(basename "${JDKS[0]}")), sfbpf-top system-wide at 999 Hz"
s=$W/scale
mkdir -p "$s"
jps=()
for i in $(seq "$(nproc)"); do
	"${JDKS[0]}/bin/java" -cp "$D/classes" JavaWork "$s/stop" >"$s/java$i.out" 2>&1 &
	jps+=($!)
	PIDS+=($!)
done
for jp in "${jps[@]}"; do inloop "$jp" || echo "FAIL: scale: JVM $jp did not start"; done
timeout 90 "$T" -F 999 --folded "$s/all.folded" --stats 10 >"$s/top.out" 2>&1 &
tp=$!
sleep 8
grep -E 'VmHWM|VmRSS' "/proc/$(pgrep -P "$tp" | head -1)/status" 2>/dev/null | tr '\n' ' '
echo
wait "$tp"
echo "scale: rc=$? $(stats "$s/top.out")"
attached=$(awk '$2 == "stat" && $3 == "hs_attached" { print $4 }' "$s/top.out")
echo "$([ "${attached:-0}" -ge "$(nproc)" ] && echo PASS || echo FAIL): scale-attached: hs_attached=${attached:-none} of $(nproc) JVMs"
python3 "$CHECK" hsstops "scale-stops" "$s/top.out"
python3 "$CHECK" stacks "scale" "$s/all.folded" "$SRC" fixture
: >"$s/stop"
gzip -c "$s/all.folded" >"$O/scale.folded.gz"
cp "$s/top.out" "$O/scale.top.txt"
echo done
