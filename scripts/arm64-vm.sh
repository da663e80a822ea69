#!/usr/bin/env bash
# An arm64 Debian guest under qemu-system-aarch64 (TCG: no KVM here), for
# proving the unwinder on a real arm64 kernel (make check-arm64, docs/ARM64.md).
# One root (Debian trixie arm64), booted by one of Debian's arm64 kernels:
# $SFBPF_ARM64_KERNEL, trixie's 6.12 (the default) or bookworm's 6.1.
#
#   scripts/arm64-vm.sh setup [KERNEL...]
#       KERNEL: trixie or bookworm (default: $SFBPF_ARM64_KERNEL, else
#       trixie). Idempotent. Installs the host packages it needs (apt-get),
#       then builds, once, under $SFBPF_ARM64_CACHE (/var/cache/sfbpf/arm64):
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
#       Every other KERNEL (bookworm: the newest linux-image-arm64 of bookworm
#       and bookworm-security, 6.1) boots that same root and gets, under
#       $SFBPF_ARM64_CACHE/kernels/KERNEL, its own vmlinuz, kernel-version,
#       config, modules/ (its virtio/ext4/9p modules, decompressed) and
#       initrd.img (trixie's busybox, those modules, the same /init); its
#       .sfbpf-complete holds its recipe, and a new /init rebuilds only its
#       initramfs. The root has no /usr/lib/modules for it: nothing in the
#       guest loads a module after /init (and perf does not walk the tree).
#       To take a newer kernel from the archive: rm -rf its directory.
#   scripts/arm64-vm.sh run HOSTDIR CMD...
#       Boots the guest (root.img as a throw-away snapshot) with
#       $SFBPF_ARM64_KERNEL's kernel and HOSTDIR shared over 9p at the same
#       path, runs CMD as root there (cwd HOSTDIR, bash), streams its output
#       (stdout and stderr, through a virtio console), powers the guest off
#       and exits with CMD's status. 124: the run took longer than
#       $SFBPF_ARM64_TIMEOUT seconds (1800); 125: the guest died before CMD
#       finished; 77: the guest cannot boot here (not set up, no qemu, or the
#       kernel never reached /init), with one line saying why. With
#       $SFBPF_ARM64_LOGDIR, the guest's logs stay there: console.log (the
#       kernel's console), dmesg.txt (its whole dmesg after CMD), qemu.err.
#   scripts/arm64-vm.sh selftest
#       Boots the guest ($SFBPF_ARM64_KERNEL's kernel) and checks what the
#       unwinding tests rely on: BPF (a perf_event program, bpf_loop), perf
#       --call-graph dwarf with symbolized stacks, pointer authentication.
#       PASS/FAIL/SKIP lines.
#   scripts/arm64-vm.sh versions
#       "KERNEL KVER" for every kernel set up.
#
# Knobs: SFBPF_ARM64_KERNEL (trixie), SFBPF_ARM64_CACHE, SFBPF_ARM64_SMP (2),
# SFBPF_ARM64_MEM (MiB, 2048), SFBPF_ARM64_TIMEOUT (seconds, 1800),
# SFBPF_ARM64_LOGDIR, SFBPF_ARM64_MIRROR (Debian mirror URL),
# SFBPF_ARM64_SECURITY_MIRROR (default: debian-security beside the mirror),
# SFBPF_ARM64_ROOT_SUITE (trixie).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
CACHE=${SFBPF_ARM64_CACHE:-/var/cache/sfbpf/arm64}
SMP=${SFBPF_ARM64_SMP:-2}
MEM=${SFBPF_ARM64_MEM:-2048}
TIMEOUT=${SFBPF_ARM64_TIMEOUT:-1800}
KSUITE=trixie # the root's own kernel (its stage2 boots it): 6.12, BTF
# The kernels that boot the root: KSUITE's, at the cache's top, and the
# others, each under $CACHE/kernels/SUITE.
KERNELS=(trixie bookworm)
KERNEL=${SFBPF_ARM64_KERNEL:-$KSUITE}
# The root's suite: trixie, for its perf. perf unwinds user stacks with
# libunwind, and only libunwind >= 1.7 (trixie: 1.8) can strip the signature
# from a return address signed by pac-ret (given the mask, which
# tests/arm64/perf_pacmask.c supplies); bookworm's 1.6 stops there. Binaries
# built against bookworm's arm64 libraries run on trixie (same sonames, newer
# glibc).
RSUITE=${SFBPF_ARM64_ROOT_SUITE:-trixie}
# The reference tools and busybox-static for the initramfs. Not sfbpf's
# libraries: the cross-built programs carry theirs (build-arm64/lib,
# scripts/bundle-libs.sh) and need only the root's C library, whatever its
# suite (trixie has no libcapstone.so.4). libdebuginfod and libcurl, which
# sfbpf-top opens only if present, are left out too. nodejs: the node that
# tests/arm64/node.test profiles (JavaScript frames, issue #45).
PACKAGES=linux-perf,bpftool,python3,libunwind8,procps,kmod,busybox-static,nodejs
# The modules the initramfs loads, in this order (dependencies resolved by
# modprobe --show-depends at setup).
MODULES="virtio_blk virtio-rng crc32c_generic ext4 9pnet_virtio 9p"
# The other kernels': the same, after the virtio PCI transport and the virtio
# console (hvc0), which 6.12 builds in and older kernels may not (a built-in
# one is skipped).
XMODULES="virtio_pci virtio_console $MODULES"
INIT=$ROOT/scripts/arm64-vm-init.sh
STAMP="kernel=$KSUITE root=$RSUITE packages=$PACKAGES modules=$MODULES"
HOST_PACKAGES=(qemu-system-arm debootstrap gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu
	kmod e2fsprogs cpio xz-utils)

