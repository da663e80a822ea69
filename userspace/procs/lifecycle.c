// SPDX-License-Identifier: GPL-2.0-or-later
/* Process lifecycle: events to process-tracker work (see lifecycle.h). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procs/lifecycle.h"
#include "util/clock.h"

#define QUEUE_LEN 8192u /* power of two */
#define DEFAULT_EXEC_DELAY_NS (20 * 1000000ULL)
#define DEFAULT_INTERVAL_NS (200 * 1000000ULL)
#define DEFAULT_SWEEP_NS (10 * 1000000000ULL)
#define RETRY_DELAY_NS (100 * 1000000ULL) /* the loader was busy: ask again */
#define MAX_BACKOFF_NS (60 * 1000000000ULL)
#define SWEEP_BATCH 256 /* entries checked per sweep */
#define PID_LIMIT (1u << 22) /* the kernel's PID_MAX_LIMIT on 64-bit */

/* Per-PID state bits; the backoff level is in the high nibble. */
#define Q_NOW 0x1 /* in the now queue */
#define Q_FORCE 0x2 /* ... and its entry must be rebuilt whatever the mappings */
#define Q_LATER 0x4 /* in the later queue */
#define Q_YOUNG 0x8 /* ... in the now queue for on_young alone, not a refresh */
#define BACKOFF_SHIFT 4
#define BACKOFF_MAX 9 /* 200 ms << 9 > 60 s: capped there */

struct item {
	int pid;
	uint64_t due_ns;
};

struct fifo {
	struct item items[QUEUE_LEN];
	uint32_t head, tail; /* free-running; tail - head items */
};

struct lifecycle {
	struct lifecycle_opts opts;
	struct fifo now_q; /* sampled: refresh at once */
	struct fifo later_q; /* exec'd, or retried: refresh when due */
	uint8_t *state; /* indexed by PID */
	uint32_t pid_limit;
	uint64_t next_sweep_ns;
	struct lifecycle_stats stats;
};

struct lifecycle *lifecycle__new(const struct lifecycle_opts *opts)
{
	struct lifecycle *lc = calloc(1, sizeof(*lc));

	if (!lc) {
		errno = ENOMEM;
		return NULL;
	}
	lc->opts = *opts;
	if (!lc->opts.exec_delay_ns)
		lc->opts.exec_delay_ns = DEFAULT_EXEC_DELAY_NS;
	if (!lc->opts.notify_interval_ns)
		lc->opts.notify_interval_ns = DEFAULT_INTERVAL_NS;
	if (!lc->opts.sweep_every_ns)
		lc->opts.sweep_every_ns = DEFAULT_SWEEP_NS;
	/* pid_max may grow later: sized for its limit, in pages never touched (free). */
	lc->pid_limit = PID_LIMIT;
	lc->state = calloc(lc->pid_limit, 1);
	if (!lc->state) {
		free(lc);
		errno = ENOMEM;
		return NULL;
	}
	lc->next_sweep_ns = clock__mono_ns() + lc->opts.sweep_every_ns;
	return lc;
}

void lifecycle__free(struct lifecycle *lc)
{
	if (!lc)
		return;
	free(lc->state);
	free(lc);
}

static bool push(struct fifo *q, int pid, uint64_t due_ns)
{
	if (q->tail - q->head >= QUEUE_LEN)
		return false;
	q->items[q->tail++ % QUEUE_LEN] = (struct item){ pid, due_ns };
	return true;
}

static bool valid_pid(const struct lifecycle *lc, int pid)
{
	return pid > 0 && (uint32_t)pid < lc->pid_limit;
}

static void set_backoff(struct lifecycle *lc, int pid, unsigned level)
{
	uint8_t *st = &lc->state[pid];

	*st = (*st & ((1u << BACKOFF_SHIFT) - 1)) | (uint8_t)(level << BACKOFF_SHIFT);
}

/* A sampled process needs its entry (force) or may have new mappings. */
static void queue_now(struct lifecycle *lc, int pid, bool force)
{
	uint8_t *st = &lc->state[pid];

	if (force)
		*st |= Q_FORCE;
	*st &= ~Q_YOUNG; /* a refresh: the runtimes hear of it too */
	if (*st & Q_NOW)
		return;
	if (push(&lc->now_q, pid, 0))
		*st |= Q_NOW;
	else
		lc->stats.queue_drops++;
}

