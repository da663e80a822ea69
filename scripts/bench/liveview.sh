# shellcheck shell=bash
# Sourced by scripts/bench.sh (its options, sizes and helpers in scope): liveview (a refresh of the
# live view's model against a snapshot of the same aggregator).

# The live view names each distinct stack once, when it first appears
# (top/topview.h); the outputs read a snapshot (profile/snapshot.h), which
# names every stack each time it is made. What each costs per refresh on the
# same aggregator, alternated within one process (tests/bench/liveview.c).
bench_liveview() {
	local raw=$TMP/liveview.txt n
	: >"$raw"
	build_driver liveview "$ROOT/tests/bench/liveview.c" || return 1
	for n in $LV_STACKS; do
		"$BB/liveview" -s "$n" -r "$LV_REFRESHES" >>"$raw" || {
			echo "bench: liveview: FAILED ($n stacks)"
			return 1
		}
	done
	cp "$raw" "$MD/liveview.raw"
	awk "$AWK_LIB"'
	$1 == "liveview" {
		# Grouped by the stacks the run started with (a hundred arrive each refresh).
		k = kv($0, "depth") " " kv($0, "addrs") " " kv($0, "stacks") - kv($0, "refresh") * kv($0, "new")
		if (!(k in n))
			order[++groups] = k
		i = ++n[k]
		m[k, i] = kv($0, "model_us")
		s[k, i] = kv($0, "snapshot_us")
		r[k, i] = kv($0, "snapshot_us") / (kv($0, "model_us") > 0 ? kv($0, "model_us") : 1)
		f[k, i] = kv($0, "frames")
		st[k] = kv($0, "stacks") - kv($0, "refresh") * kv($0, "new")
	}
	END {
		print "| distinct stacks at first (+100 a refresh) | frames a stack | distinct addresses | refreshes | model update (ms) | snapshot (ms) | snapshot / model | frames named by the snapshot |" > md
		print "|---|---|---|---|---|---|---|---|" > md
		for (g = 1; g <= groups; g++) {
			k = order[g]
			split(k, p, " ")
			for (i = 1; i <= n[k]; i++) {
				a[i] = m[k, i]; b[i] = s[k, i]; c[i] = r[k, i]; d[i] = f[k, i]
			}
			printf "| %d | %d | %d | %d | %.1f | %.1f | %.0fx | %d |\n", st[k], p[1], p[2], \
				n[k], median(a, n[k]) / 1000, median(b, n[k]) / 1000, median(c, n[k]), \
				median(d, n[k]) > md
			printf "bench: liveview: %d stacks: a refresh %.1f ms in the model, %.1f ms as a snapshot (%.0fx, medians of %d)\n", \
				st[k], median(a, n[k]) / 1000, median(b, n[k]) / 1000, median(c, n[k]), n[k]
		}
	}' md="$MD/liveview.table" "$raw"
}
