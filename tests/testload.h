/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One object's unwind table as the loader builds it (tables/tableload.h),
 * waited for: the tests that judge the loader's tables against the decoder,
 * the CFI reader or the BPF side's row format all load it this one way.
 */
#ifndef SFBPF_TESTLOAD_H
#define SFBPF_TESTLOAD_H

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "tables/flatten.h"
#include "tables/tableload.h"

/*
 * The table of the object open at fd (named name in messages), built by tl
 * or, with tl NULL, by an unthreaded loader of its own. fd stays the
 * caller's. 0 and *out (the caller frees it), or a negative errno and *out
 * NULL: the loader's, or the job's own error.
 */
static inline int testload_fd(struct tableload *tl, int fd, const char *name,
			      struct flat_table **out)
{
	struct tableload_opts opts = { .threaded = false };
	struct tableload *own = tl ? NULL : tableload__new(&opts);
	struct tableload_job *job;
	int err;

	*out = NULL;
	if (!tl)
		tl = own;
	job = tl ? tableload_job__new(fd, name, NULL) : NULL;
	if (!job || tableload__submit(tl, job)) {
		tableload_job__free(job);
		tableload__free(own);
		return -ENOMEM;
	}
	job = tableload__take(tl);
	err = job ? job->err : -ENOMEM;
	if (job && !err) {
		*out = job->ft;
		job->ft = NULL;
	}
	tableload_job__free(job);
	tableload__free(own);
	return err;
}

/* The same for the file at path; -errno if it cannot be opened. */
static inline int testload_path(struct tableload *tl, const char *path, struct flat_table **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	*out = NULL;
	if (fd < 0)
		return -errno;
	err = testload_fd(tl, fd, path, out);
	close(fd);
	return err;
}

#endif /* SFBPF_TESTLOAD_H */