log() { echo "arm64-vm: $*" >&2; }
die() {
	log "$*"
	exit 1
}
usage() {
	echo "usage: $0 setup [KERNEL...] | run HOSTDIR CMD... | selftest | versions (KERNEL: ${KERNELS[*]}; SFBPF_ARM64_KERNEL picks run's)" >&2
	exit 2
}
known_kernel() {
	local k
	for k in "${KERNELS[@]}"; do
		[ "$k" = "$1" ] && return 0
	done
	return 1
}
# kdir KERNEL: where KERNEL's vmlinuz, initrd.img and kernel-version are.
kdir() {
	if [ "$1" = "$KSUITE" ]; then
		echo "$CACHE"
	else
		echo "$CACHE/kernels/$1"
	fi
}

complete() {
	[ -f "$CACHE/.sfbpf-complete" ] && [ "$(cat "$CACHE/.sfbpf-complete")" = "$STAMP" ] &&
		[ -f "$CACHE/root.img" ] && [ -f "$CACHE/vmlinuz" ] && [ -f "$CACHE/vmlinux.btf" ]
}

# recipe KERNEL: what an other kernel's .sfbpf-complete holds when current.
recipe() {
	echo "kernel=$(cat "$(kdir "$1")/kernel-version" 2>/dev/null) modules=$XMODULES init=$(sha256sum <"$INIT" | cut -d' ' -f1)"
}

# kernel_complete KERNEL: KERNEL can boot the root.
kernel_complete() {
	local d
	d=$(kdir "$1")
	complete || return 1
	if [ "$1" = "$KSUITE" ]; then
		[ -f "$d/initrd.img" ]
	else
		[ -f "$d/.sfbpf-complete" ] && [ "$(cat "$d/.sfbpf-complete")" = "$(recipe "$1")" ] &&
			[ -f "$d/vmlinuz" ] && [ -f "$d/initrd.img" ]
	fi
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
		log "qemu could not boot the guest ($rc): $(tail -qn 3 "$W/stage2.console" "$ctl/console.log" | tr '\n' ' ')"
		exit 77
	fi
	[ "$(cat "$ctl/rc" 2>/dev/null)" = 0 ] ||
		die "second stage failed (rc $(cat "$ctl/rc" 2>/dev/null || echo none)): $(tail -5 "$ctl/stage2.log" | tr '\n' ' ')"
	[ -s "$ctl/vmlinux.btf" ] || die "the guest kernel has no /sys/kernel/btf/vmlinux"
	cp "$ctl/vmlinux.btf" "$W/vmlinux.btf"
}

