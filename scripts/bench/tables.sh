# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): srcline (source lines), tablecache (a table read back against built), coldstart (partial tables).

# Source lines at output time (symbols/srcline.h): every instruction of a big
# -O2 -g program (sfbpf-top itself) and of libc through its debug file, each
# resolved once, in a shuffled order, then again from the cache.
bench_srcline() {
	local raw=$TMP/srcline.txt libc id dbg
	: >"$raw"
	build_driver srcline "$ROOT/tests/srclines.c" || return 1
	objdump -d --no-show-raw-insn "$TOP" | awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print $1 }' |
		shuf --random-source=/dev/zero >"$TMP/srcline-top.addrs"
	"$BB/srclines" bench sfbpf-top "$TOP" <"$TMP/srcline-top.addrs" >>"$raw"
	libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
	id=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
	dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	if [ -r "$dbg" ]; then
		objdump -d --no-show-raw-insn "$libc" | awk '/^ +[0-9a-f]+:/ { sub(":", "", $1); print $1 }' |
			shuf --random-source=/dev/zero >"$TMP/srcline-libc.addrs"
		"$BB/srclines" bench libc.so.6 "$libc" "$dbg" <"$TMP/srcline-libc.addrs" >>"$raw"
	fi
	cp "$raw" "$MD/srcline.raw"
	awk "$AWK_LIB"'
	$1 == "srcline" {
		if (!rows++) {
			print "| object | addresses | DWARF functions | first lookup (indexes) | per new address | per cached address | frames per address |" > md
			print "|---|---|---|---|---|---|---|" > md
		}
		printf "| %s | %d | %d | %.1f ms | %.1f µs | %.0f ns | %.2f |\n", kv($0, "object"), \
			kv($0, "addrs"), kv($0, "functions"), kv($0, "index_ms"), kv($0, "new_ns") / 1000, \
			kv($0, "cached_ns"), kv($0, "frames_per_addr") > md
		printf "bench: srcline: %s: %.1f ms to index, %.1f us per new address, %.0f ns cached (%d addresses)\n", \
			kv($0, "object"), kv($0, "index_ms"), kv($0, "new_ns") / 1000, kv($0, "cached_ns"), kv($0, "addrs")
	}' md="$MD/srcline.table" "$raw"
}

# --- 7. table cache ----------------------------------------------------------

# What a restart saves: each object's table built (digest, private copy,
# build, store) and then read back from a new cache directory (digest,
# read, SHA-256 and validation), in the loader's own code (tests/tablecache.c).
bench_tablecache() {
	local raw=$TMP/tablecache.txt rep f files=() libc dir line
	: >"$raw"
	build_driver tablecache "$ROOT/tests/tablecache.c" || return 1
	if [ -n "${ZSTD:-}" ]; then files+=("$ZSTD"); fi
	f=$BB/bigsframe.$BIG_FUNCS.v3
	if [ -x "$f" ]; then files+=("$f"); fi
	libc=$(ldd "$BB/mtwork" | awk '$1 ~ /^libc\.so/ { print $3 }')
	if [ -n "$libc" ]; then files+=("$libc"); fi
	log "tablecache: ${#files[@]} objects, $LD_REPS repetitions"
	for ((rep = 0; rep < LD_REPS; rep++)); do
		for f in "${files[@]}"; do
			dir=$(mktemp -d "$TMP/tablecache.XXXXXX")
			line=$("$BB/tablecache" time "$dir" "$f") || {
				echo "bench: tablecache: FAILED ($f: no table, or not read back equal)"
				return 1
			}
			echo "tablecache object=$(basename "$f") $line" >>"$raw"
			rm -rf "$dir"
		done
	done
	cp "$raw" "$MD/tablecache.raw"
	awk "$AWK_LIB"'
	$1 == "tablecache" {
		o = kv($0, "object")
		if (!(o in rows))
			order[++n] = o
		rows[o] = kv($0, "rows")
		c[o, ++nr[o]] = kv($0, "cold_us")
		w[o, nr[o]] = kv($0, "warm_us")
	}
	END {
		print "| object | rows | built (cold) | read back (warm) | rows/s read back | cold / warm |" > md
		print "|---|---|---|---|---|---|" > md
		for (i = 1; i <= n; i++) {
			o = order[i]
			for (k = 1; k <= nr[o]; k++) {
				cc[k] = c[o, k]
				ww[k] = w[o, k]
			}
			cm = median(cc, nr[o])
			wm = median(ww, nr[o])
			rate = 0
			ratio = 0
			if (wm > 0) {
				rate = rows[o] / wm
				ratio = cm / wm
			}
			printf "| %s | %d | %.1f ms | %.1f ms | %.1f M | %.1fx |\n", o, rows[o], cm / 1000, \
				wm / 1000, rate, ratio > md
			printf "bench: tablecache: %s: %d rows built in %.1f ms, read back in %.1f ms (%.1fx; medians of %d)\n", \
				o, rows[o], cm / 1000, wm / 1000, ratio, nr[o]
		}
	}' md="$MD/tablecache.table" "$raw"
}

