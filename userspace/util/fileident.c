// SPDX-License-Identifier: GPL-2.0-or-later
/* Whose word a file's identity is (see fileident.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/btrfs.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fileident.h"

/* Linux 6.8's unique mount id, not in every libc's headers. */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif
/* Not in linux/magic.h on every kernel's headers. */
#define FILEIDENT_XFS_MAGIC 0x58465342u
/* Block devices behind block devices (dm over md over a partition): deeper is refused. */
#define MAX_DEPTH 8
#define CACHED 64
/*
 * A verdict is kept this long: a device's number goes to the next device
 * when one is unplugged, or a device-mapper device removed.
 */
#define CACHE_NS (10 * 1000000000ull)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t dev, at_ns;
	bool used, kept;
} cache[CACHED];
static unsigned cache_next;

/*
 * Whether the device whose sysfs directory is open at dir_fd hangs off USB:
 * a disk plugged in there was written elsewhere, by whoever holds it, though
 * many USB disks do not say they are removable.
 */
static bool on_usb(int dir_fd)
{
	char link[32], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return true; /* no answer: not the kernel's word */
	path[n] = '\0';
	return strstr(path, "/usb") != NULL;
}

/* The first byte of a small sysfs attribute, or 0. */
static char attr(int dir_fd, const char *name)
{
	char c = 0;
	int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c;
}

static bool has(int dir_fd, const char *name)
{
	return faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static bool device_kept_at(int dir_fd, const char *name, int depth);

/* Every block device a device is made of (device-mapper, md) is kept too. */
static bool slaves_kept(int dir_fd, int depth)
{
	int fd = openat(dir_fd, "slaves", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *d;
	bool kept = true;
	int sub;
	DIR *dir;

	if (fd < 0)
		return true; /* none */
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return false;
	}
	while (kept && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		sub = openat(dirfd(dir), d->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		kept = sub >= 0 && device_kept_at(sub, d->d_name, depth + 1);
		if (sub >= 0)
			close(sub);
	}
	closedir(dir);
	return kept;
}

/*
 * dir_fd: the device's sysfs directory, name its kernel name. Images and
 * media come as loop devices, removable disks, or devices a user-space
 * server answers for (nbd, ublk).
 */
static bool device_kept_at(int dir_fd, const char *name, int depth)
{
	int disk = dir_fd;
	bool kept;

	if (depth > MAX_DEPTH || !strncmp(name, "loop", 4) || !strncmp(name, "nbd", 3) ||
	    !strncmp(name, "ublkb", 5) || has(dir_fd, "loop") || on_usb(dir_fd))
		return false;
	/* A partition: removable, loop and slaves are its disk's. */
	if (has(dir_fd, "partition")) {
		disk = openat(dir_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (disk < 0)
			return false;
	}
	kept = attr(disk, "removable") == '0' && !has(disk, "loop") && slaves_kept(dir_fd, depth) &&
	       (disk == dir_fd || slaves_kept(disk, depth));
	if (disk != dir_fd)
		close(disk);
	return kept;
}

static bool name_kept(const char *name)
{
	char path[64 + NAME_MAX];
	bool kept;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/block/%s", name);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	kept = device_kept_at(fd, name, 0);
	close(fd);
	return kept;
}

static bool block_lookup(uint64_t dev)
{
	char path[64], target[256];
	const char *name;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	name = strrchr(target, '/');
	return name_kept(name ? name + 1 : target);
}

bool fileident__block_kept(uint64_t dev)
{
	uint64_t now = clock__mono_ns();
	bool kept;
	unsigned i;

	if (!major(dev))
		return false; /* anonymous: no device behind it */
	pthread_mutex_lock(&lock);
	for (i = 0; i < CACHED; i++)
		if (cache[i].used && cache[i].dev == dev && now - cache[i].at_ns < CACHE_NS) {
			kept = cache[i].kept;
			pthread_mutex_unlock(&lock);
			return kept;
		}
	pthread_mutex_unlock(&lock);
	kept = block_lookup(dev);
	pthread_mutex_lock(&lock);
	i = cache_next++ % CACHED;
	cache[i].dev = dev;
	cache[i].at_ns = now;
	cache[i].kept = kept;
	cache[i].used = true;
	pthread_mutex_unlock(&lock);
	return kept;
}

/*
 * A btrfs: st_dev is the subvolume's anonymous number, its devices are
 * listed under /sys/fs/btrfs/FSID/devices. Looked up each time: the
 * anonymous number goes to the next mount.
 */
static bool btrfs_kept(int fd)
{
	struct btrfs_ioctl_fs_info_args args;
	char path[96];
	const uint8_t *u = args.fsid;
	struct dirent *d;
	unsigned devices = 0;
	bool kept = true;
	DIR *dir;

	memset(&args, 0, sizeof(args));
	if (ioctl(fd, BTRFS_IOC_FS_INFO, &args))
		return false;
	snprintf(
		path, sizeof(path),
		"/sys/fs/btrfs/%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x/devices",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		u[13], u[14], u[15]);
	dir = opendir(path);
	if (!dir)
		return false;
	while (kept && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		devices++;
		kept = name_kept(d->d_name);
	}
	closedir(dir);
	return kept && devices;
}

bool fileident__kernel_kept(int fd, const struct stat *st)
{
	struct statfs sfs;

	if (fd < 0 || fstatfs(fd, &sfs))
		return false;
	switch ((uint32_t)sfs.f_type) {
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case HUGETLBFS_MAGIC:
		return true;
	case EXT4_SUPER_MAGIC: /* ext2 and ext3 too */
	case FILEIDENT_XFS_MAGIC:
	case F2FS_SUPER_MAGIC:
		return fileident__block_kept((uint64_t)st->st_dev);
	case BTRFS_SUPER_MAGIC:
		return btrfs_kept(fd);
	default:
		return false;
	}
}

uint64_t fileident__mount(int fd)
{
	static int off = -1; /* SFBPF_NO_MOUNT_ID=1: as a kernel before 6.8 (tests) */
	struct statx stx;
	const char *v;

	if (off < 0) {
		v = getenv("SFBPF_NO_MOUNT_ID");
		off = v && !strcmp(v, "1");
	}
	memset(&stx, 0, sizeof(stx));
	if (off || fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &stx) ||
	    !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
		return 0;
	return stx.stx_mnt_id;
}

uint64_t fileident__scope(int fd, const struct stat *st)
{
	return fileident__kernel_kept(fd, st) ? FILEIDENT_BOOT : fileident__mount(fd);
}

int fileident__regular(int pfd, struct stat *st)
{
	char self[32];
	int fd = -EINVAL;

	if (!fstat(pfd, st) && S_ISREG(st->st_mode)) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = open(self, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	}
	close(pfd);
	return fd;
}

int fileident__open_regular(const char *path, struct stat *st)
{
	int pfd = open(path, O_PATH | O_CLOEXEC);

	return pfd < 0 ? -errno : fileident__regular(pfd, st);
}
