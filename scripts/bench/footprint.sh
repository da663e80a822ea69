# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): footprint (resident memory on a busy machine) and throughput (the highest rate with no ring drops).

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
