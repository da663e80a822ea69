// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a live-view refresh costs (make bench's liveview): the live view's
 * model (top/topview.h), which names each distinct stack once, when it first
 * appears, and then only folds in the counts that grew, against the
 * snapshot every output reads (profile/snapshot.h), which walks and names
 * every stack of the aggregator each time it is made: what a live view
 * reading a snapshot would pay at every refresh, before its own table.
 *
 * The aggregator holds STACKS distinct stacks of DEPTH user frames in this
 * process, their addresses drawn from ADDRS distinct instructions of libc's
 * code (real symbols, a real object). Each refresh, a hundredth of the
 * stacks grow by a sample and NEW new stacks arrive (a busy machine's second
 * at 1 Hz); then, alternately, the model is updated and its rows selected,
 * and a snapshot made, walked and freed, on the same aggregator. Prints one
 * line per refresh after the first (which names everything either way):
 *   liveview stacks=N depth=D addrs=A new=K refresh=R model_us=M snapshot_us=S
 * (CPU time of this thread, in µs; frames: what the snapshot named, inlined
 * functions included). The symbolizer is set as sfbpf-top sets it (source
 * lines and inlined functions on).
 *
 * Usage: liveview [-s STACKS] [-d DEPTH] [-a ADDRS] [-n NEW] [-r REFRESHES]
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profile/aggregate.h"
#include "profile/snapshot.h"
#include "symbols/symbolize.h"
#include "top/topview.h"

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* libc's executable segment, from the loaded object that holds printf. */
static int libc_text(uint64_t *lo, uint64_t *hi)
{
	Dl_info info;
	struct link_map *lm;
	const ElfW(Phdr) * ph;
	const ElfW(Ehdr) * eh;
	int i;

	if (!dladdr1((void *)printf, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return -ENOENT;
	eh = info.dli_fbase;
	ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			*lo = lm->l_addr + ph[i].p_vaddr;
			*hi = *lo + ph[i].p_memsz;
			return 0;
		}
	return -ENOENT;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Stack i of the run: DEPTH addresses from the pool, the same every time for the same i. */
static void stack_of(uint64_t i, const uint64_t *pool, int addrs, int depth, __u64 *ips)
{
	uint64_t x = (i + 1) * 0xbf58476d1ce4e5b9ULL;
	int j;

	for (j = 0; j < depth; j++) {
		x ^= x >> 31;
		x *= 0x94d049bb133111ebULL;
		ips[j] = pool[(x >> 11) % addrs];
	}
}

static int count_one(const struct sw_stack *st, void *ctx)
{
	*(size_t *)ctx += st->nr_frames;
	return 0;
}

int main(int argc, char **argv)
{
	int stacks = 20000, depth = 20, addrs = 20000, fresh = 100, refreshes = 11, opt, r, j;
	struct sfbpf_sample *s = calloc(1, sizeof(*s));
	const struct topview_row *const *rows;
	struct symbolizer *sym = symbolizer__new();
	struct aggregator *a = aggregator__new();
	struct topview *tv = topview__new(NULL, sym, NULL);
	uint64_t lo, hi, *pool, total;
	double t0, model, snap;
	size_t frames;

	while ((opt = getopt(argc, argv, "s:d:a:n:r:")) != -1) {
		switch (opt) {
		case 's':
			stacks = atoi(optarg);
			break;
		case 'd':
			depth = atoi(optarg);
			break;
		case 'a':
			addrs = atoi(optarg);
			break;
		case 'n':
			fresh = atoi(optarg);
			break;
		case 'r':
			refreshes = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: liveview [-s STACKS] [-d DEPTH] [-a ADDRS] [-n NEW] "
				"[-r REFRESHES]\n");
			return 2;
		}
	}
	pool = calloc(addrs > 0 ? addrs : 1, sizeof(*pool));
	if (!s || !sym || !a || !tv || !pool || stacks < 1 || addrs < 1 || depth < 1 ||
	    depth > SFBPF_MAX_FRAMES || libc_text(&lo, &hi)) {
		fprintf(stderr, "liveview: setup failed\n");
		return 1;
	}
	/* As sfbpf-top sets it: source lines and inlined functions (libc's, with libc6-dbg). */
	symbolizer__set_lines(sym, true, true);
	for (j = 0; j < addrs; j++)
		pool[j] = lo + next() % (hi - lo);
	s->pid = s->tid = getpid();
	s->weight = 1;
	s->nr_user = depth;
	s->stop = SFBPF_STOP_OUTERMOST;
	memcpy(s->comm, "liveview", 9);
	total = stacks;
	for (r = 0; r <= refreshes; r++) {
		/* The refresh's samples: the first one, every stack; then growth and new ones. */
		if (!r) {
			for (j = 0; j < stacks; j++) {
				stack_of(j, pool, addrs, depth, s->ips);
				aggregator__add(a, s);
			}
		} else {
			for (j = 0; j < stacks / 100; j++) {
				stack_of(next() % total, pool, addrs, depth, s->ips);
				aggregator__add(a, s);
			}
			for (j = 0; j < fresh; j++) {
				stack_of(total++, pool, addrs, depth, s->ips);
				aggregator__add(a, s);
			}
		}
		/* Alternated, so that neither always runs on the warmer caches. */
		model = snap = 0;
		for (j = 0; j < 2; j++) {
			if ((j + r) % 2 == 0) {
				t0 = cpu_us();
				if (topview__update(tv, a) < 0 ||
				    topview__select(tv, TOPVIEW_SORT_SELF, NULL, &rows) < 0)
					return 1;
				model = cpu_us() - t0;
			} else {
				struct snapshot *sn;

				t0 = cpu_us();
				sn = snapshot__new(a, sym, NULL);
				frames = 0;
				if (!sn || snapshot__for_each(sn, count_one, &frames))
					return 1;
				snapshot__free(sn);
				snap = cpu_us() - t0;
			}
		}
		if (r)
			printf("liveview stacks=%llu depth=%d addrs=%d new=%d refresh=%d model_us=%.0f "
			       "snapshot_us=%.0f frames=%zu\n",
			       (unsigned long long)total, depth, addrs, fresh, r, model, snap,
			       frames);
	}
	topview__free(tv);
	aggregator__free(a);
	symbolizer__free(sym);
	free(pool);
	free(s);
	return 0;
}
