// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Drives the profiling BPF program against one process, without the real
 * table loader: fills the process's mapping table from /proc/PID/maps (every
 * executable mapping without a table, so the unwinder follows frame pointers)
 * and, with -t, gives one object a hand-made table (see tests/bpf_smoke.test
 * for the format). Prints what the tests check:
 *   verified_insns N
 *   map START END BIAS OBJ PATH
 *   sample PID TID STOP KMODE NR_KERNEL PATH+0xELFADDR ...   (user frames, leaf first)
 *   stat NAME VALUE
 *   verified_insns N, run_time_ns N run_cnt N   (again, at the end)
 *
 * Usage: bpf_smoke [-d SECS] [-n MIN [-T THREADS]] [-f HZ] [-m FRAMES] [-t TABLE]
 *                  [-U|-K] [-v] PID
 *   -d SECS     sample for SECS (1); with -n, the most to wait
 *   -n MIN      stop as soon as THREADS (-T, 1) threads each have MIN samples
 *               (a busy machine makes the run longer, never the samples fewer)
 *   -U, -K      user stacks only, kernel stacks only (as sfbpf-top's)
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "profile/profile.h"
#include "maps/segments.h"
#include "util/log.h"

#define MAX_ROWS 65536
#define MAX_RULES 256
#define MAX_PAGES 65536
#define MAX_TIDS 64

struct smoke {
	struct profile *prof;
	__u32 pid;
	struct sfbpf_proc proc;
	char paths[SFBPF_MAX_MAPPINGS][256];
	/* The hand-made table (-t). */
	char table_path[256];
	struct {
		__u32 pc_off, rule;
	} rows[MAX_ROWS];
	struct segspace row_segs, page_segs;
	struct sfbpf_rule rules[MAX_RULES];
	__u32 nr_rows;
	__u32 nr_rules;
	/* Samples per thread (-n): the first MAX_TIDS threads seen. */
	struct {
		__u32 tid;
		__u32 n;
	} tids[MAX_TIDS];
	__u32 nr_tids;
};

static int usage(void)
{
	fprintf(stderr, "usage: bpf_smoke [-d SECS] [-n MIN [-T THREADS]] [-f HZ] [-m FRAMES] "
			"[-t TABLE] [-U|-K] [-v] PID\n");
	return 2;
}

/* Load bias of the mapping at file offset pgoff: runtime address - ELF vaddr. */
static __u64 elf_bias(const char *path, __u64 start, __u64 pgoff)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	__u64 bias = 0;
	int fd, i;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (__u64)i * eh.e_phentsize) != sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || (ph.p_offset & ~0xfffULL) > pgoff ||
		    pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		bias = start - (ph.p_vaddr - ph.p_offset + pgoff);
		break;
	}
out:
	close(fd);
	return bias;
}

static int read_maps(struct smoke *sm)
{
	char file[64], line[512], perms[8], path[256];
	unsigned long long start, end, pgoff;
	struct sfbpf_mapping *m;
	FILE *f;
	int n;

	snprintf(file, sizeof(file), "/proc/%u/maps", sm->pid);
	f = fopen(file, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && sm->proc.count < SFBPF_MAX_MAPPINGS) {
		path[0] = 0;
		n = sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &start, &end, perms, &pgoff, path);
		if (n < 4 || !strchr(perms, 'x'))
			continue;
		m = &sm->proc.maps[sm->proc.count];
		m->start = start;
		m->end = end;
		m->bias = path[0] == '/' ? elf_bias(path, start, pgoff) : 0;
		m->obj = SFBPF_OBJ_NONE;
		if (sm->table_path[0] && !strcmp(path, sm->table_path))
			m->obj = 0;
		snprintf(sm->paths[sm->proc.count], sizeof(sm->paths[0]), "%s", path);
		sm->proc.count++;
	}
	fclose(f);
	return 0;
}

static int rule_id(struct smoke *sm, const struct sfbpf_rule *r)
{
	__u32 i;

	for (i = 1; i < sm->nr_rules; i++)
		if (!memcmp(&sm->rules[i], r, sizeof(*r)))
			return i;
	if (sm->nr_rules == MAX_RULES)
		return -E2BIG;
	sm->rules[sm->nr_rules] = *r;
	return sm->nr_rules++;
}

/*
 * Table lines: "object PATH", "row PC sp|fp CFA_OFF FP_OFF|u [outermost]",
 * "gap PC". x86-64: RA at CFA - 8; FP_OFF is relative to the CFA.
 */
