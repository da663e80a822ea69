# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): kcost: kernel time per sample, the SFrame unwinder against the frame-pointer walk.

bench_kcost() {
	local raw=$TMP/kcost.txt rc=0
	log "kcost: unwinder vs fpwalk, ${KC_DEPTHS// /, } frames, $KC_REPS x ${KC_SECS}s at $KC_HZ Hz"
	KC_SAVED_STACK=$(cat /proc/sys/kernel/perf_event_max_stack)
	KC_STACK_NOTE="raised from $KC_SAVED_STACK to $KC_MAX_STACK for this part, restored after"
	[ "$KC_SAVED_STACK" -ge "$KC_MAX_STACK" ] && KC_STACK_NOTE="$KC_SAVED_STACK"
	if [ "$KC_SAVED_STACK" -lt "$KC_MAX_STACK" ] && ! set_max_stack "$KC_MAX_STACK"; then
		KC_STACK_NOTE="$KC_SAVED_STACK: could not be raised (busy: other perf or BPF users), so the frame-pointer walk stops there"
		log "kcost: kernel.perf_event_max_stack $KC_STACK_NOTE"
	fi
	# shellcheck disable=SC2086
	"$BB/kcost" -d "$KC_SECS" -r "$KC_REPS" -f "$KC_HZ" "$BB/recurse.sframe" "$BB/recurse.fp" \
		$KC_DEPTHS >"$raw" 2>"$TMP/kcost.err" || rc=1
	# Busy now: the exit handler tries again.
	if [ "$(cat /proc/sys/kernel/perf_event_max_stack)" != "$KC_SAVED_STACK" ]; then
		set_max_stack "$KC_SAVED_STACK" || log "kcost: kernel.perf_event_max_stack busy: tried again at exit"
	fi
	if [ "$rc" != 0 ]; then
		cat "$TMP/kcost.err" >&2
		echo "bench: kcost: FAILED ($(tail -1 "$TMP/kcost.err"))"
		return 1
	fi
	awk "$AWK_LIB"'
	$1 == "kcost" {
		d = kv($0, "frames"); p = kv($0, "prog"); r = kv($0, "rep")
		runs = kv($0, "runs"); smp = kv($0, "samples")
		if (runs == 0 || smp == 0)
			next
		ns[d, p, ++n[d, p]] = kv($0, "run_ns") / runs
		fr[d, p, n[d, p]] = kv($0, "user_frames") / smp
		sm[d, p, n[d, p]] = smp
		stop[d, p] = kv($0, "stop")
		per[d, r, p] = ns[d, p, n[d, p]]
		if (!((d, r) in seen)) { seen[d, r] = 1; reps[d] = reps[d] " " r }
		if (!(d in dseen)) { dseen[d] = 1; depths[++nd] = d }
	}
	END {
		for (i = 1; i <= nd; i++) dd[i] = depths[i] + 0
		sortn(dd, nd)
		print "| target frames | frames/sample SFrame / FP | SFrame ns/sample | FP ns/sample | ratio | SFrame ns/frame | FP ns/frame | samples per repetition SFrame / FP | stop (SFrame / FP) |" > md
		print "|---|---|---|---|---|---|---|---|---|" > md
		line = ""
		for (i = 1; i <= nd; i++) {
			d = dd[i]
			for (k = 1; k <= 2; k++) {
				p = k == 1 ? "sframe" : "fp"
				delete a; delete b; delete c
				for (j = 1; j <= n[d, p]; j++) { a[j] = ns[d, p, j]; b[j] = fr[d, p, j]; c[j] = sm[d, p, j] }
				mns[p] = median(a, n[d, p]); mfr[p] = median(b, n[d, p]); msm[p] = median(c, n[d, p])
			}
			m = split(reps[d], rr, " "); delete q; nq = 0
			for (j = 1; j <= m; j++)
				if (((d, rr[j], "sframe") in per) && ((d, rr[j], "fp") in per) && per[d, rr[j], "fp"] > 0)
					q[++nq] = per[d, rr[j], "sframe"] / per[d, rr[j], "fp"]
			ratio = median(q, nq)
			x[i] = mfr["sframe"]; y[i] = mns["sframe"]; xf[i] = mfr["fp"]; yf[i] = mns["fp"]
			printf "| %d | %.1f / %.1f | %.0f | %.0f | **%.2f** | %.1f | %.1f | %d / %d | %s / %s |\n", \
				d, mfr["sframe"], mfr["fp"], mns["sframe"], mns["fp"], ratio, \
				mns["sframe"] / mfr["sframe"], mns["fp"] / mfr["fp"], msm["sframe"], msm["fp"], \
				stop[d, "sframe"], stop[d, "fp"] > md
			line = line sprintf("%s%d frames: SFrame %.0f ns vs FP %.0f ns (x%.2f)", i > 1 ? "; " : "", d, mns["sframe"], mns["fp"], ratio)
			if (d == 32) r32 = ratio
		}
		if (nd >= 2) {
			# Slopes over the frames each unwinder produced (the FP walk may stop early).
			s_sf = (y[nd] - y[1]) / (x[nd] - x[1])
			s_fp = (xf[nd] > xf[1]) ? (yf[nd] - yf[1]) / (xf[nd] - xf[1]) : 0
			printf "\nMarginal cost per frame (slope from %d to %d frames): SFrame %.1f ns, FP %.1f ns", \
				dd[1], dd[nd], s_sf, s_fp > md
			if (nd >= 3) {
				printf "; between depths:" > md
				for (i = 2; i <= nd; i++) {
					sep = i > 2 ? "," : ""
					a_sf = (y[i] - y[i - 1]) / (x[i] - x[i - 1])
					a_fp = xf[i] > xf[i - 1] ? (yf[i] - yf[i - 1]) / (xf[i] - xf[i - 1]) : 0
					printf "%s %d-%d: %.1f / %.1f", sep, dd[i - 1], dd[i], a_sf, a_fp > md
				}
			}
			print "." > md
			line = line sprintf("; per extra frame %.1f vs %.1f ns", s_sf, s_fp)
		}
		if (r32 != "")
			line = line sprintf(" [32 frames: x%.2f, target <= 1.5: %s", r32, r32 <= 1.5 ? "met" : "MISSED")
		if (r32 != "" && nd >= 2 && s_fp > 0)
			line = line sprintf("; per extra frame <= FP: %s", s_sf <= s_fp ? "met" : "MISSED")
		if (r32 != "")
			line = line "]"
		print "bench: kcost: " line
	}' md="$MD/kcost.table" "$raw"
	cp "$raw" "$MD/kcost.raw"
	bench_kcost_vma
}