/*
 * A process walked before its entry exists: its runtime (an interpreter's
 * frames) is offered it in the now queue, ahead of the exec's refresh, for
 * the cost of reading its mappings. A short script is young for all of its
 * life: in a module's test suite, the 20 ms before that refresh were 8 %
 * of its processes' samples, each without its interpreter's frames.
 */
static void queue_young(struct lifecycle *lc, int pid)
{
	uint8_t *st = &lc->state[pid];

	if (!lc->opts.on_young || (*st & Q_NOW))
		return;
	if (push(&lc->now_q, pid, 0))
		*st |= Q_NOW | Q_YOUNG;
	else
		lc->stats.queue_drops++;
}

static void queue_later(struct lifecycle *lc, int pid, uint64_t due_ns)
{
	uint8_t *st = &lc->state[pid];

	if (*st & Q_LATER)
		return;
	if (push(&lc->later_q, pid, due_ns))
		*st |= Q_LATER;
	else
		lc->stats.queue_drops++;
}

int lifecycle__event(struct lifecycle *lc, const struct sfbpf_event *e)
{
	int pid = (int)e->pid;

	if (!valid_pid(lc, pid))
		return 0;
	switch (e->type) {
	case SFBPF_EVENT_EXEC:
		lc->stats.exec_events++;
		/* The old image's tables: released now (they linger, if shared). */
		proctrack__remove(lc->opts.procs, pid);
		set_backoff(lc, pid, 0);
		if (lc->opts.on_exec)
			lc->opts.on_exec(lc->opts.ctx, pid, e->time_ns, e->start_ticks, e->addr);
		/*
		 * Later, not now: most exec'd processes of a busy host (shells,
		 * builds) are gone by then, and cost one failed open; one that
		 * runs reports no-proc at its first sample and is refreshed at
		 * once (the now queue), this one then only adds what ld.so
		 * mapped since. Refreshing every exec at once cost every one a
		 * full refresh, and an exec storm (300/s) in the now queue kept
		 * a sampled program's refresh waiting 1.1 s behind them.
		 */
		if (lc->opts.follow_execs)
			queue_later(lc, pid, clock__mono_ns() + lc->opts.exec_delay_ns);
		break;
	case SFBPF_EVENT_EXIT:
		lc->stats.exit_events++;
		proctrack__remove(lc->opts.procs, pid);
		set_backoff(lc, pid, 0);
		if (lc->opts.on_exit)
			lc->opts.on_exit(lc->opts.ctx, pid, e->time_ns);
		break;
	case SFBPF_EVENT_FORK:
		lc->stats.fork_events++;
		/* Its samples so far were unwound with the copy, if it is gone too. */
		if (lc->opts.on_fork)
			lc->opts.on_fork(lc->opts.ctx, pid, (int)(__u32)e->addr, e->time_ns,
					 e->start_ticks);
		/* Before anything frees a slot the copy names (tables__fork_horizon). */
		if (proctrack__adopt(lc->opts.procs, pid, e->start_ticks)) {
			lc->stats.fork_gone++;
			break;
		}
		set_backoff(lc, pid, 0);
		/*
		 * Read later as an exec'd process is, if it lives: what it maps
		 * itself, and the runtime it runs (the listener: pythons.h).
		 * Its samples unwind with the copy meanwhile.
		 */
		if (lc->opts.follow_execs)
			queue_later(lc, pid, clock__mono_ns() + lc->opts.exec_delay_ns);
		/*
		 * Its walks read its parent's runtimes already: they attach it
		 * now, before its samples are named (a pre-fork server's worker
		 * may live 50 ms).
		 */
		if (e->addr & SFBPF_FORK_RUNTIMES)
			queue_young(lc, pid);
		break;
	case SFBPF_EVENT_NO_PROC:
		lc->stats.no_proc_events++;
		/*
		 * Unwound already (VMAs found in the kernel): read as an exec'd
		 * process is, once ld.so has mapped its libraries; an entry
		 * read now, at its first instructions, would lack them and
		 * stop its walks where the kernel's would not.
		 */
		if (e->addr == SFBPF_NO_PROC_WALKED) {
			queue_later(lc, pid, clock__mono_ns() + lc->opts.exec_delay_ns);
			queue_young(lc, pid);
		} else
			queue_now(lc, pid, true);
		break;
	case SFBPF_EVENT_NO_MAPPING:
		lc->stats.no_mapping_events++;
		queue_now(lc, pid, false);
		break;
	default:
		break;
	}
	return 0;
}

