/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file the user named for an output (--folded, --pprof, --svg), written by
 * root into directories others may write to (/tmp, a shared directory).
 *
 * A regular file, a symlink or nothing at the name: the output goes to a new
 * file in that directory (atomicfile.h) that is renamed over the name once
 * complete. A symlink planted there is replaced, not followed; a file of
 * someone else's is never written into; readers never see half a profile;
 * a failure leaves the old file, if any, and no temporary file. A replaced
 * regular file's permissions are kept when stricter than the new file's.
 *
 * Streams are written into: "-" (stdout), a character device or FIFO named
 * directly (/dev/null, a terminal, mkfifo), and our own file descriptors
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N: a redirection or process
 * substitution). FIFOs in sticky world-writable directories must be ours or
 * the directory owner's, as fs.protected_fifos asks for O_CREAT.
 */
#ifndef SFBPF_OUTFILE_H
#define SFBPF_OUTFILE_H

#include <stdio.h>

#include "output/atomicfile.h"

struct outfile {
	FILE *f; /* write here */
	struct atomicfile af; /* when replacing */
	int fd; /* what f writes to */
	int dirfd; /* >= 0: replacing name in it */
	char *dir; /* the path's copy, cut at the directory */
	const char *name;
	int werr; /* first write error: the reason behind f's error flag */
};

/* Opens path for writing as above. Returns 0 or -errno (-EISDIR: a directory). */
int outfile__open(struct outfile *of, const char *path);
/*
 * Ends the output: with err 0, the file replaces its name (after a sync);
 * with an error, it is dropped. Returns err, or the error that ended the
 * output (a failed write's own errno rather than -EIO, e.g. -ENOSPC).
 */
int outfile__close(struct outfile *of, int err);
/* Whether path could be written (a file is created in its directory and dropped). */
int outfile__probe(const char *path);

#endif /* SFBPF_OUTFILE_H */
