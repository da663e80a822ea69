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
 *
 * Files a user named (outfile.h) are replaced instead: the data is linked
 * under a hidden name, then renamed over the name, so whatever was there (a
 * file, a symlink) is replaced, never written into or followed. A crash
 * between the two steps can leave the hidden name behind.
 */
#ifndef SFBPF_ATOMICFILE_H
#define SFBPF_ATOMICFILE_H

#include <dirent.h>
#include <stdbool.h>
#include <sys/types.h>

struct atomicfile {
	int dirfd; /* not owned */
	int fd; /* write here */
	bool named; /* the fallback: tmpname exists in dirfd */
	char tmpname[48];
};

/* Start a file in dirfd (mode 0640 before the umask). Returns 0 or -errno. */
int atomicfile__open(struct atomicfile *af, int dirfd);
/* The same with the given mode (before the umask). */
int atomicfile__open_mode(struct atomicfile *af, int dirfd, mode_t mode);
/*
 * Sync the data and give the file its name in dirfd. -EEXIST: the name is
 * taken and the file is still open (try another name); after any other
 * return the file is closed (and gone unless 0 was returned).
 */
int atomicfile__commit(struct atomicfile *af, const char *name);
/*
 * Sync the data and rename the file over name in dirfd, replacing whatever
 * is there (a directory: -EISDIR). The file is closed after any return, and
 * gone unless 0 was returned.
 */
int atomicfile__replace(struct atomicfile *af, const char *name);
/* Forget the file: nothing is left behind. */
void atomicfile__abort(struct atomicfile *af);

/*
 * Open directory path (O_DIRECTORY | O_CLOEXEC), creating it and missing
 * parents with mode 0750 first. nofollow: refuse a symlink as the last
 * component (for directories we name ourselves; a directory the user named
 * may well be a symlink). Returns the fd or -errno.
 */
int atomicfile_dir_open(const char *path, bool nofollow);

/*
 * A DIR * listing dirfd from its first entry, on a duplicate of dirfd (which
 * stays open and usable by the caller); closedir() it. NULL + errno.
 */
DIR *atomicfile_dir_list(int dirfd);

#endif /* SFBPF_ATOMICFILE_H */