# setup_root: the root and its own kernel ($KSUITE's), at the cache's top.
setup_root() {
	if complete && [ "$(cat "$CACHE/.sfbpf-init" 2>/dev/null)" = "$(sha256sum <"$INIT")" ]; then
		host_packages
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || die "setup needs root"
	mkdir -p "$(dirname "$CACHE")"
	exec 9>"$CACHE.lock"
	flock 9
	host_packages
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

# fetch_other KERNEL W: KERNEL's linux-image-arm64 into W (debian_kernel: KVER,
# KMODBASE, KVMLINUZ, KIMAGE), the newest of the suite and its -security (which
# carries the stable suites' current kernels); if that is unusable here, the
# suite's own (older) kernel still serves.
fetch_other() {
	local k=$1 w=$2 security=${SFBPF_ARM64_SECURITY_MIRROR:-}
	# debian-security sits beside debian on the archive's hosts.
	[ -n "$security" ] || [ "${MIRROR%/debian}" = "$MIRROR" ] || security=${MIRROR%/debian}/debian-security
	if [ -n "$security" ]; then
		debian_kernel "$w" arm64 "$MIRROR $k" "$security $k-security" 2>/dev/null && return 0
		log "$k: no kernel through $security $k-security (log: $w/kernel.log): trying $k alone"
	fi
	debian_kernel "$w" arm64 "$MIRROR $k"
}

# setup_kernel KERNEL: a kernel other than the root's own, under
# $CACHE/kernels/KERNEL (in a subshell of its own: exits 0 or 1). Its initramfs
# is the root's (busybox from $CACHE/initrd.img) with its own modules.
setup_kernel() {
	local k=$1 d w kver ird
	d=$(kdir "$k")
	w=$d.work
	if kernel_complete "$k"; then
		log "ready: $k: $(cat "$d/kernel-version")"
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || die "setup needs root"
	mkdir -p "$CACHE/kernels"
	exec 8>"$CACHE/kernels/$k.lock"
	flock 8
	# Another setup may have built it while this one waited.
	if kernel_complete "$k"; then
		log "ready: $k: $(cat "$d/kernel-version")"
		return 0
	fi
	rm -f "$d/.sfbpf-complete"
	rm -rf "$w"
	mkdir -p "$w"
	kver=$(cat "$d/kernel-version" 2>/dev/null || true)
	# The kernel and its modules are fetched again only when missing or when
	# the module list changed; a new /init needs neither.
	if [ -z "$kver" ] || [ ! -f "$d/vmlinuz" ] || [ ! -f "$d/config" ] ||
		[ "$(cat "$d/modules/wanted" 2>/dev/null)" != "$XMODULES" ]; then
		fetch_other "$k" "$w" || exit 1
		kver=$KVER
		rm -rf "$d"
		mkdir -p "$d"
		cp "$KVMLINUZ" "$d/vmlinuz"
		cp "$w/kernel/boot/config-$kver" "$d/config" 2>/dev/null ||
			cp "$KMODBASE/lib/modules/$kver/config" "$d/config"
		# shellcheck disable=SC2086 # XMODULES is a list
		initrd_modules "$KMODBASE" "$kver" "$d/modules" $XMODULES || exit 1
		echo "$XMODULES" >"$d/modules/wanted"
		echo "$kver" >"$d/kernel-version"
		log "$k: kernel: $KIMAGE (initramfs modules: $(paste -sd' ' "$d/modules/order"))"
	fi
	grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$d/config" || die "$k: $kver has no BTF (CONFIG_DEBUG_INFO_BTF)"
	ird=$w/initrd
	mkdir -p "$ird"/{bin,dev,proc,sys,ctl,newroot}
	gzip -dc "$CACHE/initrd.img" | (cd "$ird" && cpio -id --quiet '*bin/busybox') ||
		die "no busybox in $CACHE/initrd.img"
	[ -x "$ird/bin/busybox" ] || die "no bin/busybox in $CACHE/initrd.img"
	cp -r "$d/modules" "$ird/mod"
	W=$w pack_initrd "$d/initrd.img"
	rm -rf "$w"
	recipe "$k" >"$d/.sfbpf-complete"
	log "ready: $k: $kver"
}

# setup [KERNEL...]: the root (with its own kernel), then the other KERNELs.
setup() {
	local k rc worst=0
	[ $# -gt 0 ] || set -- "$KERNEL"
	for k in "$@"; do
		known_kernel "$k" || usage
	done
	MIRROR=$(debian_mirror "${SFBPF_ARM64_MIRROR:-}")
	setup_root
	for k in "$@"; do
		[ "$k" != "$KSUITE" ] || continue
		# Not "|| rc=$?", which would turn set -e off in there.
		set +e
		(
			set -e
			setup_kernel "$k"
		)
		rc=$?
		set -e
		[ "$rc" = 0 ] || worst=1
	done
	return "$worst"
}

versions() {
	local k
	for k in "${KERNELS[@]}"; do
		kernel_complete "$k" && echo "$k $(cat "$(kdir "$k")/kernel-version")"
	done
	return 0
}

# run_exit: run's end: the guest's logs to $SFBPF_ARM64_LOGDIR, if set.
RUN_CTL=
run_exit() {
	local f
	[ -n "$RUN_CTL" ] || return 0
	if [ -n "${SFBPF_ARM64_LOGDIR:-}" ] && mkdir -p "$SFBPF_ARM64_LOGDIR"; then
		for f in console.log dmesg.txt qemu.err; do
			rm -f "$SFBPF_ARM64_LOGDIR/$f"
			if [ -f "$RUN_CTL/$f" ]; then
				cp "$RUN_CTL/$f" "$SFBPF_ARM64_LOGDIR/" || true
			fi
		done
	fi
	rm -rf "$RUN_CTL"
}

run() {
	[ $# -ge 2 ] || die "usage: $0 run HOSTDIR CMD..."
	local hostdir ctl rc=0 q d splat
	hostdir=$(cd "$1" && pwd) || die "no directory $1"
	shift
	d=$(kdir "$KERNEL")
	if ! command -v qemu-system-aarch64 >/dev/null; then
		echo "arm64-vm: cannot boot: qemu-system-aarch64 not installed (scripts/arm64-vm.sh setup)"
		exit 77
	fi
	if ! complete || [ ! -f "$CACHE/initrd.img" ]; then
		echo "arm64-vm: cannot boot: no guest in $CACHE (scripts/arm64-vm.sh setup)"
		exit 77
	fi
	if ! kernel_complete "$KERNEL"; then
		echo "arm64-vm: cannot boot: kernel $KERNEL not set up in $d (scripts/arm64-vm.sh setup $KERNEL)"
		exit 77
	fi
	ctl=$(mktemp -d /tmp/sfbpf-arm64.XXXXXX)
	RUN_CTL=$ctl
	trap run_exit EXIT
	echo run >"$ctl/mode"
	echo "$hostdir" >"$ctl/hostdir"
	q=$(printf ' %q' "$@")
	printf 'cd %q || exit 1\n%s\n' "$hostdir" "${q# }" >"$ctl/cmd.sh"
	qemu_boot "$d/vmlinuz" "$d/initrd.img" "$CACHE/root.img" ",snapshot=on" "$ctl" "$hostdir" \
		2>"$ctl/qemu.err" || rc=$?
	if [ ! -f "$ctl/booted" ]; then
		echo "arm64-vm: cannot boot: qemu-system-aarch64 exited $rc before the guest's /init ran ($KERNEL's kernel): $(tail -qn 2 "$ctl/qemu.err" "$ctl/console.log" 2>/dev/null | grep -v '^$' | tail -n 2 | tr '\n' ' ')"
		exit 77
	fi
	# Kernel warnings, BUGs and oopses the command may have caused (the
	# verifier and BPF helpers WARN rather than fail).
	splat=$(grep -h -m1 -E 'WARNING: CPU|BUG:|Oops|Kernel panic|UBSAN:|INFO: rcu|INFO: task .* blocked' \
		"$ctl/dmesg.txt" "$ctl/console.log" 2>/dev/null | head -1 || true)
	[ -z "$splat" ] || log "the guest kernel logged: $splat"
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

known_kernel "$KERNEL" || {
	echo "arm64-vm: SFBPF_ARM64_KERNEL=$KERNEL: not one of ${KERNELS[*]}" >&2
	exit 2
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
selftest) exec bash "$ROOT/tests/arm64/vm_selftest.sh" ;;
versions) versions ;;
*) usage ;;
esac
