# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): offcpu (cost per context switch) and pycost (the Python walk per sample).

bench_offcpu() {
	local raw=$TMP/offcpu.txt
	: >"$raw"
	# The off-CPU program and its loader (userspace/profile/offcpu.h) are optional
	# parts of the tree: measure them when the build has them.
	if ! [ -f "$ROOT/userspace/profile/offcpu.h" ] || ! [ -f "$BUILD/offcpu.skel.h" ] ||
		! ar t "$BUILD/libsfbpf.a" | grep -cx offcpu.o >/dev/null; then
		printf '| off-CPU program |\n|---|\n| **not yet measured**: this build has no bpf/offcpu.bpf.c |\n' >"$MD/offcpu.table"
		echo "bench: offcpu: not yet measured (the build has no off-CPU program)"
		return 0
	fi
	# Built with SFrame: the driver forks the ping-pong pair, whose stacks the
	# program unwinds at every switch-out.
	DRIVER_CFLAGS=(-fomit-frame-pointer -Wa,--gsframe)
	build_driver offcpu "$ROOT/tests/bench/offcost.c" "$BUILD/offcpu.skel.h" || return 1
	DRIVER_CFLAGS=()
	log "offcpu: pipe ping-pong, $OC_ROUNDS rounds, detached and attached, $OC_REPS repetitions"
	"$BB/offcost" -r "$OC_REPS" -n "$OC_ROUNDS" >"$raw" 2>"$TMP/offcost.err" || {
		cat "$TMP/offcost.err" >&2
		echo "bench: offcpu: FAILED ($(tail -1 "$TMP/offcost.err"))"
		return 1
	}
	cp "$raw" "$MD/offcpu.raw"
	awk "$AWK_LIB"'
	$1 == "offcost" {
		at = kv($0, "attached"); r = kv($0, "rep")
		sw[at, ++n[at]] = kv($0, "ns_per_switch")
		per[r, at] = kv($0, "ns_per_switch")
		if (at == 1) {
			runs = kv($0, "runs"); blocks = kv($0, "blocks")
			run[++m] = runs ? kv($0, "run_ns") / runs : 0
			blk[m] = blocks ? kv($0, "run_ns") / blocks : 0
			fr[m] = blocks ? kv($0, "user_frames") / blocks : 0
			share[m] = runs ? blocks / runs : 0
			drops += kv($0, "drops")
		}
		reps[r] = 1
	}
	END {
		for (j = 1; j <= n[0]; j++) a[j] = sw[0, j]
		base = median(a, n[0])
		for (j = 1; j <= n[1]; j++) b[j] = sw[1, j]
		on = median(b, n[1])
		k = 0
		for (r in reps)
			if (((r, 0) in per) && ((r, 1) in per)) d[++k] = per[r, 1] - per[r, 0]
		added = median(d, k)
		print "| ns per context switch, nothing attached | ns per switch, off-CPU program attached | added per switch | BPF ns per program run (every switch) | BPF ns per recorded block | user frames per block | recorded / all switches | ring-buffer drops |" > md
		print "|---|---|---|---|---|---|---|---|" > md
		printf "| %.0f | %.0f | **%+.0f** | %.0f | %.0f | %.1f | %.2f | %d |\n", base, on, added, \
			median(run, m), median(blk, m), median(fr, m), median(share, m), drops > md
		printf "bench: offcpu: +%.0f ns per context switch with the off-CPU program attached (%.0f -> %.0f ns per switch); the program runs %.0f ns per switch, %.0f ns per recorded block\n", \
			added, base, on, median(run, m), median(blk, m)
	}' md="$MD/offcpu.table" "$raw"
}

