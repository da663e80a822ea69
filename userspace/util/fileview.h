/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A whole file mapped for reading that may shrink under us. A file mapped
 * and then truncated (rewritten in place by cp, a build, an editor) raises
 * SIGBUS at the first touch of a page past its new end, and that would kill
 * the profiler. Views made here are registered: a SIGBUS inside one puts a
 * page of zeros in place of the lost one, marks the view torn, and the
 * access goes on, reading zeros. Readers of a view already treat its bytes as
 * untrusted (libelf and libdw check every bound); they ask fileview__torn()
 * after reading and drop what they read from a torn view. A SIGBUS anywhere
 * else goes to the handler that was there before (by default: the process
 * dies, as it would have).
 *
 * Why map at all: a copy (read()) of the DWARF of a big library is tens of
 * MiB of our own memory for as long as it is open; a mapping costs the pages
 * actually touched, and those are the page cache's, shared and reclaimable.
 *
 * The view is MAP_PRIVATE and writable: a library that writes into its
 * image (libelf may) gets private copies of those pages, never the file.
 * At most FILEVIEW_MAX views exist at once (the caller falls back to read()).
 * Thread-safe; the SIGBUS handler is installed with the first view.
 */
#ifndef SFBPF_FILEVIEW_H
#define SFBPF_FILEVIEW_H

#include <stdbool.h>
#include <stddef.h>

#define FILEVIEW_MAX 64

struct fileview {
	void *base; /* NULL: not mapped */
	size_t len;
	int slot;
};

/* Map all of fd. 0, or a negative errno (-EMFILE: FILEVIEW_MAX views exist; -ENODATA: empty). */
int fileview__map(int fd, struct fileview *v);
/* Has a page of v vanished (the file shrank) since it was mapped? */
bool fileview__torn(const struct fileview *v);
/*
 * Give back the pages of [off, off + len) that v holds (those wholly inside):
 * the range reads the file again at the next touch, so only ranges never
 * written through the view may be given (a write would be undone).
 */
void fileview__drop(const struct fileview *v, size_t off, size_t len);
/* Unmap v (a no-op for a view never mapped). */
void fileview__unmap(struct fileview *v);

#endif /* SFBPF_FILEVIEW_H */
