/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whose word a file's identity is (issue 49). sfbpf keys what it caches of a
 * file (unwind tables, their digests in the table cache's identity index,
 * symbols, source lines) by the identity fstat gives: device, inode, size,
 * mtime and ctime. That identity stands for the file's bytes only where the
 * kernel wrote every field of it:
 *
 *  - kept by the kernel: a filesystem on a block device that is neither a
 *    loop device, nor removable, nor on USB, nor served from user space (nbd,
 *    ublk), nor stacked on one (device-mapper, md: their slaves are checked), of a type
 *    the kernel writes (ext2/3/4, xfs, btrfs, f2fs); tmpfs, ramfs and
 *    hugetlbfs, whose inodes only the kernel makes. A later write through the
 *    kernel sets a ctime nobody can choose;
 *  - chosen by the file's author: everything else. A filesystem image (a
 *    loop-mounted ext4 or btrfs, a USB stick, squashfs, erofs, iso9660)
 *    carries inode numbers and times its author wrote with debugfs or a hex
 *    editor, and a loop device's number is reused by the next image attached;
 *    a FUSE or network server answers what it likes; overlayfs shows its
 *    layers' inodes, and a layer may be such an image (composefs); ZFS and
 *    bcachefs keep their devices where these checks do not look.
 *
 * An identity of the second kind names a file only while sfbpf holds that
 * file open (the open file pins its superblock, so neither the device number
 * nor the inode can go to another file meanwhile); past that its bytes are
 * compared by digest before anything cached is used. docs/RELIABILITY.md
 * ("Tenants") says the same for users.
 *
 * Thread-safe. Verdicts for a block device are remembered by device number
 * for 10 s (a number goes to the next device plugged in); the others are
 * looked up each time (a btrfs's devices; an anonymous device number is
 * reused by whatever is mounted next).
 */
#ifndef SFBPF_UTIL_FILEIDENT_H
#define SFBPF_UTIL_FILEIDENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* Whether the kernel alone wrote the identity of st, the file open at fd (false on any doubt). */
bool fileident__kernel_kept(int fd, const struct stat *st);

/*
 * The mount fd's file was opened through, as the kernel numbers mounts
 * without ever reusing a number in a boot (statx's STATX_MNT_ID_UNIQUE,
 * Linux 6.8 and later); 0 where the kernel does not. An identity its author
 * chose names one file within one mount (an image attached again, or
 * another image on the same loop device, is another mount): with this
 * number, what is kept of such a file needs no open file to pin it.
 * SFBPF_NO_MOUNT_ID=1 in the environment: 0 always, as before 6.8 (the
 * tests of the older kernels' path on a newer one).
 */
uint64_t fileident__mount(int fd);

/*
 * Where what is kept of st, the file open at fd, may be found again by its
 * identity: FILEIDENT_BOOT (the kernel's identity), its mount's unique
 * number (an author's identity), or 0 (an author's with no mount number:
 * nowhere, unless held open). A cache keyed by the identity keys by this too.
 */
#define FILEIDENT_BOOT UINT64_MAX
uint64_t fileident__scope(int fd, const struct stat *st);

/* Whether the block device dev (st_dev of a file on it) holds no image nor media. */
bool fileident__block_kept(uint64_t dev);

/*
 * path (ours to resolve: a /proc link) found with O_PATH and opened
 * read-only only if a regular file (-EINVAL otherwise: a device's or a
 * FIFO's open, which may act, is never made); *st its status. An fd or a
 * negative errno.
 */
int fileident__open_regular(const char *path, struct stat *st);
/* fileident__open_regular()'s second half: pfd (O_PATH; closed) opened read-only if regular. */
int fileident__regular(int pfd, struct stat *st);

#endif /* SFBPF_UTIL_FILEIDENT_H */