# A big binary run for the first time under a profiler that samples it: the
# lifecycle driver (tests/lifecycle.c, built without sanitizers) traces every
# sample of its command. Each run is a fresh driver and a copy of the binary
# with one byte appended: new bytes, so no table of another file is shared.
# Modes: on and off, cold (SFBPF_TABLE_CACHE=off: nothing read back), with
# partial tables and without (-N); warm, one driver with a table cache of its
# own running the copy twice, the second run measured (its table still held
# from the first); restart, the copy run once under a driver with a new table
# cache, then again under a new driver on that cache, measured (the table read
# back from disk, as after a restart of sfbpf-top). Times from the measured
# process's first sample (at 999 Hz, within a millisecond of its CPU after
# exec): when its process entry unwound a sample (the lifecycle), when a stack
# first reached main complete; the same in its own samples (CPU ms).
coldstart_driver() { # coldstart_driver NAME CACHE [ARGS...]: started, $CS_DRV, ready
	local name=$1 cache=$2 i
	shift 2
	rm -f "$TMP/$name.ready"
	SFBPF_TABLE_CACHE=$cache "$BB/lifecycle" -F 999 -r "$TMP/$name.ready" -c "$name" \
		-t "$TMP/$name.trace" "$@" >"$TMP/$name.stats" 2>"$TMP/$name.err" &
	CS_DRV=$!
	for ((i = 0; i < 3000; i++)); do
		[ -e "$TMP/$name.ready" ] && break
		kill -0 "$CS_DRV" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$TMP/$name.ready" ]
}

coldstart_prog() { # coldstart_prog NAME PROG: the copy (in $CS_DIR), once
	if [ "$2" = cc1 ]; then
		"$CS_DIR/$1" -quiet -O2 "$BB/coldstart.i" -o /dev/null
	else
		"$CS_DIR/$1" 2
	fi
}

# image: an ext4 image on a loop device, where a file's identity is its
# author's (util/fileident.h): after a restart its table is found by the
# digest of its sections, read and hashed, never by its identity.
coldstart_image() { # coldstart_image up|down
	if [ "$1" = up ]; then
		truncate -s 512M "$TMP/cs.img" && mkfs.ext4 -q -F "$TMP/cs.img" &&
			CS_LOOP=$(losetup -f --show "$TMP/cs.img") && mkdir -p "$TMP/csimg" &&
			mount "$CS_LOOP" "$TMP/csimg"
	else
		# A profiler elsewhere (another sfbpf-top: one holds the files of
		# the processes it profiled open) can keep it busy for a while:
		# tried for 10 s, then detached (lazy), so that cleanup can end.
		local i
		for ((i = 0; i < 100; i++)); do
			mountpoint -q "$TMP/csimg" || break
			umount "$TMP/csimg" 2>/dev/null && break
			sleep 0.1
		done
		if mountpoint -q "$TMP/csimg"; then
			log "coldstart: $TMP/csimg still busy after 10 s: detached (umount -l)"
			umount -l "$TMP/csimg"
		fi
		[ -n "${CS_LOOP:-}" ] && losetup -d "$CS_LOOP" 2>/dev/null
		rm -f "$TMP/cs.img"
	fi
}

coldstart_stop() { # coldstart_stop: the driver ends, its tables stored
	sleep 0.5
	kill -INT "$CS_DRV"
	wait "$CS_DRV"
}

