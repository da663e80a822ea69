/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Files that appear whole or not at all, under a name nobody else took.
 *
 * Continuous mode writes a profile per interval into a directory other
 * programs read (a log shipper, the spool's sender, a person): a reader must
 * never see half a profile, a crash must not leave one behind, and a name
 * that already exists (a user's file, a symlink planted in the directory) is
 * never replaced or followed.
 *
 * The data goes to an unnamed file (O_TMPFILE) in the target directory, is
 * synced, then linked in under its name: link(2) fails on an existing name
 * instead of replacing it. File systems without O_TMPFILE get a hidden
 * ".sfbpf-tmp.*" file created with O_EXCL | O_NOFOLLOW and renamed with
 * RENAME_NOREPLACE (or linked then unlinked) instead; only that fallback can
 * leave a temporary file behind, after a crash.
 */
#ifndef SFBPF_ATOMICFILE_H
#define SFBPF_ATOMICFILE_H

#include <stdbool.h>

struct atomicfile {
	int dirfd; /* not owned */
	int fd; /* write here */
	bool named; /* the fallback: tmpname exists in dirfd */
	char tmpname[48];
};

/* Start a file in dirfd (mode 0640 before the umask). Returns 0 or -errno. */
int atomicfile__open(struct atomicfile *af, int dirfd);
/*
 * Sync the data and give the file its name in dirfd. -EEXIST: the name is
 * taken and the file is still open (try another name); after any other
 * return the file is closed (and gone unless 0 was returned).
 */
int atomicfile__commit(struct atomicfile *af, const char *name);
/* Forget the file: nothing is left behind. */
void atomicfile__abort(struct atomicfile *af);

/*
 * Open directory path (O_DIRECTORY | O_CLOEXEC), creating it and missing
 * parents with mode 0750 first. nofollow: refuse a symlink as the last
 * component (for directories we name ourselves; a directory the user named
 * may well be a symlink). Returns the fd or -errno.
 */
int atomicfile_dir_open(const char *path, bool nofollow);

#endif /* SFBPF_ATOMICFILE_H */
