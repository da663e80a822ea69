# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): slowdown: CPU-bound workloads profiled system-wide by sfbpf, perf -g, perf --call-graph dwarf, or nothing.

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
		perf record --no-bpf-event -q -B -N -a "${cg[@]}" -F "$hz" -D -1 \
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
