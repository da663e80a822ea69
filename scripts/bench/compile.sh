# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): compile: a real
# project's build (zstd from Debian's source, its own Makefile, make -j NCPU) profiled by
# sfbpf-top and perf record --call-graph dwarf at once, the share of stacks that reach
# their process's or thread's entry in each (issue #27 part 4).
#
# The build is what a build farm runs: gcc's driver, cc1, as, collect2 and ld, make and
# sh, hundreds of processes that live well under a second, none with .sframe (Debian's
# toolchain), every table from .eh_frame. sfbpf-top starts with the build (as after a
# restart during a build: a fresh profiler) and sees the build's cgroup only (--cgroup);
# perf records the same processes (it forks the build and follows its children). Both
# at COMPILE_HZ. Two modes, one after the other in each repetition: cold, sfbpf-top on
# a new, empty table cache (a first start: every table built at first sight), then
# cache, a new sfbpf-top on the cache the cold run filled (a restart: tables read back).
#
# One rule for both profilers: a stack is complete when one of its frames is libc's
# entry of a process (__libc_start_call_main, __libc_start_main) or of a thread
# (start_thread, clone3): whatever stopped before it, an unwinder giving up, a frame
# pointer chain through code without frame pointers, perf's 8 KiB copy of the stack, is
# not. sfbpf's own "[truncated]" share (what its unwinder knows it did not finish) is
# shown beside it.

# compile_share FOLDED|PERFSCRIPT KIND: "samples= complete= labelled= cc1_samples=
# cc1_complete=" of a profile; KIND sfbpf (folded stacks) or perf (perf script output).
COMPILE_ENTRY='^(__libc_start_call_main|__libc_start_main(_impl|_alias_2)?|start_thread|clone3|__clone3|__clone_internal)$'
compile_share() {
	awk -v kind="$2" -v entry="$COMPILE_ENTRY" '
	function add(comm, n, done) {
		samples += n
		complete += done ? n : 0
		if (comm == "cc1") {
			cc1 += n
			cc1_complete += done ? n : 0
		}
	}
	kind == "sfbpf" {
		n = $NF
		sub(/ [0-9]+$/, "")
		k = split($0, f, ";")
		done = 0
		for (i = 2; i <= k; i++)
			if (f[i] ~ entry)
				done = 1
		if (f[2] == "[truncated]")
			labelled += n
		add(f[1], n, done)
		next
	}
	# perf script -F comm,ip,sym: a line with the command, a line a frame, a blank line.
	kind == "perf" && /^[^ \t]/ {
		comm = $1
		in_sample = 1
		done = 0
		next
	}
	kind == "perf" && NF >= 2 && in_sample {
		if ($2 ~ entry)
			done = 1
		next
	}
	kind == "perf" && NF == 0 && in_sample {
		add(comm, 1, done)
		in_sample = 0
	}
	END {
		if (in_sample)
			add(comm, 1, done)
		printf "samples=%d complete=%d labelled=%d cc1_samples=%d cc1_complete=%d", \
			samples, complete, labelled + 0, cc1, cc1_complete
	}' "$1"
}

