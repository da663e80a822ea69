# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): the helpers every benchmark uses: awk summaries, CPU and map accounting, spawning and stopping workloads, building the drivers and workloads.

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
# med_of(a, k, n): the median of a[k, 1..n], the repetitions of configuration k.
function med_of(a, k, n,    i, v) {
	for (i = 1; i <= n; i++)
		v[i] = a[k, i]
	return median(v, n)
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
# SRC, the library and the DEPs; DRIVER_CFLAGS adds flags, DRIVER_SRCS sources (arrays). A driver
# that does not build against this tree prints its errors and "bench: PART:
# FAILED", and returns 1.
DRIVER_CFLAGS=()
DRIVER_SRCS=()
build_driver() {
	local part=$1 src=$2 name
	shift 2
	name=$(basename "$src" .c)
	up_to_date "$BB/$name" "$src" "$BUILD/libsfbpf.a" "$@" && return 0
	"$CC" "${WARN[@]}" -O2 -g -std=gnu11 -D_GNU_SOURCE "${DRIVER_CFLAGS[@]}" -I"$BUILD" \
		-I"$ROOT" -I"$ROOT/userspace" "$src" "${DRIVER_SRCS[@]}" "$BUILD/libsfbpf.a" "${LDLIBS[@]}" -o "$BB/$name" \
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
	DRIVER_SRCS=("$src/kcost_jit.c")
	build_driver kcost "$src/kcost.c" "$BUILD/fpwalk.skel.h" "$src/kcost_jit.c" "$src/kcost.h" ||
		return 1
	DRIVER_SRCS=()
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
