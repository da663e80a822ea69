#!/usr/bin/env bash
# The fixtures of tests/kernels/quick.sh into DIR: deep_recursion (deep),
# deep1000 and blockers, with SFrame (the system gas: V1).
# Usage: tests/kernels/build-fix.sh DIR
set -eu
src=$(cd "$(dirname "$0")/../fixtures" && pwd)
mkdir -p "$1"
cc=(gcc -O2 -Wa,--gsframe -I"$src")
"${cc[@]}" "$src/deep_recursion.c" -o "$1/deep"
"${cc[@]}" "$src/deep1000.c" -o "$1/deep1000"
"${cc[@]}" "$src/blockers.c" -o "$1/blockers" -lpthread