# A process without an entry (issue 47), 32 frames: walked with the VMAs the
# kernel finds, its file's table published by identity (a hit: the kept
# mappings serve), or its file unknown (a miss: a VMA lookup and no table),
# each side by side with the frame-pointer walk as above.
bench_kcost_vma() {
	local raw=$TMP/kcost-vma.txt m
	: >"$raw"
	for m in vma vmamiss; do
		if ! "$BB/kcost" -m "$m" -d "$KC_SECS" -r "$KC_REPS" -f "$KC_HZ" "$BB/recurse.sframe" \
			"$BB/recurse.fp" 32 >>"$raw" 2>>"$TMP/kcost.err"; then
			echo "bench: kcost: FAILED (-m $m: $(tail -1 "$TMP/kcost.err"))"
			return 1
		fi
	done
	awk "$AWK_LIB"'
	$1 == "kcost" {
		p = kv($0, "prog"); runs = kv($0, "runs"); smp = kv($0, "samples")
		if (runs == 0 || smp == 0)
			next
		ns = kv($0, "run_ns") / runs
		if (p != "fp") { mode = p; own = ns; fr[mode, ++n[mode]] = kv($0, "user_frames") / smp; st[mode] = kv($0, "stop"); next }
		k = ++nr[mode]; a[mode, k] = own; b[mode, k] = ns; q[mode, k] = ns > 0 ? own / ns : 0
	}
	function med(m, arr,   t, j) { delete t; for (j = 1; j <= nr[m]; j++) t[j] = arr[m, j]; return median(t, nr[m]) }
	function medf(m,   t, j) { delete t; for (j = 1; j <= n[m]; j++) t[j] = fr[m, j]; return median(t, n[m]) }
	END {
		printf "bench: kcost: no entry, 32 frames: a hit (VMAs found in the kernel) %.0f ns vs FP %.0f ns (x%.2f, %.1f frames, stop %s); a miss (no table for its file) %.0f ns vs FP %.0f ns (x%.2f, stop %s)\n", \
			med("vma", a), med("vma", b), med("vma", q), medf("vma"), st["vma"], \
			med("vmamiss", a), med("vmamiss", b), med("vmamiss", q), st["vmamiss"]
	}' "$raw"
	cat "$raw" >>"$MD/kcost.raw"
}

# --- 2. slowdown of CPU-bound workloads --------------------------------------

PROF_PID=0
PROF_KIND=none
CTL_FD=
ACK_FD=
