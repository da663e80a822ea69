#!/bin/busybox sh
# /init of the arm64 guest's initramfs (built by scripts/arm64-vm.sh setup):
# loads the virtio, ext4 and 9p modules, mounts the root (/dev/vda) and the
# host's control directory (9p tag "ctl"), then, as /ctl/mode says:
#   stage2  finishes the root with debootstrap --second-stage (log:
#           /ctl/stage2.log) and copies the kernel's BTF to /ctl/vmlinux.btf;
#   run     mounts the shared host directory (9p tag "host") at the path named
#           by /ctl/hostdir and runs /ctl/cmd.sh with bash in the root, its
#           output on the console; then saves the kernel's whole log to
#           /ctl/dmesg.txt.
# The same /init serves every kernel that boots the root (scripts/arm64-vm.sh:
# trixie's 6.12, bookworm's 6.1), each initramfs with its own modules in /mod.
# Writes /ctl/booted once the control directory is mounted (the host's proof
# that the kernel booted) and /ctl/rc (the exit status) last, then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
hostname sfbpf-arm64

off() {
	sync
	poweroff -f
}

for m in $(cat /mod/order); do
	insmod "/mod/$m" || echo "init: insmod $m failed"
done
P9="trans=virtio,version=9p2000.L,msize=262144"
if ! mount -t 9p -o "$P9" ctl /ctl; then
	echo "init: cannot mount the control directory (9p tag ctl)"
	off
fi
: >/ctl/booted
mode=$(cat /ctl/mode)
R=/newroot
if ! mount -t ext4 /dev/vda $R; then
	echo "init: cannot mount the root /dev/vda" | tee /ctl/init.err
	off
fi
mount -t proc proc $R/proc
mount -t sysfs sys $R/sys
mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm
ln -s /proc/self/fd $R/dev/fd
ln -s /proc/self/fd/0 $R/dev/stdin
ln -s /proc/self/fd/1 $R/dev/stdout
ln -s /proc/self/fd/2 $R/dev/stderr
mount -t devpts devpts $R/dev/pts
mount -t tmpfs tmpfs $R/dev/shm
mount -t tmpfs tmpfs $R/tmp
mount -t tmpfs tmpfs $R/run
mkdir -p $R/run/sfbpf-ctl
mount -o bind /ctl $R/run/sfbpf-ctl
GUESTPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

case $mode in
stage2)
	(
		set -e
		chroot $R /usr/bin/env -i PATH=$GUESTPATH /debootstrap/debootstrap --second-stage
		chroot $R /usr/bin/env -i PATH=$GUESTPATH apt-get clean
		chroot $R /usr/bin/env -i PATH=$GUESTPATH sh -c \
			'python3 --version && perf --version && bpftool version && ldconfig'
		cp /sys/kernel/btf/vmlinux /ctl/vmlinux.btf
	) >/ctl/stage2.log 2>&1
	rc=$?
	;;
run)
	mount -t debugfs debugfs $R/sys/kernel/debug
	mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
	mount -t bpf bpf $R/sys/fs/bpf
	hostdir=$(cat /ctl/hostdir)
	mkdir -p "$R$hostdir"
	if ! mount -t 9p -o "$P9,cache=mmap" host "$R$hostdir"; then
		echo "init: cannot mount the host directory $hostdir (9p tag host)"
		echo 1 >/ctl/rc
		off
	fi
	# The command's output goes to the host through hvc0 (the kernel's own
	# messages to ttyAMA0, a log); lines end with \n, not \r\n.
	exec 3<>/dev/hvc0
	stty -onlcr <&3
	chroot $R /usr/bin/env -i PATH=$GUESTPATH HOME=/root TERM=dumb LANG=C.UTF-8 \
		/bin/bash /run/sfbpf-ctl/cmd.sh </dev/null >&3 2>&3
	rc=$?
	dmesg >/ctl/dmesg.txt 2>&1
	;;
*)
	echo "init: unknown mode '$mode'"
	rc=1
	;;
esac
echo "$rc" >/ctl/rc
off
