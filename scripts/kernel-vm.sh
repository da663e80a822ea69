#!/usr/bin/env bash
# Debian's own x86-64 kernels under qemu-system-x86_64 (TCG: no KVM here):
# bullseye's 5.10, bookworm's 6.1, trixie's 6.12 and sid's newest, each with
# its BTF, for checking sfbpf's BPF programs against older kernels' verifiers
# (issue #24), with perf in the guest as the reference unwinder.
#
# The guest is x86-64 like the host, so it needs no root of its own: its root
# is the host's, shared read-only over 9p, under an overlay whose upper layer
# is a tmpfs (writes stay in the guest and vanish with it); /tmp, /var/tmp and
# /run are fresh tmpfs, /proc, /sys, /dev, bpffs, debugfs, tracefs and cgroup2
# fresh mounts. Nothing is debootstrapped and the guest runs the host's own
# perf, bpftool, python3 and libraries.
#
#   scripts/kernel-vm.sh setup [SUITE...]
#       SUITE: bullseye bookworm trixie sid (default: all four). Idempotent.
#       Fetches SUITE's linux-image-amd64 (the newest of SUITE and
#       SUITE-security) with an apt of its own (nothing is installed on the
#       host) and keeps, under $SFBPF_KERNELS_CACHE/SUITE
#       (/var/cache/sfbpf/kernels/SUITE):
#         vmlinuz, kernel-version
#         config        the kernel's, the guest's /boot/config-KVER
#         modules/      the virtio, 9p and overlay modules, decompressed
#         initrd.img    the host's busybox-static, those modules, and
#                       scripts/kernel-vm-init.sh as /init
#       The cache is used only when complete (.sfbpf-complete, written last,
#       holds the recipe); a new /init rebuilds only the initramfs. One
#       builder per suite at a time (flock on SUITE.lock). To take a newer
#       kernel from the archive: rm -rf the suite's directory.
#       The guest has no /lib/modules/KVER, on purpose: perf walks that whole
#       tree at every start (perf record /bin/true: about a minute over 9p
#       under TCG); the modules it would find are not needed.
#       A kernel that cannot be fetched: one line saying why, the other
#       suites are still set up, and the exit status is 77.
#   scripts/kernel-vm.sh run SUITE HOSTDIR CMD...
#       Boots SUITE's kernel with HOSTDIR shared read-write over 9p at the same
#       path, runs CMD as root there with bash (cwd HOSTDIR, env -i with PATH,
#       HOME=/root, TERM=dumb, LANG=C.UTF-8), streams its output (stdout and
#       stderr, through a virtio console: the kernel's messages go to a log),
#       powers the guest off and exits with CMD's status. 124: the run took
#       longer than $SFBPF_KERNELS_TIMEOUT seconds (1200); 125: the guest died
#       before CMD finished; 77: the guest cannot boot (not set up, no qemu,
#       the kernel never reached /init, or /init could not mount the root),
#       with one line on stdout saying why. A kernel that panics on a stale
#       int3 or has not reached /init in $SFBPF_KERNELS_BOOT_TIMEOUT seconds
#       (120) is booted once more.
#       The guest's logs (console.log: the kernel's console; dmesg.txt: its
#       whole dmesg after CMD; qemu.err) go to $SFBPF_KERNELS_LOGDIR when set,
#       kept; otherwise to a temporary directory, removed after a run that
#       exits 0 with a quiet dmesg, and kept, its path on stderr, after any
#       other (a kernel warning, BUG or oops in dmesg is named on stderr).
#   scripts/kernel-vm.sh versions
#       "SUITE KVER" for every suite set up.
#
# Knobs: SFBPF_KERNELS_CACHE, SFBPF_KERNELS_SMP (2), SFBPF_KERNELS_MEM (MiB,
# 2048), SFBPF_KERNELS_TIMEOUT (seconds, 1200), SFBPF_KERNELS_BOOT_TIMEOUT
# (seconds to /init, 120), SFBPF_KERNELS_LOGDIR,
# SFBPF_KERNELS_MIRROR (Debian mirror URL; default: the host's),
# SFBPF_KERNELS_SECURITY_MIRROR (default: debian-security beside the mirror).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
CACHE=${SFBPF_KERNELS_CACHE:-/var/cache/sfbpf/kernels}
SMP=${SFBPF_KERNELS_SMP:-2}
MEM=${SFBPF_KERNELS_MEM:-2048}
TIMEOUT=${SFBPF_KERNELS_TIMEOUT:-1200}
BOOT_TIMEOUT=${SFBPF_KERNELS_BOOT_TIMEOUT:-120}
SUITES=(bullseye bookworm trixie sid)
INIT=$ROOT/scripts/kernel-vm-init.sh
TPHOLD=$ROOT/tests/kernels/tphold.c
# The modules /init loads, in this order, with what they depend on (resolved
# per kernel at setup: 5.10 needs fscache for 9p, 6.1 and later netfs; up to
# 6.1 virtio_pci and virtio_console are modules, from 6.12 on built in).
MODULES="virtio_pci virtio_console virtio-rng 9pnet_virtio 9p overlay"
HOST_PACKAGES=(qemu-system-x86 busybox-static cpio kmod xz-utils zstd)
SUITE=