static int read_table(struct smoke *sm, const char *file)
{
	char line[512], base[8], fpo[16], extra[16];
	struct sfbpf_rule r;
	unsigned long long pc;
	int cfa_off, id, n;
	FILE *f;

	f = fopen(file, "r");
	if (!f)
		return -errno;
	sm->nr_rules = 1;
	sm->rules[SFBPF_RULE_GAP_ID].flags = SFBPF_RULE_GAP;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "object %255s", sm->table_path) == 1)
			continue;
		if (sm->nr_rows == MAX_ROWS)
			goto bad;
		if (sscanf(line, "gap %llx", &pc) == 1) {
			sm->rows[sm->nr_rows].pc_off = pc;
			sm->rows[sm->nr_rows++].rule = SFBPF_RULE_GAP_ID;
			continue;
		}
		extra[0] = 0;
		n = sscanf(line, "row %llx %7s %d %15s %15s", &pc, base, &cfa_off, fpo, extra);
		if (n < 4)
			goto bad;
		memset(&r, 0, sizeof(r));
		r.cfa_reg = !strcmp(base, "fp") ? SFBPF_REG_FP : SFBPF_REG_SP;
		r.cfa_off = cfa_off;
		r.ra_loc = SFBPF_LOC_CFA;
		r.ra_off = -8;
		r.flags = SFBPF_RULE_RA_DEREF;
		if (!strcmp(extra, "outermost"))
			r.ra_loc = SFBPF_LOC_UNDEFINED;
		if (strcmp(fpo, "u")) {
			r.fp_loc = SFBPF_LOC_CFA;
			r.fp_off = atoi(fpo);
			r.flags |= SFBPF_RULE_FP_DEREF;
		}
		id = rule_id(sm, &r);
		if (id < 0)
			goto bad;
		sm->rows[sm->nr_rows].pc_off = pc;
		sm->rows[sm->nr_rows++].rule = id;
	}
	fclose(f);
	return sm->nr_rows && sm->table_path[0] ? 0 : -EINVAL;
bad:
	fprintf(stderr, "bpf_smoke: bad table line: %s", line);
	fclose(f);
	return -EINVAL;
}

