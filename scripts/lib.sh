# Shell functions the build scripts share (sourced, not run).
# shellcheck shell=bash

# debian_mirror [OVERRIDE]: OVERRIDE if set, else the first http(s) URI of the
# host's apt sources that serves Debian's main archive (not -security, not
# -updates, not a third-party repository), else deb.debian.org.
debian_mirror() {
	local f u
	if [ -n "${1:-}" ]; then
		echo "$1"
		return
	fi
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		u=$(awk '
			/^[ \t]*#/ { next }
			/^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { print $i; break } }
			/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) print $i }
		' "$f" | grep -v -e security -e '-updates' | grep -E '/debian/?$' | head -1)
		if [ -n "$u" ]; then
			echo "${u%/}"
			return
		fi
	done
	echo http://deb.debian.org/debian
}

# up_to_date OUT DEP...: OUT exists and is newer than every DEP.
up_to_date() {
	local out=$1 dep
	shift
	[ -e "$out" ] || return 1
	for dep in "$@"; do
		[ "$out" -nt "$dep" ] || return 1
	done
}

# build OUT CMD...: runs CMD (which writes OUT) unless OUT is newer than every
# file in the caller's DEPS, then checks OUT with the caller's verify (a
# failing OUT is removed). Uses the caller's log.
build() {
	local out=$1
	shift
	up_to_date "$out" "${DEPS[@]}" && return 0
	"$@" || {
		log "failed: $*"
		return 1
	}
	verify "$out" || {
		rm -f "$out"
		return 1
	}
}
