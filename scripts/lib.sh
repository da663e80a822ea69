# Shell functions the build scripts share (sourced, not run).
# shellcheck shell=bash

# ours PID: whether PID is a process this shell started (a descendant of it).
# A PID reaped long ago may be another process's by now: on a busy machine (a
# CI runner, other suites) PIDs come round within minutes (pid_max 32768), and
# a cleanup that signals every PID it ever started once stopped another
# suite's profiler.
ours() {
	local p=$1 i
	for ((i = 0; i < 16; i++)); do
		p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
		[ -n "$p" ] && [ "$p" -gt 1 ] || return 1
		[ "$p" = "$$" ] && return 0
	done
	return 1
}

# kill_ours [-SIG] PID...: signals (TERM by default) those of the PIDs that are ours.
kill_ours() {
	local sig=-TERM p
	case ${1:-} in -*) sig=$1 && shift ;; esac
	for p in "$@"; do
		ours "$p" && kill "$sig" "$p" 2>/dev/null
	done
	return 0
}

# boot_watched LIMIT BOOTED CMD...: runs CMD (a guest's qemu, in the
# background) and returns its status; or stops it and returns 200 when the file
# BOOTED (written by the guest's /init) has not appeared within LIMIT seconds.
# A kernel that hangs at its own boot under TCG (once in CI: 6.1, silent on its
# console, held a run for the whole 1200 s timeout) is then found in minutes,
# and the caller may boot it again: nothing of sfbpf has run yet.
boot_watched() {
	local limit=$1 booted=$2 pid start=$SECONDS rc=0
	shift 2
	"$@" &
	pid=$!
	while [ ! -e "$booted" ] && kill -0 "$pid" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$limit" ]; then
			# CMD may be a function: its subshell's children are timeout
			# and qemu; timeout passes the signal on to qemu.
			pkill -TERM -P "$pid" 2>/dev/null
			kill -TERM "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 200
		fi
		sleep 1
	done
	wait "$pid" || rc=$?
	return "$rc"
}

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

# private_apt DIR TYPE SUITE...: an apt of its own under DIR for Debian's
# packages of TYPE (deb-src: sources; deb: the host architecture's binaries)
# in each SUITE, from the host's Debian mirror (debian_mirror;
# SFBPF_SOURCE_MIRROR overrides), its lists fetched when missing or a day
# old. Sets PRIVATE_APT, the options to hand apt-get and apt-cache: nothing
# installed (an empty dpkg status), nothing of the host's apt sources, lists
# or locks. Uses the caller's log; returns 1, the reason logged, when its
# update fails.
private_apt() {
	local dir=$1 type=$2 mirror suite
	shift 2
	mirror=$(debian_mirror "${SFBPF_SOURCE_MIRROR:-}")
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	for suite in "$@"; do
		printf '%s [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
			"$type" "$mirror" "$suite"
	done >"$dir/sources.list.new"
	PRIVATE_APT=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache::Archives="$dir/archives"
		-o Dir::State::Status=/dev/null -o APT::Sandbox::User=root -o Debug::NoLocking=1
		-o APT::Architectures="$(dpkg --print-architecture)")
	if cmp -s "$dir/sources.list.new" "$dir/sources.list" && [ -f "$dir/updated" ] &&
		[ -z "$(find "$dir/updated" -mmin +1440)" ]; then
		rm -f "$dir/sources.list.new"
		return 0
	fi
	mv "$dir/sources.list.new" "$dir/sources.list"
	rm -f "$dir/updated"
	if ! apt-get "${PRIVATE_APT[@]}" update >"$dir/update.log" 2>&1; then
		log "apt-get update of Debian's $type $* from $mirror failed: $(grep -m1 '^E: ' \
			"$dir/update.log" | cut -c4-) (log: $dir/update.log)"
		return 1
	fi
	touch "$dir/updated"
}

