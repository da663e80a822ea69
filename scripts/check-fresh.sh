#!/usr/bin/env bash
# make check-fresh: the README's `make check` in a new, minimal Debian 12 root
# on this kernel, as root, so that every package the suite needs must come
# from the Makefile's own install step (scripts/deps.sh), and nothing this
# machine has installed by hand, built or cached (/var/cache/sfbpf) helps.
#
#   1. A pristine root, built once: debootstrap --variant=minbase bookworm,
#      plus git and make (what it takes to clone and type the command), with
#      bookworm, -updates and -security in its apt sources as a new Debian 12
#      machine has them. Kept as a tarball in $DIR/pristine.tar.
#   2. Every run unpacks it anew into $DIR/run, mounts /proc, /sys, /dev,
#      bpffs, debugfs, tracefs and cgroup2 in it, clones this repository's
#      HEAD into /root/sfbpf and runs `make check` there (with LOAD passed on).
#   3. All of it in a mount namespace of its own, entered with pivot_root,
#      not chroot: a chroot shares the host's mount table, so /proc/PID/root,
#      /proc/self/mounts and the bpffs a test looks for named host paths
#      ($DIR/run/...) and the suite judged an artifact, not sfbpf. The
#      namespace's mounts go with it; the run's root stays until the next run
#      (its logs: the tests' /tmp/sfbpf-test.* inside it).
# Ends with make check's closing line and its time; exits with its status.
# Knobs: SFBPF_FRESH_DIR (/var/cache/sfbpf/fresh), SFBPF_FRESH_MIRROR.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib.sh
source "$ROOT/scripts/lib.sh"
DIR=${SFBPF_FRESH_DIR:-/var/cache/sfbpf/fresh}
PRISTINE=$DIR/pristine.tar
R=$DIR/run
STAMP="suite=bookworm variant=minbase include=git,make,ca-certificates"

log() { echo "check-fresh: $*" >&2; }
die() {
	log "$*"
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mounts, BPF)"
# Everything below in a private mount namespace: no mount made here leaks to
# the host, and none of the host's stays visible once the root is pivoted.
if [ -z "${SFBPF_FRESH_NS:-}" ]; then
	exec unshare -m --propagation private env SFBPF_FRESH_NS=1 "$0" "$@"
fi
mkdir -p "$DIR"
exec 9>"$DIR.lock"
flock -n 9 || die "another check-fresh is running ($DIR.lock)"

pristine() {
	local p=$DIR/pristine mirror
	if [ -f "$PRISTINE" ] && [ "$(cat "$DIR/pristine.stamp" 2>/dev/null)" = "$STAMP" ]; then
		return 0
	fi
	install_packages "$DIR/apt.log" debootstrap || exit 1
	mirror=$(debian_mirror "${SFBPF_FRESH_MIRROR:-}")
	rm -rf "$p" "$PRISTINE"
	log "debootstrap bookworm from $mirror (log: $DIR/debootstrap.log)"
	debootstrap --variant=minbase --include=git,make,ca-certificates bookworm "$p" "$mirror" \
		>"$DIR/debootstrap.log" 2>&1 || die "debootstrap failed (log: $DIR/debootstrap.log)"
	rm -f "$p/etc/apt/sources.list"
	cat >"$p/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	# This kind of machine's apt settings (a new one has them too).
	cp -n /etc/apt/apt.conf.d/* "$p/etc/apt/apt.conf.d/" 2>/dev/null || true
	tar -C "$p" -cf "$PRISTINE.tmp" .
	mv "$PRISTINE.tmp" "$PRISTINE"
	echo "$STAMP" >"$DIR/pristine.stamp"
	rm -rf "$p"
}

mounted=()
mnt() { # mnt TYPE SRC TARGET [OPTS]
	mkdir -p "$3"
	mount -t "$1" ${4:+-o "$4"} "$2" "$3"
	mounted+=("$3")
}
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l "${mounted[i]}" 2>/dev/null || true
	done
}
trap cleanup EXIT

pristine
if [ -d "$R" ]; then
	# A run killed mid-way may have left mounts below its root.
	{ grep -F -e " $R/" -e " $R " /proc/self/mounts || true; } | awk '{ print $2 }' |
		sort -r | xargs -r -n1 umount -l
	rm -rf "$R"
fi
mkdir -p "$R"
tar -C "$R" -xf "$PRISTINE"
# The root a mount of its own, as a machine's / is: unshare -m (the container
# tests) changes the propagation of /, which fails on a directory that is not
# a mount point.
mount --bind "$R" "$R"
mount --make-private "$R"
mounted+=("$R")
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
mnt proc proc "$R/proc"
mnt sysfs sys "$R/sys"
mount --rbind /dev "$R/dev"
mount --make-rslave "$R/dev"
mounted+=("$R/dev")
mnt bpf bpf "$R/sys/fs/bpf"
mnt debugfs debugfs "$R/sys/kernel/debug"
mnt tracefs tracefs "$R/sys/kernel/tracing"
mnt cgroup2 cgroup2 "$R/sys/fs/cgroup"
git clone -q "$ROOT" "$R/root/sfbpf"
log "make check in $R/root/sfbpf ($(git -C "$ROOT" log -1 --format='%h %s'))"
rc=0
# pivot_root into the run's root and drop the host's tree from the namespace:
# the suite sees a machine whose / is this root, as a new machine's is.
trap - EXIT
cd "$R"
mkdir -p .oldroot
pivot_root . .oldroot
cd /
umount -l /.oldroot
rmdir /.oldroot
# make check's own time: what a new machine spends (unpacking this root and
# cloning, above, are this script's, not the README's command).
start=$SECONDS
/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root TERM=dumb LANG=C.UTF-8 ${LOAD:+LOAD="$LOAD"} \
	bash -c 'cd /root/sfbpf && make check' || rc=$?
log "make check took $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s (exit $rc)"
exit "$rc"
