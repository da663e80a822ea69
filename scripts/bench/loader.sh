# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): loader: rows/s flattened and pushed, map bytes against .sframe bytes, time until the machine is covered.

# sfbpf_run OUT ARGS...: runs sfbpf-top ARGS until attached, notes the wall time
# to attach and the BPF map memory, stops it; stats in OUT.
sfbpf_run() {
	local out=$1 t0 ready pid
	shift
	t0=$EPOCHREALTIME
	"$TOP" "${TOP_OPTS[@]}" --stats --folded "$TMP/ld.folded" "$@" >/dev/null 2>"$out" &
	pid=$!
	BG_PIDS+=("$pid")
	ready=$("$BB/benchutil" wait-attached "$pid" "$NCPU" 120) || {
		wait "$pid" || true
		forget "$pid"
		return 1
	}
	ready=${ready#ready_us=}
	echo "sfbpf: stat attach_us $((ready - ${t0/./}))" >>"$out.extra"
	echo "sfbpf: stat bpf_map_bytes $(map_bytes "$pid")" >>"$out.extra"
	stop_pid "$pid" TERM
	cat "$out.extra" >>"$out"
	rm -f "$out.extra"
	# Killed before it printed its counters: no measurement.
	grep -c '^sfbpf: stat samples ' "$out" >/dev/null
}

bench_loader() {
	local raw=$TMP/loader.txt rep f files=() cfi_files=() libc
	: >"$raw"
	build_driver loader "$ROOT/tests/bench/ldcost.c" || return 1
	# One object at a time: a real program, the generated large sections, and
	# for comparison libc, whose table is synthesized from .eh_frame.
	if [ -n "${ZSTD:-}" ]; then files+=("$ZSTD"); fi
	for f in "$BB/bigsframe.$BIG_FUNCS".v1 "$BB/bigsframe.$BIG_FUNCS".v3; do
		if [ -x "$f" ]; then files+=("$f"); fi
	done
	libc=$(ldd "$BB/mtwork" | awk '$1 ~ /^libc\.so/ { print $3 }')
	# Rows from .eh_frame: libc, gcc's cc1 and the largest libLLVM, each also
	# built by the libdw row walk the CFA interpreter replaced
	# (SFBPF_CFI_ROWS=libdw), alternating with the interpreter in every
	# repetition, beside the SFrame objects.
	# (The quick run: libc only.)
	for f in "$libc" /usr/lib/gcc/x86_64-linux-gnu/*/cc1 \
		"$(ls -S /usr/lib/x86_64-linux-gnu/libLLVM-*.so.1 2>/dev/null | head -1)"; do
		if [ -n "$f" ] && [ -f "$f" ] && { [ "$QUICK" = 0 ] || [ "$f" = "$libc" ]; }; then
			cfi_files+=("$f")
		fi
	done
	files+=("${cfi_files[@]}")
	log "loader: ${#files[@]} objects one at a time, $LD_REPS repetitions (and ${#cfi_files[@]} with libdw's rows)"
	for ((rep = 0; rep < LD_REPS; rep++)); do
		"$BB/ldcost" -r 1 "${files[@]}" >>"$raw" 2>"$TMP/ldcost.err" &&
			{ [ ${#cfi_files[@]} -eq 0 ] ||
				SFBPF_CFI_ROWS=libdw "$BB/ldcost" -r 1 "${cfi_files[@]}" >>"$raw" 2>"$TMP/ldcost.err"; } || {
			cat "$TMP/ldcost.err" >&2
			echo "bench: loader: FAILED ($(tail -1 "$TMP/ldcost.err"))"
			return 1
		}
	done
	# The whole machine: the processes running now, then with the
	# SFrame programs above running too (each blocked so it stays put).
	log "loader: the whole system, $LD_SYS_REPS repetitions, without and with the programs above"
	for ((rep = 0; rep < LD_SYS_REPS; rep++)); do
		sfbpf_run "$TMP/ld.out" -U || continue
		echo "system rep=$rep target=as_is $(awk '$1 == "sfbpf:" { printf "%s=%s ", $3, $4 }' "$TMP/ld.out")" >>"$raw"
	done
	if [ -n "${ZSTD:-}" ]; then
		mkfifo "$TMP/zstd.in"
		"$ZSTD" -q -c "$TMP/zstd.in" >/dev/null 2>&1 &
		BG_PIDS+=("$!")
		exec {ZIN}<>"$TMP/zstd.in" # holds the FIFO open: zstd waits for data
	fi
	for f in "$BB/bigsframe.$BIG_FUNCS".v1 "$BB/bigsframe.$BIG_FUNCS".v3; do
		if [ -x "$f" ]; then spawn "$f" 600; fi
	done
	sleep 0.3
	# (The same path as above: the quick run skips it.)
	for ((rep = 0; rep < LD_SYS_REPS && QUICK == 0; rep++)); do
		sfbpf_run "$TMP/ld.out" -U || continue
		echo "system rep=$rep target=with_programs $(awk '$1 == "sfbpf:" { printf "%s=%s ", $3, $4 }' "$TMP/ld.out")" >>"$raw"
	done
	if [ -n "${ZIN:-}" ]; then exec {ZIN}>&-; fi
	stop_spawned
	cp "$raw" "$MD/loader.raw"
	awk "$AWK_LIB"'
	$1 == "ldcost" && kv($0, "cfi_rows") == "libdw" {
		f = kv($0, "file")
		j = ++ln_n[f]
		for (k in ofields) lv[f, k, j] = kv($0, k) + 0
		next
	}
	$1 == "ldcost" {
		f = kv($0, "file")
		if (!(f in fs)) { fs[f] = 1; order[++nf] = f }
		j = ++n[f]
		src[f] = kv($0, "source")
		for (k in ofields) v[f, k, j] = kv($0, k) + 0
	}
	$1 == "system" {
		t = kv($0, "target")
		if (!(t in ts)) { ts[t] = 1; sorder[++nt] = t }
		j = ++sn[t]
		for (k in sfields) sv[t, k, j] = kv($0, k) + 0
	}
	function med(f, k,    a, j) {
		for (j = 1; j <= n[f]; j++) a[j] = v[f, k, j]
		return median(a, n[f])
	}
	function lmed(f, k,    a, j) {
		for (j = 1; j <= ln_n[f]; j++) a[j] = lv[f, k, j]
		return median(a, ln_n[f])
	}
	function smed(t, k,    a, j) {
		for (j = 1; j <= sn[t]; j++) a[j] = sv[t, k, j]
		return median(a, sn[t])
	}
	BEGIN {
		split("rows rules pages table_bytes sframe_bytes load_ns push_ns total_ns", tmp, " ")
		for (i in tmp) ofields[tmp[i]] = 1
		split("processes objects objects_without_table objects_sframe objects_eh_frame rows rows_sframe rows_eh_frame table_bytes sframe_bytes load_us attach_us bpf_map_bytes table_map_bytes table_budget_bytes rss_bytes", tmp, " ")
		for (i in tmp) sfields[tmp[i]] = 1
	}
	END {
		print "| object | unwind data | rows | rules | page index entries | table bytes | .sframe bytes | table / .sframe | bytes per row | build / push / whole load | rows per second |" > md
		print "|---|---|---|---|---|---|---|---|---|---|---|" > md
		for (i = 1; i <= nf; i++) {
			f = order[i]
			rows = med(f, "rows"); tb = med(f, "table_bytes"); sb = med(f, "sframe_bytes")
			# Decode, flatten and push: the whole tables__acquire() call.
			ln = med(f, "total_ns"); bn = med(f, "load_ns"); pn = med(f, "push_ns")
			name = f; sub(".*/", "", name)
			if (name ~ /^bigsframe\./) {
				split(name, parts, ".")
				name = sprintf("generated, %d functions (SFrame %s)", parts[2], parts[3])
			}
			printf "| %s | %s | %d | %d | %d | %d | %s | %s | %s | %.1f / %.2f / %.1f ms | %s |\n", name, \
				(src[f] == "sframe" ? ".sframe" : src[f] == "eh_frame" ? ".eh_frame (synthesized)" : "none"), \
				rows, med(f, "rules"), med(f, "pages"), tb, (sb > 0 ? sb : "-"), \
				(sb > 0 ? sprintf("**%.2f**", tb / sb) : "-"), (rows > 0 ? sprintf("%.2f", tb / rows) : "-"), \
				bn / 1e6, pn / 1e6, ln / 1e6, (ln > 0 ? sprintf("%.2fM", rows / ln * 1000) : "-") > md
			if (src[f] == "sframe" && sb > 0) {
				if (tb / sb > worst) worst = tb / sb
				ratios = ratios sprintf("%s%s x%.2f", ratios == "" ? "" : ", ", name, tb / sb)
				if (rows > maxrows) { maxrows = rows; rate = rows / ln * 1000 }
			}
			# Bytes per row with the page index, without the (shared) rules.
			if (rows > 0) {
				bpr = (rows + med(f, "pages")) * 4 / rows
				if (bpr > worst_bpr) worst_bpr = bpr
			}
		}
		# Rows from CFI: the interpreter and libdw side by side, against SFrame.
		if (rate > 0) {
			print "" > md
			print "| rows from `.eh_frame` | rows | libdw row walk: build / whole load | rows per second | CFA interpreter: build / whole load | rows per second | speedup | interpreter / SFrame rows per second |" > md
			print "|---|---|---|---|---|---|---|---|" > md
		}
		for (i = 1; i <= nf && rate > 0; i++) {
			f = order[i]
			if (src[f] != "eh_frame" || !(f in ln_n)) continue
			name = f; sub(".*/", "", name)
			rows = med(f, "rows"); ln = med(f, "total_ns"); old = lmed(f, "total_ns")
			new_rate = rows / ln * 1000; old_rate = rows / old * 1000
			printf "| %s | %d | %.1f / %.1f ms | %.2fM | %.1f / %.1f ms | %.2fM | x%.1f | **%.2f** |\n", name, rows, \
				lmed(f, "load_ns") / 1e6, old / 1e6, old_rate, med(f, "load_ns") / 1e6, ln / 1e6, new_rate, \
				old / ln, new_rate / rate > md
			cfi = cfi sprintf("%s%s %.2fM (libdw %.2fM, x%.1f)", cfi == "" ? "" : ", ", name, new_rate, old_rate, old / ln)
			if (rows >= 100000 && (cfi_worst == "" || new_rate / rate < cfi_worst)) cfi_worst = new_rate / rate
		}
		print "" > md
		print "| whole system | processes | objects: SFrame / .eh_frame / none | rows: SFrame / .eh_frame | table bytes | table load time (whole run) | start to attached | table maps now / budget | all BPF map memory | sfbpf-top RSS |" > md
		print "|---|---|---|---|---|---|---|---|---|---|" > md
		for (i = 1; i <= nt; i++) {
			t = sorder[i]
			printf "| %s | %d | %d / %d / %d | %d / %d | %d | %.0f ms | %.0f ms | %.1f / %.1f MiB | %.1f MiB | %.1f MB |\n", \
				(t == "as_is" ? "as it is" : "with the programs above running"), smed(t, "processes"), \
				smed(t, "objects_sframe"), smed(t, "objects_eh_frame"), smed(t, "objects_without_table"), \
				smed(t, "rows_sframe"), smed(t, "rows_eh_frame"), smed(t, "table_bytes"), \
				smed(t, "load_us") / 1000, smed(t, "attach_us") / 1000, \
				smed(t, "table_map_bytes") / 1048576, smed(t, "table_budget_bytes") / 1048576, \
				smed(t, "bpf_map_bytes") / 1048576, smed(t, "rss_bytes") / 1e6 > md
			cover[t] = sprintf("%.0f ms (%d processes)", smed(t, "attach_us") / 1000, smed(t, "processes"))
			covms[t] = smed(t, "attach_us") / 1000
			rss = smed(t, "rss_bytes"); if (rss > worst_rss) worst_rss = rss
			tmap[t] = smed(t, "table_map_bytes"); tbudget[t] = smed(t, "table_budget_bytes")
			over_budget += tmap[t] > tbudget[t]
		}
		printf "bench: loader: %.2fM rows/s (%d rows) (target >= 10M: %s); table/.sframe bytes: %s (target <= 0.75: %s); bytes per row with the page index: at most %.2f (target <= 4.5: %s); whole system covered %s after start (target < 1 s: %s)%s\n", \
			rate, maxrows, (rate >= 10 ? "met" : "MISSED"), ratios, (worst <= 0.75 ? "met" : "MISSED"), \
			worst_bpr, (worst_bpr <= 4.5 ? "met" : "MISSED"), cover["as_is"], \
			covms["as_is"] < 1000 ? "met" : "MISSED", \
			("with_programs" in cover) ? sprintf(", %s with the SFrame programs running (%s)", \
				cover["with_programs"], covms["with_programs"] < 1000 ? "met" : "MISSED") : ""
		if (cfi != "")
			printf "bench: loader: rows/s from .eh_frame: %s; SFrame %.2fM rows/s in the same run: %s\n", \
				cfi, rate, (cfi_worst == "" ? "no .eh_frame object of 100k rows or more" : \
				sprintf("objects of 100k rows and more at x%.2f of it at worst (target >= 0.5: %s)", \
					cfi_worst, (cfi_worst >= 0.5 ? "met" : "MISSED")))
		follows = ("with_programs" in tmap) ? (tmap["as_is"] < tmap["with_programs"] && !over_budget) : !over_budget
		printf "bench: tables: sfbpf-top RSS at attach at most %.1f MB; table maps %.1f MiB as it is, %s with the SFrame programs, budget %.1f MiB (target: follows the load, within the budget: %s)\n", \
			worst_rss / 1e6, tmap["as_is"] / 1048576, \
			("with_programs" in tmap) ? sprintf("%.1f MiB", tmap["with_programs"] / 1048576) : "not measured", \
			tbudget["as_is"] / 1048576, (follows ? "met" : "MISSED")
	}' md="$MD/loader.table" "$raw"
}

# --- footprint on a busy machine -------------------------------------------------
