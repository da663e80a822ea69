// SPDX-License-Identifier: GPL-2.0-or-later
/* See pacmask.h. */
#include <errno.h>

#include "profile/pacmask.h"

#ifdef __aarch64__
#include <signal.h>
#include <sys/auxv.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asm/hwcap.h>
#include <asm/ptrace.h>
#include <elf.h>

/* Bits 54..48: the kernel's GENMASK(54, vabits_actual) for 48-bit addresses. */
#define PACMASK_VA48 0x007f000000000000ULL

/* Asks a stopped, traced child; 0 or -errno. */
static int pacmask_ptrace(uint64_t *mask)
{
	struct user_pac_mask m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	int status, err = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (!ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			raise(SIGSTOP);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status))
		err = -EPERM; /* not traceable: it ran to its end */
	else if (!ptrace(PTRACE_GETREGSET, pid, (void *)NT_ARM_PAC_MASK, &iov))
		*mask = m.insn_mask;
	else if (errno == EINVAL) /* the CPU has no address authentication */
		*mask = 0;
	else
		err = -errno;
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return err;
}

int pacmask__user(uint64_t *mask)
{
	static uint64_t cached;
	static int known;

	if (!known) {
		if (pacmask_ptrace(&cached))
			cached = getauxval(AT_HWCAP) & HWCAP_PACA ? PACMASK_VA48 : 0;
		known = 1;
	}
	*mask = cached;
	return 0;
}
#else
int pacmask__user(uint64_t *mask)
{
	*mask = 0;
	return -ENOTSUP;
}
#endif
