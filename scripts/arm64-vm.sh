#!/usr/bin/env bash
# An arm64 Debian guest under qemu-system-aarch64 (TCG: no KVM here), for
# proving the unwinder on a real arm64 kernel (make check-arm64, docs/ARM64.md).
#
#   scripts/arm64-vm.sh setup
#       Idempotent. Installs the host packages it needs (apt-get), then builds,
#       once, under $SFBPF_ARM64_CACHE (/var/cache/sfbpf/arm64):
#         vmlinuz      Debian trixie's linux-image-arm64 (6.12, BTF, PAC)
#         initrd.img   busybox-static (arm64) + the virtio/ext4/9p modules,
#                      with scripts/arm64-vm-init.sh as /init
#         root.img     ext4: Debian trixie arm64 (minbase) with linux-perf,
#                      bpftool, python3 and the libraries sfbpf-top links
#         vmlinux.btf  the guest kernel's /sys/kernel/btf/vmlinux
#       The root is made by debootstrap --foreign on the host and finished
#       (--second-stage) in the guest at its first boot, so the host needs no
#       binfmt_misc. The cache is reused only when complete (.sfbpf-complete,
#       written last, holds the recipe); one builder at a time (flock).
#   scripts/arm64-vm.sh run HOSTDIR CMD...
#       Boots the guest (root.img as a throw-away snapshot) with HOSTDIR shared
#       over 9p at the same path, runs CMD as root there (cwd HOSTDIR, bash),
#       streams its output (stdout and stderr, through the serial console),
#       powers the guest off and exits with CMD's status. 124: the run took
#       longer than $SFBPF_ARM64_TIMEOUT seconds (1800); 125: the guest died
#       before CMD finished; 77: the guest cannot boot here (no cache, no qemu,
#       or the kernel never reached /init), with one line saying why.
#   scripts/arm64-vm.sh selftest
#       Boots the guest and checks what the unwinding tests rely on: BPF
#       (a perf_event program, bpf_loop), perf --call-graph dwarf with
#       symbolized stacks, pointer authentication. PASS/FAIL/SKIP lines.
#
# Knobs: SFBPF_ARM64_CACHE, SFBPF_ARM64_SMP (2), SFBPF_ARM64_MEM (MiB, 2048),
# SFBPF_ARM64_TIMEOUT (seconds, 1800), SFBPF_ARM64_MIRROR (Debian mirror URL),
# SFBPF_ARM64_ROOT_SUITE (trixie).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
CACHE=${SFBPF_ARM64_CACHE:-/var/cache/sfbpf/arm64}
SMP=${SFBPF_ARM64_SMP:-2}
MEM=${SFBPF_ARM64_MEM:-2048}
TIMEOUT=${SFBPF_ARM64_TIMEOUT:-1800}
KSUITE=trixie # the kernel's suite: 6.12, BTF
# The root's suite: trixie, for its perf. perf unwinds user stacks with
# libunwind, and only libunwind >= 1.7 (trixie: 1.8) can strip the signature
# from a return address signed by pac-ret (given the mask, which
# tests/arm64/perf_pacmask.c supplies); bookworm's 1.6 stops there. Binaries
# built against bookworm's arm64 libraries run on trixie (same sonames, newer
# glibc).
RSUITE=${SFBPF_ARM64_ROOT_SUITE:-trixie}
# Everything sfbpf-top links (ldd build/sfbpf-top), the reference tools, and
# busybox-static for the initramfs. trixie renamed some libraries (t64).
case $RSUITE in
bookworm) PACKAGES=libelf1,libdw1,libdebuginfod1,libcurl4 ;;
*) PACKAGES=libelf1t64,libdw1t64,libdebuginfod1t64,libcurl4t64 ;;
esac
PACKAGES+=,linux-perf,bpftool,python3,libbpf1,libprotobuf-c1,libncursesw6,zlib1g,libzstd1
PACKAGES+=,libunwind8,procps,kmod,busybox-static
# The modules the initramfs loads, in this order (dependencies resolved by
# modprobe --show-depends at setup).
MODULES="virtio_blk virtio-rng crc32c_generic ext4 9pnet_virtio 9p"
INIT=$ROOT/scripts/arm64-vm-init.sh
STAMP="kernel=$KSUITE root=$RSUITE packages=$PACKAGES modules=$MODULES"
HOST_PACKAGES=(qemu-system-arm debootstrap gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
	kmod e2fsprogs cpio xz-utils)

log() { echo "arm64-vm: $*" >&2; }
die() {
	log "$*"
	exit 1
}


complete() {
	[ -f "$CACHE/.sfbpf-complete" ] && [ "$(cat "$CACHE/.sfbpf-complete")" = "$STAMP" ] &&
		[ -f "$CACHE/root.img" ] && [ -f "$CACHE/vmlinuz" ] && [ -f "$CACHE/vmlinux.btf" ]
}

host_packages() {
	install_packages "$CACHE.apt.log" "${HOST_PACKAGES[@]}" || exit 1
}

