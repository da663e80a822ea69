#!/usr/bin/env bash
# make release-image: a container image of the release programs, built
# offline (no base image is downloaded): from scratch, holding the programs,
# the C library and libcurl's libraries from the same Debian 11 root they
# were built in (scripts/release.sh), the CA certificates, and nothing else.
#
# Usage: scripts/release-image.sh [ARCH...]   (x86 arm64; default: both)
#
# Out: build-release/ARCH/sfbpf-image.tar, an OCI image archive (podman load
# -i names it localhost/sfbpf:VERSION; skopeo copies it to a registry). Its entrypoint is sfbpf-top; scripts/sfbpf-daemonset.yaml
# runs it on every node of a Kubernetes cluster. The layer is reproducible:
# its files' times and owners are fixed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CACHE=${SFBPF_RELEASE_CACHE:-/var/cache/sfbpf/release}
OUT=$ROOT/build-release
VERSION=$(sed -n 's/^SFBPF_VERSION := //p' Makefile)

die() {
	echo "release-image: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (umoci unpacks as root)"
command -v umoci >/dev/null || die "umoci not installed (scripts/deps.sh release)"
ARCHES=("$@")
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(x86 arm64)

for a in "${ARCHES[@]}"; do
	case $a in
	x86) triplet=x86_64-linux-gnu ldso=/lib64/ld-linux-x86-64.so.2 goarch=amd64 ;;
	arm64)
		triplet=aarch64-linux-gnu ldso=/lib/ld-linux-aarch64.so.1 goarch=arm64
		command -v qemu-aarch64 >/dev/null || die "qemu-aarch64 not installed (qemu-user)"
		;;
	*) die "ARCH is x86 or arm64, not $a" ;;
	esac
	r=$CACHE/bullseye-$a
	[ -f "$r/.sfbpf-complete" ] && [ -x "$OUT/$a/sfbpf-top" ] ||
		die "no release programs for $a: make release first"
	work=$OUT/$a/image.tmp
	rm -rf "$work"
	mkdir -p "$work"
	fs=$work/fs
	mkdir -p "$fs/usr/sbin" "$fs/usr/bin" "$fs/etc/ssl/certs" "$fs/tmp" "$fs/var/lib/sfbpf" \
		"$fs/var/cache/sfbpf"
	chmod 1777 "$fs/tmp"
	install -m 0755 "$OUT/$a/sfbpf-top" "$fs/usr/sbin/sfbpf-top"
	install -m 0755 "$OUT/$a/sfbpf-dump" "$fs/usr/bin/sfbpf-dump"

	# The libraries, at the paths the root has them: the C library's that
	# the programs need (scripts/release.sh --check), what the root's
	# dynamic loader lists for libcurl (loaded for --push and --otlp) and
	# libcurl itself, and the name-service modules getaddrinfo loads to
	# resolve a collector.
	list() {
		if [ "$a" = x86 ]; then
			chroot "$r" "$ldso" --list "$1"
		else
			qemu-aarch64 -L "$r" "$r$ldso" --list "$1"
		fi
	}
	# (Under qemu -L the loader's own line names it by this machine's path.)
	libs=$(list "/usr/lib/$triplet/libcurl.so.4" |
		awk -v r="$r" '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		sed "s|^$r/|/|" | sort -u)
	[ -n "$libs" ] || die "$a: the root's loader listed no library for libcurl"
	for l in $libs "/usr/lib/$triplet/libcurl.so.4" "/lib/$triplet/libnss_dns.so.2" "/lib/$triplet/libnss_files.so.2" \
		"/lib/$triplet/libresolv.so.2" "/lib/$triplet/libc.so.6" "/lib/$triplet/libdl.so.2" \
		"/lib/$triplet/libpthread.so.0" "$ldso"; do
		# Symbolic links resolved inside the root, not on this machine; the
		# file lands under the name the loader asks for.
		real=$(chroot "$r" readlink -e "$l") || die "$a: $l is not in $r"
		mkdir -p "$fs$(dirname "$l")"
		cp "$r$real" "$fs$l"
	done
	real=$(chroot "$r" readlink -e /etc/ssl/certs/ca-certificates.crt) ||
		die "$a: no CA certificates in $r"
	cp "$r$real" "$fs/etc/ssl/certs/ca-certificates.crt"
	# No NSS configuration but for names: files (the pod's /etc/hosts) then DNS.
	printf 'hosts: files dns\n' >"$fs/etc/nsswitch.conf"

	# The image: one layer, times and owners fixed.
	find "$fs" -exec touch -h -d @0 {} +
	layout=$work/oci
	umoci init --layout "$layout"
	umoci new --image "$layout:$VERSION"
	umoci unpack --image "$layout:$VERSION" "$work/bundle" >/dev/null
	rm -rf "$work/bundle/rootfs"
	mv "$fs" "$work/bundle/rootfs"
	umoci repack --history.created 1970-01-01T00:00:00Z --history.created_by "make release-image" \
		--image "$layout:$VERSION" "$work/bundle"
	umoci config --no-history --image "$layout:$VERSION" --architecture "$goarch" --os linux \
		--created 1970-01-01T00:00:00Z --author sfbpf \
		--config.entrypoint /usr/sbin/sfbpf-top --config.cmd --continuous \
		--config.workingdir /var/lib/sfbpf \
		--config.label "org.opencontainers.image.title=sfbpf" \
		--config.label "org.opencontainers.image.version=$VERSION" \
		--config.label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)"
	umoci gc --layout "$layout"
	# The name a loader gives it: the full reference, not umoci's bare tag.
	python3 - "$layout/index.json" "sfbpf:$VERSION" <<'EOF'
import json, sys
path, ref = sys.argv[1], sys.argv[2]
index = json.load(open(path))
for m in index["manifests"]:
    m.setdefault("annotations", {})["org.opencontainers.image.ref.name"] = ref
json.dump(index, open(path, "w"), separators=(",", ":"))
EOF
	tar -C "$layout" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		-cf "$OUT/$a/sfbpf-image.tar" .
	rm -rf "$work"
	echo "release-image: $OUT/$a/sfbpf-image.tar ($(du -k "$OUT/$a/sfbpf-image.tar" | cut -f1) KiB)"
done