# compile_run REP MODE CACHE: one build under both profilers; one line to $RAW_COMPILE.
compile_run() {
	local rep=$1 mode=$2 cache=$3 src=$TMP/compile.src cg top_pid perf_pid t0 t1 s p
	rm -rf "$src"
	mkdir -p "$src"
	cp -a "$COMPILE_SRC/lib" "$COMPILE_SRC/programs" "$src/"
	make -s -C "$src/programs" clean >/dev/null 2>&1
	cg=$COMPILE_CG/rep$rep$mode
	mkdir "$cg" || return 1
	"$TOP" --table-cache "$cache" --cgroup "$cg" -U -F "$COMPILE_HZ" --stats \
		--folded "$TMP/compile.folded" >/dev/null 2>"$TMP/compile.top.err" &
	top_pid=$!
	BG_PIDS+=("$top_pid")
	if ! "$BB/benchutil" wait-attached "$top_pid" "$NCPU" 120 >/dev/null; then
		log "compile: sfbpf-top did not start: $(grep -v '^sfbpf: stat' "$TMP/compile.top.err" | tail -2)"
		return 1
	fi
	t0=${EPOCHREALTIME/./}
	# perf forks the build, which joins the cgroup before it execs make: both see the same
	# processes from their first instruction. -B -N: no build-id work at its exit.
	# shellcheck disable=SC2016 # $$ and $1 are the inner shell's
	perf record --no-bpf-event -q -B -N -F "$COMPILE_HZ" --call-graph dwarf \
		-o "$TMP/compile.perf.data" -- sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' \
		sh "$cg" make -s -C "$src/$COMPILE_DIR" -j"$NCPU" "${COMPILE_MAKE_ARGS[@]}" \
		>"$TMP/compile.build.log" 2>&1 &
	perf_pid=$!
	BG_PIDS+=("$perf_pid")
	wait "$perf_pid"
	s=$?
	forget "$perf_pid"
	t1=${EPOCHREALTIME/./}
	stop_pid "$top_pid" INT
	rmdir "$cg" 2>/dev/null
	if [ "$s" != 0 ] || ! [ -e "$src/$COMPILE_DIR/$COMPILE_PRODUCT" ]; then
		log "compile: the build failed: $(tail -3 "$TMP/compile.build.log" | tr '\n' ' ')"
		return 1
	fi
	if ! perf script -i "$TMP/compile.perf.data" -F comm,ip,sym --no-inline \
		>"$TMP/compile.perf.txt" 2>"$TMP/compile.perf.err"; then
		log "compile: perf script failed: $(tail -2 "$TMP/compile.perf.err" | tr '\n' ' ')"
		return 1
	fi
	s=$(compile_share "$TMP/compile.folded" sfbpf)
	p=$(compile_share "$TMP/compile.perf.txt" perf)
	printf 'compile rep=%d mode=%s build_s=%.1f sfbpf_%s perf_%s table_cache_hits=%d objects_eh_frame=%d\n' \
		"$rep" "$mode" "$(secs $(((t1 - t0) * 1000)))" "${s// / sfbpf_}" "${p// / perf_}" \
		"$(stat_of "$TMP/compile.top.err" table_cache_hits)" \
		"$(stat_of "$TMP/compile.top.err" objects_eh_frame)" >>"$RAW_COMPILE"
	rm -rf "$src" "$TMP/compile.perf.data" "$TMP/compile.perf.txt" "$TMP/compile.folded"
}