coldstart_run() { # coldstart_run NAME PROG MODE: one line to $RAW_CS
	local name=$1 prog=$2 mode=$3 args=() cache=off pid
	[ "$mode" = off ] && args=(-N)
	CS_DIR=$TMP
	[ "$mode" = image ] && CS_DIR=$TMP/csimg
	if [ "$prog" = cc1 ]; then
		{ cat "$CS_CC1"; echo; } >"$CS_DIR/$name"
	else
		{ cat "$BB/bigeh.$CS_BIG_FUNCS"; echo; } >"$CS_DIR/$name"
	fi
	chmod +x "$CS_DIR/$name"
	if [ "$mode" = warm ] || [ "$mode" = restart ] || [ "$mode" = image ]; then
		cache=$TMP/$name.cache
		rm -rf "$cache"
		mkdir -m 0700 "$cache"
	fi
	if [ "$mode" = restart ] || [ "$mode" = image ]; then
		# The first run fills the cache; a new driver then reads it back.
		coldstart_driver "$name" "$cache" || return 1
		coldstart_prog "$name" "$prog"
		coldstart_stop || return 1
	fi
	coldstart_driver "$name" "$cache" "${args[@]}" || return 1
	[ "$mode" = warm ] && coldstart_prog "$name" "$prog"
	coldstart_prog "$name" "$prog"
	coldstart_stop || return 1
	# The measured process: the last one run (the only one, cold).
	pid=$(sort -k2,2n "$TMP/$name.trace" | awk '$1 == "T" { p = $3 } END { print p }')
	sort -k2,2n "$TMP/$name.trace" | awk -v prog="$prog" -v mode="$mode" -v pid="$pid" \
		-v pt="$(awk '$2 == "stat" && $3 == "partial_tables" { print $4 }' "$TMP/$name.stats")" \
		-v hits="$(awk '$2 == "stat" && $3 == "table_cache_hits" { print $4 }' "$TMP/$name.stats")" \
		-v maxload="$(awk '$2 == "stat" && $3 == "max_load_us" { print $4 }' "$TMP/$name.stats")" \
		-v push="$(awk '$2 == "stat" && $3 == "push_us" { print $4 }' "$TMP/$name.stats")" '
		$1 != "T" || $3 != pid { next }
		{ n++ }
		n == 1 { t0 = $2 }
		$5 != "outermost" { trunc++ }
		$5 != "no-proc" && entry == "" {
			entry = ($2 - t0) / 1e6
			entry_n = n - 1
		}
		$5 == "outermost" && $8 ~ /(^|;)main;/ && first == "" {
			first = ($2 - t0) / 1e6
			first_n = n - 1
		}
		{ last = $2 }
		END {
			# None before its end (the whole table later still): counted as its end.
			none = first == ""
			if (none) {
				first = (last - t0) / 1e6
				first_n = n
			}
			printf "coldstart prog=%s mode=%s entry_ms=%.1f first_ms=%.1f first_samples=%d after_entry_ms=%.1f after_entry_samples=%d none=%d truncated=%d samples=%d partial_tables=%d cache_hits=%d max_load_ms=%.1f push_ms=%.1f\n", \
				prog, mode, entry, first, first_n, first - entry, first_n - entry_n, none, trunc, n, pt, hits, maxload / 1000, push / 1000
		}' >>"$RAW_CS"
	rm -rf "$CS_DIR/$name" "$TMP/$name.trace" "$TMP/$name.cache"
}

