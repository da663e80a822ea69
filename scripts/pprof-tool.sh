#!/usr/bin/env bash
# Builds Google's pprof, the reference reader the pprof tests decode our
# profiles with, from Debian's Go source packages (golang-go and
# golang-github-google-pprof-dev): no network, no Go module download.
#
# The binary is cached outside the repository, built once per machine:
#   $SFBPF_PPROF_CACHE (default /var/cache/sfbpf/pprof)/pprof
# Prints the binary's path on stdout. Exits 1 (message on stderr) when the
# packages are missing or the build fails.
# Usage: scripts/pprof-tool.sh
set -euo pipefail

CACHE=${SFBPF_PPROF_CACHE:-/var/cache/sfbpf/pprof}
GOCODE=/usr/share/gocode
SRC=$GOCODE/src/github.com/google/pprof
BIN=$CACHE/pprof

log() { echo "pprof-tool: $*" >&2; }

if ! command -v go >/dev/null; then
	log "no Go compiler: apt-get install golang-go (or scripts/deps.sh test)"
	exit 1
fi
if [ ! -f "$SRC/pprof.go" ]; then
	log "no pprof source in $SRC: apt-get install golang-github-google-pprof-dev"
	exit 1
fi

# Rebuild when the packaged source changes (a Debian update).
stamp=$(stat -c %Y "$SRC/pprof.go" "$(command -v go)" | tr '\n' ' ')
if [ -x "$BIN" ] && [ "$(cat "$CACHE/.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "$BIN"
	exit 0
fi

mkdir -p "$CACHE"
tmp=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "building pprof from $SRC (log: $CACHE/build.log)"
# GOPATH mode over Debian's source tree; build cache in the scratch dir so
# nothing is written to $HOME.
if ! (cd "$tmp" && GOPATH=$GOCODE GO111MODULE=off GOFLAGS= GOCACHE=$tmp/gocache \
	go build -o "$tmp/pprof" github.com/google/pprof) >"$CACHE/build.log" 2>&1; then
	tail -20 "$CACHE/build.log" >&2
	log "FAILED"
	exit 1
fi
mv "$tmp/pprof" "$BIN"
echo "$stamp" >"$CACHE/.stamp"
echo "$BIN"
