#!/bin/busybox sh
# shellcheck shell=dash
# /init of the x86-64 guests' initramfs (built by scripts/kernel-vm.sh setup):
# loads the virtio, 9p and overlay modules, mounts the host's control
# directory (9p tag "ctl"), then makes the root: the host's own root (9p tag
# "hostroot", read-only) under an overlay with a tmpfs upper layer, fresh
# /proc, /sys, /dev, /tmp, /var/tmp, /run, bpffs, debugfs, tracefs and
# cgroup2, the shared host directory (9p tag "host", read-write) at the path
# /ctl/hostdir names, and the kernel's config (/ctl/config, a path in the
# host's root) at /boot/config-KVER. Runs /ctl/cmd.sh there with bash,
# its output on hvc0 (the kernel's console is ttyS0, a log on the host).
# Writes /ctl/booted (the guest's uptime) once the control directory is
# mounted: the host's proof that the kernel booted; /ctl/init.err if the root
# cannot be made; /ctl/started (uptime) when the command starts; then
# /ctl/dmesg.txt and, last, /ctl/rc (the command's status). Powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys

off() {
	sync
	poweroff -f
}
# bad MESSAGE: the root cannot be made; the host reports MESSAGE (exit 77).
bad() {
	echo "init: $*" | tee -a /ctl/init.err
	dmesg >/ctl/dmesg.txt
	off
}

# shellcheck disable=SC2013 # module file names, no spaces
for m in $(cat /mod/order); do
	insmod "/mod/$m" || echo "init: insmod $m failed"
done
P9="trans=virtio,version=9p2000.L,msize=262144"
if ! mount -t 9p -o "$P9" ctl /ctl; then
	echo "init: cannot mount the control directory (9p tag ctl)"
	off
fi
cat /proc/uptime >/ctl/booted
hostname "sfbpf-$(cat /ctl/suite)"
kver=$(uname -r)

# The host's root: read-only and unchanging for the guest's purposes, so
# cache=loose (the page cache keeps what was read: perf, python and their
# libraries are read over 9p once per boot, not at every exec).
mount -t 9p -o "$P9,ro,cache=loose" hostroot /lower || bad "cannot mount the host's root (9p tag hostroot)"
mount -t tmpfs -o mode=755 rw /rw
mkdir -p /rw/upper /rw/work
R=/newroot
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work root $R ||
	bad "cannot mount an overlay on the host's root (9p): $(dmesg | grep -i overlay | tail -1)"
mount -t proc proc $R/proc
mount -t sysfs sys $R/sys
mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 shm $R/dev/shm
# Fresh, not the host's files seen through the overlay.
mount -t tmpfs -o mode=1777 tmp $R/tmp
mount -t tmpfs -o mode=1777 tmp $R/var/tmp
mount -t tmpfs -o mode=755 run $R/run
mkdir -m 1777 $R/run/lock
mount -t debugfs debugfs $R/sys/kernel/debug
mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null
mount -t bpf bpf $R/sys/fs/bpf
# The tracepoints sfbpf-top attaches to, each held with two probes for the
# guest's life: ftrace's (the event enabled, recording off) and perf's
# (tphold: counting events on every CPU). The first probe patches the
# tracepoint's static branch with int3, the second its static call, and
# under qemu's TCG another vCPU now and then still runs the int3 once it is
# gone ("Oops: int3" in the syscall exit path, a panic: seen on 6.12 and
# 7.2, the last with the branch held alone). With two held, sfbpf's attaches
# and detaches patch nothing (tests/kernels/tphold.c).
EVENTS="syscalls/sys_exit_mmap sched/sched_process_exec sched/sched_process_fork
	sched/sched_process_exit sched/sched_switch"
for t in $R/sys/kernel/tracing $R/sys/kernel/debug/tracing; do
	[ -e "$t/tracing_on" ] || continue
	echo 0 >"$t/tracing_on"
	held=
	for e in $EVENTS; do
		[ -e "$t/events/$e/enable" ] || continue
		echo 1 >"$t/events/$e/enable"
		held="$held $e"
	done
	# Not holding them risks a panic, not a wrong result: said, not fatal.
	# shellcheck disable=SC2086 # one word per event
	/bin/tphold "$t" $held >/ctl/tphold.log 2>&1 ||
		echo "init: tphold failed: $(cat /ctl/tphold.log)" >/dev/console
	break
done
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup
mkdir -p $R/run/sfbpf-ctl
mount -o bind /ctl $R/run/sfbpf-ctl
ip link set lo up

# The kernel's config, for libbpf's __kconfig externs and the tools that read
# /boot/config-KVER, from the cache in the host's root.
mkdir -p $R/boot
cp "$R$(cat /ctl/config)" "$R/boot/config-$kver" 2>/dev/null

hostdir=$(cat /ctl/hostdir)
mkdir -p "$R$hostdir"
mount -t 9p -o "$P9,cache=mmap" host "$R$hostdir" ||
	bad "cannot mount the host directory $hostdir (9p tag host)"

GUESTPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The command's output goes to the host through hvc0; lines end with \n, not
# \r\n. Up to 6.1 virtio_console is a module: its device may come a moment
# after insmod.
i=0
while [ ! -e /dev/hvc0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
exec 3<>/dev/hvc0
stty -onlcr <&3
cat /proc/uptime >/ctl/started
chroot $R /usr/bin/env -i PATH=$GUESTPATH HOME=/root TERM=dumb LANG=C.UTF-8 \
	/bin/bash /run/sfbpf-ctl/cmd.sh </dev/null >&3 2>&3
rc=$?
exec 3>&-
dmesg >/ctl/dmesg.txt
echo "$rc" >/ctl/rc
off
