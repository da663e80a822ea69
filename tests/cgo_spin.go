// SPDX-License-Identifier: GPL-2.0-or-later
/* expect: runtime.goexit.abi0;runtime.main;main.main;main.outer;main._Cfunc_c_mid.abi0;runtime.asmcgocall.abi0;c_mid;c_leaf */

// A cgo program for tests/cgo.test: Go calls C built with -O2
// -fomit-frame-pointer, whose frames are described by gcc's .eh_frame in a
// binary whose Go code is described by Go's .debug_frame. c_leaf is the hot
// leaf. asmcgocall switches to the system stack and is walked by frame
// pointer (rbp still holds runtime.cgocall's frame, which that step skips,
// as perf -g does): the walk through c_mid must leave rbp as it was.
//
// Usage: cgo_spin [SECONDS]
package main

/*
#cgo CFLAGS: -O2 -fomit-frame-pointer

__attribute__((noinline)) unsigned long c_leaf(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

volatile unsigned long c_sink;

// Frameless with a frame (CFA = SP + 32) that never touches rbp, where a
// Go-layout rule would read "rbp at CFA - 16" from one of its locals; void
// and without arguments, so that cgo's wrapper only jumps here and asmcgocall
// (a frame-pointer step) is its caller.
__attribute__((noinline)) void c_mid(void)
{
	volatile unsigned long acc = 0, i;

	for (i = 0; i < 1000; i++)
		acc += c_leaf(i);
	c_sink += acc;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func outer(secs float64) uint64 {
	var x uint64
	for start := time.Now(); time.Since(start).Seconds() < secs; {
		C.c_mid()
		x++
	}
	return x
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	fmt.Println(outer(secs) & 1)
}