bench_coldstart() {
	local rep prog mode modes
	RAW_CS=$TMP/coldstart.txt
	: >"$RAW_CS"
	CS_CC1=$("$CC" -print-prog-name=cc1)
	build_driver coldstart "$ROOT/tests/lifecycle.c" || return 1
	# About a second of cc1 at -O2: loops to optimize.
	awk -v n="$CS_FUNCS" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) { s += a[i] * %d; if (s > %d) s ^= a[(i * 7) %% n]; } for (int j = 0; j < n; j += 2) s -= a[j] >> %d; return s; }\n", i, i % 13 + 1, i * 31, i % 5 + 1
	}' >"$BB/coldstart.i"
	# chain.c (main;a;b;hot) without frame pointers, with 700k rows of .eh_frame.
	if ! up_to_date "$BB/bigeh.$CS_BIG_FUNCS" "$ROOT/tests/bench/bigsframe.awk" "$ROOT/tests/fixtures/chain.c"; then
		awk -v n="$CS_BIG_FUNCS" -f "$ROOT/tests/bench/bigsframe.awk" >"$TMP/bigeh.s"
		"$CC" -O2 -fomit-frame-pointer -I"$ROOT/tests/fixtures" "$ROOT/tests/fixtures/chain.c" \
			"$TMP/bigeh.s" -o "$BB/bigeh.$CS_BIG_FUNCS"
		rm -f "$TMP/bigeh.s"
	fi
	log "coldstart: $CS_PROGS (cc1: gcc's compiler proper; bigeh: a generated program), cold with and without partial tables, warm, after a restart, and after a restart from an image, $CS_REPS repetitions"
	if ! coldstart_image up; then
		coldstart_image down
		echo "bench: coldstart: FAILED (no ext4 image on a loop device)"
		return 1
	fi
	for ((rep = 0; rep < CS_REPS; rep++)); do
		modes="on off warm restart image"
		[ $((rep % 2)) = 1 ] && modes="image restart warm off on"
		for prog in $CS_PROGS; do
			for mode in $modes; do
				coldstart_run "cs$rep$mode${prog:0:2}" "$prog" "$mode" || {
					echo "bench: coldstart: FAILED ($prog, $mode)"
					coldstart_image down
					return 1
				}
			done
		done
	done
	coldstart_image down
	cp "$RAW_CS" "$MD/coldstart.raw"
	awk "$AWK_LIB"'
	$1 == "coldstart" {
		k = kv($0, "prog") SUBSEP kv($0, "mode")
		i = ++nr[k]
		e[k, i] = kv($0, "entry_ms")
		f[k, i] = kv($0, "first_ms")
		s[k, i] = kv($0, "first_samples")
		a[k, i] = kv($0, "after_entry_ms")
		as[k, i] = kv($0, "after_entry_samples")
		t[k, i] = kv($0, "truncated") / (kv($0, "samples") > 0 ? kv($0, "samples") : 1)
		p[k, i] = kv($0, "partial_tables")
		h[k, i] = kv($0, "cache_hits")
		none[k] += kv($0, "none")
	}
	END {
		print "| program | tables | entry (ms) | first complete stack (ms) | its samples before it (CPU ms) | first complete after the entry (ms) | samples from the entry to it | runs with none before the end | truncated share | partial tables published | tables read back |" > md
		print "|---|---|---|---|---|---|---|---|---|---|---|" > md
		np = split(cs_progs, progs, " ")
		for (j = 1; j <= np; j++) {
			line = "bench: coldstart: " progs[j] ":"
			nm = split("on off warm restart image", modes, " ")
			split("cold, partial tables|cold, no partial tables (--no-partial-tables)|warm (held from a run before)|after a restart (the table cache)|after a restart, on an ext4 image (the cache by digest)", what, "|")
			split("cold with partial tables|cold without|warm|after a restart|after a restart from an image", short, "|")
			sep = ""
			for (m = 1; m <= nm; m++) {
				mode = modes[m]
				k = progs[j] SUBSEP mode
				if (!nr[k])
					continue
				printf "| %s | %s | %.0f | **%.0f** | %.0f | **%.0f** | %.0f | %d of %d | %.1f %% | %.0f | %.0f |\n", progs[j], \
					what[m], med_of(e, k, nr[k]), med_of(f, k, nr[k]), med_of(s, k, nr[k]), \
					med_of(a, k, nr[k]), med_of(as, k, nr[k]), none[k], nr[k], \
					med_of(t, k, nr[k]) * 100, med_of(p, k, nr[k]), med_of(h, k, nr[k]) > md
				line = line sprintf("%s %s %.0f ms (%.0f samples; %.0f ms, %.0f samples after the entry)", \
					sep, short[m], med_of(f, k, nr[k]), med_of(s, k, nr[k]), \
					med_of(a, k, nr[k]), med_of(as, k, nr[k]))
				sep = ","
			}
			print line " to the first complete stack from its first sample (medians of " nr[progs[j] SUBSEP "on"] ")"
		}
	}' md="$MD/coldstart.table" cs_progs="$CS_PROGS" "$RAW_CS"
}

# --- report ---------------------------------------------------------------------