static int update(int fd, __u32 key, const void *val)
{
	if (bpf_map_update_elem(fd, &key, val, BPF_ANY)) {
		fprintf(stderr, "bpf_smoke: map update: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * Writes rows, rules, the page index (256-byte pages) and object 0 (rows
 * must be sorted), in the row format of bpf/abi.h.
 */
static int load_table(struct smoke *sm)
{
	struct sfbpf_object obj = { .gen = 1 };
	struct sfbpf_row row;
	__u32 i, p, npages, first = 0, *page;
	int err = 0;

	for (i = 1; i < sm->nr_rows; i++)
		if (sm->rows[i].pc_off <= sm->rows[i - 1].pc_off)
			return -EINVAL;
	obj.row_count = sm->nr_rows;
	obj.pc_min = sm->rows[0].pc_off & ~((1u << SFBPF_PAGE_SHIFT) - 1);
	npages = ((sm->rows[sm->nr_rows - 1].pc_off - obj.pc_min) >> SFBPF_PAGE_SHIFT) + 1;
	obj.page_count = npages + 1;
	err = segspace__init(&sm->row_segs, profile__rows_fd(sm->prof), MAX_ROWS, 0);
	if (!err)
		err = segspace__init(&sm->page_segs, profile__pages_fd(sm->prof), MAX_PAGES, 0);
	if (!err)
		err = segspace__get(&sm->row_segs, 0, sm->nr_rows);
	if (!err)
		err = segspace__get(&sm->page_segs, 0, obj.page_count);
	if (!err)
		err = segspace__map(&sm->row_segs, 0, sm->nr_rows);
	if (!err)
		err = segspace__map(&sm->page_segs, 0, obj.page_count);
	if (err) {
		fprintf(stderr, "bpf_smoke: table segments: %s\n", strerror(-err));
		return err;
	}
	for (i = 0; i < sm->nr_rows; i++) {
		row.pc_lo = (__u16)(sm->rows[i].pc_off - obj.pc_min);
		row.rule = (__u16)sm->rows[i].rule;
		memcpy(segspace__entry(&sm->row_segs, i), &row, sizeof(row));
	}
	for (p = 0; p < npages; p++) {
		while (first < sm->nr_rows &&
		       sm->rows[first].pc_off < obj.pc_min + (p << SFBPF_PAGE_SHIFT))
			first++;
		page = segspace__entry(&sm->page_segs, p);
		*page = first;
	}
	page = segspace__entry(&sm->page_segs, npages);
	*page = sm->nr_rows;
	for (i = 0; i < sm->nr_rules && !err; i++)
		err = update(profile__rules_fd(sm->prof), i, &sm->rules[i]);
	if (!err)
		err = update(profile__objects_fd(sm->prof), 0, &obj);
	return err;
}

static int on_sample(void *ctx, const struct sfbpf_sample *s, size_t size)
{
	struct smoke *sm = ctx;
	const struct sfbpf_mapping *m;
	__u32 i, j;

	(void)size;
	for (i = 0; i < sm->nr_tids && sm->tids[i].tid != s->tid; i++)
		;
	if (i == sm->nr_tids && i < MAX_TIDS)
		sm->tids[sm->nr_tids++].tid = s->tid;
	if (i < sm->nr_tids)
		sm->tids[i].n++;
	printf("sample %u %u %s %d %u", s->pid, s->tid, profile__stop_name(s->stop),
	       !!(s->flags & SFBPF_SAMPLE_KERNEL_MODE), s->nr_kernel);
	for (i = 0; i < s->nr_user; i++) {
		for (j = 0; j < sm->proc.count; j++) {
			m = &sm->proc.maps[j];
			if (s->ips[i] >= m->start && s->ips[i] < m->end)
				break;
		}
		if (j < sm->proc.count)
			printf(" %s+0x%llx", sm->paths[j][0] ? sm->paths[j] : "?",
			       (unsigned long long)(s->ips[i] - m->bias));
		else
			printf(" ?+0x%llx", (unsigned long long)s->ips[i]);
	}
	printf("\n");
	return 0;
}

/* Whether THREADS threads have MIN samples each. */
static bool enough(const struct smoke *sm, __u32 min, __u32 threads)
{
	__u32 i, full = 0;

	for (i = 0; i < sm->nr_tids; i++)
		full += sm->tids[i].n >= min;
	return full >= threads;
}

static void print_prog_info(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	printf("verified_insns %u\n", info.verified_insns);
	/* Only with sysctl kernel.bpf_stats_enabled=1. */
	if (info.run_cnt)
		printf("run_time_ns %llu run_cnt %llu\n", (unsigned long long)info.run_time_ns,
		       (unsigned long long)info.run_cnt);
}

int main(int argc, char **argv)
{
	struct profile_opts opts = { .user_stacks = true, .kernel_stacks = true, .filter_pids = true };
	__u64 freq = 999, counts[SFBPF_STAT__COUNT];
	const char *table = NULL;
	struct timespec t0, t;
	struct smoke *sm;
	__u32 min_samples = 0, min_threads = 1;
	double secs = 1;
	int c, err, i;
	__u8 one = 1;

	while ((c = getopt(argc, argv, "d:n:T:f:m:t:UKv")) != -1) {
		switch (c) {
		case 'd': secs = atof(optarg); break;
		case 'n': min_samples = strtoul(optarg, NULL, 0); break;
		case 'T': min_threads = strtoul(optarg, NULL, 0); break;
		case 'f': freq = strtoull(optarg, NULL, 0); break;
		case 'm': opts.max_frames = atoi(optarg); break;
		case 't': table = optarg; break;
		case 'U': opts.kernel_stacks = false; break;
		case 'K': opts.user_stacks = false; break;
		case 'v': log__init(2); break;
		default: return usage();
		}
	}
	if (optind + 1 != argc)
		return usage();
	sm = calloc(1, sizeof(*sm));
	if (!sm)
		return 1;
	sm->pid = atoi(argv[optind]);
	opts.on_sample = on_sample;
	opts.ctx = sm;
	opts.max_rows = MAX_ROWS;
	opts.max_rules = MAX_RULES;
	opts.max_objects = 16;
	opts.max_pages = MAX_PAGES;
	opts.max_procs = 16;
	opts.max_pids = 16;

	err = table ? read_table(sm, table) : 0;
	if (err) {
		fprintf(stderr, "bpf_smoke: %s: %s\n", table, strerror(-err));
		goto cleanup;
	}
	err = read_maps(sm);
	if (err) {
		fprintf(stderr, "bpf_smoke: reading maps of %u: %s\n", sm->pid, strerror(-err));
		goto cleanup;
	}
	sm->prof = profile__new(&opts);
	if (!sm->prof) {
		err = -errno;
		goto cleanup;
	}
	print_prog_info(profile__prog_fd(sm->prof));
	for (i = 0; i < (int)sm->proc.count; i++)
		printf("map %llx %llx %llx %d %s\n", (unsigned long long)sm->proc.maps[i].start,
		       (unsigned long long)sm->proc.maps[i].end,
		       (unsigned long long)sm->proc.maps[i].bias, (int)sm->proc.maps[i].obj,
		       sm->paths[i]);
	err = table ? load_table(sm) : 0;
	if (!err)
		err = update(profile__procs_fd(sm->prof), sm->pid, &sm->proc);
	if (!err)
		err = update(profile__target_pids_fd(sm->prof), sm->pid, &one);
	if (!err)
		err = profile__attach(sm->prof, freq);
	if (err)
		goto cleanup;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		err = profile__poll(sm->prof, 100);
		if (err < 0 && err != -EINTR)
			goto cleanup;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs &&
		 !(min_samples && enough(sm, min_samples, min_threads)));
	err = profile__poll(sm->prof, 0);
	if (err < 0)
		goto cleanup;
	err = profile__stats(sm->prof, counts);
	if (err)
		goto cleanup;
	for (i = 0; i < SFBPF_STAT__COUNT; i++)
		printf("stat %s %llu\n", profile__stat_name(i), (unsigned long long)counts[i]);
	print_prog_info(profile__prog_fd(sm->prof));
	err = 0;
cleanup:
	segspace__fini(&sm->row_segs);
	segspace__fini(&sm->page_segs);
	profile__free(sm->prof);
	free(sm);
	fflush(stdout);
	return err ? 1 : 0;
}
