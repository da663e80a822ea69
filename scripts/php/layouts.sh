#!/usr/bin/env bash
# Writes userspace/interp/php_layouts.h: one row per PHP whose headers are
# given (php-config's --includes of each -dev package: Debian 12's 8.2 here,
# newer ones in container roots: ROOT:PHP-CONFIG, compiled and run inside
# ROOT, which has gcc: scripts/container-root.sh with SFBPF_CONTAINER_PHP=1),
# built from scripts/php/layout.c.
# Usage: scripts/php/layouts.sh [--check] [ROOT:]PHP-CONFIG...
#   e.g. scripts/php/layouts.sh php-config8.2 /var/cache/sfbpf/php-trixie:php-config8.4
#   --check  write nothing: fail if the rows these headers give are not in
#            the file (tests/php.test)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
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
if [ "$check" = 1 ]; then
	# Each row somewhere in the file, its spacing aside.
	python3 - "$rows" "$OUT" <<'PY'
import sys
flat = lambda t: " ".join(t.split())
rows, table = open(sys.argv[1]).read(), flat(open(sys.argv[2]).read())
for row in rows.split("\t{ ")[1:]:
    if flat("{ " + row) not in table:
        sys.exit("php_layouts.h lacks, or has otherwise, the row the headers give:\n\t{ " + row)
PY
	exit 0
fi
{
	cat <<'HDR'
/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Written by scripts/php/layouts.sh from the headers of each PHP below
 * (its -dev package), compiled into scripts/php/layout.c: the layout the
 * walk reads, by the build ID PHP checks extensions against. Do not edit;
 * tests/php.test checks the rows against the headers installed.
 */
HDR
	echo "// clang-format off"
	echo "static const struct php_layout php_layouts[] = {"
	cat "$rows"
	echo "};"
	echo "// clang-format on"
} >"$OUT"