/* The process may report again only after interval << level (capped). */
static void back_off(struct lifecycle *lc, int pid)
{
	unsigned level = lc->state[pid] >> BACKOFF_SHIFT;
	uint64_t delay, next;
	__u32 key = pid;

	if (level < BACKOFF_MAX)
		level++;
	set_backoff(lc, pid, level);
	delay = lc->opts.notify_interval_ns << level;
	next = clock__mono_ns() + (delay < MAX_BACKOFF_NS ? delay : MAX_BACKOFF_NS);
	if (lc->opts.notify_fd >= 0)
		bpf_map_update_elem(lc->opts.notify_fd, &key, &next, BPF_ANY);
}

static void refresh(struct lifecycle *lc, int pid, bool force)
{
	__u32 key = pid;
	int ret = force ? proctrack__refresh(lc->opts.procs, pid) :
			  proctrack__refresh_if_changed(lc->opts.procs, pid);

	switch (ret) {
	case PROCTRACK_UPDATED:
		lc->stats.refreshes++;
		set_backoff(lc, pid, 0);
		/*
		 * A process's first entry (its no-proc report) is read while
		 * ld.so is still mapping its libraries: the report that asked
		 * for it holds the process's next report back notify_interval
		 * (200 ms), so a frame in a library mapped just after waited
		 * for the exec's later refresh (20 ms) to unwind. Once per
		 * process: its next unknown mapping reports at once.
		 */
		if (force && lc->opts.notify_fd >= 0)
			bpf_map_delete_elem(lc->opts.notify_fd, &key);
		break;
	case PROCTRACK_INCOMPLETE:
		lc->stats.refreshes++;
		lc->stats.incomplete++;
		queue_later(lc, pid, clock__mono_ns() + RETRY_DELAY_NS);
		break;
	case PROCTRACK_UNCHANGED:
		lc->stats.unchanged++;
		back_off(lc, pid);
		break;
	case -ESRCH:
	case -ENOENT:
	case -ENOEXEC:
		lc->stats.gone++;
		break;
	default:
		lc->stats.failed++;
		back_off(lc, pid);
		break;
	}
}

static bool take_now(struct lifecycle *lc)
{
	struct fifo *q = &lc->now_q;
	uint8_t *st;
	int pid;

	if (q->head == q->tail)
		return false;
	pid = q->items[q->head++ % QUEUE_LEN].pid;
	st = &lc->state[pid];
	if (*st & Q_YOUNG) {
		lc->stats.young++;
		lc->opts.on_young(lc->opts.ctx, pid, clock__mono_ns());
	} else {
		refresh(lc, pid, *st & Q_FORCE);
	}
	*st &= ~(Q_NOW | Q_FORCE | Q_YOUNG);
	return true;
}

static bool take_later(struct lifecycle *lc, uint64_t now)
{
	struct fifo *q = &lc->later_q;
	struct item *it;
	uint8_t *st;

	if (q->head == q->tail)
		return false;
	it = &q->items[q->head % QUEUE_LEN];
	if (it->due_ns > now)
		return false;
	q->head++;
	st = &lc->state[it->pid];
	*st &= ~Q_LATER;
	/*
	 * The exec removed the entry: one that exists now was built since (a
	 * sample asked for it), so a rebuild is only needed if ld.so mapped
	 * more meanwhile. The now queue, if it has the process, rebuilds it.
	 */
	if (!(*st & Q_NOW))
		refresh(lc, it->pid, !proctrack__has(lc->opts.procs, it->pid));
	return true;
}

uint32_t lifecycle__process(struct lifecycle *lc, uint64_t budget_ns)
{
	uint64_t start = clock__mono_ns(), deadline = start + budget_ns, now = start;

	while (now < deadline && take_now(lc))
		now = clock__mono_ns();
	while (now < deadline && take_later(lc, now))
		now = clock__mono_ns();
	if (now >= lc->next_sweep_ns) {
		lc->stats.swept += proctrack__sweep(lc->opts.procs, SWEEP_BATCH);
		lc->next_sweep_ns = now + lc->opts.sweep_every_ns;
	}
	lc->stats.queued = (lc->now_q.tail - lc->now_q.head) + (lc->later_q.tail - lc->later_q.head);
	return lc->stats.queued;
}

void lifecycle__stats(const struct lifecycle *lc, struct lifecycle_stats *out)
{
	*out = lc->stats;
}

bool lifecycle__urgent(const struct lifecycle *lc)
{
	return lc->now_q.head != lc->now_q.tail;
}
