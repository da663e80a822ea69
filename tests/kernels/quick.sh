#!/usr/bin/env bash
# The quick check of one kernel (tests/kernels.test runs it in a guest booted
# by scripts/kernel-vm.sh; it runs on the host too): does every BPF program
# load, in the form this kernel gets, and unwind a stack to main?
#   on-off     (alone with QUICK=1) --on-off on deep_recursion: the CPU
#              profiler, off-CPU and lifecycle programs load; rec_hot's
#              stacks are complete and off-CPU periods were recorded
#   cpu        the CPU profiler on deep_recursion: its samples in rec_hot
#              carry main;recurse*100;rec_hot, complete
#   offcpu     the off-CPU program on blockers: reader_block's stack
#   pyoffcpu   --off-cpu on a napping python3: nap_outer;nap_inner in its
#              stacks (the Python walk of the off-CPU program, chained too)
#   lifecycle  system-wide, a process exec'd after the start: its stacks are
#              complete too (exec events seen)
#   continuous --continuous writes a pprof profile naming rec_hot
#   live       the live view (tmux): rec_hot on top, called by recurse
#   depth      deep1000 (1,000 frames of recursion): complete where the walk
#              is one program (1,024 frames), cut at exactly the chain's
#              depth (SFBPF_CHAIN_FRAMES x SFBPF_CHAIN_PROGS, stop "depth";
#              one link more from 5.17 on) where it is chained
# Each run also records which form loaded in $OUT/verifier.txt, with the
# verifier's statistics when VV=1 (-vv: slow under emulation, the verifier
# then logs every instruction). Prints PASS/FAIL/SKIP lines.
# Usage: tests/kernels/quick.sh FIXDIR OUT   (FIXDIR: deep, deep1000 and
# blockers built with -Wa,--gsframe)
set -u
FIX=$1
OUT=$2
TOP=${SFBPF_TOP:-${SFBPF_BUILD:-$(dirname "$0")/../../build}/sfbpf-top}
PY=$(command -v /usr/bin/python3 || command -v python3)
KVER=$(uname -r)
V=-v
[ -n "${VV:-}" ] && V=-vv
mkdir -p "$OUT"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT

pass() { echo "PASS: $KVER: $*"; }
fail() { echo "FAIL: $KVER: $*"; }