# fetch_kernel: $KSUITE's linux-image-arm64, through an apt of its own (the
# host's sources know neither arm64 nor trixie's binaries), into $W/kernel
# (lib.sh's debian_kernel: KVER, KMODBASE, KVMLINUZ).
fetch_kernel() {
	debian_kernel "$W" arm64 "$MIRROR $KSUITE" || exit 1
	cp "$KVMLINUZ" "$W/vmlinuz"
	log "kernel: $KIMAGE"
}

# build_root: debootstrap's first stage, the kernel's modules, and the image.
build_root() {
	rm -rf "$W/root"
	log "debootstrap --foreign --arch=arm64 $RSUITE (log: $W/debootstrap.log)"
	debootstrap --foreign --arch=arm64 --variant=minbase --include="$PACKAGES" \
		"$RSUITE" "$W/root" "$MIRROR" >"$W/debootstrap.log" 2>&1 ||
		die "debootstrap --foreign failed (log: $W/debootstrap.log)"
	mkdir -p "$W/root/usr/lib/modules"
	cp -a "$KMODBASE/lib/modules/$KVER" "$W/root/usr/lib/modules/"
	echo sfbpf-arm64 >"$W/root/etc/hostname"
	# Room for the second stage's unpacked packages (mke2fs -d sizes nothing).
	rm -f "$W/root.img"
	mke2fs -q -t ext4 -L sfbpf-root -d "$W/root" "$W/root.img" 4G ||
		die "mke2fs -d $W/root failed"
}

# build_initrd: busybox (arm64, static) and the modules, decompressed
# (lib.sh's initrd_modules).
build_initrd() {
	local ird=$W/initrd deb
	rm -rf "$ird"
	mkdir -p "$ird"/{bin,dev,proc,sys,ctl,newroot}
	deb=$(ls "$W"/root/var/cache/apt/archives/busybox-static_*_arm64.deb)
	# /bin/busybox up to bookworm, /usr/bin/busybox from trixie on.
	dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './bin/busybox' './usr/bin/busybox' \
		>"$ird/bin/busybox" 2>/dev/null || [ -s "$ird/bin/busybox" ] || die "no busybox in $deb"
	chmod 755 "$ird/bin/busybox"
	# shellcheck disable=SC2086 # MODULES is a list
	initrd_modules "$KMODBASE" "$KVER" "$ird/mod" $MODULES || exit 1
}

# pack_initrd OUT: $W/initrd with the current scripts/arm64-vm-init.sh as /init.
pack_initrd() {
	cp "$INIT" "$W/initrd/init"
	chmod 755 "$W/initrd/init"
	(cd "$W/initrd" && find . | cpio -o -H newc --quiet | gzip -1) >"$1.tmp"
	mv "$1.tmp" "$1"
}

# qemu_boot KERNEL INITRD IMG SNAPSHOT CTL [HOSTDIR]: runs the guest to its end.
# The kernel's console (ttyAMA0) goes to CTL/console.log; the command's output
# (hvc0, a virtio console) to stdout. Returns qemu's status (124 on timeout).
# -cpu max has pointer authentication; pauth-impdef makes it cheap under TCG.
# No SVE: with SVE, perf samples the VG register, an "extended" register that
# software events (cpu-clock, the only clock without a PMU) refuse, so perf
# record --call-graph dwarf -e cpu-clock fails with EOPNOTSUPP.
qemu_boot() {
	local kernel=$1 initrd=$2 img=$3 snap=$4 ctl=$5 hostdir=${6:-} args
	args=(-M virt -cpu max,pauth-impdef=on,sve=off,sme=off -smp "$SMP" -m "$MEM" -nodefaults -no-reboot
		-display none -monitor none -serial "file:$ctl/console.log" -nic none
		-chardev stdio,id=out,signal=off -device virtio-serial-pci -device virtconsole,chardev=out
		-kernel "$kernel" -initrd "$initrd"
		-append "console=ttyAMA0 quiet loglevel=1 panic=-1 rdinit=/init"
		-drive "file=$img,if=virtio,format=raw,cache=unsafe$snap"
		-device virtio-rng-pci
		-virtfs "local,path=$ctl,mount_tag=ctl,security_model=passthrough,id=ctl")
	[ -n "$hostdir" ] &&
		args+=(-virtfs "local,path=$hostdir,mount_tag=host,security_model=passthrough,id=host")
	timeout -k 10 "$TIMEOUT" qemu-system-aarch64 "${args[@]}" </dev/null
}