log() { echo "kernel-vm: ${SUITE:+$SUITE: }$*" >&2; }
die() {
	log "$*"
	exit 1
}
usage() {
	echo "usage: $0 setup [SUITE...] | run SUITE HOSTDIR CMD... | versions (SUITE: ${SUITES[*]})" >&2
	exit 2
}
known_suite() {
	local s
	for s in "${SUITES[@]}"; do
		[ "$s" = "$1" ] && return 0
	done
	return 1
}

# recipe SUITE: what .sfbpf-complete holds when the suite's cache is current.
recipe() {
	echo "kernel=$(cat "$CACHE/$1/kernel-version" 2>/dev/null) modules=$MODULES init=$(cat "$INIT" "$TPHOLD" | sha256sum | cut -d' ' -f1)"
}

complete() {
	local d=$CACHE/$1
	[ -f "$d/.sfbpf-complete" ] && [ "$(cat "$d/.sfbpf-complete")" = "$(recipe "$1")" ] &&
		[ -f "$d/vmlinuz" ] && [ -f "$d/initrd.img" ]
}

# fetch W: $SUITE's kernel into W (debian_kernel: KVER, KMODBASE, KVMLINUZ).
# The security archive carries the stable suites' current kernels; if it is
# unusable here, the suite's own (older) kernel still serves.
fetch() {
	local w=$1
	if [ "$SUITE" != sid ] && [ -n "$SECURITY" ]; then
		debian_kernel "$w" amd64 "$MIRROR $SUITE" "$SECURITY $SUITE-security" 2>/dev/null && return 0
		log "no kernel through $SECURITY $SUITE-security (log: $w/kernel.log): trying $SUITE alone"
	fi
	debian_kernel "$w" amd64 "$MIRROR $SUITE"
}

