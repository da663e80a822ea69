/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where another process's threads keep their values of one POSIX
 * thread-specific data key (pthread_key_create): Perl's ithreads hold each
 * thread's interpreter there (PL_thr_key), so the BPF walk finds the
 * sampled thread's own. glibc keeps the values of the first keys in its
 * struct pthread (the thread's control block, at the thread pointer), at
 * offsets no header publishes; they are read from the process's own libc,
 * the code of its pthread_getspecific(), decoded with capstone:
 *
 *   cmp  edi, FIRST - 1         keys below FIRST are in the block
 *   ...  rax = (key + BASE) << SHIFT
 *   add  rax, fs:[SELF]         the control block's own address
 *   mov  rdx, [rax + DATA]      the value
 *
 * so key's value is at thread pointer + ((key + BASE) << SHIFT) + DATA.
 * Believed only in that shape (glibc 2.34 to 2.42, x86-64); any other code,
 * a key past the block, another libc or architecture: -ENOENT, and the
 * caller does without (Perl: the main thread's interpreter alone).
 */
#ifndef SFBPF_INTERP_PTHREADKEY_H
#define SFBPF_INTERP_PTHREADKEY_H

#include <stdint.h>

/* Key's value's offset from a thread's thread pointer in pid: 0, or -ENOENT, or a read error. */
int pthreadkey__slot(int pid, uint32_t key, uint64_t *off);

#endif /* SFBPF_INTERP_PTHREADKEY_H */
