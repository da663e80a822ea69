// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sfbpf-dump: print the SFrame data of ELF files the way `readelf --sframe`
 * does (or as JSON), through sfbpf's own locator and decoder.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe/sframe.h"
#include "sframe/sframe_dump.h"
#include "sframe/sframe_elf.h"
#include "util/buildinfo.h"

#define PROG "sfbpf-dump"

struct opts {
	bool json;
	bool raw;
	char **files;
	int nfiles;
};

static const char doc[] =
	"sfbpf-dump -- dump the SFrame stack-trace data (.sframe) of ELF files\n"
	"\n"
	"The text output matches `readelf --sframe` line for line: SFrame V1 as binutils\n"
	"2.40's readelf prints it, V2 and V3 as binutils 2.47's readelf prints them.\n"
	"The section is found by name (.sframe), by type (SHT_GNU_SFRAME) or, in stripped\n"
	"files, through the PT_GNU_SFRAME program header. Relocatable objects (.o) have\n"
	"their .sframe relocations applied first, as readelf does (V1: left as is).\n"
	"\n"
	"Exit status: 0 when every file was dumped, 1 when any file had no SFrame data or\n"
	"malformed data (each reported on stderr; the other files are still dumped), 2 on\n"
	"usage errors.\n"
	"\v"
	"EXAMPLES:\n"
	"  sfbpf-dump /usr/bin/ls                  readelf-style dump\n"
	"  sfbpf-dump a.out foo.o libbar.so        \"File: NAME\" before each\n"
	"  sfbpf-dump --json a.out | jq .header    one JSON object per line\n"
	"  sfbpf-dump --raw DATA-BE                a bare .sframe section\n"
	"  diff <(sfbpf-dump a.out) <(readelf --sframe a.out)\n";

const char *argp_program_version = SFBPF_VERSION_TEXT("sfbpf-dump");

static const struct argp_option options[] = {
	{ "json", 'j', NULL, 0, "Print one JSON object per file (header, functions, rows)", 0 },
	{ "raw", 'r', NULL, 0, "Files are bare .sframe section contents, not ELF files", 0 },
	{ 0 },
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct opts *o = state->input;

	(void)arg;
	switch (key) {
	case 'j':
		o->json = true;
		break;
	case 'r':
		o->raw = true;
		break;
	case ARGP_KEY_ARGS:
		o->files = state->argv + state->next;
		o->nfiles = state->argc - state->next;
		break;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "no FILE given");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void report_load_error(const struct opts *o, const char *file, int err,
			      const struct sframe_elf_error *eerr)
{
	const char *msg = eerr->msg[0] ? eerr->msg : strerror(-err);
	struct sframe_dump_meta meta = { .file = file };

	fprintf(stderr, "%s: %s: %s\n", PROG, file, msg);
	if (o->json)
		sframe_dump__json_error(stdout, &meta, err, NULL, msg);
}

static void report_decode_error(const struct opts *o, const struct sframe_dump_meta *meta, int err,
				const struct sframe_error *serr)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "malformed %s: %s: %s (at byte 0x%" PRIx64 ")", meta->section,
		 sframe_errcode__name(serr->code), serr->msg, serr->offset);
	fprintf(stderr, "%s: %s: %s\n", PROG, meta->file, msg);
	if (o->json)
		sframe_dump__json_error(stdout, meta, err, serr, msg);
}

/* Dump one file; returns 0, or a negative errno after reporting it. */
static int dump_file(const struct opts *o, const char *file)
{
	struct sframe_decoder *d = NULL;
	struct sframe_elf_error eerr = { { 0 } };
	struct sframe_error serr;
	struct sframe_elf s;
	struct sframe_dump_meta meta;
	int err;

	err = o->raw ? sframe_elf__load_raw(file, &s, &eerr) : sframe_elf__load(file, &s, &eerr);
	/* readelf names each file of a multi-file dump, even one without .sframe. */
	if (!o->json && o->nfiles > 1 && (err == 0 || err == -ENOENT))
		printf("\nFile: %s\n", file);
	if (err) {
		fflush(stdout);
		report_load_error(o, file, err, &eerr);
		return err;
	}
	if (s.relocs_skipped)
		fprintf(stderr, "%s: %s: warning: %u relocation(s) in %s not applied\n", PROG, file,
			s.relocs_skipped, s.name);

	meta = (struct sframe_dump_meta){
		.file = file,
		.section = s.name,
		.source = sframe_elf_source__name(s.source),
		.addr = s.addr,
		.size = s.size,
	};
	memset(&serr, 0, sizeof(serr));
	err = sframe_decoder__new(s.data, s.size, s.addr, &d, &serr);
	if (err) {
		fflush(stdout);
		report_decode_error(o, &meta, err, &serr);
		goto cleanup;
	}
	if (sframe_decoder__num_reserved_fdes(d))
		fprintf(stderr, "%s: %s: warning: %u FDE(s) of a reserved type skipped\n", PROG,
			file, sframe_decoder__num_reserved_fdes(d));
	err = o->json ? sframe_dump__json(stdout, d, &meta) : sframe_dump__text(stdout, d, s.name);
	if (err)
		fprintf(stderr, "%s: %s: write error: %s\n", PROG, file, strerror(-err));
cleanup:
	sframe_decoder__free(d);
	sframe_elf__release(&s);
	return err;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = options,
		.parser = parse_opt,
		.args_doc = "FILE...",
		.doc = doc,
	};
	struct opts o = { 0 };
	int failed = 0;

	argp_err_exit_status = 2;
	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	for (int i = 0; i < o.nfiles; i++) {
		if (dump_file(&o, o.files[i]))
			failed++;
	}
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "%s: write error: %s\n", PROG, strerror(errno));
		return 1;
	}
	return failed ? 1 : 0;
}