bench_compile() {
	local rep cache cgroot
	RAW_COMPILE=$TMP/compile.txt
	: >"$RAW_COMPILE"
	if [ -z "$ZSTD" ]; then
		echo "bench: compile: skipped (no zstd source: scripts/bench/build-zstd.sh)"
		return 0
	fi
	# .../zstd-VER/programs/zstd: the unpacked source beside its build.
	COMPILE_SRC=$(dirname "$(dirname "$ZSTD")")
	if [ "$QUICK" = 1 ]; then
		# The smoke run: lib/common's files only, by make's built-in rule, unoptimized.
		COMPILE_DIR=lib/common COMPILE_PRODUCT=xxhash.o
		COMPILE_MAKE_ARGS=(-f /dev/null CFLAGS=-O0)
		for f in "$COMPILE_SRC/$COMPILE_DIR"/*.c; do
			f=${f##*/}
			COMPILE_MAKE_ARGS+=("${f%.c}.o")
		done
	else
		COMPILE_DIR=programs COMPILE_PRODUCT=zstd
		COMPILE_MAKE_ARGS=(zstd HAVE_ZLIB=0 HAVE_LZMA=0 HAVE_LZ4=0)
	fi
	cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	COMPILE_CG=${cgroot:+$cgroot/sfbpf-bench-compile.$$}
	if [ -z "$COMPILE_CG" ] || ! mkdir "$COMPILE_CG"; then
		echo "bench: compile: FAILED (no cgroup v2 directory: ${cgroot:-no cgroup2 mount})"
		return 1
	fi
	log "compile: zstd built $COMPILE_REPS times under sfbpf-top and perf --call-graph dwarf at once, cold and after a restart"
	for ((rep = 0; rep < COMPILE_REPS; rep++)); do
		cache=$TMP/compile.cache$rep
		mkdir -m 0700 "$cache"
		if ! compile_run "$rep" cold "$cache" || ! compile_run "$rep" cache "$cache"; then
			rmdir "$COMPILE_CG"/* "$COMPILE_CG" 2>/dev/null
			echo "bench: compile: FAILED"
			return 1
		fi
		rm -rf "$cache"
	done
	rmdir "$COMPILE_CG"
	cp "$RAW_COMPILE" "$MD/compile.raw"
	awk "$AWK_LIB"'
	function share(part, whole) { return whole ? 100 * (whole - part) / whole : 0 }
	$1 == "compile" {
		m = kv($0, "mode")
		i = ++nr[m]
		b[m, i] = kv($0, "build_s")
		st[m, i] = share(kv($0, "sfbpf_complete"), kv($0, "sfbpf_samples"))
		sl[m, i] = 100 * kv($0, "sfbpf_labelled") / (kv($0, "sfbpf_samples") + (kv($0, "sfbpf_samples") == 0))
		pt[m, i] = share(kv($0, "perf_complete"), kv($0, "perf_samples"))
		d[m, i] = st[m, i] - pt[m, i]
		sc[m, i] = share(kv($0, "sfbpf_cc1_complete"), kv($0, "sfbpf_cc1_samples"))
		pc[m, i] = share(kv($0, "perf_cc1_complete"), kv($0, "perf_cc1_samples"))
		ns[m, i] = kv($0, "sfbpf_samples")
		np[m, i] = kv($0, "perf_samples")
		h[m, i] = kv($0, "table_cache_hits")
	}
	END {
		print "| sfbpf-top | build (s) | samples: sfbpf / perf | not complete: sfbpf | perf dwarf | sfbpf - perf (points) | cc1 not complete: sfbpf / perf | labelled [truncated] by sfbpf | tables read back |" > md
		print "|---|---|---|---|---|---|---|---|---|" > md
		split("cold cache", modes, " ")
		split("cold (new, empty table cache)|after a restart (the cache the cold run filled)", what, "|")
		line = "bench: compile: zstd, make -j" ncpu ", stacks not complete (medians of " nr["cold"] "):"
		met = nr["cold"] > 0
		for (j = 1; j <= 2; j++) {
			m = modes[j]
			n = nr[m]
			if (!n)
				continue
			# The medians of the repetitions of this mode, each column on its own.
			B = med_of(b, m, n); NS = med_of(ns, m, n); NP = med_of(np, m, n)
			ST = med_of(st, m, n); PT = med_of(pt, m, n); D = med_of(d, m, n)
			SC = med_of(sc, m, n); PC = med_of(pc, m, n); SL = med_of(sl, m, n); H = med_of(h, m, n)
			printf "| %s | %.1f | %d / %d | %.1f %% | %.1f %% | **%+.1f** | %.1f %% / %.1f %% | %.1f %% | %d |\n", \
				what[j], B, NS, NP, ST, PT, D, SC, PC, SL, H > md
			line = line sprintf(" %s sfbpf %.1f %% vs perf dwarf %.1f %% (%+.1f points; cc1 %.1f vs %.1f %%);", \
				m, ST, PT, D, SC, PC)
			met = met && D <= 1
		}
		sub(/;$/, "", line)
		print line " [target: within 1 point of perf dwarf: " (met ? "met" : "not met") "]"
	}' md="$MD/compile.table" ncpu="$NCPU" "$RAW_COMPILE"
}