# stage2: the first boot finishes the root (debootstrap --second-stage) in
# the guest and copies out the kernel's BTF.
stage2() {
	local ctl=$W/ctl rc=0
	rm -rf "$ctl"
	mkdir -p "$ctl"
	echo stage2 >"$ctl/mode"
	log "first boot: debootstrap --second-stage in the guest (log: $ctl/stage2.log)"
	qemu_boot "$W/vmlinuz" "$W/initrd.img" "$W/root.img" "" "$ctl" >"$W/stage2.console" 2>&1 || rc=$?
	if [ ! -f "$ctl/booted" ]; then
		log "qemu could not boot the guest ($rc): $(tail -3 "$W/stage2.console" "$ctl/console.log" | tr '\n' ' ')"
		exit 77
	fi
	[ "$(cat "$ctl/rc" 2>/dev/null)" = 0 ] ||
		die "second stage failed (rc $(cat "$ctl/rc" 2>/dev/null || echo none)): $(tail -5 "$ctl/stage2.log" | tr '\n' ' ')"
	[ -s "$ctl/vmlinux.btf" ] || die "the guest kernel has no /sys/kernel/btf/vmlinux"
	cp "$ctl/vmlinux.btf" "$W/vmlinux.btf"
}

setup() {
	if complete && [ "$(cat "$CACHE/.sfbpf-init" 2>/dev/null)" = "$(sha256sum <"$INIT")" ]; then
		host_packages
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || die "setup needs root"
	mkdir -p "$(dirname "$CACHE")"
	exec 9>"$CACHE.lock"
	flock 9
	host_packages
	MIRROR=$(debian_mirror "${SFBPF_ARM64_MIRROR:-}")
	W=$CACHE/work
	mkdir -p "$CACHE" "$W"
	if ! complete; then
		rm -f "$CACHE/.sfbpf-complete"
		fetch_kernel
		build_root
		build_initrd
		pack_initrd "$W/initrd.img"
		stage2
		mv "$W/vmlinuz" "$CACHE/vmlinuz"
		mv "$W/root.img" "$CACHE/root.img"
		mv "$W/vmlinux.btf" "$CACHE/vmlinux.btf"
		mv "$W/initrd.img" "$CACHE/initrd.img"
		sha256sum <"$INIT" >"$CACHE/.sfbpf-init"
		echo "$KVER" >"$CACHE/kernel-version"
		echo "$STAMP" >"$CACHE/.sfbpf-complete"
		# Only the initramfs's tree stays (for a new /init).
		rm -rf "$W/root" "$W/kernel" "$W/apt" "$W"/*.deb
	fi
	# The initramfs follows scripts/arm64-vm-init.sh without a new root.
	if [ ! -f "$CACHE/initrd.img" ] || [ "$(cat "$CACHE/.sfbpf-init" 2>/dev/null)" != "$(sha256sum <"$INIT")" ]; then
		[ -x "$W/initrd/bin/busybox" ] || die "$W/initrd is gone: remove $CACHE and set up again"
		pack_initrd "$CACHE/initrd.img"
		sha256sum <"$INIT" >"$CACHE/.sfbpf-init"
	fi
	log "ready: $CACHE (kernel $(cat "$CACHE/kernel-version"), BTF $CACHE/vmlinux.btf)"
}

run() {
	[ $# -ge 2 ] || die "usage: $0 run HOSTDIR CMD..."
	local hostdir ctl rc=0 q
	hostdir=$(cd "$1" && pwd) || die "no directory $1"
	shift
	if ! command -v qemu-system-aarch64 >/dev/null; then
		echo "arm64-vm: cannot boot: qemu-system-aarch64 not installed (scripts/arm64-vm.sh setup)"
		exit 77
	fi
	if ! complete || [ ! -f "$CACHE/initrd.img" ]; then
		echo "arm64-vm: cannot boot: no guest in $CACHE (scripts/arm64-vm.sh setup)"
		exit 77
	fi
	ctl=$(mktemp -d /tmp/sfbpf-arm64.XXXXXX)
	# shellcheck disable=SC2064
	trap "rm -rf '$ctl'" EXIT
	echo run >"$ctl/mode"
	echo "$hostdir" >"$ctl/hostdir"
	q=$(printf ' %q' "$@")
	printf 'cd %q || exit 1\n%s\n' "$hostdir" "${q# }" >"$ctl/cmd.sh"
	qemu_boot "$CACHE/vmlinuz" "$CACHE/initrd.img" "$CACHE/root.img" ",snapshot=on" "$ctl" "$hostdir" \
		2>"$ctl/qemu.err" || rc=$?
	if [ ! -f "$ctl/booted" ]; then
		echo "arm64-vm: cannot boot: qemu-system-aarch64 exited $rc before the guest's /init ran: $(tail -2 "$ctl/qemu.err" "$ctl/console.log" 2>/dev/null | grep -v '^==>\|^$' | tail -2 | tr '\n' ' ')"
		exit 77
	fi
	if [ -f "$ctl/rc" ]; then
		exit "$(cat "$ctl/rc")"
	fi
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		log "timed out after $TIMEOUT s"
		exit 124
	fi
	log "the guest died before the command finished (qemu $rc): $(tail -3 "$ctl/console.log" | tr '\n' ' ')"
	exit 125
}

case ${1:-} in
setup) setup ;;
run)
	shift
	run "$@"
	;;
selftest) exec bash "$ROOT/tests/arm64/vm_selftest.sh" ;;
*)
	echo "usage: $0 setup | run HOSTDIR CMD... | selftest" >&2
	exit 2
	;;
esac