# start PROG SECS: runs PROG in the background, its PID in $pid, after
# ending the one started before (a spinner left running slows every check
# after it).
start() {
	if [ ${#pids[@]} -gt 0 ]; then
		kill "${pids[@]}" 2>/dev/null
		wait "${pids[@]}" 2>/dev/null
	fi
	"$@" >/dev/null &
	pid=$!
	pids=("$pid")
}

# chains FOLDED COMM: COMM's rec_hot samples that are complete
# (main;recurse*100;rec_hot from main) and all of them, "good total". A
# sample taken before the process's table was loaded has its leaf only
# ([truncated];rec_hot): not counted (under emulation loading takes a while).
chains() {
	"$PY" - "$1" "$2" <<'EOF'
import sys
good = total = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if frames[0] != sys.argv[2]:
        continue
    user = [f for f in frames[1:] if not f.endswith("_[k]")]
    if not user or user[-1] != "rec_hot" or user == ["[truncated]", "rec_hot"]:
        continue
    total += int(n)
    i = user.index("main") if "main" in user else -1
    if i >= 0 and user[i + 1:] == ["recurse"] * 100 + ["rec_hot"]:
        good += int(n)
print(good, total)
EOF
}

# verdict NAME FOLDED COMM MIN: complete chains in >= 95% of at least MIN
# samples (or µs of on- and off-CPU time).
verdict() {
	local name=$1 good total
	read -r good total < <(chains "$2" "$3")
	if [ "${total:-0}" -ge "$4" ] && [ $((good * 100)) -ge $((total * 95)) ]; then
		pass "$name: $good/$total rec_hot samples complete to main"
	else
		fail "$name: ${good:-0}/${total:-0} rec_hot samples complete to main (want >= 95% of >= $4)"
	fi
}

# The form this kernel loads, and each program's verifier statistics.
form() {
	grep -h -E 'unwinder:|verifier \(' "$@" | sed 's/^sfbpf: //' >>"$OUT/verifier.txt"
}

# stat FILE NAME: the last value of counter NAME in a --stats output.
stat() {
	awk -v k="$2" '$2 == "stat" && $3 == k { v = $4 } END { print v }' "$1"
}

# sample_until BASE COUNTER MIN ARGS...: sfbpf-top ARGS, its text tables
# every second (-b) to BASE.out and its counters (--stats, at every table) to
# BASE.err, until COUNTER (or the sum of A+B...) reaches MIN, 600 s at most;
# then SIGTERM, which writes its outputs. Waits for what is judged, not for a
# time: a busy machine or an emulated one only takes longer. The counters are
# read as they come, with the shell's builtins alone (a process started twice
# a second under emulation took the guest's time from the verifier: 5.10's
# quick check took 94 s where it now takes 34). Returns sfbpf-top's status.
sample_until() {
	local base=$1 counter=$2 min=$3 top i c v line part= err pause
	local -A last=()
	shift 3
	: >"$base.err"
	"$TOP" "$@" -b -d 1 --stats 3600 >"$base.out" 2>>"$base.err" &
	top=$!
	exec {err}<"$base.err" {pause}<> <(:)
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$top" 2>/dev/null || break
		# A line read up to the end of the file may be half written: kept
		# until its end comes.
		while IFS= read -r -u "$err" line; do
			line=$part$line part=
			[[ $line =~ ^sfbpf:\ stat\ ([^ ]+)\ ([0-9]+)$ ]] &&
				last[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		done
		part=$part$line
		v=0
		for c in ${counter//+/ }; do
			v=$((v + ${last[$c]:-0}))
		done
		[ "$v" -ge "$min" ] && break
		read -r -t 0.5 -u "$pause"
	done
	exec {err}<&- {pause}<&-
	kill -TERM "$top" 2>/dev/null
	wait "$top"
}

# --- on-off: every program at once.
start "$FIX/deep" 3600
sample_until "$OUT/onoff" stacks_complete 150 "$V" --on-off -p "$pid" --folded "$OUT/onoff.folded"
rc=$?
form "$OUT/onoff.err"
samples=$(stat "$OUT/onoff.err" samples) blocks=$(stat "$OUT/onoff.err" offcpu.blocks)
if [ "$rc" -ne 0 ]; then
	fail "on-off: sfbpf-top exited $rc: $(grep -v 'verifier (' "$OUT/onoff.err" | tail -3 | tr '\n' ' ')"
elif [ "${samples:-0}" -lt 100 ] || [ "${blocks:-0}" -lt 1 ]; then
	fail "on-off: ${samples:-0} CPU samples (want >= 100), ${blocks:-0} off-CPU periods (want >= 1)"
else
	verdict "on-off ($samples samples, $blocks off-CPU periods)" "$OUT/onoff.folded" deep 1000
fi
[ -n "${QUICK:-}" ] && exit 0

# --- cpu
start "$FIX/deep" 3600
sample_until "$OUT/cpu" stacks_complete 150 "$V" -F 199 -p "$pid" --folded "$OUT/cpu.folded"
rc=$?
form "$OUT/cpu.err"
if [ "$rc" -ne 0 ]; then
	fail "cpu: sfbpf-top exited $rc: $(grep -v 'verifier (' "$OUT/cpu.err" | tail -3 | tr '\n' ' ')"
else
	verdict cpu "$OUT/cpu.folded" deep 100
fi

# --- offcpu: blockers' reader waits on a pipe, reader_block is in its stack.
start "$FIX/blockers" 3600
"$TOP" "$V" --off-cpu -p "$pid" --folded "$OUT/off.folded" 3 >"$OUT/off.out" 2>"$OUT/off.err"
rc=$?
form "$OUT/off.err"
n=$(grep -c ';thread_reader;reader_mid;reader_block;' "$OUT/off.folded" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "${n:-0}" -ge 1 ]; then
	pass "offcpu: reader_block's stack (thread_reader;reader_mid;reader_block)"
else
	fail "offcpu: exit $rc, $n stacks through reader_block: $(grep -v 'verifier (' "$OUT/off.err" | tail -3 | tr '\n' ' ')"
fi

# --- pyoffcpu: a Python thread that naps in nap_inner <- nap_outer: its
# Python frames in its off-CPU stacks too (chained: the chain's last link,
# sfbpf_offcpu_finish). Ended once 20 spliced stacks were read.
start "$PY" -S -c '
import time
def nap_inner():
    time.sleep(0.01)
def nap_outer():
    while True:
        nap_inner()
nap_outer()
'
sample_until "$OUT/pyoff" py_spliced 20 "$V" --off-cpu -p "$pid" --folded "$OUT/pyoff.folded"
rc=$?
form "$OUT/pyoff.err"
n=$(grep -c ';nap_outer ([^;]*);nap_inner ([^;]*);' "$OUT/pyoff.folded" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "${n:-0}" -ge 1 ]; then
	pass "pyoffcpu: Python frames off-CPU ($n stacks through nap_outer;nap_inner)"
else
	fail "pyoffcpu: exit $rc, ${n:-0} stacks through nap_outer;nap_inner: $(grep -v 'verifier (' "$OUT/pyoff.err" | tail -3 | tr '\n' ' ')"
fi

# --- lifecycle: system-wide; a process exec'd once the first table is out.
# Ended (SIGTERM: the outputs are written) once the tables after the one that
# showed the newcomer's main (its table in use) count 100 samples of it:
# however slow the machine, the check judges enough of them.
# waitfor SECS CMD...: polls CMD every 0.1 s until it succeeds or SECS pass.
waitfor() {
	local n=$(($1 * 10))
	shift
	until "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] && kill -0 "$top" 2>/dev/null || return 1
		sleep 0.1
	done
}
tables() { grep -c 'samples (' "$OUT/life.out" 2>/dev/null; }
# hot_past N: the tables after the one that showed the newcomer's main count
# N samples of its rec_hot (rows: Self% Total% Samples PID COMM DSO [.] NAME).
hot_past() {
	sleep 0.4 # the file grows by every row of a busy machine each second
	awk -v n="$seen" -v want="$1" '/samples \(/ { t++ }
		t > n && $5 == "deeplife" && $NF == "rec_hot" { s += $3 }
		END { exit !(s >= want) }' "$OUT/life.out"
}
"$TOP" -b -d 1 -n 0 -F 199 --folded "$OUT/life.folded" --stats >"$OUT/life.out" 2>"$OUT/life.err" &
top=$!
waitfor 600 grep -q 'samples (' "$OUT/life.out"
cp "$FIX/deep" "$OUT/deeplife"
start "$OUT/deeplife" 3600
waitfor 600 grep -qE 'deeplife .*\[\.\] main$' "$OUT/life.out"
seen=$(tables)
waitfor 600 hot_past 100
kill -TERM "$top" 2>/dev/null
wait "$top"
rc=$?
kill "$pid" 2>/dev/null
execs=$(stat "$OUT/life.err" exec_events)
if [ "$rc" -ne 0 ]; then
	fail "lifecycle: sfbpf-top exited $rc: $(tail -3 "$OUT/life.err" | tr '\n' ' ')"
elif [ "${execs:-0}" -lt 1 ]; then
	fail "lifecycle: no exec event counted (execs '${execs}')"
else
	verdict "lifecycle (execs $execs)" "$OUT/life.folded" deeplife 50
fi

# --- continuous: one profile in the out-dir, naming rec_hot.
start "$FIX/deep" 3600
rm -rf "$OUT/cont"
"$TOP" -p "$pid" --continuous --out-dir "$OUT/cont" --interval 1 3 >"$OUT/cont.out" 2>"$OUT/cont.err"
rc=$?
n=0
for f in "$OUT"/cont/*.pb.gz; do
	[ -f "$f" ] && gzip -dc "$f" | grep -qa rec_hot && n=$((n + 1))
done
if [ "$rc" -eq 0 ] && [ "$n" -ge 1 ]; then
	pass "continuous: $n profiles name rec_hot"
else
	fail "continuous: exit $rc, $n profiles naming rec_hot: $(tail -3 "$OUT/cont.err" | tr '\n' ' ')"
fi

# --- live: the live view as a person runs it (tmux, a terminal of 120x40):
# rec_hot on top with 50 samples, Enter lists its callers (recurse), q ends
# it with status 0. Every wait has a bound meant for emulation.
# until_screen SECS PATTERN: until the live view's screen matches PATTERN.
until_screen() {
	local i
	for ((i = 0; i < $1 * 5; i++)); do
		tmux -L "$LIVE" capture-pane -p -t live 2>/dev/null | grep -Eq -- "$2" && return 0
		sleep 0.2
	done
	return 1
}
live_screen() { tmux -L "$LIVE" capture-pane -p -t live 2>/dev/null | head -"${1:-12}" | tr '\n' '|'; }
if ! command -v tmux >/dev/null; then
	fail "live: tmux not installed (make deps installs it)"
else
	LIVE=sfbpf-quick-$$
	start "$FIX/deep" 3600
	rm -f "$OUT/live.rc"
	tmux -L "$LIVE" new-session -d -s live -x 120 -y 40 \
		"$TOP -p $pid -d 1 2>$OUT/live.err; echo \$? >$OUT/live.rc; sleep 600"
	# The rows are "Self% Total% Samples PID ... [.] NAME".
	if ! until_screen 300 '^ *[0-9.]+% +[0-9.]+% +([5-9][0-9]|[0-9]{3,}) .*\[\.\] rec_hot$'; then
		fail "live: no row of rec_hot with 50 samples: $(live_screen) $(tail -2 "$OUT/live.err" | tr '\n' ' ')"
	elif ! { tmux -L "$LIVE" send-keys -t live Home Enter && until_screen 60 'callers of rec_hot:' &&
		until_screen 60 ' recurse( |$)'; }; then
		fail "live: Enter on rec_hot does not list recurse among its callers: $(live_screen 20)"
	else
		tmux -L "$LIVE" send-keys -t live q
		for ((i = 0; i < 300; i++)); do
			[ -s "$OUT/live.rc" ] && break
			sleep 0.2
		done
		if [ "$(cat "$OUT/live.rc" 2>/dev/null)" = 0 ]; then
			pass "live: rec_hot on top, called by recurse; q ended it with status 0"
		else
			fail "live: q: exit status '$(cat "$OUT/live.rc" 2>/dev/null)': $(tail -2 "$OUT/live.err" | tr '\n' ' ')"
		fi
	fi
	tmux -L "$LIVE" kill-server 2>/dev/null
fi

# --- depth: how deep each form goes.
start "$FIX/deep1000" 3600
# Judged on 50 samples of deep1000 walked with its table: complete (one
# program) or cut at the chain's depth.
sample_until "$OUT/depth" stop.outermost+stop.depth 50 -v -p "$pid" --folded "$OUT/depth.folded"
rc=$?
depth=$(sed -n 's/.*unwinder: .*up to \([0-9]*\) frames.*/\1/p' "$OUT/depth.err" | head -1)
most=$("$PY" - "$OUT/depth.folded" <<'EOF'
import sys
most = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    user = [f for f in stack.split(";")[1:] if not f.endswith("_[k]") and f != "[truncated]"]
    most = max(most, len(user))
print(most)
EOF
)
depth_stops=$(stat "$OUT/depth.err" stop.depth)
if [ "$rc" -ne 0 ] || [ -z "$depth" ]; then
	fail "depth: exit $rc, form '${depth}': $(tail -3 "$OUT/depth.err" | tr '\n' ' ')"
elif [ "$depth" -ge 1024 ] && [ "${most:-0}" -gt 1000 ] && [ "${most:-0}" -lt 1024 ]; then
	pass "depth: one program, deep1000's stacks complete ($most frames)"
elif [ "$depth" -lt 1024 ] && [ "${depth_stops:-0}" -gt 0 ] &&
	{ [ "${most:-0}" -eq "$depth" ] || [ "${most:-0}" -eq $((depth + 8)) ]; }; then
	# 5.17 and later allow one tail call more (only SFBPF_DISABLE_FEATURES=loop chains there).
	pass "depth: chained, deep1000's stacks cut at $most frames (stop.depth $depth_stops)"
else
	fail "depth: form up to $depth frames, deepest stack $most frames, stop.depth ${depth_stops:-0}"
fi
