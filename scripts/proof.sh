#!/usr/bin/env bash
# make proof: the evidence issue #25 asks for before the suite is called
# trustworthy, from one commit: ROUNDS runs of `make check-fresh` (a new
# Debian 12 root, scripts/check-fresh.sh) and ROUNDS runs of `LOAD=2 make
# check` (each in a fresh clone), the two kinds side by side in two lanes,
# the runs of a lane one after the other. Each run is the README's own
# command; this only starts them and collects their closing lines, so a
# round's result is exactly what a new machine or a busy one would print.
#
# The commit is HEAD, and the work tree must be clean: a run of an
# uncommitted change proves nothing about what lands. Ends with one line per
# run and "proof COMMIT: fresh P/N passed, loaded P/N passed"; exits 1 unless
# every run passed. Logs: $SFBPF_PROOF_DIR (/var/tmp/sfbpf-proof/COMMIT).
# Knobs: ROUNDS (3), LOAD (2), SFBPF_PROOF_DIR.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
ROUNDS=${ROUNDS:-3}
LOAD=${LOAD:-2}

log() { echo "proof: $*" >&2; }
[ "$(id -u)" -eq 0 ] || {
	log "needs root (check-fresh's root, BPF)"
	exit 1
}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || {
	log "ROUNDS must be a positive number"
	exit 1
}
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	log "the work tree has uncommitted changes: commit them, the runs clone HEAD"
	exit 1
fi
commit=$(git rev-parse --short=12 HEAD)
DIR=${SFBPF_PROOF_DIR:-/var/tmp/sfbpf-proof/$commit}
mkdir -p "$DIR"
log "commit $commit, $ROUNDS rounds, logs in $DIR"

# The closing line of a run's log ("N passed, N failed[, N skipped]"), or
# what stands instead.
closing() {
	grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1 | grep . || echo "no closing line"
}

# A lane: ROUNDS runs of one kind, one after the other; each run's status in
# $DIR/KIND-N.rc.
lane_fresh() {
	local i
	for ((i = 1; i <= ROUNDS; i++)); do
		make --no-print-directory -C "$ROOT" check-fresh >"$DIR/fresh-$i.log" 2>&1
		echo $? >"$DIR/fresh-$i.rc"
	done
}
lane_loaded() {
	local i c
	for ((i = 1; i <= ROUNDS; i++)); do
		c=$DIR/clone-$i
		rm -rf "$c"
		if git clone -q "$ROOT" "$c" && git -C "$c" checkout -q "$commit"; then
			LOAD=$LOAD make --no-print-directory -C "$c" check >"$DIR/loaded-$i.log" 2>&1
			echo $? >"$DIR/loaded-$i.rc"
		else
			echo "cloning $ROOT failed" >"$DIR/loaded-$i.log"
			echo 1 >"$DIR/loaded-$i.rc"
		fi
	done
}

start=$SECONDS
lane_fresh &
fresh=$!
lane_loaded &
loaded=$!
wait "$fresh" "$loaded"

ok_fresh=0 ok_loaded=0
for kind in fresh loaded; do
	for ((i = 1; i <= ROUNDS; i++)); do
		rc=$(cat "$DIR/$kind-$i.rc" 2>/dev/null || echo 1)
		line=$(closing "$DIR/$kind-$i.log")
		echo "$kind $i: exit $rc: $line"
		if [ "$rc" = 0 ]; then
			[ "$kind" = fresh ] && ok_fresh=$((ok_fresh + 1))
			[ "$kind" = loaded ] && ok_loaded=$((ok_loaded + 1))
		fi
	done
done
echo "proof $commit: fresh $ok_fresh/$ROUNDS passed, loaded (LOAD=$LOAD) $ok_loaded/$ROUNDS passed," \
	"$(((SECONDS - start) / 60)) min"
[ "$ok_fresh" -eq "$ROUNDS" ] && [ "$ok_loaded" -eq "$ROUNDS" ]
