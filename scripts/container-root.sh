#!/usr/bin/env bash
# Builds (once) a minimal Debian trixie root with python3 in it, for tests that
# profile a process of another distribution in its own mount and PID
# namespaces (tests/realworld.test). Prints the root's path on stdout.
#
# Usage: scripts/container-root.sh [DIR]   (default /var/cache/sfbpf/trixie)
#
# The root is reused only when complete: DIR/.sfbpf-complete is written last,
# after debootstrap succeeded and python3 was found runnable inside. A partial
# root (an interrupted or failed build) is removed and built again. Needs root
# and debootstrap (scripts/deps.sh test); the mirror is the host's own Debian
# archive from its apt sources (deb.debian.org if none is found).
# Knobs: SFBPF_TRIXIE_SUITE (trixie), SFBPF_TRIXIE_MIRROR (a mirror URL),
# SFBPF_CONTAINER_PYTHONS=all: every python3.N the suite has, beside its
# python3 (unstable's next and last CPython, for tests/pywalk.test);
# SFBPF_CONTAINER_JDKS=all: every openjdk-N-jdk-headless it has from 11 on
# (make check-jdks); SFBPF_CONTAINER_NODE=1: the suite's nodejs (tests/v8profile.test);
# SFBPF_CONTAINER_PHP=1: the suite's PHP CLI with its -dev package, the excimer
# extension and gcc (PHP under its own sampler, and scripts/php/layouts.sh run
# inside on that PHP's headers, for userspace/interp/php_layouts.h);
# SFBPF_CONTAINER_RUBY=1: the suite's Ruby with its -dev package, stackprof
# and gcc (Ruby under its own sampler; scripts/ruby/layouts.sh inside);
# SFBPF_CONTAINER_PERL=1: the suite's perl with Devel::NYTProf and gcc (Perl
# under its own profiler; scripts/perl/layouts.sh inside on its headers).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "$0")/lib.sh"

DIR=${1:-${SFBPF_TRIXIE_ROOT:-/var/cache/sfbpf/trixie}}
SUITE=${SFBPF_TRIXIE_SUITE:-trixie}
MARKER=$DIR/.sfbpf-complete
PYTHONS=${SFBPF_CONTAINER_PYTHONS:-}
JDKS=${SFBPF_CONTAINER_JDKS:-}
NODE=${SFBPF_CONTAINER_NODE:-}
PHP=${SFBPF_CONTAINER_PHP:-}
RUBY=${SFBPF_CONTAINER_RUBY:-}
PERL=${SFBPF_CONTAINER_PERL:-}
STAMP="suite=$SUITE variant=minbase include=python3${PYTHONS:+ pythons=$PYTHONS}${JDKS:+ jdks=$JDKS}${NODE:+ node=$NODE}${PHP:+ php=$PHP}${RUBY:+ ruby=$RUBY}${PERL:+ perl=$PERL}"

die() {
	echo "container-root: $*" >&2
	exit 1
}

# The marker holds the recipe: a root built by another recipe is rebuilt.
if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$STAMP" ] && [ -x "$DIR/usr/bin/python3" ]; then
	echo "$DIR"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "needs root to build $DIR"
command -v debootstrap >/dev/null || die "debootstrap not installed (scripts/deps.sh test)"

MIRROR=$(debian_mirror "${SFBPF_TRIXIE_MIRROR:-}")
# One builder at a time (two test runs may start together).
mkdir -p "$(dirname "$DIR")"
exec 9>"$DIR.lock"
flock 9
if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$STAMP" ] && [ -x "$DIR/usr/bin/python3" ]; then
	echo "$DIR"
	exit 0
fi
# A partial root: whatever a failed run left. Nothing may still be mounted in
# it (a test killed while its namespace held DIR/proc unmounts with its
# namespace; a bind mount on the host would not).
if [ -e "$DIR" ]; then
	if grep -q " $DIR/" /proc/self/mounts; then
		die "$DIR has mounts under it; unmount them first"
	fi
	echo "container-root: removing the partial root $DIR" >&2
	rm -rf --one-file-system "$DIR"
fi
LOG=$DIR.log
echo "container-root: debootstrap --variant=minbase --include=python3 $SUITE $DIR $MIRROR (log: $LOG)" >&2
if ! debootstrap --variant=minbase --include=python3 "$SUITE" "$DIR" "$MIRROR" >"$LOG" 2>&1; then
	tail -5 "$LOG" >&2
	die "debootstrap failed (log: $LOG)"