# source_apt DIR: private_apt DIR for the source packages of trixie and sid;
# sets SOURCE_APT. Earlier versions of the builders added
# /etc/apt/sources.list.d/sfbpf-src.sources to the host's apt: removed here,
# when it is still exactly what they wrote.
source_apt() {
	local old=/etc/apt/sources.list.d/sfbpf-src.sources
	if [ -f "$old" ] && grep -qx 'Suites: trixie sid' "$old" &&
		[ "$(grep -c . "$old")" -eq 5 ] && rm -f "$old" 2>/dev/null; then
		log "removed $old, which an earlier version of this script added"
	fi
	private_apt "$1" deb-src trixie sid || return 1
	# shellcheck disable=SC2034 # for the caller
	SOURCE_APT=("${PRIVATE_APT[@]}")
}

# fetch_source CACHE PKG [SUITE...]: the upstream tarball of Debian's source
# package PKG (the newest of the SUITEs', by default trixie's and
# unstable's) unpacked once into CACHE/PKG/NAME-VERSION (the tarball's own
# top directory); prints that directory. Only the tarball is needed: a
# mirror that has it but not the package's .dsc (seen: a 404 for a .dsc the
# index names) still serves.
fetch_source() {
	local cache=$1 pkg=$2 dir tmp tarball suites=("${@:3}")
	dir=$(find "$cache/$pkg" -mindepth 2 -maxdepth 2 -name .sfbpf-unpacked -printf '%h\n' 2>/dev/null |
		sort -V | tail -n 1)
	if [ -n "$dir" ]; then
		echo "$dir"
		return 0
	fi
	mkdir -p "$cache/$pkg" || return 1
	(
		declare -F log >/dev/null || log() { echo "fetch_source: $*" >&2; }
		exec 9>"$cache/$pkg.lock"
		flock 9
		dir=$(find "$cache/$pkg" -mindepth 2 -maxdepth 2 -name .sfbpf-unpacked -printf '%h\n' |
			sort -V | tail -n 1)
		if [ -n "$dir" ]; then
			echo "$dir"
			exit 0
		fi
		if [ ${#suites[@]} -eq 0 ]; then
			source_apt "$cache/apt" || exit 1
		else
			private_apt "$cache/apt-$(
				IFS=-
				echo "${suites[*]}"
			)" deb-src "${suites[@]}" || exit 1
			SOURCE_APT=("${PRIVATE_APT[@]}")
		fi
		tmp=$(mktemp -d "$cache/$pkg/fetch.XXXXXX") || exit 1
		trap 'rm -rf "$tmp"' EXIT
		(cd "$tmp" && apt-get "${SOURCE_APT[@]}" source -qq --download-only "$pkg" \
			>"$tmp/apt.log" 2>&1)
		tarball=$(find "$tmp" -maxdepth 1 -name "${pkg}_*.orig.tar.*" | head -n 1)
		if [ -z "$tarball" ]; then
			echo "fetch_source: no upstream tarball of $pkg: $(grep -m1 '^E: ' "$tmp/apt.log" | cut -c4-)" >&2
			exit 1
		fi
		mkdir "$tmp/x" && tar -xf "$tarball" -C "$tmp/x" || exit 1
		dir=$(find "$tmp/x" -mindepth 1 -maxdepth 1 -type d | head -n 1)
		[ -n "$dir" ] || exit 1
		rm -rf "${cache:?}/$pkg/$(basename "$dir")"
		mv "$dir" "$cache/$pkg/" && touch "$cache/$pkg/$(basename "$dir")/.sfbpf-unpacked" &&
			echo "$cache/$pkg/$(basename "$dir")"
	)
}

# fetch_deb CACHE PKG VERSION: Debian's package PKG at VERSION, downloaded by
# the host's apt and unpacked once into CACHE/PKG_VERSION (nothing
# installed: a daemon's package would start its service on the host); prints
# that directory. For a program of the same build as one installed (php8.2-fpm
# beside php8.2-cli): the version the host's lists already hold.
fetch_deb() {
	local cache=$1 pkg=$2 ver=$3 dir tmp
	dir=$cache/${pkg}_$ver
	if [ -f "$dir/.sfbpf-unpacked" ]; then
		echo "$dir"
		return 0
	fi
	mkdir -p "$cache" || return 1
	(
		exec 9>"$cache/$pkg.lock"
		flock 9
		if [ ! -f "$dir/.sfbpf-unpacked" ]; then
			tmp=$(mktemp -d "$cache/fetch.XXXXXX") || exit 1
			trap 'rm -rf "$tmp"' EXIT
			if ! (cd "$tmp" && apt-get download -qq "$pkg=$ver") >"$tmp/apt.log" 2>&1; then
				echo "fetch_deb: apt-get download $pkg=$ver: $(grep -m1 '^E: ' "$tmp/apt.log" | cut -c4-)" >&2
				exit 1
			fi
			rm -rf "$dir"
			dpkg-deb -x "$tmp"/*.deb "$tmp/x" && mv "$tmp/x" "$dir" &&
				touch "$dir/.sfbpf-unpacked" || exit 1
		fi
		echo "$dir"
	)
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

# included_sources SRC: the sources SRC includes as '#include "NAME.c"' (one
# program built again with other settings), as paths beside SRC: a fixture
# built from them is out of date when they change.
included_sources() {
	sed -n 's|^#include "\([^"/]*\.c\)"$|\1|p' "$1" | while read -r inc; do
		echo "$(dirname "$1")/$inc"
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

# install_packages LOG PKG...: apt-get installs the PKGs not yet installed
# (after an apt-get update when the first try fails: the lists may be stale).
# Uses the caller's log; returns 1 when apt-get fails (its output in LOG).
install_packages() {
	local alog=$1 missing=() p
	shift
	for p in "$@"; do
		dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		"${missing[@]}" >"$alog" 2>&1 && return 0
	apt-get update >>"$alog" 2>&1 || true
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		"${missing[@]}" >>"$alog" 2>&1 && return 0
	log "apt-get install ${missing[*]} failed (log: $alog)"
	return 1
}

# debian_kernel DIR ARCH SOURCE...: Debian's linux-image-ARCH, the newest of
# the SOURCEs ("URI SUITE": "http://deb.debian.org/debian bookworm"), fetched
# by an apt of its own under DIR/apt (the host's sources may know neither ARCH
# nor SUITE; with Dir::State::Status=/dev/null nothing is installed and the
# host's packages play no part) and unpacked into DIR/kernel, its modules
# indexed (depmod). Sets KIMAGE (the package), KVER, KMODBASE (what depmod -b
# and modprobe -d take: DIR/kernel, or DIR/kernel/usr where the modules are
# in /usr/lib/modules) and KVMLINUZ. Log: DIR/kernel.log. Returns 1, with one
# line through the caller's log, when it cannot.
debian_kernel() {
	local dir=$1 arch=$2 apt=$1/apt klog=$1/kernel.log src deb p pkgs
	shift 2
	rm -rf "$apt" "$dir/kernel"
	mkdir -p "$apt/lists/partial" "$apt/archives/partial"
	for src in "$@"; do
		echo "deb [arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $src main"
	done >"$apt/sources.list"
	local o=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache::Archives="$apt/archives"
		-o Dir::State::Status=/dev/null -o APT::Architecture="$arch" -o APT::Architectures::="$arch"
		-o APT::Sandbox::User=root -o Debug::NoLocking=1)
	if ! apt-get "${o[@]}" update >"$klog" 2>&1; then
		log "apt-get update failed for $arch from $*: $(grep -m1 '^E: ' "$klog" | cut -c4-) (log: $klog)"
		return 1
	fi
	# linux-image-ARCH is a metapackage: its dependency linux-image-KVER is the
	# kernel (sid's also depends on linux-base-ARCH).
	KIMAGE=$(apt-cache "${o[@]}" depends "linux-image-$arch" 2>>"$klog" |
		sed -n 's/^ *Depends: \(linux-image-[0-9].*\)/\1/p' | head -1)
	if [ -z "$KIMAGE" ]; then
		log "no linux-image-$arch in $* (log: $klog)"
		return 1
	fi
	KVER=${KIMAGE#linux-image-}
	# Up to 6.x that package holds everything; from 7.x it is split into
	# linux-binary-KVER (vmlinuz), linux-modules-KVER and linux-base-KVER
	# (config, System.map, modules.builtin), the dependencies named *-KVER.
	pkgs=("$KIMAGE")
	while read -r p; do
		pkgs+=("$p")
	done < <(apt-cache "${o[@]}" depends "$KIMAGE" 2>>"$klog" |
		awk -v k="-$KVER" '$1 == "Depends:" && substr($2, length($2) - length(k) + 1) == k { print $2 }')
	if ! (cd "$apt/archives" && apt-get "${o[@]}" download "${pkgs[@]}") >>"$klog" 2>&1; then
		log "apt-get download ${pkgs[*]} failed (log: $klog)"
		return 1
	fi
	for deb in "$apt"/archives/*.deb; do
		dpkg-deb -x "$deb" "$dir/kernel" || {
			log "dpkg-deb -x $deb failed"
			return 1
		}
	done
	if [ -d "$dir/kernel/usr/lib/modules/$KVER" ]; then
		KMODBASE=$dir/kernel/usr
	elif [ -d "$dir/kernel/lib/modules/$KVER" ]; then
		KMODBASE=$dir/kernel
	else
		log "${pkgs[*]}: no modules for $KVER"
		return 1
	fi
	KVMLINUZ=
	for p in "$dir/kernel/boot/vmlinuz-$KVER" "$KMODBASE/lib/modules/$KVER/vmlinuz"; do
		[ -f "$p" ] && KVMLINUZ=$p && break
	done
	if [ -z "$KVMLINUZ" ]; then
		log "${pkgs[*]}: no vmlinuz for $KVER"
		return 1
	fi
	depmod -b "$KMODBASE" "$KVER" >>"$klog" 2>&1 || {
		log "depmod $KVER failed (log: $klog)"
		return 1
	}
}

# initrd_modules KMODBASE KVER OUT MODULE...: the MODULEs and the modules they
# need (modprobe --show-depends; built-in ones are skipped), decompressed into
# OUT (busybox's insmod reads neither .xz nor .zst), and OUT/order, their file
# names in the order to insmod them. Uses the caller's log; returns 1 when a
# module is missing.
initrd_modules() {
	local base=$1 kver=$2 out=$3 list m f
	shift 3
	if ! list=$(for m in "$@"; do modprobe -d "$base" -S "$kver" --show-depends "$m" || exit 1; done 2>&1); then
		log "modules for $kver: $(tail -1 <<<"$list")"
		return 1
	fi
	mkdir -p "$out"
	: >"$out/order"
	while read -r f; do
		m=$(basename "$f")
		case $f in
		*.xz) m=${m%.xz} && xz -dc "$f" >"$out/$m" ;;
		*.zst) m=${m%.zst} && zstd -qdc "$f" >"$out/$m" ;;
		*.gz) m=${m%.gz} && gzip -dc "$f" >"$out/$m" ;;
		*) cp "$f" "$out/$m" ;;
		esac || {
			log "cannot decompress $f"
			return 1
		}
		echo "$m" >>"$out/order"
	done < <(awk '$1 == "insmod" && !seen[$2]++ { print $2 }' <<<"$list")
}

# layout_rows CHECK ROWS OUT TYPE: a layouts script's rows (the file ROWS, one
# "\t{ ..." initializer each, as scripts/*/layout.c print them) into OUT, the
# table "static const struct TYPE TYPEs[]" after the header comment read from
# stdin (scripts/php, ruby and perl/layouts.sh). CHECK 1 writes nothing: it
# fails, naming the row, unless each row is somewhere in OUT, its spacing aside.
layout_rows() {
	local check=$1 rows=$2 out=$3 type=$4 header
	header=$(cat)
	if [ "$check" = 1 ]; then
		python3 - "$rows" "$out" <<'PY'
import os
import sys
flat = lambda t: " ".join(t.split())
rows, table = open(sys.argv[1]).read(), flat(open(sys.argv[2]).read())
for row in rows.split("\t{ ")[1:]:
    if flat("{ " + row) not in table:
        sys.exit("%s lacks, or has otherwise, the row the headers give:\n\t{ %s"
                 % (os.path.basename(sys.argv[2]), row))
PY
		return
	fi
	{
		echo "$header"
		echo "// clang-format off"
		echo "static const struct $type ${type}s[] = {"
		cat "$rows"
		echo "};"
		echo "// clang-format on"
	} >"$out"
}
