#!/usr/bin/env bash
# Writes userspace/interp/php_layouts.h: one row per PHP whose headers are
# given (php-config's --includes of each -dev package: Debian 12's 8.2 here,
# newer ones in container roots: ROOT:PHP-CONFIG, compiled and run inside
# ROOT, which has gcc: scripts/container-root.sh with SFBPF_CONTAINER_PHP=1),
# built from scripts/php/layout.c.
# Usage: scripts/php/layouts.sh [--check] [ROOT:]PHP-CONFIG...
#   e.g. scripts/php/layouts.sh php-config8.2 /var/cache/sfbpf/php-trixie:php-config8.4
#   --check  write nothing: fail if the rows these headers give are not in
#            the file (tests/phpprofile.test)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
OUT=$ROOT/userspace/interp/php_layouts.h
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
[ $# -gt 0 ] || {
	echo "usage: $0 [--check] PHP-CONFIG..." >&2
	exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows
: >"$rows"
for arg in "$@"; do
	if [ "${arg#*:}" = "$arg" ]; then
		# shellcheck disable=SC2046 # php-config's flags are words
		cc -D_GNU_SOURCE $("$arg" --includes) -o "$tmp/layout" "$ROOT/scripts/php/layout.c"
		"$tmp/layout" >>"$rows"
		continue
	fi
	croot=${arg%%:*} pc=${arg#*:}
	in=$(mktemp -d "$croot/tmp/sfbpf-phplayout.XXXXXX")
	cp "$ROOT/scripts/php/layout.c" "$in/"
	# shellcheck disable=SC2016 # expanded by the root's sh
	chroot "$croot" sh -c 'cc -D_GNU_SOURCE $("$1" --includes) -o "$2/layout" "$2/layout.c" &&
		"$2/layout"' sh "$pc" "${in#"$croot"}" >>"$rows" || {
		rm -rf "$in"
		exit 1
	}
	rm -rf "$in"
done
layout_rows "$check" "$rows" "$OUT" php_layout <<'HDR'
/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Written by scripts/php/layouts.sh from the headers of each PHP below
 * (its -dev package), compiled into scripts/php/layout.c: the layout the
 * walk reads, by the build ID PHP checks extensions against. Do not edit;
 * tests/phpprofile.test checks the rows against the headers installed.
 */
HDR
