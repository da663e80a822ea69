// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Ruby 3.1's YJIT pushing a control frame (interp/ruby_yjit.c's
 * ruby_yjit_pushing()): YJIT moves ec->cfp before it writes the new frame,
 * so a sample between finds the innermost frame holding another's iseq. The
 * two sequences as YJIT 3.1 emits them (read back from a running
 * process's code), each instruction's address asked in turn: inside the
 * window (ec->cfp moved, the frame's iseq or ep not yet written) and only
 * there. Driven by tests/rbyjit.test.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TEST_PREFIX "rbyjit-"
#include "testlib.h"
#include "interp/ruby_int.h"

/* 3.1's offsets: ec->cfp, a control frame's iseq and ep. */
static const struct ruby_yjit_offs offs = { 0x10, 0x10, 0x20 };

/* gen_send_cfunc(): the frame pushed through ec->cfp, then filled through rcx. */
static const uint8_t cfunc[] = {
	0x49, 0x83, 0x6c, 0x24, 0x10, 0x40, /* sub qword [r12+0x10], 0x40: ec->cfp moved */
	0x49, 0x8b, 0x4c, 0x24, 0x10, /* mov rcx, [r12+0x10] */
	0x48, 0xc7, 0x01, 0x00, 0x00, 0x00, 0x00, /* mov qword [rcx], 0: pc */
	0x48, 0x89, 0x41, 0x08, /* mov [rcx+8], rax: sp */
	0x48, 0xc7, 0x41, 0x10, 0x00, 0x00, 0x00, 0x00, /* mov qword [rcx+0x10], 0: iseq */
	0x48, 0xc7, 0x41, 0x28, 0x00, 0x00, 0x00, 0x00, /* block_code */
	0x48, 0x89, 0x41, 0x30, /* mov [rcx+0x30], rax: __bp__ */
	0x48, 0x83, 0xe8, 0x08, /* sub rax, 8 */
	0x48, 0x89, 0x41, 0x20, /* mov [rcx+0x20], rax: ep, the frame whole */
	0x48, 0x8b, 0x43, 0x18, /* mov rax, [rbx+0x18] */
	0x48, 0x89, 0x41, 0x18, /* mov [rcx+0x18], rax: self */
	0xe8, 0x00, 0x00, 0x00, 0x00, /* call */
};
/* Each instruction's length, and whether a sample there finds the frame torn. */
static const uint8_t cfunc_len[] = { 6, 5, 7, 4, 8, 8, 4, 4, 4, 4, 4, 5 };
static const bool cfunc_torn[] = { 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 };

/* gen_send_iseq(): ec->cfp moved from r13, the frame filled through r13. */
static const uint8_t iseq[] = {
	0x49, 0x83, 0xed, 0x40, /* sub r13, 0x40 */
	0x4d, 0x89, 0x6c, 0x24, 0x10, /* mov [r12+0x10], r13: ec->cfp moved */
	0x48, 0x8b, 0x0b, /* mov rcx, [rbx] */
	0x49, 0x89, 0x4d, 0x18, /* mov [r13+0x18], rcx: self */
	0x48, 0x89, 0xc3, /* mov rbx, rax */
	0x49, 0x89, 0x45, 0x08, /* mov [r13+8], rax: sp */
	0x49, 0x89, 0x45, 0x30, /* mov [r13+0x30], rax: __bp__ */
	0x48, 0x83, 0xe8, 0x08, /* sub rax, 8 */
	0x49, 0x89, 0x45, 0x20, /* mov [r13+0x20], rax: ep */
	0x48, 0xb8, 0x70, 0x81, 0x61, 0x61, 0x1c, 0x7f, 0x00, 0x00, /* movabs rax, iseq */
	0x49, 0x89, 0x45, 0x10, /* mov [r13+0x10], rax: iseq, the frame whole */
	0x49, 0xc7, 0x45, 0x28, 0x00, 0x00, 0x00, 0x00, /* block_code */
	0xe9, 0x00, 0x00, 0x00, 0x00, /* jmp */
};
static const uint8_t iseq_len[] = { 4, 5, 3, 4, 3, 4, 4, 4, 4, 10, 4, 8, 5 };
static const bool iseq_torn[] = { 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 };

/* gen_leave(): the frame popped, ec->cfp moved back: never torn. */
static const uint8_t leave[] = {
	0x48, 0x8b, 0x43, 0xe0, /* mov rax, [rbx-0x20] */
	0x49, 0x83, 0xc5, 0x40, /* add r13, 0x40 */
	0x4d, 0x89, 0x6c, 0x24, 0x10, /* mov [r12+0x10], r13 */
	0x49, 0x8b, 0x5d, 0x08, /* mov rbx, [r13+8] */
	0x48, 0x89, 0x03, /* mov [rbx], rax */
	0x41, 0xff, 0x65, 0xf8, /* jmp [r13-8] */
};
static const uint8_t leave_len[] = { 4, 4, 5, 4, 3, 4 };
static const bool leave_torn[] = { 0, 0, 0, 0, 0, 0 };

static void walk(const char *name, const uint8_t *code, size_t size, const uint8_t *len,
		 const bool *torn, size_t n)
{
	const uint64_t base = 0x7f0000100000;
	size_t i, at = 0;
	char got[64] = "", want[64] = "";

	for (i = 0; i < n; at += len[i++]) {
		int r = ruby_yjit_pushing(code + at, size - at, base + at, &offs);

		got[i] = r < 0 ? 'E' : r ? '1' : '0';
		want[i] = torn[i] ? '1' : '0';
	}
	report(at == size && !strcmp(got, want), name,
	       "at each instruction got %s, want %s (%zu of %zu bytes)", got, want, at, size);
}

int main(void)
{
	walk("cfunc-push", cfunc, sizeof(cfunc), cfunc_len, cfunc_torn, sizeof(cfunc_len));
	walk("iseq-push", iseq, sizeof(iseq), iseq_len, iseq_torn, sizeof(iseq_len));
	walk("leave", leave, sizeof(leave), leave_len, leave_torn, sizeof(leave_len));
	return failures ? 1 : 0;
}