# The Python walk (bpf/python.h) per sample: tests/bench/pyrecurse.py 10 and
# 100 distinct functions deep under Debian's python3.11, sampled alone
# (kcost -y), in three modes alternated on the same process: without
# descriptions (the walk before them), steady (every code object described
# already: one filter probe a frame) and cold (the attach generation moved
# about every millisecond: the samples after it describe up to
# SFBPF_PY_DESCRIBE_MAX).
PC_DEPTHS="10 100"
bench_pycost() {
	local raw=$TMP/pycost.txt py=${SFBPF_BENCH_PYTHON:-/usr/bin/python3.11}
	if [ ! -x "$py" ]; then
		printf '| Python walk |\n|---|\n| **not measured**: no %s |\n' "$py" >"$MD/pycost.table"
		echo "bench: pycost: not measured (no $py)"
		return 0
	fi
	PC_CMD="$(rel "$BB")/kcost -d $PC_SECS -r $PC_REPS -f $KC_HZ -y $py,tests/bench/pyrecurse.py $PC_DEPTHS"
	echo "$PC_CMD" >"$MD/pycost.cmd"
	log "pycost: Python walk, ${PC_DEPTHS// /, } frames, off/steady/cold, $PC_REPS x ${PC_SECS}s at $KC_HZ Hz"
	"$BB/kcost" -d "$PC_SECS" -r "$PC_REPS" -f "$KC_HZ" -y "$py,$ROOT/tests/bench/pyrecurse.py" \
		$PC_DEPTHS >"$raw" 2>"$TMP/pycost.err" || {
		cat "$TMP/pycost.err" >&2
		echo "bench: pycost: FAILED ($(tail -1 "$TMP/pycost.err"))"
		return 1
	}
	cp "$raw" "$MD/pycost.raw"
	awk "$AWK_LIB"'
	$1 == "pycost" {
		d = kv($0, "frames"); m = kv($0, "mode"); runs = kv($0, "runs")
		if (!runs) next
		k = ++n[d, m]
		ns[d, m, k] = kv($0, "run_ns") / runs
		fr[d, m, k] = kv($0, "py_frames") / runs
		de[d, m, k] = kv($0, "described") / runs
		depths[d] = 1
	}
	function med(arr, d, m,    j, a) {
		for (j = 1; j <= n[d, m]; j++) a[j] = arr[d, m, j]
		return median(a, n[d, m])
	}
	END {
		print "| Python functions deep | Python frames a sample | ns a sample, no descriptions | steady | cold | cold: described a sample | steady - none | cold - none |" > md
		print "|---|---|---|---|---|---|---|---|" > md
		for (d = 1; d <= 1024; d++) {
			if (!(d in depths)) continue
			off = med(ns, d, "off"); st = med(ns, d, "steady"); co = med(ns, d, "cold")
			printf "| %d | %.0f | %.0f | %.0f | %.0f | %.1f | **%+.0f** | %+.0f |\n", d, med(fr, d, "steady"), \
				off, st, co, med(de, d, "cold"), st - off, co - off > md
			line = line sprintf("%s%d frames: %.0f / %.0f / %.0f ns", line ? "; " : "", d, off, st, co)
		}
		print "bench: pycost: Python walk per sample, no descriptions / steady / cold: " line
	}' md="$MD/pycost.table" "$raw"
}

# jcost: the HotSpot step per sample (bpf/hotspot.h), a JVM 10 and 100 calls deep.
JC_DEPTHS="10 100"
bench_jcost() {
	local raw=$TMP/jcost.txt java=${SFBPF_BENCH_JAVA:-/usr/bin/java} javac
	javac=$(dirname "$(readlink -f "$java")")/javac
	if [ ! -x "$java" ] || [ ! -x "$javac" ]; then
		printf '| Java walk |\n|---|\n| **not measured**: no %s and javac |\n' "$java" >"$MD/jcost.table"
		echo "bench: jcost: not measured (no $java and javac)"
		return 0
	fi
	mkdir -p "$BB/java"
	up_to_date "$BB/java/JRecurse.class" "$ROOT/tests/bench/JRecurse.java" ||
		"$javac" -d "$BB/java" "$ROOT/tests/bench/JRecurse.java" || return 1
	JC_CMD="$(rel "$BB")/kcost -d $PC_SECS -r $PC_REPS -f $KC_HZ -j $java,$(rel "$BB")/java $JC_DEPTHS"
	echo "$JC_CMD" >"$MD/jcost.cmd"
	log "jcost: Java walk, ${JC_DEPTHS// /, } calls, off/on, $PC_REPS x ${PC_SECS}s at $KC_HZ Hz"
	"$BB/kcost" -d "$PC_SECS" -r "$PC_REPS" -f "$KC_HZ" -j "$java,$BB/java" \
		$JC_DEPTHS >"$raw" 2>"$TMP/jcost.err" || {
		cat "$TMP/jcost.err" >&2
		echo "bench: jcost: FAILED ($(tail -1 "$TMP/jcost.err"))"
		return 1
	}
	cp "$raw" "$MD/jcost.raw"
	awk "$AWK_LIB"'
	$1 == "jcost" {
		d = kv($0, "frames"); m = kv($0, "mode"); runs = kv($0, "runs")
		if (!runs) next
		k = ++n[d, m]
		ns[d, m, k] = kv($0, "run_ns") / runs
		fr[d, m, k] = kv($0, "user_frames") / runs
		hs[d, m, k] = (kv($0, "hs_interpreted") + kv($0, "hs_compiled")) / runs
		stop[d, m] = kv($0, "stop")
		depths[d] = 1
	}
	function med(arr, d, m,    j, a) {
		for (j = 1; j <= n[d, m]; j++) a[j] = arr[d, m, j]
		return median(a, n[d, m])
	}
	END {
		print "| Java calls deep | user frames a sample, off / on | HotSpot steps a sample | ns a sample, off | on | on - off | ns a HotSpot step | stop, off / on |" > md
		print "|---|---|---|---|---|---|---|---|" > md
		for (d = 1; d <= 1024; d++) {
			if (!(d in depths)) continue
			off = med(ns, d, "off"); on = med(ns, d, "on"); st = med(hs, d, "on")
			printf "| %d | %.0f / %.0f | %.1f | %.0f | %.0f | **%+.0f** | %.0f | %s / %s |\n", d, \
				med(fr, d, "off"), med(fr, d, "on"), st, off, on, on - off, \
				st ? (on - off) / st : 0, stop[d, "off"], stop[d, "on"] > md
			line = line sprintf("%s%d calls: %.0f / %.0f ns", line ? "; " : "", d, off, on)
		}
		print "bench: jcost: Java walk per sample, off / on: " line
	}' md="$MD/jcost.table" "$raw"
}

