# Sourced by tests/*.test: reporting helpers and paths.
# shellcheck shell=bash
: "${SFBPF_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${SFBPF_BUILD:=$SFBPF_ROOT/build}"
: "${SFBPF_BINUTILS_CACHE:=/var/cache/sfbpf/binutils}"
: "${SFBPF_TEST_TMP:=$(mktemp -d /tmp/sfbpf-test.XXXXXX)}"
# ours, kill_ours: signal only the processes a test started.
# shellcheck source=scripts/lib.sh
source "$SFBPF_ROOT/scripts/lib.sh"

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }
skip() { echo "SKIP: $*"; }

# check NAME CMD...: PASS/FAIL on the command's exit status.
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}

# Reference binutils built by scripts/build-binutils.sh.
binutils_bin() { echo "$SFBPF_BINUTILS_CACHE/$1/bin"; }
binutils_src() { echo "$SFBPF_BINUTILS_CACHE/src/binutils-$1"; }

# unbuilt NAME WHAT: something make deps installs or builds (a package, the
# binutils cache, Google's pprof, a fixture toolchain) is missing or does not
# work. A failure, not a skip: make check runs make deps first, so a skip
# here would only hide a fresh machine's broken setup.
unbuilt() { fail "$1: $2 (make deps installs and builds it)"; }

# cpu_ticks PID: the clock ticks PID has run, user + system ("" if gone).
cpu_ticks() {
	sed -n 's/^.*) //p' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'
}

# start_time PID: when PID started, in clock ticks since boot ("" if gone): a
# PID that still has it is still the same process.
start_time() {
	sed -n 's/^.*) //p' "/proc/$1/stat" 2>/dev/null | awk '{ print $20 }'
}

# wait_exec PID BIN [SECS]: until PID (a forked shell) has exec'd BIN, 30 s at
# most; fails if PID is gone or runs something else then. What a test reads
# of the process after it (its comm, its maps) is then BIN's, however busy
# the machine.
wait_exec() {
	local i bin
	bin=$(readlink -f "$2")
	for ((i = 0; i < ${3:-30} * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 1
		[ "$(readlink "/proc/$1/exe")" = "$bin" ] && return 0
		sleep 0.1
	done
	return 1
}

# sampling PID: sfbpf-top PID samples (holds its perf_event link or the
# sched_switch tracepoint's): what it says on a terminal only.
sampling() {
	grep -qsE '^link_type:\s*perf|^tp_name:\s*sched_switch' "/proc/$1/fdinfo"/*
}

# wait_sampling TOP: until TOP (started in the background) samples or is gone, 300 s at most.
wait_sampling() {
	local i
	for ((i = 0; i < 3000; i++)); do
		sampling "$1" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# plt_ref PID: the PLT sections (.plt, .plt.sec, .plt.got) of PID's executable
# objects and their entries, as objdump labels them: "section PATH START SIZE"
# and "entry PATH START NAME" (hex ELF addresses). perf's names are no
# reference there (perf 6.1 names .plt by .rela.plt order, .plt.got not at
# all): samples in them are judged against these instead.
plt_ref() {
	awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' "/proc/$1/maps" | sort -u | while read -r obj; do
		readelf -SW "$obj" 2>/dev/null | sed -n 's/^ *\[ *[0-9]*\] *//p' |
			awk -v p="$obj" '$1 ~ /^\.plt(\.got|\.sec)?$/ { print "section", p, $3, $5 }'
		objdump -d -C -j .plt -j .plt.sec -j .plt.got "$obj" 2>/dev/null |
			awk -v p="$obj" '/^[0-9a-f]+ <.*>:$/ {
				name = substr($0, index($0, "<") + 1)
				sub(/>:$/, "", name)
				print "entry", p, $1, name }'
	done
}

# until_cpu TOP PID SECS [MAX]: once TOP (a profiler started in the
# background) samples, until PID has run SECS more seconds of CPU (MAX
# seconds of wall time at most, 300), then SIGINT to TOP; returns TOP's exit
# status. A window in the target's CPU time, not in wall time, gives it as
# many samples however busy the machine.
until_cpu() {
	local top=$1 pid=$2 need c0 c t0=$SECONDS
	need=$(awk -v s="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { print int(s * hz + 0.5) }')
	wait_sampling "$top"
	c0=$(cpu_ticks "$pid")
	while kill -0 "$top" 2>/dev/null && [ $((SECONDS - t0)) -lt "${4:-300}" ]; do
		c=$(cpu_ticks "$pid")
		[ -z "$c" ] || [ -z "$c0" ] || [ $((c - c0)) -ge "$need" ] && break
		sleep 0.1
	done
	kill -INT "$top" 2>/dev/null
	wait "$top"
}

# vm_profile TEST NAME SECS [OPTION...]: one case of a runtime's test: sfbpf-top's
# folded stacks, pprof, OTLP and counters in $TMP/NAME (TOPENV: its environment;
# TOPOPTS: options of every case). SECS of wall time; with CPUOF=PID, SECS of
# PID's CPU time (until_cpu; 60 + 10 * SECS s of wall time at most), so a sub
# with a small share of the work gets as many samples however busy the
# machine: for a program that computes until told to stop, not one that
# idles once a load of given length ends. A non-zero exit fails TEST-NAME.
vm_profile() {
	local test=$1 name=$2 secs=$3 rc out
	shift 3
	mkdir -p "$TMP/$name"
	out=("$@" --folded "$TMP/$name/out.folded" --pprof "$TMP/$name/out.pb.gz"
		--otlp-file "$TMP/$name/out.otlp" --stats)
	if [ -n "${CPUOF:-}" ]; then
		env "${TOPENV[@]}" "$TOP" "${TOPOPTS[@]}" "${out[@]}" 300 >"$TMP/$name/top.out" 2>&1 &
		until_cpu $! "$CPUOF" "$secs" $((60 + 10 * secs))
	else
		env "${TOPENV[@]}" "$TOP" "${TOPOPTS[@]}" "${out[@]}" "$secs" >"$TMP/$name/top.out" 2>&1
	fi
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$test-$name: sfbpf-top exited $rc: $(tail -3 "$TMP/$name/top.out" | tr '\n' ' ')"
		return 1
	fi
}

# wait_running PID: until PID has run on a CPU (its loop started), 60 s at most.
wait_running() {
	local i t
	for ((i = 0; i < 600; i++)); do
		kill -0 "$1" 2>/dev/null || return 1
		t=$(sed -n 's/^.*) //p' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }')
		[ "${t:-0}" -gt 0 ] && return 0
		sleep 0.1
	done
	return 1
}
