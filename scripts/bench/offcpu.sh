# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): offcpu (cost per context switch) and pycost (the Python walk per sample), jcost, v8cost, vmcost (the other runtimes').

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

# jit_cost PART WHAT COUNTERS STEP_TITLE STEPS_TITLE CALLS_TITLE OPTION DEPTHS: a
# JIT runtime's step per sample, kcost -j or -n OPTION (PART's lines), the
# steps a sample the COUNTERS (their names, +-joined) summed; the table to
# $MD/PART.table, the summary line "WHAT walk per sample".
jit_cost() {
	local part=$1 what=$2 counters=$3 step=$4 steps=$5 calls=$6 opt=$7 depths=$8
	local raw=$TMP/$part.txt
	log "$part: $what walk, ${depths// /, } calls, off/on, $PC_REPS x ${PC_SECS}s at $KC_HZ Hz"
	# shellcheck disable=SC2086 # the depths, one argument each
	"$BB/kcost" -d "$PC_SECS" -r "$PC_REPS" -f "$KC_HZ" $opt $depths >"$raw" 2>"$TMP/$part.err" || {
		cat "$TMP/$part.err" >&2
		echo "bench: $part: FAILED ($(tail -1 "$TMP/$part.err"))"
		return 1
	}
	cp "$raw" "$MD/$part.raw"
	awk "$AWK_LIB"'
	$1 == part {
		d = kv($0, "frames"); m = kv($0, "mode"); runs = kv($0, "runs")
		if (!runs) next
		k = ++n[d, m]
		ns[d, m, k] = kv($0, "run_ns") / runs
		fr[d, m, k] = kv($0, "user_frames") / runs
		nc = split(counters, cs, "+")
		for (c = 1; c <= nc; c++) st_[d, m, k] += kv($0, cs[c]) / runs
		stop[d, m] = kv($0, "stop")
		depths[d] = 1
	}
	function med(arr, d, m,    j, a) {
		for (j = 1; j <= n[d, m]; j++) a[j] = arr[d, m, j]
		return median(a, n[d, m])
	}
	END {
		print "| " calls " calls deep | user frames a sample, off / on | " steps " a sample | ns a sample, off | on | on - off | ns " step " | stop, off / on |" > md
		print "|---|---|---|---|---|---|---|---|" > md
		for (d = 1; d <= 1024; d++) {
			if (!(d in depths)) continue
			off = med(ns, d, "off"); on = med(ns, d, "on"); st = med(st_, d, "on")
			printf "| %d | %.0f / %.0f | %.1f | %.0f | %.0f | **%+.0f** | %.0f | %s / %s |\n", d, \
				med(fr, d, "off"), med(fr, d, "on"), st, off, on, on - off, \
				st ? (on - off) / st : 0, stop[d, "off"], stop[d, "on"] > md
			line = line sprintf("%s%d calls: %.0f / %.0f ns", line ? "; " : "", d, off, on)
		}
		print "bench: " part ": " what " walk per sample, off / on: " line
	}' part="$part" what="$what" counters="$counters" step="$step" steps="$steps" calls="$calls" \
		md="$MD/$part.table" "$raw"
}

# jcost: the HotSpot step per sample (bpf/hotspot.h), a JVM 10 and 100 calls deep.
JC_DEPTHS="10 100"
bench_jcost() {
	local java=${SFBPF_BENCH_JAVA:-/usr/bin/java} javac
	javac=$(dirname "$(readlink -f "$java")")/javac
	if [ ! -x "$java" ] || [ ! -x "$javac" ]; then
		printf '| Java walk |\n|---|\n| **not measured**: no %s and javac |\n' "$java" >"$MD/jcost.table"
		echo "bench: jcost: not measured (no $java and javac)"
		return 0
	fi
	mkdir -p "$BB/java"
	up_to_date "$BB/java/JRecurse.class" "$ROOT/tests/bench/JRecurse.java" ||
		"$javac" -d "$BB/java" "$ROOT/tests/bench/JRecurse.java" || return 1
	echo "$(rel "$BB")/kcost -d $PC_SECS -r $PC_REPS -f $KC_HZ -j $java,$(rel "$BB")/java $JC_DEPTHS" \
		>"$MD/jcost.cmd"
	jit_cost jcost Java hs_interpreted+hs_compiled "a HotSpot step" "HotSpot steps" Java \
		"-j $java,$BB/java" "$JC_DEPTHS"
}

# v8cost: V8's step per sample (bpf/v8.h), a node 10 and 100 calls deep.
V8_DEPTHS="10 100"
bench_v8cost() {
	local node
	node=${SFBPF_BENCH_NODE:-$(command -v node || command -v nodejs || true)}
	if [ -z "$node" ] || [ ! -x "$node" ]; then
		printf '| V8 walk |\n|---|\n| **not measured**: no node |\n' >"$MD/v8cost.table"
		echo "bench: v8cost: not measured (no node)"
		return 0
	fi
	echo "$(rel "$BB")/kcost -d $PC_SECS -r $PC_REPS -f $KC_HZ -n $node,tests/bench/v8recurse.js $V8_DEPTHS" \
		>"$MD/v8cost.cmd"
	jit_cost v8cost V8 v8_interpreted+v8_optimized "a frame identified" \
		"JavaScript frames identified" JavaScript "-n $node,$ROOT/tests/bench/v8recurse.js" "$V8_DEPTHS"
}

# vmcost: the walks read after the native one (bpf/php.h, ruby.h, perl.h) per
# sample, Debian's php, ruby and perl 10 and 100 calls deep in one function
# (tests/bench/vmrecurse.*): phpcost, rbcost and plcost, a table each.
bench_vmcost() {
	local vm bin ext what part cmd= depths="10 100"
	[ "$QUICK" = 1 ] && depths=10 # the smoke test's: each walk once
	for vm in php ruby perl; do
		case $vm in
		php) bin=${SFBPF_BENCH_PHP:-/usr/bin/php} ext=php what=PHP part=phpcost ;;
		ruby) bin=${SFBPF_BENCH_RUBY:-/usr/bin/ruby} ext=rb what=Ruby part=rbcost ;;
		perl) bin=${SFBPF_BENCH_PERL:-/usr/bin/perl} ext=pl what=Perl part=plcost ;;
		esac
		if [ ! -x "$bin" ]; then
			printf '| %s walk |\n|---|\n| **not measured**: no %s |\n' "$what" "$bin" \
				>"$MD/$part.table"
			echo "bench: $part: not measured (no $bin)"
			continue
		fi
		cmd+="${cmd:+; }$(rel "$BB")/kcost -d $PC_SECS -r $PC_REPS -f $KC_HZ -s $vm,$bin,tests/bench/vmrecurse.$ext $depths"
		jit_cost "$part" "$what" vm_frames "a frame sent" "$what frames sent" "$what" \
			"-s $vm,$bin,$ROOT/tests/bench/vmrecurse.$ext" "$depths" || return 1
	done
	echo "$cmd" >"$MD/vmcost.cmd"
}