# v8cost: V8's step per sample (bpf/v8.h), a node 10 and 100 calls deep.
V8_DEPTHS="10 100"
bench_v8cost() {
	local raw=$TMP/v8cost.txt node
	node=${SFBPF_BENCH_NODE:-$(command -v node || command -v nodejs || true)}
	if [ -z "$node" ] || [ ! -x "$node" ]; then
		printf '| V8 walk |\n|---|\n| **not measured**: no node |\n' >"$MD/v8cost.table"
		echo "bench: v8cost: not measured (no node)"
		return 0
	fi
	V8_CMD="$(rel "$BB")/kcost -d $PC_SECS -r $PC_REPS -f $KC_HZ -n $node,tests/bench/v8recurse.js $V8_DEPTHS"
	echo "$V8_CMD" >"$MD/v8cost.cmd"
	log "v8cost: V8 walk, ${V8_DEPTHS// /, } calls, off/on, $PC_REPS x ${PC_SECS}s at $KC_HZ Hz"
	"$BB/kcost" -d "$PC_SECS" -r "$PC_REPS" -f "$KC_HZ" -n "$node,$ROOT/tests/bench/v8recurse.js" \
		$V8_DEPTHS >"$raw" 2>"$TMP/v8cost.err" || {
		cat "$TMP/v8cost.err" >&2
		echo "bench: v8cost: FAILED ($(tail -1 "$TMP/v8cost.err"))"
		return 1
	}
	cp "$raw" "$MD/v8cost.raw"
	awk "$AWK_LIB"'
	$1 == "v8cost" {
		d = kv($0, "frames"); m = kv($0, "mode"); runs = kv($0, "runs")
		if (!runs) next
		k = ++n[d, m]
		ns[d, m, k] = kv($0, "run_ns") / runs
		fr[d, m, k] = kv($0, "user_frames") / runs
		js[d, m, k] = (kv($0, "v8_interpreted") + kv($0, "v8_optimized")) / runs
		stop[d, m] = kv($0, "stop")
		depths[d] = 1
	}
	function med(arr, d, m,    j, a) {
		for (j = 1; j <= n[d, m]; j++) a[j] = arr[d, m, j]
		return median(a, n[d, m])
	}
	END {
		print "| JavaScript calls deep | user frames a sample, off / on | JavaScript frames identified a sample | ns a sample, off | on | on - off | ns a frame identified | stop, off / on |" > md
		print "|---|---|---|---|---|---|---|---|" > md
		for (d = 1; d <= 1024; d++) {
			if (!(d in depths)) continue
			off = med(ns, d, "off"); on = med(ns, d, "on"); st = med(js, d, "on")
			printf "| %d | %.0f / %.0f | %.1f | %.0f | %.0f | **%+.0f** | %.0f | %s / %s |\n", d, \
				med(fr, d, "off"), med(fr, d, "on"), st, off, on, on - off, \
				st ? (on - off) / st : 0, stop[d, "off"], stop[d, "on"] > md
			line = line sprintf("%s%d calls: %.0f / %.0f ns", line ? "; " : "", d, off, on)
		}
		print "bench: v8cost: V8 walk per sample, off / on: " line
	}' md="$MD/v8cost.table" "$raw"
}