fi
if ! chroot "$DIR" python3 -c 'import sys; print(sys.version)' >>"$LOG" 2>&1; then
	die "python3 does not run inside $DIR (log: $LOG)"
fi
# The archive's Release files may be past their Valid-Until (a mirror kept
# as of a date): debootstrap does not mind, apt must be told. A /proc of its
# own in the root (a JDK's postinst runs java, which needs one), gone with
# the namespace.
apt_in() { unshare --mount --pid --fork --mount-proc="$DIR/proc" chroot "$DIR" \
	env DEBIAN_FRONTEND=noninteractive apt-get -q \
	-o Acquire::Check-Valid-Until=false "$@" >>"$LOG" 2>&1; }
# all_of REGEX WHAT: every package of the suite whose name REGEX matches, installed.
all_of() {
	local pkgs
	apt_in update || die "apt-get update failed inside $DIR (log: $LOG)"
	mapfile -t pkgs < <(chroot "$DIR" apt-cache pkgnames | grep -E "$1" | sort -V)
	[ "${#pkgs[@]}" -gt 0 ] || die "no $2 package in $SUITE (log: $LOG)"
	echo "container-root: installing ${pkgs[*]} (log: $LOG)" >&2
	apt_in install -y --no-install-recommends "${pkgs[@]}" ||
		die "installing ${pkgs[*]} failed inside $DIR (log: $LOG)"
}
[ "$PYTHONS" = all ] && all_of '^python3\.[0-9]+$' python3.N
[ "$JDKS" = all ] && all_of '^openjdk-(1[1-9]|[2-9][0-9])-jdk-headless$' openjdk-N-jdk-headless
[ "$NODE" = 1 ] && all_of '^nodejs$' nodejs
# php-cli and php-dev are the suite's default PHP, the one php-excimer is
# built for; gcc and libc6-dev because layouts.sh compiles against its
# headers (gcc only recommends libc6-dev). Named, not matched: apt fails
# if the suite lacks one, here rather than in a test.
if [ "$PHP" = 1 ]; then
	apt_in update || die "apt-get update failed inside $DIR (log: $LOG)"
	echo "container-root: installing php-cli php-dev php-excimer gcc libc6-dev (log: $LOG)" >&2
	apt_in install -y --no-install-recommends php-cli php-dev php-excimer gcc libc6-dev ||
		die "installing PHP failed inside $DIR (log: $LOG)"
	chroot "$DIR" php -m 2>>"$LOG" | grep -x excimer >/dev/null ||
		die "php in $DIR has no excimer (log: $LOG)"
	chroot "$DIR" php-config --version >>"$LOG" 2>&1 ||
		die "no php-config in $DIR (log: $LOG)"
fi
# ruby and ruby-dev are the suite's default Ruby, the one ruby-stackprof is
# built for; xz-utils unpacks its source for layouts.sh.
if [ "$RUBY" = 1 ]; then
	apt_in update || die "apt-get update failed inside $DIR (log: $LOG)"
	echo "container-root: installing ruby ruby-dev ruby-stackprof gcc libc6-dev (log: $LOG)" >&2
	apt_in install -y --no-install-recommends ruby ruby-dev ruby-stackprof gcc libc6-dev xz-utils ||
		die "installing Ruby failed inside $DIR (log: $LOG)"
	chroot "$DIR" ruby -rstackprof -e 'exit StackProf.respond_to?(:run)' 2>>"$LOG" ||
		die "ruby in $DIR has no stackprof (log: $LOG)"
fi
# perl and its libperl (which ships the CORE headers), Devel::NYTProf; the
# headers include crypt.h from 5.42 (libcrypt-dev).
if [ "$PERL" = 1 ]; then
	apt_in update || die "apt-get update failed inside $DIR (log: $LOG)"
	echo "container-root: installing perl libdevel-nytprof-perl gcc libc6-dev libcrypt-dev (log: $LOG)" >&2
	apt_in install -y --no-install-recommends perl libdevel-nytprof-perl gcc libc6-dev libcrypt-dev ||
		die "installing Perl failed inside $DIR (log: $LOG)"
	chroot "$DIR" perl -MDevel::NYTProf::Data -e 1 2>>"$LOG" ||
		die "perl in $DIR has no Devel::NYTProf (log: $LOG)"
fi
echo "$STAMP" >"$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
echo "$DIR"
