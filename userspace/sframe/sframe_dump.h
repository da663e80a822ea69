/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Textual and JSON dumps of a decoded SFrame section.
 *
 * The text form reproduces binutils' `readelf --sframe` byte for byte so the
 * two can be diffed: V1 sections print as readelf 2.40 prints them (the last
 * readelf that displays V1), V2 and V3 sections as readelf 2.47 prints them.
 * The JSON form is one object per line, for scripts.
 */
#ifndef SFBPF_SFRAME_DUMP_H
#define SFBPF_SFRAME_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "sframe/sframe.h"

/* Where a section came from, for the JSON form and the text heading. */
struct sframe_dump_meta {
	const char *file;    /* path as given by the user */
	const char *section; /* section name; NULL means ".sframe" */
	const char *source;  /* "section", "segment", "raw" (NULL: omitted) */
	uint64_t addr;	     /* section address the decoder was given */
	uint64_t size;	     /* section size in bytes */
};

/* "Contents of the SFrame section NAME:" and the readelf-style body. */
int sframe_dump__text(FILE *out, const struct sframe_decoder *d, const char *section);

/* One JSON object, one line: header, functions and their rows with decoded rules. */
int sframe_dump__json(FILE *out, const struct sframe_decoder *d,
		      const struct sframe_dump_meta *meta);

/*
 * One JSON object, one line, for a file that could not be dumped:
 * {"file":..., "error":{"errno":"EINVAL", "code":"fre-start-order", "offset":44, "message":...}}.
 * serr may be NULL (the failure was before decoding); code/offset are then omitted.
 */
int sframe_dump__json_error(FILE *out, const struct sframe_dump_meta *meta, int err,
			    const struct sframe_error *serr, const char *message);

#endif /* SFBPF_SFRAME_DUMP_H */
