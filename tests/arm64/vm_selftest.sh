#!/usr/bin/env bash
# scripts/arm64-vm.sh selftest: boots the arm64 guest (with the kernel
# SFBPF_ARM64_KERNEL names: trixie, the default, or bookworm) and checks what
# the unwinding tests rely on there. Run on the host: builds the v1-pac chain
# fixture (scripts/build-arm64-fixtures.sh), then, in the guest (this same
# script with --guest):
#   pac        the CPU signs return addresses (paca, pacg in /proc/cpuinfo)
#   bpf        bpftool feature probe: perf_event programs and bpf_loop
#   perf       perf record --call-graph dwarf of the pac-ret chain fixture, and
#              perf script (given the PAC mask by perf-pacmask.so, see
#              tests/arm64/perf_pacmask.c) shows its chain main -> a -> b -> hot
#   btf        /sys/kernel/btf/vmlinux is there
# PASS/FAIL/SKIP lines; exit 77 if the guest cannot boot, 1 on a FAIL.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIX=${SFBPF_BUILD:-$ROOT/build-arm64}/fixtures

guest() {
	local f w=/tmp/selftest bin=$FIX/v1-pac/chain.pie
	mkdir -p $w
	echo "kernel $(uname -r), $(nproc) CPUs, $(perf --version), $(bpftool version | head -1)"
	f=$(grep -m1 '^Features' /proc/cpuinfo)
	if [[ " $f " == *" paca "* && " $f " == *" pacg "* ]]; then
		echo "PASS: arm64 guest: pointer authentication (paca pacg)"
	else
		echo "FAIL: arm64 guest: no pointer authentication: $f"
	fi
	bpftool feature probe kernel >$w/probe 2>&1
	if grep -q 'program_type perf_event is available' $w/probe &&
		sed -n '/helpers supported for program type perf_event:/,/^$/p' $w/probe |
		grep -qw bpf_loop; then
		echo "PASS: arm64 guest: BPF: perf_event programs and bpf_loop"
	else
		echo "FAIL: arm64 guest: BPF probe: $(grep -i -e perf_event -e bpf_loop -e error $w/probe | head -3 | tr '\n' ' ')"
	fi
	if [ -s /sys/kernel/btf/vmlinux ]; then
		echo "PASS: arm64 guest: kernel BTF"
	else
		echo "FAIL: arm64 guest: no /sys/kernel/btf/vmlinux"
	fi
	if [ ! -x "$bin" ]; then
		echo "FAIL: arm64 guest: perf: $bin not built"
		return
	fi
	if ! perf record --no-bpf-event -q -F 199 --call-graph dwarf -o $w/perf.data -- "$bin" 2 >$w/record.out 2>&1 ||
		! LD_PRELOAD=$FIX/perf-pacmask.so perf script -i $w/perf.data -F comm,ip,sym,dso --no-inline \
			--no-demangle >$w/perf.txt 2>$w/script.err; then
		echo "FAIL: arm64 guest: perf record/script: $(tail -qn 2 $w/record.out $w/script.err | tr '\n' ' ')"
		return
	fi
	# Samples whose frames, leaf first, start with hot b a main.
	local n total
	read -r n total < <(awk '
		/^[^ \t]/ { if (k) t++; if (s == "hot b a main") n++; s = ""; k = 1; next }
		/kernel\.kallsyms/ { next }
		NF >= 2 && split(s, x, " ") < 4 { s = (s == "" ? "" : s " ") $2 }
		END { if (k) t++; if (s == "hot b a main") n++; print n + 0, t + 0 }' $w/perf.txt)
	if [ "$n" -gt 0 ] && [ "$n" -ge $((total * 9 / 10)) ]; then
		echo "PASS: arm64 guest: perf --call-graph dwarf: $n of $total samples show hot <- b <- a <- main (pac-ret build)"
	else
		echo "FAIL: arm64 guest: perf --call-graph dwarf: $n of $total samples show hot <- b <- a <- main"
		grep -v kallsyms $w/perf.txt | grep -B1 -A6 -m2 ' hot ' | sed 's/^/    /'
	fi
}

if [ "${1:-}" = --guest ]; then
	guest
	exit 0
fi
if ! ARM64_FIXTURES=chain "$ROOT/scripts/build-arm64-fixtures.sh" "$FIX" v1-pac; then
	echo "FAIL: arm64 selftest: scripts/build-arm64-fixtures.sh failed"
	exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$ROOT/scripts/arm64-vm.sh" run "$ROOT" env SFBPF_BUILD="${FIX%/fixtures}" bash tests/arm64/vm_selftest.sh --guest |
	tee "$out"
rc=${PIPESTATUS[0]}
if [ "$rc" = 77 ]; then
	echo "SKIP: arm64 selftest: $(tail -1 "$out")"
	exit 77
fi
[ "$rc" = 0 ] || echo "FAIL: arm64 selftest: the guest command exited $rc"
[ "$rc" = 0 ] && ! grep -q '^FAIL' "$out"