# build_initrd D W: D/initrd.img from the host's busybox, D/modules, the
# current scripts/kernel-vm-init.sh and tests/kernels/tphold.c (static),
# built in W.
build_initrd() {
	local d=$1 ird=$2/initrd bb
	rm -rf "$ird"
	mkdir -p "$ird"/{bin,dev,proc,sys,ctl,lower,rw,newroot}
	# busybox-static: /bin/busybox up to bookworm, /usr/bin/busybox from trixie.
	bb=$(dpkg -L busybox-static | grep -m1 -E '^(/usr)?/bin/busybox$') || die "busybox-static has no busybox"
	cp "$bb" "$ird/bin/busybox"
	cp -r "$d/modules" "$ird/mod"
	cp "$INIT" "$ird/init"
	gcc -static -O2 -Wall -Wextra -Werror -o "$ird/bin/tphold" "$TPHOLD" ||
		die "cannot build $TPHOLD (gcc, static)"
	chmod 755 "$ird/init" "$ird/bin/busybox"
	(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$d/initrd.img.tmp"
	mv "$d/initrd.img.tmp" "$d/initrd.img"
}

# setup_suite: $SUITE's cache (in a subshell of its own: exits 0, 1 or 77).
setup_suite() {
	local d=$CACHE/$SUITE w=$CACHE/$SUITE.work kver
	if complete "$SUITE"; then
		log "ready: $(cat "$d/kernel-version")"
		return 0
	fi
	[ -w "$CACHE" ] || die "$CACHE is not writable (setup needs root)"
	exec 9>"$CACHE/$SUITE.lock"
	flock 9
	# Another setup may have built it while this one waited.
	if complete "$SUITE"; then
		log "ready: $(cat "$d/kernel-version")"
		return 0
	fi
	rm -f "$d/.sfbpf-complete"
	rm -rf "$w"
	mkdir -p "$w"
	kver=$(cat "$d/kernel-version" 2>/dev/null || true)
	# The kernel and its modules are fetched again only when missing or when
	# the module list changed; a new /init needs neither.
	if [ -z "$kver" ] || [ ! -f "$d/vmlinuz" ] || [ ! -f "$d/config" ] ||
		[ "$(cat "$d/modules/wanted" 2>/dev/null)" != "$MODULES" ]; then
		fetch "$w" || exit 77
		kver=$KVER
		rm -rf "$d"
		mkdir -p "$d"
		cp "$KVMLINUZ" "$d/vmlinuz"
		cp "$w/kernel/boot/config-$kver" "$d/config" 2>/dev/null ||
			cp "$KMODBASE/lib/modules/$kver/config" "$d/config"
		# shellcheck disable=SC2086 # MODULES is a list
		initrd_modules "$KMODBASE" "$kver" "$d/modules" $MODULES || exit 1
		echo "$MODULES" >"$d/modules/wanted"
		echo "$kver" >"$d/kernel-version"
		log "kernel: $KIMAGE (initramfs modules: $(paste -sd' ' "$d/modules/order"))"
	fi
	grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$d/config" || die "$kver has no BTF (CONFIG_DEBUG_INFO_BTF)"
	build_initrd "$d" "$w"
	rm -rf "$w"
	recipe "$SUITE" >"$d/.sfbpf-complete"
	log "ready: $kver"
}

setup() {
	local s rc worst=0
	[ $# -gt 0 ] || set -- "${SUITES[@]}"
	for s in "$@"; do
		known_suite "$s" || usage
	done
	mkdir -p "$CACHE" || die "cannot create $CACHE"
	install_packages "$CACHE/apt.log" "${HOST_PACKAGES[@]}" || exit 1
	MIRROR=$(debian_mirror "${SFBPF_KERNELS_MIRROR:-}")
	SECURITY=${SFBPF_KERNELS_SECURITY_MIRROR:-}
	# debian-security sits beside debian on the archive's hosts.
	[ -n "$SECURITY" ] || [ "${MIRROR%/debian}" = "$MIRROR" ] || SECURITY=${MIRROR%/debian}/debian-security
	for s in "$@"; do
		rc=0
		(
			SUITE=$s
			setup_suite
		) || rc=$?
		if [ "$rc" = 77 ]; then
			[ "$worst" != 0 ] || worst=77
		elif [ "$rc" != 0 ]; then
			worst=1
		fi
	done
	return "$worst"
}

versions() {
	local s
	for s in "${SUITES[@]}"; do
		complete "$s" && echo "$s $(cat "$CACHE/$s/kernel-version")"
	done
	return 0
}

# qemu_boot D CTL HOSTDIR: runs the guest to its end. The kernel's console
# (ttyS0) goes to CTL/console.log, the command's output (hvc0, a virtio
# console) to stdout. Returns qemu's status (124 or 137 on timeout).
# loglevel=5: warnings reach console.log too, for a guest that dies before
# its dmesg can be saved. panic=-1 with -no-reboot: a panic ends qemu.
qemu_boot() {
	local d=$1 ctl=$2 hostdir=$3
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 -machine q35,accel=tcg -cpu max \
		-smp "$SMP" -m "$MEM" -nodefaults -no-reboot -display none -monitor none -nic none \
		-serial "file:$ctl/console.log" \
		-chardev stdio,id=out,signal=off -device virtio-serial-pci -device virtconsole,chardev=out \
		-kernel "$d/vmlinuz" -initrd "$d/initrd.img" \
		-append "console=ttyS0 loglevel=5 panic=-1 rdinit=/init" \
		-device virtio-rng-pci \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap,id=hostroot \
		-virtfs "local,path=$ctl,mount_tag=ctl,security_model=passthrough,id=ctl" \
		-virtfs "local,path=$hostdir,mount_tag=host,security_model=passthrough,multidevs=remap,id=host" \
		</dev/null
}

# boot: qemu_boot for run(), stopped if /init has not run in $BOOT_TIMEOUT s
# (200).
boot() {
	boot_watched "$BOOT_TIMEOUT" "$ctl/booted" qemu_boot "$d" "$ctl" "$hostdir" 2>"$ctl/qemu.err"
}

run() {
	[ $# -ge 3 ] || usage
	local hostdir ctl d q rc=0 status splat keep=0 f again why
	SUITE=$1
	known_suite "$SUITE" || usage
	hostdir=$(cd "$2" && pwd) || die "no directory $2"
	# Mounted over the guest's root, it would hide /proc, /sys and /dev.
	[ "$hostdir" != / ] || die "HOSTDIR cannot be /"
	shift 2
	d=$CACHE/$SUITE
	if ! command -v qemu-system-x86_64 >/dev/null; then
		echo "kernel-vm: cannot boot $SUITE: qemu-system-x86_64 not installed (scripts/kernel-vm.sh setup)"
		exit 77
	fi
	if ! complete "$SUITE"; then
		echo "kernel-vm: cannot boot $SUITE: not set up in $d (scripts/kernel-vm.sh setup $SUITE)"
		exit 77
	fi
	if [ -n "${SFBPF_KERNELS_LOGDIR:-}" ]; then
		ctl=$SFBPF_KERNELS_LOGDIR
		keep=1
		mkdir -p "$ctl"
		for f in booted started rc init.err console.log console-boot1.log tphold.log dmesg.txt qemu.err cmd.sh hostdir config suite; do
			rm -f "$ctl/$f"
		done
	else
		ctl=$(mktemp -d "${TMPDIR:-/tmp}/sfbpf-kernel-$SUITE.XXXXXX")
	fi
	echo "$SUITE" >"$ctl/suite"
	echo "$hostdir" >"$ctl/hostdir"
	echo "$d/config" >"$ctl/config"
	q=$(printf ' %q' "$@")
	printf 'cd %q || exit 1\n%s\n' "$hostdir" "${q# }" >"$ctl/cmd.sh"
	boot || rc=$?
	# Before /init, nothing of sfbpf has run: a kernel that panics at its own
	# boot on "Oops: int3" (its text patching, alternatives and static keys,
	# raced another vCPU under TCG, which may run a stale int3: see
	# DESIGN-unwinder.md) or that hangs there (boot_watched) is booted once
	# more, and that is said.
	again=
	if [ ! -f "$ctl/booted" ]; then
		if grep -q 'Oops: int3' "$ctl/console.log" 2>/dev/null; then
			again="the kernel panicked at boot on a stale int3 (TCG), before /init"
		elif [ "$rc" = 200 ]; then
			again="the kernel did not reach /init in $BOOT_TIMEOUT s"
		fi
	fi
	if [ -n "$again" ]; then
		log "$again: booting again (the first boot's console: $ctl/console-boot1.log)"
		mv "$ctl/console.log" "$ctl/console-boot1.log"
		rc=0
		boot || rc=$?
	fi
	if [ ! -f "$ctl/booted" ]; then
		if [ "$rc" = 200 ]; then
			why="the kernel did not reach /init in $BOOT_TIMEOUT s${again:+ (twice)}"
		else
			why="qemu-system-x86_64 exited $rc before the guest's /init ran"
		fi
		echo "kernel-vm: cannot boot $SUITE: $why: $(tail -qn 2 "$ctl/qemu.err" "$ctl/console.log" 2>/dev/null | grep -v '^$' | tail -n 2 | tr '\n' ' ')"
		log "guest logs: $ctl"
		exit 77
	fi
	if [ -f "$ctl/init.err" ] && [ ! -f "$ctl/rc" ]; then
		echo "kernel-vm: cannot boot $SUITE: $(head -1 "$ctl/init.err")"
		log "guest logs: $ctl"
		exit 77
	fi
	if [ -f "$ctl/rc" ]; then
		status=$(cat "$ctl/rc")
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		log "timed out after $TIMEOUT s"
		status=124
	else
		log "the guest died before the command finished (qemu $rc): $(grep -m1 'Kernel panic' "$ctl/console.log" ||
			tail -3 "$ctl/console.log" | tr '\n' ' ')"
		status=125
	fi
	# Kernel warnings, BUGs and oopses the command may have caused (the
	# verifier and BPF helpers WARN rather than fail).
	splat=$(grep -m1 -E 'WARNING: CPU|BUG:|Oops|general protection fault|Kernel panic|UBSAN:|INFO: rcu|INFO: task .* blocked' \
		"$ctl/dmesg.txt" "$ctl/console.log" 2>/dev/null | head -1 || true)
	[ -z "$splat" ] || [ "$status" = 125 ] || log "the guest kernel logged: ${splat#*:}"
	if [ "$keep" = 1 ] || [ "$status" != 0 ] || [ -n "$splat" ]; then
		log "guest logs: $ctl (console.log, dmesg.txt)"
	else
		rm -rf "$ctl"
	fi
	exit "$status"
}

case ${1:-} in
setup)
	shift
	setup "$@"
	;;
run)
	shift
	run "$@"
	;;
versions) versions ;;
*) usage ;;
esac
