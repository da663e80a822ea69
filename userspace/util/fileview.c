// SPDX-License-Identifier: GPL-2.0-or-later
/* Guarded read-only file mappings (see fileview.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileview.h"

/* What the SIGBUS handler reads: plain words, written atomically. */
static struct {
	uintptr_t base; /* 0: free */
	size_t len;
	int torn;
} slots[FILEVIEW_MAX];

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static struct sigaction previous;
static uintptr_t page_mask;
static int install_err;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t addr = (uintptr_t)si->si_addr, base;
	int saved = errno, i;

	for (i = 0; i < FILEVIEW_MAX; i++) {
		base = __atomic_load_n(&slots[i].base, __ATOMIC_ACQUIRE);
		if (!base || addr < base || addr - base >= __atomic_load_n(&slots[i].len,
									   __ATOMIC_RELAXED))
			continue;
		/* Zeros where the file's page was: the faulting access reads them when retried. */
		if (mmap((void *)(addr & page_mask), ~page_mask + 1, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
		__atomic_store_n(&slots[i].torn, 1, __ATOMIC_RELEASE);
		errno = saved;
		return;
	}
	errno = saved;
	/* Not a view's: whoever handled SIGBUS before us, else the default action on return. */
	if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
		previous.sa_sigaction(sig, si, uc);
	} else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
	} else {
		signal(SIGBUS, SIG_DFL);
	}
}

static void install(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_RESTART };

	page_mask = ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
	sigemptyset(&sa.sa_mask);
	install_err = sigaction(SIGBUS, &sa, &previous) ? -errno : 0;
}

int fileview__map(int fd, struct fileview *v)
{
	struct stat st;
	void *p;
	int i;

	v->base = NULL;
	v->slot = -1;
	pthread_once(&install_once, install);
	if (install_err)
		return install_err;
	if (fstat(fd, &st))
		return -errno;
	if (st.st_size <= 0)
		return -ENODATA;
	pthread_mutex_lock(&slots_lock);
	for (i = 0; i < FILEVIEW_MAX && slots[i].base; i++)
		;
	if (i == FILEVIEW_MAX) {
		pthread_mutex_unlock(&slots_lock);
		return -EMFILE;
	}
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		pthread_mutex_unlock(&slots_lock);
		return -errno;
	}
	slots[i].torn = 0;
	__atomic_store_n(&slots[i].len, (size_t)st.st_size, __ATOMIC_RELAXED);
	__atomic_store_n(&slots[i].base, (uintptr_t)p, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&slots_lock);
	*v = (struct fileview){ .base = p, .len = st.st_size, .slot = i };
	return 0;
}

bool fileview__torn(const struct fileview *v)
{
	return v->base && __atomic_load_n(&slots[v->slot].torn, __ATOMIC_ACQUIRE);
}

void fileview__drop(const struct fileview *v, size_t off, size_t len)
{
	uintptr_t lo, hi;

	if (!v->base || off >= v->len)
		return;
	if (len > v->len - off)
		len = v->len - off;
	lo = ((uintptr_t)v->base + off + ~page_mask) & page_mask;
	hi = ((uintptr_t)v->base + off + len) & page_mask;
	/*
	 * MADV_DONTNEED on a private file mapping drops our page-table entries;
	 * the page cache keeps the pages, so the next touch is a minor fault.
	 */
	if (lo < hi)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void fileview__unmap(struct fileview *v)
{
	if (!v->base)
		return;
	pthread_mutex_lock(&slots_lock);
	__atomic_store_n(&slots[v->slot].base, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&slots_lock);
	munmap(v->base, v->len);
	v->base = NULL;
	v->slot = -1;
}
